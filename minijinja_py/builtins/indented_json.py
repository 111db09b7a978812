"""Indented JSON as `json.dumps(value, ensure_ascii=False, indent=n)` writes it, made faster.

Python's JSON encoder has a C accelerator for compact output only: with an indent it runs a
chain of generators in Python, one per container, which costs more than the template
around it on chat templates that print their tool schemas with `tojson(indent=4)`.  This
writer appends to one list from a recursive function and hands every string to the same C
string encoder, so its text is the standard library's byte for byte; a value it does not
know (another type, a circular or very deep structure) is left to the standard library,
whose result and errors are then the reference's own.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Any

__all__ = ["indented_json"]

# Deeper than this, the standard library writes it (and raises for a circular structure).
_MAX_DEPTH = 64

_INFINITY = float("inf")


class _Unknown(Exception):
    """A value this writer leaves to the standard library."""


def indented_json(value: Any, indent: int) -> str:
    """`json.dumps(value, ensure_ascii=False, indent=indent)`, for an int `indent` >= 0."""
    parts: list[str] = []
    try:
        _write(value, parts, "\n", " " * indent, 0)
    except (_Unknown, RecursionError):
        return json.JSONEncoder(ensure_ascii=False, indent=indent).encode(value)
    return "".join(parts)


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value == _INFINITY:
        return "Infinity"
    if value == -_INFINITY:
        return "-Infinity"
    return float.__repr__(value)


def _scalar(value: Any) -> str | None:
    # (the order of the standard library's checks: str, None, True, False, int, float)
    if isinstance(value, str):
        return encode_basestring(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return _float(value)
    return None


def _key(key: Any) -> str:
    # (json's key conversions: a number, true, false or null is written as a string of its
    # JSON text, which needs no escape; its order of checks classifies keys as _scalar does)
    if isinstance(key, str):
        return encode_basestring(key)
    text = _scalar(key)
    if text is None:
        raise _Unknown
    return '"' + text + '"'


def _write(value: Any, parts: list[str], newline: str, step: str, depth: int) -> None:
    scalar = _scalar(value)
    if scalar is not None:
        parts.append(scalar)
        return
    if depth >= _MAX_DEPTH:
        raise _Unknown
    inner = newline + step
    if isinstance(value, (list, tuple)):
        if not value:
            parts.append("[]")
            return
        opener = "["
        for item in value:
            parts.append(opener + inner)
            opener = ","
            _write(item, parts, inner, step, depth + 1)
        parts.append(newline + "]")
        return
    if isinstance(value, dict):
        if not value:
            parts.append("{}")
            return
        opener = "{"
        for key, item in value.items():
            parts.append(opener + inner + _key(key) + ": ")
            opener = ","
            _write(item, parts, inner, step, depth + 1)
        parts.append(newline + "}")
        return
    raise _Unknown
