"""tools/train.py and tools/test.py end to end on rendered images: train, checkpoint, resume, test, bad input."""
import glob
import json
import os
import os.path as osp

import pytest
import torch

from helpers.common import DEBUG_YOLOX, REPO, data_root_options, set_aside_logs, tool

# one worker runs them all, so that the trained fixture is made once (pytest-xdist --dist loadgroup)
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group('trained_yolox')]


def newest_log(work_dir: str) -> str:
    """The text of the log file of the last run in a work dir (``<work_dir>/<timestamp>/<timestamp>.log``)."""
    logs = sorted(glob.glob(osp.join(work_dir, '*', '*.log')), key=osp.getmtime)
    return open(logs[-1]).read()


@pytest.fixture(scope='session')  # session: made once per worker even when other modules' tests run in between
def trained(demo_root, tmp_path_factory):
    """Train the debug YOLOX for 2 iterations (checkpoint iter_2.pth), then resume it to 4 iterations."""
    work_dir = str(tmp_path_factory.mktemp('yolox_debug'))
    tool('tools/train.py', DEBUG_YOLOX, '--work-dir', work_dir, '--data-root', demo_root)  # train, val and test sets
    first = newest_log(work_dir)
    set_aside_logs(work_dir)  # the second run's log folder: its own
    tool('tools/train.py', DEBUG_YOLOX, '--work-dir', work_dir, '--resume', '--data-root', demo_root,
         '--cfg-options', 'train_cfg.max_iters=4', 'train_cfg.val_interval=4', 'param_scheduler.0.end=4')
    return work_dir, first, newest_log(work_dir)


def test_train_writes_weights_only_checkpoints(trained):
    work_dir, log, _ = trained
    assert 'Iter(train) [2/2]' in log
    path = osp.join(work_dir, 'iter_2.pth')
    # Plain data: torch's own weights_only loading, no allowlist.
    checkpoint = torch.load(path, weights_only=True)
    assert checkpoint['meta']['iter'] == 2
    assert {'state_dict', 'optimizer', 'param_schedulers', 'message_hub'} <= set(checkpoint)
    assert checkpoint['message_hub']['log_scalars']['train/loss']['__vastmat_history_buffer__']
    assert len(checkpoint['message_hub']['log_scalars']['train/loss']['log_history']) == 2


def test_resume_continues_from_the_checkpoint(trained):
    work_dir, first_log, log = trained
    assert 'resumed epoch: 0, iter: 2' in log
    assert 'Iter(train) [3/4]' in log and 'Iter(train) [4/4]' in log and 'Iter(train) [1/4]' not in log
    checkpoint = torch.load(osp.join(work_dir, 'iter_4.pth'), weights_only=True)
    assert checkpoint['meta']['iter'] == 4
    # The message hub history was restored: the loss buffer holds the 2 resumed values plus 2 new ones.
    assert len(checkpoint['message_hub']['log_scalars']['train/loss']['log_history']) == 4
    before = torch.load(osp.join(work_dir, 'iter_2.pth'), weights_only=True)
    assert (checkpoint['message_hub']['log_scalars']['train/loss']['log_history'][:2] ==
            before['message_hub']['log_scalars']['train/loss']['log_history'])


def test_resume_without_a_checkpoint_starts_from_the_configs_load_from(trained, demo_root, tmp_path):
    """A requeued job passes --resume from its first start: with no checkpoint in the work dir yet it starts from the
    config's load_from (a full-size config's official starting point), not from scratch; a missing one is named."""
    work_dir, _, _ = trained
    start = osp.join(work_dir, 'iter_2.pth')
    fresh = str(tmp_path / 'fresh')
    tool('tools/train.py', DEBUG_YOLOX, '--work-dir', fresh, '--resume', '--cfg-options',
         *data_root_options(demo_root), f'load_from={start}')
    log = newest_log(fresh)
    assert f'to resume from; starting from {start}' in log and 'resumed epoch' not in log
    assert 'Iter(train) [1/2]' in log and 'Iter(train) [2/2]' in log
    missing = str(tmp_path / 'absent.pth')
    with pytest.raises(FileNotFoundError, match=f"holds no checkpoint to resume from: load_from '{missing}' does not"):
        tool('tools/train.py', DEBUG_YOLOX, '--work-dir', str(tmp_path / 'fresh2'), '--resume', '--cfg-options',
             *data_root_options(demo_root), f'load_from={missing}')


def test_test_prints_and_saves_metrics(trained, demo_root, tmp_path, capsys):
    work_dir, _, _ = trained
    out = tmp_path / 'preds.pkl'
    tool('tools/test.py', DEBUG_YOLOX, '--checkpoint', osp.join(work_dir, 'iter_4.pth'), '--work-dir', tmp_path,
         '--out', out, '--cfg-options', *data_root_options(demo_root))
    metrics = json.load(open(tmp_path / 'metrics.json'))
    assert set(metrics) >= {'coco/bbox_mAP', 'coco/bbox_mAP_50', 'coco/bbox_mAP_75'}
    assert all(0.0 <= metrics[k] <= 1.0 for k in ('coco/bbox_mAP', 'coco/bbox_mAP_50', 'coco/bbox_mAP_75'))
    assert 'coco/bbox_mAP_50' in capsys.readouterr().out and out.exists()
    assert 0.0 <= metrics['det/AP'] <= 1.0 and 0.0 <= metrics['det/AR@100'] <= 1.0
    assert any(k.startswith('det/') and k.endswith('/AP') and k.count('/') == 2 for k in metrics)  # per group
    assert not [f for f in os.listdir(tmp_path) if f.endswith('.tmp')]


def test_checkpoint_flag_refuses_a_malicious_file(demo_root, tmp_path):
    from helpers.payloads import SystemCallPayload
    marker = tmp_path / 'pwned'
    evil = tmp_path / 'evil.pth'
    torch.save({'state_dict': {}, 'meta': SystemCallPayload(f'touch {marker}')}, evil)
    from vastmat.engine.checkpoint import UnsafeCheckpointError
    with pytest.raises(UnsafeCheckpointError, match='posix.system'):
        tool('tools/test.py', DEBUG_YOLOX, '--checkpoint', evil, '--work-dir', tmp_path / 'w',
             '--cfg-options', *data_root_options(demo_root))
    assert not marker.exists()


@pytest.mark.parametrize('option, message', [
    ('train_dataloder.batch_size=2', "'train_dataloder' is not a key of the config; did you mean "
                                     "'train_dataloader'"),
    ('train_dataloader.batch_sise=2', "'batch_sise' is not a key of train_dataloader; did you mean 'batch_size'"),
    ('model.backbone.widen_factr=0.25', 'widen_factr'),
    ('param_scheduler.3.end=2', "'param_scheduler' is a list of 1 items; '3' is not an index of it"),
])
def test_malformed_config_key_is_named(option, message, demo_root, tmp_path):
    with pytest.raises(Exception) as error:
        tool('tools/train.py', DEBUG_YOLOX, '--work-dir', tmp_path, '--cfg-options', *data_root_options(demo_root),
             option)
    assert message in str(error.value)


def help_text(capsys, script, *args) -> str:
    with pytest.raises(SystemExit) as done:
        tool(script, *args, '--help')
    assert done.value.code == 0
    return capsys.readouterr().out


def test_help_lists_the_flags(capsys):
    train_help = help_text(capsys, 'tools/train.py')
    for flag in ('config', '--checkpoint', '--work-dir', '--cfg-options', '--launcher', '--resume', '--amp',
                 '--auto-scale-lr', '{none,pytorch,slurm,mpi}'):
        assert flag in train_help, flag
    test_help = help_text(capsys, 'tools/test.py')
    for flag in ('config', '--checkpoint', '--work-dir', '--cfg-options', '--launcher', '--out', '--amp'):
        assert flag in test_help, flag
    # torch's launchers pass --local-rank=N (and older ones --local_rank): both are accepted.
    for flag in ('--local-rank=0', '--local_rank=0'):
        help_text(capsys, 'tools/train.py', DEBUG_YOLOX, flag)
    assert osp.isfile(osp.join(REPO, 'tools', 'slurm_train.sh')) and osp.isfile(osp.join(REPO, 'tools',
                                                                                            'slurm_test.sh'))
