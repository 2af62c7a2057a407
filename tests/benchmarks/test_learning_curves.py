"""tools/benchmark/learning_curves.py (vastmat/benchmarks/learning_curves.py) on TransTrack's tiny model, its
shortest curve: trained 20 iterations on one demo training video, it tracks that video better than untrained.

The other three curves (FairMOT 40, QDTrack 20 and MOTIP 60 iterations, about 21 CPU-seconds) are the benchmark's
only. What a curve catches, the suite catches for them faster: their golden training steps (the loss and gradients
of the official code: tests/models/mot/test_fairmot_golden.py, test_motip_golden_train.py), their golden trackers
(the official association on the model's outputs: tests/models/trackers/test_jde_tracker.py,
test_motip_tracker.py), the tiny models' trainings whose loss falls and whose checkpoints track
(tests/models/mot/test_<name>.py), and the zoo's 2-iteration trainings scored at each checkpoint
(tests/experiments/test_zoo_benchmark.py)."""
import json
import os.path as osp

import pytest

from helpers.common import tool

TRANSTRACK = 'transtrack/transtrack_tiny_vastmat-demo.py'


@pytest.mark.slow
def test_transtracks_curve_rises_and_the_table_is_saved(demo_root, tmp_path):
    rows = tool('tools/benchmark/learning_curves.py', '--data-root', demo_root, '--work-dir', tmp_path,
                '--configs', TRANSTRACK)
    (row, ) = rows
    assert row['config'] == TRANSTRACK and row['iterations'] == 20
    assert row['passed'] and row['trained'] > row['untrained'] + 0.03, row
    assert json.load(open(osp.join(tmp_path, 'learning_curves.json'))) == rows


def test_an_unknown_config_is_named(demo_root, tmp_path):
    from vastmat.benchmarks.learning_curves import learning_curve_rows
    with pytest.raises(ValueError, match='no learning curve for nope.py'):
        learning_curve_rows(str(tmp_path), demo_root, ['nope.py'])
