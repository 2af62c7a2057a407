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
  ``--checkpoint``, ``init_cfg=dict(type='Pretrained')``) use :func:`safe_load` for local files and URLs.
"""
from __future__ import annotations

import os
import os.path as osp
import pickle
import re
from collections import OrderedDict
from typing import Any, Callable
from urllib.parse import urlparse

import numpy as np
import torch
from mmengine.dist import barrier, get_dist_info
from mmengine.logging import HistoryBuffer
from mmengine.runner.checkpoint import CheckpointLoader

HISTORY_BUFFER_TAG = '__vastmat_history_buffer__'
_PLAIN_LEAVES = (str, int, float, bool, bytes, type(None), torch.Tensor, torch.dtype, torch.device, torch.Size)


class UnsafeCheckpointError(pickle.UnpicklingError):
    """A checkpoint holds a pickled global that weights-only loading does not allow."""


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
    try:
        with torch.serialization.safe_globals(_numpy_data_globals()):
            checkpoint = torch.load(filename, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as exc:
        found = re.search(r'GLOBAL ([\w.]+)', str(exc))
        what = f'the global {found.group(1)}' if found else 'an object'
        raise UnsafeCheckpointError(
            f'refusing to load checkpoint {filename}: it pickles {what}, which is not plain data (tensors, '
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


def load_from_local_safely(filename: str, map_location: Any) -> Any:
    """mmengine ``CheckpointLoader`` scheme for local files (the name's tail after ``load_from_`` is logged)."""
    return safe_load(filename, map_location)


def load_from_http_safely(filename: str, map_location: Any = None, model_dir: str | None = None) -> Any:
    """mmengine ``CheckpointLoader`` scheme for URLs: download once into torch's hub cache, then :func:`safe_load`."""
    model_dir = model_dir or osp.join(torch.hub.get_dir(), 'checkpoints')
    cached = osp.join(model_dir, osp.basename(urlparse(filename).path))
    rank, world_size = get_dist_info()
    if rank == 0 and not osp.isfile(cached):
        os.makedirs(model_dir, exist_ok=True)
        torch.hub.download_url_to_file(filename, cached, progress=True)
    if world_size > 1:
        barrier()
    return safe_load(cached, map_location)


_SAFE_SCHEMES: dict[Any, Callable] = {'': load_from_local_safely, ('http://', 'https://'): load_from_http_safely}


def install_safe_checkpoint_loader() -> None:
    """Route mmengine's local and URL checkpoint loading through :func:`safe_load` (idempotent)."""
    for prefixes, loader in _SAFE_SCHEMES.items():
        CheckpointLoader.register_scheme(prefixes=prefixes, loader=loader, force=True)
