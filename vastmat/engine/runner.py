"""The VastMAT runner: mmengine's ``Runner`` with weights-only checkpoints and distributed runs on CPU."""
from __future__ import annotations

import copy
import glob
import os
import os.path as osp
import zipfile
from typing import Any

from mmengine.config import Config
from mmengine.dist import master_only
from mmengine.runner import Runner

from vastmat.registry import RUNNERS

from .checkpoint import check_starting_point, install_safe_checkpoint_loader
from .dist import init_cpu_distributed, needs_cpu_distributed
from .hooks import PlainCheckpointHook


class FormattedOnceConfig(Config):
    """A ``Config`` that writes its ``pretty_text`` once, without yapf. mmengine's ``Runner`` writes the whole config
    four times while it starts (the log, the dumped file, the visualizer's copy) and formats it with yapf each time,
    1.2 s for a detector config on a CPU core (measured: 1.24 of a runner's 1.5 s start): most of the time of a short
    test run. The text is mmengine's own (``format_python_code=False``): the same dicts, valid Python that
    ``Config.fromfile`` reads back, in longer lines."""

    @property
    def pretty_text(self) -> str:
        text = self.__dict__.get('_vastmat_pretty_text')
        if text is None:
            object.__setattr__(self, '_format_python_code', False)
            text = super().pretty_text
            object.__setattr__(self, '_vastmat_pretty_text', text)  # Config's own __setattr__ writes config keys
        return text


_TEMP_SUFFIX = '.tmp'  # a checkpoint being written: ``.<name>.<pid>.tmp`` beside it, never matching ``*.pth``


def _fsync(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _replace_atomically(tmp: str, final: str) -> None:
    """Flush ``tmp`` to disk and rename it over ``final`` (atomic on POSIX and Windows); then flush the folder, so
    that the rename itself survives a crash."""
    _fsync(tmp)
    os.replace(tmp, final)
    try:
        _fsync(osp.dirname(osp.abspath(final)))
    except OSError:  # folders cannot be opened for fsync on every platform (Windows)
        pass


def write_text_atomically(path: str, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename: a reader sees the old or the new text,
    never a truncated one."""
    tmp = osp.join(osp.dirname(path) or '.', f'.{osp.basename(path)}.{os.getpid()}{_TEMP_SUFFIX}')
    with open(tmp, 'w') as f:
        f.write(text)
    _replace_atomically(tmp, path)


def is_complete_checkpoint(path: str) -> bool:
    """Whether ``path`` is a whole ``torch.save`` file: a zip archive whose central directory (written last) is
    present and whose pickle passes its CRC check. A file cut short by a kill fails both. Files in torch's legacy
    (non-zip) format are not written by this runner and count as incomplete."""
    try:
        with zipfile.ZipFile(path) as archive:
            pickles = [name for name in archive.namelist() if name.split('/')[-1] == 'data.pkl']
            if len(pickles) != 1:
                return False
            archive.read(pickles[0])  # raises BadZipFile on a CRC mismatch
        return True
    except (OSError, zipfile.BadZipFile, EOFError, ValueError):
        return False


def latest_complete_checkpoint(work_dir: str, logger: Any = None) -> str | None:
    """The checkpoint ``--resume`` without a value continues from: of the checkpoint named in
    ``<work_dir>/last_checkpoint`` and the ``*.pth`` files beside it and in ``work_dir`` (``best_*`` excluded, as
    mmengine never resumes from them), the newest complete one (by modification time; on a tie, the one
    ``last_checkpoint`` names). A truncated file, a leftover temporary file and an empty or stale
    ``last_checkpoint`` are skipped (logged). ``None`` when there is no complete checkpoint."""
    def log(message: str) -> None:
        if logger is not None:
            logger.warning(message)

    named = None
    save_file = osp.join(work_dir, 'last_checkpoint')
    if osp.isfile(save_file):
        with open(save_file) as f:
            named = f.read().strip() or None
        if named is None:
            log(f'{save_file} is empty; looking for the newest complete checkpoint in {work_dir}')
    folders = {osp.abspath(work_dir)}
    if named is not None and '://' not in named:
        folders.add(osp.dirname(osp.abspath(named)))
    candidates = {osp.abspath(p) for folder in folders for p in glob.glob(osp.join(folder, '*.pth'))
                  if not osp.basename(p).startswith('best_')}
    if named is not None and '://' not in named:
        candidates.add(osp.abspath(named))
    best, best_key = None, None
    for path in sorted(candidates):
        if not osp.isfile(path):
            if named is not None and path == osp.abspath(named):
                log(f'{save_file} names {named}, which does not exist; skipped')
            continue
        if not is_complete_checkpoint(path):
            log(f'{path} is not a complete checkpoint (cut short by a kill?); skipped')
            continue
        key = (os.stat(path).st_mtime_ns, named is not None and path == osp.abspath(named))
        if best_key is None or key > best_key:
            best, best_key = path, key
    for folder in folders:
        for leftover in glob.glob(osp.join(folder, f'.*{_TEMP_SUFFIX}')):
            log(f'{leftover} is a checkpoint whose writing was interrupted; not resumed from')
    if best is None and named is not None and '://' in named:
        return named  # a remote checkpoint (e.g. s3://): trusted as mmengine does
    return best


@RUNNERS.register_module()
class VastMATRunner(Runner):
    """``Runner`` that (1) writes checkpoints as plain data and loads every checkpoint with ``weights_only=True``,
    (2) runs distributed on machines without a GPU (gloo, ``device_ids=None``), (3) formats its config once,
    (4) writes checkpoints atomically (a temporary file renamed into place, then ``last_checkpoint`` rewritten the
    same way) and auto-resumes from the newest complete checkpoint, so that a run killed at any moment resumes
    from a whole checkpoint.

    Selected by ``runner_type = 'VastMATRunner'`` in ``configs/_base_/default_runtime.py``; everything else is
    mmengine's ``Runner``.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        install_safe_checkpoint_loader()
        if isinstance(kwargs.get('cfg'), Config) and not isinstance(kwargs['cfg'], FormattedOnceConfig):
            kwargs['cfg'] = copy.deepcopy(kwargs['cfg'])
            object.__setattr__(kwargs['cfg'], '__class__', FormattedOnceConfig)  # Config.__setattr__ sets keys
        launcher = kwargs.get('launcher', 'none')
        if needs_cpu_distributed(launcher):
            init_cpu_distributed(launcher)
            # mmengine wraps the model with device_ids=[LOCAL_RANK], a CUDA device; on the CPU it must be None.
            # The wrapper is read from cfg.model_wrapper_cfg; the rest mirrors mmengine's default wrapper.
            cfg = copy.deepcopy(kwargs.get('cfg') or Config(dict()))
            wrapper = cfg.get('model_wrapper_cfg') or dict(
                type='MMDistributedDataParallel', broadcast_buffers=False,
                find_unused_parameters=cfg.get('find_unused_parameters', False))
            wrapper.setdefault('device_ids', None)
            cfg.model_wrapper_cfg = wrapper
            kwargs['cfg'] = cfg
        super().__init__(*args, **kwargs)

    def wrap_model(self, model_wrapper_cfg: dict | None, model: Any) -> Any:
        """As mmengine's, except that a model without trainable parameters (a tracker on cached detections) is not
        wrapped: DistributedDataParallel refuses such a model, and testing needs no gradient synchronisation."""
        import torch.distributed as torch_dist
        if torch_dist.is_available() and torch_dist.is_initialized() and not any(
                p.requires_grad for p in model.parameters()):
            return model
        return super().wrap_model(model_wrapper_cfg, model)

    def register_hooks(self, default_hooks=None, custom_hooks=None) -> None:
        super().register_hooks(default_hooks, custom_hooks)
        if not any(isinstance(hook, PlainCheckpointHook) for hook in self._hooks):
            self.register_hook(PlainCheckpointHook())

    @master_only
    def save_checkpoint(self, out_dir: str, filename: str, file_client_args: dict | None = None,
                        save_optimizer: bool = True, save_param_scheduler: bool = True, meta: dict | None = None,
                        by_epoch: bool = True, backend_args: dict | None = None) -> None:
        """As mmengine's, but a local checkpoint is written to ``.<filename>.<pid>.tmp`` in the same folder and
        renamed to ``filename`` once complete; for a periodic checkpoint (the one ``CheckpointHook`` is about to
        name in ``last_checkpoint``) ``last_checkpoint`` is then rewritten atomically too. A kill during the write
        leaves the previous checkpoints and ``last_checkpoint`` as they were. Remote folders (``s3://`` etc.) are
        written as mmengine writes them."""
        kwargs = dict(file_client_args=file_client_args, save_optimizer=save_optimizer,
                      save_param_scheduler=save_param_scheduler, meta=meta, by_epoch=by_epoch,
                      backend_args=backend_args)
        if '://' in str(out_dir) or file_client_args is not None or backend_args is not None:
            return super().save_checkpoint(out_dir, filename, **kwargs)
        final = osp.join(out_dir, filename)
        folder = osp.dirname(final)
        tmp_name = f'.{osp.basename(final)}.{os.getpid()}{_TEMP_SUFFIX}'
        try:
            super().save_checkpoint(folder, tmp_name, **kwargs)
            _replace_atomically(osp.join(folder, tmp_name), final)
        finally:
            if osp.exists(osp.join(folder, tmp_name)):
                os.remove(osp.join(folder, tmp_name))
        # CheckpointHook records the path it is saving right before calling this, then writes last_checkpoint
        # with a plain (truncating) write; writing it atomically first means a kill in that write leaves an empty
        # file at worst, which latest_complete_checkpoint() skips.
        last = self.message_hub.get_info('last_ckpt')
        if last is not None and osp.abspath(last) == osp.abspath(final):
            write_text_atomically(osp.join(self.work_dir, 'last_checkpoint'), last)

    def load_or_resume(self) -> None:
        """As mmengine's, but ``resume=True`` without ``load_from`` resumes from
        :func:`latest_complete_checkpoint` (not blindly from what ``last_checkpoint`` says); with none yet, the
        run starts from the config's ``starting_point`` (its ``load_from``, kept by ``tools/train.py --resume``)."""
        if not self._has_loaded and self._resume and self._load_from is None:
            latest = latest_complete_checkpoint(self.work_dir, self.logger)
            start = self.cfg.get('starting_point') if self.cfg is not None else None
            if latest is None and start:
                check_starting_point(start, f'{self.work_dir} holds no checkpoint to resume from')
                self.logger.info(f'No complete checkpoint in {self.work_dir} to resume from; starting from {start}.')
                self._resume, self._load_from = False, start
            elif latest is None:
                self.logger.info(f'No complete checkpoint in {self.work_dir} to resume from; training from scratch.')
                self._resume = False
            else:
                self.logger.info(f'Auto resumed from the latest complete checkpoint {latest}.')
                self._load_from = latest
        return super().load_or_resume()
