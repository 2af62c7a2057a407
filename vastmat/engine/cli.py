"""What ``tools/train.py`` and ``tools/test.py`` share: flags, config loading (``--cfg-options`` checked by
:mod:`.config_options`, tracking options in :mod:`.tracking_options`), printing metrics and the command-line error
handling. Building the runner is :mod:`.runner_builder`'s."""
from __future__ import annotations

import argparse
import os
import os.path as osp
from typing import Any

from mmengine.config import Config

from vastmat.engine.config_options import CfgOptionsAction, ConfigKeyError, apply_cfg_options
from vastmat.utils.errors import UserInputError
from vastmat.utils.io import write_json_atomic  # noqa: F401  (re-exported for the tools)

LAUNCHERS = ('none', 'pytorch', 'slurm', 'mpi')


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


def finish_parsing(args: argparse.Namespace) -> argparse.Namespace:
    if 'LOCAL_RANK' not in os.environ:
        os.environ['LOCAL_RANK'] = str(args.local_rank)
    return args


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
    """Silence :data:`KNOWN_WARNINGS` and mmengine's known deprecation log lines in this process.

    The log lines need ``MMLogger.__init__`` patched: each runner makes a new ``MMLogger`` (keyed by its experiment
    name) with its own handlers, and a logger's filters see only the records logged on it (not those of other
    loggers), while mmengine offers no hook for a new logger: so the filter is added to every ``MMLogger`` as it is
    made, and to those made already. The patch is made once per process (the flag
    ``MMLogger._vastmat_filtered``) and only here, at the command-line entry points, as the warning filters are."""
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
