"""Checkpoints that load with ``torch.load(weights_only=True)``.

mmengine 0.10.7 calls ``torch.load`` without ``weights_only``; on torch >= 2.6 that means ``weights_only=True`` and
resuming fails on the ``HistoryBuffer`` objects (and their bound statistics methods, pickled through
``builtins.getattr``) that the message hub puts into every checkpoint. Allowlisting ``getattr`` would let a
checkpoint call any attribute of any allowed object, so instead:

* :func:`to_plain_checkpoint` turns what the project writes into plain data (tensors, numbers, strings, lists,
  dicts); a ``HistoryBuffer`` becomes a tagged dict. :class:`vastmat.engine.hooks.PlainCheckpointHook` applies it
  to every checkpoint the runner saves.
* :func:`safe_load` loads every checkpoint with ``weights_only=True`` and only numpy's data classes allowlisted
  (arrays, dtypes, scalars: third-party checkpoints often carry them), rebuilds the message hub's buffers, and
  refuses anything else with a :class:`UnsafeCheckpointError` naming the global. It never falls back to
  ``weights_only=False``.
* :func:`install_safe_checkpoint_loader` makes mmengine's ``CheckpointLoader`` (``load_from``, ``--resume``,
  ``--checkpoint``, ``init_cfg=dict(type='Pretrained')``) use :func:`safe_load` for local files and URLs, and for
  ``torchvision://``, ``modelzoo://``, ``open-mmlab://``, ``openmmlab://`` and ``mmcls://`` names (resolved to URLs
  with mmengine's own tables), and ``s3://`` / ``petrel://`` (read through mmengine's file backend). Every other
  scheme registered at that time (``pavi://``, ...) is refused with a :class:`CheckpointSchemeError` naming it.

Downloads (:func:`download_checkpoint`) are cached under torch hub's ``<torch.hub.get_dir()>/checkpoints``, one
sub-folder per URL (``url-<sha256(url)[:16]>/<basename>``) so two URLs with the same basename never share a file. A
torch-hub style name (``resnet50-0676ba61.pth``: 8 to 64 hex digits after the last ``-``) is checked against the
SHA-256 of the file; downloads go to a temporary name and are renamed only once verified. In a distributed run rank 0
downloads and broadcasts success or its error, so every rank raises instead of waiting forever.
"""
from __future__ import annotations

import hashlib
import io
import logging
import os
import os.path as osp
import pickle
import re
import uuid
from collections import OrderedDict
from typing import Any, Callable
from urllib.parse import urlparse

import numpy as np
import torch
from mmengine.dist import broadcast_object_list, get_dist_info
from mmengine.logging import HistoryBuffer
from mmengine.logging import print_log
from mmengine.runner import checkpoint as mmengine_checkpoint
from mmengine.runner.checkpoint import CheckpointLoader

HISTORY_BUFFER_TAG = '__vastmat_history_buffer__'
_PLAIN_LEAVES = (str, int, float, bool, bytes, type(None), torch.Tensor, torch.dtype, torch.device, torch.Size)


class UnsafeCheckpointError(pickle.UnpicklingError):
    """A checkpoint holds a pickled global that weights-only loading does not allow."""


class CheckpointHashError(RuntimeError):
    """A downloaded checkpoint's SHA-256 does not start with the hash prefix in its file name."""


class CheckpointDownloadError(RuntimeError):
    """A checkpoint could not be downloaded (on this rank or, in a distributed run, on rank 0)."""


class CheckpointSchemeError(ValueError):
    """A checkpoint URL scheme that VastMAT does not load (its mmengine loader is not weights-only)."""


def _numpy_data_globals() -> list:
    """The numpy classes and functions a pickled array, dtype or scalar needs (numpy 1.x and 2.x module names)."""
    from numpy._core import multiarray
    allowed: list = [np.ndarray, np.dtype, multiarray._reconstruct, multiarray.scalar,
                     (multiarray._reconstruct, 'numpy.core.multiarray._reconstruct'),
                     (multiarray.scalar, 'numpy.core.multiarray.scalar')]
    # numpy >= 1.25 pickles a dtype through its class, e.g. numpy.dtypes.Float64DType.
    allowed += [getattr(np.dtypes, name) for name in dir(np.dtypes) if name.endswith('DType')]
    return allowed


def safe_load(filename: str | os.PathLike, map_location: Any = None) -> Any:
    """``torch.load(filename, weights_only=True)`` with numpy's data classes allowed and nothing else.

    Raises:
        FileNotFoundError: no such file.
        UnsafeCheckpointError: the file pickles a global outside the allowlist (the message names it); nothing
            in the file is executed.
    """
    filename = osp.expanduser(os.fspath(filename))
    if not osp.isfile(filename):
        raise FileNotFoundError(f'checkpoint {filename} can not be found.')
    return _safe_torch_load(filename, filename, map_location)


def _safe_torch_load(source: Any, name: str, map_location: Any) -> Any:
    """:func:`safe_load` of a path or a binary file object; ``name`` is what error messages call it."""
    try:
        with torch.serialization.safe_globals(_numpy_data_globals()):
            checkpoint = torch.load(source, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as exc:
        found = re.search(r'GLOBAL ([\w.]+)', str(exc))
        what = f'the global {found.group(1)}' if found else 'an object'
        raise UnsafeCheckpointError(
            f'refusing to load checkpoint {name}: it pickles {what}, which is not plain data (tensors, '
            'numbers, strings, containers, numpy arrays). Loading it could run code, so VastMAT never loads '
            'checkpoints with weights_only=False. If you trust the file, convert it with '
            "`python -c \"import torch; c = torch.load(F, weights_only=False); torch.save({'state_dict': "
            "c['state_dict']}, OUT)\"` on a machine where running its code is acceptable.\n"
            f'torch said: {str(exc).splitlines()[0]}') from None
    return from_plain_checkpoint(checkpoint)


def to_plain(obj: Any, where: str = 'checkpoint') -> Any:
    """Return ``obj`` with every ``HistoryBuffer``, numpy array and numpy scalar turned into plain data.

    Raises:
        TypeError: an object that weights-only loading would refuse; the message gives its place in ``obj``.
    """
    if isinstance(obj, HistoryBuffer):
        log_history, count_history = obj.data
        return {HISTORY_BUFFER_TAG: True, 'log_history': log_history.tolist(),
                'count_history': count_history.tolist(), 'max_length': int(obj.max_length)}
    if isinstance(obj, (np.ndarray, np.generic)):  # before the leaves: np.float64 is a float subclass
        return obj.tolist()
    if isinstance(obj, _PLAIN_LEAVES):
        return obj
    if isinstance(obj, dict):
        plain = {key: to_plain(value, f'{where}[{key!r}]') for key, value in obj.items()}
        return OrderedDict(plain) if isinstance(obj, OrderedDict) else plain
    if isinstance(obj, (list, tuple)):
        items = [to_plain(value, f'{where}[{i}]') for i, value in enumerate(obj)]
        return items if isinstance(obj, list) else tuple(items)
    raise TypeError(f'{where} holds a {type(obj).__module__}.{type(obj).__qualname__}, which a weights_only '
                    'checkpoint cannot hold; convert it to tensors, numbers, strings, lists or dicts')


def to_plain_checkpoint(checkpoint: dict) -> dict:
    """Convert a runner checkpoint to plain data in place (and return it)."""
    for key in list(checkpoint):
        checkpoint[key] = to_plain(checkpoint[key], f'checkpoint[{key!r}]')
    return checkpoint


def from_plain_checkpoint(checkpoint: Any) -> Any:
    """Rebuild the message hub's ``HistoryBuffer`` objects of a checkpoint written by :func:`to_plain_checkpoint`."""
    if not isinstance(checkpoint, dict):
        return checkpoint
    message_hub = checkpoint.get('message_hub')
    if isinstance(message_hub, dict) and isinstance(message_hub.get('log_scalars'), dict):
        scalars = message_hub['log_scalars']
        for key, value in scalars.items():
            if isinstance(value, dict) and value.get(HISTORY_BUFFER_TAG):
                scalars[key] = HistoryBuffer(value['log_history'], value['count_history'], value['max_length'])
    return checkpoint


def read_official_checkpoint(source: str, key: str, layout: str, bare: bool = True) -> tuple[Any, dict]:
    """``(checkpoint, state_dict)`` of an official checkpoint for a converter (tools/model_converters/): the state
    dict under ``key`` (or the file itself when it is a bare state dict and ``bare``), read weights-only with the
    ``argparse.Namespace`` of the official ``args`` allowed. ``layout`` describes the expected file in the error."""
    import argparse
    with torch.serialization.safe_globals([argparse.Namespace]):
        checkpoint = torch.load(source, map_location='cpu', weights_only=True)
    state_dict = checkpoint.get(key, checkpoint if bare else None) if isinstance(checkpoint, dict) else None
    if (not isinstance(state_dict, dict) or not state_dict
            or not all(isinstance(v, torch.Tensor) for v in state_dict.values())):
        raise ValueError(f'{source}: no state dict of tensors under {key!r} ({layout})')
    return checkpoint, state_dict


def save_converted_checkpoint(state_dict: dict, meta: dict, target: str, official: Any = None) -> None:
    """Write a converter's output: plain tensors and ``meta`` (with the official ``epoch`` when ``official`` has
    one), loadable with ``weights_only=True``, atomically (a temporary file renamed)."""
    if isinstance(official, dict) and isinstance(official.get('epoch'), int):
        meta = dict(meta, official_epoch=official['epoch'])
    os.makedirs(osp.dirname(osp.abspath(target)), exist_ok=True)
    partial = f'{target}.{os.getpid()}.tmp'
    try:
        torch.save(dict(state_dict=state_dict, meta=meta), partial)
        os.replace(partial, target)
    finally:
        if osp.exists(partial):
            os.remove(partial)


def converted_summary(target: str, state_dict: dict) -> str:
    """The line a converter prints: the file, its tensors and its floating-point weights."""
    weights = sum(v.numel() for v in state_dict.values() if v.is_floating_point())
    return f'{target}: {len(state_dict)} tensors, {weights:,} weights'


def check_starting_point(load_from: Any, where: str) -> None:
    """Refuse a ``load_from`` that names a local file which is not there (``~`` expanded, as the loader does): the
    full-size configs start from converted official weights or an earlier stage's checkpoint, named in the config's
    comment."""
    if load_from and '://' not in str(load_from) and not osp.isfile(osp.expanduser(str(load_from))):
        raise FileNotFoundError(
            f'{where}: load_from {str(load_from)!r} does not exist; make it as the config\'s comment says (converted '
            'official weights: tools/model_converters/; or the earlier training stage it names), pass another with '
            '--checkpoint, or start from the backbone\'s own initialisation with --cfg-options load_from=None')


def load_from_local_safely(filename: str, map_location: Any) -> Any:
    """mmengine ``CheckpointLoader`` scheme for local files (the name's tail after ``load_from_`` is logged)."""
    return safe_load(filename, map_location)


# torch hub names a file ``<name>-<first hex digits of its sha256>.<ext>``. torch's own HASH_REGEX takes the first
# ``-hex.`` anywhere, which misreads mmdet names such as ``..._bbox_mAP-0.408_...-42aa3d00.pth``; we take only the
# 8 to 64 hex digits between the last ``-`` and the extension.
_NAME_HASH = re.compile(r'.*-([0-9a-f]{8,64})\.[^.]+')


def expected_hash_prefix(filename: str) -> str | None:
    """The SHA-256 prefix a torch-hub style file name carries (``resnet50-0676ba61.pth`` -> ``0676ba61``), or None."""
    found = _NAME_HASH.fullmatch(osp.basename(filename))
    return found.group(1) if found else None


def sha256_of(path: str) -> str:
    """Hex SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, 'rb') as file:
        for block in iter(lambda: file.read(1 << 20), b''):
            digest.update(block)
    return digest.hexdigest()


def default_checkpoint_dir() -> str:
    """``<torch.hub.get_dir()>/checkpoints``: where torch hub and mmengine's ``load_url`` cache downloads."""
    return osp.join(torch.hub.get_dir(), 'checkpoints')


def cached_checkpoint_path(url: str, model_dir: str | None = None) -> str:
    """Cache path of ``url``: ``<model_dir>/url-<sha256(url)[:16]>/<basename>`` (keyed by the whole URL)."""
    model_dir = model_dir or default_checkpoint_dir()
    basename = osp.basename(urlparse(url).path) or 'checkpoint.pth'
    key = hashlib.sha256(url.encode('utf-8')).hexdigest()[:16]
    return osp.join(model_dir, f'url-{key}', basename)


def _check_hash(url: str, path: str, expected: str | None) -> str | None:
    """The error message when ``path`` does not match the name's hash prefix, else None."""
    if expected is None:
        return None
    actual = sha256_of(path)
    if actual.startswith(expected):
        return None
    return (f'checkpoint downloaded from {url} has SHA-256 prefix {actual[:len(expected)]}, but its file name '
            f'says {expected}; the file is corrupt or not the one named (it was not kept)')


def _download_verified(url: str, cached: str, progress: bool) -> None:
    """Download ``url`` to a temporary name next to ``cached``, check the name's hash, rename into place.

    A cached file is re-checked; one that fails is deleted and downloaded again.
    """
    expected = expected_hash_prefix(cached)
    if osp.isfile(cached):
        if _check_hash(url, cached, expected) is None:
            return
        print_log(f'cached checkpoint {cached} does not match the hash in its name; downloading {url} again',
                  logger='current', level=logging.WARNING)
        os.remove(cached)
    os.makedirs(osp.dirname(cached), exist_ok=True)
    partial = f'{cached}.{uuid.uuid4().hex}.partial'
    try:
        try:
            # torch.hub's downloader (urllib, progress bar, its own temporary file); we add the URL-keyed name and
            # a hash check that names the URL.
            torch.hub.download_url_to_file(url, partial, hash_prefix=None, progress=progress)
        except Exception as exc:
            raise CheckpointDownloadError(f'could not download checkpoint {url}: {type(exc).__name__}: {exc}') from exc
        problem = _check_hash(url, partial, expected)
        if problem:
            raise CheckpointHashError(problem)
        os.replace(partial, cached)
    finally:
        if osp.exists(partial):
            os.remove(partial)


def download_checkpoint(url: str, model_dir: str | None = None, progress: bool = False) -> str:
    """Download ``url`` once into the URL-keyed cache and return the local path (see the module docstring).

    In a distributed run rank 0 downloads and broadcasts the outcome; every other rank then raises rank 0's error
    instead of waiting, or (if its file system does not see rank 0's file) downloads the file itself.

    Raises:
        CheckpointDownloadError: the download failed (here or on rank 0).
        CheckpointHashError: the file's SHA-256 does not match the prefix in its name; no file is left in the cache.
    """
    cached = cached_checkpoint_path(url, model_dir)
    rank, world_size = get_dist_info()
    error: BaseException | None = None
    if rank == 0:
        try:
            _download_verified(url, cached, progress)
        except Exception as exc:  # reported to the other ranks before it is raised here
            error = exc
    if world_size > 1:
        outcome = [None if error is None else (type(error).__name__, str(error))]
        broadcast_object_list(outcome, src=0)
        if rank > 0 and outcome[0] is not None:
            kind, message = outcome[0]
            error_type = CheckpointHashError if kind == CheckpointHashError.__name__ else CheckpointDownloadError
            raise error_type(f'rank 0 failed to fetch checkpoint {url}: {message}')
        if rank > 0 and not osp.isfile(cached):  # a node that does not share rank 0's cache directory
            _download_verified(url, cached, progress)
    if error is not None:
        raise error
    return cached


def load_from_http_safely(filename: str, map_location: Any = None, model_dir: str | None = None) -> Any:
    """mmengine ``CheckpointLoader`` scheme for URLs: :func:`download_checkpoint`, then :func:`safe_load`."""
    return safe_load(download_checkpoint(filename, model_dir), map_location)


def _load_resolved(name: str, url: str, map_location: Any) -> Any:
    """Load what a model-zoo name resolved to: an http(s) URL, or a path under mmengine's home (open-mmlab)."""
    if url.startswith(('http://', 'https://')):
        return load_from_http_safely(url, map_location)
    if '://' in url:
        raise CheckpointSchemeError(f'{name} resolves to {url}, which is neither an http(s) URL nor a local path')
    return safe_load(osp.join(mmengine_checkpoint._get_mmengine_home(), url), map_location)


def _zoo_url(name: str, table: dict, table_name: str) -> str:
    if name not in table:
        raise KeyError(f'checkpoint {name!r} is not in {table_name} (known: {len(table)} names)')
    return table[name]


def load_from_torchvision_safely(filename: str, map_location: Any = None) -> Any:
    """``torchvision://NAME`` (and the deprecated ``modelzoo://NAME``) via mmengine's URL table, loaded safely."""
    prefix = 'modelzoo://' if filename.startswith('modelzoo://') else 'torchvision://'
    name = filename[len(prefix):]
    url = _zoo_url(name, mmengine_checkpoint.get_torchvision_models(), "mmengine's torchvision model table")
    return _load_resolved(filename, url, map_location)


def load_from_openmmlab_safely(filename: str, map_location: Any = None) -> Any:
    """``open-mmlab://NAME`` / ``openmmlab://NAME`` via mmengine's tables (deprecated names renamed), loaded safely."""
    prefix = 'open-mmlab://' if filename.startswith('open-mmlab://') else 'openmmlab://'
    name = filename[len(prefix):]
    deprecated = mmengine_checkpoint.get_deprecated_model_names()
    if name in deprecated:
        print_log(f'{prefix}{name} is deprecated in favor of {prefix}{deprecated[name]}', logger='current',
                  level=logging.WARNING)
        name = deprecated[name]
    url = _zoo_url(name, mmengine_checkpoint.get_external_models(), "mmengine's open-mmlab model table")
    return _load_resolved(filename, url, map_location)


def load_from_mmcls_safely(filename: str, map_location: Any = None) -> Any:
    """``mmcls://NAME`` via mmengine's table, loaded safely, backbone keys kept as mmengine does."""
    name = filename[len('mmcls://'):]
    url = _zoo_url(name, mmengine_checkpoint.get_mmcls_models(), "mmengine's mmcls model table")
    return mmengine_checkpoint._process_mmcls_checkpoint(_load_resolved(filename, url, map_location))


def load_from_ceph_safely(filename: str, map_location: Any = None, backend: str = 'petrel') -> Any:
    """``s3://`` / ``petrel://`` (optionally ``name:s3://``) read with mmengine's file backend, loaded weights-only."""
    data = mmengine_checkpoint.get_file_backend(filename, backend_args={'backend': backend}).get(filename)
    with io.BytesIO(data) as buffer:
        return _safe_torch_load(buffer, filename, map_location)


def _refusing_loader(prefix: str, original: Callable) -> Callable:
    """A loader that refuses ``prefix`` (a scheme whose mmengine loader unpickles without weights-only checks)."""
    scheme = prefix.replace(r'(\S+\:)?', '')

    def load_from_refused_scheme(filename: str, map_location: Any = None) -> Any:
        raise CheckpointSchemeError(
            f'refusing to load checkpoint {filename}: VastMAT does not load the {scheme} scheme (its loader '
            f'{getattr(original, "__module__", "?")}.{getattr(original, "__name__", original)} is not weights-only). '
            'Copy the file to a local path or serve it over http(s) and load that.')

    return load_from_refused_scheme


_SAFE_SCHEMES: dict[Any, Callable] = {
    '': load_from_local_safely,
    ('http://', 'https://'): load_from_http_safely,
    ('modelzoo://', 'torchvision://'): load_from_torchvision_safely,
    ('open-mmlab://', 'openmmlab://'): load_from_openmmlab_safely,
    'mmcls://': load_from_mmcls_safely,
    (r'(\S+\:)?s3://', r'(\S+\:)?petrel://'): load_from_ceph_safely,
}


def install_safe_checkpoint_loader() -> None:
    """Route mmengine's checkpoint schemes through :func:`safe_load`; refuse every other registered one (idempotent)."""
    ours = set()
    for prefixes, loader in _SAFE_SCHEMES.items():
        CheckpointLoader.register_scheme(prefixes=prefixes, loader=loader, force=True)
        ours.update([prefixes] if isinstance(prefixes, str) else prefixes)
    for prefix, loader in list(CheckpointLoader._schemes.items()):
        if prefix not in ours and loader.__name__ != 'load_from_refused_scheme':
            CheckpointLoader.register_scheme(prefixes=prefix, loader=_refusing_loader(prefix, loader), force=True)
