"""The sizes measured before printing (minijinja_py/printing.py) against what Python prints:
exact for strings (repr, HTML escaping, JSON), an upper bound for layouts (str of a container,
pprint, indented JSON), never far above on ordinary values; and the hostile shapes of each
refused with the exact message, before they are made."""

from __future__ import annotations

import json
import pprint

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minijinja_py import Environment, LimitError, Limits, chat_environment
from minijinja_py.sandbox.measure import _printed_measure, printed_size
from minijinja_py.sandbox.printing import (
    CHUNK,
    escaped_size,
    json_bound_of_printed,
    json_layout,
    json_string_size,
    layout_bound,
    repr_size,
)
from minijinja_py.values.runtime import Markup, escape

LIMIT = 10**12


def printed_measure(value):
    return _printed_measure(value, None)[:3]  # (size, nodes, levels)


def json_layout_bound(value, indent, ensure_ascii):
    width, item, key = json_layout(indent, None)
    bound, _ = layout_bound(
        value,
        LIMIT,
        "json",
        indent=width,
        item_separator=item,
        key_separator=key,
        ensure_ascii=ensure_ascii,
    )
    return bound

ALPHABET = st.sampled_from(
    [
        "a",
        "Z",
        " ",
        "'",
        '"',
        "\\",
        "\n",
        "\t",
        "\x00",
        "\x7f",
        "é",
        "\u2028",
        "😀",
        "\U000e0001",
        "<",
        ">",
        "&",
        "\ud800",
    ]
)
texts = st.text(ALPHABET, max_size=40)
scalars = st.one_of(texts, st.integers(-(10**40), 10**40), st.floats(), st.booleans(), st.none())
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.tuples(inner),
        st.tuples(inner, inner),
        st.dictionaries(st.one_of(texts, st.integers(-5, 5)), inner, max_size=4),
    ),
    max_leaves=25,
)


@settings(max_examples=1500, deadline=None)
@given(texts)
def test_string_sizes_are_exact(s):
    assert repr_size(s) == len(repr(s))
    assert repr_size(s, ascii) == len(ascii(s))
    assert escaped_size(s) == len(escape(s))
    for ensure_ascii in (True, False):
        assert json_string_size(s, ensure_ascii) == len(json.dumps(s, ensure_ascii=ensure_ascii))


@pytest.mark.parametrize("char", ["a", "'", "\\", "\x01", "é", "😀", "\U000e0001", "\n"])
@pytest.mark.parametrize("mixed", ["", "'", '"', "'\""])
def test_long_string_sizes_are_exact_across_chunks(char, mixed):
    s = char * (CHUNK + 7) + mixed + char * 3
    assert repr_size(s) == len(repr(s))
    assert repr_size(s, ascii) == len(ascii(s))
    for ensure_ascii in (True, False):
        assert json_string_size(s, ensure_ascii) == len(json.dumps(s, ensure_ascii=ensure_ascii))


@settings(max_examples=1500, deadline=None)
@given(values)
def test_printed_size_bounds_str_of_a_container(value):
    assert printed_size(value) >= len(str(value))


@settings(max_examples=1000, deadline=None)
@given(values, st.sampled_from([None, 0, 1, 4, "\t", "--"]), st.booleans())
def test_json_bound_covers_json_dumps(value, indent, ensure_ascii):
    try:
        made = json.dumps(value, indent=indent, ensure_ascii=ensure_ascii)
    except (TypeError, ValueError):
        return
    bound = json_layout_bound(value, indent, ensure_ascii)
    assert bound >= len(made)


@settings(max_examples=1000, deadline=None)
@given(values)
def test_pprint_bound_covers_pformat(value):
    bound, _ = layout_bound(value, LIMIT, "pprint")
    assert bound >= len(pprint.pformat(value))


def test_pprint_bound_covers_wide_and_deep_layouts():
    wide = {str(i): "word " * 40 for i in range(300)}
    deep: object = ["x y z " * 30]
    for i in range(60):
        deep = {"k" * 40: deep, "n": i}
    for value in (wide, deep, {"k" * 500: wide}, [Markup("<b>"), "a\nb\n" * 50]):
        bound, _ = layout_bound(value, LIMIT, "pprint")
        made = len(pprint.pformat(value))
        assert made <= bound <= 4 * made + 10_000


# Hostile shapes: each is refused before anything big is made.
S10 = "{% set s = '\U000e0001' * 1000000 %}"  # 1M characters whose repr is 10 each
BIG = "{% set s = 'x' * 100000 %}{% set lst = [s] * 1000 %}"  # printed: 100 MB
DEEP = "{% set ns = namespace(x=[]) %}{% for i in range(95) %}{% set ns.x = [ns.x, 'ab'] %}{% endfor %}"
PRINTED = "printing a structure of more than 10000000 characters exceeds max_string (10000000)"

REFUSED = [
    (S10 + "{{ [[s]]|join }}", PRINTED),
    (S10 + "{{ [s]|e }}", PRINTED),
    (S10 + "{{ [s]|safe }}", PRINTED),
    (S10 + "{{ [s]|striptags }}", PRINTED),
    (S10 + "{{ {'a': [s]}|xmlattr }}", PRINTED),
    (S10 + "{{ {'a': [s]}|urlencode }}", PRINTED),
    (S10 + "{{ 'ab'|replace('a', [s]) }}", PRINTED),
    (S10 + "{{ ('x'|safe).join([[s]]) }}", PRINTED),
    (S10 + "{{ [s]|string }}", PRINTED),
    (S10 + "{{ '{}'.format([s]) }}", PRINTED),
    (S10 + "{{ '%s' % ([s],) }}", PRINTED),
    (S10 + "{{ [s]|pprint }}", PRINTED),
    (S10 + "{{ [s] ~ '' }}", PRINTED),
    (BIG + "{{ lst|e }}", PRINTED),
    (BIG + "{{ lst is lower }}", PRINTED),
    (BIG + "{{ [lst]|join }}", PRINTED),
    (BIG + "{{ dict.fromkeys(range(1000)|map('string'), s).values() }}", PRINTED),
    (BIG + "{{ [dict.fromkeys(range(1000)|map('string'), s).items()] }}", PRINTED),
    (
        "{{ ('\x01' * 2000000)|tojson }}",
        "a string of 12000002 characters exceeds max_string (10000000)",
    ),
    (
        "{{ ('😀' * 1000000)|tojson(ensure_ascii=true) }}",
        "a string of 12000002 characters exceeds max_string (10000000)",
    ),
    (
        DEEP + "{{ ns.x|tojson(indent=' ' * 3000) }}",
        "a string of 10152513 characters exceeds max_string (10000000)",
    ),
    (
        "{% set d = dict.fromkeys(range(2000)|map('string'), 'a ' * 200) %}{{ {'k' * 5000: d}|pprint }}",
        "a string of 10035901 characters exceeds max_string (10000000)",
    ),
    (
        "{{ (('x'|safe) + ('\"' * 9999980))|length }}",
        "a string of 49999900 characters exceeds max_string (10000000)",
    ),
    ("{{ ('<'|safe).join('&' * 2000001) }}", "the render exceeded max_steps (200000)"),
    (
        "{{ 'x'.join('😀' * 6000000) }}",
        "a string of 11999999 characters exceeds max_string (10000000)",
    ),
]


@pytest.mark.parametrize(("source", "message"), REFUSED)
def test_printing_hostile_shapes_is_refused_first(source, message):
    with pytest.raises(LimitError) as caught:
        chat_environment().from_string(source).render()
    assert caught.value.message == message


AGREES = [
    "{{ ['a\\'b', \"c\\\"d\", '\\x01', 'é', '\U000e0001'] }}",
    "{{ [('x'|safe), 1.5, none, true] }}",
    "{{ {'b': [1, 'x\\ny'], 'a': none}|pprint }}",
    "{{ {'k': ['word ' * 30] * 3, 'j': {'a': 'b\\n' * 5}}|pprint }}",
    "{{ {'<': '\\x01', 'é': [1, 2]}|tojson }}",
    "{{ {'x': [1, {'y': 'z'}]}|tojson(indent=3) }}",
    "{{ [['<a>']]|join }}|{{ [1, 'é']|e }}|{{ ['<']|safe }}|{{ ['a&b']|striptags }}",
    "{{ {'a': ['<x>']}|xmlattr }}|{{ {'a': [1, 'é']}|urlencode }}|{{ 'ab'|replace('a', [1]) }}",
    "{{ ('-'|safe).join(['<', ['&']]) }}|{{ ''.join('ab😀') }}|{{ '-'.join('xyz') }}",
    "{{ ('x'|safe).escape }}|{{ [('x'|safe).escape] }}|{{ ('x'|safe).escape('<') }}",
    "{{ '%r|%a' % ('\U000e0001é', 'é') }}|{{ '{!r}'.format(['é']) }}",
    "{{ [1, 2] is lower }}{{ ['A'] is upper }}",
    "{{ {'a': 'é'}.items() }}|{{ [{'b': 1}.keys()] }}|{{ {'c': ['\x01']}.values() }}",
]


@pytest.mark.parametrize("source", AGREES)
def test_printing_agrees_with_jinja2(source):
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    from conformance.reference import normalize

    # (a method prints by its name here, with its address in Jinja2: read as ours)
    expected = normalize(ImmutableSandboxedEnvironment().from_string(source).render())
    assert Environment().from_string(source).render() == expected


def test_chat_dict_fromkeys_of_a_string_is_python_s():
    # transformers' ``dict`` global: the characters are keys, without a list of them first
    env = chat_environment()
    assert env.from_string("{{ dict.fromkeys('abca')|list }}").render() == "['a', 'b', 'c']"
    assert env.from_string("{{ dict.fromkeys('😀' * 3000000)|length }}").render() == "1"


@settings(max_examples=1000, deadline=None)
@given(values, st.sampled_from([None, 0, 1, 4, 64]))
def test_json_bound_of_the_printed_measure_covers_json_dumps(value, indent):
    # chat tojson bounds its text from the measure its declared cost made (no second walk)
    try:
        made = json.dumps(value, indent=indent, ensure_ascii=False)
    except (TypeError, ValueError):
        return
    assert json_bound_of_printed(*printed_measure(value), indent) >= len(made)


@pytest.mark.parametrize("indent", [None, 4])
def test_chat_tojson_near_max_string_takes_the_layout_bound(indent):
    # The bound from the printed measure is loose (a quote is one character in its repr, two
    # in JSON): past max_string it gives way to the layout bound, which accepts what it
    # bounds within the limit (the environment's, not the default) and refuses the rest.
    value = {"k": ['"' * 40] * 20}
    made = json.dumps(value, indent=indent, ensure_ascii=False)
    layout = json_layout_bound(value, indent, ensure_ascii=False)
    assert len(made) <= layout < json_bound_of_printed(*printed_measure(value), indent)
    source = "{{ v|tojson }}" if indent is None else "{{ v|tojson(indent=4) }}"
    fits = chat_environment(limits=Limits(max_string=layout))
    assert fits.from_string(source).render(v=value) == made
    short = chat_environment(limits=Limits(max_string=layout - 1))
    with pytest.raises(LimitError) as caught:
        short.from_string(source).render(v=value)
    assert caught.value.message == (
        f"a string of {layout} characters exceeds max_string ({layout - 1})"
    )
