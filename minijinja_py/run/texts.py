"""Sums of text made in one join: `'<|im_start|>' + message['role'] + '\\n' + message['content']
+ '<|im_end|>\\n'`, the expression most chat templates print once a message, and its `~` form.

AddChain adds a chain's operands one `+` at a time in a loop, a few type and length checks an
operand, which in the pure build costs more than the lookups of the message's fields.  A chain
whose constants are all plain strings and which reads one to three other operands compiles to a
TextChain instead: it reads those operands in order and, while each gives a plain string and the
sum stays short enough for AddChain to add it without a charge (`SHORT`), joins the text at once
(half the time of the loop for the statement above).  Any other value (a number, markup, an
undefined value) or a longer text goes on as AddChain goes, from the values read so far: each
operand is read once, in the same order, and the first error is AddChain's.

`~` (Concat) turns every operand into text, whatever its type: TextConcat reads and converts
its one to three operands in order as Concat does, unrolled, and joins once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ..builtins.ops import to_string
from ..sandbox.budget import CHARS_PER_STEP as SHORT
from ..sandbox.budget import check_length
from ..sandbox.limits import Limits
from .evaluator import Expression
from .expressions import Const
from .frames import Frame, located
from .operators import AddChain, Concat

# The most operands besides constants that a TextChain reads (a class for each count).
MOST_READ: Final = 3


class TextChain(AddChain):
    """A chain of string constants and `count` other operands, x1 to x3: `p0 + x1 + p1 (+ x2 +
    p2 (+ x3 + p3))`, each `p` the constants between two of them added (possibly empty)."""

    __slots__ = ("at", "p0", "p1", "p2", "p3", "x1", "x2", "x3", "r1", "r2", "r3")
    at: tuple[int, ...]  # where each of x1.. is in the chain (0: `first`)
    p0: str
    p1: str
    p2: str
    p3: str
    x1: Expression
    x2: Expression
    x3: Expression
    # r1..r3: the most that x1 (and x2, x3) may sum to for the sum so far, with the constants
    # up to the next operand read, to stay within SHORT (past that AddChain charges and checks
    # the length, before it reads the next operand).
    r1: int
    r2: int
    r3: int

    def __init__(
        self,
        first: Expression,
        operands: tuple[tuple[int | None, Expression], ...],
        add: Callable[[Any, Any], Any],
        limits: Limits,
        at: tuple[int, ...],
        texts: tuple[str, ...],
    ) -> None:
        AddChain.__init__(self, first, operands, add, limits)
        chain: tuple[Expression, ...] = (first, *(operand for _, operand in operands))
        self.at = at
        self.p0, self.p1, self.p2, self.p3 = (*texts, "", "", "")[:4]
        self.x1, self.x2, self.x3 = (*(chain[index] for index in at), first, first)[:3]
        rooms = [SHORT - sum(map(len, texts[: count + 2])) for count in range(len(at))]
        self.r1, self.r2, self.r3 = (*rooms, 0, 0)[:3]

    def resume(self, frame: Frame, read: list[Any]) -> Any:
        """AddChain's sum, the operands x1.. given as `read` (the constants before the last
        of them taken from the chain)."""
        chain = (self.first, *(operand for _, operand in self.operands))
        last = self.at[len(read) - 1]
        done: list[Any] = [None] * (last + 1)
        for index in range(last + 1):
            item = chain[index]
            done[index] = item.value if type(item) is Const else None
        at = self.at
        for count, value in enumerate(read):
            done[at[count]] = value
        return self.sum_from(frame, done)


class TextChain1(TextChain):
    __slots__ = ()

    def eval(self, frame: Frame) -> Any:
        a = self.x1.eval(frame)
        if type(a) is str and len(a) <= self.r1:
            return self.p0 + a + self.p1
        return self.resume(frame, [a])


class TextChain2(TextChain):
    __slots__ = ()

    def eval(self, frame: Frame) -> Any:
        a = self.x1.eval(frame)
        if type(a) is not str or len(a) > self.r1:
            return self.resume(frame, [a])
        b = self.x2.eval(frame)
        if type(b) is not str or len(a) + len(b) > self.r2:
            return self.resume(frame, [a, b])
        return "".join((self.p0, a, self.p1, b, self.p2))


class TextChain3(TextChain):
    __slots__ = ()

    def eval(self, frame: Frame) -> Any:
        a = self.x1.eval(frame)
        if type(a) is not str or len(a) > self.r1:
            return self.resume(frame, [a])
        b = self.x2.eval(frame)
        if type(b) is not str or len(a) + len(b) > self.r2:
            return self.resume(frame, [a, b])
        c = self.x3.eval(frame)
        if type(c) is not str or len(a) + len(b) + len(c) > self.r3:
            return self.resume(frame, [a, b, c])
        return "".join((self.p0, a, self.p1, b, self.p2, c, self.p3))


_BY_COUNT: Final = (TextChain1, TextChain2, TextChain3)


def sum_chain(
    first: Expression,
    operands: tuple[tuple[int | None, Expression], ...],
    add: Callable[[Any, Any], Any],
    limits: Limits,
) -> AddChain:
    """The evaluator of `first + operands...`: a TextChain where its shape allows, else an
    AddChain."""
    chain = (first, *(operand for _, operand in operands))
    at: list[int] = []
    texts: list[str] = [""]
    for index, item in enumerate(chain):
        if type(item) is Const:
            if type(item.value) is not str:
                return AddChain(first, operands, add, limits)
            texts[-1] += item.value
        else:
            at.append(index)
            texts.append("")
    if not at or len(at) > MOST_READ:
        return AddChain(first, operands, add, limits)
    kind = _BY_COUNT[len(at) - 1]
    return kind(first, operands, add, limits, tuple(at), tuple(texts))


class TextConcat(Concat):
    """`p0 ~ x1 ~ p1 (~ x2 ~ p2 (~ x3 ~ p3))`, each `p` string constants (possibly none)."""

    __slots__ = ("p0", "p1", "p2", "p3", "x1", "x2", "x3", "fixed")
    p0: str
    p1: str
    p2: str
    p3: str
    x1: Expression
    x2: Expression
    x3: Expression
    fixed: int  # the constants' length

    def __init__(
        self,
        items: tuple[Expression, ...],
        pos: int | None,
        limits: Limits,
        read: tuple[Expression, ...],
        texts: tuple[str, ...],
    ) -> None:
        Concat.__init__(self, items, pos, limits)
        self.p0, self.p1, self.p2, self.p3 = (*texts, "", "", "")[:4]
        self.x1, self.x2, self.x3 = (*read, read[0], read[0])[:3]
        self.fixed = sum(map(len, texts))


class TextConcat1(TextConcat):
    __slots__ = ()

    def eval(self, frame: Frame) -> Any:
        try:
            a = self.x1.eval(frame)
            if type(a) is not str:
                a = to_string(a)
            total = self.fixed + len(a)
            if total > self.free:
                check_length(total, self.limits)
            return frame.state.join((self.p0, a, self.p1))
        except Exception as error:
            raise located(error, self.pos) from None


class TextConcat2(TextConcat):
    __slots__ = ()

    def eval(self, frame: Frame) -> Any:
        try:
            a = self.x1.eval(frame)
            if type(a) is not str:
                a = to_string(a)
            b = self.x2.eval(frame)
            if type(b) is not str:
                b = to_string(b)
            total = self.fixed + len(a) + len(b)
            if total > self.free:
                check_length(total, self.limits)
            return frame.state.join((self.p0, a, self.p1, b, self.p2))
        except Exception as error:
            raise located(error, self.pos) from None


class TextConcat3(TextConcat):
    __slots__ = ()

    def eval(self, frame: Frame) -> Any:
        try:
            a = self.x1.eval(frame)
            if type(a) is not str:
                a = to_string(a)
            b = self.x2.eval(frame)
            if type(b) is not str:
                b = to_string(b)
            c = self.x3.eval(frame)
            if type(c) is not str:
                c = to_string(c)
            total = self.fixed + len(a) + len(b) + len(c)
            if total > self.free:
                check_length(total, self.limits)
            return frame.state.join((self.p0, a, self.p1, b, self.p2, c, self.p3))
        except Exception as error:
            raise located(error, self.pos) from None


_CONCAT_BY_COUNT: Final = (TextConcat1, TextConcat2, TextConcat3)


def concat_chain(items: tuple[Expression, ...], pos: int | None, limits: Limits) -> Concat:
    """The evaluator of `items[0] ~ items[1] ~ ...`: a TextConcat where its shape allows,
    else a Concat."""
    read: list[Expression] = []
    texts: list[str] = [""]
    for item in items:
        if type(item) is Const:
            if type(item.value) is not str:
                return Concat(items, pos, limits)
            texts[-1] += item.value
        else:
            read.append(item)
            texts.append("")
    if not read or len(read) > MOST_READ:
        return Concat(items, pos, limits)
    return _CONCAT_BY_COUNT[len(read) - 1](items, pos, limits, tuple(read), tuple(texts))
