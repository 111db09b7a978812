"""Template.render_with_provenance: the text of render(), and where each character came from."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minijinja_py import Environment, TemplateRuntimeError, chat_environment
from minijinja_py.provenance import Segment


def traced(source: str, env: Environment | None = None, **context):
    env = env or chat_environment()
    template = env.from_string(source)
    result = template.render_with_provenance(**context)
    assert result.text == template.render(**context)
    return result


def spans(result) -> list[tuple[str, tuple, int | None, bool]]:
    return [(result.text[s.start : s.end], s.path, s.offset, s.verbatim) for s in result.segments]


def test_template_text_has_no_source_and_a_value_its_path():
    result = traced("<{{ m.content }}>", m={"content": "hi", "role": "user"})
    assert result.text == "<hi>"
    assert result.segments == (Segment(1, 3, ("m", "content"), 0, True),)
    assert result.sources_at(0) == [] and result.sources_at(1) == [("m", "content")]
    assert result.char_sources() == [(), (("m", "content"),), (("m", "content"),), ()]


def test_concatenation_slicing_and_methods_are_exact():
    result = traced(
        "{{ (a ~ '|' ~ b)[1:] }}/{{ a.strip().split(' ')[1] }}/{{ b + a[::-1] }}",
        a=" xy zw ",
        b="QR",
    )
    assert result.text == "xy zw |QR/zw/QR wz yx "
    assert spans(result)[:3] == [
        ("xy zw ", ("a",), 1, True),
        ("QR", ("b",), 0, True),
        ("zw", ("a",), 4, True),
    ]
    reversed_chars = [s for s in result.segments if s.start >= 15]
    assert [(s.offset, s.verbatim) for s in reversed_chars] == [(i, True) for i in range(6, -1, -1)]


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("{{ c|trim }}", [("a b", ("c",), 1, True)]),
        ("{{ c|upper }}", [(" A B ", ("c",), 0, False)]),
        ("{{ c.replace('a', 'Z') }}", [(" ", ("c",), 0, True), (" b ", ("c",), 2, True)]),
        ("{{ [c, c]|join('-') }}", [(" a b ", ("c",), 0, True), (" a b ", ("c",), 0, True)]),
        ("{{ '%s!' % c }}", [(" a b ", ("c",), 0, True)]),
        ("{{ '{}?'.format(c) }}", [(" a b ", ("c",), 0, True)]),
        ("{{ c|indent(2, true) }}", [(" a b ", ("c",), 0, True)]),
    ],
)
def test_exact_string_operations(source, expected):
    assert spans(traced(source, c=" a b ")) == expected


def test_tojson_traces_each_string_and_its_escapes_conservatively():
    result = traced("{{ d|tojson }}", d={"k": 'say "hi"', "n": 1})
    assert result.text == '{"k": "say \\"hi\\"", "n": 1}'
    assert spans(result) == [
        ("say ", ("d", "k"), 0, True),
        ('\\"', ("d", "k"), None, False),
        ("hi", ("d", "k"), 5, True),
        ('\\"', ("d", "k"), None, False),
    ]


def test_an_unknown_operation_attributes_the_result_to_all_its_sources():
    env = chat_environment()
    env.filters["shuffle"] = lambda value, other: "".join(sorted(value + other))
    result = traced("{{ a|shuffle(b) }}", env, a="ba", b="c")
    assert spans(result) == [("abc", ("a",), None, False), ("abc", ("b",), None, False)]


def test_a_partly_traced_filter_result_has_its_untraced_part_attributed():
    # wordwrap builds its result with plain joins: nothing may be left without a source
    result = traced("{{ c|wordwrap(5) }}", c="aaaa bbbb")
    assert all(result.sources_at(i) == [("c",)] for i in range(len(result.text)))


def test_printed_containers_and_markup_keep_their_sources():
    result = traced("{{ xs }}|{{ 'a'|safe + x }}", xs=["p", "q"], x="<b>")
    assert result.text == "['p', 'q']|a&lt;b&gt;"
    assert {s.path for s in result.segments} == {("xs", 0), ("xs", 1), ("x",)}
    assert result.sources_at(len("['p', 'q']|a")) == [("x",)]


def test_macros_blocks_and_generation_spans():
    result = traced(
        "{% macro w(t) %}[{{ t }}]{% endmacro %}{% set s %}{{ w(m) }}{% endset %}"
        "{% generation %}{{ s }}{% endgeneration %}",
        m="hey",
    )
    assert result.text == "[hey]"
    assert spans(result) == [("hey", ("m",), 0, True)]
    assert result.generation_spans == [(0, 5)]


def test_errors_and_their_messages_are_render_s():
    template = chat_environment().from_string("{{ c + [1] }}")
    with pytest.raises(TemplateRuntimeError) as plain:
        template.render(c="x")
    with pytest.raises(TemplateRuntimeError) as sourced:
        template.render_with_provenance(c="x")
    assert str(sourced.value) == str(plain.value)
    assert plain.value.message == 'can only concatenate str (not "list") to str'


def test_numbers_print_without_a_source():
    assert traced("{{ n }}{{ s }}", n=3, s="x").segments == (Segment(1, 2, ("s",), 0, True),)


def test_tojson_with_an_indent_traces_each_string():
    result = traced("{{ d|tojson(indent=2) }}", d={"k": ["a", 'b"c'], "n": None})
    assert result.text == '{\n  "k": [\n    "a",\n    "b\\"c"\n  ],\n  "n": null\n}'
    assert spans(result) == [
        ("a", ("d", "k", 0), 0, True),
        ("b", ("d", "k", 1), 0, True),
        ('\\"', ("d", "k", 1), None, False),
        ("c", ("d", "k", 1), 2, True),
    ]


JSON_VALUES = [
    {"k": 'say "hi"', "n": 1, "f": 1.5, "t": True, "z": None},
    [["a", "a"], {"a": "a"}, "\\", "\n\t", "", "é\u2028"],
    {1: "one", 2.5: "x", False: "y", None: "z", 'q"k': ['"', "{}"]},
    {"deep": [[[[{"x": ["y"]}]]]], "empty": [{}, []]},
]


@pytest.mark.parametrize("value", JSON_VALUES)
@pytest.mark.parametrize("indent", [None, 0, 3])
def test_the_json_scan_places_strings_as_the_walk_does(value, indent):
    import json

    from minijinja_py.provenance import json_text, scanned_json_text, track_value

    sourced = track_value(value, ("v",))
    result = json.dumps(value, ensure_ascii=False, indent=indent)
    scanned = scanned_json_text(sourced, result)
    walked = json_text(sourced, indent, result)
    assert scanned == result and scanned.segments == walked.segments


def test_the_json_scan_refuses_text_that_is_not_the_values_json():
    from minijinja_py.provenance import scanned_json_text, track_value

    sourced = track_value({"a": "x", "b": "y"}, ("v",))
    assert scanned_json_text(sourced, '{"b": "y", "a": "x"}') is None  # (sorted otherwise)
    assert scanned_json_text(sourced, '{"a": "x", "b": "y", "c": ""}') is None


def test_json_nested_deeper_than_the_walk_goes_is_attributed_as_a_whole():
    # (limits that let data nest so deep: the scan must not trace what the walk would not)
    from minijinja_py import Limits

    deep: object = 1
    for _ in range(250):
        deep = [deep]
    env = chat_environment(Limits(max_recursion=400))
    result = traced("{{ d|tojson }}", env, d=["s", deep])
    assert result.segments == (Segment(0, len(result.text), ("d", 0), None, False),)


@given(
    st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12)), max_size=6),
    st.integers(1, 12),
)
def test_the_uncovered_runs_are_the_characters_no_segment_covers(bounds, length):
    from minijinja_py.provenance import _uncovered

    segments = tuple((start, min(end, length), ("p",), None, False) for start, end in bounds)
    covered = [any(s <= i < e for s, e, *_ in segments) for i in range(length)]
    expected = []
    for index, is_covered in enumerate(covered):
        if is_covered:
            continue
        if expected and expected[-1][1] == index:
            expected[-1] = (expected[-1][0], index + 1)
        else:
            expected.append((index, index + 1))
    assert _uncovered(segments, length) == expected


def test_text_with_nothing_to_strip_keeps_its_sources():
    result = traced("{{ c|trim }}|{{ c.lstrip() }}|{{ c.rstrip() }}|{{ c|string }}", c="a b")
    assert spans(result) == [("a b", ("c",), 0, True)] * 4


def test_a_printed_sum_keeps_its_sources_in_captured_output_and_spans():
    result = traced(
        "{% set s %}{{ '<' + x + '>' }}{% endset %}{{ s + '|' }}"
        "{% generation %}{{ '[' + x + ']' }}{% endgeneration %}{{ 1 + 2 }}",
        x="hi",
    )
    assert result.text == "<hi>|[hi]3"
    assert spans(result) == [("hi", ("x",), 0, True), ("hi", ("x",), 0, True)]
    assert [s.start for s in result.segments] == [1, 6]
    assert result.generation_spans == [(5, 9)]


def test_a_printed_sum_counts_towards_max_output_as_render_does():
    from minijinja_py import LimitError, Limits

    template = chat_environment(Limits(max_output=10)).from_string("{{ 'abcdef' + x }}")
    with pytest.raises(LimitError) as plain:
        template.render(x="123456")
    with pytest.raises(LimitError) as sourced:
        template.render_with_provenance(x="123456")
    assert str(sourced.value) == str(plain.value)


def test_tojson_of_kept_data_is_read_off_once_and_the_same_at_every_render():
    from minijinja_py import provenance
    from minijinja_py.provenance import keep_traced, track_value

    data = track_value({"f": {"name": "x", "d": 'a "b"'}, "n": [1, "y"]}, ("tools",))
    keep_traced(data)
    template = chat_environment().from_string("{{ t|tojson }}|{{ t.f|tojson(indent=1) }}")
    first = template.trace({"t": data}, [])  # (already traced: passed through as it is)
    again = template.trace({"t": data}, [])
    fresh = template.trace({"t": {"f": {"name": "x", "d": 'a "b"'}, "n": [1, "y"]}}, ["t"])
    assert first == again
    assert [tuple(s) for s in first.segments] == [
        (s.start, s.end, ("tools", *s.path[1:]), s.offset, s.verbatim) for s in fresh.segments
    ]
    assert len(provenance._KEPT[id(data)][1]) == 1  # the text of t, remembered


def test_the_kept_containers_are_bounded():
    from minijinja_py import provenance
    from minijinja_py.provenance import keep_traced

    # Each value holds 10,001 containers of 256 bytes (and 8 per item), about 2.6 MB: the
    # second one lets the first go (4 MiB at most), and so on; a value over the bound is not
    # kept.
    for _ in range(4):
        keep_traced([[] for _ in range(10_000)])
    assert len(provenance._KEPT) == 10_001
    assert provenance._KEPT_SIZE[0] == 256 * 10_001 + 8 * 10_000
    assert provenance.KEPT_BYTES == 4 << 20
    huge = ["x" * (5 << 20)]
    keep_traced(huge)
    assert id(huge) not in provenance._KEPT


def test_text_added_before_a_sourced_string_shifts_its_sources():
    result = traced("{{ '<' + c }}|{{ '<<' + (c ~ d) }}", c="ab", d="x")
    assert result.text == "<ab|<<abx"
    assert [tuple(s) for s in result.segments] == [
        (1, 3, ("c",), 0, True),
        (6, 8, ("c",), 0, True),
        (8, 9, ("d",), 0, True),
    ]
