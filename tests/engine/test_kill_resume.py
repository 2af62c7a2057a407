"""Training survives a kill: atomic checkpoint writes, auto-resume from the newest complete checkpoint, and a run
SIGKILLed between checkpoints and resumed with ``--resume`` ending with exactly the weights and optimizer state of
an uninterrupted run."""
import os
import os.path as osp
import shutil
import signal
import time

import pytest
import torch

from helpers.common import REPO, forked_tool, set_aside_logs, tool

CONFIG = osp.join(REPO, 'tests', 'configs', 'yolox_debug_deterministic_6it.py')


# ---------------------------------------------------------------------------------------------------------------
# latest_complete_checkpoint / save_checkpoint on small files, in this process
# ---------------------------------------------------------------------------------------------------------------

def _save(path, step: int, mtime: float) -> str:
    torch.save({'meta': {'iter': step}, 'state_dict': {'w': torch.full((3,), float(step))}}, str(path))
    os.utime(path, (mtime, mtime))
    return str(path)


def _truncate(path, keep: float = 0.5) -> None:
    data = open(path, 'rb').read()
    open(path, 'wb').write(data[:int(len(data) * keep)])


def test_complete_checkpoint_check(tmp_path):
    from vastmat.engine.runner import is_complete_checkpoint
    path = _save(tmp_path / 'iter_2.pth', 2, 1000)
    assert is_complete_checkpoint(path)
    for keep in (0.0, 0.1, 0.5, 0.9, 0.999):
        cut = tmp_path / f'cut_{keep}.pth'
        shutil.copy(path, cut)
        _truncate(cut, keep)
        assert not is_complete_checkpoint(str(cut)), keep
    assert not is_complete_checkpoint(str(tmp_path / 'missing.pth'))
    (tmp_path / 'text.pth').write_text('not a checkpoint')
    assert not is_complete_checkpoint(str(tmp_path / 'text.pth'))
    # one flipped byte inside the pickle: the zip CRC catches it
    data = bytearray(open(path, 'rb').read())
    offset = data.index(b'data.pkl') + 40
    data[offset] ^= 0xFF
    open(tmp_path / 'flipped.pth', 'wb').write(bytes(data))
    assert not is_complete_checkpoint(str(tmp_path / 'flipped.pth'))


def test_auto_resume_skips_truncated_and_temporary_files(tmp_path):
    from vastmat.engine.runner import latest_complete_checkpoint
    work = str(tmp_path)
    it2 = _save(tmp_path / 'iter_2.pth', 2, 1000)
    it4 = _save(tmp_path / 'iter_4.pth', 4, 2000)
    assert latest_complete_checkpoint(work) == it4  # no last_checkpoint file: the newest complete one
    (tmp_path / 'last_checkpoint').write_text(it4)
    assert latest_complete_checkpoint(work) == it4
    # a kill during the write of iter_6 (without atomic writes): the newest file is cut short
    it6 = _save(tmp_path / 'iter_6.pth', 6, 3000)
    _truncate(it6)
    os.utime(it6, (3000, 3000))
    assert latest_complete_checkpoint(work) == it4
    # a leftover temporary file of an interrupted atomic write is never a candidate, whole or cut short
    shutil.copy(it4, tmp_path / '.iter_8.pth.12345.tmp')
    _truncate(tmp_path / '.iter_8.pth.12345.tmp')
    assert latest_complete_checkpoint(work) == it4
    # last_checkpoint names the truncated file (or is empty, or names a file that is gone): fall back
    (tmp_path / 'last_checkpoint').write_text(it6)
    assert latest_complete_checkpoint(work) == it4
    (tmp_path / 'last_checkpoint').write_text('')
    assert latest_complete_checkpoint(work) == it4
    (tmp_path / 'last_checkpoint').write_text(str(tmp_path / 'iter_10.pth'))
    assert latest_complete_checkpoint(work) == it4
    # a complete checkpoint newer than the one last_checkpoint names (killed between rename and last_checkpoint)
    (tmp_path / 'last_checkpoint').write_text(it2)
    assert latest_complete_checkpoint(work) == it4
    # best_* checkpoints are never resumed from; with no complete checkpoint there is nothing to resume
    _save(tmp_path / 'best_coco_bbox_mAP_iter_4.pth', 4, 5000)
    assert latest_complete_checkpoint(work) == it4
    os.remove(it2)
    os.remove(it4)
    assert latest_complete_checkpoint(work) is None


@pytest.fixture(scope='module')
def toy_runner(tmp_path_factory):
    """A VastMATRunner over a one-layer model, trained 2 iterations (checkpoint iter_2.pth)."""
    from mmengine.model import BaseModel
    from torch import nn

    from vastmat.engine.runner import VastMATRunner

    class Toy(BaseModel):
        def __init__(self):
            super().__init__()
            self.linear = nn.Linear(2, 1)

        def forward(self, inputs, data_samples=None, mode='tensor'):
            out = self.linear(torch.stack(inputs))
            return {'loss': out.pow(2).mean()} if mode == 'loss' else out

    work_dir = str(tmp_path_factory.mktemp('toy_runner'))
    runner = VastMATRunner(
        model=Toy(), work_dir=work_dir,
        train_dataloader=dict(dataset=[dict(inputs=torch.tensor([1.0, 2.0]))] * 4, batch_size=2,
                              sampler=dict(type='DefaultSampler', shuffle=False),
                              collate_fn=dict(type='pseudo_collate')),
        optim_wrapper=dict(optimizer=dict(type='SGD', lr=0.1, momentum=0.9)),
        train_cfg=dict(by_epoch=False, max_iters=2),
        default_hooks=dict(checkpoint=dict(type='CheckpointHook', interval=2, by_epoch=False)),
        default_scope='vastmat', randomness=dict(seed=0))
    runner.train()
    return runner


def test_save_checkpoint_is_atomic(toy_runner, monkeypatch):
    """A write interrupted half-way (here an exception raised by the file write after half the bytes; a SIGKILL
    leaves the same half file under the temporary name) changes neither the checkpoints nor last_checkpoint."""
    from mmengine.fileio.backends.local_backend import LocalBackend

    from vastmat.engine.runner import latest_complete_checkpoint
    work = toy_runner.work_dir
    it2 = osp.join(work, 'iter_2.pth')
    assert open(osp.join(work, 'last_checkpoint')).read() == it2
    assert sorted(f for f in os.listdir(work) if f.endswith(('.pth', '.tmp'))) == ['iter_2.pth']
    before = open(it2, 'rb').read()

    written = []

    def half_put(self, obj, filepath):
        written.append(filepath)
        with open(filepath, 'wb') as f:
            f.write(obj[:len(obj) // 2])
        raise KeyboardInterrupt('killed while writing')

    monkeypatch.setattr(LocalBackend, 'put', half_put)
    toy_runner.message_hub.update_info('last_ckpt', osp.join(work, 'iter_4.pth'))
    with pytest.raises(KeyboardInterrupt):
        toy_runner.save_checkpoint(work, 'iter_4.pth', by_epoch=False)
    # it wrote to a hidden temporary file in the same folder, not to iter_4.pth
    assert osp.dirname(written[0]) == work and osp.basename(written[0]).startswith('.iter_4.pth.')
    assert written[0].endswith('.tmp')
    assert not osp.exists(osp.join(work, 'iter_4.pth'))
    assert open(osp.join(work, 'last_checkpoint')).read() == it2
    assert open(it2, 'rb').read() == before
    assert latest_complete_checkpoint(work) == it2

    # the same save, not interrupted: renamed into place, last_checkpoint updated, no temporary file left
    monkeypatch.undo()
    toy_runner.message_hub.update_info('last_ckpt', osp.join(work, 'iter_4.pth'))
    toy_runner.save_checkpoint(work, 'iter_4.pth', by_epoch=False)
    assert open(osp.join(work, 'last_checkpoint')).read() == osp.join(work, 'iter_4.pth')
    assert not [f for f in os.listdir(work) if f.endswith('.tmp')]
    assert torch.load(osp.join(work, 'iter_4.pth'), weights_only=True)['meta']['iter'] == 3  # runner.iter 2, +1


# ---------------------------------------------------------------------------------------------------------------
# SIGKILL between checkpoints, then --resume: same weights and optimizer state as an uninterrupted run
# ---------------------------------------------------------------------------------------------------------------

def _train(work_dir, demo_root, *extra, env=None, log='train'):
    """tools/train.py on the deterministic config in a process forked from this one (:func:`forked_tool`), started,
    at one thread (the same threads in every run: bitwise equal floating point); the pause hook only where ``env``
    asks for it. The config's custom_imports must be on ``sys.path`` before."""
    return forked_tool('tools/train.py', CONFIG, '--work-dir', work_dir, *extra, '--cfg-options',
                       f'train_dataloader.dataset.data_root={demo_root.rstrip("/")}/', log=f'{work_dir}.{log}.log',
                       env={'VASTMAT_TEST_PAUSE_AFTER_ITER': '0', **(env or {})}, cwd=REPO, threads=1)


def _finish(proc, work_dir, log='train', timeout: float = 300) -> str:
    proc.join(timeout)
    text = open(f'{work_dir}.{log}.log').read()
    assert proc.exitcode == 0, f'tools/train.py exited with {proc.exitcode}:\n{text[-6000:]}'
    return text


@pytest.mark.slow
@pytest.mark.xdist_group('kill_resume')
def test_sigkill_between_checkpoints_then_resume_matches_an_uninterrupted_run(demo_root, tmp_path, monkeypatch):
    straight, killed = tmp_path / 'straight', tmp_path / 'killed'
    signal_file = tmp_path / 'paused'
    monkeypatch.syspath_prepend(osp.join(REPO, 'tests', 'configs'))  # the config's custom_imports (forks inherit it)
    # the run to be killed in a process of its own (forked from this one), and meanwhile the uninterrupted run in
    # this one (tools/train.py's main, at the killed run's one thread: the same floating point)
    victim = _train(killed, demo_root, env={'VASTMAT_TEST_PAUSE_AFTER_ITER': '5',
                                            'VASTMAT_TEST_PAUSE_SIGNAL': str(signal_file)})
    try:
        monkeypatch.delenv('VASTMAT_TEST_PAUSE_AFTER_ITER', raising=False)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            tool('tools/train.py', CONFIG, '--work-dir', straight, '--cfg-options',
                 f'train_dataloader.dataset.data_root={demo_root.rstrip("/")}/')
        finally:
            torch.set_num_threads(threads)
        deadline = time.monotonic() + 300
        while not signal_file.exists():
            assert victim.is_alive(), open(f'{killed}.train.log').read()[-6000:]
            assert time.monotonic() < deadline, 'the run never reached iteration 5'
            time.sleep(0.05)
        # paused after iteration 5: iter_4.pth written, iter_6.pth not yet
        assert sorted(f for f in os.listdir(killed) if f.endswith('.pth')) == ['iter_2.pth', 'iter_4.pth']
        os.kill(victim.pid, signal.SIGKILL)
        victim.join(60)
        assert victim.exitcode == -signal.SIGKILL
    finally:
        if victim.is_alive():
            victim.kill()
    assert open(killed / 'last_checkpoint').read() == str(killed / 'iter_4.pth')
    # what a kill during the write of iter_6 could leave at worst: its temporary file, cut short, and (had the
    # write not been atomic) a truncated iter_6.pth newer than every other checkpoint
    data = open(killed / 'iter_4.pth', 'rb').read()
    open(killed / '.iter_6.pth.99999.tmp', 'wb').write(data[:len(data) // 2])
    open(killed / 'iter_6.pth', 'wb').write(data[:len(data) // 3])
    set_aside_logs(killed)  # the resumed run's log folder: its own
    log = _finish(_train(killed, demo_root, '--resume', log='resume'), killed, log='resume')
    assert 'is not a complete checkpoint' in log and 'iter_6.pth' in log
    assert f'Auto resumed from the latest complete checkpoint {killed / "iter_4.pth"}' in log
    assert 'resumed epoch: 0, iter: 4' in log
    assert 'Iter(train) [5/6]' in log and 'Iter(train) [6/6]' in log and 'Iter(train) [4/6]' not in log

    ours = torch.load(killed / 'iter_6.pth', weights_only=True)
    theirs = torch.load(straight / 'iter_6.pth', weights_only=True)
    assert ours['meta']['iter'] == theirs['meta']['iter'] == 6
    assert ours['state_dict'].keys() == theirs['state_dict'].keys()
    different = [k for k in theirs['state_dict'] if not torch.equal(ours['state_dict'][k], theirs['state_dict'][k])]
    assert not different, f'{len(different)} tensors differ, e.g. {different[:5]}'
    # the weights did change since the checkpoint resumed from
    start = torch.load(killed / 'iter_4.pth', weights_only=True)['state_dict']
    assert any(not torch.equal(start[k], theirs['state_dict'][k]) for k in start if start[k].is_floating_point())

    a, b = ours['optimizer'], theirs['optimizer']
    assert a['param_groups'] == b['param_groups']
    assert a['state'].keys() == b['state'].keys() and len(a['state']) > 0
    for index in b['state']:
        assert a['state'][index].keys() == b['state'][index].keys()
        for name, value in b['state'][index].items():
            assert torch.equal(a['state'][index][name], value), (index, name)
    assert ours['param_schedulers'] == theirs['param_schedulers']
    assert not [f for f in os.listdir(killed) if f.endswith('.tmp') and f != '.iter_6.pth.99999.tmp']
