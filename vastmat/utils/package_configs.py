"""Where VastMAT's configs are, and ``vastmat::`` config bases.

A wheel carries the repository's ``configs/`` as ``vastmat/.mim/configs`` (``setup.py`` copies them at build time,
the place MMDetection ships its own); an editable install reads the checkout's ``configs/``. :func:`config_dir` is
that folder in both cases.

A plugin's config names a shipped config as its base with the package prefix, as OpenMMLab configs name mmdet's::

    _base_ = ['vastmat::bytetrack/bytetrack_cached-dets.py']

Why mmengine 0.10.7 cannot resolve this by itself, whatever data the package ships: ``Config._get_cfg_path`` accepts
only the names of its hard-coded ``MODULE2PACKAGE`` map (an assertion), then locates the package with
``get_installed_path``, which joins the distribution's location and the name. Under a PEP 660 editable install that
location is site-packages, where no ``vastmat/`` folder exists (an import hook maps the package to the checkout), so
registering ``vastmat`` in that map and shipping ``.mim/model-index.yml`` (which mmengine also requires) would serve
wheels only, and the map would also change how mmengine's registries treat the ``vastmat`` scope.
:func:`enable_vastmat_bases` (run by ``import vastmat``) therefore wraps ``Config._get_cfg_path`` for the
``vastmat::`` prefix alone and passes every other base to mmengine unchanged. It returns the file under
:func:`config_dir` without a scope, so the merged config is the one a relative ``_base_`` path to that file gives:
mmengine would stamp a package base's typed dicts with ``_scope_``, which adds nothing here (the shipped configs set
``default_scope = 'vastmat'`` and plugins register into vastmat's registries) and which vastmat's config checks
would pass on to constructors.
"""
from __future__ import annotations

import os.path as osp

from mmengine.config import Config

PREFIX = 'vastmat::'
_PACKAGE_DIR = osp.dirname(osp.dirname(osp.abspath(__file__)))
PACKAGED_CONFIGS = osp.join(_PACKAGE_DIR, '.mim', 'configs')  # an installed wheel
CHECKOUT_CONFIGS = osp.join(osp.dirname(_PACKAGE_DIR), 'configs')  # a source checkout (editable install)


def config_dir() -> str:
    """The folder of the shipped configs: the wheel's ``vastmat/.mim/configs``, else the checkout's ``configs/``."""
    for folder in (PACKAGED_CONFIGS, CHECKOUT_CONFIGS):
        if osp.isdir(folder):
            return folder
    raise FileNotFoundError(f'vastmat configs not found: neither {PACKAGED_CONFIGS} (an installed wheel) nor '
                            f'{CHECKOUT_CONFIGS} (a source checkout) exists')


def resolve_config(name: str, named_by: str | None = None) -> str:
    """The absolute path of the shipped config ``name`` (``'vastmat::bytetrack/x.py'`` or ``'bytetrack/x.py'``).

    Raises:
        FileNotFoundError: no such config (the message names the path looked up and ``named_by``, the config
            that asked for it).
        ValueError: ``name`` is absolute or leads outside :func:`config_dir`.
    """
    relative = name[len(PREFIX):] if name.startswith(PREFIX) else name
    root = config_dir()
    path = osp.normpath(osp.join(root, relative))
    asker = f' (a base of {named_by})' if named_by else ''
    if osp.isabs(relative) or osp.commonpath([root, path]) != root:
        raise ValueError(f'vastmat config {name!r}{asker}: the path must be relative to and inside {root}')
    if not osp.isfile(path):
        raise FileNotFoundError(f'vastmat config {name!r}{asker} not found: no file {path}')
    return path


def enable_vastmat_bases() -> None:
    """Make mmengine's :class:`~mmengine.config.Config` resolve ``vastmat::`` bases through :func:`resolve_config`
    (idempotent; other bases are resolved by mmengine as before)."""
    original = Config._get_cfg_path
    if getattr(original, 'resolves_vastmat', False):
        return

    package_bases: dict[str, tuple[str, str | None]] = {}

    def _get_cfg_path(cfg_path: str, filename: str) -> tuple[str, str | None]:
        if cfg_path.startswith(PREFIX):
            return resolve_config(cfg_path, named_by=filename), None
        if '::' in cfg_path:  # another package's config: found once per process (mmengine asks pkg_resources
            # whether the package is installed at each base, 60 ms each time)
            if cfg_path not in package_bases:
                package_bases[cfg_path] = original(cfg_path, filename)
            return package_bases[cfg_path]
        return original(cfg_path, filename)

    _get_cfg_path.resolves_vastmat = True
    _get_cfg_path.original, _get_cfg_path.cache_clear = original, package_bases.clear
    Config._get_cfg_path = staticmethod(_get_cfg_path)
