"""Search spaces of the tuner: what a tracker declares beside its defaults (``search_spaces`` on its class, see
:class:`~vastmat.models.trackers.base_tracker.BaseTracker`) and how an Optuna trial samples one.

A space maps a ``model.tracker`` key to ``('float', low, high)``, ``('float', low, high, 'log')``, ``('int', low,
high)`` or ``('categorical', [choices])``; the key ``matcher`` maps each ``configs/matchers/`` name to the space of
that matcher's own keys (``{}``: none), so the matcher is one axis and its parameters exist only where it is chosen.
Optuna names them ``matcher.<name>.<key>`` (each matcher's parameters are distributions of their own).

The space ``linking`` searches the global linker's settings, the tracker kept as the config has it (a tuned preset,
say); ``default+linking`` searches the tracker's and the linker's together. The linker's space is
``GlobalLinker.search_space``, its keys named ``linker.<key>``, set on the config's ``GlobalLinker`` post-processor
(added at the end of ``model.post_processors`` where it has none).
"""
from __future__ import annotations

from typing import Any

from mmengine.config import Config

from vastmat.utils.errors import UserInputError
from vastmat.utils.options import format_value

KINDS = ('float', 'int', 'categorical')
MATCHER = 'matcher'
LINKING = 'linking'  # the space of the GlobalLinker's settings
LINKER = 'linker'


def tracker_class(config: str) -> type:
    """The registered class of ``config``'s ``model.tracker``."""
    from vastmat.registry import MODELS
    tracker = Config.fromfile(config).get('model', {}).get('tracker')
    if not tracker or not tracker.get('type'):
        raise UserInputError(f'{config}: no model.tracker to tune')
    cls = MODELS.get(tracker['type'])
    if cls is None:
        raise UserInputError(f'{config}: model.tracker.type={tracker["type"]!r} is not a registered tracker')
    return cls


def search_space(config: str, name: str = 'default') -> dict[str, Any]:
    """The space ``name`` that ``config``'s tracker class declares (checked), or the linker's (``linking``); spaces
    joined by ``+`` (``default+linking``) are searched together."""
    if '+' in name:
        return {key: spec for part in name.split('+') for key, spec in search_space(config, part).items()}
    if name == LINKING:
        from vastmat.models.post import GlobalLinker
        tracker_class(config)  # the config must track
        space = {f'{LINKER}.{key}': spec for key, spec in GlobalLinker.search_space.items()}
        check_space(space, 'GlobalLinker.search_space')
        return space
    cls = tracker_class(config)
    spaces = getattr(cls, 'search_spaces', None) or {}
    if name not in spaces:
        listed = ', '.join([*spaces, LINKING])
        raise UserInputError(f'--space {name}: {cls.__name__} declares no such search space (its spaces: {listed})')
    space = spaces[name]
    check_space(space, f'{cls.__name__}.search_spaces[{name!r}]')
    return space


def _check_spec(spec: Any, where: str) -> None:
    if not isinstance(spec, tuple) or not spec or spec[0] not in KINDS:
        raise ValueError(f'{where}: expected (kind, ...) with kind one of {KINDS}, got {spec!r}')
    kind = spec[0]
    if kind == 'categorical':
        if len(spec) != 2 or not isinstance(spec[1], (list, tuple)) or not spec[1]:
            raise ValueError(f'{where}: expected (\'categorical\', [choices]), got {spec!r}')
        return
    if len(spec) not in (3, 4) or not spec[1] < spec[2] or (len(spec) == 4 and spec[3] != 'log'):
        raise ValueError(f'{where}: expected ({kind!r}, low, high[, \'log\']) with low < high, got {spec!r}')


def check_space(space: dict[str, Any], where: str) -> None:
    """Raise ValueError naming the entry that is not a valid space entry."""
    for key, spec in space.items():
        if key == MATCHER:
            if not isinstance(spec, dict) or not spec:
                raise ValueError(f'{where}[{MATCHER!r}]: expected {{matcher name: {{key: spec}}}}, got {spec!r}')
            for matcher, params in spec.items():
                for param, param_spec in params.items():
                    _check_spec(param_spec, f'{where}[{MATCHER!r}][{matcher!r}][{param!r}]')
        else:
            _check_spec(spec, f'{where}[{key!r}]')


def _suggest(trial: Any, name: str, spec: tuple) -> Any:
    kind = spec[0]
    if kind == 'categorical':
        return trial.suggest_categorical(name, list(spec[1]))
    log = len(spec) == 4
    if kind == 'int':
        return trial.suggest_int(name, spec[1], spec[2], log=log)
    return trial.suggest_float(name, spec[1], spec[2], log=log)


def sample(trial: Any, space: dict[str, Any]) -> dict[str, Any]:
    """A point of ``space`` drawn by an Optuna trial: ``{key: value}``, with ``matcher`` and its parameters as
    ``matcher.<name>.<key>``."""
    params = {}
    for key, spec in space.items():
        if key == MATCHER:
            matcher = trial.suggest_categorical(MATCHER, list(spec))
            params[MATCHER] = matcher
            for param, param_spec in spec[matcher].items():
                name = f'{MATCHER}.{matcher}.{param}'
                params[name] = _suggest(trial, name, param_spec)
        else:
            params[key] = _suggest(trial, key, spec)
    return params


def matcher_text(params: dict[str, Any]) -> str | None:
    """The ``--matcher NAME,key=value...`` text of a point's matcher (None: the point keeps the config's)."""
    name = params.get(MATCHER)
    if name is None:
        return None
    prefix = f'{MATCHER}.{name}.'
    keys = [f'{k[len(prefix):]}={format_value(v)}' for k, v in params.items() if k.startswith(prefix)]
    return ','.join([name] + keys)


def linked_post_processors(config: str, linker: dict[str, Any], extra: dict[str, Any] | None = None) -> list:
    """``config``'s post-processors (those ``extra``, the options of every trial, set) with its ``GlobalLinker``
    (or a new one at the end) given ``linker``'s keys."""
    from vastmat.engine.linking_options import LINKER as LINKER_TYPE, linker_index
    given = (extra or {}).get('model.post_processors')
    processors = [dict(p) for p in (given if given is not None else
                                    Config.fromfile(config).model.get('post_processors')) or []]
    index = linker_index(processors)
    if index is None:
        processors.append(dict(type=LINKER_TYPE))
        index = len(processors) - 1
    processors[index].update(linker)
    return processors


def point_options(config: str, params: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The config options of a point: ``model.tracker.<key>`` for each tracker key, ``model.tracker.matcher``
    the whole matcher :func:`vastmat.apis.swap_matcher` makes (the sweep's ``--matcher``), and
    ``model.post_processors`` with the linker's keys (``linker.<key>``) on those of ``config`` and ``extra``."""
    from vastmat.experiments.sweep import plan
    linker = {k[len(LINKER) + 1:]: v for k, v in params.items() if k.startswith(LINKER + '.')}
    options = {f'model.tracker.{k}': v for k, v in params.items()
               if k != MATCHER and not k.startswith((MATCHER + '.', LINKER + '.'))}
    if linker:
        options['model.post_processors'] = linked_post_processors(config, linker, extra)
    text = matcher_text(params)
    if text is not None:
        key, matcher = plan.matcher_option(config, text)
        options[key] = matcher
    return options
