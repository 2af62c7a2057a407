"""Readers and writers of the MOTChallenge-style text files VastMAT uses (DESIGN.md section 3).

* gt.txt, nine columns: ``frame, id, left, top, width, height, valid, category, visibility``; also the ten-column
  MOTChallenge / AnimalTrack form ``frame, id, left, top, width, height, conf, -1, -1, -1`` (category and
  visibility unknown, read as -1) and ``", "`` separators.
* det.txt: ``frame, -1, left, top, width, height, score, -1, -1, -1`` plus optional appearance-feature columns.
* results: ``frame, id, left, top, width, height, score, -1, -1, -1``.
* seqinfo.ini.

Readers parse a whole file at once with numpy and validate it vectorised; every error names the file, the line
(1-based, as an editor shows it) and the reason. Writers write to a temporary file and rename it.
"""
from __future__ import annotations

import configparser
import io
import re
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from vastmat.structures.bbox import xyxy_to_ltwh
from vastmat.utils.io import atomic_write

GT_COLUMNS = ('frame', 'id', 'left', 'top', 'width', 'height', 'valid', 'category', 'visibility')
SEQINFO_KEYS = ('name', 'imDir', 'frameRate', 'seqLength', 'imWidth', 'imHeight', 'imExt')
#: The valid range of frame numbers (1-based; int32 so that frame-indexed arrays and video readers hold them).
MAX_FRAME = 2**31 - 1
#: Ids and categories lie in ``-MAX_ID..MAX_ID``: the whole numbers float64 (the parser's type) holds exactly and
#: without ambiguity, so ``9007199254740993`` (which float64 rounds to ...992) is refused rather than changed.
MAX_ID = 2**53 - 1


class FormatError(ValueError):
    """A malformed annotation, detection, result or seqinfo file (the message starts with ``file:line:``)."""


@dataclass
class GroundTruth:
    """The boxes of one gt.txt, one row each; boxes are ``(n, 4)`` left, top, width, height in pixels."""

    frames: np.ndarray  # int64, 1-based
    ids: np.ndarray  # int64
    boxes: np.ndarray  # float64 (n, 4) ltwh
    valid: np.ndarray  # int64: 1 evaluated, 0 ignored
    categories: np.ndarray  # int64: 1..337, -1 unknown
    visibility: np.ndarray  # float64 in [0, 1], -1 unknown
    line_numbers: np.ndarray  # int64, the source line of each row (for messages)
    path: str = ''

    def __len__(self) -> int:
        return len(self.frames)

    def select(self, mask: np.ndarray) -> 'GroundTruth':
        """The rows where ``mask`` is true (or the given indices)."""
        return GroundTruth(self.frames[mask], self.ids[mask], self.boxes[mask], self.valid[mask],
                           self.categories[mask], self.visibility[mask], self.line_numbers[mask], self.path)


@dataclass
class Detections:
    """The boxes of one det.txt; ``features`` holds the extra columns (or has width 0)."""

    frames: np.ndarray  # int64
    boxes: np.ndarray  # float64 (n, 4) ltwh
    scores: np.ndarray  # float64
    features: np.ndarray  # float64 (n, d), d >= 0
    line_numbers: np.ndarray
    path: str = ''

    def __len__(self) -> int:
        return len(self.frames)


@dataclass
class TrackResults:
    """The boxes of one tracker result file."""

    frames: np.ndarray  # int64
    ids: np.ndarray  # int64
    boxes: np.ndarray  # float64 (n, 4) ltwh
    scores: np.ndarray  # float64
    line_numbers: np.ndarray
    path: str = ''

    def __len__(self) -> int:
        return len(self.frames)


def _fail(path: str, line: int | None, reason: str) -> FormatError:
    where = f'{path}:{line}' if line is not None else path
    return FormatError(f'{where}: {reason}')


def _decode(path: str, data: bytes) -> str:
    """UTF-8 text (a leading byte-order mark is dropped); bad bytes are an error naming their line."""
    try:
        return data.decode('utf-8-sig')
    except UnicodeDecodeError as exc:
        start = exc.start + (3 if data.startswith(b'\xef\xbb\xbf') else 0)
        line = data[:start].replace(b'\r\n', b'\n').replace(b'\r', b'\n').count(b'\n') + 1
        raise _fail(path, line, f'not UTF-8 text: {exc.reason} (byte {data[start:start + 1]!r})') from None


def _split_lines(text: str) -> list[str]:
    """The lines as an editor shows them: ``\\n``, ``\\r\\n`` or ``\\r`` end a line (not str.splitlines' form feed,
    vertical tab or unicode separators, which stay inside the line and make it unreadable)."""
    return text.replace('\r\n', '\n').replace('\r', '\n').split('\n')


def _locate_error(path: str, rows: list[str], line_numbers: np.ndarray, n_cols: int, exc: ValueError) -> None:
    """Find and raise the first bad line (slow; only called once numpy's parser has failed)."""
    for row, line in zip(rows, line_numbers):
        fields = row.split(',')
        if len(fields) != n_cols:
            bad = sum(r.count(',') + 1 != n_cols for r in rows)
            raise _fail(path, int(line), f'{len(fields)} columns where the file has {n_cols} '
                        f'({bad} such line{"s" if bad > 1 else ""})')
        for j, token in enumerate(fields):
            try:
                float(token)
            except ValueError:
                raise _fail(path, int(line), f'column {j + 1} is not a number: {token.strip()!r}') from None
    # Python's float() accepts more than numpy's parser (non-ASCII digits, '1_000'): take the row from numpy's message.
    found = re.search(r"could not convert string (.*) to float64 at row (\d+), column (\d+)", str(exc))
    if found and int(found.group(2)) < len(rows):
        raise _fail(path, int(line_numbers[int(found.group(2))]),
                    f'column {found.group(3)} is not a number: {found.group(1)}')


def read_table(path: str, allowed_columns: Iterable[int] | None = None,
               min_columns: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Parse a comma-separated numeric text file into a float64 ``(rows, columns)`` array.

    Blank lines are skipped (they hold no box); every other line must have the same number of fields; ``", "``
    separators are accepted. Numbers are ASCII decimal (``12``, ``-1``, ``0.5``, ``1e3``), each read as the nearest
    float64 (as Python's ``float()`` reads it); NaN and infinities are refused. numpy's C parser does the work; only
    when it fails are the lines walked in Python to name the first bad one.

    Returns:
        The array and the 1-based source line number of each row.

    Raises:
        FormatError: not UTF-8, wrong column count, non-numeric field, NaN or infinite value (naming file and line).
    """
    with open(path, 'rb') as f:
        text = _decode(path, f.read())
    lines = _split_lines(text)
    keep = [i for i, line in enumerate(lines) if line.strip()]
    line_numbers = np.asarray(keep, dtype=np.int64) + 1
    if not keep:
        return np.zeros((0, max(min_columns or 0, 0)), np.float64), line_numbers
    rows = [lines[i] for i in keep] if len(keep) != len(lines) else lines
    n_cols = rows[0].count(',') + 1
    allowed = sorted(set(allowed_columns)) if allowed_columns is not None else None
    if allowed is not None and n_cols not in allowed or min_columns is not None and n_cols < min_columns:
        expected = (f'{" or ".join(map(str, allowed))}' if allowed is not None else f'at least {min_columns}')
        raise _fail(path, int(line_numbers[0]), f'{n_cols} columns, expected {expected}')
    try:
        # comments=None: a '#' must not silently turn a line into a comment.
        table = np.loadtxt(io.StringIO('\n'.join(rows)), delimiter=',', comments=None, ndmin=2, dtype=np.float64)
    except ValueError as exc:
        _locate_error(path, rows, line_numbers, n_cols, exc)
        raise _fail(path, None, f'cannot be parsed: {exc}') from None
    finite = np.isfinite(table)
    if not finite.all():
        i, j = np.argwhere(~finite)[0]
        raise _fail(path, int(line_numbers[i]), f'column {j + 1} is {table[i, j]} (NaN or infinite)')
    return table, line_numbers


def _number(value: float) -> str:
    """A table value as the messages show it: whole numbers without '.0' (frames, ids), others as Python does."""
    return str(int(value)) if value.is_integer() and abs(value) <= MAX_ID else repr(float(value))


def _check_integer(path: str, table: np.ndarray, line_numbers: np.ndarray, column: int, name: str,
                   low: int = -MAX_ID, high: int = MAX_ID) -> None:
    """Column ``column`` must hold whole numbers in ``low..high`` (so that int64 holds them exactly)."""
    values = table[:, column]
    bad = np.flatnonzero(values != np.round(values))
    if len(bad):
        raise _fail(path, int(line_numbers[bad[0]]), f'{name} {values[bad[0]]} is not an integer')
    bad = np.flatnonzero((values < low) | (values > high))
    if len(bad):
        value = values[bad[0]]
        if name == 'frame' and value < 1:
            reason = f'frame {_number(value)} < 1 (frames are 1-based)'
        else:
            reason = f'{name} {_number(value)} is outside the valid range {low}..{high}'
        raise _fail(path, int(line_numbers[bad[0]]), reason)


def _check_boxes(path: str, table: np.ndarray, line_numbers: np.ndarray, seq_length: int | None) -> None:
    _check_integer(path, table, line_numbers, 0, 'frame', 1, MAX_FRAME)
    frames = table[:, 0]
    if seq_length is not None:
        bad = np.flatnonzero(frames > seq_length)
        if len(bad):
            raise _fail(path, int(line_numbers[bad[0]]),
                        f'frame {int(frames[bad[0]])} is past seqLength {seq_length}')
    for column, name in ((4, 'width'), (5, 'height')):
        bad = np.flatnonzero(table[:, column] <= 0)
        if len(bad):
            raise _fail(path, int(line_numbers[bad[0]]), f'{name} {table[bad[0], column]} <= 0')


def _check_unique_ids(path: str, frames: np.ndarray, ids: np.ndarray, line_numbers: np.ndarray) -> None:
    order = np.lexsort((ids, frames))
    same = (frames[order][1:] == frames[order][:-1]) & (ids[order][1:] == ids[order][:-1])
    if same.any():
        k = np.flatnonzero(same)[0]
        first, second = sorted((int(line_numbers[order[k]]), int(line_numbers[order[k + 1]])))
        raise _fail(path, second, f'id {int(ids[order[k]])} appears twice in frame {int(frames[order[k]])} '
                    f'(also on line {first})')


def read_gt(path: str, seq_length: int | None = None) -> GroundTruth:
    """Read a gt.txt (nine-column VastMAT form or ten-column MOTChallenge / AnimalTrack form).

    Frames must be whole numbers in ``1..MAX_FRAME`` (and ``<= seq_length`` when given); ids and categories whole
    numbers in ``-MAX_ID..MAX_ID``; widths and heights > 0; valid 0 or 1; visibility in [0, 1] or -1.

    Args:
        path: the file.
        seq_length: if given, frames past it are an error (pass seqinfo.ini's seqLength).
    """
    table, line_numbers = read_table(path, allowed_columns=(9, 10))
    if table.shape[1] == 0:
        table = np.zeros((0, 9))
    _check_boxes(path, table, line_numbers, seq_length)
    _check_integer(path, table, line_numbers, 1, 'id')
    frames, ids = table[:, 0].astype(np.int64), table[:, 1].astype(np.int64)
    _check_unique_ids(path, frames, ids, line_numbers)
    if table.shape[1] == 10:  # MOTChallenge 2D / AnimalTrack: conf, x, y, z (world coordinates, -1)
        categories = np.full(len(table), -1, np.int64)
        visibility = np.full(len(table), -1.0)
    else:
        _check_integer(path, table, line_numbers, 7, 'category')
        categories = table[:, 7].astype(np.int64)
        visibility = table[:, 8].copy()
        bad = np.flatnonzero(~((visibility == -1) | ((visibility >= 0) & (visibility <= 1))))
        if len(bad):
            raise _fail(path, int(line_numbers[bad[0]]), f'visibility {visibility[bad[0]]} is not in [0, 1] or -1')
    valid_flag = table[:, 6]
    bad = np.flatnonzero(~np.isin(valid_flag, (0, 1)))
    if len(bad):
        raise _fail(path, int(line_numbers[bad[0]]), f'valid flag {valid_flag[bad[0]]} is not 0 or 1')
    return GroundTruth(frames, ids, table[:, 2:6].copy(), valid_flag.astype(np.int64), categories, visibility,
                       line_numbers, path)


def _read_box_table(path: str, min_columns: int, seq_length: int | None) -> tuple[np.ndarray, np.ndarray]:
    """A det / result table with its boxes and frames checked (an empty file gives ten empty columns)."""
    table, line_numbers = read_table(path, min_columns=min_columns)
    if len(table) == 0:
        table = np.zeros((0, 10))
    _check_boxes(path, table, line_numbers, seq_length)
    return table, line_numbers


def read_detections(path: str, seq_length: int | None = None) -> Detections:
    """Read a det.txt (ten MOT columns, then optional feature columns).

    Frames must be whole numbers in ``1..MAX_FRAME`` (and ``<= seq_length`` when given), widths and heights > 0;
    the id column (-1 by convention) is not read.
    """
    table, line_numbers = _read_box_table(path, 7, seq_length)
    features = table[:, 10:].copy() if table.shape[1] > 10 else np.zeros((len(table), 0))
    return Detections(table[:, 0].astype(np.int64), table[:, 2:6].copy(), table[:, 6].copy(), features,
                      line_numbers, path)


def read_results(path: str, seq_length: int | None = None) -> TrackResults:
    """Read a tracker result file (``frame, id, left, top, width, height, score, ...``).

    Frames must be whole numbers in ``1..MAX_FRAME`` (and ``<= seq_length`` when given), ids whole numbers in
    ``-MAX_ID..MAX_ID``, unique within a frame; widths and heights > 0.
    """
    table, line_numbers = _read_box_table(path, 6, seq_length)
    _check_integer(path, table, line_numbers, 1, 'id')
    frames, ids = table[:, 0].astype(np.int64), table[:, 1].astype(np.int64)
    _check_unique_ids(path, frames, ids, line_numbers)
    scores = table[:, 6].copy() if table.shape[1] > 6 else np.ones(len(table))
    return TrackResults(frames, ids, table[:, 2:6].copy(), scores, line_numbers, path)


def _write_atomic(path: str, table: np.ndarray, formats: list[str]) -> None:
    with atomic_write(path) as f:
        if len(table):
            np.savetxt(f, table, fmt=formats, delimiter=',')


def _float_fmt(decimals: int) -> str:
    return f'%.{decimals}f'


def write_gt(path: str, gt: GroundTruth, decimals: int = 2) -> None:
    """Write the nine-column VastMAT gt.txt."""
    table = np.column_stack([gt.frames, gt.ids, gt.boxes, gt.valid, gt.categories, gt.visibility])
    _write_atomic(path, table, ['%d', '%d'] + [_float_fmt(decimals)] * 4 + ['%d', '%d', '%.4g'])


def write_detections(path: str, dets: Detections, decimals: int = 2) -> None:
    """Write a det.txt (``frame, -1, l, t, w, h, score, -1, -1, -1`` plus feature columns)."""
    n = len(dets)
    table = np.column_stack([dets.frames, -np.ones(n), dets.boxes, dets.scores, -np.ones((n, 3)), dets.features])
    _write_atomic(path, table, ['%d', '%d'] + [_float_fmt(decimals)] * 4 + ['%.5f', '%d', '%d', '%d']
                  + ['%.6g'] * dets.features.shape[1])


def write_results(path: str, results: TrackResults, decimals: int = 2) -> None:
    """Write a tracker result file (``frame, id, l, t, w, h, score, -1, -1, -1``), sorted by frame then id."""
    order = np.lexsort((results.ids, results.frames))
    n = len(results)
    table = np.column_stack([results.frames[order], results.ids[order], results.boxes[order],
                             results.scores[order], -np.ones((n, 3))])
    _write_atomic(path, table, ['%d', '%d'] + [_float_fmt(decimals)] * 4 + ['%.5f', '%d', '%d', '%d'])


def track_rows_to_results(rows: np.ndarray) -> TrackResults:
    """A tracker's rows ``frame, id, x1, y1, x2, y2, score`` (corner boxes) as :class:`TrackResults`."""
    rows = np.asarray(rows, np.float64).reshape(-1, 7)
    return TrackResults(rows[:, 0].astype(np.int64), rows[:, 1].astype(np.int64), xyxy_to_ltwh(rows[:, 2:6]),
                        rows[:, 6], np.arange(1, len(rows) + 1))


_INTEGER = re.compile(r'[+-]?[0-9]+')
_DECIMAL = re.compile(r'[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?')
#: seqinfo.ini's integer keys and their valid range.
_SEQINFO_INTEGERS = {'seqLength': (0, MAX_FRAME), 'imWidth': (1, MAX_FRAME), 'imHeight': (1, MAX_FRAME)}


def _key_line(lines: list[str], key: str) -> int | None:
    """The 1-based line that sets ``key`` (for messages), or None."""
    pattern = re.compile(r'\s*' + re.escape(key) + r'\s*[=:]')
    return next((i + 1 for i, line in enumerate(lines) if pattern.match(line)), None)


def read_seqinfo(path: str) -> dict:
    """Read seqinfo.ini (section ``[Sequence]``, keys ``name`` and ``seqLength`` required).

    Numbers must be ASCII decimal: seqLength (``0..MAX_FRAME``), imWidth and imHeight (``1..MAX_FRAME``) become
    int; frameRate (finite, > 0) becomes int when whole, else float. Other keys stay strings. A bad value is an
    error naming the file, the line and the key.
    """
    try:
        with open(path, 'rb') as f:
            text = _decode(path, f.read())
    except FileNotFoundError:
        raise _fail(path, None, 'file not found') from None
    # No interpolation: a '%' in a value is text, not a reference to another key.
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keep the keys' case (seqLength, imWidth, ...)
    try:
        parser.read_string(text, source=path)
    except configparser.Error as exc:
        reason = str(exc).replace('\n', ' ')
        raise _fail(path, getattr(exc, 'lineno', None), f'not an ini file: {reason}') from None
    if 'Sequence' not in parser:
        raise _fail(path, None, 'no [Sequence] section')
    section = parser['Sequence']
    missing = [k for k in ('name', 'seqLength') if k not in section]
    if missing:
        raise _fail(path, None, f'missing key{"s" if len(missing) > 1 else ""} {", ".join(missing)}')
    info: dict = dict(section)
    lines = _split_lines(text)
    for key, (low, high) in _SEQINFO_INTEGERS.items():
        if key in info:
            value = info[key]
            if not _INTEGER.fullmatch(value):
                raise _fail(path, _key_line(lines, key), f'{key} = {value!r} is not an integer')
            info[key] = int(value)
            if not low <= info[key] <= high:
                raise _fail(path, _key_line(lines, key), f'{key} = {value!r} is outside the valid range {low}..{high}')
    if 'frameRate' in info:
        value = info['frameRate']
        rate = float(value) if _DECIMAL.fullmatch(value) else None
        if rate is None or not (np.isfinite(rate) and rate > 0):
            raise _fail(path, _key_line(lines, 'frameRate'), f'frameRate = {value!r} is not a positive number')
        info['frameRate'] = int(rate) if rate.is_integer() else rate
    return info


def write_seqinfo(path: str, info: dict) -> None:
    """Write seqinfo.ini with the keys of :data:`SEQINFO_KEYS` (in that order) and any others."""
    keys = [k for k in SEQINFO_KEYS if k in info] + [k for k in info if k not in SEQINFO_KEYS]
    with atomic_write(path) as f:
        f.write('[Sequence]\n' + ''.join(f'{k}={info[k]}\n' for k in keys))
