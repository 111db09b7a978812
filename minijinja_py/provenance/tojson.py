"""`tojson` of traced data: each string's characters placed where the encoder wrote them."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import lru_cache
from json.encoder import c_make_encoder  # type: ignore[attr-defined]
from typing import Any

from ..sandbox.budget import (
    current_limits,
)
from .traced import Path, Sourced, _clip, _make, derived, paths_of
from .tracking import _KEPT, _KEPT_SEGMENT_BYTES, _kept_room

# -------------------------------------------------------------------- JSON

_JSON_STRING = json.JSONEncoder(ensure_ascii=False).encode
_encode_string = json.encoder.encode_basestring  # (ensure_ascii off: escapes what JSON must)
# Tool schemas repeat their keys ("type", "description"): short ones are remembered.
_key_text = lru_cache(maxsize=1024)(_encode_string)
_JSON_ESCAPED = re.compile(r'[\x00-\x1f\\"]')


def json_text(value: Any, indent: int | None, result: str) -> Any:
    """`tojson`'s `result` with each string's characters traced (ensure_ascii off).

    The value is walked as the encoder writes it, counting positions in `result`; every key
    and every sourced string is checked to stand where the walk puts it (a result written in
    another order, sorted keys say, is attributed as a whole instead)."""
    segments: list[tuple] = []
    try:
        end = _json_segments(value, indent, 0, result, 0, segments, 0)
    except (TypeError, ValueError, RecursionError, _Misplaced):
        return derived(result, (value,))
    if end != len(result):
        return derived(result, (value,))
    return _make(result, segments)


class _Misplaced(Exception):
    pass


def _json_segments(
    value: Any, indent: int | None, level: int, result: str, at: int, segments: list, depth: int
) -> int:
    # Appends the segments of ``value`` written at ``at``; returns where its text ends.
    if depth > 200:  # (see _JSON_WALK_DEPTH)
        raise RecursionError
    cls = value.__class__
    if cls is Sourced:
        return _json_string(value, _encode_string(value), result, at, segments)
    if isinstance(value, str):
        return at + len(_encode_string(value))
    if isinstance(value, dict):
        items: Iterable[tuple[Any, Any]] = value.items()
        keyed = True
    elif isinstance(value, (list, tuple)):
        items = ((None, item) for item in value)
        keyed = False
    else:
        return at + len(json.dumps(value))
    at += 1  # the opening bracket
    if indent is None:
        between, before, after = 2, 0, 0
    else:
        between = 2 + indent * (level + 1)
        before, after = between - 1, 1 + indent * level
    empty = True
    for index, (key, item) in enumerate(items):
        at += between if index else before
        empty = False
        if keyed:
            if key.__class__ is str and len(key) <= 64:
                name = _key_text(key)
            else:
                name = _JSON_STRING(_json_key(key))
            if not result.startswith(name, at):
                raise _Misplaced
            at += len(name) + 2  # and ": "
        at = _json_segments(item, indent, level + 1, result, at, segments, depth + 1)
    return at + (1 if empty else after + 1)


def _json_string(value: Sourced, code: str, result: str, at: int, segments: list) -> int:
    # Appends the segments of ``value``, encoded as ``code``, written at ``at``; returns where
    # its text ends.
    width = len(value)
    if len(code) == width + 2:  # nothing escaped: the characters themselves
        if not result.startswith(value, at + 1):
            raise _Misplaced
        own = value.segments
        if len(own) == 1 and own[0][0] == 0 and own[0][1] == width:  # (one value's text)
            _, _, path, offset, verbatim = own[0]
            segments.append((at + 1, at + 1 + width, path, offset, verbatim))
        else:
            segments += _clip(own, 0, width, at + 1)
        return at + width + 2
    # JSON escapes character by character: the runs between escapes are the source's own.
    at += 1
    position = 0
    for match in _JSON_ESCAPED.finditer(value):
        start = match.start()
        run = str.__getitem__(value, slice(position, start))
        if not result.startswith(run, at):
            raise _Misplaced
        segments += _clip(value.segments, position, start, at - position)
        at += start - position
        width = len(_JSON_STRING(match.group())) - 2
        segments += [(at, at + width, path, None, False) for path in paths_of((value[start],))]
        at += width
        position = match.end()
    if not result.startswith(str.__getitem__(value, slice(position, None)), at):
        raise _Misplaced
    segments += _clip(value.segments, position, len(value), at - position)
    return at + len(value) - position + 1


def scanned_json_text(value: Any, result: str) -> Any:
    """`json_text` of a `result` that is json's own text of `value` (ensure_ascii
    off, any indent, keys in order); None where that cannot be read off it.

    Every `"` outside a string is escaped in JSON, and the encoder writes the strings (keys
    and values) in the order it is handed them: each string starts at the first `"` after
    the one before.  A second, compact encoding hands them over, as the C encoder meets them,
    instead of walking the value in Python."""
    if c_make_encoder is None:
        return None
    strings: list[str] = []
    codes: list[str] = []

    def encode(text: str) -> str:
        code = _encode_string(text)
        strings.append(text)
        codes.append(code)
        return code

    try:
        c_make_encoder({}, _not_serialisable, encode, None, ": ", ", ", False, False, True)(
            value, 0
        )
    except Exception:  # (what the filter serialised, this serialises alike)
        return None
    segments: list[tuple] = []
    find = result.find
    startswith = result.startswith
    position = 0
    try:
        for text, code in zip(strings, codes, strict=True):
            at = find('"', position)
            if at < 0 or not startswith(code, at):
                return None
            position = at + len(code)
            if text.__class__ is Sourced:
                own = text.segments  # type: ignore[attr-defined]
                width = len(text)
                if len(own) != 1 or own[0][:2] != (0, width):
                    _json_string(text, code, result, at, segments)  # type: ignore[arg-type]
                    continue
                # One value's text (most strings), its code already found in place.
                _, _, path, offset, verbatim = own[0]
                if len(code) == width + 2:  # nothing escaped
                    segments.append((at + 1, position - 1, path, offset, verbatim))
                else:
                    _escaped_segments(text, at + 1, path, offset, verbatim, segments)
    except _Misplaced:
        return None
    if find('"', position) >= 0:
        return None
    return _make(result, segments)


def _escaped_segments(
    text: str, at: int, path: Path, offset: int | None, verbatim: bool, segments: list
) -> None:
    # The segments of one value's ``text`` written with escapes at ``at`` (as _json_string
    # makes them): the runs between escapes are the source's own characters, and each escape
    # is attributed to the source without an offset.
    position = 0
    for match in _JSON_ESCAPED.finditer(text):
        start = match.start()
        if start > position:
            at_offset = None if offset is None else offset + position
            segments.append((at, at + start - position, path, at_offset, verbatim))
            at += start - position
        width = _ESCAPE_WIDTHS[match.group()]
        segments.append((at, at + width, path, None, False))
        at += width
        position = start + 1
    if position < len(text):
        at_offset = None if offset is None else offset + position
        segments.append((at, at + len(text) - position, path, at_offset, verbatim))


# What each character that JSON escapes takes in its text.
_ESCAPE_WIDTHS = {char: len(_encode_string(char)) - 2 for char in [*map(chr, range(32)), "\\", '"']}


def _not_serialisable(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return str.__str__(key)
    if key is True or key is False or key is None:
        return json.dumps(key)
    if isinstance(key, (int, float)):
        return json.dumps(key) if isinstance(key, float) else str(int(key))
    raise TypeError(key)


def _exact_tojson(result: str, value: Any, *args: Any, **kwargs: Any) -> Any:
    indent = kwargs.get("indent", args[1] if len(args) > 1 else None)
    if args[:1] not in ((), (False,)) or kwargs.keys() - {"indent", "ensure_ascii"}:
        return derived(result, (value,))
    if kwargs.get("ensure_ascii", False) is not False:
        return derived(result, (value,))
    return json_text(value, indent, result)


def _exact_chat_tojson(result: str, value: Any, *args: Any, **kwargs: Any) -> Any:
    # The chat preset's tojson writes json's own text for these arguments, found by a scan
    # (see scanned_json_text).  Elsewhere, and where a value nests deeper than the walk goes
    # (limits that allow it), the walk decides as for any tojson.
    indent = kwargs.get("indent", args[1] if len(args) > 1 else None)
    if (
        len(args) <= 2
        and args[:1] in ((), (False,))
        and kwargs.keys() <= {"indent", "ensure_ascii"}
        and kwargs.get("ensure_ascii", False) is False
        and (indent is None or (indent.__class__ is int and indent >= 0))
        and current_limits().max_recursion < _JSON_WALK_DEPTH
    ):
        kept = _KEPT.get(id(value))
        if kept is not None and kept[0] is value:  # (see keep_traced)
            scanned = kept[1].get(result)
            if scanned is None:
                scanned = scanned_json_text(value, result)
                size = 2 * len(result) + _KEPT_SEGMENT_BYTES * len(getattr(scanned, "segments", ()))
                if _kept_room(size):
                    kept[1][result] = scanned
        else:
            scanned = scanned_json_text(value, result)
        if scanned is not None:
            return scanned
    return _exact_tojson(result, value, *args, **kwargs)


# The nesting that the walk of json_text follows (it attributes a deeper value as a whole),
# with a margin below it for the limits under which the scan stands in for it.
_JSON_WALK_DEPTH = 190
