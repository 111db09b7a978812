"""The evaluators of statements: slotted objects whose `run(frame, out)` appends text to `out`.

Like the expression evaluators (see expressions.py) they hold their parts in slots, decided
once by the compiler.  Assignment targets are objects too, with `assign(frame, value)`.
"""

from __future__ import annotations

from typing import Any

from .._mypyc import mypyc_attr
from ..builtins.ops import to_string
from ..errors import LimitError, TemplateRuntimeError
from ..sandbox.budget import CHARS_PER_STEP as SHORT
from ..sandbox.budget import PLAIN_TEXT, SCALARS, check_length
from ..sandbox.limits import Limits
from ..sandbox.measure import CHECKED_LEVELS, NESTED_TYPES, PLAIN_TYPES, check_nesting
from ..values.runtime import (
    PLAIN_NAMESPACES,
    LoopContext,
    Namespace,
    TemplateReference,
    Undefined,
)
from .calls import FilterChain
from .deferred import DeferredBody
from .evaluator import Expression, Statement, Target
from .frames import BreakLoop, ContinueLoop, Frame, located
from .operators import CompareConst


class Nothing(Statement):
    __slots__ = ()
    cost = 0

    def run(self, frame: Frame, out: list[Any]) -> None:
        return None


NOTHING = Nothing()


class Text(Statement):
    __slots__ = ("text", "max_output")
    text: str
    max_output: int
    cost = 0

    def __init__(self, text: str, max_output: int) -> None:
        self.text = text
        self.max_output = max_output

    def run(self, frame: Frame, out: list[Any]) -> None:
        text = self.text
        state = frame.state
        state.size += len(text)  # Budget.grow, inlined
        if state.size > self.max_output:
            state.grow(0)  # raises, naming the limit
        out.append(text)


@mypyc_attr(allow_interpreted_subclasses=True)  # provenance's SourcedOutput
class Output(Statement):
    """`{{ expr }}`."""

    __slots__ = ("expr", "pos", "max_output", "cost")
    expr: Expression
    pos: int | None
    max_output: int
    cost: int

    def __init__(self, expr: Expression, pos: int | None, max_output: int, cost: int = 1) -> None:
        self.expr = expr
        self.pos = pos
        self.max_output = max_output
        self.cost = cost  # steps: the statement and its expression's nodes (see compiler)

    def printed(self, value: Any) -> str:
        # How a value that is not a plain string prints (a render with provenance keeps sources;
        # a method, not a class attribute, so that the compiled build lets a subclass replace it).
        return to_string(value)

    def run(self, frame: Frame, out: list[Any]) -> None:
        value = self.expr.eval(frame)
        if type(value) is not str:
            try:
                value = self.printed(value)
            except Exception as error:
                raise located(error, self.pos) from None
        # Budget.grow and Budget.step, inlined: this runs for every printed value.
        state = frame.state
        state.size += len(value)
        if state.size > self.max_output:
            try:
                state.grow(0)
            except LimitError as error:
                raise located(error, self.pos) from None
        out.append(value)


# Steps: every statement has a ``cost``, counted when compiling (one, plus one per node of
# its own expressions, plus its bodies'); a body's cost is the sum of its statements'.  Whoever
# runs a body pays for it first, in one addition: the render for the template, a loop for each
# iteration, a macro for each call, an `if` for the branch it takes.


class Pair(Statement):
    """A body of two statements."""

    __slots__ = ("first", "second", "cost")
    first: Statement
    second: Statement
    cost: int

    def __init__(self, first: Statement, second: Statement) -> None:
        self.first = first
        self.second = second
        self.cost = first.cost + second.cost

    def run(self, frame: Frame, out: list[Any]) -> None:
        self.first.run(frame, out)
        self.second.run(frame, out)


class Sequence(Statement):
    """A body: statements, with text kept as plain strings between them."""

    __slots__ = ("items", "max_output", "cost")
    items: tuple[Statement | str, ...]
    max_output: int
    cost: int

    def __init__(self, items: tuple[Statement | str, ...], max_output: int) -> None:
        self.items = items
        self.max_output = max_output
        self.cost = sum(item.cost for item in items if not isinstance(item, str))

    def run(self, frame: Frame, out: list[Any]) -> None:
        for item in self.items:
            # (the compiler keeps only plain strings here; the exact type is the cheaper test,
            # though mypy does not narrow the other branch to a statement by it)
            if type(item) is str:
                state = frame.state
                state.size += len(item)
                if state.size > self.max_output:
                    state.grow(0)  # raises, naming the limit
                out.append(item)
            else:
                item.run(frame, out)  # type: ignore[union-attr]


class If(Statement):
    __slots__ = ("test", "body", "otherwise", "pos", "cost", "body_cost", "otherwise_cost")
    test: Expression
    body: Statement
    otherwise: Statement | None
    pos: int | None
    cost: int
    body_cost: int
    otherwise_cost: int

    def __init__(
        self,
        test: Expression,
        body: Statement,
        otherwise: Statement | None,
        pos: int | None,
        cost: int = 1,
    ) -> None:
        self.test = test
        self.body = body
        self.otherwise = otherwise  # None when there is no else branch
        self.pos = pos
        self.cost = cost  # the test; the branch taken pays for itself
        # (a branch of text only costs nothing: it pays nothing, without reading its cost)
        self.body_cost = body.cost
        self.otherwise_cost = otherwise.cost if otherwise is not None else 0
        if type(body) is DeferredBody:
            body.held_by(self, True)
        if type(otherwise) is DeferredBody:
            otherwise.held_by(self, False)

    def take_compiled(self, deferred: Statement, body: Statement, is_body: bool) -> None:
        """`deferred`, a branch of this `if`, has been compiled into `body`. (The cost is set
        first: a render in another thread that reads it and then `deferred` pays twice, once,
        rather than never.)"""
        if is_body:
            self.body_cost = body.cost
            self.body = body
        else:
            self.otherwise_cost = body.cost
            self.otherwise = body

    def run(self, frame: Frame, out: list[Any]) -> None:
        value = self.test.eval(frame)
        try:
            truth = value if type(value) is bool else bool(value)
        except Exception as error:
            raise located(error, self.pos) from None
        if truth:
            if self.body_cost:
                frame.state.steps += self.body_cost
            self.body.run(frame, out)
        elif self.otherwise is not None:
            if self.otherwise_cost:
                frame.state.steps += self.otherwise_cost
            self.otherwise.run(frame, out)


class IfCompareConst(If):
    """`{% if message['role'] == 'user' %}`: the comparison of CompareConst, done here."""

    __slots__ = ("first", "value", "equal", "checked", "compare_pos")
    first: Expression
    value: Any
    equal: bool
    checked: Any
    compare_pos: Any

    def __init__(
        self,
        test: CompareConst,
        body: Statement,
        otherwise: Statement | None,
        pos: int | None,
        cost: int = 1,
    ) -> None:
        If.__init__(self, test, body, otherwise, pos, cost)
        self.first = test.first
        self.value = test.value
        self.equal = test.equal
        self.checked = test.checked
        self.compare_pos = test.pos

    def run(self, frame: Frame, out: list[Any]) -> None:
        a = self.first.eval(frame)
        kind = type(a)
        try:
            if ((kind is str or kind in PLAIN_TEXT) and len(a) <= SHORT) or kind in SCALARS:
                truth = a == self.value if self.equal else a != self.value
            else:
                truth = self.checked(a, self.value)
        except Exception as error:
            raise located(error, self.compare_pos) from None
        if type(truth) is not bool:
            try:
                truth = bool(truth)
            except Exception as error:
                raise located(error, self.pos) from None
        if truth:
            if self.body_cost:
                frame.state.steps += self.body_cost
            self.body.run(frame, out)
        elif self.otherwise is not None:
            if self.otherwise_cost:
                frame.state.steps += self.otherwise_cost
            self.otherwise.run(frame, out)


class For(Statement):
    __slots__ = (
        "iterable",
        "target",
        "condition",
        "body",
        "otherwise",
        "recursive",
        "uses_loop",
        "pos",
        "cost",
        "condition_cost",
        "weight",
        "iteration_cost",
        "reuse_scope",
    )
    iterable: Expression
    target: Target
    condition: Expression | None
    body: Statement
    otherwise: Statement | None
    recursive: bool
    uses_loop: bool
    pos: int | None
    cost: int
    condition_cost: int
    weight: int
    iteration_cost: int
    reuse_scope: bool

    def __init__(
        self,
        iterable: Expression,
        target: Target,
        condition: Expression | None,
        body: Statement,
        otherwise: Statement | None,
        recursive: bool,
        uses_loop: bool,
        pos: int | None,
        costs: tuple[int, int, int] = (1, 1, 1),
        reuse_scope: bool = False,
    ) -> None:
        self.iterable = iterable
        self.target = target
        self.condition = condition
        self.body = body
        self.otherwise = otherwise
        self.recursive = recursive
        self.uses_loop = uses_loop
        self.pos = pos
        # Steps of starting the loop, of testing one item against its `if`, and the levels
        # of template code a recursive call keeps open (see Budget.enter).
        cost, self.condition_cost, self.weight = costs
        self.cost = cost + (otherwise.cost if otherwise is not None else 0)
        self.iteration_cost = 1 + body.cost
        # A body that writes no variable and defines no macro or caller runs every iteration in
        # one scope, its loop variable rebound (see compiler._declares).
        self.reuse_scope = reuse_scope

    def run(self, frame: Frame, out: list[Any]) -> None:
        values = self.iterable.eval(frame)
        self.loop(frame, out, values, 0, self.recurse_from(frame) if self.recursive else None)

    def recurse_from(self, frame: Frame) -> Any:
        state = frame.state

        def again(values: Any, depth0: int) -> str:
            if not (state.depth + 1) & CHECKED_LEVELS and isinstance(values, NESTED_TYPES):
                check_nesting(values)  # (as a macro's arguments are, on the level it enters)
            captured: list = []
            self.loop(frame, captured, values, depth0, again)
            return state.join(captured)

        return again

    def loop(self, frame: Frame, out: list[Any], values: Any, depth0: int, recurse: Any) -> None:
        state = frame.state
        pos = self.pos
        source: Any  # a list, or an iterator (see _loop_source)
        if type(values) is list:
            source = values  # (what _loop_source answers for a list, without the call)
        else:
            try:
                source = _loop_source(values, state.limits, pos)
            except Exception as error:
                raise located(error, pos) from None
        target = self.target
        otherwise = self.otherwise
        if type(source) is list and not source:
            if otherwise is not None:
                otherwise.run(Frame({}, frame, state), out)
            return
        if self.condition is not None:
            # Tested as the loop reaches each item, as Jinja's generator does.
            source = _kept(source, self.condition, self.condition_cost, target, frame)
        loop = (
            LoopContext(source, depth0, recurse, state.limits.max_items) if self.uses_loop else None
        )
        recursive = self.recursive
        if recursive:
            try:
                state.enter(self.weight, "recursive loops")
            except LimitError as error:
                raise located(error, self.pos) from None
        # Jinja runs `else` unless some iteration ran its body to the end: a `break` in the
        # first iteration, or `continue` in every one, still leads to `else`.
        completed = False
        body = self.body
        # `for message in messages`: the variable goes straight into the iteration's scope.
        name = target.name if type(target) is AssignName else None
        iteration_cost = self.iteration_cost
        reuse = self.reuse_scope
        if reuse:
            variables = {} if loop is None else {"loop": loop}
            inner = Frame(variables, frame, state)
        try:
            for item in source if loop is None else loop.walk():
                state.steps += iteration_cost  # Budget.charge, inlined: the body, paid first
                if state.steps >= state.next_clock:
                    state.check()
                if not reuse:
                    variables = {} if loop is None else {"loop": loop}
                    inner = Frame(variables, frame, state)
                if name is not None:
                    variables[name] = item
                else:
                    target.assign(inner, item)
                try:
                    body.run(inner, out)
                except ContinueLoop:
                    continue
                except BreakLoop:
                    break
                completed = True
        except LimitError as error:
            # (steps and time run out at an iteration's charge: placed at the loop, unless a
            # statement inside it placed the error already)
            raise located(error, pos) from None
        finally:
            if recursive:
                state.depth -= 1
                state.nested -= self.weight
        if not completed and otherwise is not None:
            otherwise.run(Frame({}, frame, state), out)


# What a loop copies whole, its size known first (`tool.items()`, `d.keys()`, a set).
SIZED_TYPES: tuple[type[Any], ...] = (
    dict, str, tuple, range, set, frozenset, type({}.keys()), type({}.values()), type({}.items())
)  # fmt: skip


def _loop_source(values: Any, limits: Limits, pos: int | None) -> Any:
    """What a for loop walks: a list for anything with a size (a dict's keys, a string's
    characters; nothing for undefined), else the values one at a time, as they come."""
    if type(values) is list:
        return values
    if isinstance(values, Undefined):
        return list(iter(values))
    if isinstance(values, SIZED_TYPES):
        if len(values) >= 64:
            check_length(len(values), limits, "list")  # (copied: counted as made)
        return list(values)
    if hasattr(values, "__len__"):
        items = []
        for item in values:
            items.append(item)
            if len(items) > limits.max_items:
                raise LimitError(
                    f"an iterable of more than {limits.max_items} items exceeds max_items"
                )
        return items
    return _one_at_a_time(iter(values), pos)


def _one_at_a_time(iterator: Any, pos: int | None) -> Any:
    # A failure of the iterator itself is the loop's.
    while True:
        try:
            item = next(iterator)
        except StopIteration:
            return
        except Exception as error:
            raise located(error, pos) from None
        yield item


def _kept(source: Any, condition: Expression, cost: int, target: Target, frame: Frame) -> Any:
    state = frame.state
    # One scope for every test: a condition is an expression, which can declare nothing, and
    # each item rebinds the loop's variables.
    variables: dict[str, Any] = {}
    test_frame = Frame(variables, frame, state)
    name = target.name if type(target) is AssignName else None
    for item in source:
        state.steps += cost  # an item the `if` rejects costs as much as one kept
        if state.steps >= state.next_clock:
            state.check()
        if name is not None:
            variables[name] = item
        else:
            target.assign(test_frame, item)
        if condition.eval(test_frame):
            yield item


# ---------------------------------------------------------------- assignment


class AssignName(Target):
    __slots__ = ("name",)
    name: str

    def __init__(self, name: str) -> None:
        self.name = name

    def assign(self, frame: Frame, value: Any) -> None:
        frame.vars[self.name] = value


class AssignTuple(Target):
    __slots__ = ("parts", "pos")
    parts: tuple[Target, ...]
    pos: int | None

    def __init__(self, parts: tuple[Target, ...], pos: int | None) -> None:
        self.parts = parts
        self.pos = pos

    def assign(self, frame: Frame, value: Any) -> None:
        parts = self.parts
        if type(value) is tuple and len(value) == len(parts):
            # `for key, value in d.items()`: pairs that fit, unpacked without a copy.
            for part, item in zip(parts, value, strict=True):
                part.assign(frame, item)
            return
        try:
            values = list(value)
        except TypeError:
            message = f"cannot unpack non-iterable {type(value).__name__} object"
            raise located(TemplateRuntimeError(message), self.pos) from None
        except Exception as error:
            raise located(error, self.pos) from None
        count = len(self.parts)
        if len(values) != count:
            message = (
                f"not enough values to unpack (expected {count}, got {len(values)})"
                if len(values) < count
                else f"too many values to unpack (expected {count})"
            )
            raise located(TemplateRuntimeError(message), self.pos)
        for part, item in zip(self.parts, values, strict=True):
            part.assign(frame, item)


class AssignAttr(Target):
    """`{% set ns.attr = value %}`."""

    __slots__ = ("lookup", "attr", "pos", "stored")
    lookup: Expression
    attr: str
    pos: int | None
    stored: set[type[Any]]

    def __init__(self, lookup: Expression, attr: str, pos: int | None) -> None:
        self.lookup = lookup
        self.attr = attr
        self.pos = pos
        # The namespaces written without their `set` call (a private name is always passed
        # to it, which may refuse it).
        self.stored = PLAIN_NAMESPACES if attr[:1] != "_" else set()

    def assign(self, frame: Frame, value: Any) -> None:
        namespace = self.lookup.eval(frame)
        if type(namespace) in self.stored:
            namespace._attrs[self.attr] = value
            return
        if not isinstance(namespace, Namespace):
            raise located(
                TemplateRuntimeError("cannot assign attribute on non-namespace object"), self.pos
            )
        # (measured by the assignment, as a variable's value is, when it can nest deeper)
        namespace.set(self.attr, value)


# What a variable may hold nested (see budget.check_nesting): each assignment measures it, so
# that no loop or chain of assignments builds a value nested without bound.


class Assign(Statement):
    __slots__ = ("value", "target", "cost", "pos", "nests")
    value: Expression
    target: Target
    cost: int
    pos: int | None
    nests: bool

    def __init__(
        self,
        value: Expression,
        target: Target,
        cost: int = 1,
        pos: int | None = None,
        nests: bool = True,
    ) -> None:
        self.value = value
        self.target = target
        self.cost = cost
        self.pos = pos
        self.nests = nests  # whether the value may nest deeper than what it reads

    def run(self, frame: Frame, out: list[Any]) -> None:
        value = self.value.eval(frame)
        if self.nests and isinstance(value, NESTED_TYPES):
            try:
                check_nesting(value)
            except LimitError as error:
                raise located(error, self.pos) from None
        self.target.assign(frame, value)


class AssignToName(Statement):
    """`{% set name = value %}`, the common case, without the target's call; the value is
    measured (it may nest deeper than what it reads: see AssignFlatToName for the others)."""

    __slots__ = ("value", "name", "cost", "pos")
    value: Expression
    name: str
    cost: int
    pos: int | None

    def __init__(self, value: Expression, name: str, cost: int = 1, pos: int | None = None) -> None:
        self.value = value
        self.name = name
        self.cost = cost
        self.pos = pos

    def run(self, frame: Frame, out: list[Any]) -> None:
        value = self.value.eval(frame)
        kind = type(value)
        if (
            kind is list
            or kind is tuple
            or kind is dict
            or (kind not in PLAIN_TYPES and isinstance(value, NESTED_TYPES))
        ):
            try:
                check_nesting(value)
            except LimitError as error:
                raise located(error, self.pos) from None
        frame.vars[self.name] = value


class AssignFlatToName(AssignToName):
    """`{% set name = value %}` of a value nested no deeper than what it reads."""

    __slots__ = ()

    def run(self, frame: Frame, out: list[Any]) -> None:
        frame.vars[self.name] = self.value.eval(frame)


class AssignBlock(Statement):
    """`{% set name %}...{% endset %}`."""

    __slots__ = ("body", "target", "filters", "cost")
    body: Statement
    target: Target
    filters: FilterChain
    cost: int

    def __init__(self, body: Statement, target: Target, filters: FilterChain) -> None:
        self.body = body
        self.target = target
        self.filters = filters
        self.cost = 1 + body.cost + len(filters.appliers)

    def run(self, frame: Frame, out: list[Any]) -> None:
        captured: list = []
        state = frame.state
        self.body.run(Frame({}, frame, state), captured)
        self.target.assign(frame, self.filters.apply(frame, joined_text(captured, state)))


def joined_text(parts: list, state: Any) -> str:
    """A captured body's text, its copy counted (the parts were counted as output)."""
    text = state.join(parts)  # (a render with provenance keeps the sources: see frames)
    if len(text) >= SHORT:
        state.allocate(len(text))
    return text


def joined(value: Any, pos: int | None) -> str:
    if not isinstance(value, str):
        # Jinja joins a call block's or filter block's result with the output as it is.
        message = f"sequence item 0: expected str instance, {type(value).__name__} found"
        raise located(TemplateRuntimeError(message), pos)
    return value


class FilterBlock(Statement):
    __slots__ = ("body", "filters", "pos", "cost")
    body: Statement
    filters: FilterChain
    pos: int | None
    cost: int

    def __init__(self, body: Statement, filters: FilterChain, pos: int | None) -> None:
        self.body = body
        self.filters = filters
        self.pos = pos
        self.cost = 1 + body.cost + len(filters.appliers)

    def run(self, frame: Frame, out: list[Any]) -> None:
        captured: list = []
        state = frame.state
        self.body.run(Frame({}, frame, state), captured)
        value = joined(self.filters.apply(frame, joined_text(captured, state)), self.pos)
        state.grow(len(value))
        out.append(value)


class With(Statement):
    __slots__ = ("assignments", "body", "cost")
    assignments: tuple[tuple[Target, Expression], ...]
    body: Statement
    cost: int

    def __init__(self, assignments: tuple[tuple[Target, Expression], ...], body: Statement) -> None:
        self.assignments = assignments  # (target, value) pairs
        self.body = body
        self.cost = 1 + 2 * len(assignments) + body.cost

    def run(self, frame: Frame, out: list[Any]) -> None:
        inner = Frame({}, frame, frame.state)
        values = [value.eval(frame) for _, value in self.assignments]
        for (target, _), value in zip(self.assignments, values, strict=True):
            target.assign(inner, value)
        self.body.run(inner, out)


class Generation(Statement):
    """transformers' `{% generation %}`: the body's text, its span recorded."""

    __slots__ = ("body", "cost")
    body: Statement
    cost: int

    def __init__(self, body: Statement) -> None:
        self.body = body
        self.cost = 1 + body.cost

    def run(self, frame: Frame, out: list[Any]) -> None:
        state = frame.state
        captured: list = []
        self.body.run(Frame({}, frame, state), captured)
        text = joined_text(captured, state)
        # Spans are offsets in the final text, as transformers computes them: the length
        # of what the template has emitted at its top level so far, measured from where
        # the last span measured it (so that a span in each iteration stays linear).
        root_out = state.root_out
        measured = state.measured
        start = measured[1] + sum(map(len, root_out[measured[0] :]))
        state.measured = (len(root_out), start)
        state.spans.append((start, start + len(text)))
        out.append(text)


class Block(Statement):
    __slots__ = ("body", "scoped", "cost")
    body: Statement
    scoped: bool
    cost: int

    def __init__(self, body: Statement, scoped: bool) -> None:
        self.body = body
        self.scoped = scoped
        self.cost = body.cost

    def run(self, frame: Frame, out: list[Any]) -> None:
        # A block sees the template's own variables; the enclosing loop's only if scoped.
        state = frame.state
        self.body.run(Frame({}, frame if self.scoped else state.root, state), out)


class RequiredBlock(Statement):
    """`{% block x required %}`: only a template extending this one could fill it."""

    __slots__ = ("name", "pos")
    name: str
    pos: int | None
    cost = 1

    def __init__(self, name: str, pos: int | None) -> None:
        self.name = name
        self.pos = pos

    def run(self, frame: Frame, out: list[Any]) -> None:
        raise located(TemplateRuntimeError(f"Required block {self.name!r} not found"), self.pos)


class WithTemplateReference(Statement):
    """A template that reads `self`: its top-level scope starts with the blocks in it."""

    __slots__ = ("body", "blocks", "cost")
    body: Statement
    blocks: dict[str, Any]
    cost: int

    def __init__(self, body: Statement, blocks: dict[str, Any]) -> None:
        self.body = body
        self.blocks = blocks
        self.cost = 1 + body.cost

    def run(self, frame: Frame, out: list[Any]) -> None:
        frame.vars["self"] = TemplateReference(self.blocks, frame)
        self.body.run(frame, out)


class Break(Statement):
    __slots__ = ()
    cost = 1

    def run(self, frame: Frame, out: list[Any]) -> None:
        # A new exception each time: raising a shared one would grow its traceback (and
        # keep every frame it passed through) render after render.
        raise BreakLoop


class Continue(Statement):
    __slots__ = ()
    cost = 1

    def run(self, frame: Frame, out: list[Any]) -> None:
        raise ContinueLoop
