"""How values print whose Python text would name the machine: functions, methods, classes and
objects printed by `object.__repr__`.

Python prints `"x".upper` as `<built-in method upper of str object at 0x7f...>` and the
`cycler` global as `<class 'minijinja_py.values.runtime.Cycler'>`: memory addresses and module
paths, which tell an untrusted template where the interpreter's objects lie and how the host
is built.  Jinja2 prints exactly that; this engine promises no internals, so every path that
turns a value into text (`{{ }}`, `~`, `|string`, `|join`, `%`, `.format`, `|pprint`, escaping)
prints such a value by its name alone:

    <function safe_range>   <method upper of str>   <class 'Cycler'>   <Joiner object>
    <generator object do_map>

A container holding one prints as Python prints it, with those items in their neutral form.
Everything else prints as Python prints it (a value with its own `__repr__` chose its text).
"""

from __future__ import annotations

import types
from functools import partial
from typing import Any

from .budget import current_budget
from .measure import PLAIN_TYPES
from .printing import VIEW_TYPES, AttributeBag

_METHOD_TYPES: tuple[type[Any], ...] = (
    types.MethodType,
    types.BuiltinMethodType,  # (also a builtin function: its __self__ is its module)
    types.MethodWrapperType,
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
    types.ClassMethodDescriptorType,
)
_FUNCTION_TYPES: tuple[type[Any], ...] = (types.FunctionType, partial, types.LambdaType)
_GENERATOR_TYPES: tuple[type[Any], ...] = (
    types.GeneratorType,
    types.CoroutineType,
    types.AsyncGeneratorType,
)

# What holds_opaque looks into (it passes the measure's plain scalars by).
_WALKED: tuple[type[Any], ...] = (list, tuple, set, frozenset, dict, AttributeBag, *VIEW_TYPES)

# Types printed as Python prints them without a further look: the values templates print.
_PLAIN_TYPES = frozenset((str, int, float, bool, type(None), list, tuple, dict))


def opaque_text(value: Any) -> str | None:
    """The neutral text of a value whose Python text names the machine; None for any other."""
    kind = type(value)
    if kind in _PLAIN_TYPES:
        return None
    if isinstance(value, type):
        if type(kind.__repr__) is not types.WrapperDescriptorType:
            return None  # a class whose metaclass prints it its own way
        return f"<class '{value.__name__}'>"
    if isinstance(value, _METHOD_TYPES):
        name = getattr(value, "__name__", "?")
        owner = getattr(value, "__self__", None)
        if owner is None and isinstance(value, _METHOD_TYPES[2:]):
            owner = getattr(value, "__objclass__", None)
        if owner is None or isinstance(owner, types.ModuleType):
            return f"<function {name}>"
        owner_name = owner.__name__ if isinstance(owner, type) else type(owner).__name__
        return f"<method {name} of {owner_name}>"
    if isinstance(value, _GENERATOR_TYPES):
        return f"<{kind.__name__} object {getattr(value, '__name__', '?')}>"
    if isinstance(value, _FUNCTION_TYPES):
        func = value.func if isinstance(value, partial) else value
        return f"<function {getattr(func, '__name__', '?')}>"
    if kind.__repr__ is object.__repr__ and kind.__str__ is object.__str__:
        return f"<{kind.__name__} object>"
    return None


class _Shown:
    """An opaque value inside a container, standing in for it while the container prints:
    equal and hashed as the value, so that a set or dict keeps its items."""

    __slots__ = ("text", "value")

    def __init__(self, value: Any, text: str) -> None:
        self.value = value
        self.text = text

    def __repr__(self) -> str:
        return self.text

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        return format(self.text, spec)

    def __hash__(self) -> int:
        return hash(self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Shown) and other.value is self.value


def holds_opaque(value: Any) -> bool:
    """Whether a printed structure holds, at any depth, a value `opaque_text` renames.  Walked
    once per node (the caller has measured the structure: its depth and size are bounded)."""
    if type(value) is tuple:  # (the arguments of a `%` or a `format`: mostly strings, numbers)
        for item in value:
            if type(item) not in PLAIN_TYPES:
                break
        else:
            return False
    seen: set[int] = set()
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        item = pop()
        kind = type(item)
        if kind is str or kind is int or kind is float or kind is bool or item is None:
            continue
        if isinstance(item, _WALKED):
            if id(item) in seen:
                continue
            seen.add(id(item))
            if isinstance(item, AttributeBag):
                item = item._attrs
            if isinstance(item, dict):
                for key, child in item.items():
                    push(key)
                    push(child)
            else:
                for child in item:
                    push(child)
        elif opaque_text(item) is not None:
            return True
    return False


def shown(value: Any) -> Any:
    """`value` with every opaque value in it replaced by its neutral text: what prints (str,
    repr, pprint, `%`) as Python prints `value` but for those.  A container is copied as its
    type prints (a subclass of list prints as a list; a recursive one as Python's `[...]`)."""
    return _shown(value, {})


def _shown(value: Any, copies: dict[int, Any]) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if id(value) in copies:
        return copies[id(value)]
    if isinstance(value, AttributeBag):
        return _Shown(value, f"<Namespace {_shown(value._attrs, copies)!r}>")
    if isinstance(value, VIEW_TYPES):
        mapping = _shown(dict(value.mapping), copies)
        view = type(value)
        if view is type({}.keys()):
            return mapping.keys()
        return mapping.values() if view is type({}.values()) else mapping.items()
    if isinstance(value, dict) and type(value).__repr__ is dict.__repr__:
        copy: dict[Any, Any] = {}
        copies[id(value)] = copy
        for key, child in value.items():
            copy[_shown(key, copies)] = _shown(child, copies)
        return copy
    if isinstance(value, list) and type(value).__repr__ is list.__repr__:
        items: list[Any] = []
        copies[id(value)] = items
        items.extend(_shown(child, copies) for child in value)
        return items
    if isinstance(value, tuple) and type(value).__repr__ is tuple.__repr__:
        return tuple(_shown(child, copies) for child in value)
    if isinstance(value, (set, frozenset)) and type(value).__repr__ in (
        set.__repr__,
        frozenset.__repr__,
    ):
        made = {_shown(child, copies) for child in value}
        return frozenset(made) if isinstance(value, frozenset) else made
    text = opaque_text(value)
    return value if text is None else _Shown(value, text)


def shown_str(value: Any) -> str:
    """`str(value)`, with opaque values printed neutrally (the value is measured already)."""
    if isinstance(value, (str, int, float)) or value is None:
        return str(value)
    text = opaque_text(value)
    if text is not None:
        return text
    # The structure just measured (not a step taken since) by the quick walk, which accepts
    # only plain containers, strings and scalars, holds no opaque value: not walked again.
    budget = current_budget()
    if budget is not None:
        last = budget.printed
        if last is not None and last[0] is value and last[4] == budget.steps:
            return str(value)
    if holds_opaque(value):
        return str(shown(value))
    return str(value)
