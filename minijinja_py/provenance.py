"""Where each character of a rendered text came from.

``Template.render_with_provenance`` wraps every string of the caller's context in a
:class:`Sourced` string: a ``str`` whose segments name the path of the value each of its characters
came from (``("messages", 3, "content")``).  The template compiled for provenance (see
``Compiler(..., instrument=track_operations)``) runs the same evaluators; only its filters, operators,
``str`` methods and the joins of captured output go through :func:`track_operations`, which keeps
the segments:

- exactly through the operations templates apply to strings (concatenation, slicing and indexing,
  ``split``/``strip``/``replace``/``join`` and the other ``str`` methods, ``%`` and ``format``
  with plain ``%s``/``{}`` fields, and the filters ``join``, ``tojson``, ``trim``, ``indent``,
  ``upper``/``lower``/``title``/``capitalize``, ``center``, ``reverse``, ``format``);
- conservatively through everything else: a string that a filter, method or operator derives from
  sourced inputs is attributed, as a whole, to every source of those inputs (never to none);
  markup stays markup (:class:`SourcedMarkup`), so that escaping filters treat it as before.

Only strings carry sources: numbers, booleans and ``None`` print without one, and so do dict keys.
A render without provenance never meets a :class:`Sourced` string: its fast paths, which test
``type(x) is str``, are untouched.
"""

from __future__ import annotations

import json
import operator
import re
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from itertools import repeat
from json.encoder import c_make_encoder  # type: ignore[attr-defined]
from operator import itemgetter
from typing import Any, NamedTuple

from .builtins.filters import FILTERS, chat_tojson
from .builtins.methods import STR_METHODS
from .builtins.ops import to_string
from .errors import LimitError
from .run.expressions import Const
from .run.frames import located
from .run.operators import AddChain
from .run.statements import Output
from .sandbox.budget import (
    CHARS_PER_STEP,
    FILTER_ITEMS_PER_STEP,
    ITEMS_PER_STEP,
    charge_memory,
    charge_steps,
    charge_work,
    check_length,
    current_limits,
)
from .values.runtime import Markup, Undefined, wants_environment

Path = tuple[Any, ...]


class Segment(NamedTuple):
    """Characters ``[start, end)`` came from the value at ``path``.

    ``offset`` is where they begin in that source string when the operations were exact (None for
    a derived string, attributed to every source it was computed from); ``verbatim`` tells whether
    the characters equal the source's own (false after a case change, which keeps positions).
    """

    start: int
    end: int
    path: Path
    offset: int | None
    verbatim: bool


class Sourced(str):
    """A string that knows where its characters came from (its ``segments``)."""

    segments: tuple[Segment, ...]

    def __str__(self) -> str:
        # str(x) and ~ keep the sources (filters call str() on their input)
        return self

    def __repr__(self) -> str:
        return str.__repr__(self)

    def __reduce__(self) -> Any:
        return (str, (str.__str__(self),))

    # ---------------------------------------------------------------- operators

    def __add__(self, other: Any) -> Any:
        if not isinstance(other, str):
            return str.__str__(self) + other  # Python's own error for str + list
        if other.__class__ is str:
            if not other:
                return self
            result = str.__new__(Sourced, str.__add__(self, other))
            result.segments = self.segments
            return result
        return join_text((self, other))

    def __radd__(self, other: Any) -> Any:
        if other.__class__ is not str:
            return join_text((other, self)) if isinstance(other, str) else NotImplemented
        if not other:
            return self
        shift = len(other)
        result = str.__new__(Sourced, str.__add__(other, self))
        own = self.segments
        if len(own) == 1:  # (one value's text: most strings)
            start, end, path, offset, verbatim = own[0]
            result.segments = ((start + shift, end + shift, path, offset, verbatim),)
        else:
            result.segments = tuple(
                (start + shift, end + shift, path, offset, verbatim)
                for start, end, path, offset, verbatim in own
            )
        return result

    def __mul__(self, count: Any) -> Any:
        result = str.__mul__(self, count)
        if result is NotImplemented or not result:
            return result
        if count * len(self.segments) > EXACT_SEGMENTS:
            # (the copies as runs: each source once over the whole text, not a segment per copy)
            return derived(result, (self,))
        return join_text((self,) * count)

    __rmul__ = __mul__

    def __mod__(self, args: Any) -> Any:
        return derived(str.__mod__(self, args), (self, args))

    def __rmod__(self, template: Any) -> Any:
        if not isinstance(template, str):
            return NotImplemented
        return percent_format(template, self)

    def __getitem__(self, key: Any) -> Any:
        result = str.__getitem__(self, key)
        if key.__class__ is slice:
            start, stop, step = key.indices(len(self))
            if step == 1:
                return _make(result, _clip(self.segments, start, max(start, stop), -start))
            return _make(result, _stepped(self.segments, range(start, stop, step)))
        index = key.__index__()
        if index < 0:
            index += len(self)
        return _make(result, _clip(self.segments, index, index + 1, -index))

    def __iter__(self) -> Iterator[str]:
        segments = self.segments
        # (a sourced character costs a string and a segment: charged a block at a time)
        charge_work(items=min(len(self), _CHARS_BLOCK) * PIECE_ITEMS)
        if len(segments) != 1:
            # (one sweep over the segments for all the characters: see _cut)
            chars = str.__iter__(self)
            cuts = ((index, index + 1, -index) for index in range(len(self)))
            for index, pieces in enumerate(_cut(segments, cuts)):
                if index and not index % _CHARS_BLOCK:
                    charge_work(items=_CHARS_BLOCK * PIECE_ITEMS)
                yield _make(next(chars), pieces)
            return
        # (the usual case, one value's text, made one character at a time without slicing)
        start, end, path, offset, verbatim = segments[0]
        make = str.__new__
        for index, char in enumerate(str.__iter__(self)):
            if index and not index % _CHARS_BLOCK:
                charge_work(items=_CHARS_BLOCK * PIECE_ITEMS)
            if start <= index < end:
                sourced = make(Sourced, char)
                at = None if offset is None else offset + index - start
                sourced.segments = ((0, 1, path, at, verbatim),)
                yield sourced
            else:
                yield char

    # ---------------------------------------------------------------- str methods

    # (Most texts have nothing to strip: they are their own result, not a copy of it.)

    def strip(self, chars: Any = None) -> Any:
        result = str.strip(self, chars)
        if len(result) == len(self):
            return self
        left = len(self) - len(str.lstrip(self, chars))
        return self[left : left + len(result)]

    def lstrip(self, chars: Any = None) -> Any:
        cut = len(self) - len(str.lstrip(self, chars))
        return self[cut:] if cut else self

    def rstrip(self, chars: Any = None) -> Any:
        kept = len(str.rstrip(self, chars))
        return self[:kept] if kept != len(self) else self

    def removeprefix(self, prefix: Any) -> Any:
        return self[len(self) - len(str.removeprefix(self, prefix)) :]

    def removesuffix(self, suffix: Any) -> Any:
        return self[: len(str.removesuffix(self, suffix))]

    # (the pieces of split, rsplit and splitlines are cut in one sweep: see _pieces)

    def split(self, sep: Any = None, maxsplit: Any = -1) -> list[Any]:
        parts = str.split(self, sep, maxsplit)
        starts = []
        position = 0
        for part in parts:
            if sep is None:  # whitespace runs: each part starts at the next non-space
                position = str.find(self, part, position)
            starts.append(position)
            position += len(part) + (0 if sep is None else len(sep))
        return _pieces(self, parts, starts)

    def rsplit(self, sep: Any = None, maxsplit: Any = -1) -> list[Any]:
        parts = str.rsplit(self, sep, maxsplit)
        starts = []
        end = len(self)
        for part in reversed(parts):
            start = str.rfind(self, part, 0, end) if sep is None else end - len(part)
            starts.append(start)
            end = start - (0 if sep is None else len(sep))
        starts.reverse()
        return _pieces(self, parts, starts)

    def splitlines(self, keepends: Any = False) -> list[Any]:
        lines = []
        starts = []
        position = 0
        for line in str.splitlines(self, True):
            starts.append(position)
            position += len(line)
            lines.append(line if keepends else str.splitlines(line)[0])
        return _pieces(self, lines, starts)

    def partition(self, sep: Any) -> tuple[Any, Any, Any]:
        head, found, _ = str.partition(self, sep)
        if not found:
            return (self[:], "", "")
        cut = len(head)
        return (self[:cut], self[cut : cut + len(found)], self[cut + len(found) :])

    def rpartition(self, sep: Any) -> tuple[Any, Any, Any]:
        head, found, _ = str.rpartition(self, sep)
        if not found:
            return ("", "", self[:])
        cut = len(head)
        return (self[:cut], self[cut : cut + len(found)], self[cut + len(found) :])

    def replace(self, old: Any, new: Any, count: Any = -1) -> Any:
        result = str.replace(self, old, new, count)
        if old and str.__eq__(result, self):  # nothing replaced (escaping text without markup)
            return self
        if not old:
            return derived(result, (self, new))
        # The kept runs of this string, and the inserted copies of ``new``, as str.replace
        # finds them: left to right, without overlaps (Python work per match: charged first).
        charge_steps(str.count(self, old) // FILTER_ITEMS_PER_STEP)
        own = self.segments
        inserted = getattr(new, "segments", ())
        kept: list[tuple[int, int, int]] = []  # (the runs of this string kept, where they go)
        places: list[int] = []  # (where the copies of new go)
        position = done = at = 0  # (at: the position in the result)
        while count < 0 or done < count:
            found = str.find(self, old, position)
            if found < 0:
                break
            kept.append((position, found, at - position))
            at += found - position
            places.append(at)
            at += len(new)
            position = found + len(old)
            done += 1
        kept.append((position, len(self), at - position))
        if len(places) * len(inserted) > EXACT_SEGMENTS:
            return derived(result, (self, new))
        segments: list[tuple] = []
        for pieces in _cut(own, kept):
            segments += pieces
        for place in places:
            _place(segments, inserted, place)
        return _make(result, segments)

    def join(self, iterable: Iterable[Any]) -> Any:
        items = list(iterable)
        result = str.join(self, items)  # Python's own error for a non-string item
        return _checked(_interleave(self, items), result, (self, items))

    def center(self, width: Any, fillchar: Any = " ") -> Any:
        result = str.center(self, width, fillchar)
        margin = len(result) - len(self)
        left = margin // 2 + (margin & width & 1)
        return _padded(self, result, left)

    def ljust(self, width: Any, fillchar: Any = " ") -> Any:
        return _padded(self, str.ljust(self, width, fillchar), 0)

    def rjust(self, width: Any, fillchar: Any = " ") -> Any:
        result = str.rjust(self, width, fillchar)
        return _padded(self, result, len(result) - len(self))

    def upper(self) -> Any:
        return _recased(self, str.upper(self))

    def lower(self) -> Any:
        return _recased(self, str.lower(self))

    def casefold(self) -> Any:
        return _recased(self, str.casefold(self))

    def swapcase(self) -> Any:
        return _recased(self, str.swapcase(self))

    def title(self) -> Any:
        return _recased(self, str.title(self))

    def capitalize(self) -> Any:
        return _recased(self, str.capitalize(self))

    def zfill(self, width: Any) -> Any:
        return derived(str.zfill(self, width), (self,))

    def expandtabs(self, tabsize: Any = 8) -> Any:
        return derived(str.expandtabs(self, tabsize), (self,))


class SourcedMarkup(Markup):
    """Markup (``|safe``, ``"x"|safe + y``) computed from sourced strings: still markup for the
    filters that escape, attributed as a whole to its sources."""

    segments: tuple[Segment, ...]


_EXACT_METHODS = frozenset(name for name in vars(Sourced) if name[:1] != "_")

SourcedMarkup.__name__ = SourcedMarkup.__qualname__ = "Markup"
SourcedMarkup.__module__ = Markup.__module__
_SOURCED = (Sourced, SourcedMarkup)
_TEXT = frozenset([str, Sourced])  # strings that add as text (markup escapes what it is added)

# Python's messages name the operand's type ("can only concatenate list (not "str") to list"):
# a sourced string must read as the str it stands for.
Sourced.__name__ = Sourced.__qualname__ = "str"
Sourced.__module__ = "builtins"


# -------------------------------------------------------------------- building blocks


def _make(text: str, segments: Iterable[tuple]) -> Any:
    if segments.__class__ is not tuple:
        segments = tuple(segments)
    if not segments or not text:
        return text if text.__class__ is str else str.__str__(text)
    if len(segments) >= _CHARGED_SEGMENTS:
        charge_memory(len(segments) * SEGMENT_BYTES)
    result = str.__new__(Sourced, text)
    result.segments = segments
    return result


# Inside a render a segment is a plain (start, end, path, offset, verbatim) tuple, which is
# cheaper to make; the result turns them into Segments.


def _clip(segments: tuple[tuple, ...], low: int, high: int, shift: int) -> list[tuple]:
    if len(segments) == 1:  # (one value's text: most strings)
        first, last, path, offset, verbatim = segments[0]
        start = first if first > low else low
        end = last if last < high else high
        if start >= end:
            return []
        if offset is not None:
            offset += start - first
        return [(start + shift, end + shift, path, offset, verbatim)]
    if len(segments) > ITEMS_PER_STEP:
        # A walk of every segment, per slice or per match of the caller (a replace, a split,
        # an iteration): charged before it runs, or ``escape`` of a traced string with many
        # segments is quadratic for free.  (Up to 64 segments it is within the caller's step.)
        charge_steps(len(segments) // FILTER_ITEMS_PER_STEP)
    clipped = []
    for first, last, path, offset, verbatim in segments:
        start = first if first > low else low
        end = last if last < high else high
        if start < end:
            if offset is not None:
                offset += start - first
            clipped.append((start + shift, end + shift, path, offset, verbatim))
    return clipped


# A string keeps exact segments (a run per piece of a source) up to this many where an
# operation would multiply them (a repetition, copies of a replacement); beyond it the
# result is attributed to each of its sources once, as a whole.
EXACT_SEGMENTS = 4096
# What a segment takes in memory, about (a tuple of five and its numbers), charged to the
# render's memory budget with the work of making it, for strings of many segments.
SEGMENT_BYTES = 96
_CHARGED_SEGMENTS = CHARS_PER_STEP // SEGMENT_BYTES
# A stepped slice keeps a segment per character up to this length (a reversed name keeps
# where each of its characters came from); a longer one keeps one run per source segment.
_STEPPED_EXACT = 256


def _cut(segments: tuple[tuple, ...], cuts: Iterable[tuple[int, int, int]]) -> Iterator[list]:
    """``_clip(segments, low, high, shift)`` for each of ``cuts``, whose ranges come in order
    and do not overlap, in one sweep: the segments sorted once by start, each one kept
    while the ranges reach it (the work is that of the segments made, not ranges x
    segments)."""
    if len(segments) == 1:
        for low, high, shift in cuts:
            yield _clip(segments, low, high, shift)
        return
    ordered = sorted(segments, key=_START)
    count = len(ordered)
    following = 0  # (the first segment not yet reached)
    active: list[tuple] = []
    for low, high, shift in cuts:
        while following < count and ordered[following][0] < high:
            active.append(ordered[following])
            following += 1
        if low >= high:
            yield []
            continue
        clipped = []
        kept = []
        for segment in active:
            first, last, path, offset, verbatim = segment
            if last <= low:
                continue  # (behind this range, and so behind every later one)
            kept.append(segment)
            start = first if first > low else low
            end = last if last < high else high
            if start < end:
                if offset is not None:
                    offset += start - first
                clipped.append((start + shift, end + shift, path, offset, verbatim))
        active = kept
        yield clipped


_START = itemgetter(0)
# What one sourced piece (a string and its segments, made in Python) is charged, in items of
# charge_work (ITEMS_PER_STEP of them make a step): about a microsecond, a quarter of a step.
PIECE_ITEMS = 16
_CHARS_BLOCK = 1024


def _pieces(text: Sourced, parts: list[str], starts: list[int]) -> list[Any]:
    # The parts of ``text`` (plain strings found at ``starts``, in order) with their segments.
    charge_work(items=len(parts) * PIECE_ITEMS)
    cuts = ((start, start + len(part), -start) for part, start in zip(parts, starts, strict=True))
    return [_make(part, found) for part, found in zip(parts, _cut(text.segments, cuts), strict=True)]


def _stepped(segments: tuple[tuple, ...], indices: range) -> list[tuple]:
    """The segments of the characters at ``indices`` (a slice with a step), in order: one per
    character for a short result, else one run per source segment (the characters a segment
    gives are consecutive in the result, but not in its source: no offset)."""
    if len(indices) <= _STEPPED_EXACT:
        found: list[tuple] = []
        for position, index in enumerate(indices):
            found.extend(_clip(segments, index, index + 1, position - index))
        return found
    runs = []
    for first, last, path, _, _ in segments:
        # the positions p with first <= indices[p] < last form one range of positions
        low, high = _positions(indices, first, last)
        if low < high:
            runs.append((low, high, path, None, False))
    return runs


def _positions(indices: range, first: int, last: int) -> tuple[int, int]:
    start, step, count = indices.start, indices.step, len(indices)
    if step > 0:
        low = max(0, -((start - first) // step))  # (ceil((first - start) / step))
        high = min(count, -((start - last) // step))
    else:
        back = -step
        low = max(0, (start - last) // back + 1)
        high = min(count, (start - first) // back + 1)
    return low, high


def join_text(parts: Iterable[Any]) -> Any:
    """``"".join(parts)``, keeping the sources of sourced parts (the joins of captured output)."""
    if parts.__class__ is not list and parts.__class__ is not tuple:
        parts = list(parts)
    text = "".join(parts)
    segments = None  # (most captured output holds no caller text)
    position = 0
    for part in parts:
        kind = part.__class__
        if kind is str:
            position += len(part)
            continue
        if kind is Sourced or kind is SourcedMarkup:
            own = part.segments
            if segments is None:
                segments = []
            _place(segments, own, position)
        position += len(part)
    return text if segments is None else _make(text, segments)


def _place(segments: list[Any], own: Any, position: int) -> None:
    """Add a part's segments to ``segments``, moved to where the part starts in the text."""
    if not position:
        segments += own
    elif len(own) == 1:  # (the usual case: one value's text)
        start, end, path, offset, verbatim = own[0]
        segments.append((start + position, end + position, path, offset, verbatim))
    else:
        segments += [
            (start + position, end + position, path, offset, verbatim)
            for start, end, path, offset, verbatim in own
        ]


def _interleave(separator: str, items: list[Any]) -> Any:
    parts: list[Any] = []
    for index, item in enumerate(items):
        if index:
            parts.append(separator)
        parts.append(item)
    return join_text(parts)


def paths_of(values: Iterable[Any], depth: int = 6) -> list[Path]:
    """The distinct source paths of the sourced strings in ``values`` (lists, dicts: nested
    ``depth`` levels below ``values``).

    The walk goes level by level and reads each container once (``l2 = [l1, l1]``, ``l1 = [l0,
    l0]``: three containers, not a tree), and is charged to the running render by the items it
    reads, before it reads them."""
    found: dict[Path, None] = {}
    seen: set[int] = set()
    level = [values]
    unpaid = 0  # (items read and not yet charged: the charge is by ITEMS_PER_STEP)
    while level:
        below: list[Any] = []
        for value in level:
            cls = value.__class__
            if cls is Sourced or cls is SourcedMarkup:
                for segment in value.segments:
                    found[segment[2]] = None
            elif depth > 0 and (cls is list or cls is tuple or isinstance(value, (list, tuple))):
                if id(value) not in seen:
                    seen.add(id(value))
                    below += value
            elif depth > 0 and isinstance(value, dict):
                if id(value) not in seen:
                    seen.add(id(value))
                    below += value.values()
        depth -= 1
        unpaid += len(below)
        if unpaid >= _CHARGED_ITEMS:
            charge_work(items=unpaid)
            unpaid = 0
        level = below
    return list(found)


# (charge_work counts items by the step's worth of them)
_CHARGED_ITEMS = 64


def derived(result: Any, inputs: Any) -> Any:
    """``result``, computed from ``inputs``, attributed as a whole to every source of them."""
    if not result or not (result.__class__ is str or isinstance(result, Markup)):
        return result
    paths = inputs.get() if inputs.__class__ is _Paths else paths_of(inputs)
    segments = tuple((0, len(result), p, None, False) for p in paths)
    if not segments:
        return result
    if result.__class__ is str:
        return _make(result, segments)
    marked = str.__new__(SourcedMarkup, result)
    marked.segments = segments
    return marked


def _checked(candidate: Any, result: str, inputs: Iterable[Any]) -> Any:
    # An exact reconstruction is kept only when its text is the real result's.
    if str.__eq__(candidate, result):
        return candidate if candidate.__class__ is Sourced else result
    return derived(result, inputs)


def _padded(original: Sourced, result: str, left: int) -> Any:
    right = left + len(original)
    return _checked(join_text((result[:left], original, result[right:])), result, (original,))


def _recased(original: Sourced, result: str) -> Any:
    # A change of case that keeps the length keeps every character in its place.
    if len(result) != len(original):
        return derived(result, (original,))
    return _make(result, ((*segment[:4], False) for segment in original.segments))


# -------------------------------------------------------------------- formatting

_PERCENT_FIELD = re.compile(r"%(?:\(([^)]*)\))?([-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?)([a-zA-Z%])")


def percent_format(template: str, args: Any) -> Any:
    """``template % args``, exact for plain ``%s`` fields and literal text of a plain template."""
    result = str.__mod__(template, args)
    if template.__class__ is Sourced or not paths_of((args,)):
        return derived(result, (template, args))
    values = args if isinstance(args, tuple) else (args,)
    parts: list[Any] = []
    position = next_value = 0
    for match in _PERCENT_FIELD.finditer(template):
        parts.append(template[position : match.start()])
        position = match.end()
        key, spec, kind = match.groups()
        if kind == "%":
            parts.append("%")
            continue
        if key is not None:
            value = args[key]
        else:
            if next_value >= len(values) or "*" in spec:
                return derived(result, (template, args))
            value = values[next_value]
            next_value += 1
        if kind == "s" and not spec and isinstance(value, str):
            parts.append(value)
        else:
            parts.append(derived(("%" + spec + kind) % (value,), (value,)))
    parts.append(template[position:])
    return _checked(join_text(parts), result, (template, args))


def str_format(template: str, result: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``template.format(...)``'s result, exact for plain ``{}``, ``{0}`` and ``{name}`` fields."""
    import string

    if template.__class__ is Sourced or not paths_of((args, kwargs)):
        return derived(result, (template, args, kwargs))
    parts: list[Any] = []
    automatic = 0
    try:
        for literal, field, spec, conversion in string.Formatter().parse(template):
            parts.append(literal)
            if field is None:
                continue
            if spec or conversion:
                return derived(result, (template, args, kwargs))
            if field == "":
                value = args[automatic]
                automatic += 1
            elif field.isdigit():
                value = args[int(field)]
            elif field.isidentifier():
                value = kwargs[field]
            else:
                return derived(result, (template, args, kwargs))
            parts.append(value if isinstance(value, str) else str(value))
    except (ValueError, LookupError):
        return derived(result, (template, args, kwargs))
    return _checked(join_text(parts), result, (template, args, kwargs))


# -------------------------------------------------------------------- JSON

_JSON_STRING = json.JSONEncoder(ensure_ascii=False).encode
_encode_string = json.encoder.encode_basestring  # (ensure_ascii off: escapes what JSON must)
# Tool schemas repeat their keys ("type", "description"): short ones are remembered.
_key_text = lru_cache(maxsize=1024)(_encode_string)
_JSON_ESCAPED = re.compile(r'[\x00-\x1f\\"]')


def json_text(value: Any, indent: int | None, result: str) -> Any:
    """``tojson``'s ``result`` with each string's characters traced (ensure_ascii off).

    The value is walked as the encoder writes it, counting positions in ``result``; every key
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
    """:func:`json_text` of a ``result`` that is json's own text of ``value`` (ensure_ascii
    off, any indent, keys in order); None where that cannot be read off it.

    Every ``"`` outside a string is escaped in JSON, and the encoder writes the strings (keys
    and values) in the order it is handed them: each string starts at the first ``"`` after
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


# -------------------------------------------------------------------- the caller's values


def track_value(value: Any, path: Path, in_place: bool = False) -> Any:
    """A copy of ``value`` whose strings (nested in lists, tuples and dicts) are sourced.

    ``in_place``: ``value`` was made for this render alone (the chat layer's copy of the
    caller's data): its dicts and lists get the sourced strings in place of the plain ones
    instead of being copied.

    Each string gets the path it is reached by, so a container the value holds twice is
    traced (copied) twice: where that would make more than ``max_items`` items of a value that
    holds fewer, or the value contains itself, a :class:`LimitError` is raised before any copy
    (``[x, x]`` forty levels deep would be a tree of 2**40).  Data nested deeper than
    :data:`MAX_TRACED_DEPTH` is refused alike; the walk keeps its own stack."""
    kind = value.__class__
    if kind is str:
        return _source(value, path) if value else value
    if kind in _LEAVES:
        return value
    try:
        return _traced(value, path, in_place, False)
    except _Shared:
        pass
    _check_expansion(value, path)
    return _traced(value, path, False, True)


#: How deeply the strings of a traced value may nest (each path names every level).
MAX_TRACED_DEPTH = 1000


class _Shared(Exception):
    """A container met twice while tracing (see track_value)."""


def _traced(value: Any, path: Path, in_place: bool, shared: bool) -> Any:
    # The walk of track_value, by a stack of (holder, key, value, path): the traced value is
    # stored at holder[key].  A tuple is built as a list, made a tuple once its items are
    # (the (holder, key) entries).  ``shared``: containers met twice are copied twice.
    seen: set[int] | None = None if shared else set()
    top: list[Any] = [None]
    stack: list[tuple] = [(top, 0, value, path)]
    new = str.__new__
    leaves = _LEAVES
    while stack:
        task = stack.pop()
        if len(task) == 2:
            holder, key = task
            holder[key] = tuple(holder[key])
            continue
        holder, key, value, path = task
        kind = value.__class__
        if kind is dict or kind is list or kind is tuple:
            if seen is not None:
                if id(value) in seen:
                    raise _Shared
                seen.add(id(value))
            if len(path) > MAX_TRACED_DEPTH:
                raise LimitError(
                    f"the value of {path[0]!r} nests deeper than provenance traces"
                    f" ({MAX_TRACED_DEPTH} levels)"
                )
        else:
            holder[key] = _traced_leaf(value, path)
            continue
        if kind is dict:
            # (the leaves inline: this copy is most of what provenance costs a small template)
            copy = value if in_place else {}
            for name, item in value.items():  # (in place, values are replaced, never keys)
                cls = item.__class__
                if cls is str:
                    if item:
                        sourced = new(Sourced, item)
                        sourced.segments = ((0, len(item), (*path, name), 0, True),)
                        copy[name] = sourced
                    else:
                        copy[name] = item
                elif cls in leaves:
                    copy[name] = item
                else:
                    if not in_place:  # (its place, filled when its turn comes; in place, the
                        copy[name] = None  # value stays until then: a retrace may read it)
                    stack.append((copy, name, item, (*path, name)))
            holder[key] = copy
            continue
        items = value if in_place and kind is list else list(value)
        if kind is tuple:
            stack.append((holder, key))
        for index, item in enumerate(items):
            cls = item.__class__
            if cls is str:
                if item:
                    items[index] = _source(item, (*path, index))
            elif cls not in leaves:
                stack.append((items, index, item, (*path, index)))
        holder[key] = items
    return top[0]


def _traced_leaf(value: Any, path: Path) -> Any:
    if value.__class__ is str:
        return _source(value, path) if value else value
    if isinstance(value, str) and not isinstance(value, Markup):
        text = str.__str__(value)
        return _source(text, path) if text else text
    return value


def check_traceable(value: Any, path: Path) -> None:
    """Refuse, with the LimitError of :func:`track_value`, a value whose tree would pass
    ``max_items`` or that contains itself, before anything walks it as a tree (its ``repr``)."""
    if value.__class__ in (dict, list, tuple) and _meets_twice(value):
        _check_expansion(value, path)


def _meets_twice(value: Any) -> bool:
    # Whether a walk of ``value`` meets a list, tuple or dict twice (shared, or containing
    # itself): one pass over its containers, stopped at the first met again.
    seen: set[int] = set()
    pending = [value]
    containers = (dict, list, tuple)
    while pending:
        item = pending.pop()
        if id(item) in seen:
            return True
        seen.add(id(item))
        for child in item.values() if item.__class__ is dict else item:
            if child.__class__ in containers:
                pending.append(child)
    return False


def _check_expansion(value: Any, path: Path) -> None:
    """Refuse a value whose tree (shared containers counted each time they are met) holds
    more than ``max_items`` items, or that contains itself: the counts are found by one
    walk of its distinct containers."""
    limits = current_limits()
    sizes: dict[int, int] = {}  # id -> items of its tree; -1 while its items are counted
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, closing = stack.pop()
        key = id(item)
        if closing:
            items = item.values() if item.__class__ is dict else item
            total = len(items)
            for child in items:
                if child.__class__ in (dict, list, tuple):
                    total += sizes[id(child)]
            sizes[key] = total
            continue
        known = sizes.get(key)
        if known is not None:
            if known < 0:
                raise LimitError(f"the value of {path[0]!r} contains itself: provenance cannot trace it")
            continue
        sizes[key] = -1
        stack.append((item, True))
        items = item.values() if item.__class__ is dict else item
        for child in items:
            if child.__class__ in (dict, list, tuple):
                if sizes.get(id(child)) == -1:
                    raise LimitError(
                        f"the value of {path[0]!r} contains itself: provenance cannot trace it"
                    )
                stack.append((child, False))
    expanded = sizes[id(value)]
    if expanded > limits.max_items:
        raise LimitError(
            f"the value of {path[0]!r} holds {expanded} items once its shared lists and dicts"
            f" are traced at each place they occur, more than max_items ({limits.max_items})"
        )


_LEAVES = frozenset([int, float, bool, type(None)])


def _source(text: str, path: Path) -> Sourced:
    result = str.__new__(Sourced, text)
    result.segments = ((0, len(text), path, 0, True),)
    return result


# -------------------------------------------------------------------- the compiler's switch


def track_operations(compiler: Any) -> None:
    """Make ``compiler`` build a template whose operations keep the sources of strings."""
    compiler.binops = {
        name: _tracked_operator(name, op) if name in _TEXT_OPERATORS else op
        for name, op in compiler.binops.items()
    }
    compiler.method_getattr = _tracked_lookup(compiler.policy_getattr)
    compiler.method_getitem = _tracked_lookup(compiler.policy_getitem)
    compiler.comparisons = {
        **compiler.comparisons,
        "==": _short_text_first(compiler.comparisons["=="], operator.eq),
        "!=": _short_text_first(compiler.comparisons["!="], operator.ne),
    }
    compiler.track_filter = tracked_filter
    compiler.track_printed = Printed
    compiler.add_chain = SourcedAddChain
    compiler.output = sourced_output


def _short_text_first(
    compare: Callable[[Any, Any], bool], direct: Callable[[Any, Any], bool]
) -> Callable[[Any, Any], bool]:
    # A short string compares with anything in bounded time: the evaluators' fast path for a
    # plain one (``message.role == 'user'``), taken for a sourced one too.
    def checked(a: Any, b: Any) -> bool:
        if a.__class__ is Sourced and len(a) <= CHARS_PER_STEP:
            return direct(a, b)
        return compare(a, b)

    return checked


class SourcedAddChain(AddChain):
    """``a + b + c``: a run of string operands is joined once, keeping the sources, instead of
    making a sourced string per ``+``; the lengths are checked and charged as each ``+`` would."""

    __slots__ = ("short",)
    short: int

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        # (sums shorter than this cost nothing: see ops.make_add)
        self.short = min(CHARS_PER_STEP, self.limits.max_string + 1)

    def eval(self, frame: Any) -> Any:
        total, parts = self.parts(frame)
        return total if parts is None else join_text(parts)

    def parts(self, frame: Any) -> tuple[Any, list[Any] | None]:
        """The sum, as ``(None, strings)`` while every operand is a string (the strings to
        join), else as ``(value, None)``."""
        total = self.first.eval(frame)
        text = _TEXT
        parts = None  # the strings added so far, while every operand is one
        length = 0
        short = self.short
        for pos, operand in self.operands:
            value = operand.value if operand.__class__ is Const else operand.eval(frame)
            if (
                parts is None
                and total.__class__ is str
                and value.__class__ is str
                and len(total) + len(value) <= CHARS_PER_STEP
            ):
                total = total + value  # (plain text: AddChain's own fast path)
                continue
            if value.__class__ in text and (parts is not None or total.__class__ in text):
                if parts is None:
                    parts = [total]
                    length = len(total)
                length += len(value)
                if length >= short:
                    try:
                        check_length(length, self.limits)
                    except Exception as error:
                        raise located(error, pos) from None
                parts.append(value)
                continue
            if parts is not None:
                total = join_text(parts)
                parts = None
            try:
                total = self.add(total, value)
            except Exception as error:
                raise located(error, pos) from None
        return (total, None) if parts is None else (None, parts)


def printed_text(value: Any) -> Any:
    """What ``{{ x }}`` and ``~`` print of ``value``, keeping its sources: a container's text
    (its ``repr``) is attributed to every source it holds."""
    cls = value.__class__
    if cls is Sourced or cls is str:
        return value
    if cls is SourcedMarkup:  # printing makes it text (str() of it is plain)
        return _make(str.__str__(value), value.segments)
    if isinstance(value, (list, tuple, dict)):
        return derived(to_string(value), (value,))
    return to_string(value)


class SourcedOutput(Output):
    """``{{ x }}`` of a template compiled with provenance."""

    __slots__ = ()
    printed = staticmethod(printed_text)


class SourcedSumOutput(SourcedOutput):
    """``{{ a + b + c }}`` of a template compiled with provenance: a sum of strings is printed
    as its strings, which the output joins anyway, instead of being joined first."""

    __slots__ = ()
    expr: SourcedAddChain

    def run(self, frame: Any, out: list[Any]) -> None:
        value, parts = self.expr.parts(frame)
        if parts is None:  # (what Output.run does with the value)
            if value.__class__ is not str:
                try:
                    value = printed_text(value)
                except Exception as error:
                    raise located(error, self.pos) from None
            parts = [value]
        state = frame.state
        state.size += sum(map(len, parts))
        if state.size > self.max_output:
            state.grow(0)
        out += parts


def sourced_output(expr: Any, pos: int, max_output: int, cost: int = 1) -> Output:
    """The statement ``{{ expr }}`` of a template compiled with provenance."""
    kind = SourcedSumOutput if expr.__class__ is SourcedAddChain else SourcedOutput
    return kind(expr, pos, max_output, cost)


class Printed:
    """An operand of ``~`` of a template compiled with provenance: evaluates to what it prints
    (see :func:`printed_text`)."""

    __slots__ = ("expr",)
    expr: Any

    def __init__(self, expr: Any) -> None:
        self.expr = expr

    def eval(self, frame: Any) -> Any:
        value = self.expr.eval(frame)
        if value.__class__ is str or value.__class__ is Sourced:
            return value
        try:
            return printed_text(value)
        except Exception:
            return value  # printing it again fails where the engine places its errors


# The operators that can make text of text (`-`, `/`, `//` and `**` only make numbers).
_TEXT_OPERATORS = frozenset(["+", "*", "%"])


def _tracked_operator(name: str, op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def operate(a: Any, b: Any) -> Any:
        result = op(a, b)
        if result.__class__ is str and result:
            if name == "%" and a.__class__ is str:
                return percent_format(a, b)
            return derived(result, (a, b))
        if isinstance(result, Markup) and result.__class__ is not SourcedMarkup:
            return derived(result, (a, b))
        return result

    return operate


def _tracked_lookup(lookup: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def find(obj: Any, name: Any) -> Any:
        value = lookup(obj, name)
        if (
            isinstance(obj, str)
            and isinstance(name, str)
            and name in STR_METHODS
            and not isinstance(value, Undefined)
        ):
            return _tracked_method(obj, name, value)
        return value

    return find


def _tracked_method(obj: str, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        if name == "join" and len(args) == 1 and not kwargs and obj.__class__ is str:
            items = list(args[0]) if not isinstance(args[0], list) else args[0]
            return _checked(_interleave(obj, items), method(items), (obj, items))
        result = method(*args, **kwargs)
        if result.__class__ is Sourced:
            if obj.__class__ is Sourced and name in _EXACT_METHODS:
                return result  # what it left untraced is the arguments' plain text
            return _completed(result, (obj, args, kwargs))
        if result.__class__ is not str or not result:
            return result
        if name in ("format", "format_map"):
            if name == "format_map":
                return str_format(obj, result, (), args[0] if args else {})
            return str_format(obj, result, args, kwargs)
        return derived(result, (obj, args, kwargs))

    return call


def tracked_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` (the filter ``name``), its string results keeping their sources."""
    if name in _PASSING and func is FILTERS.get(name):
        return func
    exact = _EXACT_FILTERS.get(name)
    if name == "tojson" and func is chat_tojson:
        exact = _exact_chat_tojson
    takes_environment = wants_environment(func)

    def apply(*args: Any, **kwargs: Any) -> Any:
        inputs = args[1:] if takes_environment else args
        if exact is not None:
            if name == "join" and inputs and not isinstance(inputs[0], (list, tuple, str, dict)):
                # a generator is read once: for the filter and for the exact join alike
                inputs = (list(inputs[0]), *inputs[1:])
                args = (args[0], *inputs) if takes_environment else inputs
            result = func(*args, **kwargs)
            if isinstance(result, Markup):
                return derived(result, (inputs, kwargs))
            try:
                return exact(result, *inputs, **kwargs)
            except Exception:  # a shape the exact form does not know: conservative
                return _settle(result, inputs, kwargs)
        return _settle(func(*args, **kwargs), inputs, kwargs)

    if takes_environment:
        apply.jinja_pass_arg = func.jinja_pass_arg  # type: ignore[attr-defined]
    apply.__name__ = getattr(func, "__name__", name)
    return apply


def _settle(result: Any, inputs: tuple, kwargs: dict) -> Any:
    # A string made from sourced inputs is attributed to all of them where no exact
    # operation traced it (Markup stays untracked: its type decides how later filters
    # escape it).
    if result.__class__ is str or result.__class__ is Sourced:
        return _completed(result, (inputs, kwargs))
    if isinstance(result, Markup) and result.__class__ is not SourcedMarkup:
        return derived(result, (inputs, kwargs))
    if result.__class__ is list and any(isinstance(item, str) for item in result):
        paths = _Paths((inputs, kwargs))  # (the inputs walked once for all the items)
        return [_completed(item, paths) for item in result]
    return result


class _Paths:
    """The paths of ``inputs``, found when first asked (see paths_of)."""

    __slots__ = ("inputs", "found")

    def __init__(self, inputs: Any) -> None:
        self.inputs = inputs
        self.found: list[Path] | None = None

    def get(self) -> list[Path]:
        if self.found is None:
            self.found = paths_of(self.inputs)
        return self.found


def _completed(result: Any, inputs: Any) -> Any:
    """``result`` with every character no segment covers attributed to all of ``inputs``.

    A filter written for plain strings may trace part of its result (a sourced operand added
    to a plain one) and lose the rest (a plain ``"".join``): the untraced characters are
    attributed to every source, so that none is left without one.
    """
    if result.__class__ is str:
        return derived(result, inputs)
    if result.__class__ is not Sourced:
        return result
    gaps = _uncovered(result.segments, len(result))
    if not gaps:
        return result
    paths = inputs.get() if inputs.__class__ is _Paths else paths_of(inputs)
    extra = [(start, end, path, None, False) for start, end in gaps for path in paths]
    return _make(result, (*result.segments, *extra))


def _uncovered(segments: tuple[tuple, ...], length: int) -> list[tuple[int, int]]:
    # The maximal runs of [0, length) that no segment covers, in order.
    if len(segments) == 1 and segments[0][0] == 0 and segments[0][1] >= length:
        return []  # (one value's text, the whole of it: the usual case)
    gaps = []
    reached = 0
    for start, end in sorted(segment[:2] for segment in segments):
        if end <= start:
            continue
        if start > reached:
            gaps.append((reached, start))
        if end > reached:
            reached = end
    if reached < length:
        gaps.append((reached, length))
    return gaps


def _exact_join(result: str, value: Any, d: Any = "", attribute: Any = None) -> Any:
    if attribute is not None:
        return derived(result, (value, d))
    items = [item if isinstance(item, str) else str(item) for item in value]
    return _checked(_interleave(str(d), items), result, (value, d))


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


# Traced containers that outlive a render unchanged (see keep_traced), by id: the container
# itself (which keeps its id its own) and the traced tojson texts of it, by text.  What they
# hold is counted in bytes (about) and bounded by KEPT_BYTES: past it, all are let go.
_KEPT: dict[int, tuple[Any, dict[str, Any]]] = {}
_KEPT_SIZE = [0]
#: bytes that the containers kept between renders and their tojson texts may hold together
KEPT_BYTES = 4 << 20
# (a container's own bytes, about, and a sourced string's beyond its characters)
_CONTAINER_BYTES = 256
_STRING_BYTES = 256
# (a segment kept: its tuple, its numbers, its place in the tuple of segments)
_KEPT_SEGMENT_BYTES = 2 * SEGMENT_BYTES


def keep_traced(value: Any) -> int:
    """Note that the containers of ``value``, traced data, are rendered again unchanged (a
    ``ChatTemplate`` keeps its callers' tools traced): tojson of one is then read off once.

    A template cannot change the data it is given, so a container's JSON text and its sources
    are the same at every render.  A value bigger than KEPT_BYTES is not kept.  Returns the
    bytes ``value`` holds, about (as counted against the bound)."""
    containers = []
    size = 0
    pending = [value]
    while pending:
        item = pending.pop()
        kind = item.__class__
        if kind is dict:
            pending.extend(item.values())
        elif kind is list or kind is tuple:
            pending.extend(item)
        else:
            if isinstance(item, str):
                size += len(item) + _STRING_BYTES
            continue
        size += _CONTAINER_BYTES + 8 * len(item)
        containers.append(item)
        if size > KEPT_BYTES:
            return size + sum(map(len, pending))  # (what was not walked, at least)
    if _kept_room(size):
        for item in containers:
            _KEPT[id(item)] = (item, {})
    return size


def _kept_room(size: int) -> bool:
    """Count ``size`` more bytes kept (letting all go first where they would pass the bound);
    false for more than the bound allows at all."""
    if size > KEPT_BYTES:
        return False
    if _KEPT_SIZE[0] + size > KEPT_BYTES:
        _KEPT.clear()
        _KEPT_SIZE[0] = 0
    _KEPT_SIZE[0] += size
    return True


# The nesting that the walk of json_text follows (it attributes a deeper value as a whole),
# with a margin below it for the limits under which the scan stands in for it.
_JSON_WALK_DEPTH = 190


def _exact_method(method: str) -> Callable[..., Any]:
    def apply(result: str, value: Any, *args: Any, **kwargs: Any) -> Any:
        if value.__class__ is not Sourced:
            return derived(result, (value, args, kwargs))
        return _checked(getattr(value, method)(*args), result, (value,))

    return apply


def _exact_title(result: str, value: Any) -> Any:
    if value.__class__ is Sourced and len(result) == len(value):
        return _recased(value, result)
    return derived(result, (value,))


def _exact_reverse(result: Any, value: Any) -> Any:
    if value.__class__ is Sourced:
        return _checked(value[::-1], result, (value,))
    return result if not isinstance(result, str) else derived(result, (value,))


def _exact_indent(
    result: str, s: Any, width: Any = 4, first: bool = False, blank: bool = False
) -> Any:
    indention = width if isinstance(width, str) else " " * width
    lines = (s + "\n").splitlines()
    if blank:
        text = _interleave("\n" + indention, lines)
    else:
        rest = [join_text((indention, line)) if line else line for line in lines[1:]]
        text = lines[0]
        if rest:
            text = join_text((text, "\n", _interleave("\n", rest)))
    if first:
        text = join_text((indention, text))
    return _checked(text, result, (s, width))


def _exact_format(result: str, value: Any, *args: Any, **kwargs: Any) -> Any:
    if args and not kwargs:
        return percent_format(value, args)
    return derived(result, (value, args, kwargs))


def _exact_map(result: Any, *inputs: Any, **kwargs: Any) -> Any:
    if isinstance(result, str):
        return derived(result, (inputs, kwargs))
    paths = _Paths((inputs, kwargs))  # (the inputs walked once for all the items)
    return (derived(item, paths) if item.__class__ is str else item for item in result)


# Built-in filters that make no text: they return numbers, or the input's own items (which
# keep their sources), or containers of them.
_PASSING = frozenset(
    """abs batch count d default dictsort first float groupby int items last length list max
    min random reject rejectattr round select selectattr slice sort sum unique wordcount""".split()
)

_EXACT_FILTERS: dict[str, Callable[..., Any]] = {
    "join": _exact_join,
    "tojson": _exact_tojson,
    "trim": _exact_method("strip"),
    "upper": _exact_method("upper"),
    "lower": _exact_method("lower"),
    "capitalize": _exact_method("capitalize"),
    "center": _exact_method("center"),
    "title": _exact_title,
    "reverse": _exact_reverse,
    "indent": _exact_indent,
    "format": _exact_format,
    "map": _exact_map,
}


# -------------------------------------------------------------------- the result


class Provenance(NamedTuple):
    """A render's text, the sources of its characters, and its ``{% generation %}`` spans."""

    text: str
    #: Sorted by start; spans may overlap where a derived string has several sources.
    segments: tuple[Segment, ...]
    generation_spans: list[tuple[int, int]]

    def sources_at(self, index: int) -> list[Path]:
        """The paths of the values the character at ``index`` came from (empty: template text)."""
        return [s.path for s in self.segments if s.start <= index < s.end]

    def char_sources(self) -> list[tuple[Path, ...]]:
        """For every character of ``text``, the paths it came from."""
        sources: list[list[Path]] = [[] for _ in self.text]
        for segment in self.segments:
            for index in range(segment.start, segment.end):
                if segment.path not in sources[index]:
                    sources[index].append(segment.path)
        return [tuple(paths) for paths in sources]


def collect(parts: list[Any], spans: list[tuple[int, int]]) -> Provenance:
    """The result of a render whose top-level output is ``parts``."""
    # (join_text's placing, without making a sourced string of the whole text)
    segments: list[tuple] = []
    position = 0
    for part in parts:
        kind = part.__class__
        if kind is Sourced or kind is SourcedMarkup:
            _place(segments, part.segments, position)
        position += len(part)
    segments.sort(key=_START_END)
    # (what Segment._make does, without its check)
    placed = tuple(map(tuple.__new__, repeat(Segment), segments))
    return Provenance("".join(parts), placed, list(spans))


_START_END = itemgetter(0, 1)
