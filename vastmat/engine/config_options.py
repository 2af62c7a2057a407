"""``--cfg-options``: read ``KEY=VALUE`` flags (:class:`CfgOptionsAction`), check each key and value against the
config (:func:`check_cfg_options`) and set them (:func:`apply_cfg_options`)."""
from __future__ import annotations

import argparse
import copy
import difflib
import inspect
import math
from typing import Any

from mmengine.config import Config
from mmengine.runner import Runner

from vastmat.engine.config_check import check_argument, check_component_value, check_components
from vastmat.utils.options import OptionError, format_value, parse_option

# Top-level keys the runner reads besides the arguments of Runner.__init__.
_EXTRA_RUNNER_KEYS = {'runner_type', 'model_wrapper_cfg', 'find_unused_parameters', 'sync_bn', 'compile',
                      'default_scope', 'custom_imports', 'gpu_ids', 'launcher', 'work_dir', 'load_from', 'resume'}


class ConfigKeyError(KeyError):
    """A config key given on the command line does not exist where it was put."""

    def __str__(self) -> str:  # KeyError would print the message with quotes
        return str(self.args[0])


class CfgOptionsAction(argparse.Action):
    """``KEY=VALUE ...`` read by :func:`vastmat.utils.options.parse_option` into a dict (a later key wins, as
    mmengine's DictAction); a malformed one raises :class:`OptionError` (one ``error:`` line under run_cli)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        options = dict(getattr(namespace, self.dest, None) or {})
        for text in values:
            key, value = parse_option(text, option_string or self.dest)
            options[key] = value
        setattr(namespace, self.dest, options)


def _known_top_level_keys() -> set[str]:
    params = inspect.signature(Runner.__init__).parameters
    return {name for name in params if name != 'self'} | _EXTRA_RUNNER_KEYS


def check_cfg_options(cfg: Config, options: dict[str, Any] | None, flags: dict[str, str] | None = None) -> None:
    """Refuse ``--cfg-options`` keys that would silently add a setting nothing reads, and values of the wrong type.

    A dotted key must exist in the config, except (a) a top-level key the runner reads (``randomness``,
    ``model_wrapper_cfg``, ...) and (b) a new argument of a component dict (one with ``type``): the component's
    constructor rejects an unknown argument when it is built, naming it. Where the config holds a number, the value
    must be a finite number or None, where a bool a bool, where a string, a list or a dict one of the same kind or None
    (:func:`_check_type`; inside a dict value too, for the keys a dict of the same ``type`` shares with it). Where the
    config holds None or nothing, and for every argument of a component given as a value, the value must fit the
    constructor's annotation or default (:func:`vastmat.engine.config_check.check_argument`).

    Args:
        flags: the command-line flag that gave each key, named in the errors (default ``--cfg-options``).

    Raises:
        ConfigKeyError: naming the key, the missing part and the nearest existing keys.
        OptionError: naming the key, the value and the type the config has there.
    """
    known_top = _known_top_level_keys()
    for key, value in (options or {}).items():
        flag = (flags or {}).get(key, '--cfg-options')
        node: Any = cfg.to_dict()
        parts = key.split('.')
        for depth, part in enumerate(parts):
            last = depth == len(parts) - 1
            if isinstance(node, (list, tuple)):
                if not (part.isdigit() and int(part) < len(node)):
                    raise ConfigKeyError(f"{flag} {key}: '{'.'.join(parts[:depth])}' is a list of "
                                         f'{len(node)} items; {part!r} is not an index of it')
                node = node[int(part)]
                continue
            if not isinstance(node, dict):
                raise ConfigKeyError(f"{flag} {key}: '{'.'.join(parts[:depth])}' is a "
                                     f'{type(node).__name__}, it has no key {part!r}')
            if last and part == 'type' and not isinstance(value, str):
                raise OptionError(f'{flag} {key}={format_value(value)}: expected the name of a registered type')
            if part in node:
                parent, node = node, node[part]
                if last:
                    _check_type(f'{flag} {key}', node, value, several=depth == 0)
                    if node is None:  # nothing to compare with: the constructor says what it takes
                        check_argument(f'{flag} {key}', parent, part, value)
                    check_component_value(f'{flag} {key}', value, node)
                continue
            if last and (depth == 0 and part in known_top or depth > 0 and 'type' in node):
                check_argument(f'{flag} {key}', node, part, value)
                check_component_value(f'{flag} {key}', value)
                break
            where = '.'.join(parts[:depth]) or 'the config'
            close = difflib.get_close_matches(part, [str(k) for k in node], n=3, cutoff=0.6)
            hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ''
            raise ConfigKeyError(f'{flag} {key}: {part!r} is not a key of {where}{hint}')


def _check_type(where: str, old: Any, new: Any, several: bool = False) -> None:
    """``new`` may replace the config's ``old``: a value of the same kind (a bool; a finite number; a string; a list
    or tuple; a dict, or with ``several`` (a top-level key: the runner takes one or several evaluators, schedulers)
    a list of dicts for a component dict), or None for anything but a bool; inside a dict of the same ``type``, the
    keys it shares with ``old`` alike."""
    if old is None:
        return
    if isinstance(old, bool):
        expected, ok = 'True or False', isinstance(new, bool)
    elif isinstance(old, (int, float)):
        expected = 'a finite number or None'
        ok = new is None or (isinstance(new, (int, float)) and not isinstance(new, bool) and math.isfinite(new))
    elif isinstance(old, str):
        expected, ok = 'a string or None', new is None or isinstance(new, str)
    elif isinstance(old, (list, tuple)):
        expected, ok = 'a list or None', new is None or isinstance(new, (list, tuple))
    elif isinstance(old, dict):
        component = several and 'type' in old  # a list of components where mmengine takes one or several
        expected = 'a dict, a list of dicts or None' if component else 'a dict or None'
        ok = new is None or isinstance(new, dict) or (
            component and isinstance(new, (list, tuple)) and all(isinstance(v, dict) for v in new))
    else:
        return
    if not ok:
        raise OptionError(f'{where}={format_value(new)}: expected {expected} (the config has {format_value(old)}), '
                          f'got {type(new).__name__} {new!r}')
    if isinstance(old, dict) and 'type' in old and isinstance(new, dict) and 'type' not in new:
        raise OptionError(f'{where}={format_value(new)}: expected dict(type=..., ...), a component (a dict value '
                          'replaces the whole entry)')
    if isinstance(old, dict) and isinstance(new, dict) and old.get('type') == new.get('type'):
        for k in old.keys() & new.keys():
            _check_type(f'{where}.{k}', old[k], new[k])


def _import_custom_modules(custom_imports: Any, flag: str) -> None:
    """Import the modules of a ``custom_imports`` option (mmengine's own import, as for a config's)."""
    from mmengine.utils import import_modules_from_strings
    if not isinstance(custom_imports, dict) or not isinstance(custom_imports.get('imports'), (str, list, tuple)):
        raise OptionError(f'{flag} custom_imports={format_value(custom_imports)}: expected '
                          "dict(imports=['module', ...], allow_failed_imports=False)")
    try:
        import_modules_from_strings(**custom_imports)
    except (ImportError, TypeError) as exc:
        raise OptionError(f'{flag} custom_imports: {type(exc).__name__}: {exc}') from None


def apply_cfg_options(cfg: Config, options: dict[str, Any] | None, flags: dict[str, str] | None = None) -> Config:
    """Set ``options`` in ``cfg`` in order, each checked first (:func:`check_cfg_options`, on the config as the
    earlier options left it); a dict value replaces the whole entry (its old keys do not leak into it). Then the cheap
    components they touched are built once (:func:`vastmat.engine.config_check.check_components`). A
    ``custom_imports`` option goes first and its modules are imported, as ``Config.fromfile`` imports a config's, so
    that the other options may name the types they register."""
    options = dict(options or {})
    if 'custom_imports' in options:
        options = {'custom_imports': options.pop('custom_imports'), **options}
    for key, value in options.items():
        check_cfg_options(cfg, {key: value}, flags)
        value = copy.deepcopy(value)
        parent_key, _, last = key.rpartition('.')
        parent: Any = cfg
        for part in parent_key.split('.') if parent_key else ():
            parent = parent[int(part)] if isinstance(parent, (list, tuple)) else parent[part]
        if isinstance(parent, (list, tuple)):  # mmengine merges only dicts into a list's items: set the list whole
            items = copy.deepcopy(list(parent))
            items[int(last)] = value
            key, value = parent_key, type(parent)(items)
        elif isinstance(value, dict) and last in parent:  # (mmengine would keep the marker where the key is new)
            value = dict(value, _delete_=True)
        cfg.merge_from_dict({key: value})
        if key == 'custom_imports':
            _import_custom_modules(cfg.custom_imports, (flags or {}).get(key, '--cfg-options'))
    check_components(cfg, options, flags)
    return cfg


def point_datasets(node: Any, data_root: str, protocol: str | None = None, every_dataset: bool = False) -> int:
    """Point every VastMATDataset of a config node (wrapped ones included, e.g. in ``MultiImageMixDataset``) at
    ``data_root`` and, when given, ``protocol``; ``every_dataset``: also every other dataset that names a
    ``data_root`` (D2MP's trajectory windows, the ReID crops, AFLink's pairs: ``tools/train.py --data-root``, the
    zoo), whose protocol changes where it names one (None: all of its videos). Returns how many were changed."""
    changed = 0
    if isinstance(node, dict):
        vastmat_dataset = node.get('type') == 'VastMATDataset'
        if vastmat_dataset or (every_dataset and 'data_root' in node):
            node['data_root'] = data_root
            if protocol is not None and (vastmat_dataset or node.get('protocol') is not None):
                node['protocol'] = protocol
            changed += 1
        for value in node.values():
            changed += point_datasets(value, data_root, protocol, every_dataset)
    elif isinstance(node, (list, tuple)):
        for value in node:
            changed += point_datasets(value, data_root, protocol, every_dataset)
    return changed
