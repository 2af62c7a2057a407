"""Global linking of a results folder that a tracker already wrote: any tracker's, the zoo's eight included (QDTrack
runs as mmdet's model, without post-processors), and the tools that compare linked and unlinked results."""
from __future__ import annotations

import os.path as osp
from dataclasses import asdict
from typing import Any

from .inference import read_track_rows, write_track_rows

DEFAULT_LINKER = dict(type='GlobalLinker')


def build_linker(linker: dict | Any | None = None) -> Any:
    """A :class:`~vastmat.models.post.GlobalLinker` from its config (None: the defaults), or the one given."""
    from vastmat.registry import TASK_UTILS
    if linker is None:
        linker = DEFAULT_LINKER
    return TASK_UTILS.build(dict(linker)) if isinstance(linker, dict) else linker


def link_results_folder(results_dir: str, out_dir: str, videos: list[str], linker: dict | Any | None = None,
                        seq_lengths: dict[str, int] | None = None) -> dict[str, dict]:
    """Link ``results_dir/<video>.txt`` of every video into ``out_dir/<video>.txt`` (each written atomically);
    returns ``{video: LinkReport as a dict}``. A video without a results file is an error."""
    linker = build_linker(linker)
    reports = {}
    for video in videos:
        path = osp.join(results_dir, f'{video}.txt')
        if not osp.isfile(path):
            raise FileNotFoundError(f'{path}: no results for video {video!r} to link')
        rows = read_track_rows(path, (seq_lengths or {}).get(video))
        write_track_rows(linker(rows, video_name=video), osp.join(out_dir, f'{video}.txt'))
        reports[video] = asdict(linker.reports[video])
    return reports
