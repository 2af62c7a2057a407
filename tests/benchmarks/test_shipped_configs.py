"""Every config under configs/ run as tools/train.py and tools/test.py run it (vastmat/benchmarks/shipped_configs.py),
on a generated dataset in the VastMAT layout:

* a config at the demo's input size (the tiny, debug and cached-detection configs) trains one iteration of its own
  loop and tracks four frames of a test video;
* a full-size config builds its runner, loops, dataloaders, model, optimizer, schedulers, hooks and test loop and
  takes its first batch through its pipeline at its own input size (frames rendered at the demo size: rendering
  them at 1440x800 costs minutes); its iterations on CPU and GPU are tools/benchmark/config_check.py's, as they do
  not fit the suite;
* without its data, a full-size training config ends with one line naming what is missing.
"""
import os
import os.path as osp

import pytest
from mmengine.config import Config

from helpers.common import REPO, vastmat_scope

from vastmat.benchmarks.config_data import DEMO_IMAGE_SIZE, image_size
from vastmat.benchmarks.shipped_configs import check_config, config_kind, gpu_layout, shipped_configs

CONFIGS = shipped_configs()
PROTOCOL_CONFIGS = [c for c in CONFIGS if c.endswith(('_vastmat-p1.py', '_vastmat-p2.py'))]


def load(config: str) -> Config:
    return Config.fromfile(osp.join(REPO, 'configs', config))


@pytest.fixture(scope='session')
def check_folder(tmp_path_factory):
    """The generated data of the checks, made once per size: the test workers share it (make_check_data renders
    it in one while the others wait)."""
    if os.environ.get('PYTEST_XDIST_WORKER'):  # the folder of this run that holds every worker's
        return str(tmp_path_factory.getbasetemp().parent / 'config_check')
    return str(tmp_path_factory.mktemp('config_check'))


def test_check_data_is_rendered_once_for_the_processes_that_share_it(tmp_path, monkeypatch):
    """Two callers at once on one folder (the test workers): one renders, the other waits and reads it."""
    import threading
    import time

    from vastmat.benchmarks import config_data
    rendered, render = [], config_data._render_check_data

    def slow_render(*args):
        rendered.append(args)
        time.sleep(0.3)  # the other caller arrives meanwhile
        render(*args)
    monkeypatch.setattr(config_data, '_render_check_data', slow_render)
    found = []
    callers = [threading.Thread(target=lambda: found.append(config_data.make_check_data(str(tmp_path),
                                                                                      DEMO_IMAGE_SIZE)))
               for _ in range(2)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    assert len(rendered) == 1 and len(found) == 2 and found[0] == found[1]
    from vastmat.datasets.detections import detection_file
    videos = os.listdir(osp.join(found[0].data_root, 'videos'))
    assert videos and all(osp.isfile(detection_file(found[0].det_root, name)) for name in videos)


def test_every_config_is_found():
    assert len(CONFIGS) > 50 and not any(c.startswith(('_base_/', 'matchers/')) for c in CONFIGS)
    assert {'yolox/yolox_x_8xb4-80e_vastmat-p1.py', 'motip/motip_r50_8xb1-10e_vastmat-p2.py',
            'bytetrack/bytetrack_yolox-x_vastmat-p2.py'} <= set(PROTOCOL_CONFIGS)


def test_input_size_and_gpu_layout_are_read_from_the_config():
    def size(config):
        return image_size(load(config))
    assert size('yolox/yolox_x_8xb4-80e_vastmat-p1.py') == (1440, 800)
    assert size('fairmot/fairmot_dla34_1xb12-30e_vastmat-p1.py') == (1087, 604)  # 16:9 in the 1088x608 letterbox
    assert size('motip/motip_r50_8xb1-10e_vastmat-p1.py') == (1440, 800)  # test scale, not the crop's 4200 limit
    assert size('bytetrack/bytetrack_cached-dets.py') == DEMO_IMAGE_SIZE  # no frames are read
    assert gpu_layout('yolox/yolox_x_8xb4-80e_vastmat-p1.py') == (8, 4) and gpu_layout('reid_tiny.py') is None


def test_a_model_built_for_a_check_that_never_runs_it_draws_no_random_weights():
    """``weights_left_as_allocated`` (the full-size builds below): no initialiser draws from torch's generator, mmcv's
    ConvModule init included; the initialisers are back afterwards, after an error too."""
    import torch
    from mmcv.cnn import ConvModule

    from vastmat.benchmarks.shipped_configs import weights_left_as_allocated
    torch.manual_seed(0)
    state = torch.random.get_rng_state()
    with weights_left_as_allocated():
        ConvModule(3, 8, 3, norm_cfg=dict(type='BN')).init_weights()
        torch.nn.Linear(4, 2)
    assert torch.equal(torch.random.get_rng_state(), state)
    with pytest.raises(RuntimeError), weights_left_as_allocated():
        raise RuntimeError('a check that fails')
    torch.nn.Linear(4, 2)
    assert not torch.equal(torch.random.get_rng_state(), state)


def as_protocol1(node):
    """A resolved config's values with Protocol 2's names made Protocol 1's (splits, work dirs, checkpoints)."""
    if isinstance(node, dict):
        return {k: as_protocol1(v) for k, v in node.items() if k != 'filename'}
    if isinstance(node, (list, tuple)):
        return [as_protocol1(v) for v in node]
    return node.replace('protocol2', 'protocol1').replace('-p2', '-p1') if isinstance(node, str) else node


@pytest.mark.slow
@pytest.mark.parametrize('config', CONFIGS)
def test_config_runs_as_shipped(config, check_folder, tmp_path):
    p1 = config.replace('_vastmat-p2', '_vastmat-p1')
    if p1 != config and p1 in CONFIGS:
        # a Protocol 2 config is its Protocol 1 twin (built and run whole here) on Protocol 2's splits: the same
        # resolved config but for those names, and its datasets build on the generated data's Protocol 2 splits
        assert as_protocol1(load(config).to_dict()) == as_protocol1(load(p1).to_dict())
        from vastmat.benchmarks.config_data import make_check_data, point_at_check_data
        from vastmat.registry import DATASETS
        vastmat_scope()
        cfg = load(config)
        point_at_check_data(cfg, make_check_data(check_folder, DEMO_IMAGE_SIZE, num_frames=40))
        loaders = [cfg.test_dataloader] + ([cfg.train_dataloader] if config_kind(cfg) != 'test' else [])
        assert all(len(DATASETS.build(loader.dataset)) > 0 for loader in loaders)
        return
    width, height = image_size(load(config))
    if (width, height) == DEMO_IMAGE_SIZE:  # trains one iteration, tracks four frames
        result = check_config(config, str(tmp_path), check_folder, iterations=1)
    else:  # builds everything and takes the first batch through its pipeline
        result = check_config(config, str(tmp_path), check_folder, iterations=0, track=False,
                              frame_size=DEMO_IMAGE_SIZE)
    assert not result.error, result.error
    if 'train' in result.kind and (width, height) == DEMO_IMAGE_SIZE:
        assert result.iterations == 1 and result.loss_finite, result
    if 'test' in result.kind and (width, height) == DEMO_IMAGE_SIZE:
        assert result.test_s is not None and result.test_frames > 0, result  # 4 frames of a video, or crops


@pytest.mark.parametrize('config', PROTOCOL_CONFIGS)
def test_missing_data_is_named(config, tmp_path, monkeypatch):
    """Where the data it names is absent, the dataset of a P1 / P2 config (the training set of a training config,
    the test set of a tracking config) refuses to build with an error naming it; tools/train.py prints that one line
    (the YOLOX-X case below)."""
    from vastmat.registry import DATASETS
    vastmat_scope()
    cfg = load(config)
    loader = cfg.test_dataloader if config_kind(cfg) == 'test' else cfg.train_dataloader
    monkeypatch.chdir(tmp_path)  # no data/ here
    with pytest.raises(FileNotFoundError, match=r'data/vastmat/?: no such VastMAT root'):
        DATASETS.build(loader.dataset)


def test_train_tool_names_the_missing_data_in_one_line(tmp_path, monkeypatch, capsys):
    """The paper's detector config as shipped, on a machine without data/vastmat: past its loops' scope, one line."""
    from helpers.common import tool_module
    from vastmat.engine.cli import run_cli
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        run_cli(tool_module('tools/train.py').main,
                [osp.join(REPO, 'configs', 'yolox', 'yolox_x_8xb4-80e_vastmat-p1.py'), '--work-dir', 'w'])
    lines = capsys.readouterr().err.strip().splitlines()
    assert exit_info.value.code == 2 and lines[-1].startswith('error: data/vastmat/: no such VastMAT root'), lines


def test_train_tool_refuses_a_tracking_config(tmp_path, capsys):
    from helpers.common import tool_module
    from vastmat.engine.cli import run_cli
    with pytest.raises(SystemExit):
        run_cli(tool_module('tools/train.py').main,
                [osp.join(REPO, 'configs', 'bytetrack', 'bytetrack_yolox-x_vastmat-p2.py'), '--work-dir', str(tmp_path)])
    assert 'trains nothing' in capsys.readouterr().err and not os.listdir(tmp_path)


def test_the_same_test_on_two_devices_is_compared(check_folder, tmp_path):
    """tools/benchmark/config_check.py --compare-cpu's comparison (CPU against GPU there), here CPU against CPU:
    the same tracks, row for row."""
    from vastmat.benchmarks.shipped_configs import compare_devices
    out = compare_devices('bytetrack/bytetrack_cached-dets.py', str(tmp_path), check_folder, devices=('cpu', 'cpu'))
    assert not out['error'] and out['rows'][0] == out['rows'][1] == out['common'] > 0, out
    assert out['max_box_difference'] == 0.0
