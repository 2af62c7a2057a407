"""SLEAP label files (``.slp``) read through ``sleap-io``: a box around each instance's visible keypoints, its track
as the identity."""
from __future__ import annotations

import os.path as osp

import numpy as np

from vastmat.utils.errors import UserInputError

from .labelled_boxes import LabelledBoxes, boxes_from_points, same_video

#: which instances of a frame become boxes: the user's (proofread) ones, the predicted ones, or the user's plus the
#: predictions no user instance replaced (SLEAP's own reading of a frame: ``LabeledFrame.unused_predictions``)
INSTANCE_KINDS = ('all', 'user', 'predicted')


def _video_path(video) -> str:
    """The path of a sleap-io ``Video``: its file, or the folder of an image sequence (a list of files)."""
    return video.filename if isinstance(video.filename, str) else osp.dirname(video.filename[0])


def _pick_video(labels, path: str, video: str | None):
    """The video of ``labels`` that ``video`` (a path) names, matched by file name or stem (:func:`same_video`): the
    labels may name it by another folder (SLEAP stores the path where the labels were made)."""
    names = [osp.basename(_video_path(v)) for v in labels.videos]
    if not names:
        raise UserInputError(f'{path}: the file names no video')
    if video is None:
        if len(names) > 1:
            raise UserInputError(f'{path}: labels {len(names)} videos ({", ".join(names)}); choose one with --video')
        return labels.videos[0]
    matches = [v for v, n in zip(labels.videos, names) if same_video(n, video)]
    if not matches:
        raise UserInputError(f'{path}: labels {" and ".join(names)}, not {osp.basename(osp.normpath(video))} (are '
                             'these the video\'s labels?)')
    return matches[0]


def _instances(frame, kind: str) -> list:
    if kind == 'user':
        return list(frame.user_instances)
    if kind == 'predicted':
        return list(frame.predicted_instances)
    return list(frame.user_instances) + list(frame.unused_predictions)


def read_sleap(path: str, video: str | None = None, instances: str = 'all', tracks: bool = True) -> LabelledBoxes:
    """The boxes of a SLEAP ``.slp`` file for ``video`` (its only video when None).

    Args:
        path: the ``.slp`` file.
        video: the video (or frame folder) the labels belong to; must have the file name the labels name.
        instances: one of :data:`INSTANCE_KINDS`.
        tracks: True: each instance's SLEAP track is its identity, and an instance without a track is an error;
            False: every instance is an identity of its own (boxes for a detector, no identities).
    """
    import sleap_io as sio
    if instances not in INSTANCE_KINDS:
        raise UserInputError(f'--instances {instances!r}: choose one of {", ".join(INSTANCE_KINDS)}')
    if not osp.isfile(path):
        raise FileNotFoundError(f'{path}: no such SLEAP file')
    try:
        labels = sio.load_slp(path, open_videos=False)
    except Exception as exc:  # sleap-io raises h5py's and its own errors: the file is not a readable .slp
        raise UserInputError(f'{path}: not a readable SLEAP file ({type(exc).__name__}: {exc})') from None
    chosen = _pick_video(labels, path, video)
    frames, points, track_of = [], [], []
    for frame in labels.labeled_frames:
        if frame.video is not chosen:
            continue
        for instance in _instances(frame, instances):
            frames.append(frame.frame_idx)
            points.append(instance.numpy())
            track_of.append(instance.track)
    if not frames:
        available = {k: sum(len(_instances(f, k)) for f in labels.labeled_frames if f.video is chosen)
                     for k in ('user', 'predicted')}
        raise UserInputError(f'{path}: no {instances} instances (the file has {available["user"]} user and '
                             f'{available["predicted"]} predicted ones; --instances chooses)')
    boxes, visibility, usable = boxes_from_points(np.stack(points))
    skipped = {'instances with fewer than two visible keypoints': int((~usable).sum())}
    keep = np.flatnonzero(usable)
    if tracks:
        untracked = [i for i in keep if track_of[i] is None]
        if untracked:
            raise UserInputError(f'{path}: {len(untracked)} of {len(keep)} instances have no track (the first in '
                                 f'video frame {frames[untracked[0]] + 1}); track them in SLEAP, or import boxes without '
                                 'identities (--no-tracks)')
        used = {id(t): t for t in (track_of[i] for i in keep)}
        ordered = [t for t in labels.tracks if id(t) in used]  # the file's track order
        number = {id(t): k + 1 for k, t in enumerate(ordered)}
        ids = np.asarray([number[id(track_of[i])] for i in keep])
        names = [t.name for t in ordered]
    else:
        ids = np.arange(1, len(keep) + 1)
        names = [f'instance {k}' for k in ids]
    return LabelledBoxes(path, _video_path(chosen),
                         np.asarray(frames)[keep], ids, boxes[keep], visibility[keep], names, skipped)
