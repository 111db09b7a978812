"""The caller's values traced (each string sourced by the path it is reached by), refused
before a copy where tracing would expand them, and kept between renders when unchanged."""

from __future__ import annotations

from typing import Any

from ..errors import LimitError
from ..sandbox.budget import (
    current_limits,
)
from ..values.runtime import Markup
from .traced import SEGMENT_BYTES, Path, Sourced

# -------------------------------------------------------------------- the caller's values


def track_value(value: Any, path: Path, in_place: bool = False) -> Any:
    """A copy of `value` whose strings (nested in lists, tuples and dicts) are sourced.

    `in_place`: `value` was made for this render alone (the chat layer's copy of the
    caller's data): its dicts and lists get the sourced strings in place of the plain ones
    instead of being copied.

    Each string gets the path it is reached by, so a container the value holds twice is
    traced (copied) twice: where that would make more than `max_items` items of a value that
    holds fewer, or the value contains itself, a `LimitError` is raised before any copy
    (`[x, x]` forty levels deep would be a tree of 2**40).  Data nested deeper than
    `MAX_TRACED_DEPTH` is refused alike; the walk keeps its own stack."""
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
                if item:  # (_source, inlined as for a dict's strings)
                    sourced = new(Sourced, item)
                    sourced.segments = ((0, len(item), (*path, index), 0, True),)
                    items[index] = sourced
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
    """Refuse, with the LimitError of `track_value`, a value whose tree would pass
    `max_items` or that contains itself, before anything walks it as a tree (its `repr`)."""
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
    more than `max_items` items, or that contains itself: the counts are found by one
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
    """Note that the containers of `value`, traced data, are rendered again unchanged (a
    `ChatTemplate` keeps its callers' tools traced): tojson of one is then read off once.

    A template cannot change the data it is given, so a container's JSON text and its sources
    are the same at every render.  A value bigger than KEPT_BYTES is not kept.  Returns the
    bytes `value` holds, about (as counted against the bound)."""
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
    """Count `size` more bytes kept (letting all go first where they would pass the bound);
    false for more than the bound allows at all."""
    if size > KEPT_BYTES:
        return False
    if _KEPT_SIZE[0] + size > KEPT_BYTES:
        _KEPT.clear()
        _KEPT_SIZE[0] = 0
    _KEPT_SIZE[0] += size
    return True
