"""The syntax tree: immutable nodes that remember the source offset they came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Node:
    pos: int


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True, slots=True)
class Const(Node):
    value: Any


@dataclass(frozen=True, slots=True)
class Name(Node):
    name: str


@dataclass(frozen=True, slots=True)
class TupleLit(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class ListLit(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class DictLit(Node):
    pairs: tuple[tuple[Node, Node], ...]


@dataclass(frozen=True, slots=True)
class GetAttr(Node):
    obj: Node
    attr: str


@dataclass(frozen=True, slots=True)
class GetItem(Node):
    obj: Node
    key: Node


@dataclass(frozen=True, slots=True)
class Slice(Node):
    start: Node | None
    stop: Node | None
    step: Node | None


@dataclass(frozen=True, slots=True)
class Arguments:
    args: tuple[Node, ...] = ()
    kwargs: tuple[tuple[str, Node], ...] = ()
    star: Node | None = None
    dstar: Node | None = None


NO_ARGUMENTS = Arguments()


@dataclass(frozen=True, slots=True)
class Call(Node):
    func: Node
    arguments: Arguments


@dataclass(frozen=True, slots=True)
class Filter(Node):
    value: Node | None  # None inside a filter block or block set: the body's text is the value
    name: str
    arguments: Arguments


@dataclass(frozen=True, slots=True)
class Test(Node):
    value: Node
    name: str
    arguments: Arguments


@dataclass(frozen=True, slots=True)
class Unary(Node):
    op: str  # "-", "+" or "not"
    operand: Node


@dataclass(frozen=True, slots=True)
class BinOp(Node):
    op: str  # + - * / // % **
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Concat(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Compare(Node):
    first: Node
    ops: tuple[tuple[str, Node], ...]  # operators: == != < <= > >= in notin


@dataclass(frozen=True, slots=True)
class And(Node):
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Or(Node):
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class CondExpr(Node):
    test: Node
    then: Node
    otherwise: Node | None


# ---------------------------------------------------------------- assignment targets


@dataclass(frozen=True, slots=True)
class TargetName(Node):
    name: str


@dataclass(frozen=True, slots=True)
class TargetTuple(Node):
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class TargetAttr(Node):
    name: str
    attr: str


# ---------------------------------------------------------------- statements


@dataclass(frozen=True, slots=True)
class Data(Node):
    text: str


@dataclass(frozen=True, slots=True)
class Output(Node):
    expr: Node


@dataclass(frozen=True, slots=True)
class If(Node):
    test: Node
    body: tuple[Node, ...]
    otherwise: tuple[Node, ...]  # elif chains arrive here as a nested If


@dataclass(frozen=True, slots=True)
class For(Node):
    target: Node
    iter: Node
    body: tuple[Node, ...]
    otherwise: tuple[Node, ...]
    condition: Node | None
    recursive: bool


@dataclass(frozen=True, slots=True)
class Assign(Node):
    target: Node
    value: Node


@dataclass(frozen=True, slots=True)
class AssignBlock(Node):
    target: Node
    filters: tuple[Filter, ...]
    body: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    default: Node | None


@dataclass(frozen=True, slots=True)
class Macro(Node):
    name: str
    params: tuple[Param, ...]
    body: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class CallBlock(Node):
    call: Call
    params: tuple[Param, ...]
    body: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class FilterBlock(Node):
    filters: tuple[Filter, ...]
    body: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class With(Node):
    assignments: tuple[tuple[Node, Node], ...]
    body: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Generation(Node):
    body: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Break(Node):
    pass


@dataclass(frozen=True, slots=True)
class Continue(Node):
    pass


@dataclass(frozen=True, slots=True)
class Template(Node):
    body: tuple[Node, ...]
