"""The kinds of evaluator: expressions, statements, assignment targets and filter appliers.

Every evaluator derives from one of these, and the slots that hold evaluators are typed with
them. In the pure-Python build that changes nothing (an empty base class adds no work to a
call); in the compiled one (hatch_build.py) it lets mypyc call `eval`, `run`, `assign` and
`apply` through its method table instead of as generic Python calls. The provenance layer
subclasses evaluators in interpreted code, hence `allow_interpreted_subclasses`.
"""

from __future__ import annotations

from typing import Any

from .._mypyc import mypyc_attr
from .frames import Frame


@mypyc_attr(allow_interpreted_subclasses=True)
class Expression:
    """`eval(frame)` gives the expression's value."""

    __slots__ = ()

    def eval(self, frame: Frame) -> Any:
        raise NotImplementedError


@mypyc_attr(allow_interpreted_subclasses=True)
class Statement:
    """`run(frame, out)` appends the statement's text to `out`; `cost` is the steps it takes
    besides its bodies' (see statements.py)."""

    __slots__ = ()
    cost: int

    def run(self, frame: Frame, out: list[Any]) -> None:
        raise NotImplementedError


@mypyc_attr(allow_interpreted_subclasses=True)
class Target:
    """What a `set`, a `for` or a `with` assigns to: `assign(frame, value)` binds `value`."""

    __slots__ = ()

    def assign(self, frame: Frame, value: Any) -> None:
        raise NotImplementedError


@mypyc_attr(allow_interpreted_subclasses=True)
class Applier:
    """A filter or test applied to a value already computed: `apply(frame, value)`."""

    __slots__ = ()

    def apply(self, frame: Frame, value: Any) -> Any:
        raise NotImplementedError
