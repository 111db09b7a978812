"""The evaluators of operators: `not`, unary signs, binary arithmetic and concatenation,
comparisons (single, against a constant, chained), `and`/`or` and the conditional
expression.  Built by the compiler beside the evaluators of expressions.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._mypyc import mypyc_attr
from ..builtins.ops import to_string
from ..errors import TemplateError
from ..sandbox.budget import CHARS_PER_STEP as SHORT
from ..sandbox.budget import ITEMS_PER_STEP, PLAIN_TEXT, SCALARS, check_length
from ..sandbox.limits import Limits
from ..values.runtime import Undefined
from .evaluator import Expression
from .expressions import Const
from .frames import Frame, located


class Not(Expression):
    __slots__ = ("operand", "pos")
    operand: Expression
    pos: int | None

    def __init__(self, operand: Expression, pos: int | None) -> None:
        self.operand = operand
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        value = self.operand.eval(frame)
        try:
            return not value
        except Exception as error:
            raise located(error, self.pos) from None


class Sign(Expression):
    """Unary `-` or `+`."""

    __slots__ = ("operand", "negate", "pos")
    operand: Expression
    negate: bool
    pos: int | None

    def __init__(self, operand: Expression, negate: bool, pos: int | None) -> None:
        self.operand = operand
        self.negate = negate
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        value = self.operand.eval(frame)
        try:
            return -value if self.negate else +value
        except Exception as error:
            raise located(error, self.pos) from None


class BinOp(Expression):
    __slots__ = ("left", "right", "op", "pos")
    left: Expression
    right: Expression
    op: Callable[[Any, Any], Any]
    pos: int | None

    def __init__(
        self, left: Expression, right: Expression, op: Callable[[Any, Any], Any], pos: int | None
    ) -> None:
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
        a = left.value if type(left) is Const else left.eval(frame)
        b = right.value if type(right) is Const else right.eval(frame)
        if type(a) is str and type(b) is str and len(a) + len(b) <= SHORT:
            return a + b
        try:
            return self.op(a, b)
        except Exception as error:
            raise located(error, self.pos) from None


@mypyc_attr(allow_interpreted_subclasses=True)  # provenance's SourcedAddChain
class AddChain(Expression):
    """`a + b + c + ...` in one evaluator, still evaluated and added left to right."""

    __slots__ = ("first", "operands", "add", "limits")
    first: Expression
    operands: tuple[tuple[int | None, Expression], ...]
    add: Callable[[Any, Any], Any]
    limits: Limits

    def __init__(
        self,
        first: Expression,
        operands: tuple[tuple[int | None, Expression], ...],
        add: Callable[[Any, Any], Any],
        limits: Limits,
    ) -> None:
        self.first = first
        self.operands = operands  # (position of the `+`, operand) pairs
        self.add = add
        self.limits = limits

    def eval(self, frame: Frame) -> Any:
        first = self.first  # (most chains start with a literal: '<|im_start|>' + role)
        return self.sum_from(frame, [first.value if type(first) is Const else first.eval(frame)])

    def sum_from(self, frame: Frame, done: list[Any]) -> Any:
        """The sum, the values of its first `len(done)` operands (`first` the 0th) already
        read: the others read in turn, each added as it comes (see texts.TextChain)."""
        total = done[0]
        known = len(done)
        index = 1
        for pos, operand in self.operands:
            if index < known:
                value = done[index]
            else:
                # The literal pieces of '<|im_start|>' + role + '\n' are read, not called.
                value = operand.value if type(operand) is Const else operand.eval(frame)
            index += 1
            if (
                type(total) is str
                and type(value) is str
                and len(total) + len(value) <= SHORT
            ):
                total = total + value
                continue
            try:
                total = self.add(total, value)
            except Exception as error:
                raise located(error, pos) from None
        return total


class Concat(Expression):
    """`a ~ b ~ c`."""

    __slots__ = ("items", "pos", "limits", "free")
    items: tuple[Expression, ...]
    pos: int | None
    limits: Limits
    free: int

    def __init__(self, items: tuple[Expression, ...], pos: int | None, limits: Limits) -> None:
        self.items = items
        self.pos = pos
        self.limits = limits
        # The longest result that check_length neither refuses nor charges.
        self.free = min(SHORT - 1, limits.max_string)

    def eval(self, frame: Frame) -> Any:
        try:
            parts = []
            total = 0
            for item in self.items:
                # The literal pieces of '<' ~ key ~ '>' are read, not called.
                value = item.value if type(item) is Const else item.eval(frame)
                text = value if type(value) is str else to_string(value)
                total += len(text)
                parts.append(text)
            if total > self.free:
                check_length(total, self.limits)
            return frame.state.join(parts)
        except Exception as error:
            raise located(error, self.pos) from None


class CompareEqual(Expression):
    """`a == b` or `a != b`."""

    __slots__ = ("first", "second", "equal", "checked", "pos")
    first: Expression
    second: Expression
    equal: bool
    checked: Any
    pos: int | None

    def __init__(
        self, first: Expression, second: Expression, equal: bool, checked: Any, pos: int | None
    ) -> None:
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
        kind = type(a)
        try:
            if ((kind is str or kind in PLAIN_TEXT) and len(a) <= SHORT) or kind in SCALARS:
                return a == b if self.equal else a != b
            return self.checked(a, b)
        except Exception as error:
            raise located(error, self.pos) from None


class CompareConst(Expression):
    """`a == 'user'` or `a != 0`: the constant side needs no evaluation, and comparing
    with a short string, a number or None takes bounded time whatever `a` is, as long as
    `a` is one of those too (anything else goes through the charging operator)."""

    __slots__ = ("first", "value", "equal", "checked", "pos")
    first: Expression
    value: Any
    equal: bool
    checked: Any
    pos: int | None

    def __init__(self, first: Expression, value: Any, equal: bool, checked: Any, pos: int | None) -> None:
        self.first = first
        self.value = value
        self.equal = equal
        self.checked = checked
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        a = self.first.eval(frame)
        kind = type(a)
        try:
            if ((kind is str or kind in PLAIN_TEXT) and len(a) <= SHORT) or kind in SCALARS:
                return a == self.value if self.equal else a != self.value
            return self.checked(a, self.value)
        except Exception as error:
            raise located(error, self.pos) from None


class CompareOne(Expression):
    __slots__ = ("first", "second", "op", "pos")
    first: Expression
    second: Expression
    op: Any
    pos: int | None

    def __init__(self, first: Expression, second: Expression, op: Any, pos: int | None) -> None:
        self.first = first
        self.second = second
        self.op = op
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        # `'type' in param`, `n > 0`: a literal side is read, not called.
        first, second = self.first, self.second
        a = first.value if type(first) is Const else first.eval(frame)
        b = second.value if type(second) is Const else second.eval(frame)
        try:
            return self.op(a, b)
        except Exception as error:
            raise located(error, self.pos) from None


class Contains(Expression):
    """`'text' in content`, `key not in handled_keys`: a short string, a number or None looked
    up in a dict, in a list or tuple of fewer than ITEMS_PER_STEP items, or (a string) in a
    string shorter than a step's characters is answered here, where the checked operator would
    charge nothing either; anything else goes through it (`checked`: `in` or `not in`)."""

    __slots__ = ("first", "second", "negated", "checked", "pos")
    first: Expression
    second: Expression
    negated: bool
    checked: Any
    pos: int | None

    def __init__(
        self, first: Expression, second: Expression, negated: bool, checked: Any, pos: int | None
    ) -> None:
        self.first = first
        self.second = second
        self.negated = negated
        self.checked = checked
        self.pos = pos

    def eval(self, frame: Frame) -> Any:
        first, second = self.first, self.second
        a = first.value if type(first) is Const else first.eval(frame)
        b = second.value if type(second) is Const else second.eval(frame)
        kind = type(a)
        container = type(b)
        try:
            if ((kind is str or kind in PLAIN_TEXT) and len(a) <= SHORT) or kind in SCALARS:
                if (
                    container is dict
                    or ((container is list or container is tuple) and len(b) < ITEMS_PER_STEP)
                    or (container is str and len(b) < SHORT)
                ):
                    found = a in b
                    return not found if self.negated else found
            return self.checked(a, b)
        except Exception as error:
            raise located(error, self.pos) from None


class CompareChain(Expression):
    """`a < b < c`: each operand evaluated once, stopping at the first false link."""

    __slots__ = ("first", "rest", "pos")
    first: Expression
    rest: tuple[tuple[Any, Expression], ...]
    pos: int | None

    def __init__(self, first: Expression, rest: tuple[tuple[Any, Expression], ...], pos: int | None) -> None:
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


class And(Expression):
    __slots__ = ("left", "right", "pos")
    left: Expression
    right: Expression
    pos: int | None

    def __init__(self, left: Expression, right: Expression, pos: int | None) -> None:
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


class Or(Expression):
    __slots__ = ("left", "right", "pos")
    left: Expression
    right: Expression
    pos: int | None

    def __init__(self, left: Expression, right: Expression, pos: int | None) -> None:
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


class CondExpr(Expression):
    __slots__ = ("test", "then", "otherwise", "pos")
    test: Expression
    then: Expression
    otherwise: Expression | None
    pos: int | None

    def __init__(
        self, test: Expression, then: Expression, otherwise: Expression | None, pos: int | None
    ) -> None:
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
