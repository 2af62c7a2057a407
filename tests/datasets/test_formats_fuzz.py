"""Fuzz findings of issue 17 and property-based (hypothesis) tests of the readers of vastmat.datasets.formats.

The properties: a mutated copy of a real MOT15-TUD file gives either a table whose values equal what the text says
(checked against an independent Python parse of the mutated text) or a FormatError naming the file; never another
exception, never a value the text does not hold; and a text that is valid by the documented rules must parse.
"""
from __future__ import annotations

import configparser
import math
import os.path as osp
import re

import numpy as np
import pytest
from helpers.common import SHARED_DATA
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vastmat.datasets.formats import (MAX_FRAME, MAX_ID, FormatError, read_detections, read_gt, read_results,
                                      read_seqinfo)

TUD = osp.join(SHARED_DATA, 'MOT15-TUD')
CAMPUS = osp.join(TUD, 'train', 'TUD-Campus')
FILES = dict(gt=osp.join(CAMPUS, 'gt', 'gt.txt'), det=osp.join(CAMPUS, 'det', 'det.txt'),
             results=osp.join(TUD, 'trackers', 'SORT', 'TUD-Campus.txt'), seqinfo=osp.join(CAMPUS, 'seqinfo.ini'))
needs_tud = pytest.mark.skipif(not all(osp.isfile(p) for p in FILES.values()),
                               reason=f'MOT15-TUD not found at {TUD} (../shared/data beside the clone)')
SEQ_LENGTH = 71  # TUD-Campus
HEAD = 40  # lines of each real file the properties mutate (a mutation then hits a line that matters more often)
FUZZ = settings(derandomize=True, max_examples=120, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _write(tmp_path, text, name='f.txt') -> str:
    path = str(tmp_path / name)
    with open(path, 'wb') as f:
        f.write(text if isinstance(text, bytes) else text.encode('utf-8'))
    return path


# ---------------------------------------------------------------------------------------------------------------
# (a) the findings of the fuzz campaign in issue 17 (each failed on the code before the fix)

HUGE = '999999999999999999999'


@pytest.mark.parametrize('reader,text,message', [
    (read_gt, f'{HUGE},1,10,10,20,20,1,1,1\n', f':1: frame {float(HUGE)!r} is outside the valid range 1..{MAX_FRAME}'),
    (read_gt, f'1,1,10,10,20,20,1,1,1\n2,{HUGE},10,10,20,20,1,1,1\n',
     f':2: id {float(HUGE)!r} is outside the valid range {-MAX_ID}..{MAX_ID}'),
    (read_gt, f'1,1,10,10,20,20,1,-{HUGE},1\n', f':1: category {-float(HUGE)!r} is outside the valid range'),
    (read_detections, f'{HUGE},-1,10,10,20,20,0.9,-1,-1,-1\n', f':1: frame {float(HUGE)!r} is outside'),
    (read_results, f'{HUGE},1,10,10,20,20,0.9,-1,-1,-1\n', f':1: frame {float(HUGE)!r} is outside'),
    (read_results, f'1,-{HUGE},10,10,20,20,0.9,-1,-1,-1\n', f':1: id {-float(HUGE)!r} is outside'),
    # float64 rounds 2**53 + 1 to 2**53: refused rather than read as a different id
    (read_results, '1,9007199254740993,10,10,20,20,0.9,-1,-1,-1\n', ':1: id 9007199254740992.0 is outside'),
    (read_results, f'{MAX_FRAME + 1},1,10,10,20,20,0.9,-1,-1,-1\n', f':1: frame {MAX_FRAME + 1} is outside'),
])
def test_values_beyond_int64_or_the_documented_range_are_refused(tmp_path, reader, text, message):
    path = _write(tmp_path, text)
    with pytest.raises(FormatError) as error:
        reader(path)
    assert str(error.value).startswith(path + message)


def test_the_documented_range_is_read_exactly(tmp_path):
    text = f'{MAX_FRAME},2147483648,10,10,20,20,0.9,-1,-1,-1\n1,{MAX_ID},1,1,2,2,1,-1,-1,-1\n1,-{MAX_ID},1,1,2,2,1,-1,-1,-1\n'
    results = read_results(_write(tmp_path, text))
    assert results.frames.tolist() == [MAX_FRAME, 1, 1]
    assert results.ids.tolist() == [2147483648, MAX_ID, -MAX_ID]


@pytest.mark.parametrize('line,reason', [
    ('frameRate=abc', "frameRate = 'abc' is not a positive number"),
    ('frameRate=', "frameRate = '' is not a positive number"),
    ('frameRate=0x10', "frameRate = '0x10' is not a positive number"),
    ('frameRate=2\x005', "frameRate = '2\\x005' is not a positive number"),
    ('frameRate=\ufeff25', "frameRate = '\\ufeff25' is not a positive number"),
    ('frameRate=nan', "frameRate = 'nan' is not a positive number"),
    ('frameRate=0', "frameRate = '0' is not a positive number"),
    ('seqLength=0x10', "seqLength = '0x10' is not an integer"),
    ('seqLength=', "seqLength = '' is not an integer"),
    ('seqLength=1_000', "seqLength = '1_000' is not an integer"),
    ('seqLength=\u0665', "seqLength = '\u0665' is not an integer"),  # Arabic-Indic five: int() reads it, we do not
    ('imWidth=1e3', "imWidth = '1e3' is not an integer"),
    (f'imHeight={MAX_FRAME + 1}', f"imHeight = '{MAX_FRAME + 1}' is outside the valid range 1..{MAX_FRAME}"),
])
def test_seqinfo_bad_value_names_file_line_and_key(tmp_path, line, reason):
    keys = dict(name='a', frameRate='25', seqLength='71', imWidth='640', imHeight='480')
    key = line.split('=')[0]
    keys[key] = line.split('=', 1)[1]
    text = '[Sequence]\n' + ''.join(f'{k}={v}\n' for k, v in keys.items())
    path = _write(tmp_path, text, 'seqinfo.ini')
    with pytest.raises(FormatError) as error:
        read_seqinfo(path)
    assert str(error.value) == f'{path}:{list(keys).index(key) + 2}: {reason}'


def test_seqinfo_leading_bom_percent_and_float_rate(tmp_path):
    path = _write(tmp_path, '\ufeff[Sequence]\nname=a%b\nframeRate=29.97\nseqLength=3\n', 'seqinfo.ini')
    assert read_seqinfo(path) == dict(name='a%b', frameRate=29.97, seqLength=3)


def test_non_utf8_names_the_line(tmp_path):
    path = _write(tmp_path, b'1,1,10,10,20,20,1,1,1\n2,1,10,10,20,\xff20,1,1,1\n')
    with pytest.raises(FormatError, match=re.escape(path) + ':2: not UTF-8 text'):
        read_gt(path)


def test_non_ascii_digits_name_the_line(tmp_path):
    # Python's float() reads '\u0661' as 1, numpy does not: the error still names the line.
    path = _write(tmp_path, '1,1,10,10,20,20,1,1,1\n2,\u0661,10,10,20,20,1,1,1\n')
    with pytest.raises(FormatError, match=re.escape(path) + ':2: column 2 is not a number'):
        read_gt(path)


# ---------------------------------------------------------------------------------------------------------------
# (b) property-based tests: mutations of real files

_DECIMAL = re.compile(r'[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?')
_INTEGER = re.compile(r'[+-]?[0-9]+')
PIECES = ['0', '1', '-1', '9', '.', ',', ', ', ' ', '\t', '\n', '\r\n', '\r', '', 'e', 'e5', '-', '+', 'nan', 'NaN',
          'inf', '-inf', HUGE, '-' + HUGE, '9007199254740993', '2147483648', str(MAX_FRAME), '1e400', '1e-400',
          '1.5', '0.0', '-0', '1_0', '0x10', '#', ';', '\ufeff', '\x00', '\u0661', '\u00e9', '\u2028', '\x0c', '\x0b',
          '\u2003', '"', '=', '[Sequence]', 'frameRate', 'seqLength']


@st.composite
def mutated(draw, text: str) -> bytes:
    """``text`` with 1 to 3 random edits: insertions, deletions, replacements (of characters, spans or a whole
    field), plus sometimes a raw non-UTF-8 byte."""
    piece = st.one_of(st.sampled_from(PIECES), st.text(max_size=4))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(['insert', 'delete', 'replace', 'field']))
        n = len(text)
        if kind == 'field':
            lines = text.split('\n')
            i = draw(st.integers(0, len(lines) - 1))
            fields = lines[i].split(',')
            j = draw(st.integers(0, len(fields) - 1))
            fields[j] = draw(piece)
            lines[i] = ','.join(fields)
            text = '\n'.join(lines)
            continue
        start = draw(st.integers(0, n))
        end = start if kind == 'insert' else draw(st.integers(start, min(n, start + 6)))
        text = text[:start] + ('' if kind == 'delete' else draw(piece)) + text[end:]
    data = text.encode('utf-8')
    if draw(st.integers(0, 9)) == 0:
        k = draw(st.integers(0, len(data)))
        data = data[:k] + draw(st.sampled_from([b'\xff', b'\xc3', b'\x80', b'\xef\xbb\xbf'])) + data[k:]
    return data


def _head(path: str, n: int = HEAD) -> str:
    with open(path, encoding='utf-8') as f:
        return ''.join(f.readlines()[:n])


class Invalid(Exception):
    """The reference parse says the text breaks a documented rule."""


def _reference_table(data: bytes) -> tuple[list[list[float]], list[list[str]], bool]:
    """An independent parse: the rows as Python floats, their tokens, and whether every token is plain ASCII
    decimal (then the reader must accept the numbers)."""
    try:
        text = data.decode('utf-8-sig')
    except UnicodeDecodeError:
        raise Invalid from None
    lines = text.replace('\r\n', '\n').replace('\r', '\n').split('\n')
    tokens = [line.split(',') for line in lines if line.strip()]
    if tokens and any(len(t) != len(tokens[0]) for t in tokens):
        raise Invalid
    try:
        values = [[float(x) for x in row] for row in tokens]
    except ValueError:
        raise Invalid from None
    if any(not math.isfinite(v) for row in values for v in row):
        raise Invalid
    strict = all(_DECIMAL.fullmatch(x.strip(' \t')) for row in tokens for x in row)
    return values, tokens, strict


def _whole(values, tokens, column, low, high) -> list[int]:
    """A column that must hold whole numbers in low..high; an integer literal must be the same number exactly."""
    out = []
    for row, toks in zip(values, tokens):
        v = row[column]
        if not v.is_integer() or not low <= v <= high:
            raise Invalid
        if _INTEGER.fullmatch(toks[column].strip()) and int(toks[column].strip()) != int(v):
            raise Invalid  # float64 rounded it (cannot happen inside the range; checked all the same)
        out.append(int(v))
    return out


def _boxes(values) -> list[list[float]]:
    if any(row[4] <= 0 or row[5] <= 0 for row in values):
        raise Invalid
    return [row[2:6] for row in values]


def _frames(values, tokens, seq_length) -> list[int]:
    frames = _whole(values, tokens, 0, 1, MAX_FRAME)
    if seq_length is not None and any(f > seq_length for f in frames):
        raise Invalid
    return frames


def _unique(frames, ids) -> None:
    if len(set(zip(frames, ids))) != len(frames):
        raise Invalid


def expected_gt(data: bytes, seq_length):
    values, tokens, strict = _reference_table(data)
    if values and len(values[0]) not in (9, 10):
        raise Invalid
    frames = _frames(values, tokens, seq_length)
    boxes = _boxes(values)
    ids = _whole(values, tokens, 1, -MAX_ID, MAX_ID)
    _unique(frames, ids)
    if values and len(values[0]) == 9:
        categories = _whole(values, tokens, 7, -MAX_ID, MAX_ID)
        visibility = [row[8] for row in values]
        if any(not (v == -1 or 0 <= v <= 1) for v in visibility):
            raise Invalid
    else:
        categories, visibility = [-1] * len(values), [-1.0] * len(values)
    if any(row[6] not in (0, 1) for row in values):
        raise Invalid
    return strict, dict(frames=frames, ids=ids, boxes=boxes, valid=[int(row[6]) for row in values],
                        categories=categories, visibility=visibility)


def expected_det(data: bytes, seq_length):
    values, tokens, strict = _reference_table(data)
    if values and len(values[0]) < 7:
        raise Invalid
    frames = _frames(values, tokens, seq_length)
    return strict, dict(frames=frames, boxes=_boxes(values), scores=[row[6] for row in values],
                        features=[row[10:] for row in values])


def expected_results(data: bytes, seq_length):
    values, tokens, strict = _reference_table(data)
    if values and len(values[0]) < 6:
        raise Invalid
    frames = _frames(values, tokens, seq_length)
    boxes = _boxes(values)
    ids = _whole(values, tokens, 1, -MAX_ID, MAX_ID)
    _unique(frames, ids)
    return strict, dict(frames=frames, ids=ids, boxes=boxes,
                        scores=[row[6] if len(row) > 6 else 1.0 for row in values])


READERS = dict(gt=(read_gt, expected_gt), det=(read_detections, expected_det), results=(read_results, expected_results))


def check_table(kind: str, path: str, data: bytes, seq_length) -> str:
    """Read ``data`` (written at ``path``) with the reader of ``kind`` and check the property; returns the outcome
    ('parsed' or 'FormatError'). Anything else raised by the reader propagates."""
    reader, expect = READERS[kind]
    with open(path, 'wb') as f:
        f.write(data)
    try:
        strict, want = expect(data, seq_length)
    except Invalid:
        strict, want = False, None
    try:
        got = reader(path, seq_length=seq_length)
    except FormatError as exc:
        assert str(exc).startswith(path + ':'), str(exc)
        assert not strict, f'valid text refused: {exc}'
        return 'FormatError'
    assert want is not None, f'{kind}: the reader accepted a text that breaks the rules: {data[:300]!r}'
    for name, value in want.items():
        have = getattr(got, name)
        if name in ('boxes', 'features'):
            value = np.asarray(value, np.float64).reshape(have.shape)
        assert np.array_equal(have, np.asarray(value)), (name, have, value)
        if name in ('frames', 'ids', 'valid', 'categories'):
            assert have.dtype == np.int64
    return 'parsed'


_SEQINFO_INTEGERS = {'seqLength': (0, MAX_FRAME), 'imWidth': (1, MAX_FRAME), 'imHeight': (1, MAX_FRAME)}


def expected_seqinfo(data: bytes) -> tuple[dict | None, str | None]:
    """(the dict the reader must return, None), (None, the key whose value is bad) or (None, None): not an ini."""
    try:
        text = data.decode('utf-8-sig')
        parser = configparser.ConfigParser(interpolation=None)
        parser.optionxform = str
        parser.read_string(text)
        section = dict(parser['Sequence'])
    except Exception:  # the reference only needs to know that the structure is bad
        return None, None
    if 'name' not in section or 'seqLength' not in section:
        return None, None
    info = dict(section)
    for key, (low, high) in _SEQINFO_INTEGERS.items():
        if key in info:
            value = info[key]
            if not (_INTEGER.fullmatch(value) and low <= int(value) <= high):
                return None, key
            info[key] = int(value)
    if 'frameRate' in info:
        value = info['frameRate']
        rate = float(value) if _DECIMAL.fullmatch(value) else math.nan
        if not (math.isfinite(rate) and rate > 0):
            return None, 'frameRate'
        info['frameRate'] = rate
    return info, None


def check_seqinfo(path: str, data: bytes) -> str:
    with open(path, 'wb') as f:
        f.write(data)
    want, bad_key = expected_seqinfo(data)
    try:
        got = read_seqinfo(path)
    except FormatError as exc:
        assert str(exc).startswith(path + ':'), str(exc)
        assert want is None, f'valid seqinfo refused: {exc}'
        if bad_key is not None:
            assert f' {bad_key} = ' in str(exc), (bad_key, str(exc))
        return 'FormatError'
    assert want is not None, f'the reader accepted a bad seqinfo: {data!r}'
    assert got == want and all(type(got[k]) is int for k in _SEQINFO_INTEGERS if k in got), (got, want)
    return 'parsed'


@needs_tud
@pytest.mark.parametrize('kind', ['gt', 'det', 'results'])
def test_unmutated_heads_parse(tmp_path, kind):
    data = _head(FILES[kind]).encode()
    assert check_table(kind, str(tmp_path / 'x.txt'), data, SEQ_LENGTH) == 'parsed'
    assert check_seqinfo(str(tmp_path / 'seqinfo.ini'), open(FILES['seqinfo'], 'rb').read()) == 'parsed'


def _table_property(kind: str):
    text = _head(FILES[kind]) if osp.isfile(FILES[kind]) else '1,1,1,1,1,1,1,1,1\n'

    @needs_tud
    @FUZZ
    @given(data=mutated(text), with_length=st.booleans())
    def test(tmp_path, data, with_length):
        check_table(kind, str(tmp_path / f'{kind}.txt'), data, SEQ_LENGTH if with_length else None)

    test.__name__ = f'test_mutated_{kind}_parses_faithfully_or_raises_format_error'
    return test


test_mutated_gt_parses_faithfully_or_raises_format_error = _table_property('gt')
test_mutated_det_parses_faithfully_or_raises_format_error = _table_property('det')
test_mutated_results_parses_faithfully_or_raises_format_error = _table_property('results')

_SEQINFO_TEXT = open(FILES['seqinfo'], encoding='utf-8').read() if osp.isfile(FILES['seqinfo']) else '[Sequence]\n'


@needs_tud
@FUZZ
@given(data=mutated(_SEQINFO_TEXT))
def test_mutated_seqinfo_parses_faithfully_or_raises_format_error(tmp_path, data):
    check_seqinfo(str(tmp_path / 'seqinfo.ini'), data)
