"""The evaluators of macros: `{% macro %}` definitions, the calls that run them, and
`{% call %}` blocks (see statements.py for the other statements)."""

from __future__ import annotations

from functools import partial
from typing import Any

from ..errors import TemplateRuntimeError
from ..sandbox.budget import EVALUATION_DEPTH, charge_arguments
from ..sandbox.measure import CHECKED_LEVELS, NESTED_TYPES, PLAIN_TYPES, check_nesting
from ..values.runtime import MISSING, Macro
from .calls import Arguments
from .deferred import DeferredBody
from .evaluator import Expression, Statement
from .frames import Frame, located
from .statements import joined, joined_text


class MacroDefinition:
    """What a `{% macro %}` (or a call block's caller) compiles to; `build` makes the
    callable Macro bound to the scope it is defined in."""

    __slots__ = (
        "name",
        "names",
        "defaults",
        "body",
        "catch_varargs",
        "catch_kwargs",
        "catch_caller",
        "undefined",
        "cost",
        "weight",
    )
    name: str | None
    names: tuple[str, ...]
    defaults: tuple[Expression | None, ...]
    body: Statement
    catch_varargs: Any
    catch_kwargs: Any
    catch_caller: Any
    undefined: type[Any]
    cost: int
    weight: int

    def __init__(
        self,
        name: str | None,
        names: tuple[str, ...],
        defaults: tuple[Expression | None, ...],
        body: Statement,
        catch: tuple[bool, bool, bool],
        undefined: type[Any],
        costs: tuple[int, int] = (1, 1),
    ) -> None:
        self.name = name
        self.names = names
        self.defaults = defaults  # an evaluator or None per parameter
        self.body = body
        self.catch_varargs, self.catch_kwargs, self.catch_caller = catch
        self.undefined = undefined
        # Steps of a call (binding its parameters, and its body), and the levels of template
        # code a call keeps open while a nested one runs (see Budget.enter).
        cost, self.weight = costs
        self.cost = cost + body.cost
        if type(body) is DeferredBody:
            body.held_by(self, None)

    def take_compiled(self, deferred: Statement, body: Statement, _: None) -> None:
        """The body, deferred until the first call, has been compiled (see run/deferred.py)."""
        self.cost += body.cost
        self.body = body

    def build(self, definition_frame: Frame) -> Macro:
        return Macro(
            self.name,
            self.names,
            (),
            self.catch_varargs,
            self.catch_kwargs,
            self.catch_caller,
            partial(self.invoke, definition_frame),
        )

    def invoke(self, definition_frame: Frame, /, *args: Any, **kwargs: Any) -> str:
        state = definition_frame.state
        names = self.names
        deferred = self.body
        if type(deferred) is DeferredBody:
            deferred.ready()  # (its cost then joins this call's, charged here)
        state.steps += self.cost  # Budget.charge, inlined: every call pays its body first
        if state.steps >= state.next_clock:
            state.check()
        # The level is entered before the arguments are bound: a default argument that calls
        # the macro again (`{% macro m(a=m()) %}`) recurses inside it.
        weight = self.weight
        if state.depth < state.limits.max_recursion and state.nested + weight <= EVALUATION_DEPTH:
            state.depth += 1  # Budget.enter, inlined for the levels within both limits
            state.nested += weight
        else:
            state.enter(weight, "macro calls")  # raises, naming the limit
        try:
            # What a macro is given could be given one level deeper to the next call: measured
            # as a stored value is, on every fourth level of calls (see budget.check_nesting).
            if not state.depth & CHECKED_LEVELS:
                _check_arguments(args, kwargs)
            if kwargs or len(args) > len(names) or self.catch_varargs or self.catch_kwargs:
                frame = self.bind(definition_frame, args, kwargs)
            else:
                # Positional arguments only, no varargs/kwargs to collect: most macro calls.
                # (fewer args than names is fine; zip without its keyword is a cheaper call)
                variables = dict(zip(names, args))  # noqa: B905
                frame = Frame(variables, definition_frame, state)
                for index in range(len(args), len(names)):
                    self.bind_missing(frame, index)
                if self.catch_caller:
                    variables.setdefault(
                        "caller", self.undefined("No caller defined", name="caller")
                    )
            out: list = []
            self.body.run(frame, out)
        finally:
            state.depth -= 1
            state.nested -= weight
        return joined_text(out, state)

    def bind_missing(self, frame: Frame, index: int) -> None:
        """A parameter without an argument: its default (which may read the parameters
        before it), or undefined."""
        param = self.names[index]
        default = self.defaults[index]
        if default is not None:
            frame.vars[param] = default.eval(frame)
        else:
            frame.vars[param] = self.undefined(f"parameter {param!r} was not provided", name=param)

    def bind(self, definition_frame: Frame, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Frame:
        """The macro's scope for any mix of positional, keyword and extra arguments."""
        name, names, undefined = self.name, self.names, self.undefined
        if "self" in kwargs:
            # Jinja calls a macro through a method whose first parameter is named self.
            raise TypeError("Macro.__call__() got multiple values for argument 'self'")
        count = len(names)
        variables: dict[str, Any] = {}
        frame = Frame(variables, definition_frame, definition_frame.state)
        if len(args) > count and not self.catch_varargs:
            raise TemplateRuntimeError(f"macro {name!r} takes not more than {count} argument(s)")
        for index, param in enumerate(names):
            if index < len(args):
                variables[param] = args[index]
            elif param in kwargs:
                variables[param] = kwargs.pop(param)
            else:
                self.bind_missing(frame, index)
        caller = MISSING if "caller" in names else kwargs.pop("caller", MISSING)
        if caller is not MISSING and not self.catch_caller and self.catch_kwargs:
            kwargs["caller"] = caller  # an ordinary keyword for this macro
            caller = MISSING
        if caller is not MISSING:
            if not self.catch_caller:
                raise TemplateRuntimeError(
                    f"macro {name!r} was invoked with two values for the special"
                    " caller argument. This is most likely a bug."
                )
            variables["caller"] = caller
        elif self.catch_caller and "caller" not in variables:
            variables["caller"] = undefined("No caller defined", name="caller")
        if kwargs and not self.catch_kwargs:
            key = next(iter(kwargs))
            raise TemplateRuntimeError(f"macro {name!r} takes no keyword argument {key!r}")
        if self.catch_varargs:
            variables["varargs"] = tuple(args[count:])
        if self.catch_kwargs:
            variables["kwargs"] = kwargs
        return frame


def _check_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    for arg in args:
        if type(arg) not in PLAIN_TYPES and isinstance(arg, NESTED_TYPES):
            check_nesting(arg)
    for arg in kwargs.values():
        if type(arg) not in PLAIN_TYPES and isinstance(arg, NESTED_TYPES):
            check_nesting(arg)


class DefineMacro(Statement):
    __slots__ = ("name", "definition")
    name: str
    definition: MacroDefinition
    cost = 1

    def __init__(self, name: str, definition: MacroDefinition) -> None:
        self.name = name
        self.definition = definition

    def run(self, frame: Frame, out: list[Any]) -> None:
        frame.vars[self.name] = self.definition.build(frame)


class CallBlock(Statement):
    """`{% call macro(...) %}body{% endcall %}`: the body is the macro's `caller`."""

    __slots__ = ("caller", "func", "arguments", "pos")
    caller: MacroDefinition
    func: Expression
    arguments: Arguments
    pos: int | None
    cost = 2

    def __init__(self, caller: MacroDefinition, func: Expression, arguments: Arguments, pos: int | None) -> None:
        self.caller = caller
        self.func = func
        self.arguments = arguments
        self.pos = pos

    def run(self, frame: Frame, out: list[Any]) -> None:
        target = self.func.eval(frame)
        args, kwargs = self.arguments.eval(frame)
        kwargs["caller"] = self.caller.build(frame)
        frame.state.step()
        charge_arguments(args, kwargs)
        try:
            value = target(*args, **kwargs)
        except Exception as error:
            raise located(error, self.pos) from None
        text = joined(value, self.pos)
        frame.state.grow(len(text))
        out.append(text)
