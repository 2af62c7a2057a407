"""Checkpoint downloads: URL-keyed cache, torch-hub name hashes, rank-0 failures, mmengine's URL schemes.

No network: files are served by an ``http.server`` thread on 127.0.0.1.
"""
import functools
import hashlib
import http.server
import multiprocessing
import os
import socket
import threading
import time
from datetime import timedelta

import pytest
import torch
from mmengine.runner import checkpoint as mmengine_checkpoint
from mmengine.runner.checkpoint import CheckpointLoader, _load_checkpoint

from vastmat.engine.checkpoint import (CheckpointDownloadError, CheckpointHashError, CheckpointSchemeError,
                                       UnsafeCheckpointError, cached_checkpoint_path, download_checkpoint,
                                       expected_hash_prefix, install_safe_checkpoint_loader, load_from_http_safely)


class _Payload:
    """Pickles to ``os.system(command)``."""

    def __init__(self, command):
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _save(path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(obj, path)
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    """(root directory served, base URL)."""
    root = tmp_path_factory.mktemp('served')
    handler = functools.partial(_QuietHandler, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield root, f'http://127.0.0.1:{httpd.server_address[1]}'
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def hub_dir(tmp_path, monkeypatch):
    """torch hub's directory moved into tmp_path; returns the checkpoints cache directory."""
    monkeypatch.setattr(torch.hub, '_hub_dir', str(tmp_path / 'hub'))
    install_safe_checkpoint_loader()
    return tmp_path / 'hub' / 'checkpoints'


def _files(directory):
    return sorted(str(p.relative_to(directory)) for p in directory.rglob('*') if p.is_file()) if directory.exists() \
        else []


def test_cache_is_keyed_by_url(server, hub_dir):
    root, base = server
    _save(root / 'a' / 'model.pth', {'state_dict': {'w': torch.tensor([1.0])}})
    _save(root / 'b' / 'model.pth', {'state_dict': {'w': torch.tensor([2.0])}})
    url_a, url_b = f'{base}/a/model.pth', f'{base}/b/model.pth'
    assert load_from_http_safely(url_a)['state_dict']['w'].item() == 1.0
    assert load_from_http_safely(url_b)['state_dict']['w'].item() == 2.0
    path_a, path_b = cached_checkpoint_path(url_a), cached_checkpoint_path(url_b)
    assert path_a != path_b and os.path.basename(path_a) == os.path.basename(path_b) == 'model.pth'
    assert path_a.startswith(str(hub_dir)) and len(_files(hub_dir)) == 2
    # Served from the cache afterwards: the source is gone, each URL still gives its own file.
    (root / 'a' / 'model.pth').unlink()
    assert load_from_http_safely(url_a)['state_dict']['w'].item() == 1.0
    assert load_from_http_safely(url_b)['state_dict']['w'].item() == 2.0


def test_hash_prefix_of_names():
    assert expected_hash_prefix('resnet50-0676ba61.pth') == '0676ba61'
    assert expected_hash_prefix('https://x/faster_rcnn_r50_fpn_1x_coco_20200130-047c8118.pth') == '047c8118'
    # torch.hub's HASH_REGEX would take '0' from 'mAP-0.408'; only the hex after the last '-' counts.
    assert expected_hash_prefix('mask_rcnn_coco_bbox_mAP-0.408__segm_mAP-0.37_20200504_163245-42aa3d00.pth') \
        == '42aa3d00'
    assert expected_hash_prefix('model.pth') is None
    assert expected_hash_prefix('net-0.pth') is None and expected_hash_prefix('net-abc123.pth') is None


def test_name_hash_is_checked(server, hub_dir):
    root, base = server
    digest = _save(root / 'hashes' / 'good.pth', {'w': torch.arange(3.)})
    good = root / 'hashes' / f'net-{digest[:8]}.pth'
    (root / 'hashes' / 'good.pth').rename(good)
    assert load_from_http_safely(f'{base}/hashes/{good.name}')['w'].tolist() == [0.0, 1.0, 2.0]
    assert len(_files(hub_dir)) == 1

    wrong = 'deadbeef' if not digest.startswith('deadbeef') else 'feedface'
    bad = root / 'hashes' / f'net-{wrong}.pth'
    bad.write_bytes(good.read_bytes())
    url = f'{base}/hashes/{bad.name}'
    with pytest.raises(CheckpointHashError) as error:
        load_from_http_safely(url)
    message = str(error.value)
    assert url in message and wrong in message and digest[:8] in message
    assert not os.path.exists(cached_checkpoint_path(url)) and len(_files(hub_dir)) == 1  # no file, no .partial


def test_corrupt_cached_file_is_downloaded_again(server, hub_dir):
    root, base = server
    digest = _save(root / 'again' / 'x.pth', {'w': torch.ones(2)})
    (root / 'again' / 'x.pth').rename(root / 'again' / f'x-{digest[:10]}.pth')
    url = f'{base}/again/x-{digest[:10]}.pth'
    cached = download_checkpoint(url)
    with open(cached, 'r+b') as file:
        file.seek(40)
        file.write(b'\0\0\0\0')
    assert download_checkpoint(url) == cached
    assert hashlib.sha256(open(cached, 'rb').read()).hexdigest() == digest


def test_failed_download_names_the_url_and_leaves_nothing(server, hub_dir):
    url = f'{server[1]}/missing/model.pth'
    with pytest.raises(CheckpointDownloadError, match='404') as error:
        load_from_http_safely(url)
    assert url in str(error.value) and _files(hub_dir) == []


def test_unsafe_pickle_over_http_is_refused(server, hub_dir, tmp_path):
    root, base = server
    marker = tmp_path / 'pwned'
    _save(root / 'evil' / 'evil.pth', {'state_dict': {}, 'meta': _Payload(f'touch {marker}')})
    with pytest.raises(UnsafeCheckpointError, match=r'posix\.system|os\.system'):
        _load_checkpoint(f'{base}/evil/evil.pth', map_location='cpu')
    assert not marker.exists()


def test_model_zoo_schemes_resolve_to_the_safe_http_path(server, hub_dir, tmp_path, monkeypatch):
    root, base = server
    _save(root / 'zoo' / 'tv.pth', {'w': torch.tensor([3.0])})
    _save(root / 'zoo' / 'mm.pth', {'w': torch.tensor([4.0])})
    _save(root / 'zoo' / 'cls.pth', {'state_dict': {'backbone.w': torch.tensor([5.0]), 'head.b': torch.zeros(1)}})
    _save(tmp_path / 'mmhome' / 'local' / 'm.pth', {'w': torch.tensor([6.0])})
    _save(root / 'zoo' / 'evil.pth', {'meta': _Payload('true')})
    monkeypatch.setattr(mmengine_checkpoint, 'get_torchvision_models',
                        lambda: {'resnet': f'{base}/zoo/tv.pth', 'evil': f'{base}/zoo/evil.pth'})
    monkeypatch.setattr(mmengine_checkpoint, 'get_external_models',
                        lambda: {'net': f'{base}/zoo/mm.pth', 'on_disk': 'local/m.pth'})
    monkeypatch.setattr(mmengine_checkpoint, 'get_deprecated_model_names', lambda: {'old_net': 'net'})
    monkeypatch.setattr(mmengine_checkpoint, 'get_mmcls_models', lambda: {'cls': f'{base}/zoo/cls.pth'})
    monkeypatch.setattr(mmengine_checkpoint, '_get_mmengine_home', lambda: str(tmp_path / 'mmhome'))
    expected = {'torchvision://resnet': 3.0, 'modelzoo://resnet': 3.0, 'open-mmlab://net': 4.0,
                'openmmlab://old_net': 4.0, 'open-mmlab://on_disk': 6.0}
    for name, value in expected.items():
        assert CheckpointLoader._get_checkpoint_loader(name).__name__.endswith('_safely'), name
        assert _load_checkpoint(name, map_location='cpu')['w'].item() == value, name
    assert _load_checkpoint('mmcls://cls', map_location='cpu') == {'state_dict': {'w': torch.tensor([5.0])}}
    with pytest.raises(UnsafeCheckpointError):
        _load_checkpoint('torchvision://evil', map_location='cpu')
    with pytest.raises(KeyError, match='nope'):
        _load_checkpoint('open-mmlab://nope', map_location='cpu')


def test_ceph_schemes_load_weights_only(hub_dir, tmp_path, monkeypatch):
    good, evil = tmp_path / 'good.pth', tmp_path / 'evil.pth'
    _save(good, {'w': torch.tensor([8.0])})
    _save(evil, {'meta': _Payload('true')})

    class _FakeBackend:  # stands in for mmengine's PetrelBackend: .get(path) returns the file's bytes
        def get(self, filename):
            return (evil if 'evil' in filename else good).read_bytes()

    monkeypatch.setattr(mmengine_checkpoint, 'get_file_backend', lambda filename, backend_args: _FakeBackend())
    for name in ('s3://bucket/m.pth', 'open-mmlab:s3://bucket/m.pth', 'petrel://bucket/m.pth'):
        assert CheckpointLoader._get_checkpoint_loader(name).__name__ == 'load_from_ceph_safely', name
        assert _load_checkpoint(name, map_location='cpu')['w'].item() == 8.0
    with pytest.raises(UnsafeCheckpointError, match='s3://bucket/evil.pth'):
        _load_checkpoint('s3://bucket/evil.pth', map_location='cpu')


def test_other_schemes_are_refused(hub_dir):
    with pytest.raises(CheckpointSchemeError, match='refusing to load checkpoint pavi://model/1: .*the pavi:// scheme'):
        _load_checkpoint('pavi://model/1', map_location='cpu')
    # Every scheme mmengine has registered is either one of ours or refused.
    for prefix, loader in CheckpointLoader._schemes.items():
        assert loader.__name__.endswith('_safely') or loader.__name__ == 'load_from_refused_scheme', prefix


def _dist_worker(rank, port, urls, model_dir, results):
    torch.set_num_threads(1)
    torch.distributed.init_process_group('gloo', init_method=f'tcp://127.0.0.1:{port}', rank=rank, world_size=2,
                                         timeout=timedelta(seconds=30))
    try:
        for url in urls:
            start = time.monotonic()
            try:
                outcome = ('ok', load_from_http_safely(url, model_dir=model_dir)['w'].item())
            except Exception as exc:
                outcome = (type(exc).__name__, str(exc))
            results.put((rank, url, outcome, time.monotonic() - start))
    finally:
        torch.distributed.destroy_process_group()


def _free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def test_rank0_failure_stops_every_rank(server, tmp_path):
    root, base = server
    _save(root / 'dist' / 'ok.pth', {'w': torch.tensor([7.0])})
    bad, good = f'{base}/dist/missing.pth', f'{base}/dist/ok.pth'
    context = multiprocessing.get_context('fork')  # (forked: torch imported, no interpreter start)
    results = context.Queue()
    port = _free_port()
    workers = [context.Process(target=_dist_worker, args=(rank, port, [bad, good], str(tmp_path / 'cache'), results))
               for rank in range(2)]
    for worker in workers:
        worker.start()
    try:
        outcomes = {}
        for _ in range(4):
            rank, url, outcome, seconds = results.get(timeout=60)
            outcomes[rank, url] = outcome
            assert seconds < 10, (rank, url, outcome, seconds)  # no wait at the barrier for gloo's timeout
    finally:
        for worker in workers:
            worker.join(timeout=20)
            if worker.is_alive():
                worker.kill()
    assert outcomes[0, bad][0] == 'CheckpointDownloadError' and bad in outcomes[0, bad][1]
    assert outcomes[1, bad][0] == 'CheckpointDownloadError'
    assert outcomes[1, bad][1].startswith(f'rank 0 failed to fetch checkpoint {bad}') and '404' in outcomes[1, bad][1]
    assert outcomes[0, good] == outcomes[1, good] == ('ok', 7.0)
    assert [worker.exitcode for worker in workers] == [0, 0]
