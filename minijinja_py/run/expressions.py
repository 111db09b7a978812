"""The evaluators of expressions: small slotted objects whose `eval(frame)` gives a value.

The compiler builds one tree of them per template and decides everything that does not depend
on the data (which class, which operator, which filter function) while building it, so that an
evaluator only computes.  A tree of objects holding their operands in slots is several times
smaller than the equivalent closures (no function object, closure tuple and cell each) and
calls as fast.

This module holds the constants, names, literals and lookups (attribute, item, slice); the
evaluators of calls, filters and tests are in calls.py, those of operators in operators.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ..builtins.access import LOOP_ATTRIBUTES, AttributePolicy
from ..builtins.methods import DICT_METHODS
from ..sandbox.budget import charge_built
from ..sandbox.measure import check_key
from ..values import runtime
from ..values.runtime import MISSING as RUNTIME_MISSING
from .evaluator import Expression
from .frames import Frame, located

Charge = Callable[[Any, Any], None]

# The lookups' "no such key": a Final name of this module, which the compiled build reads as
# a C static (an imported name is looked up in the module's dict at every use).
MISSING: Final[Any] = RUNTIME_MISSING
LoopContext: Final = runtime.LoopContext
# (the namespaces read in place: a name starting with "_" is never compiled to these lookups)
PLAIN_NAMESPACES: Final = runtime.PLAIN_NAMESPACES


class Const(Expression):
    __slots__ = ("value",)
    value: Any

    def __init__(self, value: Any) -> None:
        self.value = value

    def eval(self, frame: Frame) -> Any:
        return self.value


class FreshConst(Expression):
    """A folded container: each evaluation gets its own, as Jinja's generated code does (and
    the copy is charged as building it would be: every container and string in it)."""

    __slots__ = ("value", "steps", "size", "shallow")
    value: Any
    steps: int
    size: int
    shallow: bool

    def __init__(self, value: Any) -> None:
        self.value = value
        self.steps, self.size = copy_cost(value)
        # `[('maximum', 'Maximum'), ...]`: only the outer container needs to be new (its
        # tuples and strings cannot change), so one C-level copy makes it.
        self.shallow = type(value) is not tuple and not any(
            map(holds_mutable, value.values() if type(value) is dict else value)
        )

    def eval(self, frame: Frame) -> Any:
        state = frame.state
        state.charge(self.steps)
        state.allocate(self.size)
        if self.shallow:
            return self.value.copy()
        return fresh(self.value)


def copy_cost(value: Any) -> tuple[int, int]:
    """The steps and bytes `fresh` spends on `value` (at least one step)."""
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


def holds_mutable(value: Any) -> bool:
    """Whether `value` is or contains a list, dict or set (a folded constant's only mutables)."""
    kind = type(value)
    if kind is list or kind is dict or kind is set:
        return True
    return kind is tuple and any(map(holds_mutable, value))


def fresh(value: Any) -> Any:
    """A copy of a folded constant whose mutable containers are new objects (a tuple of
    constants is shared, as the constants of Python code are)."""
    kind = type(value)
    if kind is list:
        return [fresh(item) for item in value]
    if kind is dict:
        return {key: fresh(item) for key, item in value.items()}
    if kind is set:
        return set(value)
    if kind is tuple and holds_mutable(value):
        return tuple([fresh(item) for item in value])
    return value


class Name(Expression):
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


class ContextName(Expression):
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


class TupleLit(Expression):
    __slots__ = ("items",)
    items: tuple[Expression, ...]

    def __init__(self, items: tuple[Expression, ...]) -> None:
        self.items = items

    def eval(self, frame: Frame) -> Any:
        return tuple([item.eval(frame) for item in self.items])


class ListLit(Expression):
    """`[a, b]`.  Not measured for nesting here: one expression adds at most a level per
    node of its own, and whatever is kept longer (stored, or passed to a macro or a recursive
    loop, which is how a loop could add a level per pass) is measured then (see
    budget.check_nesting)."""

    __slots__ = ("items",)
    items: tuple[Expression, ...]

    def __init__(self, items: tuple[Expression, ...]) -> None:
        self.items = items

    def eval(self, frame: Frame) -> Any:
        return [item.eval(frame) for item in self.items]


class DictLit(Expression):
    __slots__ = ("pairs", "pos")
    pairs: tuple[tuple[Expression, Expression], ...]
    pos: int | None

    def __init__(self, pairs: tuple[tuple[Expression, Expression], ...], pos: int | None) -> None:
        self.pairs = pairs
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        try:
            return {check_key(key.eval(frame)): value.eval(frame) for key, value in self.pairs}
        except TypeError as error:
            raise located(error, self.pos) from None


class GetKeyOrAttr(Expression):
    """`obj.name` where `name` cannot be a dict method: a dict's key is found directly
    (Jinja looks attributes up before items, so `d.items` is never compiled to this)."""

    __slots__ = ("obj", "attr", "pos", "policy_getattr", "undefined", "loop_attribute")
    obj: Expression
    attr: str
    pos: int | None
    policy_getattr: Any
    undefined: type[Any]
    loop_attribute: bool  # (a name the policy lets a loop give: `loop.index0`, `loop.last`)

    def __init__(self, obj: Expression, attr: str, pos: int | None, policy_getattr: Any, undefined: type[Any]):
        self.obj = obj
        self.attr = attr
        self.pos = pos
        self.policy_getattr = policy_getattr
        self.undefined = undefined
        self.loop_attribute = attr in LOOP_ATTRIBUTES

    def eval(self, frame: Frame) -> Any:
        value = self.obj.eval(frame)
        kind = type(value)
        if kind is dict:
            found = value.get(self.attr, MISSING)  # a missing key is common: no KeyError
            return self.undefined(obj=value, name=self.attr) if found is MISSING else found
        if kind in PLAIN_NAMESPACES:  # (`ns.found`: read as the policy reads it)
            found = value._attrs.get(self.attr, MISSING)
            return self.undefined(obj=value, name=self.attr) if found is MISSING else found
        try:
            if kind is LoopContext and self.loop_attribute:
                return getattr(value, self.attr)  # (`loop.last`: as the policy gives it)
            return self.policy_getattr(value, self.attr)
        except Exception as error:
            raise located(error, self.pos) from None


class NameKeyOrAttr(GetKeyOrAttr):
    """`name.key` (`message.role`): the variable's lookup done here, one call fewer."""

    __slots__ = ("name",)
    name: str

    def __init__(self, obj: Name, attr: str, pos: int | None, policy_getattr: Any, undefined: type[Any]):
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
        kind = type(value)
        if kind is dict:
            found = value.get(self.attr, MISSING)  # a missing key is common: no KeyError
            return self.undefined(obj=value, name=self.attr) if found is MISSING else found
        if kind in PLAIN_NAMESPACES:
            found = value._attrs.get(self.attr, MISSING)
            return self.undefined(obj=value, name=self.attr) if found is MISSING else found
        try:
            if kind is LoopContext and self.loop_attribute:
                return getattr(value, self.attr)
            return self.policy_getattr(value, self.attr)
        except Exception as error:
            raise located(error, self.pos) from None


class GetAttr(Expression):
    __slots__ = ("obj", "attr", "pos", "policy_getattr")
    obj: Expression
    attr: str
    pos: int | None
    policy_getattr: Any

    def __init__(self, obj: Expression, attr: str, pos: int | None, policy_getattr: Any) -> None:
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


class GetItem(Expression):
    __slots__ = ("obj", "key", "pos", "policy_getitem")
    obj: Expression
    key: Expression
    pos: int | None
    policy_getitem: Any

    def __init__(self, obj: Expression, key: Expression, pos: int | None, policy_getitem: Any) -> None:
        self.obj = obj
        self.key = key
        self.pos = pos
        self.policy_getitem = policy_getitem

    def eval(self, frame: Frame) -> Any:
        value = self.obj.eval(frame)
        index = self.key.eval(frame)
        # message['role'] and items[0]: found directly; a miss takes the sandbox's path.
        kind = type(value)
        if (kind is dict and type(index) is str) or (kind is list and type(index) is int):
            try:
                return value[index]
            except LookupError:
                pass
        try:
            return self.policy_getitem(value, index)
        except Exception as error:
            raise located(error, self.pos) from None


class GetConstItem(Expression):
    """`obj['key']` or `obj[0]`: a constant key, looked up without evaluating it."""

    __slots__ = ("obj", "key", "pos", "policy_getitem", "fast", "missed")
    obj: Expression
    key: Any
    pos: int | None
    policy_getitem: Any
    fast: Any
    missed: Any

    def __init__(self, obj: Expression, key: Any, pos: int | None, policy_getitem: Any) -> None:
        self.obj = obj
        self.key = key
        self.pos = pos
        self.policy_getitem = policy_getitem
        # The container type a direct lookup may be tried on (see GetItem.eval).
        self.fast = dict if type(key) is str else list if type(key) is int else None
        # `message['tool_calls']` on a message without them: the sandbox's getitem looks the
        # name up as an attribute, and a plain dict has none by a name that is no dict method
        # or attribute, private or not (access.AttributePolicy._item_fallback): its answer,
        # the environment's undefined, is made here.  None where that is not known when
        # compiling (another key, another policy).
        self.missed = (
            getattr(policy_getitem, "__self__", None)
            if type(key) is str
            and key[:1] != "_"
            and key not in DICT_METHODS
            and not hasattr(dict, key)
            and getattr(policy_getitem, "__func__", None) is AttributePolicy.getitem
            else None
        )

    def eval(self, frame: Frame) -> Any:
        value = self.obj.eval(frame)
        # (the exact type tested first, so that the compiled build knows `value` a dict)
        if type(value) is dict:
            if self.fast is dict:  # (a string key)
                found = value.get(self.key, MISSING)  # a missing key is common: no KeyError
                if found is not MISSING:
                    return found
                if self.missed is not None:
                    return self.missed.environment.undefined(obj=value, name=self.key)
        elif type(value) is self.fast:  # (a list, an int key)
            try:
                return value[self.key]
            except LookupError:
                pass  # the sandbox's getitem makes the undefined value
        try:
            return self.policy_getitem(value, self.key)
        except Exception as error:
            raise located(error, self.pos) from None


class NameConstItem(GetConstItem):
    """`message['role']`: the variable's lookup done here, one call fewer."""

    __slots__ = ("name", "undefined")
    name: str
    undefined: type[Any]

    def __init__(self, obj: Name, key: Any, pos: int | None, policy_getitem: Any) -> None:
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
        if type(value) is dict:  # (see GetConstItem)
            if self.fast is dict:
                found = value.get(self.key, MISSING)
                if found is not MISSING:
                    return found
                if self.missed is not None:
                    return self.missed.environment.undefined(obj=value, name=self.key)
        elif type(value) is self.fast:
            try:
                return value[self.key]
            except LookupError:
                pass  # the sandbox's getitem makes the undefined value
        try:
            return self.policy_getitem(value, self.key)
        except Exception as error:
            raise located(error, self.pos) from None


class Slice(Expression):
    """The `slice` object of `[a:b:c]`."""

    __slots__ = ("start", "stop", "step")
    start: Expression | None
    stop: Expression | None
    step: Expression | None

    def __init__(
        self, start: Expression | None, stop: Expression | None, step: Expression | None
    ) -> None:
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


class GetSlice(Expression):
    """`x[a:b]` subscripted directly, as Jinja does: slicing None fails, not undefined."""

    __slots__ = ("obj", "bounds", "pos")
    obj: Expression
    bounds: Slice
    pos: int | None

    def __init__(self, obj: Expression, bounds: Slice, pos: int | None) -> None:
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
