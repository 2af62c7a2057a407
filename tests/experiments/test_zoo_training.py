"""The zoo's config reads (vastmat/experiments/zoo_training.py: read_config): one read per version of a file, each
caller given a copy of its own."""
import os

from vastmat.experiments.zoo_training import read_config


def test_read_config_gives_independent_copies_and_rereads_a_changed_file(tmp_path):
    base, child = tmp_path / 'base.py', tmp_path / 'child.py'
    base.write_text("model = dict(type='A', depth=1)\n")
    child.write_text("_base_ = ['base.py']\nmodel = dict(depth=2)\n")
    first = read_config(str(child))
    assert first.model.to_dict() == {'type': 'A', 'depth': 2}
    first.model.depth = 99  # what zoo_config does to its config: never seen by the next reader
    assert read_config(str(child)).model.depth == 2
    assert read_config(str(child)) is not read_config(str(child))
    child.write_text("_base_ = ['base.py']\nmodel = dict(depth=3, width=4)\n")  # a new version: read anew
    os.utime(child, ns=(os.stat(child).st_atime_ns, os.stat(child).st_mtime_ns + 10**9))
    assert read_config(str(child)).model.to_dict() == {'type': 'A', 'depth': 3, 'width': 4}
