"""Constant folding as Jinja's optimizer does it: bottom-up, short-circuiting ``and``/``or``
and conditionals on a constant test, so that a constant left side or test makes the whole
expression constant whatever the other operand is.

The difference shows where folding changes the outcome: a slice of a constant goes through
the sandbox's forgiving ``getitem`` (undefined), a slice of a variable is subscripted directly
(a TypeError). Expected values were obtained from Jinja2 3.1.6 and are hard-coded
(``MINIJINJA_TESTS_REFERENCE=1`` makes ``check`` assert that Jinja2 still agrees).
"""

from __future__ import annotations

import pytest
from engine_cases import Err, check, params

NOT_SUBSCRIPTABLE = Err("TemplateRuntimeError", "'bool' object is not subscriptable")

CASES = [
    ("{{ ((false and b)[1:])|length }}", {"b": False}, "0"),
    ("{{ (false and b)[1:] }}|", {"b": False}, "|"),
    ("{{ ((true or b)[1:])|length }}", {"b": False}, "0"),
    ("{{ ((none or 'abc')[1:])|length }}", {"b": False}, "2"),
    ("{{ ((b if false else 3)[1:])|length }}", {"b": False}, "0"),
    ("{{ ((b if true else 3)[1:])|length }}", {"b": False}, NOT_SUBSCRIPTABLE),
    ("{{ ((1 and b)[1:])|length }}", {"b": False}, NOT_SUBSCRIPTABLE),
    ("{{ ((0 or b)[1:])|length }}", {"b": False}, NOT_SUBSCRIPTABLE),
    ("{{ (b[1:])|length }}", {"b": False}, NOT_SUBSCRIPTABLE),
    # a test folds to its truth even when its value (undefined) is no constant Jinja keeps
    ("{{ x if (1)[:] else 'n' }}", None, "n"),
    ("{{ ((1)[:] and b) }}|", {"b": "abc"}, "|"),
    # only a printed or filtered value is folded: an `if` test subscripts directly
    ("{% if (false and b)[1:] %}x{% endif %}", {"b": False}, NOT_SUBSCRIPTABLE),
]


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(CASES))
def test_short_circuits_fold_as_in_jinja(configs, source, context, expected):
    check(configs, source, context, expected)
