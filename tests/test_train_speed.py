"""tools/benchmark/train_speed.py: the prepared GPU check (iterations/s and peak memory of full-size training), run
here on the tiny configs for a couple of CPU iterations."""
import json

import pytest

from conftest import REPO, tool


@pytest.mark.slow
def test_train_speed_reports_each_config(demo_root, tmp_path):
    configs = [f'{REPO}/configs/qdtrack/qdtrack_tiny_vastmat-demo.py', f'{REPO}/configs/fairmot/fairmot_tiny_vastmat-demo.py']
    results = tool('tools/benchmark/train_speed.py', *configs, '--data-root', demo_root, '--iters', 2, '--warmup', 1,
                   '--out', tmp_path / 'speed.json')
    assert json.load(open(tmp_path / 'speed.json')) == json.loads(json.dumps(results))
    assert [r['config'] for r in results] == ['configs/qdtrack/qdtrack_tiny_vastmat-demo.py',
                                              'configs/fairmot/fairmot_tiny_vastmat-demo.py']
    for r, batch in zip(results, (4, 2)):
        assert r['iters'] == 2 and r['batch_size'] == batch and r['iters_per_s'] > 0
        assert r['samples_per_s'] == pytest.approx(r['iters_per_s'] * batch)
        assert r['peak_memory_gib'] > 0 and r['parameters'] > 100_000
    assert {'loss_track', 'loss_rpn_cls'} <= set(results[0]['losses'])
    assert {'loss_det', 'loss_id'} <= set(results[1]['losses'])
