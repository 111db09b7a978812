"""Compiling is linear in the source: constant folding never builds what a render would be
charged for.  A constant is folded only when its value (as a tree: a list shared twice counts
twice) is within a small multiple of the source that spells it; a bigger one is left to the
render, whose budget charges it, and the output is Jinja2's either way."""

from __future__ import annotations

import time
import tracemalloc

import pytest

from minijinja_py import Environment, LimitError, chat_environment


def nest(levels: int) -> str:
    """``[[[0] * 2] * 2] ...``: about 5 characters of source per doubling of the tree."""
    return "[" * levels + "0" + "]*2" * levels


def compile_cost(source: str) -> tuple[float, int]:
    """CPU seconds and peak bytes of compiling ``source``."""
    env = chat_environment()
    env.from_string("{{ [1] * 2 }}{% set y = 'a' * 2 %}")  # (the parser is built once)
    tracemalloc.start()
    start = time.process_time()
    try:
        env.from_string(source)
        return time.process_time() - start, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    "source",
    [
        "{% set x = [[0] * 10000] * 10000 %}",
        "{% set x = " + nest(30) + " %}",
        "{{ (" + nest(40) + ")|length }}",
        "{{ ['y' * 9000] * 1000 }}",
        "{{ 'x' * 9000000 }}",
        "{{ 'a' if [[0] * 10000] * 10000 else 'b' }}",
        "{{ {'k': [[0] * 10000] * 10000}|length }}",
    ],
)
def test_compiling_is_small_whatever_the_constants_fold_into(source):
    seconds, peak = compile_cost(source)
    # (generous: each compiles in milliseconds and a few hundred kilobytes)
    assert seconds < 2.0, seconds
    assert peak < 1_000_000, peak


CASES = [
    ("{% set x = [[0] * 10000] * 10000 %}{{ x|length }} {{ x[5]|length }}", "10000 10000"),
    ("{% set x = " + nest(20) + " %}{{ x|length }}{{ x[0][1]|length }}", "22"),
    ("{{ ([[0] * 3] * 2) }}", "[[0, 0, 0], [0, 0, 0]]"),
    ("{{ ('ab' * 3000)|length }}", "6000"),
    ("{{ 'a' if [[0] * 10] * 10 else 'b' }}", "a"),
    ("{{ (('x' * 3000)[1:])|length }}", "2999"),
    ("{{ ((false and b)[1:])|length }}", "0"),
]


# (Jinja2 itself folds the first two at compile time into 10**8 items: not asked about them)
JUDGED = CASES[2:]


@pytest.mark.parametrize(("source", "expected"), CASES)
def test_outputs_are_jinja2s(source, expected):
    if (source, expected) in JUDGED:
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        judge = ImmutableSandboxedEnvironment()
        assert judge.from_string(source).render(b=False) == expected
    assert Environment().from_string(source).render(b=False) == expected
    assert chat_environment().from_string(source).render(b=False) == expected


def test_what_folding_left_is_charged_by_the_render():
    # the tree of 2**30 items is built by the render, and printing it is refused there
    template = chat_environment().from_string("{{ " + nest(30) + " }}")
    with pytest.raises(LimitError) as caught:
        template.render()
    assert caught.value.message == "the render exceeded max_steps (200000)"
