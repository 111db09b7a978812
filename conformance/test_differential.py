"""Differential properties: ours and Jinja2 agree on every generated template.

Agreement: the same text, or both fail (with the same message when the template called
``raise_exception``); ours never lets a bare Python exception escape. Profiles: see conftest.
"""

from __future__ import annotations

from hypothesis import given, note, settings

from .reference import normalize, render_ours, render_reference
from .strategies import Case, cases, expression_cases, whitespace_cases

# The expression and whitespace cases are cheap: run twice as many as the profile says.
cheap = settings(max_examples=2 * settings.default.max_examples)


def assert_agrees(case: Case) -> None:
    note(case.describe())
    expected = render_reference(case.config, case.source, case.context, **case.options)
    got = render_ours(case.config, case.source, case.context, **case.options)
    assert got[0] != "crash", f"bare Python exception from ours: {got[1]}"
    if expected[0] == "error":
        assert got[0] == "error", f"Jinja2 fails with {expected[1]}; ours gives {got!r}"
    elif expected[0] == "ok" and got[0] == "ok":
        assert normalize(got[1]) == normalize(expected[1])
    else:
        assert got == expected


@given(cases("chat"))
def test_chat_templates(case):
    assert_agrees(case)


@given(cases("plain"))
def test_plain_templates(case):
    assert_agrees(case)


@given(expression_cases())
@cheap
def test_expressions(case):
    assert_agrees(case)


@given(expression_cases(loose=35))
@cheap
def test_loose_expressions(case):
    """Operations on values of random types: many fail in Jinja2, and ours must fail then too."""
    assert_agrees(case)


@given(whitespace_cases())
@cheap
def test_whitespace_control(case):
    assert_agrees(case)
