"""The `python` content parser (chat/responses/literals.py): calls and values written in Python or
JSON syntax, with exact values and exact error messages, a round trip of Python and JSON literals
and fuzzing that only ever ends in a value or a ValueError."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minijinja_py.chat.responses import parse_response
from minijinja_py.chat.responses.content import CONTENT_PARSERS, parse_content
from minijinja_py.chat.responses.literals import MAX_PYTHON_ITEMS, read_literals


def _read(text: str, **args: object) -> object:
    return parse_content(text, "python", args)


def _call(name: str, **arguments: object) -> dict[str, object]:
    return {"name": name, "arguments": arguments}


def test_python_is_a_content_parser() -> None:
    assert CONTENT_PARSERS[-1] == "python"


@pytest.mark.parametrize(
    ("text", "args", "expected"),
    [
        (
            "[get_weather(city=\"Paris\", days=3), get_time(zone='CET', exact=True)]",
            {},
            [_call("get_weather", city="Paris", days=3), _call("get_time", zone="CET", exact=True)],
        ),
        (
            "get_weather(city=Paris, days=3)\nget_time(zone=CET,exact=true)",
            {},
            [_call("get_weather", city="Paris", days=3), _call("get_time", zone="CET", exact=True)],
        ),
        (
            '{"name": "a", "parameters": {"x": 1}}{"name": "b", "parameters": {}}',
            {},
            [{"name": "a", "parameters": {"x": 1}}, {"name": "b", "parameters": {}}],
        ),
        (
            "{\"name\": \"a\", \"arguments\": {'city': 'Paris', 'ok': True}},"
            '{"name": "b", "arguments": {}}',
            {},
            [_call("a", city="Paris", ok=True), _call("b")],
        ),
        ('[{"a": 1}]', {"list": True}, [{"a": 1}]),
        ('[{"a": 1}]', {}, [{"a": 1}]),
        ('{"a": 1}', {"list": True}, [{"a": 1}]),
        ("f(a=1) g(b=2)", {"list": True}, [_call("f", a=1), _call("g", b=2)]),
        ('f(a="x"b=3)', {}, _call("f", a="x", b=3)),
        ("```python\nf(a=1)\n```", {}, _call("f", a=1)),
        ('```json\n{"a": [1, 2]}\n```', {}, {"a": [1, 2]}),
        ("```\nf()\n```", {}, _call("f")),
        ("```f(a=1)```", {}, _call("f", a=1)),
        ("```python\nf(a='```')\n```\nDone.", {}, _call("f", a="```")),
        ("```python\nf(a=1)", {}, _call("f", a=1)),
        ("  \n f(a=1) \n ", {}, _call("f", a=1)),
        (
            "functions.get-weather_2(x=None, y=null)",
            {},
            _call("functions.get-weather_2", x=None, y=None),
        ),
        ("f(city=Paris City)", {}, _call("f", city="Paris City")),
        ("f(city=Paris (France), n=1)", {}, _call("f", city="Paris (France)", n=1)),
        ("f(a=[1, (2, 3), {}], b={'k': (),},)", {}, _call("f", a=[1, [2, 3], {}], b={"k": []})),
        ("f(a=g(b=1))", {}, _call("f", a=_call("g", b=1))),
        (
            "[1, 2.5, -3, +4, 007, 1e3, -1.5E-2, .5, 5.]",
            {},
            [1, 2.5, -3, 4, 7, 1000.0, -0.015, 0.5, 5.0],
        ),
        ("[True, False, None, true, false, null]", {}, [True, False, None, True, False, None]),
        (
            "{1: 'a', -2.5: 'b', None: 'c', bare key: 'd', 'q': 'e',}",
            {},
            {1: "a", -2.5: "b", None: "c", "bare key": "d", "q": "e"},
        ),
        ("(1,)", {}, [1]),
        ("()", {}, []),
        ("hello there, friend", {}, ["hello there", "friend"]),
        ("", {"list": True}, []),
        ("   ", {"list": True}, []),
    ],
)
def test_values(text: str, args: dict[str, object], expected: object) -> None:
    assert _read(text, **args) == expected


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        (r'"a\nb\tc\rd"', "a\nb\tc\rd"),
        (r"'it\'s \"q\" \\ \/'", 'it\'s "q" \\ /'),
        (r'"\u00e9\x41\101"', "éAA"),
        (r'"\ud83d\ude00"', "\U0001f600"),
        (r'"\U0001F600"', "\U0001f600"),
        (r'"\ud83d"', "\ud83d"),
        (r'"\q\N{X}\u12"', "\\q\\N{X}\\u12"),
        (r'"\b\f\v\a"', "\b\f\v\a"),
        ('"two\nlines"', "two\nlines"),
        ("'a \"b\"'", 'a "b"'),
    ],
)
def test_string_escapes(written: str, expected: str) -> None:
    assert _read(written) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "python: expected a value, found none at position 0: ''"),
        ("  ", "python: expected a value, found none at position 2: ''"),
        (
            "f(1)",
            "python: call 'f' has a positional argument 1 (only keyword arguments are read) "
            "at position 2: '1)'",
        ),
        (
            "f(a=1, 'x')",
            "python: call 'f' has a positional argument 'x' (only keyword arguments "
            "are read) at position 7: \"'x')\"",
        ),
        ("[1, 2", "python: '[' is never closed at position 0: '[1, 2'"),
        ("f(a=1", "python: '(' is never closed at position 1: '(a=1'"),
        ("{'a': 1", "python: '{' is never closed at position 0: \"{'a': 1\""),
        ("[1 2]", "python: expected ',' or ']', found '2' at position 3: '2]'"),
        ('"abc', "python: unterminated string at position 0: '\"abc'"),
        ('"a\\', "python: unterminated string at position 0: '\"a\\\\'"),
        ("[1, ]]", "python: expected a value, found ']' at position 5: ']'"),
        ("{: 1}", "python: expected a key, found ':' at position 1: ': 1}'"),
        ("{'a' 1}", "python: expected ':' after a key at position 5: '1}'"),
        ("f(a=)", "python: expected a value, found ')' at position 4: ')'"),
        ("[,]", "python: expected a value, found ',' at position 1: ',]'"),
        ('"\\U00110000"', "python: escape past U+10FFFF at position 1: '\\\\U00110000\"'"),
        ("1" * 4301, "python: integer longer than 4300 digits at position 0: '" + "1" * 40 + "'"),
        ("[" * 101, "python: nested more than 100 levels deep at position 100: '['"),
        ("f(a=" * 101, "python: nested more than 100 levels deep at position 401: '(a='"),
    ],
)
def test_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        _read(text)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("text", "position", "near"),
    [
        ("[" + "1," * 200_001 + "]", 399_999, "'1,1,]'"),
        ('"' + "\\n" * 200_001 + '"', 0, "'\"" + "\\\\n" * 19 + "\\\\'"),
        ("f(a=-" + "(" * 200_001 + ")", 200_003, "'((()'"),
    ],
)
def test_items_past_the_cap_are_refused(text: str, position: int, near: str) -> None:
    # (values, escapes and brackets in bare words: each costs the reader a Python step)
    with pytest.raises(ValueError) as caught:
        _read(text)
    assert str(caught.value) == (
        f"python: the region holds more than {MAX_PYTHON_ITEMS} values, escapes and brackets "
        f"at position {position}: {near}"
    )
    assert MAX_PYTHON_ITEMS == 200_000


def test_content_args_are_checked() -> None:
    with pytest.raises(ValueError) as caught:
        _read("1", list="yes")
    assert str(caught.value) == "python: content_args 'list' must be a bool, got 'yes'"


def test_a_hundred_levels_read() -> None:
    value = read_literals("[" * 100 + "]" * 100)
    for _ in range(99):
        value = value[0]
    assert value == []


def test_in_a_response_template() -> None:
    template = {
        "start_anchor": "<|start_header_id|>assistant<|end_header_id|>\n\n",
        "fields": {
            "tool_calls": {
                "open": "<|python_tag|>",
                "close": "<|eom_id|>",
                "content": "python",
                "content_args": {"list": True},
                "transform_each": True,
                "transform": {
                    "type": "function",
                    "function": {"name": "{name}", "arguments": "{arguments}"},
                },
            },
            "content": {"close": "<|python_tag|>"},
        },
    }
    message = parse_response(
        "Let me look.<|python_tag|>[get_weather(city='Paris')]<|eom_id|>",
        template,
        prefix="<|start_header_id|>assistant<|end_header_id|>\n\n",
    )
    assert message == {
        "content": "Let me look.",
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
            }
        ],
    }


_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text()
    | st.floats(allow_nan=False, allow_infinity=False)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_python_and_json_literals_read_back(value: object) -> None:
    assert read_literals(repr(value)) == value
    assert read_literals(json.dumps(value)) == value
    assert read_literals(json.dumps(value, ensure_ascii=False)) == value


def _only_value_errors(text: str) -> None:
    try:
        read_literals(text)
        read_literals(text, as_list=True)
    except ValueError:
        pass


@settings(max_examples=500, deadline=None)
@given(st.text())
def test_any_text_reads_or_raises_value_error(text: str) -> None:
    _only_value_errors(text)


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet="()[]{}'\",=:\\ \nabTNuex0179.-+`", max_size=80))
def test_grammar_text_reads_or_raises_value_error(text: str) -> None:
    _only_value_errors(text)


def test_a_megabyte_of_calls_reads_in_linear_time() -> None:
    call = "get_weather(city='Paris', days=3, units=\"metric\", extra={'a': [1, 2.5, None]}), "
    small = "[" + call * (100_000 // len(call)) + "]"
    large = "[" + call * (1_000_000 // len(call)) + "]"
    # (CPU time of this process, the best of three: the machine is shared)
    small_time = min(_timed(small) for _ in range(3))
    large_time = min(_timed(large) for _ in range(3))
    assert len(read_literals(large)) == 1_000_000 // len(call)
    assert large_time < 10 * 3 * small_time + 0.05  # ten times the text, at most ~30 times the time


def _timed(text: str) -> float:
    started = time.process_time()
    read_literals(text)
    return time.process_time() - started


def test_a_constant_glued_to_the_next_keyword() -> None:
    # (templates that join keyword arguments with no separator write `exact=falsezone=...`)
    assert read_literals('f(exact=falsezone="CET", b=truex)') == {
        "name": "f",
        "arguments": {"exact": False, "zone": "CET", "b": "truex"},
    }


def test_calls_named_by_their_one_key() -> None:
    text = '[{"get_weather": {"city": "Paris"}}, {"get_time": {}}, {"a": 1, "b": 2}]'
    assert parse_content(text, "python", {"list": True, "name_keys": True}) == [
        {"name": "get_weather", "arguments": {"city": "Paris"}},
        {"name": "get_time", "arguments": {}},
        {"a": 1, "b": 2},
    ]
    with pytest.raises(ValueError) as caught:
        parse_content("[]", "python", {"name_keys": 1})
    assert str(caught.value) == "python: content_args 'name_keys' must be a bool, got 1"
