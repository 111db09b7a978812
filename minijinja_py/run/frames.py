"""What a render carries from node to node: scopes, the render's state, loop control, errors."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..errors import LimitError, TemplateError, TemplateRuntimeError, bounded_text
from ..sandbox.budget import Budget, recursion_error
from ..sandbox.iterators import bound_context
from ..sandbox.limits import Limits

# (made once: a render's state starts with them, and replaces the first before it runs)
_NO_CONTEXT: dict[str, Any] = {}
_JOIN: Callable[[Iterable[str]], str] = "".join


class RenderState(Budget):
    """What one render counts (steps, output size, depth: see Budget) and collects."""

    __slots__ = ("root_out", "spans", "root", "context", "measured", "join")
    root_out: list[Any]
    measured: tuple[int, int]
    join: Callable[[Iterable[str]], str]

    def __init__(self, limits: Limits, root_out: list[Any]) -> None:
        Budget.__init__(self, limits)
        self.root: Frame | None = None
        # The render's variables and globals in one dict: where every name that the template
        # never assigns is found (see ContextName); the render's own, given before it starts.
        self.context: dict[str, Any] = _NO_CONTEXT
        self.root_out = root_out
        self.spans: list[tuple[int, int]] = []
        # (items of root_out, their characters) as last measured by a generation block
        self.measured = (0, 0)
        # How captured output becomes one string: a render with provenance keeps the sources.
        self.join = _JOIN


class Frame:
    """One scope: its own variables, the enclosing scope, and the render's state."""

    __slots__ = ("vars", "parent", "state")
    vars: dict[Any, Any]
    parent: Frame | None
    state: RenderState

    def __init__(self, variables: dict[str, Any], parent: Frame | None, state: RenderState) -> None:
        self.vars = variables
        self.parent = parent
        self.state = state


def start_render(
    limits: Limits,
    out: list[Any],
    global_vars: dict[str, Any],
    context: dict[str, Any],
    cost: int,
) -> Frame:
    """A render's root scope and its state, made in one call from the environment (which the
    compiled build leaves interpreted: here they are made and linked in native code).

    The root scope is the caller's `context` over `global_vars`, in one dict: where every name
    the template never assigns is found, and the template's own top-level scope, made for this
    render (a top-level `set` shadows a variable there as a scope of its own would; a name the
    template ever assigns is looked up through the scopes, never in `state.context` alone).
    The context's sizes scale the step budget; `cost`, the steps of the template's top-level
    statements, is counted first (the caller checks it, where it places what that raises)."""
    # (a caller's iterator is walked at most max_items items: sandbox/iterators.py)
    context = bound_context(context, limits.max_items)
    variables = {**global_vars, **context}
    state = RenderState(limits, out)
    root = Frame(variables, None, state)
    state.root = root
    state.context = variables
    state.scale_to(context)
    state.steps = cost
    return root


class BreakLoop(Exception):
    pass


class ContinueLoop(Exception):
    pass



def located(error: BaseException, pos: int | None) -> TemplateError:
    """The engine's error for `error`, placed at `pos` unless an inner node placed it."""
    if isinstance(error, TemplateError):
        if error.offset is None:
            error.offset = pos
        return error
    if isinstance(error, RecursionError):
        result: TemplateError = recursion_error()
    elif isinstance(error, MemoryError):
        result = LimitError("out of memory")
    else:
        result = TemplateRuntimeError(bounded_text(error) or type(error).__name__)
    result.offset = pos
    return result
