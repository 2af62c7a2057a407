"""The 337 categories and six groups."""
import pytest

from vastmat.datasets.categories import GROUPS, Categories, builtin_categories


def test_builtin_table():
    cats = builtin_categories()
    assert len(cats) == 337
    assert [len(cats.in_group(g)) for g in GROUPS] == [82, 85, 117, 4, 7, 42]
    assert cats.by_id(1).name == 'Alpaca' and cats.by_id(337).name == 'Wasp'
    assert cats.by_name('sailfin tang').id == 250 and cats.group_of(cats.by_name('Penguin').id) == 'bird'
    assert [c.id for c in cats] == list(range(1, 338))
    with pytest.raises(KeyError, match='category id 338'):
        cats.by_id(338)
    with pytest.raises(KeyError, match="'Yellow Sailfin Tang'"):
        cats.by_name('Yellow Sailfin Tang')


def test_root_override_and_bad_tables(tmp_path):
    (tmp_path / 'meta').mkdir()
    (tmp_path / 'meta' / 'categories.tsv').write_text('id\tname\tgroup\n1\tGecko\treptile\n2\tMoth\tother\n')
    cats = Categories.for_root(str(tmp_path))
    assert len(cats) == 2 and cats.by_name('gecko').group == 'reptile'
    assert len(Categories.for_root(str(tmp_path / 'elsewhere'))) == 337
    bad = tmp_path / 'bad.tsv'
    bad.write_text('id\tname\tgroup\n1\tGecko\tlizard\n')
    with pytest.raises(ValueError, match=r"bad.tsv:2: group 'lizard'"):
        Categories.from_tsv(str(bad))
    bad.write_text('id\tname\tgroup\nx\tGecko\treptile\n')
    with pytest.raises(ValueError, match=r"bad.tsv:2: id 'x' is not an integer"):
        Categories.from_tsv(str(bad))
    bad.write_text('id\tname\tgroup\n1\tGecko\treptile\n1\tMoth\tother\n')
    with pytest.raises(ValueError, match='ids are not unique'):
        Categories.from_tsv(str(bad))
