"""The built-in tests used with the `is` operator, with Jinja2 3.1.6's semantics."""

from __future__ import annotations

import operator
from collections import abc
from numbers import Number
from typing import Any

from ..sandbox.measure import (
    NESTED_TYPES,
    check_compared,
    check_compared_pair,
    check_key,
    measure_text,
)
from ..sandbox.opaque import shown_str
from ..values.runtime import Undefined, pass_environment
from .costs import FREE, SCAN, TEXT, Cost, declare


def test_odd(value: Any) -> bool:
    """`{{ 3 is odd }}` -> `True`"""
    return value % 2 == 1


def test_even(value: Any) -> bool:
    """`{{ 2 is even }}` -> `True`"""
    return value % 2 == 0


def test_divisibleby(value: Any, num: Any) -> bool:
    """`{{ 9 is divisibleby 3 }}` -> `True`"""
    return value % num == 0


def test_defined(value: Any) -> bool:
    """`{{ missing is defined }}` -> `False`"""
    return not isinstance(value, Undefined)


def test_undefined(value: Any) -> bool:
    """`{{ missing is undefined }}` -> `True`"""
    return isinstance(value, Undefined)


@pass_environment
def test_filter(env: Any, value: Any) -> bool:
    """`{{ "upper" is filter }}` -> `True`"""
    return check_key(value) in env.filters  # (hashed: see check_key)


@pass_environment
def test_test(env: Any, value: Any) -> bool:
    """`{{ "odd" is test }}` -> `True`"""
    return check_key(value) in env.tests


def test_none(value: Any) -> bool:
    """`{{ none is none }}` -> `True`"""
    return value is None


def test_boolean(value: Any) -> bool:
    """`{{ false is boolean }}` -> `True`; `{{ 0 is boolean }}` -> `False`"""
    return value is True or value is False


def test_false(value: Any) -> bool:
    """`{{ false is false }}` -> `True`; `{{ 0 is false }}` -> `False`"""
    return value is False


def test_true(value: Any) -> bool:
    """`{{ true is true }}` -> `True`; `{{ 1 is true }}` -> `False`"""
    return value is True


def test_integer(value: Any) -> bool:
    """`{{ 1 is integer }}` -> `True`; `{{ true is integer }}` -> `False`"""
    return isinstance(value, int) and value is not True and value is not False


def test_float(value: Any) -> bool:
    """`{{ 1.0 is float }}` -> `True`"""
    return isinstance(value, float)


def test_number(value: Any) -> bool:
    """`{{ 1 is number }}` -> `True` (booleans are numbers too)"""
    return isinstance(value, Number)


def _text(value: Any) -> str:
    # ``str(value)``, measured and charged first: each test of a list prints it whole, and a
    # list holding one big string a thousand times prints it a thousand times.
    if not isinstance(value, str):
        measure_text(value)
    return shown_str(value)


def test_lower(value: Any) -> bool:
    """`{{ "abc" is lower }}` -> `True`"""
    return _text(value).islower()


def test_upper(value: Any) -> bool:
    """`{{ "ABC" is upper }}` -> `True`"""
    return _text(value).isupper()


def test_string(value: Any) -> bool:
    """`{{ "a" is string }}` -> `True`"""
    return isinstance(value, str)


def test_mapping(value: Any) -> bool:
    """`{{ {} is mapping }}` -> `True`"""
    return isinstance(value, abc.Mapping)


def test_sequence(value: Any) -> bool:
    """`{{ [1] is sequence }}` -> `True`; strings and dicts are sequences too"""
    try:
        len(value)
        value.__getitem__  # noqa: B018 - only its existence matters
    except Exception:
        return False
    return True


def test_iterable(value: Any) -> bool:
    """`{{ "ab" is iterable }}` -> `True`"""
    try:
        iter(value)
    except TypeError:
        return False
    return True


def test_callable(*args: Any, **kwargs: Any) -> bool:
    """`{{ "a".upper is callable }}` -> `True`"""
    # Passing everything through lets the builtin word argument errors as Jinja2's does.
    return callable(*args, **kwargs)


def test_sameas(value: Any, other: Any) -> bool:
    """`{{ none is sameas none }}` -> `True`"""
    return value is other


def test_escaped(value: Any) -> bool:
    """`{{ "<a>"|e is escaped }}` -> `True`"""
    return hasattr(value, "__html__")


def test_in(value: Any, seq: Any) -> bool:
    """`{{ 1 is in [1, 2] }}` -> `True`"""
    if type(value) is tuple:
        check_key(value)  # a dict or set hashes it; see sandbox.check_key
    if isinstance(value, NESTED_TYPES):
        # compared with each item of a list or tuple, recursively
        check_compared(value, len(seq) if isinstance(seq, (list, tuple)) else 1)
    return value in seq


# Python compares nested values recursively, in C: the comparison tests (called directly or by
# select and selectattr for each item) measure containers as the operators do.
def _measure_operands(args: tuple[Any, ...]) -> None:
    if len(args) == 2 and isinstance(args[0], NESTED_TYPES) and isinstance(args[1], NESTED_TYPES):
        check_compared_pair(args[0], args[1])


def test_eq(*args: Any, **kwargs: Any) -> bool:
    """`{{ 1 is eq 1 }}` -> `True` (also `==`, `equalto`)"""
    _measure_operands(args)
    return operator.eq(*args, **kwargs)


def test_ne(*args: Any, **kwargs: Any) -> bool:
    """`{{ 1 is ne 2 }}` -> `True` (also `!=`)"""
    _measure_operands(args)
    return operator.ne(*args, **kwargs)


def test_lt(*args: Any, **kwargs: Any) -> bool:
    """`{{ 1 is lt 2 }}` -> `True` (also `<`, `lessthan`)"""
    _measure_operands(args)
    return operator.lt(*args, **kwargs)


def test_le(*args: Any, **kwargs: Any) -> bool:
    """`{{ 2 is le 2 }}` -> `True` (also `<=`)"""
    _measure_operands(args)
    return operator.le(*args, **kwargs)


def test_gt(*args: Any, **kwargs: Any) -> bool:
    """`{{ 2 is gt 1 }}` -> `True` (also `>`, `greaterthan`)"""
    _measure_operands(args)
    return operator.gt(*args, **kwargs)


def test_ge(*args: Any, **kwargs: Any) -> bool:
    """`{{ 2 is ge 2 }}` -> `True` (also `>=`)"""
    _measure_operands(args)
    return operator.ge(*args, **kwargs)


TESTS: dict[str, abc.Callable[..., Any]] = {
    "odd": test_odd,
    "even": test_even,
    "divisibleby": test_divisibleby,
    "defined": test_defined,
    "undefined": test_undefined,
    "filter": test_filter,
    "test": test_test,
    "none": test_none,
    "boolean": test_boolean,
    "false": test_false,
    "true": test_true,
    "integer": test_integer,
    "float": test_float,
    "lower": test_lower,
    "upper": test_upper,
    "string": test_string,
    "mapping": test_mapping,
    "number": test_number,
    "sequence": test_sequence,
    "iterable": test_iterable,
    "callable": test_callable,
    "sameas": test_sameas,
    "escaped": test_escaped,
    "in": test_in,
    "==": test_eq,
    "eq": test_eq,
    "equalto": test_eq,
    "!=": test_ne,
    "ne": test_ne,
    ">": test_gt,
    "gt": test_gt,
    "greaterthan": test_gt,
    ">=": test_ge,
    "ge": test_ge,
    "<": test_lt,
    "lt": test_lt,
    "lessthan": test_lt,
    "<=": test_le,
    "le": test_le,
}

# Each test's cost (see costs.py).  The type and identity tests read nothing of their value;
# lower and upper read its text (a container's printed text: measured first); the comparisons
# measure nested operands themselves (as the operators do) and pay for scanning the value.
TEST_COSTS: dict[str, Cost] = {
    **{
        name: FREE
        for name in """defined undefined none boolean false true integer float number string
        mapping iterable sequence callable sameas escaped""".split()
    },
    "odd": SCAN,
    "even": SCAN,
    "divisibleby": SCAN,
    "filter": SCAN,
    "test": SCAN,
    "lower": TEXT,
    "upper": TEXT,
    "in": SCAN,
    **{name: SCAN for name in "== eq equalto != ne > gt greaterthan >= ge < lt lessthan <= le".split()},
}
declare("test", TEST_COSTS)
