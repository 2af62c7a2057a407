"""Finding and loading the videos of a VastMAT root or of a plain MOTChallenge split folder.

VastMAT root (DESIGN.md section 3)::

    <root>/videos/<Video>/{img1/, gt/gt.txt, seqinfo.ini}
    <root>/meta/categories.tsv
    <root>/splits/protocol{1,2}/{train,test,dev}.txt

MOTChallenge split folder (AnimalTrack, MOT17, ...): ``<root>/<seq>/{gt/gt.txt, seqinfo.ini, img1/}``.
"""
from __future__ import annotations

import math
import os
import os.path as osp
from dataclasses import dataclass, field, replace

import numpy as np

from .animal_counts import AnimalCount, count_from_fields, split_fields
from .formats import GroundTruth, read_gt, read_seqinfo

PROTOCOLS = ('protocol1', 'protocol2')
SPLITS = ('train', 'test', 'dev')


@dataclass
class Sequence:
    """One video: its seqinfo.ini, its ground truth (None when it has none) and where its frames are."""

    name: str
    directory: str
    info: dict
    gt: GroundTruth | None = None
    stride: int = 1
    # frame index in the (strided) sequence -> number of its image file
    image_numbers: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    # seqLength of the folder's own files (gt.txt, det.txt), before the dataset's stride
    source_length: int = 0

    @property
    def length(self) -> int:
        return int(self.info['seqLength'])

    def source_frame(self, frame: int) -> int:
        """The number in the folder's own files (gt.txt, det.txt) of (strided) frame ``frame`` (1-based)."""
        return 1 + (frame - 1) * self.stride

    def source_frames(self) -> np.ndarray:
        """:meth:`source_frame` of every (strided) frame, in order."""
        return 1 + np.arange(self.length, dtype=np.int64) * self.stride

    @property
    def image_size(self) -> tuple[int, int] | None:
        """``(height, width)`` from seqinfo.ini, or None when it gives no size."""
        if self.info.get('imHeight') and self.info.get('imWidth'):
            return int(self.info['imHeight']), int(self.info['imWidth'])
        return None

    @property
    def frame_rate(self) -> float:
        return self.info.get('frameRate', 0)

    def image_path(self, frame: int) -> str:
        """Path of the image of (strided) frame ``frame`` (1-based)."""
        source = int(self.image_numbers[frame - 1]) if len(self.image_numbers) else frame
        img_dir = self.info.get('imDir', 'img1')
        return osp.join(self.directory, img_dir, f'{source:06d}{self.info.get("imExt", ".jpg")}')


def is_vastmat_root(root: str) -> bool:
    return osp.isdir(osp.join(root, 'videos'))


def sequence_root(root: str) -> str:
    """The folder whose subfolders are the videos."""
    return osp.join(root, 'videos') if is_vastmat_root(root) else root


def list_sequences(root: str) -> list[str]:
    """All video names of a root (sorted): subfolders with a seqinfo.ini or a gt/gt.txt."""
    base = sequence_root(root)
    if not osp.isdir(base):
        raise FileNotFoundError(f'{base}: no such directory')
    names = sorted(d for d in os.listdir(base)
                   if osp.isfile(osp.join(base, d, 'seqinfo.ini')) or osp.isfile(osp.join(base, d, 'gt', 'gt.txt')))
    if not names:
        raise FileNotFoundError(f'{base}: no videos (folders with seqinfo.ini or gt/gt.txt)')
    return names


def normalise_protocol(protocol: str | int) -> str:
    text = str(protocol).lower().replace('_', '')
    for name, aliases in (('protocol1', ('1', 'p1', 'protocol1', 'seen')),
                          ('protocol2', ('2', 'p2', 'protocol2', 'unseen'))):
        if text in aliases:
            return name
    raise KeyError(f'unknown protocol {protocol!r}; use protocol1 (seen) or protocol2 (unseen)')


def held_out(split: str, other: str) -> str:
    """The split expression of ``split``'s videos less ``other``'s (``held_out('train', 'dev')`` is
    ``'train-dev'``): what :func:`read_split` and every dataset's ``split`` read, e.g. the zoo's trainings, which
    leave out the dev videos its test thresholds are chosen on."""
    return f'{split}-{other}'


def _split_lines(root: str, protocol: str | int, split: str) -> tuple[str, list[tuple[int, list[str]]]]:
    """The path of a split's video list and its lines' fields (a name, then optional animal counts); ``split`` may
    be ``A-B`` (:func:`held_out`): A's lines less those of B's videos."""
    if '-' in split:
        kept, _, left_out = split.partition('-')
        path, lines = _split_lines(root, protocol, kept)
        dropped = {fields[0] for _, fields in _split_lines(root, protocol, left_out)[1]}
        return path, [(number, fields) for number, fields in lines if fields[0] not in dropped]
    protocol = normalise_protocol(protocol)
    path = osp.join(root, 'splits', protocol, f'{split}.txt')
    if not osp.isdir(root):
        raise FileNotFoundError(f'{root}: no such VastMAT root (the config\'s data_root; prepare the data as '
                                'docs/data.md says, or point data_root at it with --cfg-options)')
    if not osp.isfile(path):
        raise FileNotFoundError(f'{path}: no such split file (splits are {", ".join(SPLITS)}, or A-B: A less B)')
    with open(path, encoding='utf-8') as f:
        return path, [(number, split_fields(line.strip())) for number, line in enumerate(f, 1) if line.strip()]


def split_animal_counts(root: str, protocol: str | int, split: str) -> dict[str, AnimalCount]:
    """The animal counts a split's video list gives in the columns after a name (``Bee-1 3`` or ``Horse-1 - 5``:
    ``num_animals``, ``max_animals``): ``{video: AnimalCount}`` for the videos that give one."""
    path, lines = _split_lines(root, protocol, split)
    counts = {fields[0]: count_from_fields(fields[1:], f'{path}:{number}') for number, fields in lines}
    return {name: count for name, count in counts.items() if count != AnimalCount()}


def read_split(root: str, protocol: str | int, split: str) -> list[str]:
    """The video names of ``<root>/splits/<protocol>/<split>.txt`` (one a line, optionally followed by its animal
    counts, :func:`split_animal_counts`), checked against the videos."""
    path, lines = _split_lines(root, protocol, split)
    names = [fields[0] for _, fields in lines]
    known = set(list_sequences(root))
    unknown = [n for n in names if n not in known]
    if unknown:
        raise KeyError(f'{path}: {len(unknown)} video(s) not under {sequence_root(root)}: {unknown[:5]}')
    if len(set(names)) != len(names):
        raise ValueError(f'{path}: a video is listed twice')
    return names


def select_videos(root: str, protocol: str | int | None = None, split: str | None = None) -> list[str]:
    """The videos of a split (VastMAT root with ``protocol`` and ``split``) or all videos of the root."""
    if split is None:
        return list_sequences(root)
    if protocol is None:
        if not is_vastmat_root(root):
            raise ValueError(f'{root} is a MOTChallenge split folder: it has no protocol splits, omit split')
        raise ValueError('a split needs a protocol (protocol1 or protocol2)')
    return read_split(root, protocol, split)


def stride_ground_truth(gt: GroundTruth, stride: int) -> GroundTruth:
    """Keep frames 1, 1+K, 1+2K, ... and renumber them 1, 2, 3, ..."""
    if stride == 1:
        return gt
    keep = (gt.frames - 1) % stride == 0
    strided = gt.select(keep)
    return replace(strided, frames=(strided.frames - 1) // stride + 1)


def load_sequence(root: str, name: str, stride: int = 1, with_gt: bool = True) -> Sequence:
    """Read a video's seqinfo.ini and gt.txt; ``stride`` K keeps every K-th frame (e.g. 3: 30 to 10 FPS)."""
    if stride < 1:
        raise ValueError(f'stride must be >= 1, got {stride}')
    directory = osp.join(sequence_root(root), name)
    ini = osp.join(directory, 'seqinfo.ini')
    gt_path = osp.join(directory, 'gt', 'gt.txt')
    if osp.isfile(ini):
        info = read_seqinfo(ini)
    else:
        raise FileNotFoundError(f'{ini}: missing (every video needs name and seqLength there)')
    gt = read_gt(gt_path, seq_length=info['seqLength']) if with_gt and osp.isfile(gt_path) else None
    length = int(info['seqLength'])
    # imStride (written by tools/data/simulate_detections.py --stride): frame k of this folder is image
    # 1 + (k - 1) * imStride of imDir
    image_stride = int(info.get('imStride', 1))
    image_numbers = 1 + (np.arange(1, length + 1, stride, dtype=np.int64) - 1) * image_stride
    if stride > 1:
        info = dict(info, seqLength=math.ceil(length / stride), imStride=image_stride * stride)
        if 'frameRate' in info:
            rate = info['frameRate'] / stride
            info['frameRate'] = int(rate) if float(rate).is_integer() else rate
        if gt is not None:
            gt = stride_ground_truth(gt, stride)
    return Sequence(name, directory, info, gt, stride, image_numbers, source_length=length)


def parse_split_name(text: str | None) -> tuple[str | None, str | None]:
    """``'protocol2/test'`` -> ``('protocol2', 'test')``; ``None`` -> ``(None, None)`` (all videos)."""
    if text is None:
        return None, None
    if '/' not in text:
        raise ValueError(f'split {text!r}: expected PROTOCOL/SPLIT, e.g. protocol2/test')
    protocol, split = text.split('/', 1)
    if split not in SPLITS:
        raise ValueError(f'split {text!r}: {split!r} is not one of {", ".join(SPLITS)}')
    return normalise_protocol(protocol), split
