"""Every operator of the template language, in one place.

Jinja hands its operators to Python, so the semantics are Python's (`1/2` is `0.5`, `-7//2`
is `-4`, `'a' * 3` is `'aaa'`); what is added here are the size checks that keep a template
from building values larger than the environment's limits before Python allocates them.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, Final

from ..errors import LimitError
from ..sandbox.budget import (
    CHARS_PER_STEP,
    ITEMS_PER_STEP,
    charge_big_int,
    charge_built,
    charge_size,
    charge_steps,
    check_int,
    check_length,
)
from ..sandbox.format_spec import percent_bound
from ..sandbox.limits import Limits
from ..sandbox.measure import (
    NESTED_TYPES,
    PRINTED_CONTAINERS,
    check_compared,
    check_compared_pair,
    check_printable,
)
from ..sandbox.opaque import holds_opaque, shown, shown_str
from ..values import runtime
from .costs import Cost, declare, inline

# Read by to_string for every value printed that is not a string: a Final of this module, which
# the compiled build reads as a C static (runtime stays interpreted).
Undefined: Final = runtime.Undefined

_SIZED = (str, list, tuple)


def make_add(limits: Limits) -> Callable[[Any, Any], Any]:
    # Sums shorter than these neither exceed a limit nor cost a step: check_length would
    # do nothing for them.
    short_string = min(CHARS_PER_STEP, limits.max_string + 1)
    short_list = min(ITEMS_PER_STEP, limits.max_items + 1)

    def add(a: Any, b: Any) -> Any:
        if type(a) is str and type(b) is str:
            # (the general path below, for the usual case: two plain strings)
            length = len(a) + len(b)
            if length >= short_string:
                check_length(length, limits)
            return a + b
        if isinstance(a, _SIZED) and isinstance(b, _SIZED):
            length = len(a) + len(b)
            if isinstance(a, str):
                if length >= short_string:
                    check_length(length, limits)
            elif length >= short_list:
                check_length(length, limits, "list")
        result = a + b
        if type(result) is int:
            check_int(result, limits)
        elif not isinstance(a, _SIZED):
            charge_built(result)  # (sized sums were charged by check_length)
        return result

    return add


def make_mul(limits: Limits) -> Callable[[Any, Any], Any]:
    def mul(a: Any, b: Any) -> Any:
        if isinstance(b, int) and isinstance(a, _SIZED):
            check_length(len(a) * max(b, 0), limits, "string" if isinstance(a, str) else "list")
            return a * b  # (counted, before it was made)
        elif isinstance(a, int) and isinstance(b, _SIZED):
            check_length(len(b) * max(a, 0), limits, "string" if isinstance(b, str) else "list")
            return a * b
        elif isinstance(a, int) and isinstance(b, int):
            # (any int subclass too: a caller's IntEnum multiplies as the int it is)
            bits = a.bit_length() + b.bit_length()
            if bits - 1 > limits.max_int_bits:
                raise LimitError(f"the product would exceed max_int_bits ({limits.max_int_bits})")
            charge_big_int(bits)
            return a * b
        result = a * b
        charge_built(result)
        return result

    return mul


def make_pow(limits: Limits) -> Callable[[Any, Any], Any]:
    def power(a: Any, b: Any) -> Any:
        # (any int subclass too: a caller's IntEnum raised to a power is a plain int's power)
        if isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1:
            # The result has about bit_length(a) * b bits: refuse before computing it.
            if (abs(a).bit_length() - 1) * b > limits.max_int_bits:
                # (``a`` is not named: Python refuses to print a huge integer)
                raise LimitError(
                    f"a power of {b} would exceed max_int_bits ({limits.max_int_bits})"
                )
            charge_big_int(abs(a).bit_length() * b)
        return a**b

    return power


def make_mod(limits: Limits) -> Callable[[Any, Any], Any]:
    def modulo(a: Any, b: Any) -> Any:
        if isinstance(a, str):
            # checking and filling each conversion is Python work: a step per two of them
            charge_steps(a.count("%") // 2)
            check_length(percent_bound(a, b, limits.max_string), limits)
            return a % (shown(b) if holds_opaque(b) else b)
        return a % b

    return modulo


def make_binops(limits: Limits) -> dict[str, Callable[[Any, Any], Any]]:
    return {
        "+": make_add(limits),
        "-": operator.sub,
        "*": make_mul(limits),
        "/": operator.truediv,
        "//": operator.floordiv,
        "%": make_mod(limits),
        "**": make_pow(limits),
    }


def _in(item: Any, container: Any) -> bool:
    cls = type(container)
    if isinstance(item, NESTED_TYPES):
        # compared with each item of a list or tuple, or hashed once
        check_compared(item, len(container) if isinstance(container, (list, tuple)) else 1)
    # A list or string is searched from one end: a big one costs steps (what charge_size
    # charges; it charges nothing for a dict, a short one, or any other container).
    if cls is str:
        if len(container) >= CHARS_PER_STEP:
            charge_size(container)
    elif cls is list or cls is tuple:
        if len(container) >= ITEMS_PER_STEP:
            charge_size(container)
    elif isinstance(container, (str, list, tuple)):  # a Markup or traced string pays alike
        charge_size(container)
    return item in container


def _not_in(item: Any, container: Any) -> bool:
    return not _in(item, container)  # `not in` is defined as the negation of `in`


# Comparing two big lists or strings walks them: charge that to the step budget, so a loop
# comparing megabytes on each pass stops at max_steps rather than running for hours.  Sizes
# below these cost nothing (see charge_size), so such operands skip the charging call.
_FREE_SIZE: dict[type[Any], int] = {
    str: CHARS_PER_STEP,
    list: ITEMS_PER_STEP,
    tuple: ITEMS_PER_STEP,
    dict: ITEMS_PER_STEP,
}


def _charge_operands(a: Any, b: Any) -> None:
    if type(a) in _UNCHARGED and type(b) in _UNCHARGED:
        return  # (numbers and None compare in bounded time: the usual operands)
    free = _FREE_SIZE.get(type(a))
    if free is not None:
        if len(a) >= free:
            charge_size(a)
    elif isinstance(a, _CHARGED):  # a Markup or traced string pays as a string
        charge_size(a)
    free = _FREE_SIZE.get(type(b))
    if free is not None:
        if len(b) >= free:
            charge_size(b)
    elif isinstance(b, _CHARGED):
        charge_size(b)
    # Python compares nested values recursively, in C: both sides within max_recursion.
    if isinstance(a, NESTED_TYPES) and isinstance(b, NESTED_TYPES):
        check_compared_pair(a, b)


_CHARGED = (str, list, tuple, dict)
_UNCHARGED = frozenset((int, float, bool, type(None)))


def _eq(a: Any, b: Any) -> bool:
    _charge_operands(a, b)
    return a == b


def _ne(a: Any, b: Any) -> bool:
    _charge_operands(a, b)
    return a != b


def _lt(a: Any, b: Any) -> bool:
    _charge_operands(a, b)
    return a < b


def _le(a: Any, b: Any) -> bool:
    _charge_operands(a, b)
    return a <= b


def _gt(a: Any, b: Any) -> bool:
    _charge_operands(a, b)
    return a > b


def _ge(a: Any, b: Any) -> bool:
    _charge_operands(a, b)
    return a >= b


COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "==": _eq,
    "!=": _ne,
    "<": _lt,
    "<=": _le,
    ">": _gt,
    ">=": _ge,
    "in": _in,
    "notin": _not_in,
}


def to_string(value: Any) -> str:
    """How `{{ value }}` and `~` print a value: Python's `str`, so `None` and `True`."""
    if type(value) is str:
        return value
    if isinstance(value, Undefined):
        return value.__str__()
    if isinstance(value, PRINTED_CONTAINERS):
        check_printable(value)  # the repr of [big] * 1000 is a thousand bigs
    elif type(value) is int:
        charge_big_int(value.bit_length())
        return str(value)
    return shown_str(value)  # (a method or class prints by its name alone)


# Each operator's cost (see costs.py): every operator charges itself inside its function,
# before Python does the work, from its operands' sizes (measured for every subclass alike):
# the length a ``+`` or ``*`` would make, the digits of a big integer, the text of a ``%``,
# the scan and nested walk of a comparison.  (``-``, ``/`` and ``//`` work on numbers of at
# most max_int_bits: bounded by that.)
OPERATOR_COSTS: dict[str, Cost] = {
    "+": inline("the length of the sum within max_string/max_items, charged as built"),
    "-": inline("numbers within max_int_bits"),
    "*": inline("the length of the repetition within max_string/max_items; int bits"),
    "/": inline("numbers within max_int_bits"),
    "//": inline("numbers within max_int_bits"),
    "%": inline("the widths and printed values of a format within max_string"),
    "**": inline("the bits of the power within max_int_bits"),
    **{
        name: inline("both operands scanned; nested ones measured and their walk charged")
        for name in ("==", "!=", "<", "<=", ">", ">=")
    },
    "in": inline("the container scanned; a nested item measured per item compared"),
    "notin": inline("as in"),
    "~": inline("each operand's text measured before it is printed"),
}
declare("operator", OPERATOR_COSTS)
