"""Config options checked against the components they set: a value against the constructor's annotation (or its
default's kind) where the config holds None or nothing to compare with, and the components an option touched built
once before the run, their construction errors reported as :class:`UserInputError` naming the option.

Shared by ``--cfg-options`` (:func:`vastmat.engine.config_options.apply_cfg_options`) and the sweep's ``--grid`` /
``--base-options`` (:func:`vastmat.experiments.sweep.runs.check_runs`).
"""
from __future__ import annotations

import collections.abc
import copy
import functools
import inspect
import math
import types
import typing
from typing import Any, Callable, TypeVar

from vastmat.utils.errors import UserInputError
from vastmat.utils.options import OptionError, format_value

T = TypeVar('T')

# what a component's constructor raises on an argument it refuses
CONSTRUCTION_ERRORS = (TypeError, ValueError, KeyError, AssertionError, IndexError)
# registries whose components are cheap and need nothing but their arguments (no data, no runner, no optimizer);
# MODELS components only when no MODELS component is nested in them (a tracker, a loss: not a detector or a backbone)
_CHEAP = ('MATCHERS', 'METRICS', 'EVALUATOR', 'TASK_UTILS', 'MODELS')
_SEQUENCES = (list, tuple, collections.abc.Sequence, collections.abc.MutableSequence, typing.Sequence)


def construction_message(exc: BaseException) -> str:
    """The first line of a construction error (a KeyError's message without its quotes)."""
    text = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
    return (text.splitlines() or [type(exc).__name__])[0]


def build_checked(what: str, build: Callable[[], T]) -> T:
    """``build()``, its construction error (:data:`CONSTRUCTION_ERRORS`) raised as a :class:`UserInputError`
    ``<what> does not build: <message>``."""
    try:
        return build()
    except CONSTRUCTION_ERRORS as exc:
        raise UserInputError(f'{what} does not build: {construction_message(exc)}') from exc


@functools.lru_cache(maxsize=None)
def _registered(type_name: str) -> tuple[str, type] | None:
    from vastmat.registry import ALL_REGISTRIES
    found: dict[type, str] = {}
    for name, registry in ALL_REGISTRIES.items():
        try:
            cls = registry.get(type_name)
        except (KeyError, ImportError):  # a scope prefix of a package that is not installed
            cls = None
        if isinstance(cls, type):
            found.setdefault(cls, name)
    if len(found) != 1:
        return None
    (cls, registry_name), = found.items()
    return registry_name, cls


def component_class(type_name: Any) -> tuple[str, type] | None:
    """The registry name and class of a config's ``type``, when exactly one class of the VastMAT registries (and
    their mmdet / mmengine parents) has that name; None for a class object, an unknown or an ambiguous name."""
    return _registered(type_name) if isinstance(type_name, str) else None


def _parameters(cls: type) -> dict[str, inspect.Parameter]:
    try:
        return dict(inspect.signature(cls.__init__).parameters)
    except (TypeError, ValueError):
        return {}


def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls.__init__)
    except Exception:  # a forward reference or a name imported only for type checkers: no annotations then
        return {}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def matches(value: Any, annotation: Any) -> bool:
    """Whether a config value can be given for a parameter annotated ``annotation``. Only the built-in kinds are
    checked (None, bool, numbers, str, lists and tuples, dicts, unions and literals of them); a number is int or
    float alike; a list of dicts passes for a dict (mmengine's "one or several"); anything passes for other
    annotations (a class: its config, a dict)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is None or annotation is type(None):
        return value is None
    if origin in (typing.Union, types.UnionType):
        return any(matches(value, a) for a in args)
    if origin is typing.Literal:
        return value in args
    if annotation is bool:
        return isinstance(value, bool)
    if annotation in (int, float):
        return _number(value)
    if annotation is str:
        return isinstance(value, str)
    if annotation in _SEQUENCES or origin in _SEQUENCES:
        if not isinstance(value, (list, tuple)):
            return False
        if origin is tuple and args and args[-1] is not Ellipsis:
            return len(args) != len(value) or all(matches(v, a) for v, a in zip(value, args))
        return not args or all(matches(v, args[0]) for v in value)
    if annotation is dict or origin in (dict, collections.abc.Mapping):  # or several, as mmengine often takes them
        return isinstance(value, dict) or isinstance(value, (list, tuple)) and all(isinstance(v, dict) for v in value)
    return True


def _expected(cls: type, name: str) -> tuple[Any, str] | None:
    """What parameter ``name`` of ``cls`` takes: its annotation, else its default's kind; None when unknown."""
    param = _parameters(cls).get(name)
    if param is None or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
        return None
    hint = _hints(cls).get(name)
    if hint is not None:  # a default of None passes (``backend_args: dict = None``)
        hint = typing.Optional[hint] if param.default is None and not matches(None, hint) else hint
        return hint, inspect.formatannotation(hint)
    default = param.default  # without an annotation: its kind, or None
    for kind, label in ((bool, 'True, False'), (float, 'a number'), (str, 'a string')):
        if kind is bool and isinstance(default, bool) or kind is not bool and matches(default, kind):
            return kind | None, f'{label} or None (default {default!r})'
    return None


def check_argument(where: str, component: Any, name: str, value: Any) -> None:
    """``value`` for argument ``name`` of the component config ``component`` (a dict with ``type``) against its
    constructor's annotation or default; raises :class:`OptionError` naming ``where`` (``FLAG KEY``)."""
    resolved = component_class(component.get('type')) if isinstance(component, dict) else None
    expected = _expected(resolved[1], name) if resolved else None
    if expected and not matches(value, expected[0]):
        raise OptionError(f'{where}={format_value(value)}: {resolved[1].__name__}({name}) takes {expected[1]}, got '
                          f'{type(value).__name__} {value!r}')


def check_component_value(where: str, value: Any, old: Any = None) -> None:
    """Every argument of a component config given as a value (nested ones too) against its constructor, but those
    that the config's ``old`` component of the same type holds (not None): the config's own kind rules there."""
    items = value if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if isinstance(item, dict) and 'type' in item:
            same = old if isinstance(old, dict) and old.get('type') == item['type'] else {}
            for name, arg in item.items():
                if name != 'type' and same.get(name) is None:
                    check_argument(f'{where}.{name}', item, name, arg)
                    check_component_value(f'{where}.{name}', arg)


def _nests_models(cfg: Any) -> bool:
    """Whether a MODELS component (a detector part, a network) is nested in ``cfg``."""
    children = cfg.values() if isinstance(cfg, dict) else cfg if isinstance(cfg, (list, tuple)) else ()
    for child in children:
        if isinstance(child, dict) and (component_class(child.get('type')) or ('', None))[0] == 'MODELS':
            return True
        if _nests_models(child):
            return True
    return False


def _cheap_class(cfg: Any) -> type | None:
    """The class of a component config that :func:`check_components` builds: one of a :data:`_CHEAP` registry
    (a MODELS one without nested MODELS components) whose config gives every required argument (not a layer config
    such as ``norm_cfg=dict(type='BN')``, completed by the code that builds it); None for others."""
    resolved = component_class(cfg.get('type')) if isinstance(cfg, dict) else None
    if not resolved or resolved[0] not in _CHEAP or resolved[0] == 'MODELS' and _nests_models(
            {k: v for k, v in cfg.items() if k != 'type'}):
        return None
    required = [name for name, p in list(_parameters(resolved[1]).items())[1:]
                if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    return resolved[1] if all(name in cfg for name in required) else None


def _touched(cfg: dict, key: str) -> list[tuple[str, dict, type]]:
    """The components to build for an option at ``key``: the outermost cheap one on its path, else those inside its
    value; each as (its dotted path, its config, its class)."""
    node: Any = cfg
    path: list[str] = []
    for part in key.split('.'):
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, (list, tuple)) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return []
        path.append(part)
        cls = _cheap_class(node)
        if cls is not None:
            return [('.'.join(path), node, cls)]
    if not isinstance(node, (list, tuple)):
        return []
    return [(f'{key}.{i}', item, cls) for i, item in enumerate(node) if (cls := _cheap_class(item)) is not None]


def check_components(cfg: Any, options: dict[str, Any] | None, flags: dict[str, str] | None = None) -> None:
    """Build once each cheap component that ``options`` (already applied to ``cfg``) touched: a tracker, a matcher,
    a metric, a post-processor; not a dataset, a transform or a model with a detector (the runner builds those, and
    an annotation check covers their arguments). A construction error becomes a :class:`UserInputError` naming the
    options and the component."""
    if not options:
        return
    plain = cfg.to_dict() if hasattr(cfg, 'to_dict') else cfg
    by_component: dict[str, tuple[dict, type, list[str]]] = {}
    for key, value in options.items():
        label = f'{(flags or {}).get(key, "--cfg-options")} {key}={format_value(value)}'
        for path, component, cls in _touched(plain, key):
            by_component.setdefault(path, (component, cls, []))[2].append(label)
    from mmengine.registry import DefaultScope
    with DefaultScope.overwrite_default_scope(plain.get('default_scope')):  # where the runner builds them
        for path, (component, cls, labels) in by_component.items():
            args = {k: copy.deepcopy(v) for k, v in component.items() if k != 'type'}
            build_checked(f"{', '.join(labels)}: {path} ({cls.__name__})", lambda: cls(**args))
