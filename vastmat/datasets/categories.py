"""The 337 VastMAT categories and their six groups (paper appendix; ``reference/vastmat_categories.tsv``).

The table ships with the package (``vastmat/datasets/meta/categories.tsv``, ids in the paper's order); a dataset root
may override it with ``<root>/meta/categories.tsv`` (same columns: ``id``, ``name``, ``group``).
"""
from __future__ import annotations

import csv
import os.path as osp
from dataclasses import dataclass
from functools import lru_cache

GROUPS = ('mammal', 'bird', 'fish', 'amphibian', 'reptile', 'other')
BUILTIN_TABLE = osp.join(osp.dirname(__file__), 'meta', 'categories.tsv')


@dataclass(frozen=True)
class Category:
    id: int
    name: str
    group: str


class Categories:
    """Lookups by id, name (case-insensitive) and group over a category table."""

    def __init__(self, categories: list[Category], source: str = '') -> None:
        self.source = source
        self._by_id = {c.id: c for c in categories}
        self._by_name = {c.name.lower(): c for c in categories}
        if len(self._by_id) != len(categories):
            raise ValueError(f'{source}: category ids are not unique')
        if len(self._by_name) != len(categories):
            raise ValueError(f'{source}: category names are not unique')

    @classmethod
    def from_tsv(cls, path: str) -> 'Categories':
        """Read a ``id<TAB>name<TAB>group`` table with a header line."""
        categories = []
        with open(path, encoding='utf-8', newline='') as f:
            reader = csv.reader(f, delimiter='\t')
            header = next(reader, None)
            if header is None or [h.strip() for h in header[:3]] != ['id', 'name', 'group']:
                raise ValueError(f'{path}:1: header must be "id<TAB>name<TAB>group", got {header}')
            for line, row in enumerate(reader, start=2):
                if not row or not ''.join(row).strip():
                    continue
                if len(row) != 3:
                    raise ValueError(f'{path}:{line}: {len(row)} columns, expected 3 (id, name, group)')
                try:
                    cid = int(row[0])
                except ValueError:
                    raise ValueError(f'{path}:{line}: id {row[0]!r} is not an integer') from None
                group = row[2].strip()
                if group not in GROUPS:
                    raise ValueError(f'{path}:{line}: group {group!r} is not one of {", ".join(GROUPS)}')
                categories.append(Category(cid, row[1].strip(), group))
        return cls(categories, source=path)

    @classmethod
    def for_root(cls, root: str | None = None) -> 'Categories':
        """``<root>/meta/categories.tsv`` when it exists, else the built-in table."""
        if root is not None and osp.isfile(osp.join(root, 'meta', 'categories.tsv')):
            return cls.from_tsv(osp.join(root, 'meta', 'categories.tsv'))
        return builtin_categories()

    def __len__(self) -> int:
        return len(self._by_id)

    def __iter__(self):
        return iter(self._by_id.values())

    def __contains__(self, category_id: int) -> bool:
        return category_id in self._by_id

    def by_id(self, category_id: int) -> Category:
        try:
            return self._by_id[int(category_id)]
        except KeyError:
            raise KeyError(f'category id {category_id} is not in {self.source or "the category table"}') from None

    def by_name(self, name: str) -> Category:
        try:
            return self._by_name[name.strip().lower()]
        except KeyError:
            raise KeyError(f'category {name!r} is not in {self.source or "the category table"}') from None

    def in_group(self, group: str) -> list[Category]:
        if group not in GROUPS:
            raise KeyError(f'group {group!r} is not one of {", ".join(GROUPS)}')
        return [c for c in self._by_id.values() if c.group == group]

    def group_of(self, category_id: int) -> str:
        return self.by_id(category_id).group


@lru_cache(maxsize=1)
def builtin_categories() -> Categories:
    """The 337 categories of the paper."""
    return Categories.from_tsv(BUILTIN_TABLE)
