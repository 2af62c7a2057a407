"""A user error at the command line ends with one line ``error: ...`` and exit status 2 (vastmat.engine.cli.run_cli),
not a traceback or a silent zero score."""
import os.path as osp

import pytest

from helpers.common import REPO, tool

from vastmat.engine.cli import run_cli

BYTETRACK = osp.join(REPO, 'configs', 'bytetrack', 'bytetrack_cached-dets.py')


def run_tool(script: str, argv: list, capsys) -> str:
    with pytest.raises(SystemExit) as exit_info:
        run_cli(lambda args: tool(script, *args), [str(a) for a in argv])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith('error: '), err
    return err


def test_results_folder_without_result_files(demo_root, tmp_path, capsys):
    err = run_tool('tools/eval_mot.py', ['--gt-root', demo_root, '--results', tmp_path, '--split', 'protocol1/test'],
                   capsys)
    assert str(tmp_path) in err and 'has a result file' in err


def test_missing_results_folder(demo_root, tmp_path, capsys):
    err = run_tool('tools/eval_mot.py', ['--gt-root', demo_root, '--results', tmp_path / 'absent'], capsys)
    assert 'absent' in err


def test_unknown_config_key_and_component_argument(tmp_path, capsys):
    err = run_tool('tools/test.py', [BYTETRACK, '--work-dir', tmp_path, '--cfg-options', 'model.trackr.foo=1'],
                   capsys)
    assert "'trackr' is not a key of model" in err and "did you mean 'tracker'" in err
    err = run_tool('tools/test.py', [BYTETRACK, '--work-dir', tmp_path, '--cfg-options', 'model.tracker.foo=1'],
                   capsys)
    assert "unexpected keyword argument 'foo'" in err


def test_unknown_type_in_a_config(tmp_path, capsys):
    err = run_tool('tools/test.py', [BYTETRACK, '--work-dir', tmp_path, '--cfg-options',
                                     'model.tracker.type=BYTETrackr'], capsys)
    assert 'BYTETrackr' in err and 'registry' in err


def test_a_value_the_component_refuses(tmp_path, capsys):
    err = run_tool('tools/test.py', [BYTETRACK, '--work-dir', tmp_path, '--cfg-options', 'test_evaluator.preset=nope'],
                   capsys)
    assert err.startswith('error: --cfg-options test_evaluator.preset=nope: ') and "unknown preset 'nope'" in err
    err = run_tool('tools/test.py', [BYTETRACK, '--work-dir', tmp_path, '--cfg-options',
                                     'model.tracker.aspect_ratio_thresh=abc'], capsys)
    assert 'BYTETracker(aspect_ratio_thresh) takes float | None' in err


@pytest.mark.parametrize('config', ['fairmot/fairmot_dla34_1xb12-30e_vastmat-p1.py',
                                    'transtrack/transtrack_r50_8xb2-20e_vastmat-p1.py',
                                    'motip/motip_r50_8xb2-20e_vastmat-p1_detr-pretrain.py'])
def test_missing_official_starting_point_is_refused_before_anything_is_built(config, tmp_path, capsys):
    """The full-size configs start from converted official weights; a missing file is named at once, with the way
    out (the converter, or load_from=None), not after the datasets are built."""
    path = osp.join(REPO, 'configs', config)
    err = run_tool('tools/train.py', [path, '--work-dir', tmp_path], capsys)
    assert 'load_from' in err and 'checkpoints/' in err and 'load_from=None' in err
    assert not (tmp_path / 'vis_data').exists()


def test_data_root_points_every_dataset_or_is_refused(tmp_path, capsys):
    """tools/train.py --data-root: every dataset that names a data_root (wrapped VastMATDatasets, D2MP's trajectory
    windows) is pointed there; a config without one is refused in one line."""
    from mmengine.config import Config

    from vastmat.engine.config_options import point_datasets
    yolox = Config.fromfile(osp.join(REPO, 'configs', 'yolox', 'yolox_tiny_1xb8-600it_own-video.py'))
    loaders = [yolox.train_dataloader, yolox.val_dataloader, yolox.test_dataloader]
    assert sum(point_datasets(loader, 'data/fly') for loader in loaders) == 3
    assert (yolox.train_dataloader.dataset.dataset.data_root, yolox.val_dataloader.dataset.data_root,
            yolox.test_dataloader.dataset.data_root) == ('data/fly', ) * 3
    d2mp = Config.fromfile(osp.join(REPO, 'configs', 'd2mp', 'd2mp_1xb2048-800e_vastmat-p1.py'))
    assert point_datasets(d2mp.train_dataloader, 'data/x') == 0  # not a VastMATDataset
    assert point_datasets(d2mp.train_dataloader, 'data/x', every_dataset=True) == 1
    assert d2mp.train_dataloader.dataset.data_root == 'data/x'
    err = run_tool('tools/train.py', [BYTETRACK, '--work-dir', tmp_path, '--data-root', tmp_path], capsys)
    assert 'trains nothing' in err  # a tracking config: refused before --data-root is looked at


def test_track_video_draws_a_results_file_alone(tmp_path, capsys):
    """tools/demo/track_video.py --tracks draws a results file; a tracking option beside it is refused, not
    ignored."""
    for argv, message in ((['in'], 'give a tracking CONFIG, or --tracks RESULTS.txt to draw'),
                          (['in', BYTETRACK, '--tracks', 'r.txt'], 'CONFIG would be ignored'),
                          (['in', '--tracks', 'r.txt', '--det-root', 'd'], '--det-root would be ignored')):
        with pytest.raises(SystemExit) as exit_info:
            tool('tools/demo/track_video.py', *argv)
        assert exit_info.value.code == 2 and message in capsys.readouterr().err
