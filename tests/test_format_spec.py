"""Our own readings of ``%`` formats and ``format`` specs (minijinja_py/format_spec.py) against
Python's: on generated formats, whatever Python makes is within the bound counted before it,
and the bound is never far above it; widths and precisions beyond max_string are refused
wherever Python would read them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minijinja_py import Environment, LimitError, chat_environment
from minijinja_py.sandbox.format_spec import parsed_bound, percent_bound, spec_bound

LIMIT = 10**9

texts = st.text(
    st.sampled_from(["a", "'", '"', "\\", "\n", "\x01", "é", "\U000e0001", "<", "&", " ", "😀"]),
    max_size=12,
)
scalars = st.one_of(
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    texts,
    st.booleans(),
    st.none(),
)
values = st.one_of(
    scalars, st.lists(scalars, max_size=4), st.dictionaries(texts, scalars, max_size=3)
)
keys = st.sampled_from(["a", "a(b)", "(x)", "a(b(c))d", "", " "])


@st.composite
def percent_formats(draw):
    pieces = []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["text", "%%", "field", "field", "field", "bad"]))
        if kind == "text":
            pieces.append(draw(st.text(st.sampled_from("ab (.)*"), max_size=4)))
        elif kind == "%%":
            pieces.append("%%")
        elif kind == "bad":
            pieces.append(
                "%" + draw(st.sampled_from(["", "(", "(a", "5", ".", "*", "q", "l", "-"]))
            )
        else:
            field = "%"
            if draw(st.booleans()):
                field += "(" + draw(keys) + ")"
            field += "".join(draw(st.lists(st.sampled_from("-+ #0"), max_size=3)))
            field += draw(st.sampled_from(["", "", "*", "0", "7", "12", "05"]))
            if draw(st.booleans()):
                field += "." + draw(st.sampled_from(["", "*", "0", "3", "15"]))
            field += draw(st.sampled_from(["", "", "h", "l", "L"]))
            field += draw(st.sampled_from(list("sdiuoxXeEfFgGcra%") + ["y", "("]))
            pieces.append(field)
    return "".join(pieces)


@st.composite
def percent_arguments(draw):
    kind = draw(st.sampled_from(["tuple", "one", "dict"]))
    if kind == "dict":
        return draw(st.dictionaries(keys, st.one_of(scalars, st.integers(-30, 30)), max_size=4))
    if kind == "one":
        return draw(values)
    return tuple(draw(st.lists(st.one_of(scalars, st.integers(-30, 30)), max_size=5)))


@settings(max_examples=3000, deadline=None)
@given(percent_formats(), percent_arguments())
def test_percent_bound_covers_what_python_makes(fmt, args):
    try:
        made = fmt % args
    except Exception:
        return  # (Python refuses: the bound stopped counting where it did)
    bound = percent_bound(fmt, args, LIMIT)
    assert bound >= len(made), (fmt, args, made)
    # never far above: each field's bound is its text's size plus a number's worst case
    assert bound <= 12 * len(made) + 400 * (fmt.count("%") + 1), (fmt, args, made)


@st.composite
def bare_formats(draw):
    # Formats whose fields are bare `%s` (read from a plan kept per string), and their near
    # misses (a stray or trailing `%`, another conversion), which the parser reads.
    pieces = draw(
        st.lists(st.sampled_from(["%s", "%s", "%%", "a", "é ", "%", "%d", "%5s"]), max_size=6)
    )
    return "".join(pieces)


@settings(max_examples=2000, deadline=None)
@given(
    bare_formats(),
    percent_arguments(),
    st.sampled_from([0, 1, 3, 8, LIMIT]),
    st.booleans(),
)
def test_a_planned_format_is_bounded_as_the_parser_bounds_it(fmt, args, limit, escaped):
    def outcome(bound):
        try:
            return bound(fmt, args, limit, escaped)
        except LimitError as error:  # (a width above the limit)
            return str(error)

    # Twice: the first call makes the plan, the second reads it.
    expected = outcome(parsed_bound)
    assert outcome(percent_bound) == expected
    assert outcome(percent_bound) == expected


@st.composite
def format_specs(draw):
    spec = ""
    if draw(st.booleans()):
        spec += draw(st.sampled_from(["", "x", "0", "<", "9"])) + draw(st.sampled_from("<>=^"))
    spec += draw(st.sampled_from(["", "+", "-", " "]))
    spec += draw(st.sampled_from(["", "z"]))
    spec += draw(st.sampled_from(["", "#"]))
    spec += draw(st.sampled_from(["", "0"]))
    spec += draw(st.sampled_from(["", "5", "12", "0", "007"]))
    spec += draw(st.sampled_from(["", ",", "_", ",_"]))
    if draw(st.booleans()):
        spec += "." + draw(st.sampled_from(["", "0", "3", "20"]))
    spec += draw(
        st.sampled_from(["", "", "s", "d", "b", "o", "x", "X", "c", "e", "f", "g", "n", "%", "q"])
    )
    return spec


@settings(max_examples=3000, deadline=None)
@given(st.one_of(scalars, st.integers(-(2**200), 2**200)), format_specs())
def test_spec_bound_covers_what_python_makes(value, spec):
    try:
        made = format(value, spec)
    except Exception:
        return
    bound = spec_bound(value, spec, LIMIT)
    assert bound >= len(made), (value, spec, made)
    assert bound <= 12 * len(made) + 800, (value, spec, made)


CASES = [
    # (template, expected output or LimitError message), in the chat environment
    ("{{ '%(a(b))6s|' % {'a(b)': 'x'} }}", "     x|"),
    ("{{ '%(a(b(c))d)-4s|' % {'a(b(c))d': 'x'} }}", "x   |"),
    ("{{ '%s %r %5.2f %x %c %%' % ('a', 'b', 1.5, 255, 65) }}", "a 'b'  1.50 ff A %"),
    ("{{ '%*.*s|' % (6, 2, 'abc') }}", "    ab|"),
    ("{{ '%-*d|' % (-5, 3) }}", "3    |"),
    ("{{ '{0:{1}}|'.format('ab', 5) }}", "ab   |"),
    ("{{ '{:*^9,}'.format(1234567) }}", "1,234,567"),
    ("{{ '{!r:>8}'.format('é') }}", "     'é'"),
    (
        "{{ '%(a(b))600000000s' % {'a(b)': 'x'} }}",
        LimitError("a format width of 600000000 exceeds max_string (10000000)"),
    ),
    (
        "{{ '%(k)s%(a(b)).600000000d'|format(k=1, **{'a(b)': 2}) }}",
        LimitError("a format precision of 600000000 exceeds max_string (10000000)"),
    ),
    (
        "{{ ('%(a(b))60000000s'|safe) % {'a(b)': 'x'} }}",
        LimitError("a format width of 60000000 exceeds max_string (10000000)"),
    ),
    (
        "{{ '%.600000000f' % 1.5 }}",
        LimitError("a format precision of 600000000 exceeds max_string (10000000)"),
    ),
    (
        "{{ '%.*f' % (600000000, 1.5) }}",
        LimitError("a format precision of 600000000 exceeds max_string (10000000)"),
    ),
    (
        "{{ '%*s' % (-600000000, 'x') }}",
        LimitError("a format width of 600000000 exceeds max_string (10000000)"),
    ),
    (
        "{{ '%0123456789012345678901d' % 1 }}",
        LimitError("a format width of 21 digits exceeds max_string (10000000)"),
    ),
    (
        "{{ '{:600000000}'.format(1) }}",
        LimitError("a format width of 600000000 exceeds max_string (10000000)"),
    ),
    (
        "{{ '{:.600000000}'.format('x') }}",
        LimitError("a format precision of 600000000 exceeds max_string (10000000)"),
    ),
    (
        "{{ '{0:{1}}'.format(1, 600000000) }}",
        LimitError("a format width of 600000000 exceeds max_string (10000000)"),
    ),
    (
        "{{ '{x:{y}}'.format_map({'x': 1, 'y': '>600000000'}) }}",
        LimitError("a format width of 600000000 exceeds max_string (10000000)"),
    ),
    # a field whose repr is ten times its text
    (
        "{{ '%r' % ('\U000e0001' * 1000000) }}",
        LimitError("a string of 10000002 characters exceeds max_string (10000000)"),
    ),
    (
        "{{ '{!a}'.format('\U000e0001' * 1000000) }}",
        LimitError("a string of 10000002 characters exceeds max_string (10000000)"),
    ),
    # escaping makes a Markup field five times as long
    (
        "{{ ('%s'|safe) % ('\"' * 2500000) }}",
        LimitError("a string of 12500000 characters exceeds max_string (10000000)"),
    ),
    (
        "{{ ('{}'|safe).format('&' * 2500000) }}",
        LimitError("a string of 12500002 characters exceeds max_string (10000000)"),
    ),
]


@pytest.mark.parametrize(("source", "expected"), CASES)
def test_formats_render_as_python_or_refuse(source, expected):
    env = chat_environment()
    if isinstance(expected, LimitError):
        with pytest.raises(LimitError) as caught:
            env.from_string(source).render()
        assert caught.value.message == expected.message
    else:
        assert env.from_string(source).render() == expected


def test_jinja2_agrees_on_the_outputs():
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    judge = ImmutableSandboxedEnvironment()
    plain = Environment()
    for source, expected in CASES:
        if not isinstance(expected, LimitError):
            assert judge.from_string(source).render() == expected, source
            assert plain.from_string(source).render() == expected, source
