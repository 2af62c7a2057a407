"""What a VastMAT root holds, as one hash: the identity of the data a training reads, wherever the root lies."""
from __future__ import annotations

import glob
import hashlib
import os.path as osp

from vastmat.utils.io import file_digest

# The files that say what a root holds: its split lists, and each video's seqinfo.ini (frames, size, rate) and
# ground truth. The frames are left out: listing and reading every image of a full root takes minutes, and a
# video's frames change only with its seqinfo.ini or its boxes in a rendered or imported root.
CONTENT_FILES = ('splits/*/*.txt', 'videos/*/seqinfo.ini', 'videos/*/gt/gt.txt', '*/seqinfo.ini', '*/gt/gt.txt')


def data_fingerprint(root: str) -> str:
    """A hash of the :data:`CONTENT_FILES` of ``root`` (their paths inside it and their contents): equal for a
    copied or moved root, different when a split or a video's boxes differ."""
    digest = hashlib.sha1()
    for pattern in CONTENT_FILES:
        for path in sorted(glob.glob(osp.join(glob.escape(root), pattern))):
            digest.update(f'{osp.relpath(path, root)}:{file_digest(path)}\n'.encode())
    return digest.hexdigest()[:16]
