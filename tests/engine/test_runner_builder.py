"""vastmat.engine.runner_builder: each runner in a process gets a visualizer of its own (it writes to its own work
dir), and each runner after the first an experiment name of its own."""
import os.path as osp

from mmengine.config import Config

from helpers.common import DEBUG_YOLOX


def test_runner_builder_names_every_runner_after_the_first(monkeypatch):
    from vastmat.engine import runner_builder
    name = 'configs/x/bytetrack_demo.py'

    class FakeRunner:
        @staticmethod
        def from_cfg(cfg):
            return cfg

    monkeypatch.setattr(runner_builder, 'Runner', FakeRunner)
    builder = runner_builder.RunnerBuilder()
    first = builder.build(Config(dict(model=dict()), filename=name, cfg_text='# built in the test'))
    second = builder.build(Config(dict(model=dict()), filename=name, cfg_text='# built in the test'))
    named = builder.build(Config(dict(experiment_name='mine'), filename=name, cfg_text='# built in the test'))
    assert first.get('experiment_name') is None  # the first keeps mmengine's timestamped name
    assert second.experiment_name == 'bytetrack_demo_run1'
    assert named.experiment_name == 'mine'
    assert builder.built == 3
    # the process's builder is a separate object: this test's builds did not count there
    assert runner_builder.RUNNER_BUILDER is not builder


def test_every_runner_of_a_process_writes_its_scalars_to_its_own_work_dir(tmp_path):
    """mmdet's default runtime names its visualizer 'visualizer', and mmengine hands a runner the instance of that
    name made first in the process: without names of their own, a second run wrote its scalars to the first run's
    vis_data (seen when a training ran in a process forked from one that had trained before)."""
    from vastmat.engine.runner_builder import build_runner  # the process's builder, as the tools build runners
    runners = []
    for name in ('first', 'second'):
        cfg = Config.fromfile(DEBUG_YOLOX)
        cfg.work_dir = str(tmp_path / name)
        runners.append(build_runner(cfg))
    first, second = runners
    assert first.visualizer is not second.visualizer
    for runner, name in ((first, 'first'), (second, 'second')):
        backend = runner.visualizer._vis_backends['LocalVisBackend']
        assert osp.dirname(osp.dirname(backend._save_dir)) == str(tmp_path / name)
