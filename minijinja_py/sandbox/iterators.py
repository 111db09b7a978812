"""Iterators a template is handed by its caller (a generator, `itertools.count()`, a file):
walked at most `max_items` items, whatever walks them.

A list has a length that a filter's cost reads before it runs; an iterator has none, and one
without end keeps `sum`, `max`, `join` or `-1 in it` going for ever inside C code that no step
counter sees. So every iterator that enters a render, as a context value or as what a caller's
function returns, is wrapped: each item it yields is counted (a step per `ITEMS_PER_STEP`),
and the one past `max_items` raises `LimitError`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from ..errors import LimitError
from .budget import ITEMS_PER_STEP, charge_steps, current_limits

__all__ = ["BoundedIterator", "bound_context", "bounded"]


class BoundedIterator(Iterator[Any]):
    """A caller's iterator, walked at most `limit` items."""

    __slots__ = ("_source", "_left", "_limit")

    def __init__(self, source: Iterator[Any], limit: int) -> None:
        self._source = source
        self._left = limit
        self._limit = limit

    def __iter__(self) -> BoundedIterator:
        return self

    def __next__(self) -> Any:
        if self._left <= 0:
            raise LimitError(
                f"an iterator of more than {self._limit} items exceeds max_items ({self._limit})"
            )
        self._left -= 1
        if self._left % ITEMS_PER_STEP == 0:
            charge_steps(1)
        return next(self._source)

    def __repr__(self) -> str:
        # (printed as the caller's own object would be)
        return repr(self._source)


def _is_iterator(value: Any) -> bool:
    kind = type(value)
    # (the engine's own iterators, a cycler, are bounded by their makers: left as they are)
    return hasattr(kind, "__next__") and not kind.__module__.startswith("minijinja_py")


def bounded(value: Any) -> Any:
    """`value`, wrapped if it is an iterator (anything with `__next__`)."""
    if _is_iterator(value):
        return BoundedIterator(value, current_limits().max_items)
    return value


# What a context holds, never an iterator: looked up by exact type, without a call per value.
NOT_ITERATORS: Final = frozenset((str, list, dict, tuple, bool, int, float, type(None)))


def bound_context(context: dict[str, Any], limit: int) -> dict[str, Any]:
    """`context`, with its iterator values wrapped (itself when it holds none)."""
    plain = NOT_ITERATORS
    for value in context.values():
        # (looked at by exact type first: a plain value costs no call)
        if type(value) not in plain and _is_iterator(value):
            break
    else:
        return context
    return {
        key: BoundedIterator(value, limit) if _is_iterator(value) else value
        for key, value in context.items()
    }
