"""Checks of the harness itself: the reference is configured like transformers, the generator
produces meaningful programs, and the minimizer shrinks."""

from __future__ import annotations

import random

from .reference import FIXED_NOW, agree, render_ours, render_reference
from .strategies import random_case


def test_reference_chat_preset():
    src = (
        "{{ {'é': [1, none]}|tojson }}|{{ strftime_now('%Y-%m-%d') }}|"
        "{% generation %}g{% endgeneration %}|{% for x in [1, 2] %}{{ x }}{% break %}{% endfor %}"
    )
    assert render_reference("chat", src, {}) == (
        "ok",
        f'{{"é": [1, null]}}|{FIXED_NOW:%Y-%m-%d}|g|1',
    )
    assert render_reference("chat", "{{ raise_exception('no') }}", {}) == ("raise_exception", "no")
    assert render_reference("chat", "{{ [].append(1) }}", {}) == ("error", "SecurityError")
    assert render_reference("chat", "{% set ns = namespace(_x=1) %}", {}) == (
        "error",
        "SecurityError",
    )


def test_reference_plain_options():
    assert render_reference("plain", "{{ '<'|tojson }}", {}) == ("ok", '"\\u003c"')
    src = "  {% if true %}\nx\n  {% endif %}\n"
    assert render_reference("plain", src, {}) == ("ok", "  \nx\n  ")
    assert render_reference(
        "plain", src, {}, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True
    ) == ("ok", "x\n")
    assert render_reference("plain", "{{ x }}", {}, undefined="StrictUndefined") == (
        "error",
        "UndefinedError",
    )


def test_agree_rules():
    assert agree(("ok", "a"), ("ok", "a"))
    assert not agree(("ok", "a"), ("ok", "b"))
    assert agree(("error", "TypeError"), ("error", "TemplateRuntimeError"))
    assert not agree(("raise_exception", "m"), ("raise_exception", "n"))
    assert not agree(("raise_exception", "m"), ("error", "TemplateRuntimeError"))
    assert not agree(("error", "TypeError"), ("crash", "TypeError: x"))


def test_reference_text_filters_read_opaque_values_neutrally():
    # An address inside a filter's result cannot be normalized away afterwards: the length of
    # an upper-cased iterator's text counts its digits.  Both engines read the neutral text.
    for config in ("plain", "chat"):
        for source, context, expected in [
            ("{{ ((xs|reverse)|upper)|length }}", {"xs": [1, 2]}, "29"),
            ("{{ (d.items|upper).split() }}", {"d": {}}, "['<METHOD', 'ITEMS', 'OF', 'DICT>']"),
            ("{{ [xs|reverse]|upper }}", {"xs": [1]}, "[<LIST_REVERSEITERATOR OBJECT>]"),
            ("{{ 'ab'|upper }}{{ 3|string }}", {}, "AB3"),
        ]:
            assert render_reference(config, source, context) == ("ok", expected)
            assert render_ours(config, source, context) == ("ok", expected)


def test_generated_programs_mostly_render():
    rng = random.Random(12345)
    cases = [random_case(rng) for _ in range(150)]
    rendered = sum(
        render_reference(c.config, c.source, c.context, **c.options)[0] == "ok" for c in cases
    )
    assert rendered / len(cases) >= 0.85, rendered
    assert len({c.source for c in cases}) == len(cases)


def test_generated_programs_are_deterministic():
    a = random_case(random.Random(7))
    b = random_case(random.Random(7))
    assert (a.source, a.context, a.options) == (b.source, b.context, b.options)
