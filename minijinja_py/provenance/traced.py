"""The traced string: a `str` whose segments name where each of its characters came from,
the runs of segments its operations keep, and the conservative attribution of derived text."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from operator import itemgetter
from typing import Any, NamedTuple

from ..sandbox.budget import (
    CHARS_PER_STEP,
    FILTER_ITEMS_PER_STEP,
    ITEMS_PER_STEP,
    charge_memory,
    charge_steps,
    charge_work,
    register_plain_text,
)
from ..values.runtime import Markup

Path = tuple[Any, ...]


class Segment(NamedTuple):
    """Characters `[start, end)` came from the value at `path`.

    `offset` is where they begin in that source string when the operations were exact (None for
    a derived string, attributed to every source it was computed from); `verbatim` tells whether
    the characters equal the source's own (false after a case change, which keeps positions).
    """

    start: int
    end: int
    path: Path
    offset: int | None
    verbatim: bool


class Sourced(str):
    """A string that knows where its characters came from (its `segments`)."""

    segments: tuple[Segment, ...]

    def __str__(self) -> str:
        # str(x) and ~ keep the sources (filters call str() on their input)
        return self

    # (no __repr__ of its own: str's, inherited, prints it as the plain string, and the
    # sandbox's measure of printed data knows str's repr exactly, not a subclass's)

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
    """Markup (`|safe`, `"x"|safe + y`) computed from sourced strings: still markup for the
    filters that escape, attributed as a whole to its sources."""

    segments: tuple[Segment, ...]


_EXACT_METHODS = frozenset(name for name in vars(Sourced) if name[:1] != "_")

SourcedMarkup.__name__ = SourcedMarkup.__qualname__ = "Markup"
SourcedMarkup.__module__ = Markup.__module__
_SOURCED = (Sourced, SourcedMarkup)

# Python's messages name the operand's type ("can only concatenate list (not "str") to list"):
# a sourced string must read as the str it stands for.
Sourced.__name__ = Sourced.__qualname__ = "str"
Sourced.__module__ = "builtins"
# (its items are characters, its extra attribute is no method, it compares as str: `x['type']`
# of a traced character and `message.role == 'user'` take the plain string's fast paths)
register_plain_text(Sourced)


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
    """`_clip(segments, low, high, shift)` for each of `cuts`, whose ranges come in order
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
# Past this many pieces at once each is charged a whole step: the garbage collector's passes
# over the many objects kept alive double what each costs (3.5 us a piece for a split into
# 300,000, measured on a loaded 2-core machine, where a quarter step let a render spend 15 us
# per step).
MANY_PIECES = 64
_CHARS_BLOCK = 1024


def _pieces(text: Sourced, parts: list[str], starts: list[int]) -> list[Any]:
    # The parts of ``text`` (plain strings found at ``starts``, in order) with their segments.
    count = len(parts)
    many = count - MANY_PIECES if count > MANY_PIECES else 0
    charge_work(items=count * PIECE_ITEMS + many * (ITEMS_PER_STEP - PIECE_ITEMS))
    if len(text.segments) == 1:
        return _one_source_pieces(text.segments[0], parts, starts)
    cuts = ((start, start + len(part), -start) for part, start in zip(parts, starts, strict=True))
    return [_make(part, found) for part, found in zip(parts, _cut(text.segments, cuts), strict=True)]


def _one_source_pieces(segment: tuple, parts: list[str], starts: list[int]) -> list[Any]:
    """`_pieces` of a text with one segment (one value's text, the usual case): each part's
    segment is that one clipped, made in this loop (a piece costs a string and a tuple, not
    the calls of _cut, _clip and _make: a split into 300,000 pieces is a third of the time)."""
    first, last, path, offset, verbatim = segment
    make = str.__new__
    pieces: list[Any] = []
    append = pieces.append
    for part, start in zip(parts, starts, strict=True):
        end = start + len(part)
        low = first if first > start else start
        high = last if last < end else end
        if low >= high:
            append(part)
            continue
        piece = make(Sourced, part)
        at = None if offset is None else offset + low - first
        piece.segments = ((low - start, high - start, path, at, verbatim),)
        append(piece)
    return pieces


def _stepped(segments: tuple[tuple, ...], indices: range) -> list[tuple]:
    """The segments of the characters at `indices` (a slice with a step), in order: one per
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
    """`"".join(parts)`, keeping the sources of sourced parts (the joins of captured output)."""
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
            if len(own) == 1:  # (one value's text, placed without a call: see _place)
                start, end, path, offset, verbatim = own[0]
                segments.append((start + position, end + position, path, offset, verbatim))
            else:
                _place(segments, own, position)
        position += len(part)
    return text if segments is None else _make(text, segments)


def _place(segments: list[Any], own: Any, position: int) -> None:
    """Add a part's segments to `segments`, moved to where the part starts in the text."""
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
    """The distinct source paths of the sourced strings in `values` (lists, dicts: nested
    `depth` levels below `values`).

    The walk goes level by level and reads each container once (`l2 = [l1, l1]`, `l1 = [l0,
    l0]`: three containers, not a tree), and is charged to the running render by the items it
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
            elif cls is str or cls in _NO_SOURCES:
                continue  # (plain text and scalars, most arguments: no isinstance asked)
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
# Values that hold no sourced string and are no container (their walk ends at them).
_NO_SOURCES = frozenset([int, float, bool, type(None)])


def derived(result: Any, inputs: Any) -> Any:
    """`result`, computed from `inputs`, attributed as a whole to every source of them."""
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
    """`template % args`, exact for plain `%s` fields and literal text of a plain template."""
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
    """`template.format(...)`'s result, exact for plain `{}`, `{0}` and `{name}` fields."""
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


class _Paths:
    """The paths of `inputs`, found when first asked (see paths_of)."""

    __slots__ = ("inputs", "found")

    def __init__(self, inputs: Any) -> None:
        self.inputs = inputs
        self.found: list[Path] | None = None

    def get(self) -> list[Path]:
        if self.found is None:
            self.found = paths_of(self.inputs)
        return self.found
