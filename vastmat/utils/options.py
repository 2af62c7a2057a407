"""The value language of the command line's config options (``--cfg-options``, a sweep's ``--grid`` and
``--base-options``): ``KEY=VALUE[,VALUE...]`` with each value read as a Python literal.

* numbers, quoted strings, ``None``, ``True`` / ``False`` (also ``true`` / ``false``, as mmengine's DictAction);
* lists ``[a,b]``, tuples ``(a,b)``, dicts ``{'a': 1}`` and ``dict(type='CDA', alpha=0.5)``;
* a bare word is a string, at the top and inside brackets: ``mean``, ``[chicken_5,deer_5]``, ``data/x/``;
* ``KEY=V1,V2`` (commas outside brackets and quotes) is several values: a sweep's axis, or a list for
  ``--cfg-options`` (DictAction's ``key=a,b``).

Malformed text raises :class:`OptionError` (unbalanced brackets or quotes, an empty value, a call other than
``dict(key=value, ...)``, bracketed text that is not a literal); :func:`parse_assignment` names the flag and the key.
"""
from __future__ import annotations

import ast
from typing import Any

from vastmat.utils.errors import UserInputError

_PAIRS = {'(': ')', '[': ']', '{': '}'}


class OptionError(UserInputError):
    """A malformed ``KEY=VALUE`` option or value."""


def _top_level_commas(text: str) -> list[int]:
    """The positions of the commas outside brackets and quotes; raises on unbalanced brackets or quotes."""
    commas, stack, quote = [], [], None
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in '\'"':
            quote = ch
        elif ch in _PAIRS:
            stack.append(_PAIRS[ch])
        elif ch in ')]}':
            if not stack or stack.pop() != ch:
                raise OptionError(f'{text!r}: unbalanced {ch!r}')
        elif ch == ',' and not stack:
            commas.append(i)
    if quote:
        raise OptionError(f'{text!r}: unterminated {quote} quote')
    if stack:
        raise OptionError(f'{text!r}: {len(stack)} unclosed bracket(s), {stack[-1]!r} missing')
    return commas


def split_top_level(text: str) -> list[str]:
    """Split at the commas outside brackets and quotes: ``0.5,[1,2],dict(a=1)`` -> three items."""
    bounds = [-1, *_top_level_commas(text), len(text)]
    return [text[a + 1:b].strip() for a, b in zip(bounds, bounds[1:])]


def _literal(node: ast.AST, text: str) -> Any:
    """A Python literal, plus ``dict(key=literal, ...)`` calls and bare words (names, paths) as strings."""
    if isinstance(node, ast.Call):
        if not (isinstance(node.func, ast.Name) and node.func.id == 'dict' and not node.args
                and all(kw.arg for kw in node.keywords)):
            raise OptionError(f'{text!r}: the only call is dict(key=value, ...)')
        return {kw.arg: _literal(kw.value, text) for kw in node.keywords}
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_literal(e, text) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Dict):
        if None in node.keys:
            raise OptionError(f'{text!r}: ** is not a literal')
        return {_literal(k, text): _literal(v, text) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.Name):
        return {'true': True, 'false': False}.get(node.id.lower(), node.id)
    try:
        return ast.literal_eval(node)
    except ValueError:  # a word that is no literal (``Bee-1``, ``a/b.txt``): its text
        return ast.get_source_segment(text, node)


def parse_value(text: str) -> Any:
    """One command-line value (see the module's docstring); raises :class:`OptionError` on malformed text."""
    text = text.strip()
    if not text:
        raise OptionError('empty value')
    _top_level_commas(text)
    try:
        node = ast.parse(text, mode='eval').body
    except SyntaxError:
        if text[0] in '([{\'"' or text.startswith('dict('):
            raise OptionError(f'{text!r}: not a Python literal') from None
        return text  # a bare word that is no expression (``0.5.1``, ``my file``)
    return _literal(node, text)


def parse_assignment(text: str, flag: str) -> tuple[str, list[Any]]:
    """``KEY=V1,V2`` -> ``(KEY, [V1, V2])``; an error names ``flag`` and the key."""
    key, sep, values = text.partition('=')
    key = key.strip()
    if not sep or not key or not values.strip():
        raise OptionError(f'{flag} {text!r}: expected KEY=VALUE[,VALUE...]')
    try:
        return key, [parse_value(v) for v in split_top_level(values)]
    except OptionError as exc:
        raise OptionError(f'{flag} {key}: {exc}') from None


def parse_option(text: str, flag: str) -> tuple[str, Any]:
    """``KEY=VALUE`` -> ``(KEY, VALUE)``; ``KEY=V1,V2`` -> ``(KEY, [V1, V2])`` (mmengine DictAction's list)."""
    key, values = parse_assignment(text, flag)
    return key, values[0] if len(values) == 1 else values


def parse_keyword_options(text: str, flag: str) -> dict[str, Any]:
    """``key=value,key2=value2`` (or ``''``) -> ``{key: value}``, values read as ``--cfg-options`` values."""
    return dict(parse_option(item, flag) for item in split_top_level(text) if item)


def format_value(value: Any) -> str:
    """A short label: ``0.25``, ``mean``, ``CDA(mode=fixed, alpha=0.25)``, ``[InterpolateTracks]``."""
    if isinstance(value, float):
        return f'{value:g}'
    if isinstance(value, dict):
        args = ', '.join(f'{k}={format_value(v)}' for k, v in value.items() if k != 'type')
        return f'{value["type"]}({args})' if 'type' in value else '{' + args + '}'
    if isinstance(value, (list, tuple)):
        return '[' + ', '.join(format_value(v).split('(')[0] if isinstance(v, dict) else format_value(v)
                               for v in value) + ']'
    return str(value)
