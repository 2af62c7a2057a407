"""vastmat.engine.runner_builder: each runner after the first in a process gets an experiment name of its own."""
from mmengine.config import Config


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
