"""The syntax tree: immutable nodes that remember the source offset they came from."""

from __future__ import annotations

from typing import Any

# Annotations of fields that never hold a node (a Const's value is a Python value).
_LEAF_HINTS = frozenset(["int | None", "str", "bool", "Any"])


class _Frozen:
    """Positional construction in slot order, no mutation, structural equality and repr.

    Written by hand rather than with dataclasses: generating forty dataclasses costs a
    tenth of a second at import, more than the rest of the package together.
    """

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    # The fields that may hold nodes (or tuples of them): what a walk over the tree visits.
    _children: tuple[str, ...] = ()

    def __init_subclass__(cls) -> None:
        inherited = tuple(
            f for base in reversed(cls.__mro__[1:]) for f in getattr(base, "__slots__", ())
        )
        cls._fields = inherited + tuple(cls.__dict__.get("__slots__", ()))
        hints: dict[str, str] = {}
        for klass in reversed(cls.__mro__):
            hints.update(klass.__dict__.get("__annotations__", {}))
        cls._children = tuple(f for f in cls._fields if hints.get(f) not in _LEAF_HINTS)
        if "__init__" not in cls.__dict__:
            # The parser makes a node per grammar rule reduced: a constructor that sets each
            # slot through its descriptor costs a quarter of the generic loop below.
            setters = tuple(getattr(cls, f).__set__ for f in cls._fields)
            if len(setters) < len(_INITS):
                cls.__init__ = _INITS[len(setters)](*setters)  # type: ignore[misc]
            else:
                cls.__init__ = _Frozen.__init__  # type: ignore[misc]

    def __init__(self, *values: Any) -> None:
        if len(values) != len(self._fields):
            raise TypeError(f"{type(self).__name__} takes {len(self._fields)} values")
        for name, value in zip(self._fields, values, strict=True):
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: Any) -> bool:
        return type(self) is type(other) and all(
            getattr(self, f) == getattr(other, f) for f in self._fields
        )

    def __hash__(self) -> int:
        return hash((type(self), *(getattr(self, f) for f in self._fields)))

    def __repr__(self) -> str:
        inner = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields)
        return f"{type(self).__name__}({inner})"


def _init1(s0: Any) -> Any:
    def __init__(self: Any, v0: Any) -> None:
        s0(self, v0)

    return __init__


def _init2(s0: Any, s1: Any) -> Any:
    def __init__(self: Any, v0: Any, v1: Any) -> None:
        s0(self, v0)
        s1(self, v1)

    return __init__


def _init3(s0: Any, s1: Any, s2: Any) -> Any:
    def __init__(self: Any, v0: Any, v1: Any, v2: Any) -> None:
        s0(self, v0)
        s1(self, v1)
        s2(self, v2)

    return __init__


def _init4(s0: Any, s1: Any, s2: Any, s3: Any) -> Any:
    def __init__(self: Any, v0: Any, v1: Any, v2: Any, v3: Any) -> None:
        s0(self, v0)
        s1(self, v1)
        s2(self, v2)
        s3(self, v3)

    return __init__


# Constructors by number of fields (the larger statements keep the generic one: they are few).
_INITS: tuple[Any, ...] = (None, _init1, _init2, _init3, _init4)


class Node(_Frozen):
    __slots__ = ("pos",)
    pos: int | None


# ---------------------------------------------------------------- expressions


class Const(Node):
    __slots__ = ("value",)
    value: Any


class Name(Node):
    __slots__ = ("name",)
    name: str


class TupleLit(Node):
    __slots__ = ("items",)
    items: tuple[Node, ...]


class ListLit(Node):
    __slots__ = ("items",)
    items: tuple[Node, ...]


class DictLit(Node):
    __slots__ = ("pairs",)
    pairs: tuple[tuple[Node, Node], ...]


class GetAttr(Node):
    __slots__ = ("obj", "attr")
    obj: Node
    attr: str


class GetItem(Node):
    __slots__ = ("obj", "key")
    obj: Node
    key: Node


class Slice(Node):
    __slots__ = ("start", "stop", "step")
    start: Node | None
    stop: Node | None
    step: Node | None


class Arguments(_Frozen):
    __slots__ = ("args", "kwargs", "star", "dstar")
    args: tuple[Node, ...]
    kwargs: tuple[tuple[str, Node], ...]
    star: Node | None
    dstar: Node | None

    def __init__(
        self,
        args: tuple[Node, ...] = (),
        kwargs: tuple[tuple[str, Node], ...] = (),
        star: Node | None = None,
        dstar: Node | None = None,
    ) -> None:
        _set_arguments(self, args, kwargs, star, dstar)


# (the slots' setters, as the nodes without defaults are built: one for every call parsed)
_set_arguments = _init4(*(getattr(Arguments, f).__set__ for f in Arguments._fields))
NO_ARGUMENTS = Arguments()


class Call(Node):
    __slots__ = ("func", "arguments")
    func: Node
    arguments: Arguments


class Filter(Node):
    __slots__ = ("value", "name", "arguments")
    value: Node | None  # None inside a filter block or block set: the body's text is the value
    name: str
    arguments: Arguments


class Test(Node):
    __slots__ = ("value", "name", "arguments")
    value: Node
    name: str
    arguments: Arguments


class Unary(Node):
    __slots__ = ("op", "operand")
    op: str  # "-", "+" or "not"
    operand: Node


class BinOp(Node):
    __slots__ = ("op", "left", "right")
    op: str  # + - * / // % **
    left: Node
    right: Node


class Concat(Node):
    __slots__ = ("items",)
    items: tuple[Node, ...]


class Compare(Node):
    __slots__ = ("first", "ops")
    first: Node
    ops: tuple[tuple[str, Node], ...]  # operators: == != < <= > >= in notin


class And(Node):
    __slots__ = ("left", "right")
    left: Node
    right: Node


class Or(Node):
    __slots__ = ("left", "right")
    left: Node
    right: Node


class CondExpr(Node):
    __slots__ = ("test", "then", "otherwise")
    test: Node
    then: Node
    otherwise: Node | None


# ---------------------------------------------------------------- assignment targets


class TargetName(Node):
    __slots__ = ("name",)
    name: str


class TargetTuple(Node):
    __slots__ = ("items",)
    items: tuple[Node, ...]


class TargetAttr(Node):
    __slots__ = ("name", "attr")
    name: str
    attr: str


# ---------------------------------------------------------------- statements


class Data(Node):
    __slots__ = ("text",)
    text: str


class Output(Node):
    __slots__ = ("expr",)
    expr: Node


class If(Node):
    __slots__ = ("test", "body", "otherwise")
    test: Node
    body: tuple[Node, ...]
    otherwise: tuple[Node, ...]  # elif chains arrive here as a nested If


class For(Node):
    __slots__ = ("target", "iter", "body", "otherwise", "condition", "recursive")
    target: Node
    iter: Node
    body: tuple[Node, ...]
    otherwise: tuple[Node, ...]
    condition: Node | None
    recursive: bool


class Assign(Node):
    __slots__ = ("target", "value")
    target: Node
    value: Node


class AssignBlock(Node):
    __slots__ = ("target", "filters", "body")
    target: Node
    filters: tuple[Filter, ...]
    body: tuple[Node, ...]


class Param(_Frozen):
    __slots__ = ("name", "default")
    name: str
    default: Node | None


class Macro(Node):
    __slots__ = ("name", "params", "body")
    name: str
    params: tuple[Param, ...]
    body: tuple[Node, ...]


class CallBlock(Node):
    __slots__ = ("call", "params", "body")
    call: Call
    params: tuple[Param, ...]
    body: tuple[Node, ...]


class FilterBlock(Node):
    __slots__ = ("filters", "body")
    filters: tuple[Filter, ...]
    body: tuple[Node, ...]


class With(Node):
    __slots__ = ("assignments", "body")
    assignments: tuple[tuple[Node, Node], ...]
    body: tuple[Node, ...]


class Generation(Node):
    __slots__ = ("body",)
    body: tuple[Node, ...]


class Break(Node):
    __slots__ = ()


class Continue(Node):
    __slots__ = ()


class Template(Node):
    __slots__ = ("body",)
    body: tuple[Node, ...]


class Block(Node):
    __slots__ = ("name", "scoped", "required", "body")
    name: str
    scoped: bool
    required: bool
    body: tuple[Node, ...]
