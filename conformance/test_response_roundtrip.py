"""The way back as an oracle: for every corpus template, an assistant message rendered, then
parsed with the response template inferred from the chat template, comes back (modulo the
whitespace a template strips).  The table of conformance/FINDINGS.md is what the first test
asserts; the property draws messages for the templates that invert."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from minijinja_py.chat.responses.inferred import UNQUOTED_STRINGS

from .corpus import corpus_missing, template_names
from .response_roundtrip import (
    REASONING_FIELDS,
    TOOLS,
    generation_prompt,
    probe_messages,
    renders_calls,
    round_trip,
)

_MISSING = corpus_missing()

# Templates whose inferred parser does not give every probe message back, each with the reason
# (conformance/FINDINGS.md, "The way back").
NOT_INVERTED = {
    # no conversation of plain messages to read
    "cohere-command-r-v01": "renders no conversation without tools in its own format (a "
    "preamble of parameter_definitions)",
    "firefunction-v1": "needs a 'functions' message first",
    "llama-guard-3-11b-vision": "writes no assistant turn: a classifier's prompt",
}


# Templates whose calls come back but whose string arguments are written without quotes (Llama
# 3.2's pythonic `city=Paris`) or in quotes they do not escape: a string holding , ( ) " ' or \
# reads otherwise, and the inference says so (`lost`).
WRITE_STRINGS_BARE = [
    "lfm-2.5-8b-a1b",
    "lfm-2.5-vl-450m",
    "llama-3.2-pythonic-vllm",
    "llama-4-pythonic-vllm",
    "toolace-vllm",
]
_SYNTAX = set(",()\"'\\")


def _reads_bare(text: str) -> bool:
    # (written bare, a string reads back as itself when it holds none of the call syntax and
    # starts with a letter: `city=00` is the number, `city=null` the constant)
    word = text.strip()
    return not (_SYNTAX & set(text)) and word[:1].isalpha() and word not in ("null", "None")


@pytest.mark.skipif(_MISSING is not None, reason=_MISSING or "")
def test_the_round_trip_table():
    from minijinja_py.chat.responses import parse_response

    failed, bare, with_calls, calls_back = {}, [], [], []
    for name in template_names():
        try:
            template, lost, problems = round_trip(name, probe_messages(), parse_response)
        except ValueError as error:
            template, lost, problems = {"fields": {}}, [], [str(error)]
        if problems:
            failed[name] = problems[0]
        if UNQUOTED_STRINGS in lost:
            bare.append(name)
        if template["fields"]:  # (what the prompt writes after the header is not the reply)
            prompt = generation_prompt(name)
            assert parse_response("", template, prefix=prompt) == {"role": "assistant"}, name
        if renders_calls(name):
            with_calls.append(name)
            if "tool_calls" in template["fields"] and not problems:
                calls_back.append(name)
    assert sorted(failed) == sorted(NOT_INVERTED)
    assert len(template_names()) - len(failed) == 147
    assert bare == WRITE_STRINGS_BARE
    # calls come back on 67 of the 68 templates that write them (98.5%)
    assert (len(with_calls), len(calls_back)) == (68, 67)
    assert sorted(set(with_calls) - set(calls_back)) == [
        "hermes-2-pro-llama-3-8b-json-schema",  # (a second call written without its opener)
    ]


def _reads_as_text(text: str) -> bool:
    # A string argument that is JSON ("0", "1e5", "true") is written by templates that put
    # arguments in tags (GLM, Qwen 3 Coder) exactly as the number or constant: the two inputs
    # render alike, and the way back reads the value (conformance/FINDINGS.md).
    try:
        json.loads(text)
    except ValueError:
        return any(char.isalnum() for char in text)
    return False


_WORDS = st.text(alphabet="abcdefghij klmnop,.!?XYZ0123456789()\"'\\", min_size=1, max_size=30).filter(
    _reads_as_text
)
_CALLS = st.sampled_from(
    [
        ("get_weather", st.fixed_dictionaries({"city": _WORDS, "days": st.integers(0, 99)})),
        ("get_time", st.fixed_dictionaries({"zone": _WORDS, "exact": st.booleans()})),
        ("search_web", st.fixed_dictionaries({"query": _WORDS})),
    ]
).flatmap(
    lambda pair: pair[1].map(
        lambda arguments: {
            "id": "call0abcd",
            "type": "function",
            "function": {"name": pair[0], "arguments": arguments},
        }
    )
)


@st.composite
def _messages(draw):
    message = {"role": "assistant", "content": draw(_WORDS)}
    if draw(st.booleans()):
        message["reasoning_content"] = draw(_WORDS)
    calls = draw(st.lists(_CALLS, max_size=3))
    if calls:
        message = {"role": "assistant", "content": "", "tool_calls": calls}
    return message


_INVERTED = sorted(set(template_names()) - set(NOT_INVERTED)) if _MISSING is None else []


@pytest.mark.skipif(_MISSING is not None, reason=_MISSING or "")
@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_INVERTED or ["none"]), _messages())
def test_drawn_messages_come_back(name, message):
    from minijinja_py.chat.responses import parse_response

    if name in WRITE_STRINGS_BARE:
        strings = [
            value
            for call in message.get("tool_calls", ())
            for value in call["function"]["arguments"].values()
            if isinstance(value, str)
        ]
        assume(all(_reads_bare(value) for value in strings))

    _, _, problems = round_trip(name, [message], parse_response)
    assert problems == []


def test_the_tools_and_fields_are_the_probes():
    # (what the table's probes draw from: every tool's arguments typed, reasoning by name)
    assert [tool["function"]["name"] for tool in TOOLS] == ["get_weather", "get_time", "search_web"]
    assert REASONING_FIELDS == ("reasoning_content", "thinking", "reasoning")
