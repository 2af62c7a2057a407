"""Weights-only checkpoints: plain data on save, safe loading, refusal of anything else."""
import os.path as osp
import pickle

import numpy as np
import pytest
import torch
from mmengine.logging import HistoryBuffer, MessageHub

from helpers.payloads import SystemCallPayload
from vastmat.engine.checkpoint import (UnsafeCheckpointError, from_plain_checkpoint, install_safe_checkpoint_loader,
                                       safe_load, to_plain_checkpoint)


def _message_hub_state():
    hub = MessageHub.get_instance('test_checkpoint_hub')
    for value in (1.0, 2.5, 4.0):
        hub.update_scalar('train/loss', value)
    hub.update_info('iter', 3)
    return hub.state_dict()


def test_plain_round_trip_restores_history_buffers(tmp_path):
    state = _message_hub_state()
    checkpoint = {'meta': {'iter': 3, 'seed': np.int64(7), 'eta': np.float64(1.5), 'palette': np.array([[1, 2, 3]])},
                  'state_dict': {'w': torch.arange(4.)}, 'message_hub': state}
    to_plain_checkpoint(checkpoint)
    assert checkpoint['meta']['seed'] == 7 and type(checkpoint['meta']['seed']) is int
    assert type(checkpoint['meta']['eta']) is float  # np.float64 is a float subclass, converted all the same
    assert checkpoint['meta']['palette'] == [[1, 2, 3]]
    path = tmp_path / 'plain.pth'
    torch.save(checkpoint, path)
    # Plain data: loads with torch's own weights_only=True and no allowlist at all.
    torch.load(path, weights_only=True)
    loaded = safe_load(path)
    buffer = loaded['message_hub']['log_scalars']['train/loss']
    assert isinstance(buffer, HistoryBuffer)
    assert buffer.data[0].tolist() == [1.0, 2.5, 4.0] and buffer.mean() == pytest.approx(2.5)
    MessageHub.get_instance('test_checkpoint_restore').load_state_dict(loaded['message_hub'])


def test_numpy_data_is_allowed(tmp_path):
    path = tmp_path / 'numpy.pth'
    torch.save({'meta': {'a': np.arange(3, dtype=np.float32), 's': np.float64(2.5), 'd': np.dtype('int16')}}, path)
    meta = safe_load(path)['meta']
    assert meta['a'].tolist() == [0.0, 1.0, 2.0] and meta['s'] == 2.5 and meta['d'] == np.dtype('int16')


def test_malicious_checkpoint_is_refused_without_running_its_payload(tmp_path):
    marker = tmp_path / 'pwned'
    path = tmp_path / 'evil.pth'
    torch.save({'state_dict': {}, 'meta': SystemCallPayload(f'touch {marker}')}, path)
    with pytest.raises(UnsafeCheckpointError, match=r'posix\.system|os\.system') as error:
        safe_load(path)
    assert str(path) in str(error.value)
    assert not marker.exists()


def test_mmengine_style_checkpoint_names_the_global(tmp_path):
    # What mmengine writes without the plain-data hook: HistoryBuffer objects (with bound methods via getattr).
    path = tmp_path / 'mmengine.pth'
    torch.save({'message_hub': _message_hub_state()}, path)
    with pytest.raises(UnsafeCheckpointError, match=r'HistoryBuffer|builtins\.getattr'):
        safe_load(path)


def test_mmengine_loader_goes_through_safe_load(tmp_path):
    from mmengine.runner.checkpoint import CheckpointLoader, _load_checkpoint
    install_safe_checkpoint_loader()
    assert CheckpointLoader._get_checkpoint_loader(str(tmp_path / 'x.pth')).__name__ == 'load_from_local_safely'
    assert CheckpointLoader._get_checkpoint_loader('https://host/x.pth').__name__ == 'load_from_http_safely'
    path = tmp_path / 'evil.pth'
    torch.save({'state_dict': SystemCallPayload('true')}, path)
    with pytest.raises(UnsafeCheckpointError):
        _load_checkpoint(str(path), map_location='cpu')


def test_unknown_objects_are_refused_on_save():
    with pytest.raises(TypeError, match=r"checkpoint\['meta'\]\['obj'\]"):
        to_plain_checkpoint({'meta': {'obj': object()}})


def test_from_plain_leaves_other_checkpoints_alone():
    checkpoint = {'state_dict': {'w': torch.zeros(1)}}
    assert from_plain_checkpoint(checkpoint) is checkpoint
    assert pickle.dumps(from_plain_checkpoint([1, 2])) == pickle.dumps([1, 2])
    assert not osp.exists('pwned')
