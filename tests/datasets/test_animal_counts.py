"""Animal counts as a researcher gives them: a table file, a split's extra columns; bad counts fail naming where."""
import os.path as osp

import pytest

from vastmat.datasets.animal_counts import AnimalCount, check_videos, parse_count, read_animal_counts
from vastmat.datasets.sequences import read_split, split_animal_counts


def test_table_file(tmp_path):
    path = tmp_path / 'counts.csv'
    path.write_text('video,num_animals,max_animals\nBee-1,3,\nHorse-1,,5\nFish-2,4,6\n')
    assert read_animal_counts(str(path)) == {'Bee-1': AnimalCount(3, None), 'Horse-1': AnimalCount(None, 5),
                                             'Fish-2': AnimalCount(4, 6)}
    tsv = tmp_path / 'counts.tsv'
    tsv.write_text('video\tmax_animals\nBee-1\t2\n')
    assert read_animal_counts(str(tsv)) == {'Bee-1': AnimalCount(None, 2)}


@pytest.mark.parametrize('text, message', [
    ('video,num_animals\nBee-1,0\n', r'counts.csv:2: num_animals: the number of animals must be 1 or more'),
    ('video,num_animals\nBee-1,-3\n', 'must be 1 or more'),
    ('video,num_animals\nBee-1,2.5\n', r"counts.csv:2: num_animals: '2.5' is not a whole number"),
    ('video,num_animals\nBee-1,2\nBee-1,3\n', "counts.csv:3: video 'Bee-1' is listed twice"),
    ('video,num_animals,max_animals\nBee-1,4,3\n', 'max_animals 3 is below num_animals 4'),
    ('name,animals\nBee-1,2\n', 'counts.csv:1: the header must be'),
    ('', 'empty animal-count file'),
])
def test_bad_table_names_file_and_line(tmp_path, text, message):
    path = tmp_path / 'counts.csv'
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        read_animal_counts(str(path))


def test_counts_for_videos_that_are_not_there():
    with pytest.raises(KeyError, match=r"counts.csv: animal counts for 1 video\(s\) that are not among the 2 tracked: "
                                        r"\['Bea-1'\]"):
        check_videos({'Bea-1': AnimalCount(2)}, ['Bee-1', 'Horse-1'], 'counts.csv')
    assert parse_count('-', 'x') is None and parse_count(' 7 ', 'x') == 7


def test_split_columns(demo_root, tmp_path):
    import shutil
    root = str(tmp_path / 'demo')
    shutil.copytree(demo_root, root)
    split = osp.join(root, 'splits', 'protocol1', 'test.txt')
    names = read_split(root, 'protocol1', 'test')
    with open(split, 'w') as f:
        f.write(f'{names[0]} 2\n{names[1]} - 4\n{names[2]}\n')
    assert read_split(root, 'protocol1', 'test') == names
    assert split_animal_counts(root, 'protocol1', 'test') == {names[0]: AnimalCount(2, None),
                                                              names[1]: AnimalCount(None, 4)}
    with open(split, 'w') as f:
        f.write(f'{names[0]} 0\n')
    with pytest.raises(ValueError, match=r'test.txt:1: num_animals: the number of animals must be 1 or more'):
        split_animal_counts(root, 'protocol1', 'test')
