"""msgspec's JSON codec, where the `fastjson` extra installed it, for the rows it reads and writes
exactly as the standard library's `json` does; `json` for everything else.

A JSON line of a batch is decoded by msgspec in about two thirds of `json`'s time and a result
line encoded in a sixth, which is most of what a batch spends beside rendering. The output of a
batch is the same bytes with or without msgspec:

- Decoding: msgspec's value is taken only when it succeeds. Where it fails it may be stricter
  than `json` (`NaN`, `Infinity`, a number beyond a float's range and a lone surrogate escape are
  JSON to `json`) or word its error differently, so the text is decoded again by `json`, whose
  value or error is the answer. The two agree on every text both accept (tests/test_fastjson.py
  checks them against each other). msgspec bounds integers by the interpreter's limit on integer
  digits: it is used only while that limit is no looser than the caller's own (`ints_bounded`).
- Encoding: msgspec writes floats in its own notation (`1e16` for `json`'s `1e+16`, `null` for
  `NaN`), so a record holding a float, or anything but str, int, bool, None, lists and
  str-keyed dicts, is written by `json`; so is a chunk holding a lone surrogate (msgspec refuses
  it, `json` escapes it).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

__all__ = ["FAST_DECODE", "FAST_ENCODE", "exactly_encodable", "ints_bounded"]

FAST_DECODE: Callable[[str], Any] | None
FAST_ENCODE: Callable[[Any], bytes] | None
try:
    import msgspec.json
except ImportError:  # the pure fallback: `json` alone
    FAST_DECODE = FAST_ENCODE = None
else:
    FAST_DECODE = msgspec.json.Decoder().decode
    FAST_ENCODE = msgspec.json.Encoder().encode

_int_digits_limit = getattr(sys, "get_int_max_str_digits", lambda: 0)


def ints_bounded(max_digits: int) -> bool:
    """Whether msgspec refuses every integer of more than `max_digits` digits: the interpreter's
    limit, which it follows, is set and no looser (it can be changed at run time, by
    `sys.set_int_max_str_digits` or `-X int_max_str_digits`)."""
    return 0 < _int_digits_limit() <= max_digits


_SCALARS = frozenset({str, int, bool, type(None)})


def exactly_encodable(value: Any) -> bool:
    """Whether msgspec writes `value` byte for byte as `json` does (compact, non-ASCII kept):
    plain str, int, bool and None, in lists and str-keyed dicts, at any depth; no float."""
    kind = type(value)
    if kind in _SCALARS:
        return True
    if kind is list:
        # (the element types gathered in C: a list of token ids is checked at that speed)
        return set(map(type, value)) <= _SCALARS or all(map(exactly_encodable, value))
    if kind is dict:
        return set(map(type, value)) <= {str} and all(map(exactly_encodable, value.values()))
    return False
