"""The evaluators of expressions: small slotted objects whose ``eval(frame)`` gives a value.

The compiler builds one tree of them per template and decides everything that does not depend
on the data (which class, which operator, which filter function) while building it, so that an
evaluator only computes.  A tree of objects holding their operands in slots is several times
smaller than the equivalent closures (no function object, closure tuple and cell each) and
calls as fast.
"""

from __future__ import annotations

from collections.abc import Callable
from types import BuiltinMethodType as BUILTIN_METHOD
from typing import Any

from ..builtins.ops import to_string
from ..errors import TemplateError, TemplateRuntimeError
from ..sandbox.budget import CHARS_PER_STEP as SHORT
from ..sandbox.budget import (
    SCALARS,
    argument_units,
    charge_arguments,
    charge_built,
    charge_compared_arguments,
    check_key,
    check_length,
)
from ..sandbox.callguard import GUARDED, call_guarded
from ..sandbox.limits import Limits
from ..values.runtime import MISSING, Macro, Undefined, wants_environment
from .frames import Frame, located

Charge = Callable[[Any, Any], None]


class Const:
    __slots__ = ("value",)
    value: Any

    def __init__(self, value: Any) -> None:
        self.value = value

    def eval(self, frame: Frame) -> Any:
        return self.value


class FreshConst:
    """A folded container: each evaluation gets its own, as Jinja's generated code does (and
    the copy is charged as building it would be: every container and string in it)."""

    __slots__ = ("value", "steps", "size")
    value: Any
    steps: int
    size: int

    def __init__(self, value: Any) -> None:
        self.value = value
        self.steps, self.size = copy_cost(value)

    def eval(self, frame: Frame) -> Any:
        state = frame.state
        state.charge(self.steps)
        state.allocate(self.size)
        return fresh(self.value)


def copy_cost(value: Any) -> tuple[int, int]:
    """The steps and bytes :func:`fresh` spends on ``value`` (at least one step)."""
    items = 0
    size = 0
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:  # (strings are shared by the copies, not copied)
            items += len(item)
            size += 48 * len(item) + 64
            stack.extend(item.values())
        elif kind is list or kind is tuple or kind is set:
            items += len(item)
            size += 8 * len(item) + 56
            stack.extend(item)
    return 1 + items // 8 + size // 1024, size


def fresh(value: Any) -> Any:
    """A copy of a folded constant whose containers are new objects."""
    kind = type(value)
    if kind is list:
        return [fresh(item) for item in value]
    if kind is dict:
        return {key: fresh(item) for key, item in value.items()}
    if kind is set:
        return set(value)
    if kind is tuple:
        return tuple(fresh(item) for item in value)
    return value


class Name:
    __slots__ = ("name", "undefined")
    name: str
    undefined: type[Any]

    def __init__(self, name: str, undefined: type[Any]) -> None:
        self.name = name
        self.undefined = undefined

    def eval(self, frame: Frame) -> Any:
        name = self.name
        scope: Frame | None = frame
        while scope is not None:
            variables = scope.vars
            if name in variables:
                return variables[name]
            scope = scope.parent
        return self.undefined(name=name)


class ContextName:
    """A name the template never assigns: it can only be a variable of the render's context
    or a global, found in one lookup instead of a walk through the scopes."""

    __slots__ = ("name", "undefined")
    name: str
    undefined: type[Any]

    def __init__(self, name: str, undefined: type[Any]) -> None:
        self.name = name
        self.undefined = undefined

    def eval(self, frame: Frame) -> Any:
        variables = frame.state.context
        if self.name in variables:
            return variables[self.name]
        return self.undefined(name=self.name)


class TupleLit:
    __slots__ = ("items",)
    items: tuple[Any, ...]

    def __init__(self, items: tuple[Any, ...]) -> None:
        self.items = items

    def eval(self, frame: Frame) -> Any:
        return tuple([item.eval(frame) for item in self.items])


class ListLit:
    """``[a, b]``.  Not measured for nesting here: one expression adds at most a level per
    node of its own, and whatever is kept longer (stored, or passed to a macro or a recursive
    loop, which is how a loop could add a level per pass) is measured then (see
    budget.check_nesting)."""

    __slots__ = ("items",)
    items: tuple[Any, ...]

    def __init__(self, items: tuple[Any, ...]) -> None:
        self.items = items

    def eval(self, frame: Frame) -> Any:
        return [item.eval(frame) for item in self.items]


class DictLit:
    __slots__ = ("pairs", "pos")
    pairs: tuple[Any, ...]
    pos: int

    def __init__(self, pairs: tuple[Any, ...], pos: int) -> None:
        self.pairs = pairs
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        try:
            return {check_key(key.eval(frame)): value.eval(frame) for key, value in self.pairs}
        except TypeError as error:
            raise located(error, self.pos) from None


class GetKeyOrAttr:
    """``obj.name`` where ``name`` cannot be a dict method: a dict's key is found directly
    (Jinja looks attributes up before items, so ``d.items`` is never compiled to this)."""

    __slots__ = ("obj", "attr", "pos", "policy_getattr", "undefined")
    obj: Any
    attr: str
    pos: int
    policy_getattr: Any
    undefined: type[Any]

    def __init__(self, obj: Any, attr: str, pos: int, policy_getattr: Any, undefined: type[Any]):
        self.obj = obj
        self.attr = attr
        self.pos = pos
        self.policy_getattr = policy_getattr
        self.undefined = undefined

    def eval(self, frame: Frame) -> Any:
        value = self.obj.eval(frame)
        if value.__class__ is dict:
            found = value.get(self.attr, MISSING)  # a missing key is common: no KeyError
            return self.undefined(obj=value, name=self.attr) if found is MISSING else found
        try:
            return self.policy_getattr(value, self.attr)
        except Exception as error:
            raise located(error, self.pos) from None


class NameKeyOrAttr(GetKeyOrAttr):
    """``name.key`` (``message.role``): the variable's lookup done here, one call fewer."""

    __slots__ = ("name",)
    name: str

    def __init__(self, obj: Name, attr: str, pos: int, policy_getattr: Any, undefined: type[Any]):
        GetKeyOrAttr.__init__(self, obj, attr, pos, policy_getattr, undefined)
        self.name = obj.name

    def eval(self, frame: Frame) -> Any:
        name = self.name
        scope: Frame | None = frame
        while scope is not None:
            variables = scope.vars
            if name in variables:
                value = variables[name]
                break
            scope = scope.parent
        else:
            value = self.undefined(name=name)
        if value.__class__ is dict:
            found = value.get(self.attr, MISSING)  # a missing key is common: no KeyError
            return self.undefined(obj=value, name=self.attr) if found is MISSING else found
        try:
            return self.policy_getattr(value, self.attr)
        except Exception as error:
            raise located(error, self.pos) from None


class GetAttr:
    __slots__ = ("obj", "attr", "pos", "policy_getattr")
    obj: Any
    attr: str
    pos: int
    policy_getattr: Any

    def __init__(self, obj: Any, attr: str, pos: int, policy_getattr: Any) -> None:
        self.obj = obj
        self.attr = attr
        self.pos = pos
        self.policy_getattr = policy_getattr

    def eval(self, frame: Frame) -> Any:
        value = self.obj.eval(frame)
        try:
            return self.policy_getattr(value, self.attr)
        except Exception as error:
            raise located(error, self.pos) from None


class GetItem:
    __slots__ = ("obj", "key", "pos", "policy_getitem")
    obj: Any
    key: Any
    pos: int
    policy_getitem: Any

    def __init__(self, obj: Any, key: Any, pos: int, policy_getitem: Any) -> None:
        self.obj = obj
        self.key = key
        self.pos = pos
        self.policy_getitem = policy_getitem

    def eval(self, frame: Frame) -> Any:
        value = self.obj.eval(frame)
        index = self.key.eval(frame)
        # message['role'] and items[0]: found directly; a miss takes the sandbox's path.
        kind = value.__class__
        if (kind is dict and index.__class__ is str) or (kind is list and index.__class__ is int):
            try:
                return value[index]
            except LookupError:
                pass
        try:
            return self.policy_getitem(value, index)
        except Exception as error:
            raise located(error, self.pos) from None


class GetConstItem:
    """``obj['key']`` or ``obj[0]``: a constant key, looked up without evaluating it."""

    __slots__ = ("obj", "key", "pos", "policy_getitem", "fast")
    obj: Any
    key: Any
    pos: int
    policy_getitem: Any
    fast: Any

    def __init__(self, obj: Any, key: Any, pos: int, policy_getitem: Any) -> None:
        self.obj = obj
        self.key = key
        self.pos = pos
        self.policy_getitem = policy_getitem
        # The container type a direct lookup may be tried on (see GetItem.eval).
        self.fast = dict if key.__class__ is str else list if key.__class__ is int else None

    def eval(self, frame: Frame) -> Any:
        value = self.obj.eval(frame)
        if value.__class__ is self.fast:
            try:
                return value[self.key]
            except LookupError:
                pass  # the sandbox's getitem makes the undefined value
        try:
            return self.policy_getitem(value, self.key)
        except Exception as error:
            raise located(error, self.pos) from None


class NameConstItem(GetConstItem):
    """``message['role']``: the variable's lookup done here, one call fewer."""

    __slots__ = ("name", "undefined")
    name: str
    undefined: type[Any]

    def __init__(self, obj: Name, key: Any, pos: int, policy_getitem: Any) -> None:
        GetConstItem.__init__(self, obj, key, pos, policy_getitem)
        self.name = obj.name
        self.undefined = obj.undefined

    def eval(self, frame: Frame) -> Any:
        name = self.name
        scope: Frame | None = frame
        while scope is not None:
            variables = scope.vars
            if name in variables:
                value = variables[name]
                break
            scope = scope.parent
        else:
            value = self.undefined(name=name)
        if value.__class__ is self.fast:
            try:
                return value[self.key]
            except LookupError:
                pass  # the sandbox's getitem makes the undefined value
        try:
            return self.policy_getitem(value, self.key)
        except Exception as error:
            raise located(error, self.pos) from None


class Slice:
    """The ``slice`` object of ``[a:b:c]``."""

    __slots__ = ("start", "stop", "step")
    start: Any
    stop: Any
    step: Any

    def __init__(self, start: Any, stop: Any, step: Any) -> None:
        self.start = start
        self.stop = stop
        self.step = step

    def eval(self, frame: Frame) -> Any:
        start, stop, step = self.start, self.stop, self.step
        return slice(
            start.eval(frame) if start is not None else None,
            stop.eval(frame) if stop is not None else None,
            step.eval(frame) if step is not None else None,
        )


class GetSlice:
    """``x[a:b]`` subscripted directly, as Jinja does: slicing None fails, not undefined."""

    __slots__ = ("obj", "bounds", "pos")
    obj: Any
    bounds: Slice
    pos: int

    def __init__(self, obj: Any, bounds: Slice, pos: int) -> None:
        self.obj = obj
        self.bounds = bounds
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        value = self.obj.eval(frame)
        bounds = self.bounds.eval(frame)
        try:
            result = value[bounds]
        except Exception as error:
            raise located(error, self.pos) from None
        charge_built(result)  # a slice is a copy
        return result


class Arguments:
    """The arguments of a call or filter: ``eval`` gives ``(args, kwargs)``."""

    __slots__ = ("positional", "keywords", "star", "dstar", "free")
    positional: tuple[Any, ...]
    keywords: tuple[Any, ...]
    star: Any
    dstar: Any
    free: bool

    def __init__(
        self, positional: tuple[Any, ...], keywords: tuple[Any, ...], star: Any, dstar: Any
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
            and all(a.__class__ is Const for a in positional)
            and all(v.__class__ is Const for _, v in keywords)
            and argument_units([a.value for a in positional], {k: v.value for k, v in keywords})
            == 0
        )

    def eval(self, frame: Frame) -> tuple[list[Any], dict[str, Any]]:
        # Literal arguments (`f(x, "", 0)`) are read, not called.  (A loop, not comprehensions:
        # a comprehension is a function call of its own, dearer than the one or two arguments
        # most calls have.)
        args = []
        for a in self.positional:
            args.append(a.value if a.__class__ is Const else a.eval(frame))
        if self.star is not None:
            extra = self.star.eval(frame)
            if hasattr(extra, "__len__"):
                check_length(len(extra), frame.state.limits, "list")
            try:
                args.extend(extra)
            except TypeError:
                kind = type(extra).__name__
                raise TypeError(f"Value after * must be an iterable, not {kind}") from None
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


class CallEmpty:
    __slots__ = ("func", "environment", "pos")
    func: Any
    environment: Any
    pos: int

    def __init__(self, func: Any, environment: Any, pos: int) -> None:
        self.func = func
        self.environment = environment
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        target = self.func.eval(frame)
        state = frame.state
        state.steps += 1  # Budget.step, inlined: calls are frequent
        if state.steps >= state.next_clock:
            state.check()
        try:
            if target.__class__ is Macro:
                result = target._invoke()  # the template's own macro: straight to its body
            elif wants_environment(target):
                # pass_environment marks a global as well as a filter, as in Jinja.
                result = target(self.environment)
            elif GUARDED:
                result = call_guarded(target, [], {})
            else:
                result = target()
        except Exception as error:
            raise located(error, self.pos) from None
        kind = result.__class__  # (short strings and scalars are free: see costly)
        if not ((kind is str and len(result) < SHORT) or kind in SCALARS):
            charge_built(result)  # what a method built (split, upper, copy) counts
        return result


class Call:
    __slots__ = ("func", "arguments", "environment", "pos")
    func: Any
    arguments: Arguments
    environment: Any
    pos: int

    def __init__(self, func: Any, arguments: Arguments, environment: Any, pos: int) -> None:
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
            if target.__class__ is Macro:
                # The template's own macro: binding its arguments walks none of them.
                result = target._invoke(*args, **kwargs)
            else:
                # The callee may walk its arguments (startswith(a_tuple), ''.join(a_list)):
                # charged before it runs, by their sizes.
                if not self.arguments.free and (args or kwargs):
                    charge_arguments(args, kwargs)
                    # (a list's or tuple's own method compares an argument with its items)
                    receiver = target.__self__ if target.__class__ is BUILTIN_METHOD else None
                    charge_compared_arguments(args, kwargs, receiver)
                # (a str or dict method, the usual callee, carries no marker: not looked for)
                if target.__class__ is not BUILTIN_METHOD and wants_environment(target):
                    args.insert(0, self.environment)
                if GUARDED:
                    result = call_guarded(target, args, kwargs)
                else:
                    result = target(*args, **kwargs)
        except Exception as error:
            raise located(error, self.pos) from None
        kind = result.__class__
        if not ((kind is str and len(result) < SHORT) or kind in SCALARS):
            charge_built(result)
        return result


# ---------------------------------------------------------------- filters and tests
# An applier's ``apply(frame, value)`` runs one filter or test on a value already computed:
# the links of a ``{% filter %}`` block's chain, and filters given arguments.


class MissingFunction:
    """A filter or test unknown when compiling inside an ``if``: only reaching it fails."""

    __slots__ = ("message", "pos")
    message: str
    pos: int

    def __init__(self, message: str, pos: int) -> None:
        self.message = message
        self.pos = pos

    def apply(self, frame: Frame, value: Any) -> Any:
        raise located(TemplateRuntimeError(self.message), self.pos)


class ApplyBare:
    """A filter or test without arguments (``environment`` is passed first when it asks)."""

    __slots__ = ("func", "environment", "charge", "pos")
    func: Any
    environment: Any
    charge: Charge
    pos: int

    def __init__(self, func: Any, environment: Any, charge: Charge, pos: int) -> None:
        self.func = func
        self.environment = environment  # None unless the function wants it
        self.charge = charge
        self.pos = pos

    def apply(self, frame: Frame, value: Any) -> Any:
        try:
            kind = value.__class__  # (short strings and scalars cost nothing: see costly)
            if not ((kind is str and len(value) < SHORT) or kind in SCALARS):
                self.charge(value, None)
            if self.environment is None:
                result = self.func(value)
            else:
                result = self.func(self.environment, value)
        except Exception as error:
            raise located(error, self.pos) from None
        kind = result.__class__
        if not ((kind is str and len(result) < SHORT) or kind in SCALARS):
            self.charge(None, result)
        return result


class ApplyWithArguments:
    __slots__ = ("func", "environment", "arguments", "charge", "pos")
    func: Any
    environment: Any
    arguments: Arguments
    charge: Charge
    pos: int

    def __init__(
        self, func: Any, environment: Any, arguments: Arguments, charge: Charge, pos: int
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
            kind = value.__class__  # (short strings and scalars cost nothing: see costly)
            if not ((kind is str and len(value) < SHORT) or kind in SCALARS):
                self.charge(value, None)
            if self.environment is None:
                result = self.func(value, *args, **kwargs)
            else:
                result = self.func(self.environment, value, *args, **kwargs)
        except Exception as error:
            raise located(error, self.pos) from None
        kind = result.__class__
        if not ((kind is str and len(result) < SHORT) or kind in SCALARS):
            self.charge(None, result)
        return result


class FilterChain:
    __slots__ = ("appliers",)
    appliers: tuple[Any, ...]

    def __init__(self, appliers: tuple[Any, ...]) -> None:
        self.appliers = appliers

    def apply(self, frame: Frame, value: Any) -> Any:
        for applier in self.appliers:
            value = applier.apply(frame, value)
        return value


class Applied:
    """``value|f(...)`` or ``value is t(...)`` through an applier."""

    __slots__ = ("value", "applier")
    value: Any
    applier: Any

    def __init__(self, value: Any, applier: Any) -> None:
        self.value = value
        self.applier = applier

    def eval(self, frame: Frame) -> Any:
        return self.applier.apply(frame, self.value.eval(frame))


class ApplyFree:
    """``x|trim``, ``x is defined``: a function whose work is never charged, in one call."""

    __slots__ = ("value", "func", "pos")
    value: Any
    func: Any
    pos: int

    def __init__(self, value: Any, func: Any, pos: int) -> None:
        self.value = value
        self.func = func
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        operand = self.value.eval(frame)
        try:
            return self.func(operand)
        except Exception as error:
            raise located(error, self.pos) from None


class ApplyCharged:
    """A filter or test without arguments whose big inputs and outputs are charged."""

    __slots__ = ("value", "func", "charge", "pos")
    value: Any
    func: Any
    charge: Charge
    pos: int

    def __init__(self, value: Any, func: Any, charge: Charge, pos: int) -> None:
        self.value = value
        self.func = func
        self.charge = charge
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        operand = self.value.eval(frame)
        try:
            # Short strings and scalars cost nothing: skip the charging call for them.
            kind = operand.__class__
            if not ((kind is str and len(operand) < SHORT) or kind in SCALARS):
                self.charge(operand, None)
            result = self.func(operand)
        except Exception as error:
            raise located(error, self.pos) from None
        kind = result.__class__
        if not ((kind is str and len(result) < SHORT) or kind in SCALARS):
            self.charge(None, result)
        return result


# ---------------------------------------------------------------- operators


class Not:
    __slots__ = ("operand", "pos")
    operand: Any
    pos: int

    def __init__(self, operand: Any, pos: int) -> None:
        self.operand = operand
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        value = self.operand.eval(frame)
        try:
            return not value
        except Exception as error:
            raise located(error, self.pos) from None


class Sign:
    """Unary ``-`` or ``+``."""

    __slots__ = ("operand", "negate", "pos")
    operand: Any
    negate: bool
    pos: int

    def __init__(self, operand: Any, negate: bool, pos: int) -> None:
        self.operand = operand
        self.negate = negate
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        value = self.operand.eval(frame)
        try:
            return -value if self.negate else +value
        except Exception as error:
            raise located(error, self.pos) from None


class BinOp:
    __slots__ = ("left", "right", "op", "pos")
    left: Any
    right: Any
    op: Callable[[Any, Any], Any]
    pos: int

    def __init__(self, left: Any, right: Any, op: Callable[[Any, Any], Any], pos: int) -> None:
        self.left = left
        self.right = right
        self.op = op
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        a = self.left.eval(frame)
        b = self.right.eval(frame)
        try:
            return self.op(a, b)
        except Exception as error:
            raise located(error, self.pos) from None


class Add(BinOp):
    """Joining two short strings is most of what chat templates compute: done inline, and
    everything else (sizes, numbers, lists) left to the checked operator."""

    __slots__ = ()

    def eval(self, frame: Frame) -> Any:
        left, right = self.left, self.right  # literal sides are read, not called
        a = left.value if left.__class__ is Const else left.eval(frame)
        b = right.value if right.__class__ is Const else right.eval(frame)
        if a.__class__ is str and b.__class__ is str and len(a) + len(b) <= SHORT:
            return a + b
        try:
            return self.op(a, b)
        except Exception as error:
            raise located(error, self.pos) from None


class AddChain:
    """``a + b + c + ...`` in one evaluator, still evaluated and added left to right."""

    __slots__ = ("first", "operands", "add", "limits")
    first: Any
    operands: tuple[Any, ...]
    add: Callable[[Any, Any], Any]
    limits: Limits

    def __init__(
        self,
        first: Any,
        operands: tuple[Any, ...],
        add: Callable[[Any, Any], Any],
        limits: Limits,
    ) -> None:
        self.first = first
        self.operands = operands  # (position of the `+`, operand) pairs
        self.add = add
        self.limits = limits

    def eval(self, frame: Frame) -> Any:
        total = self.first.eval(frame)
        for pos, operand in self.operands:
            # The literal pieces of '<|im_start|>' + role + '\n' are read, not called.
            value = operand.value if operand.__class__ is Const else operand.eval(frame)
            if (
                total.__class__ is str
                and value.__class__ is str
                and len(total) + len(value) <= SHORT
            ):
                total = total + value
                continue
            try:
                total = self.add(total, value)
            except Exception as error:
                raise located(error, pos) from None
        return total


class Concat:
    """``a ~ b ~ c``."""

    __slots__ = ("items", "pos", "limits")
    items: tuple[Any, ...]
    pos: int
    limits: Limits

    def __init__(self, items: tuple[Any, ...], pos: int, limits: Limits) -> None:
        self.items = items
        self.pos = pos
        self.limits = limits

    def eval(self, frame: Frame) -> Any:
        try:
            parts = []
            total = 0
            for item in self.items:
                value = item.eval(frame)
                text = value if value.__class__ is str else to_string(value)
                total += len(text)
                parts.append(text)
            check_length(total, self.limits)
            return frame.state.join(parts)
        except Exception as error:
            raise located(error, self.pos) from None


class CompareEqual:
    """``a == b`` or ``a != b``."""

    __slots__ = ("first", "second", "equal", "checked", "pos")
    first: Any
    second: Any
    equal: bool
    checked: Any
    pos: int

    def __init__(self, first: Any, second: Any, equal: bool, checked: Any, pos: int) -> None:
        self.first = first
        self.second = second
        self.equal = equal
        self.checked = checked
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        a = self.first.eval(frame)
        b = self.second.eval(frame)
        # A short string, a number or None compares with anything in bounded time,
        # so only other values go through the operator that charges the budget.
        kind = a.__class__
        try:
            if (kind is str and len(a) <= SHORT) or kind in SCALARS:
                return a == b if self.equal else a != b
            return self.checked(a, b)
        except Exception as error:
            raise located(error, self.pos) from None


class CompareConst:
    """``a == 'user'`` or ``a != 0``: the constant side needs no evaluation, and comparing
    with a short string, a number or None takes bounded time whatever ``a`` is, as long as
    ``a`` is one of those too (anything else goes through the charging operator)."""

    __slots__ = ("first", "value", "equal", "checked", "pos")
    first: Any
    value: Any
    equal: bool
    checked: Any
    pos: int

    def __init__(self, first: Any, value: Any, equal: bool, checked: Any, pos: int) -> None:
        self.first = first
        self.value = value
        self.equal = equal
        self.checked = checked
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        a = self.first.eval(frame)
        kind = a.__class__
        try:
            if (kind is str and len(a) <= SHORT) or kind in SCALARS:
                return a == self.value if self.equal else a != self.value
            return self.checked(a, self.value)
        except Exception as error:
            raise located(error, self.pos) from None


class CompareOne:
    __slots__ = ("first", "second", "op", "pos")
    first: Any
    second: Any
    op: Any
    pos: int

    def __init__(self, first: Any, second: Any, op: Any, pos: int) -> None:
        self.first = first
        self.second = second
        self.op = op
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        # `'type' in param`, `n > 0`: a literal side is read, not called.
        first, second = self.first, self.second
        a = first.value if first.__class__ is Const else first.eval(frame)
        b = second.value if second.__class__ is Const else second.eval(frame)
        try:
            return self.op(a, b)
        except Exception as error:
            raise located(error, self.pos) from None


class CompareChain:
    """``a < b < c``: each operand evaluated once, stopping at the first false link."""

    __slots__ = ("first", "rest", "pos")
    first: Any
    rest: tuple[Any, ...]
    pos: int

    def __init__(self, first: Any, rest: tuple[Any, ...], pos: int) -> None:
        self.first = first
        self.rest = rest  # (operator, operand) pairs
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        left = self.first.eval(frame)
        try:
            for op, operand in self.rest:
                right = operand.eval(frame)
                result = op(left, right)
                if not result:
                    return result
                left = right
            return result
        except TemplateError:
            raise
        except Exception as error:
            raise located(error, self.pos) from None


class And:
    __slots__ = ("left", "right", "pos")
    left: Any
    right: Any
    pos: int

    def __init__(self, left: Any, right: Any, pos: int) -> None:
        self.left = left
        self.right = right
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        value = self.left.eval(frame)
        try:
            if not value:
                return value
        except Exception as error:
            raise located(error, self.pos) from None
        return self.right.eval(frame)


class Or:
    __slots__ = ("left", "right", "pos")
    left: Any
    right: Any
    pos: int

    def __init__(self, left: Any, right: Any, pos: int) -> None:
        self.left = left
        self.right = right
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        value = self.left.eval(frame)
        try:
            if value:
                return value
        except Exception as error:
            raise located(error, self.pos) from None
        return self.right.eval(frame)


class CondExpr:
    __slots__ = ("test", "then", "otherwise", "pos")
    test: Any
    then: Any
    otherwise: Any
    pos: int

    def __init__(self, test: Any, then: Any, otherwise: Any, pos: int) -> None:
        self.test = test
        self.then = then
        self.otherwise = otherwise
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        value = self.test.eval(frame)
        try:
            truth = bool(value)
        except Exception as error:
            raise located(error, self.pos) from None
        if truth:
            return self.then.eval(frame)
        if self.otherwise is None:
            # Always the lenient Undefined, whatever the environment's class, as in Jinja.
            return Undefined(
                "the inline if-expression evaluated to false and no else section was defined."
            )
        return self.otherwise.eval(frame)
