"""Hand edits of a tracker's identities: swap two identities from a frame on, merge two, split one at a frame.

The edits are pure functions on result rows ``frame, id, x1, y1, x2, y2, score`` (:func:`swap_identities`,
:func:`merge_identities`, :func:`split_identity`). An :class:`IdentityEdit` records one edit with an anchor box of
each identity it involves, so that :func:`replay_edits` applies a log made on one run to a re-run whose id numbers
differ: each recorded identity becomes the re-run's identity whose box at the anchor's frame overlaps the anchor
box most (IoU >= :data:`MIN_ANCHOR_IOU`).

On disk (:func:`edit_results_file`, :func:`replay_log`, :func:`undo_results_file`): the edits of a results folder
are logged in ``<results_dir>/identity_edits.jsonl`` (one JSON object a line, rewritten atomically on each append),
the first edit of a video keeps its unedited file as ``<results_dir>/unedited/<video>.txt``, and
``<results_dir>/<video>.txt`` is rewritten atomically, so the folder scores as it lies (``tools/eval_mot.py``).
"""
from __future__ import annotations

import json
import os
import os.path as osp
from collections import Counter
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from vastmat.apis.inference import read_track_rows, write_track_rows
from vastmat.structures import paired_iou
from vastmat.utils.errors import UserInputError
from vastmat.utils.io import atomic_write, to_jsonable, write_lines_atomic

OPS = ('swap', 'merge', 'split')
LOG_NAME = 'identity_edits.jsonl'
UNEDITED_DIR = 'unedited'
MIN_ANCHOR_IOU = 0.5
_LISTED_FRAMES = 10  # frames named in a refusal


@dataclass(frozen=True)
class Anchor:
    """The box ``x1, y1, x2, y2`` of identity ``id`` at ``frame`` in the run an edit was made on."""

    id: int
    frame: int
    box: tuple[float, float, float, float]


@dataclass(frozen=True)
class IdentityEdit:
    """One edit of one video's identities.

    ``ids``: swap ``(a, b)``, merge ``(keep, absorb)``, split ``(track_id, new_id)``; ``frames``: swap
    ``(from_frame, to_frame or None)``, merge ``()``, split ``(at_frame,)``; ``anchors``: the box of each involved
    identity that existed before the edit, at (or nearest to) the edit's frame; ``moved``: boxes whose id changed.
    """

    op: str
    video: str
    ids: tuple[int, ...]
    frames: tuple[int | None, ...]
    anchors: tuple[Anchor, ...] = ()
    moved: int = 0

    def to_json(self) -> str:
        """One line of the log."""
        record = dict(op=self.op, video=self.video, ids=list(self.ids), frames=list(self.frames),
                      anchors=[dict(id=a.id, frame=a.frame, box=list(a.box)) for a in self.anchors],
                      moved=self.moved)
        return json.dumps(to_jsonable(record), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> 'IdentityEdit':
        record = json.loads(text)
        if record.get('op') not in OPS:
            raise ValueError(f'op {record.get("op")!r} is not one of {", ".join(OPS)}')
        return cls(record['op'], str(record['video']), tuple(int(i) for i in record['ids']),
                   tuple(None if f is None else int(f) for f in record['frames']),
                   tuple(Anchor(int(a['id']), int(a['frame']), tuple(float(v) for v in a['box']))
                         for a in record['anchors']), int(record.get('moved', 0)))

    def describe(self) -> str:
        """The edit in words (``swap 3 <-> 5 from frame 40``)."""
        if self.op == 'swap':
            start, end = self.frames
            span = f'from frame {start}' if end is None else f'in frames {start}..{end}'
            return f'swap {self.ids[0]} <-> {self.ids[1]} {span}'
        if self.op == 'merge':
            return f'merge {self.ids[1]} into {self.ids[0]}'
        return f'split {self.ids[0]} at frame {self.frames[0]}: new id {self.ids[1]}'


# ------------------------------------------------------------------------------------------------- the edits
def _ids(rows: np.ndarray) -> np.ndarray:
    return rows[:, 1].astype(np.int64)


def _frame_list(frames: np.ndarray) -> str:
    frames = sorted(set(np.asarray(frames, np.int64).tolist()))
    text = ', '.join(map(str, frames[:_LISTED_FRAMES]))
    return text + (f', ... ({len(frames)} frames)' if len(frames) > _LISTED_FRAMES else '')


def _check_known(rows: np.ndarray, ids: Sequence[int], source: str) -> None:
    present = set(_ids(rows).tolist())
    unknown = [i for i in ids if i not in present]
    if unknown:
        known = sorted(present)
        shown = ', '.join(map(str, known[:20])) + (', ...' if len(known) > 20 else '')
        raise UserInputError(f'{source}: no identity {" or ".join(map(str, unknown))} in the results '
                             f'(ids: {shown or "none"})')


def _in_frames(rows: np.ndarray, start: int, end: int | None) -> np.ndarray:
    frames = rows[:, 0]
    return (frames >= start) & (frames <= end) if end is not None else frames >= start


def swap_identities(rows: np.ndarray, a: int, b: int, from_frame: int, to_frame: int | None = None,
                    source: str = 'results') -> np.ndarray:
    """Rows where identities ``a`` and ``b`` trade ids in frames ``from_frame..to_frame`` (to the end without
    ``to_frame``); ``source`` names the results in the messages of a refusal."""
    rows = np.asarray(rows, np.float64).reshape(-1, 7)
    if a == b:
        raise UserInputError(f'{source}: swap needs two different identities, got {a} twice')
    if to_frame is not None and to_frame < from_frame:
        raise UserInputError(f'{source}: swap of {a} and {b}: frame range {from_frame}..{to_frame} is empty')
    _check_known(rows, (a, b), source)
    ids, span = _ids(rows), _in_frames(rows, from_frame, to_frame)
    of_a, of_b = span & (ids == a), span & (ids == b)
    if not (of_a.any() or of_b.any()):
        where = f'from frame {from_frame} on' if to_frame is None else f'in frames {from_frame}..{to_frame}'
        raise UserInputError(f'{source}: neither identity {a} nor {b} has a box {where} (frames of {a}: '
                             f'{_frame_list(rows[ids == a, 0])}; of {b}: {_frame_list(rows[ids == b, 0])})')
    out = rows.copy()
    out[of_a, 1], out[of_b, 1] = b, a
    return out


def merge_identities(rows: np.ndarray, keep: int, absorb: int, source: str = 'results') -> np.ndarray:
    """Rows where identity ``absorb``'s boxes take ``keep``'s id; refused where both have a box in one frame."""
    rows = np.asarray(rows, np.float64).reshape(-1, 7)
    if keep == absorb:
        raise UserInputError(f'{source}: merge needs two different identities, got {keep} twice')
    _check_known(rows, (keep, absorb), source)
    ids = _ids(rows)
    both = np.intersect1d(rows[ids == keep, 0], rows[ids == absorb, 0])
    if len(both):
        raise UserInputError(f'{source}: cannot merge {absorb} into {keep}: both have a box in frame(s) '
                             f'{_frame_list(both)} (split or swap first)')
    out = rows.copy()
    out[ids == absorb, 1] = keep
    return out


def split_identity(rows: np.ndarray, track_id: int, at_frame: int, new_id: int | None = None,
                   source: str = 'results') -> np.ndarray:
    """Rows where identity ``track_id``'s boxes from ``at_frame`` on get ``new_id`` (default: the largest id + 1)."""
    rows = np.asarray(rows, np.float64).reshape(-1, 7)
    _check_known(rows, (track_id, ), source)
    ids = _ids(rows)
    own = ids == track_id
    after = own & (rows[:, 0] >= at_frame)
    if not after.any() or after.sum() == own.sum():
        side = 'from' if not after.any() else 'before'
        raise UserInputError(f'{source}: cannot split {track_id} at frame {at_frame}: it has no box {side} that '
                             f'frame (its frames: {_frame_list(rows[own, 0])})')
    new_id = default_new_id(rows) if new_id is None else int(new_id)
    if new_id in set(ids.tolist()):
        raise UserInputError(f'{source}: cannot split {track_id} into id {new_id}: that identity exists '
                             f'(frames {_frame_list(rows[ids == new_id, 0])})')
    out = rows.copy()
    out[after, 1] = new_id
    return out


def default_new_id(rows: np.ndarray) -> int:
    """The id a split gives without one: the largest id + 1 (1 for no rows)."""
    return int(_ids(rows).max(initial=0)) + 1


def id_changes(before: np.ndarray, after: np.ndarray) -> dict[tuple[int, int], int]:
    """``{(old id, new id): boxes}`` for the boxes whose id an edit changed (rows in the same order)."""
    old, new = _ids(before), _ids(after)
    changed = old != new
    return dict(sorted(Counter(zip(old[changed].tolist(), new[changed].tolist())).items()))


# ------------------------------------------------------------------------------------------ records and replay
def _edit_frame(rows: np.ndarray, op: str, ids: Sequence[int], frames: Sequence[int | None]) -> int:
    """The frame whose boxes anchor the edit: swap's first frame, split's frame, the absorbed identity's first."""
    if op == 'merge':
        return int(rows[_ids(rows) == ids[1], 0].min())
    return int(frames[0])


def _anchor(rows: np.ndarray, track_id: int, frame: int) -> Anchor:
    """``track_id``'s box at ``frame``, else at the nearest frame it has a box in (the earlier one on a tie)."""
    own = rows[_ids(rows) == track_id]
    row = own[np.lexsort((own[:, 0], np.abs(own[:, 0] - frame)))[0]]
    return Anchor(int(track_id), int(row[0]), tuple(float(v) for v in row[2:6]))


def make_edit(rows: np.ndarray, op: str, video: str, ids: Sequence[int | None], frames: Sequence[int | None],
              source: str = 'results') -> tuple[IdentityEdit, np.ndarray]:
    """Apply the edit ``op`` (``ids`` and ``frames`` as :class:`IdentityEdit`'s; a split's new id may be None) to
    ``rows`` and record it with its anchors; returns the record and the edited rows."""
    rows = np.asarray(rows, np.float64).reshape(-1, 7)
    if op not in OPS:
        raise UserInputError(f'{source}: unknown edit {op!r} (one of {", ".join(OPS)})')
    ids = list(ids)
    if op == 'split' and ids[1] is None:
        ids[1] = default_new_id(rows)
    edit = IdentityEdit(op, video, tuple(int(i) for i in ids), tuple(None if f is None else int(f) for f in frames))
    edited = apply_edit(rows, edit, source)
    frame = _edit_frame(rows, op, edit.ids, edit.frames)
    involved = edit.ids[:1] if op == 'split' else edit.ids
    anchors = tuple(_anchor(rows, i, frame) for i in involved)
    moved = sum(id_changes(rows, edited).values())
    return IdentityEdit(op, video, edit.ids, edit.frames, anchors, moved), edited


def apply_edit(rows: np.ndarray, edit: IdentityEdit, source: str = 'results') -> np.ndarray:
    """The rows with ``edit`` applied as recorded (the same run's id numbers)."""
    if edit.op == 'swap':
        return swap_identities(rows, *edit.ids, *edit.frames, source=source)
    if edit.op == 'merge':
        return merge_identities(rows, *edit.ids, source=source)
    if edit.op == 'split':
        return split_identity(rows, edit.ids[0], edit.frames[0], edit.ids[1], source=source)
    raise UserInputError(f'{source}: unknown edit {edit.op!r} (one of {", ".join(OPS)})')


def match_anchor(rows: np.ndarray, anchor: Anchor, where: str = 'edit') -> int:
    """The identity of ``rows`` whose box at the anchor's frame overlaps the anchor box most (IoU >=
    :data:`MIN_ANCHOR_IOU`)."""
    at = rows[rows[:, 0] == anchor.frame]
    ious = paired_iou(np.tile(np.asarray(anchor.box, np.float64), (len(at), 1)), at[:, 2:6])
    best = int(np.argmax(ious)) if len(at) else -1
    if best < 0 or ious[best] < MIN_ANCHOR_IOU:
        found = f'best IoU {ious[best]:.2f}' if best >= 0 else 'no box in that frame'
        raise UserInputError(f'{where}: identity {anchor.id}\'s anchor box {list(anchor.box)} at frame '
                             f'{anchor.frame} matches no identity of these results by IoU >= {MIN_ANCHOR_IOU} '
                             f'({found})')
    return int(at[best, 1])


def _replayed(rows: np.ndarray, edits: Sequence[IdentityEdit],
              source: str = 'results') -> Iterator[tuple[IdentityEdit, np.ndarray]]:
    """Each edit in turn, its ids mapped onto ``rows``' identities by its anchors: ``(the edit recorded on these
    results, the rows after it)``."""
    rows = np.asarray(rows, np.float64).reshape(-1, 7)
    for k, edit in enumerate(edits, start=1):
        where = f'{source}: edit {k} ({edit.video}: {edit.describe()})'
        mapped = {a.id: match_anchor(rows, a, where) for a in edit.anchors}
        if len(set(mapped.values())) < len(mapped):
            raise UserInputError(f'{where}: the anchors of identities {sorted(mapped)} all match identity '
                                 f'{next(iter(mapped.values()))} of these results')
        ids = [mapped.get(i, i) for i in edit.ids]
        if edit.op == 'split' and ids[1] in set(_ids(rows).tolist()):
            ids[1] = None  # the recorded new id is taken in these results: a fresh one
        edit, rows = make_edit(rows, edit.op, edit.video, ids, edit.frames, where)
        yield edit, rows


def replay_edits(rows: np.ndarray, edits: Sequence[IdentityEdit], source: str = 'results') -> np.ndarray:
    """The rows of a (re-)run with ``edits`` (made on another run of the same video) applied in order."""
    rows = np.asarray(rows, np.float64).reshape(-1, 7)
    for _, rows in _replayed(rows, edits, source):
        pass
    return rows


# ------------------------------------------------------------------------------------------------- on disk
def log_path(results_dir: str) -> str:
    return osp.join(results_dir, LOG_NAME)


def read_edit_log(path: str) -> list[IdentityEdit]:
    """The edits of a log (none when it does not exist)."""
    if not osp.isfile(path):
        return []
    edits = []
    with open(path, encoding='utf-8') as f:
        for number, line in enumerate(f, start=1):
            if line.strip():
                try:
                    edits.append(IdentityEdit.from_json(line))
                except (ValueError, KeyError, TypeError) as exc:
                    raise UserInputError(f'{path}:{number}: not an identity edit ({exc})') from exc
    return edits


def _write_log(results_dir: str, edits: Sequence[IdentityEdit]) -> None:
    write_lines_atomic([e.to_json() for e in edits], log_path(results_dir))


def _video_and_dir(results_txt: str) -> tuple[str, str]:
    if not results_txt.endswith('.txt'):
        raise UserInputError(f'{results_txt}: not a results file <video>.txt')
    if not osp.isfile(results_txt):
        raise FileNotFoundError(f'{results_txt}: no such results file')
    return osp.basename(results_txt)[:-len('.txt')], osp.dirname(osp.abspath(results_txt))


def _copy_atomic(src: str, dst: str) -> None:
    with open(src, 'rb') as f, atomic_write(dst, 'wb') as out:
        out.write(f.read())


def _save(results_dir: str, video: str, rows: np.ndarray, edits: Sequence[IdentityEdit]) -> None:
    """Keep the unedited file once, rewrite the results file, append ``edits`` to the folder's log."""
    path, kept = osp.join(results_dir, f'{video}.txt'), osp.join(results_dir, UNEDITED_DIR, f'{video}.txt')
    if not osp.isfile(kept):
        _copy_atomic(path, kept)
    write_track_rows(rows, path)
    _write_log(results_dir, read_edit_log(log_path(results_dir)) + list(edits))


def edit_results_file(results_txt: str, op: str, ids: Sequence[int | None],
                      frames: Sequence[int | None]) -> tuple[IdentityEdit, dict[tuple[int, int], int]]:
    """Edit ``<results_dir>/<video>.txt`` in place (see :func:`make_edit`) and log it; returns the record and
    ``{(old id, new id): boxes}``."""
    video, results_dir = _video_and_dir(results_txt)
    rows = read_track_rows(results_txt)
    edit, edited = make_edit(rows, op, video, ids, frames, results_txt)
    _save(results_dir, video, edited, [edit])
    return edit, id_changes(rows, edited)


def replay_log(log: str, results_dir: str) -> list[IdentityEdit]:
    """Apply the edits of ``log`` (another results folder's) to the videos of ``results_dir``, logging them there
    in its own id numbers; returns those records. A video that ``results_dir`` already has edits of is refused."""
    if not osp.isfile(log):
        raise FileNotFoundError(f'{log}: no such edit log')
    if osp.abspath(log) == osp.abspath(log_path(results_dir)):
        raise UserInputError(f'{log}: is the log of {results_dir} itself; replay it onto another results folder')
    edits = read_edit_log(log)
    edited = {e.video for e in read_edit_log(log_path(results_dir))}
    videos = list(dict.fromkeys(e.video for e in edits))
    again = [v for v in videos if v in edited]
    if again:
        raise UserInputError(f'{results_dir}: already has edits of {", ".join(again)} (undo them first)')
    results = {}  # every video is replayed before any is written: a failure leaves the folder as it was
    for video in videos:
        path = osp.join(results_dir, f'{video}.txt')
        _video_and_dir(path)
        rows, records = read_track_rows(path), []
        for record, rows in _replayed(rows, [e for e in edits if e.video == video], path):
            records.append(record)
        results[video] = rows, records
    for video, (rows, records) in results.items():
        _save(results_dir, video, rows, records)
    return [record for _, records in results.values() for record in records]


def undo_results_file(results_txt: str) -> int:
    """Restore ``<video>.txt`` from ``unedited/`` and drop the video's log entries; returns how many."""
    video, results_dir = _video_and_dir(results_txt)
    kept = osp.join(results_dir, UNEDITED_DIR, f'{video}.txt')
    if not osp.isfile(kept):
        raise UserInputError(f'{results_txt}: not edited (no {kept})')
    _copy_atomic(kept, results_txt)
    edits = read_edit_log(log_path(results_dir))
    _write_log(results_dir, [e for e in edits if e.video != video])
    os.unlink(kept)
    return sum(e.video == video for e in edits)
