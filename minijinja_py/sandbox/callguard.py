"""Calls into Python code a template was given (context functions, methods of its objects).

CPython 3.13.0 to 3.13.7 skip the recursion-limit check on one path of Python-to-Python calls
(calls that need the general frame set-up, such as a function taking `*args`; CPython issue
gh-132744, fixed in 3.13.8).  A context function that recurses without end then piles its frames
up on the heap until the process runs out of memory, instead of raising RecursionError.  On those
versions a call the template makes into such code runs under a profile hook that counts Python
frames and raises RecursionError where the interpreter should have, which the render turns into
a LimitError like any other.  Elsewhere `GUARDED` is false and calls go straight through.
"""

from __future__ import annotations

import sys
from typing import Any, Final

GUARDED: Final = sys.implementation.name == "cpython" and (3, 13, 0) <= sys.version_info[:3] < (3, 13, 8)


class _DepthGuard:
    """A profile function: one level per Python frame entered, minus one per frame left."""

    __slots__ = ("depth", "limit", "previous")

    def __init__(self, limit: int, previous: Any) -> None:
        self.depth = 0
        self.limit = limit
        self.previous = previous  # a profiler already running keeps receiving its events

    def __call__(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "call":
            self.depth += 1
            if self.depth > self.limit:
                # CPython drops a profile function that raises; call_guarded restores it.
                raise RecursionError("maximum recursion depth exceeded")
        elif event == "return":
            self.depth -= 1
        if self.previous is not None:
            self.previous(frame, event, arg)


def _is_ours_or_builtin(target: Any) -> bool:
    module = getattr(target, "__module__", None) or type(target).__module__ or ""
    return module == "builtins" or module.startswith("minijinja_py")


def call_guarded(target: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    """`target(*args, **kwargs)`, with the depth of the Python code it runs counted."""
    current = sys.getprofile()
    if isinstance(current, _DepthGuard) or _is_ours_or_builtin(target):
        return target(*args, **kwargs)
    sys.setprofile(_DepthGuard(sys.getrecursionlimit(), current))
    try:
        return target(*args, **kwargs)
    finally:
        sys.setprofile(current)
