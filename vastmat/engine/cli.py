"""What ``tools/train.py`` and ``tools/test.py`` share: flags, config loading and checking, building the runner."""
from __future__ import annotations

import argparse
import copy
import difflib
import inspect
import math
import os
import os.path as osp
from typing import Any

from mmengine.config import Config
from mmengine.runner import Runner

from vastmat.engine.config_check import check_argument, check_component_value, check_components
from vastmat.utils.errors import UserInputError
from vastmat.utils.io import write_json_atomic  # noqa: F401  (re-exported for the tools)
from vastmat.utils.options import OptionError, format_value, parse_option

LAUNCHERS = ('none', 'pytorch', 'slurm', 'mpi')

# Top-level keys the runner reads besides the arguments of Runner.__init__.
_EXTRA_RUNNER_KEYS = {'runner_type', 'model_wrapper_cfg', 'find_unused_parameters', 'sync_bn', 'compile',
                      'default_scope', 'custom_imports', 'gpu_ids', 'launcher', 'work_dir', 'load_from', 'resume'}


class ConfigKeyError(KeyError):
    """A config key given on the command line does not exist where it was put."""

    def __str__(self) -> str:  # KeyError would print the message with quotes
        return str(self.args[0])


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags shared by train and test, as in MMDetection 3.3."""
    parser.add_argument('config', help='config file path')
    parser.add_argument('--work-dir', help='directory for logs, checkpoints and results '
                        '(default: ./work_dirs/<config name>)')
    parser.add_argument(
        '--cfg-options', nargs='+', action=CfgOptionsAction, metavar='KEY=VALUE',
        help='override settings of the config, e.g. model.tracker.match_thresh=0.8 or '
        '"model.tracker.matcher=dict(type=\'CDA\', alpha=0.25)" (a dict replaces the whole entry); values are Python '
        'literals, a bare word is a string; a list is key="[a,b]" or key=a,b, nested tuples key="[(a,b),(c,d)]". '
        'A key that does not exist in the config is an error, except the arguments of a component (a dict with '
        'type=...), which its constructor checks; a number or a bool in the config takes a number (or None) or a '
        'bool, a None what the constructor\'s annotation allows; the cheap components an option changes (tracker, '
        'matcher, metric) are built before the run.')
    parser.add_argument('--launcher', choices=LAUNCHERS, default='none', help='job launcher')
    # torch >= 2.0's launchers pass --local-rank; older code used --local_rank.
    parser.add_argument('--local_rank', '--local-rank', type=int, default=0, help=argparse.SUPPRESS)


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


def finish_parsing(args: argparse.Namespace) -> argparse.Namespace:
    if 'LOCAL_RANK' not in os.environ:
        os.environ['LOCAL_RANK'] = str(args.local_rank)
    return args


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


def load_config(args: argparse.Namespace) -> Config:
    """Read the config, apply ``--cfg-options`` (checked), the launcher and the work dir, and let plugins adjust it."""
    from vastmat.plugins import adjust_config

    cfg = apply_cfg_options(Config.fromfile(args.config), args.cfg_options)
    cfg.launcher = args.launcher
    # work_dir priority: CLI > config > ./work_dirs/<config name> (as mmdet)
    if args.work_dir is not None:
        cfg.work_dir = args.work_dir
    elif cfg.get('work_dir') is None:
        cfg.work_dir = osp.join('./work_dirs', osp.splitext(osp.basename(args.config))[0])
    return adjust_config(cfg)


def enable_amp(cfg: Config) -> None:
    """Automatic mixed precision training (``tools/train.py --amp``, as MMDetection's): ``AmpOptimWrapper`` with a
    dynamic loss scale around the config's optimizer."""
    cfg.optim_wrapper.type = 'AmpOptimWrapper'
    cfg.optim_wrapper.loss_scale = 'dynamic'


def _evaluators(cfg_evaluator: Any) -> list:
    if cfg_evaluator is None:
        return []
    if isinstance(cfg_evaluator, dict) and 'metrics' in cfg_evaluator:
        cfg_evaluator = cfg_evaluator['metrics']
    return list(cfg_evaluator) if isinstance(cfg_evaluator, (list, tuple)) else [cfg_evaluator]


# the transforms that read cached detections (a whole video at a time, or one frame)
DETECTION_LOADERS = ('LoadVideoDetections', 'LoadTrackingDetections')


def use_cached_detections(cfg: Config, det_root: str) -> None:
    """Make a detector-in-the-loop config test on cached detections as configs/_base_/tracking_cached-dets.py
    does: one whole video per item (``DefaultSampler``), its detections read once, no frame loaded, no ground truth
    packed."""
    loader = cfg.test_dataloader
    loader.dataset.pipeline = [dict(type='LoadVideoDetections', det_root=det_root),
                               dict(type='PackVideoTrackingInputs')]
    loader.dataset.with_gt = False
    loader.sampler = dict(type='DefaultSampler', shuffle=False, round_up=False)
    loader.batch_size = 1


def _detection_loaders(pipeline: list) -> list[dict]:
    """The transforms of a pipeline (nested ones included) that read cached detections."""
    return [t for t in _transforms(pipeline) if t.get('type') in DETECTION_LOADERS]


def _transforms(pipeline: list) -> list[dict]:
    """The transforms of a pipeline, those nested in ``TransformBroadcaster`` included."""
    found = []
    for transform in pipeline:
        found.append(transform)
        found += _transforms(transform.get('transforms', []))
    return found


def apply_tracking_options(cfg: Config, args: argparse.Namespace) -> None:
    """``tools/test.py``'s ``--dump-dets``, ``--det-root``, ``--extra-det-root``, ``--data-root`` and ``--workers``,
    applied to the test part of a config; tracking results go to ``WORK_DIR/results`` unless the config names another
    folder."""
    from vastmat.datasets.sequences import is_vastmat_root
    dataset = cfg.test_dataloader.dataset
    if getattr(args, 'dump_dets', None):
        # the dumper needs each frame's video and index
        from mmdet.datasets.transforms import PackDetInputs
        default_keys = inspect.signature(PackDetInputs.__init__).parameters['meta_keys'].default
        for transform in dataset.get('pipeline', []):
            if transform.get('type') == 'PackDetInputs':
                keys = tuple(transform.get('meta_keys', default_keys))
                transform['meta_keys'] = tuple(dict.fromkeys(keys + ('video_name', 'frame_id', 'source_frame')))
    if getattr(args, 'det_root', None):
        from vastmat.registry import MODELS  # a registry lookup: the model class says whether it can
        model_class = MODELS.get(cfg.model.get('type')) if cfg.model.get('type') else None
        if not getattr(model_class, 'tracks_cached_detections', False):
            raise ValueError(f"--det-root needs a tracking config whose model can track cached detections "
                             f"(model.type='TrackingByDetection', 'MOTIP'), not model.type={cfg.model.get('type')!r}")
        cfg.model.detector = None
        loaders = _detection_loaders(dataset.get('pipeline', []))
        if not loaders:  # a detector-in-the-loop config: its frames are not needed
            use_cached_detections(cfg, args.det_root)
            loaders = _detection_loaders(dataset.pipeline)
        for loader in loaders:
            loader['det_root'] = args.det_root
    extra_roots = getattr(args, 'extra_det_root', None) or []
    if extra_roots:
        loaders = _detection_loaders(dataset.get('pipeline', []))
        if not loaders:
            raise ValueError('--extra-det-root needs cached detections (--det-root or a cached-detections config)')
        for option in extra_roots:
            name, sep, root = option.partition('=')
            if not sep or not name or not root:
                raise ValueError(f'--extra-det-root {option!r}: expected NAME=DIR, e.g. nms95=dets_nms0.95/')
            for loader in loaders:
                loader['extra_det_roots'] = {**(loader.get('extra_det_roots') or {}), name: root}
    if getattr(args, 'data_root', None):
        dataset.data_root = args.data_root
        if not is_vastmat_root(args.data_root):  # a MOTChallenge split folder: all of its videos
            dataset.protocol = dataset.split = None
    for metric in _evaluators(cfg.get('test_evaluator')):
        if metric.get('type') == 'VastMATMetric':
            if not metric.get('outfile_dir'):
                metric['outfile_dir'] = cfg.work_dir
            if getattr(args, 'workers', None) is not None:
                metric['workers'] = args.workers


_RUNNERS_BUILT = [0]


def build_runner(cfg: Config) -> Runner:
    """Build the runner named by ``runner_type`` (VastMAT's configs use ``VastMATRunner``).

    A second runner in one process (tools called in-process: the matcher table, the tests) gets its own experiment
    name: mmengine keys its logger and visualizer by that name (with a timestamp in seconds), so two runs in the
    same second would otherwise log into the first run's work dir.
    """
    import vastmat.engine  # noqa: F401  (safe checkpoint loading, the runner and its hooks)
    from vastmat.registry import RUNNERS  # looked up from our registry: mmengine's root knows no default scope yet
    if _RUNNERS_BUILT[0] and cfg.get('experiment_name') is None:
        cfg.experiment_name = f'{osp.splitext(osp.basename(cfg.filename or "run"))[0]}_run{_RUNNERS_BUILT[0]}'
    _RUNNERS_BUILT[0] += 1
    if 'runner_type' not in cfg:
        return Runner.from_cfg(cfg)
    return RUNNERS.build(cfg)


def build_quiet_runner(cfg: Config) -> Runner:
    """:func:`build_runner` whose console shows only warnings and errors (no config dump, no hook list, no
    per-iteration lines): for tools that show their own progress. The log file in the work dir keeps the training
    and test lines (the config is in the work dir's dumped config file)."""
    import logging
    cfg.log_level = 'WARNING'
    runner = build_runner(cfg)
    for handler in runner.logger.handlers:
        if isinstance(handler, logging.FileHandler):
            handler.setLevel(logging.INFO)
    return runner


def print_metrics_table(metrics: dict[str, Any], title: str) -> None:
    """Print metrics as a table (rich)."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title)
    table.add_column('metric')
    table.add_column('value', justify='right')
    for name, value in metrics.items():
        table.add_row(str(name), f'{value:.4f}' if isinstance(value, float) else str(value))
    Console().print(table)



# Third-party deprecation warnings that every run would print and that the user cannot act on (mmdet 3.3 / mmengine
# 0.10 on torch 2.14). Filtered only here, at the command-line entry points, so that the library and the tests still
# see them. Each is (category, message regex, module regex).
KNOWN_WARNINGS = (
    (FutureWarning, r'`torch\.cuda\.amp\.autocast\(args\.\.\.\)` is deprecated', r''),
    (UserWarning, r'torch\.meshgrid: in an upcoming release', r''),
    (UserWarning, r'.*instance named of visualizer has been created', r'mmengine'),
    (UserWarning, r'The `local_rank` argument is deprecated', r''),
    (DeprecationWarning, r'.*', r'(mmengine|mmdet|mmcv|pkg_resources|yapf)'),
    (UserWarning, r'.*is deprecated.*', r'(mmengine|mmdet|mmcv)'),
    (UserWarning, r'Failed to search registry with scope', r'mmengine'),
    # setuptools 80 warns when mmengine's package_utils imports pkg_resources (QDTrack's mmdet tracker, the first
    # mmdet.models.trackers import); the warning names importlib's frame, not mmengine's, hence no module pattern
    (UserWarning, r'pkg_resources is deprecated as an API', r''),
)
# mmengine's own deprecation notices arrive through its logger, and its advice at each pass of an iteration-based
# loop over a video dataset (whose TrackImgSampler restarts each pass, as it should)
KNOWN_LOG_MESSAGES = ('"FileClient" will be deprecated', '"HardDiskBackend" is the alias of "LocalBackend"',
                      'Reach the end of the dataloader, it will be restarted')


# Errors that are about the user's input: the entry points print ``error: <message>`` and exit with status 2.
USER_ERRORS: tuple[type[BaseException], ...] = (UserInputError, FileNotFoundError, NotADirectoryError,
                                                ConfigKeyError)


def filter_known_warnings() -> None:
    """Silence :data:`KNOWN_WARNINGS` and mmengine's known deprecation log lines in this process."""
    import logging
    import warnings
    for category, message, module in KNOWN_WARNINGS:
        warnings.filterwarnings('ignore', message=message, category=category, module=module)

    class _DropKnown(logging.Filter):
        def filter(self, record: logging.LogRecord) -> bool:
            return not any(text in str(record.msg) for text in KNOWN_LOG_MESSAGES)

    # every MMLogger made from now on (each runner makes one) drops them, and those made already
    from mmengine.logging import MMLogger
    if not getattr(MMLogger, '_vastmat_filtered', False):
        original_init = MMLogger.__init__

        def init_with_filter(self, *args: Any, **kwargs: Any) -> None:
            original_init(self, *args, **kwargs)
            self.addFilter(_DropKnown())

        MMLogger.__init__ = init_with_filter
        MMLogger._vastmat_filtered = True
        for logger in MMLogger._instance_dict.values():
            logger.addFilter(_DropKnown())


def user_errors() -> tuple[type[BaseException], ...]:
    """:data:`USER_ERRORS` plus the data-format and tracker-input errors of the lower layers."""
    from vastmat.datasets.formats import FormatError
    from vastmat.structures.tracking import MissingTrackerInput
    return USER_ERRORS + (FormatError, MissingTrackerInput)


def _is_config_error(exc: BaseException) -> bool:
    """mmengine's build errors about the config: an unregistered type, a component without a type name, or a bad
    constructor argument."""
    import re
    text = str(exc.args[0]) if exc.args else ''
    return bool(re.search(r'is not in the .+ registry|must contain the key "type"|type must be a str or valid type',
                          text) or
                re.search(r'__init__\(\) (got an unexpected keyword argument|missing \d+ required)', text))


def run_cli(main: Any, argv: list[str] | None = None) -> Any:
    """Run a tool's ``main`` as a command: known third-party warnings filtered, and a user error (missing file or
    folder, malformed file, unknown config key, missing tracker input) ending with one line ``error: ...`` and exit
    status 2 instead of a traceback (``VASTMAT_DEBUG=1`` shows the traceback)."""
    import sys
    filter_known_warnings()
    try:
        return main(argv)
    except user_errors() as exc:
        if os.environ.get('VASTMAT_DEBUG'):
            raise
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        if isinstance(exc, OSError) and exc.filename and exc.strerror:
            message = f'{exc.filename}: {exc.strerror}'
        print(f'error: {message}', file=sys.stderr)
        sys.exit(2)
    except (TypeError, KeyError) as exc:  # a config naming an unknown type or argument, as mmengine reports it
        if os.environ.get('VASTMAT_DEBUG') or not _is_config_error(exc):
            raise
        print(f'error: {str(exc.args[0] if exc.args else exc).splitlines()[0]}', file=sys.stderr)
        sys.exit(2)
