"""``tools/test.py``'s global-linking options: ``--link [key=value,...]``, ``--num-animals N|FILE`` and
``--max-animals M|FILE`` add (or adjust) a :class:`~vastmat.models.post.GlobalLinker` at the end of the config's
``model.post_processors``; the counts of the test split's video list (its extra columns) are taken too. After the
run, :func:`linking_reports` reads what the linker did to each video."""
from __future__ import annotations

import argparse
import os.path as osp
from typing import Any

from mmengine.config import Config

from vastmat.utils.errors import UserInputError

LINKER = 'GlobalLinker'


def add_linking_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--link', nargs='?', const='', metavar='KEY=VALUE,...',
                        help='link each video\'s tracklets into identities after tracking (GlobalLinker, added to '
                        'model.post_processors), with these options, e.g. --link max_gap=40,new_identity_cost=8')
    parser.add_argument('--num-animals', metavar='N|FILE',
                        help='with the linker: at most N identities a video, animals staying in view (a number for '
                        'every video, or a table file "video,num_animals[,max_animals]")')
    parser.add_argument('--max-animals', metavar='M|FILE', help='with the linker: at most M identities a video, '
                        'animals coming and going (a number, or a table file as --num-animals)')


def _count_option(text: str, flag: str) -> Any:
    """A number, or a table file's path (its counts are read by the linker: ``animal_counts``)."""
    from vastmat.datasets.animal_counts import parse_count
    if osp.isfile(text):
        return dict(animal_counts=text)
    try:
        return parse_count(text, flag)
    except ValueError as exc:
        numeric = text.strip().lstrip('+-').replace('.', '', 1).isdigit()
        raise UserInputError(str(exc) if numeric else f'{flag} {text}: neither a number nor a file') from None


def runs_post_processors(cfg: Config) -> bool:
    """Whether the config's model class takes ``post_processors`` (TrackingByDetection and the models built on it;
    not mmdet's QDTrack)."""
    import inspect

    from vastmat.registry import MODELS
    model_class = MODELS.get(cfg.model.get('type')) if cfg.model.get('type') else None
    return model_class is not None and 'post_processors' in inspect.signature(model_class.__init__).parameters


def linker_index(post_processors: list | None) -> int | None:
    """Where the (last) ``GlobalLinker`` config stands in a ``post_processors`` list; None where there is none."""
    found = [i for i, p in enumerate(post_processors or []) if isinstance(p, dict) and p.get('type') == LINKER]
    return found[-1] if found else None


def test_videos(cfg: Config) -> list[str] | None:
    """The videos the test set holds (None where its dataset names no data root)."""
    from vastmat.datasets.sequences import select_videos
    dataset = cfg.test_dataloader.dataset
    if not dataset.get('data_root'):
        return None
    return select_videos(dataset.data_root, dataset.get('protocol'), dataset.get('split'))


def split_counts(cfg: Config) -> dict:
    """The animal counts of the test split's video list (``{video: AnimalCount}``; empty without a split)."""
    from vastmat.datasets.sequences import split_animal_counts
    dataset = cfg.test_dataloader.dataset
    if not dataset.get('data_root') or not dataset.get('split') or not dataset.get('protocol'):
        return {}
    return split_animal_counts(dataset.data_root, dataset.protocol, dataset.split)


def apply_linking_options(cfg: Config, args: argparse.Namespace) -> None:
    """Add or adjust the config's linker from ``--link``, ``--num-animals`` and ``--max-animals``
    (:func:`configure_linker`, with the test set's videos and its split's counts)."""
    wanted = any(getattr(args, name, None) is not None for name in ('link', 'num_animals', 'max_animals'))
    if wanted and not runs_post_processors(cfg):
        raise UserInputError(f"--link: model.type={cfg.model.get('type')!r} runs no post-processors; link its "
                             'results folder instead: python tools/analysis/link_results.py RESULTS_DIR OUT_DIR')
    if wanted and linker_index(cfg.model.get('post_processors')) is None:
        cfg.model.post_processors = [*(cfg.model.get('post_processors') or []), dict(type=LINKER)]
    index = linker_index(cfg.model.get('post_processors'))
    if index is not None:
        configure_linker(cfg.model.post_processors[index], args, test_videos(cfg), split_counts(cfg))


def configure_linker(linker: dict, args: argparse.Namespace, videos: list[str] | None, from_split: dict) -> dict:
    """Set a ``GlobalLinker`` config (in place; returned) from ``--link``, ``--num-animals`` and ``--max-animals``;
    it also takes the counts of a split's video list (``from_split``: ``{video: AnimalCount}``) where the options
    give none. Counts that name a video not among ``videos`` are an error (None: not checked)."""
    from vastmat.datasets.animal_counts import check_videos, read_animal_counts
    if getattr(args, 'link', None):
        from vastmat.utils.options import parse_keyword_options
        linker.update(parse_keyword_options(args.link, '--link'))
    for name in ('num_animals', 'max_animals'):
        text = getattr(args, name, None)
        if text is not None:
            value = _count_option(text, f'--{name.replace("_", "-")}')
            if isinstance(value, dict):
                linker.update(value)
            else:
                linker[name] = value
    for name in ('num_animals', 'max_animals'):  # the video list's counts, where no option gave that count
        per_video = {video: getattr(count, name) for video, count in from_split.items()
                     if getattr(count, name) is not None}
        if per_video and linker.get(name) is None:
            linker[name] = per_video
    if videos is not None:
        for name in ('num_animals', 'max_animals'):
            if isinstance(linker.get(name), dict):
                check_videos(linker[name], videos, f'{LINKER} {name}')
        if linker.get('animal_counts'):
            check_videos(read_animal_counts(linker['animal_counts']), videos, linker['animal_counts'])
    return linker


def linking_reports(model: Any) -> list[dict]:
    """What each ``GlobalLinker`` of a model did to the videos it linked (one dict a video, in order)."""
    from dataclasses import asdict
    model = getattr(model, 'module', model)  # a distributed wrapper
    out = []
    for processor in getattr(model, 'post_processors', []) or []:
        for report in getattr(processor, 'reports', {}).values():
            out.append(asdict(report))
    return out


def save_linking_reports(reports: list[dict], work_dir: str) -> str:
    """Print the linker's per-video table (identities against the counts, what a count forced out) and write it
    to ``work_dir/linking.json``; returns the path."""
    from rich.console import Console
    from rich.table import Table

    from vastmat.utils.io import write_json_atomic
    table = Table(title='global linking: identities per video')
    for header in ('video', 'tracklets', 'identities', 'num_animals', 'max_animals', 'estimated', 'forced out',
                   'forced-out dets'):
        table.add_column(header, justify='left' if header == 'video' else 'right')
    for r in reports:
        table.add_row(r['video'], str(r['tracklets']), str(r['identities']),
                      *('-' if r[k] is None else str(r[k]) for k in ('num_animals', 'max_animals')),
                      str(r['estimated_num_animals']), str(r['forced_out_tracklets']), str(r['forced_out_detections']))
    Console().print(table)
    path = osp.join(work_dir, 'linking.json')
    write_json_atomic(reports, path)
    return path
