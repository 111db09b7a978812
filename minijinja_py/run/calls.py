"""The evaluators of calls, and of the filters and tests applied to a value: the arguments of a
call, the call itself (guarded, charged), and the appliers a filter chain is made of.  Built by
the compiler beside the evaluators of expressions.py, whose constants and charge type they use.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import islice
from types import BuiltinMethodType
from typing import Any, Final

from ..builtins.tests import test_defined, test_mapping, test_none, test_string, test_undefined
from ..errors import TemplateRuntimeError
from ..sandbox import iterators
from ..sandbox.budget import CHARS_PER_STEP as SHORT
from ..sandbox.budget import (
    FILTER_ITEMS_PER_STEP,
    SCALARS,
    argument_units,
    charge_arguments,
    charge_built,
    check_length,
)
from ..sandbox.callguard import GUARDED, call_guarded
from ..sandbox.measure import charge_compared_arguments
from ..values import runtime
from .evaluator import Applier, Expression
from .expressions import MISSING, Charge, Const, ContextName
from .frames import Frame, located

# What every call reads from modules the compiled build leaves interpreted, held as Finals of
# this one: the compiled build reads them as C statics, where it would look each up in this
# module's dict at every call.
BUILTIN_METHOD: Final = BuiltinMethodType
Macro: Final = runtime.Macro
Undefined: Final = runtime.Undefined
wants_environment: Final = runtime.wants_environment
NOT_ITERATORS: Final = iterators.NOT_ITERATORS
bounded: Final = iterators.bounded


class Arguments:
    """The arguments of a call or filter: `eval` gives `(args, kwargs)`."""

    __slots__ = ("positional", "keywords", "star", "dstar", "free")
    positional: tuple[Expression, ...]
    keywords: tuple[tuple[str, Expression], ...]
    star: Expression | None
    dstar: Expression | None
    free: bool

    def __init__(
        self,
        positional: tuple[Expression, ...],
        keywords: tuple[tuple[str, Expression], ...],
        star: Expression | None,
        dstar: Expression | None,
    ) -> None:
        self.positional = positional
        self.keywords = keywords
        self.star = star
        self.dstar = dstar
        # Literal arguments too short to charge (`startswith('<think>')`, `selectattr('role',
        # 'equalto', 'user')`) are known free when compiling: the call skips charge_arguments.
        self.free = (
            star is None
            and dstar is None
            and all(type(a) is Const for a in positional)
            and all(type(v) is Const for _, v in keywords)
            and argument_units(_values(positional), dict(_pairs(keywords))) == 0
        )

    def eval(self, frame: Frame) -> tuple[list[Any], dict[str, Any]]:
        # Literal arguments (`f(x, "", 0)`) are read, not called.  (A loop, not comprehensions:
        # a comprehension is a function call of its own, dearer than the one or two arguments
        # most calls have.)
        args = []
        for a in self.positional:
            args.append(a.value if type(a) is Const else a.eval(frame))
        if self.star is not None:
            self._unpack(frame, args)
        kwargs = {k: v.eval(frame) for k, v in self.keywords} if self.keywords else {}
        if self.dstar is not None:
            mapping = self.dstar.eval(frame)
            if not hasattr(mapping, "keys"):
                kind = type(mapping).__name__
                raise TypeError(f"argument after ** must be a mapping, not {kind}")
            if hasattr(mapping, "__len__"):
                frame.state.charge(len(mapping) // 2)  # a Python loop per key, below
            for key in mapping.keys():
                if key in kwargs:
                    raise TypeError(f"got multiple values for keyword argument {key!r}")
                kwargs[key] = mapping[key]
        return args, kwargs

    def _unpack(self, frame: Frame, args: list[Any]) -> None:
        """`*extra`: its items added to `args`, refused past max_items before they are walked,
        and charged by their number at a filter's rate (a Python-level walk per item follows:
        the callee binds them, the call's charges look at each), where copying a list would be
        charged a step per 64 items: `loop.cycle(*big)` of a million items is 500,000 steps,
        not 15,000."""
        extra = self.star.eval(frame)  # type: ignore[union-attr]
        limits = frame.state.limits
        if not hasattr(extra, "__len__"):
            # (an iterator without a length, a caller's `itertools.count()` among them: never
            # walked past the most items a list may hold)
            try:
                extra = list(islice(extra, limits.max_items + 1))
            except TypeError:
                kind = type(extra).__name__
                raise TypeError(f"Value after * must be an iterable, not {kind}") from None
        count = len(extra)
        check_length(count, limits, "list")
        if count >= FILTER_ITEMS_PER_STEP:
            frame.state.charge(count // FILTER_ITEMS_PER_STEP)
        try:
            args.extend(extra)
        except TypeError:
            kind = type(extra).__name__
            raise TypeError(f"Value after * must be an iterable, not {kind}") from None


def _values(evaluators: tuple[Expression, ...]) -> list[Any]:
    # (the values of constants only: see Arguments.free)
    return [a.value for a in evaluators if isinstance(a, Const)]


def _pairs(keywords: tuple[tuple[str, Expression], ...]) -> list[tuple[str, Any]]:
    return [(k, v.value) for k, v in keywords if isinstance(v, Const)]


class CallEmpty(Expression):
    __slots__ = ("func", "environment", "pos")
    func: Expression
    environment: Any
    pos: int | None

    def __init__(self, func: Expression, environment: Any, pos: int | None) -> None:
        self.func = func
        self.environment = environment
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        target = self.func.eval(frame)
        state = frame.state
        state.steps += 1  # Budget.step, inlined: calls are frequent
        if state.steps >= state.next_clock:
            state.check()
        result: Any  # (a macro's text, or whatever the callee returns)
        try:
            if type(target) is Macro:
                result = target._invoke()  # the template's own macro: straight to its body
            elif type(target) is not BUILTIN_METHOD and wants_environment(target):
                # pass_environment marks a global as well as a filter, as in Jinja (a str or
                # dict method, `.strip()`, `.items()`, carries no marker: not looked for).
                result = target(self.environment)
            elif GUARDED:
                result = call_guarded(target, [], {})
            else:
                result = target()
        except Exception as error:
            raise located(error, self.pos) from None
        kind = type(result)  # (short strings and scalars are free: see costly)
        if not ((kind is str and len(result) < SHORT) or kind in SCALARS):
            charge_built(result)  # what a method built (split, upper, copy) counts
            if kind not in NOT_ITERATORS:
                result = bounded(result)  # (a caller's generator: walked at most max_items)
        return result


class Call(Expression):
    __slots__ = ("func", "arguments", "environment", "pos")
    func: Expression
    arguments: Arguments
    environment: Any
    pos: int | None

    def __init__(self, func: Expression, arguments: Arguments, environment: Any, pos: int | None) -> None:
        self.func = func
        self.arguments = arguments
        self.environment = environment
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        target = self.func.eval(frame)
        try:
            args, kwargs = self.arguments.eval(frame)
            state = frame.state
            state.steps += 1  # Budget.step, inlined
            if state.steps >= state.next_clock:
                state.check()
            result: Any  # (a macro's text, or whatever the callee returns)
            if type(target) is Macro:
                # The template's own macro: binding its arguments walks none of them.
                result = target._invoke(*args, **kwargs)
            else:
                # The callee may walk its arguments (startswith(a_tuple), ''.join(a_list)):
                # charged before it runs, by their sizes.
                if not self.arguments.free and (args or kwargs):
                    charge_arguments(args, kwargs)
                    # (a list's or tuple's own method compares an argument with its items)
                    receiver = target.__self__ if type(target) is BUILTIN_METHOD else None
                    charge_compared_arguments(args, kwargs, receiver)
                # (a str or dict method, the usual callee, carries no marker: not looked for)
                if type(target) is not BUILTIN_METHOD and wants_environment(target):
                    args.insert(0, self.environment)
                if GUARDED:
                    result = call_guarded(target, args, kwargs)
                else:
                    result = target(*args, **kwargs)
        except Exception as error:
            raise located(error, self.pos) from None
        kind = type(result)
        if not ((kind is str and len(result) < SHORT) or kind in SCALARS):
            charge_built(result)
            if kind not in NOT_ITERATORS:
                result = bounded(result)  # (a caller's generator: walked at most max_items)
        return result


# ---------------------------------------------------------------- filters and tests
# An applier's ``apply(frame, value)`` runs one filter or test on a value already computed:
# the links of a ``{% filter %}`` block's chain, and filters given arguments.


class MissingFunction(Applier):
    """A filter or test unknown when compiling inside an `if`: only reaching it fails."""

    __slots__ = ("message", "pos")
    message: str
    pos: int | None

    def __init__(self, message: str, pos: int | None) -> None:
        self.message = message
        self.pos = pos

    def apply(self, frame: Frame, value: Any) -> Any:
        raise located(TemplateRuntimeError(self.message), self.pos)


class ApplyBare(Applier):
    """A filter or test without arguments (`environment` is passed first when it asks)."""

    __slots__ = ("func", "environment", "charge", "pos")
    func: Any
    environment: Any
    charge: Charge
    pos: int | None

    def __init__(self, func: Any, environment: Any, charge: Charge, pos: int | None) -> None:
        self.func = func
        self.environment = environment  # None unless the function wants it
        self.charge = charge
        self.pos = pos

    def apply(self, frame: Frame, value: Any) -> Any:
        try:
            kind = type(value)  # (short strings and scalars cost nothing: see costly)
            if not ((kind is str and len(value) < SHORT) or kind in SCALARS):
                self.charge(value, None)
            if self.environment is None:
                result = self.func(value)
            else:
                result = self.func(self.environment, value)
        except Exception as error:
            raise located(error, self.pos) from None
        kind = type(result)
        if not ((kind is str and len(result) < SHORT) or kind in SCALARS):
            self.charge(None, result)
        return result


class ApplyWithArguments(Applier):
    __slots__ = ("func", "environment", "arguments", "charge", "pos")
    func: Any
    environment: Any
    arguments: Arguments
    charge: Charge
    pos: int | None

    def __init__(
        self, func: Any, environment: Any, arguments: Arguments, charge: Charge, pos: int | None
    ) -> None:
        self.func = func
        self.environment = environment  # None unless the function wants it
        self.arguments = arguments
        self.charge = charge
        self.pos = pos

    def apply(self, frame: Frame, value: Any) -> Any:
        try:
            arguments = self.arguments
            args, kwargs = arguments.eval(frame)
            if not arguments.free and (args or kwargs):
                charge_arguments(args, kwargs)
            kind = type(value)  # (short strings and scalars cost nothing: see costly)
            if not ((kind is str and len(value) < SHORT) or kind in SCALARS):
                self.charge(value, None)
            if self.environment is None:
                result = self.func(value, *args, **kwargs)
            else:
                result = self.func(self.environment, value, *args, **kwargs)
        except Exception as error:
            raise located(error, self.pos) from None
        kind = type(result)
        if not ((kind is str and len(result) < SHORT) or kind in SCALARS):
            self.charge(None, result)
        return result


class FilterChain(Applier):
    __slots__ = ("appliers",)
    appliers: tuple[Applier, ...]

    def __init__(self, appliers: tuple[Applier, ...]) -> None:
        self.appliers = appliers

    def apply(self, frame: Frame, value: Any) -> Any:
        for applier in self.appliers:
            value = applier.apply(frame, value)
        return value


class Applied(Expression):
    """`value|f(...)` or `value is t(...)` through an applier."""

    __slots__ = ("value", "applier")
    value: Expression
    applier: Applier

    def __init__(self, value: Expression, applier: Applier) -> None:
        self.value = value
        self.applier = applier

    def eval(self, frame: Frame) -> Any:
        return self.applier.apply(frame, self.value.eval(frame))


class ApplyFree(Expression):
    """`x|trim`, `x is string`: a function whose work is never charged, in one call."""

    __slots__ = ("value", "func", "pos")
    value: Expression
    func: Any
    pos: int | None

    def __init__(self, value: Expression, func: Any, pos: int | None) -> None:
        self.value = value
        self.func = func
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        operand = self.value.eval(frame)
        try:
            return self.func(operand)
        except Exception as error:
            raise located(error, self.pos) from None


def inline_test(value: Expression, test: Any, pos: int | None) -> Expression | None:
    """The evaluator of `value is defined` (or `undefined`, `none`, `string`, `mapping`) where
    `test` is that builtin test (an environment may register its own under the name), answered
    in place of a call of the test; None for any other test."""
    if test is test_defined or test is test_undefined:
        if type(value) is ContextName:
            return ContextIsDefined(value.name, test is test_defined)
        return IsDefined(value, test is test_defined)
    if test is test_none:
        return IsNone(value)
    if test is test_string:
        return IsInstance(value, str, pos)
    if test is test_mapping:
        return IsInstance(value, Mapping, pos)
    return None


class IsNone(Expression):
    """`x is none` by the builtin test."""

    __slots__ = ("value",)
    value: Expression

    def __init__(self, value: Expression) -> None:
        self.value = value

    def eval(self, frame: Frame) -> Any:
        return self.value.eval(frame) is None


class IsInstance(Expression):
    """`x is string` (or `mapping`) by the builtin test: whether the value is an instance of
    `kind`."""

    __slots__ = ("value", "kind", "pos")
    value: Expression
    kind: type[Any]
    pos: int | None

    def __init__(self, value: Expression, kind: type[Any], pos: int | None) -> None:
        self.value = value
        self.kind = kind
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        value = self.value.eval(frame)
        try:
            return isinstance(value, self.kind)
        except Exception as error:  # (a caller's object whose __class__ raises)
            raise located(error, self.pos) from None


class IsDefined(Expression):
    """`x is defined` (or `undefined`) by the builtin test: whether the value is undefined,
    read here rather than by a call of the test."""

    __slots__ = ("value", "defined")
    value: Expression
    defined: bool

    def __init__(self, value: Expression, defined: bool) -> None:
        self.value = value
        self.defined = defined  # (False: `is undefined`)

    def eval(self, frame: Frame) -> Any:
        return isinstance(self.value.eval(frame), Undefined) is not self.defined


class ContextIsDefined(Expression):
    """`tools is defined` (or `undefined`) of a name the template never assigns: whether the
    render's context holds it, without making the undefined value a lookup would give."""

    __slots__ = ("name", "defined")
    name: str
    defined: bool

    def __init__(self, name: str, defined: bool) -> None:
        self.name = name
        self.defined = defined

    def eval(self, frame: Frame) -> Any:
        value = frame.state.context.get(self.name, MISSING)
        missing = value is MISSING or isinstance(value, Undefined)
        return missing is not self.defined


class ApplyCharged(Expression):
    """A filter or test without arguments whose big inputs and outputs are charged."""

    __slots__ = ("value", "func", "charge", "pos")
    value: Expression
    func: Any
    charge: Charge
    pos: int | None

    def __init__(self, value: Expression, func: Any, charge: Charge, pos: int | None) -> None:
        self.value = value
        self.func = func
        self.charge = charge
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        operand = self.value.eval(frame)
        try:
            # Short strings and scalars cost nothing: skip the charging call for them.
            kind = type(operand)
            if not ((kind is str and len(operand) < SHORT) or kind in SCALARS):
                self.charge(operand, None)
            result = self.func(operand)
        except Exception as error:
            raise located(error, self.pos) from None
        kind = type(result)
        if not ((kind is str and len(result) < SHORT) or kind in SCALARS):
            self.charge(None, result)
        return result
