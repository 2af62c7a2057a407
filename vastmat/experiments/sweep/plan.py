"""What a sweep runs: its settings, the grid's axes, the paper's table layouts and the options every run shares."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from mmengine.config import Config

from vastmat.utils.errors import UserInputError
from vastmat.utils.options import OptionError, format_value, parse_assignment, parse_option, parse_value

TABLES = ('19', '20', '21', '22', '23')
# appendix E.2 (Table 19): alpha fixed at 0.5, only the centre-distance denominator varies
TABLE19_ALPHA = 0.5
# appendix E.3 (Tables 20 and 21, Figure 13): "as alpha increases from 0 to 1", in steps of 0.25
TABLE20_ALPHAS = (0.0, 0.25, 0.5, 0.75, 1.0)
# appendix E.4 (Table 23): nine (k, N_ref) configurations around the defaults k = 0.05, N_ref = 10 (the paper does
# not print the grid's values; these halve and double k and move N_ref by 5)
TABLE23_K = (0.025, 0.05, 0.1)
TABLE23_NREF = (5, 10, 15)
# Table 22's "on" setting when --post-processors is not given (the paper's is AFLink)
DEFAULT_POST_PROCESSORS = [dict(type='InterpolateTracks')]
# how long rank 0 waits at the torchrun barrier for the other ranks' runs (a whole sweep's worth: a day)
DIST_TIMEOUT_S = 24 * 3600


@dataclass
class SweepSettings:
    """A sweep as the command line gives it (``tools/analysis/sweep.py``'s flags, option texts unparsed)."""

    config: str
    det_root: str
    data_root: str
    work_dir: str
    matcher: str | None = None  # NAME[,key=value...] of configs/matchers/ (vastmat.apis.swap_matcher)
    split: str | None = None
    videos: list[str] | None = None
    grid: list[str] = field(default_factory=list)
    table: str | None = None
    base_options: list[str] = field(default_factory=list)
    post_processors: str | None = None
    workers: int = 1
    launcher: str = 'local'
    preset: str = 'vastmat'
    dist_timeout: float = DIST_TIMEOUT_S


class Axis(NamedTuple):
    """One varied setting: a config key, its values and how the table shows them."""

    key: str
    values: list
    name: str
    labels: list[str]


class Plan(NamedTuple):
    """What a sweep runs: the options every run shares, the axes, and the flag that gave each key."""

    fixed: list[tuple[str, Any]]
    axes: list[Axis]
    caption: str
    flags: dict[str, str]


def grid_axes(texts: list[str]) -> list[Axis]:
    """``--grid`` arguments as axes (a column named by the key's last part, the whole key when ambiguous)."""
    pairs = [parse_assignment(text, '--grid') for text in texts]
    keys = [key for key, _ in pairs]
    short = [key.rsplit('.', 1)[-1] for key in keys]
    axes = []
    for (key, values), name in zip(pairs, short):
        if keys.count(key) > 1:
            raise UserInputError(f'--grid {key}: given twice')
        axes.append(Axis(key, values, name if short.count(name) == 1 else key, [format_value(v) for v in values]))
    return axes


def option_pairs(texts: list[str], flag: str) -> list[tuple[str, Any]]:
    """``KEY=VALUE`` texts as (key, value) pairs in order (``KEY=V1,V2``: a list, as ``--cfg-options``)."""
    return [parse_option(text, flag) for text in texts]


def post_processors(text: str | None) -> list:
    """``--post-processors``: a list of ``dict(type=...)`` (one dict alone is a list of one); None: the default."""
    if text is None:
        return copy.deepcopy(DEFAULT_POST_PROCESSORS)
    try:
        value = parse_value(text)
    except OptionError as exc:
        raise OptionError(f'--post-processors: {exc}') from None
    value = [value] if isinstance(value, dict) else value
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, dict) and 'type' in v for v in value):
        raise UserInputError(f'--post-processors {value!r}: expected a list of dict(type=...)')
    return list(value)


def table_preset(table: str, post_processors: list) -> tuple[list[tuple[str, Any]], list[Axis], str]:
    """The fixed options, the axes and a caption of one of the paper's appendix layouts."""
    from vastmat.apis import matcher_fragment
    from vastmat.models.association.matchers import CENTER_DENOMINATORS
    fixed, adaptive = matcher_fragment('cda_fixed'), matcher_fragment('cda_adaptive')
    key = 'model.tracker.matcher'
    if table == '19':
        return ([(key, matcher_fragment('cda_fixed', alpha=TABLE19_ALPHA))],
                [Axis(f'{key}.center_denominator', list(CENTER_DENOMINATORS), 'denominator',
                      list(CENTER_DENOMINATORS))],
                f'Table 19 layout: CDA fixed, alpha {TABLE19_ALPHA:g}, centre-distance denominator')
    if table in ('20', '21'):
        return ([(key, fixed)], [Axis(f'{key}.alpha', list(TABLE20_ALPHAS), 'alpha',
                                      [format_value(a) for a in TABLE20_ALPHAS])],
                f'Table {table} layout: CDA fixed, fusion weight alpha')
    if table == '22':
        post_label = 'on (' + ', '.join(p.get('type', '?') for p in post_processors) + ')'
        return ([], [Axis(key, [fixed, adaptive], 'CDA', ['fixed', 'adaptive']),
                     Axis('model.post_processors', [[], post_processors], 'post-processing', ['off', post_label])],
                'Table 22 layout: CDA fixed / adaptive, post-processing off / on')
    if table == '23':
        return ([(key, adaptive)], [Axis(f'{key}.k', list(TABLE23_K), 'k', [format_value(k) for k in TABLE23_K]),
                                    Axis(f'{key}.n_ref', list(TABLE23_NREF), 'N_ref',
                                         [format_value(n) for n in TABLE23_NREF])],
                'Table 23 layout: adaptive CDA, slope k x reference count N_ref')
    raise UserInputError(f'--table {table}: one of {", ".join(TABLES)}')


def matcher_option(config: str, text: str) -> tuple[str, dict]:
    """``--matcher NAME[,key=value...]`` as the one option it amounts to: ``model.tracker.matcher`` set to the whole
    matcher :func:`vastmat.apis.swap_matcher` puts into ``config``'s tracker (so it enters every run's id)."""
    from vastmat.apis import swap_matcher
    swapped = swap_matcher(Config.fromfile(config), text)
    return 'model.tracker.matcher', swapped.model.tracker.matcher.to_dict()


def make_plan(settings: SweepSettings) -> Plan:
    """``--matcher`` (if any), the table preset (if any), then ``--base-options``, then the ``--grid`` axes."""
    fixed: list[tuple[str, Any]] = []
    axes: list[Axis] = []
    caption = ''
    table_flag = f'--table {settings.table}'
    if settings.table:
        if not isinstance(Config.fromfile(settings.config).model.get('tracker', {}).get('matcher'), dict):
            raise UserInputError(f'{table_flag}: {settings.config} has no model.tracker.matcher to set')
        fixed, axes, caption = table_preset(settings.table, post_processors(settings.post_processors))
    flags = {key: table_flag for key, _ in fixed} | {axis.key: table_flag for axis in axes}
    if settings.matcher:
        if settings.table:
            raise UserInputError(f'--matcher {settings.matcher}: {table_flag} sets the matcher itself')
        matcher = matcher_option(settings.config, settings.matcher)
        fixed = [matcher] + fixed
        flags[matcher[0]] = '--matcher'
    given = option_pairs(settings.base_options, '--base-options')
    grid = grid_axes(settings.grid)
    flags |= {key: '--base-options' for key, _ in given} | {axis.key: '--grid' for axis in grid}
    axes = axes + grid
    keys = [axis.key for axis in axes]
    names = [axis.name for axis in axes]
    if len(set(keys)) != len(keys) or len(set(names)) != len(names):
        raise UserInputError(f'an axis is given twice ({", ".join(keys)}): a --table preset already varies its keys')
    return Plan(fixed + given, axes, caption, flags)


def resolve_options(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Options given in order as one canonical, sorted dict: a key set under an earlier dict value is folded into
    it, a key set again replaces what was set under it (so equal settings give equal options, hence one run id)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        value = copy.deepcopy(value)
        parent = next((p for p in out if key.startswith(p + '.') and isinstance(out[p], dict)), None)
        if parent is not None and _set_nested(out[parent], key[len(parent) + 1:].split('.'), value):
            continue
        for below in [p for p in out if p.startswith(key + '.')]:
            del out[below]
        out[key] = value
    return dict(sorted(out.items()))


def _set_nested(node: dict, parts: list[str], value: Any) -> bool:
    for part in parts[:-1]:
        if not isinstance(node.get(part), dict):
            return False
        node = node[part]
    node[parts[-1]] = value
    return True
