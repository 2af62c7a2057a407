"""How many animals a video holds, as a researcher who counted gives it: a table file, extra columns of a split's
video list, or one number for every video. The global linker (:class:`~vastmat.models.post.GlobalLinker`) ends a
video with at most that many identities.

Two values a video: ``num_animals`` (the animals stay in view all along: a hidden one may come back at any time) and
``max_animals`` (an upper bound for videos where animals come and go). Either may be absent.

Table file (``.csv`` or ``.tsv``, or whitespace-separated), a header line then one video a line::

    video,num_animals,max_animals
    Bee-1,3,
    Horse-1,,5

A split's video list may carry the same two columns after the name (``Bee-1 3`` or ``Horse-1 - 5``; ``-`` or an
empty field for none).
"""
from __future__ import annotations

import os.path as osp
import re
from dataclasses import dataclass

COLUMNS = ('num_animals', 'max_animals')


@dataclass(frozen=True)
class AnimalCount:
    """A video's ``num_animals`` and ``max_animals`` (None where not given)."""

    num_animals: int | None = None
    max_animals: int | None = None


def parse_count(text: str | int | float | None, where: str) -> int | None:
    """A count from a field or option: a positive integer, or None for ``''``, ``'-'`` and None. A 0, a negative or
    a non-integer count is a ``ValueError`` naming ``where``."""
    if text is None:
        return None
    if isinstance(text, str):
        text = text.strip()
        if text in ('', '-'):
            return None
        if not re.fullmatch(r'[+-]?\d+', text):
            raise ValueError(f'{where}: {text!r} is not a whole number of animals')
        value = int(text)
    elif isinstance(text, bool) or (isinstance(text, float) and not float(text).is_integer()):
        raise ValueError(f'{where}: {text!r} is not a whole number of animals')
    else:
        value = int(text)
    if value <= 0:
        raise ValueError(f'{where}: the number of animals must be 1 or more, got {value}')
    return value


def count_from_fields(fields: list[str], where: str) -> AnimalCount:
    """``num_animals``, ``max_animals`` from up to two fields; with both, ``max_animals >= num_animals``."""
    if len(fields) > 2:
        raise ValueError(f'{where}: {len(fields) + 1} columns; a video line is "name [num_animals [max_animals]]"')
    values = [parse_count(field, f'{where}: {name}') for field, name in zip(fields, COLUMNS)]
    count = AnimalCount(*values)
    if count.num_animals and count.max_animals and count.max_animals < count.num_animals:
        raise ValueError(f'{where}: max_animals {count.max_animals} is below num_animals {count.num_animals}')
    return count


def split_fields(line: str) -> list[str]:
    """A line's fields, separated by a comma, a tab or spaces."""
    if ',' in line or '\t' in line:
        return [field.strip() for field in re.split(r'[,\t]', line)]
    return line.split()


def read_animal_counts(path: str) -> dict[str, AnimalCount]:
    """``{video: AnimalCount}`` of a table file (header ``video, num_animals[, max_animals]``)."""
    if not osp.isfile(path):
        raise FileNotFoundError(f'{path}: no such animal-count file')
    with open(path, encoding='utf-8') as f:
        lines = [(number, line.strip()) for number, line in enumerate(f, 1) if line.strip()]
    if not lines:
        raise ValueError(f'{path}: empty animal-count file (expected a header "video,num_animals,max_animals")')
    header = [field.lower() for field in split_fields(lines[0][1])]
    if header[:1] != ['video'] or not set(header[1:]) <= set(COLUMNS) or len(header) < 2:
        raise ValueError(f'{path}:{lines[0][0]}: the header must be "video,num_animals[,max_animals]", got {header}')
    counts = {}
    for number, line in lines[1:]:
        fields = split_fields(line)
        where = f'{path}:{number}'
        if len(fields) > len(header):
            raise ValueError(f'{where}: {len(fields)} fields for a header of {len(header)}')
        named = dict(zip(header[1:], fields[1:]))
        video = fields[0]
        if video in counts:
            raise ValueError(f'{where}: video {video!r} is listed twice')
        counts[video] = count_from_fields([named.get('num_animals', ''), named.get('max_animals', '')], where)
    return counts


def check_videos(counts: dict[str, AnimalCount], videos: list[str], source: str) -> None:
    """Every video named in ``counts`` must be one of ``videos``: a count for a video that is not there (a typo)
    would otherwise be ignored."""
    unknown = sorted(set(counts) - set(videos))
    if unknown:
        raise KeyError(f'{source}: animal counts for {len(unknown)} video(s) that are not among the '
                       f'{len(videos)} tracked: {unknown[:5]}')
