"""msgspec reads and writes a batch's JSON lines exactly as `json` does (pipelines/fastjson.py).

Each check runs the pipelines' decoder and encoder twice, with msgspec and with `json` alone, and
asserts the same value (types included), the same error or the same bytes. They need msgspec (the
`fastjson` extra, installed by CI on its main Python); the pure path's own checks run everywhere.
"""

from __future__ import annotations

import json
import math
import sys

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from minijinja_py.pipelines import InputError, fastjson, jsonl, parse_json, rows

needs_msgspec = pytest.mark.skipif(
    fastjson.FAST_DECODE is None,
    reason="msgspec is not installed (pip install 'minijinja_py[fastjson]'): nothing to compare",
)


def _outcome(call, *args):
    try:
        return "value", call(*args)
    except Exception as exc:  # noqa: BLE001 - the error is the outcome compared
        return "error", (type(exc), str(exc))


def _both(call, *args):
    """`call(*args)` with msgspec, then with `json` alone."""
    fast = _outcome(call, *args)
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(rows, "FAST_DECODE", None)
        patched.setattr(jsonl, "FAST_ENCODE", None)
        pure = _outcome(call, *args)
    return fast, pure


def _same(a, b) -> bool:
    """Equal, with equal types at every level (1 is not 1.0 nor True; NaN is NaN; -0.0 is not 0.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1, a) == math.copysign(1, b)
        )
    if isinstance(a, list):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return a == b


def _agree(text: str) -> None:
    fast, pure = _both(parse_json, text)
    assert fast[0] == pure[0], (text, fast, pure)
    assert _same(fast[1], pure[1]) if fast[0] == "value" else fast == pure


EDGES = [
    "NaN",
    "[Infinity, -Infinity]",
    "1e400",
    "-1e400",
    "1" + "0" * 400 + ".5",
    "1e-400",
    "-0",
    "-0.0",
    "5e-324",
    "1.7976931348623157e308",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775809",
    "9" * 4300,
    "-" + "9" * 4300,
    "[" + "9" * 4301 + "]",
    "-" + "9" * 4301,
    '"\\ud800"',
    '"\\udc00\\ud800"',
    '"\\ud83d\\ude00"',
    '"\ud800"',
    '{"a": 1, "b": 2, "a": 3}',
    '"\\u0000\x7f\u2028"',
    '"\x1f"',
    "\ufeff[]",
    "[1,]",
    "01",
    ' {"a" : [ 1 , 2 ] }\r\n\t',
    "[" * 100 + "]" * 100,
    "[" * 101 + "]" * 101,
    "",
    "tru",
]


@needs_msgspec
@pytest.mark.parametrize("text", EDGES)
def test_msgspec_decodes_every_edge_as_json_does(text):
    _agree(text)


@needs_msgspec
def test_a_value_json_alone_accepts_is_json_s():
    # (msgspec refuses these: json's value is the answer, not an error)
    fast, pure = _both(parse_json, '{"x": NaN, "y": "\\ud800", "z": 1e999}')
    assert fast[0] == pure[0] == "value"
    assert fast[1]["y"] == "\ud800" and fast[1]["z"] == math.inf and math.isnan(fast[1]["x"])


@needs_msgspec
def test_an_error_is_json_s_own():
    # msgspec words it its own way; the error raised is json's, message and position
    text = '{"a": [1, 2,]}'
    with pytest.raises(Exception) as refused:
        fastjson.FAST_DECODE(text)
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(text)
    with pytest.raises(json.JSONDecodeError) as caught:
        parse_json(text)
    assert str(refused.value) != expected.value.msg
    assert (caught.value.msg, caught.value.lineno, caught.value.colno) == (
        expected.value.msg,
        expected.value.lineno,
        expected.value.colno,
    )


@needs_msgspec
@pytest.mark.skipif(not hasattr(sys, "set_int_max_str_digits"), reason="no limit on int digits")
@pytest.mark.parametrize("limit", [0, 10_000])
def test_a_looser_digit_limit_leaves_integers_to_json(limit):
    # msgspec follows the interpreter's limit; the pipelines keep their own 4300 digits
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(limit)
    try:
        assert not fastjson.ints_bounded(rows.MAX_INT_DIGITS)
        with pytest.raises(
            InputError, match=r"^an integer of 5000 digits: at most 4300 are accepted$"
        ):
            parse_json("[" + "7" * 5000 + "]")
    finally:
        sys.set_int_max_str_digits(before)
    assert fastjson.ints_bounded(rows.MAX_INT_DIGITS)


def _json_values():
    scalars = (
        st.none()
        | st.booleans()
        | st.integers()
        | st.integers(min_value=-(10**60), max_value=10**60)
        | st.floats(allow_nan=True, allow_infinity=True)
        | st.text()
        | st.text(alphabet=st.characters(codec=None, max_codepoint=0x3000))
    )
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
        ),
        max_leaves=12,
    )


@needs_msgspec
@settings(max_examples=300, deadline=None)
@given(value=_json_values(), ascii=st.booleans(), compact=st.booleans())
def test_msgspec_decodes_written_json_as_json_does(value, ascii, compact):
    separators = (",", ":") if compact else (", ", ": ")
    try:
        text = json.dumps(value, ensure_ascii=ascii, separators=separators)
    except ValueError:  # an int past the interpreter's digits
        return
    _agree(text)


# Texts near JSON: fragments joined at random, so that broken numbers, escapes and nesting are met.
_FRAGMENTS = [
    "[", "]", "{", "}", ",", ":", " ", '"', "\\", "\\u", "d800", "dc00", "00e9", "-", "0", "1",
    "9", ".", "e", "E+", "e-", "400", "true", "null", "NaN", "Infinity", '"k"', '"v"', "\x00",
    "\x1f", "\x7f", "\u2028", "é", "😀", "\ud800", "\ufeff",
]  # fmt: skip


@needs_msgspec
@settings(max_examples=500, deadline=None)
@given(text=st.lists(st.sampled_from(_FRAGMENTS), max_size=14).map("".join))
@example(text='{"k":[1e400,"\\ud800"]}')
@example(text='["\\u00e9",-0,1E+2]')
def test_msgspec_decodes_near_json_as_json_does(text):
    _agree(text)


def _records():
    text = st.text() | st.text(alphabet=st.characters(codec=None, max_codepoint=0xE000))
    plain = st.none() | st.booleans() | st.integers(min_value=-(10**40), max_value=10**40) | text
    anything = plain | st.floats(allow_nan=True, allow_infinity=True)
    passthrough = st.recursive(
        anything,
        lambda inner: (
            st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
        ),
        max_leaves=8,
    )
    result = st.fixed_dictionaries(
        {
            "text": st.none() | text,
            "assistant_spans": st.lists(st.lists(st.integers(0, 9), min_size=2, max_size=2)),
        }
    )
    return st.tuples(
        st.dictionaries(st.sampled_from(["id", "meta", "n"]), passthrough, max_size=3), result
    ).map(lambda parts: {**parts[0], **parts[1], "error": None})


@needs_msgspec
@settings(max_examples=300, deadline=None)
@given(records=st.lists(_records(), max_size=4))
@example(records=[{"id": 1e16, "text": "a", "error": None}])
@example(records=[{"id": float("nan"), "text": '\x00\x1f\x7f\u2028"\\/\b\f\n\r\t', "error": None}])
@example(
    records=[{"id": "\ud800", "text": "é", "error": None}, {"id": 1, "text": "b", "error": None}]
)
def test_msgspec_writes_records_as_json_does(records):
    fast, pure = _both(jsonl.encode_records, records)
    assert fast == pure


def test_records_are_written_compact_with_non_ascii_kept():
    records = [
        {"id": 7, "text": "café\n", "error": None},
        {"id": [1.5, 1e16], "text": "b", "error": None},
    ]
    assert (
        jsonl.encode_records(records)
        == (
            '{"id":7,"text":"café\\n","error":null}\n{"id":[1.5,1e+16],"text":"b","error":null}\n'
        ).encode()
    )
    # a lone surrogate cannot be UTF-8: that record is written with every non-ASCII escaped
    assert jsonl.encode_records([{"id": "\ud800é", "error": None}, {"id": "é", "error": None}]) == (
        b'{"id":"\\ud800\\u00e9","error":null}\n{"id":"\xc3\xa9","error":null}\n'
    )


@pytest.mark.parametrize(
    ("value", "exact"),
    [
        ({"a": [1, True, None, "x", [2, {"b": "c"}]]}, True),
        ([1, 2, 3] * 100, True),
        ({"a": [1, 2.0]}, False),
        (1.0, False),
        ({1: "a"}, False),
        ((1, 2), False),
        ({"a": json}, False),
    ],
)
def test_exactly_encodable(value, exact):
    assert fastjson.exactly_encodable(value) is exact
