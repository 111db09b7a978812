"""The walk of a for loop and the counters templates read (`loop.index0`, `loop.last`...).

The base of runtime.py's `LoopContext`, which adds what is printed or called by name
(`loop.cycle`, `loop.changed`, `loop.previtem`...): apart so that the compiled build compiles
what every iteration of every loop runs, while the methods a template may print keep the names
Jinja2's print (a compiled method prints as a built-in one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Final

from .._mypyc import mypyc_attr
from ..errors import LimitError


class _NoItem:
    __slots__ = ()

    def __repr__(self) -> str:
        return "missing"


#: No item: the end of the values, or no item taken ahead yet.
NO_ITEM: Final[Any] = _NoItem()


@mypyc_attr(allow_interpreted_subclasses=True)  # runtime.LoopContext derives from it
class LoopState:
    """Over a list it reads items by index.  Over anything else (a generator, a filter's lazy
    result) it pulls one item at a time, as Jinja's does: `loop.last` takes exactly one item
    ahead, `loop.length` takes the rest, and a loop left early leaves the others in the
    iterator."""

    __slots__ = (
        "_items", "_iterator", "_length", "_after", "_before", "_current", "_max_items",
        "index0", "depth0", "_recurse", "_last_changed",
    )  # fmt: skip
    _items: list[Any] | None
    _iterator: Iterator[Any] | None
    _length: int | None
    _after: Any  # the item taken ahead, not yet reached
    _before: Any
    _current: Any
    _max_items: int
    index0: int
    depth0: int
    _recurse: Callable[..., Any] | None
    _last_changed: Any

    def __init__(
        self,
        values: list[Any] | Iterator[Any],
        depth0: int,
        recurse: Callable[..., Any] | None,
        max_items: int = 0,
    ) -> None:
        if type(values) is list:
            self._items = values
            self._iterator = None
            self._length = len(values)
        else:
            self._items = None
            self._iterator = values  # type: ignore[assignment]
            self._length = None
        self._after = NO_ITEM
        self._before = NO_ITEM
        self._current = NO_ITEM
        self._max_items = max_items
        self.index0 = -1
        self.depth0 = depth0
        self._recurse = recurse
        self._last_changed = NO_ITEM

    def next_item(self) -> Any:
        """Move to the next item and return it; NO_ITEM at the end."""
        items = self._items
        if items is not None:
            index = self.index0 + 1
            if index >= self._length:  # type: ignore[operator]
                return NO_ITEM
            self.index0 = index
            return items[index]
        item = self._after
        if item is NO_ITEM:
            item = next(self._iterator, NO_ITEM)  # type: ignore[arg-type]
            if item is NO_ITEM:
                return NO_ITEM
        else:
            self._after = NO_ITEM
        self.index0 += 1
        self._before = self._current
        self._current = item
        return item

    def walk(self) -> Iterator[Any]:
        """The items from here on, each becoming the current one as it is reached."""
        items = self._items
        if items is not None:
            # next_item for a list, inlined: the index is read back on each pass, since
            # ``dict(loop)`` in the body takes the rest of the items too.
            length = self._length
            while True:
                index = self.index0 + 1
                if index >= length:  # type: ignore[operator]
                    return
                self.index0 = index
                yield items[index]
        while True:
            item = self.next_item()
            if item is NO_ITEM:
                return
            yield item

    def _peek(self) -> Any:
        if self._after is NO_ITEM:
            self._after = next(self._iterator, NO_ITEM)  # type: ignore[arg-type]
        return self._after

    @property
    def length(self) -> int:
        if self._length is None:
            rest = []
            limit = self._max_items
            for item in self._iterator:  # type: ignore[union-attr]
                rest.append(item)
                if limit and len(rest) > limit:
                    raise LimitError(f"an iterable of more than {limit} items exceeds max_items")
            self._iterator = iter(rest)
            self._length = len(rest) + self.index0 + 1 + (self._after is not NO_ITEM)
        return self._length

    @property
    def index(self) -> int:
        return self.index0 + 1

    @property
    def revindex(self) -> int:
        return self.length - self.index0

    @property
    def revindex0(self) -> int:
        return self.length - self.index0 - 1

    @property
    def first(self) -> bool:
        return self.index0 == 0

    @property
    def last(self) -> bool:
        if self._items is not None:
            return self.index0 == self._length - 1  # type: ignore[operator]
        return self._peek() is NO_ITEM

    @property
    def depth(self) -> int:
        return self.depth0 + 1
