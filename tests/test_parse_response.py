"""The response parser (chat/responses/): transformers 5.23's response_template format, with
exact expected messages, events and errors, and hostile responses that must stay bounded."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.response_cases import (
    COHERE,
    COHERE_OUT,
    ERNIE,
    GEMMA4,
    GPT_OSS,
    INKLING,
    QWEN3,
    SET_ALARM_CALL,
    SET_ALARM_TOOLS,
    SMOLLM,
    TEMPLATES,
    XML_STRING_ARGS,
)
from minijinja_py.chat import ChatTemplate
from minijinja_py.chat.responses import (
    MAX_ANCHOR,
    ResponseParser,
    load_response_template,
    parse_response,
)
from minijinja_py.chat.responses.pattern import Pattern


def _stream(template, text, step, prefix=""):
    parser = ResponseParser(template, prefix=prefix)
    events = list(parser.initial_events)
    for i in range(0, len(text), step):
        events += parser.feed(text[i : i + step])
    message, last = parser.finalize()
    return message, events + last


def test_cohere_thinking_and_json_tool_calls():
    assert parse_response(COHERE_OUT, COHERE, prefix="") == {
        "role": "assistant",
        "thinking": "I should call a tool.",
        "tool_calls": [
            {
                "type": "function",
                "function": {"name": "simple_tool", "arguments": {"temperature_format": "Celsius"}},
            }
        ],
    }


def test_gpt_oss_tool_call_pattern_with_capture_streams_byte_by_byte():
    text = (
        "<|channel|>analysis<|message|>Let me check.<|end|><|start|>assistant<|channel|>commentary "
        'to=functions.get_weather <|constrain|>json<|message|>{"city": "SF"}<|call|>'
    )
    expected = {
        "role": "assistant",
        "thinking": "Let me check.",
        "tool_calls": [
            {"type": "function", "function": {"name": "get_weather", "arguments": {"city": "SF"}}}
        ],
    }
    assert parse_response(text, GPT_OSS, prefix="") == expected
    assert _stream(GPT_OSS, text, 1)[0] == expected


def test_ernie_thinking_opens_at_the_start_of_the_response():
    text = "Hmm.\n</think>\n\n<response>\nHello!\n</response>\n</s>"
    assert parse_response(text, ERNIE, prefix="") == {
        "role": "assistant",
        "thinking": "Hmm.",
        "content": "Hello!",
    }


def test_qwen3_xml_arguments_and_prefix_inside_thinking():
    prefix = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n"
    parser = ResponseParser(QWEN3, prefix=prefix)
    assert parser.initial_events == [
        {"type": "region_open", "field": "thinking"},
        {"type": "region_chunk", "field": "thinking", "text": "\n", "dirty": False},
    ]
    events = parser.feed("ok</think><tool_call>\n<function=f>\n<parameter=n>\n7\n</parameter>\n")
    events += parser.feed("</function>\n</tool_call>")
    message, last = parser.finalize()
    assert message == {
        "role": "assistant",
        "thinking": "ok",
        "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"n": 7}}}],
    }
    assert [e["type"] for e in events] == [
        "region_chunk",
        "region_close",
        "region_open",
        "region_chunk",
        "region_chunk",
        "region_close",
    ]
    assert last == []


def test_gemma4_lax_json_and_inkling_joined_blocks():
    text = (
        '<|channel>thought\nhi<channel|><|tool_call>call:foo{a:1,b:<|"|>x, y<|"|>}<tool_call|>'
        "Done.<turn|>"
    )
    assert parse_response(text, GEMMA4, prefix="") == {
        "role": "assistant",
        "thinking": "hi",
        "tool_calls": [
            {"type": "function", "function": {"name": "foo", "arguments": {"a": 1, "b": "x, y"}}}
        ],
        "content": "Done.",
    }
    text = (
        "<|content_thinking|>A.<|end_message|><|message_model|><|content_thinking|> B.<|end_message|>"
        "<|message_model|><|content_text|>C.<|end_message|>"
    )
    assert parse_response(text, INKLING, prefix="<|message_model|>") == {
        "role": "assistant",
        "thinking": "A. B.",
        "content": "C.",
    }


def test_tools_cast_string_arguments_by_schema():
    message = parse_response(SET_ALARM_CALL, XML_STRING_ARGS, prefix="", tools=SET_ALARM_TOOLS)
    assert message["tool_calls"][0]["function"]["arguments"] == {
        "hour": 7,
        "enabled": True,
        "label": "wake up",
    }

    def set_alarm(hour: int, label: str | None = None):
        """
        Set an alarm.

        Args:
            hour: The hour.
            label: A label.
        """

    call = "<tool_call>\n<function=set_alarm>\n<parameter=hour>\n8\n</parameter>\n<parameter=label>\nnull\n</parameter>\n</tool_call>"
    message = parse_response(call, XML_STRING_ARGS, prefix="", tools=[set_alarm])
    assert message["tool_calls"][0]["function"]["arguments"] == {"hour": 8, "label": None}


def test_streamed_chunks_rebuild_the_text_and_every_chunking_agrees():
    text = '<think>abc</think>\n<tool_call>{"name": "f", "arguments": {}}</tool_call>tail<|im_end|>'
    whole = parse_response(text, SMOLLM, prefix="")
    assert whole == {
        "role": "assistant",
        "thinking": "abc",
        "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {}}}],
        "content": "tail",
    }
    for step in (1, 2, 5, 13):
        message, events = _stream(SMOLLM, text, step)
        assert message == whole
        chunks = "".join(
            e["text"] for e in events if e["type"] == "region_chunk" and e["field"] == "thinking"
        )
        assert chunks == "abc"


def test_held_back_literal_prefix_and_extending_close():
    template = {"start_anchor": "a", "fields": {"x": {"open": "<x>", "close": ["END", "ENDX"]}}}
    parser = ResponseParser(template, prefix="")
    assert [e["type"] for e in parser.feed("<x>hiEND")] == ["region_open", "region_chunk"]
    events = parser.feed(" more")
    assert events == [{"type": "region_close", "field": "x", "value": "hi"}]
    assert parser.finalize() == ({"x": "hi"}, [])
    with pytest.raises(RuntimeError):
        parser.feed("x")


@pytest.mark.parametrize(
    ("template", "message"),
    [
        ({"start_anchor": "a", "fields": {"x": {"open": "<x>", "join": ""}}}, "requires 'repeats'"),
        ({"version": 2, "start_anchor": "a", "fields": {"x": {}}}, "version"),
        ({"fields": {"x": {"open": "<x>"}}}, "start_anchor"),
        (
            {"start_anchor": "a", "fields": {"x": {"open": "<x>", "content": "yaml"}}},
            "unknown content parser",
        ),
        (
            {
                "start_anchor": "a",
                "fields": {"x": {"open": "<x>", "transform": {"v": "a {content}"}}},
            },
            "interpolation",
        ),
        ({"start_anchor": "a", "fields": {"x": {"open_pattern": "<(?P<n>x)>"}}}, "transform"),
        ({"start_anchor": "a", "fields": {"x": {"open_pattern": r"(a)\1"}}}, "not supported"),
        ({"start_anchor": "a", "fields": {"x": {"open_pattern": r"a(?=b)c"}}}, "only at the end"),
        ({"start_anchor": "a", "fields": {"x": {"open_pattern": r"(?<=a)b"}}}, "not supported"),
        ({"start_anchor": "a", "fields": {"x": {"open_pattern": r"a(?!b)"}}}, "not supported"),
        ({"start_anchor": "a", "fields": {"x": {"open_pattern": r"(?i)a"}}}, "flags"),
    ],
)
def test_bad_templates_are_refused_when_loaded(template, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        load_response_template(template)


def test_response_errors_are_value_errors():
    template = {
        "start_anchor": "a",
        "fields": {
            "x": {
                "open": "<x>",
                "close": "</x>",
                "content": "json",
                "transform": {"a": "{missing}"},
            }
        },
    }
    with pytest.raises(KeyError) as caught:
        parse_response("<x>{}</x>", template, prefix="")
    assert isinstance(caught.value, ValueError)
    with pytest.raises(ValueError, match="requires `?prefix|needs prefix"):
        parse_response("x", COHERE)
    with pytest.raises(ValueError, match="Required"):
        parse_response(
            "x",
            {"start_anchor": "a", "fields": {"x": {"open": "<x>", "optional": False}}},
            prefix="",
        )


def test_chat_template_reads_response_template_and_needs_a_tokenizer_for_ids(tmp_path):
    (tmp_path / "tokenizer_config.json").write_text(
        json.dumps({"chat_template": "{{ messages }}", "response_template": SMOLLM}),
        encoding="utf-8",
    )
    chat = ChatTemplate.from_pretrained(tmp_path)
    assert chat.response_template == SMOLLM
    assert chat.parse_response(["a<|im_end|>", "<think>t</think>b"], prefix="") == [
        {"role": "assistant", "content": "a"},
        {"role": "assistant", "thinking": "t", "content": "b"},
    ]
    with pytest.raises(ValueError, match="no tokenizer"):
        chat.parse_response([1, 2, 3], prefix="")
    with pytest.raises(ValueError, match="prefix"):
        chat.parse_response(["a", "b"], prefix=["x"])
    parser = chat.get_response_parser(prefix="<|im_start|>assistant\nSure, ")
    assert parser.initial_events[0] == {"type": "region_open", "field": "content"}
    # Without a response_template, one is inferred from the chat template; one that writes no
    # assistant turns gives nothing to infer from (transformers: NoResponseTemplateError).
    bare = ChatTemplate.from_string(
        "{% for m in messages if m.role == 'user' %}<u>{{ m.content }}</u>{% endfor %}"
        "{% if add_generation_prompt %}<a>{% endif %}"
    )
    assert bare.response_template_origin == "inferred"
    with pytest.raises(ValueError) as caught:
        bare.parse_response("x", prefix="")
    assert str(caught.value) == (
        "cannot infer a response template: the template does not write an assistant message's "
        "content after the user's"
    )


# hostile responses: linear time, bounded buffer, exact results ------------------------------


def test_unterminated_markers_repeated_stay_linear():
    text = "<|channel|>commentary to=functions.a " * 5_000  # the lazy .*? never finds <|message|>
    # (a backtracking search from each position would take minutes; the VM is one pass)
    assert parse_response(text, GPT_OSS, prefix="") == {"role": "assistant"}
    # ... and a pattern kept open over 200,000 characters is refused (pattern.MAX_PATTERN_WORK)
    with pytest.raises(ValueError) as caught:
        parse_response(text * 4, GPT_OSS, prefix="")
    assert str(caught.value) == (
        "the response keeps a marker's pattern matching over more than 200000 characters "
        "(a marker is at most 4096)"
    )


def test_huge_plain_response_and_many_tiny_feeds_keep_the_buffer_bounded():
    parser = ResponseParser(INKLING, prefix="")
    for _ in range(20_000):
        parser.feed("x" * 5)  # [^<]* keeps a thread alive: at most MAX_ANCHOR is held
        assert len(parser._buffer) - parser._pos <= MAX_ANCHOR + 5
    assert parser.finalize() == ({"role": "assistant"}, [])


def test_nested_json_and_unterminated_regions_fail_or_finish_exactly():
    deep = "<|START_ACTION|>" + "[" * 100_000 + "<|END_ACTION|>"
    with pytest.raises(ValueError, match="nested more than"):
        parse_response(deep, COHERE, prefix="")
    assert parse_response("<think>" * 50_000, SMOLLM, prefix="") == {
        "role": "assistant",
        "thinking": "<think>" * 49_999,
    }
    assert parse_response("</think" * 50_000, SMOLLM, prefix="") == {
        "role": "assistant",
        "content": "</think" * 50_000,
    }


def test_longer_than_max_string_is_refused():
    from minijinja_py.sandbox.limits import Limits

    with pytest.raises(ValueError, match="max_string"):
        parse_response("x" * 101, SMOLLM, prefix="", limits=Limits(max_string=100))


def test_pattern_matcher_agrees_with_backtracking_on_plain_searches():
    import re

    for source, text in [
        (r"<tool_call>\s*<function=(?P<name>\w+)>", "xx<tool_call>\n <function=get_w>"),
        (r"a.*?b|c", "xa c b"),
        (r"(a|ab)(c|bcd)(d*)", "abcd"),
        (r"\n?</response>", "hi\n</response>"),
    ]:
        mine, _ = Pattern(source, "t").search(text, 0, partial=False)
        theirs = re.compile(source, re.DOTALL).search(text)
        assert (mine.start, mine.end, mine.groups) == (
            theirs.start(),
            theirs.end(),
            theirs.groupdict(),
        )


_PIECES = [
    "<think>",
    "</think>",
    "<tool_call>",
    "</tool_call>",
    "<|im_end|>",
    "{",
    "}",
    "[",
    '"',
    ":",
    "<|channel|>",
    "commentary to=functions.f",
    "<|message|>",
    "<|end|>",
    "<|call|>",
    "\n",
    " ",
    "<function=g>",
    "<parameter=k>",
    "</parameter>",
    '<|"|>',
    "<|tool_call>call:h",
    "<tool_call|>",
    "<|content_text|>",
    "<|end_message|>",
    "<|START_ACTION|>",
    "<|END_ACTION|>",
    "a",
    "7",
    "\x01",
]


@given(
    pieces=st.lists(st.sampled_from(_PIECES), max_size=40),
    name=st.sampled_from(sorted(TEMPLATES)),
    step=st.integers(1, 9),
)
@settings(max_examples=300, deadline=None)
def test_any_response_parses_or_raises_value_error(pieces, name, step):
    text = "".join(pieces)
    template = TEMPLATES[name]
    outcomes = []
    for parse in (
        lambda: parse_response(text, template, prefix=""),
        lambda: _stream(template, text, step)[0],
        lambda: parse_response(text, template, prefix="", tools=SET_ALARM_TOOLS),
    ):
        try:
            outcomes.append(parse())
        except ValueError as error:
            outcomes.append(type(error))
    # Any chunking gives the one-shot result, but for one case that transformers shares: its
    # stream closes a `$` pattern before a newline that ends a chunk ($ holds there, as in re),
    # where the one-shot parse reads on (PREFILL: '<think>', '\n', '<think>' fed a character at
    # a time gives '<think>' streamed, '<think>\n<think>' at once, on both sides; the parity
    # tests hold the events to transformers').
    patterns = "".join(
        str(field.get(key) or "")
        for field in template["fields"].values()
        for key in ("open_pattern", "close_pattern")
    )
    cut_after_newline = any(text[i - 1] == "\n" for i in range(step, len(text), step))
    if not ("$" in patterns and cut_after_newline):
        assert outcomes[0] == outcomes[1]


def test_inferred_templates_kept_are_bounded_in_bytes(monkeypatch):
    # A source passed as chat_template= may be any text: what is kept of it is bounded.
    from minijinja_py.chat import kept

    monkeypatch.setattr(kept, "RESPONSES_BYTES", 16 << 10)
    source = (
        "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
    )
    chat = ChatTemplate.from_string(source)
    for index in range(40):
        other = source + "{# " + "x" * 1000 + str(index) + " #}"
        found = chat.inferred_response_template(chat_template=other)
        assert found.template["fields"]["content"] == {"content": "text", "close": "<|im_end|>"}
    assert chat.kept.responses.size <= 16 << 10
    assert 0 < len(chat.kept.responses) < 40


# A final lookahead: a call closes where the next call's opener begins, and that opener opens
# the next call (calls written one after another with nothing between).
_NEXT_OPENS = {
    "defaults": {"role": "assistant"},
    "start_anchor": "[/INST]",
    "fields": {
        "content": {"content": "text", "close": "</s>"},
        "tool_calls": {
            "open_pattern": r"\[TOOL_CALLS\](?P<name>\w+)\[ARGS\]",
            "close_pattern": r"(?=\[TOOL_CALLS\])|</s>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
    },
}


@pytest.mark.parametrize("step", [1, 2, 5, 1000])
def test_a_final_lookahead_closes_before_the_next_opener(step):
    text = 'Sure.[TOOL_CALLS]f[ARGS]{"a": 1}[TOOL_CALLS]g[ARGS]{"b": "[x]"}</s>'
    want = {
        "role": "assistant",
        "content": "Sure.",
        "tool_calls": [
            {"type": "function", "function": {"name": "f", "arguments": {"a": 1}}},
            {"type": "function", "function": {"name": "g", "arguments": {"b": "[x]"}}},
        ],
    }
    assert parse_response(text, _NEXT_OPENS, prefix="") == want
    assert _stream(_NEXT_OPENS, text, step)[0] == want


def test_a_lookahead_opener_keeps_what_it_looks_at():
    template = {
        "defaults": {"role": "assistant"},
        "start_anchor": "A:",
        "fields": {
            "content": {"content": "text", "close": "<end>"},
            "call": {"open_pattern": r"\A\s*(?=\{)", "close": "<end>", "content": "json"},
        },
    }
    assert parse_response(' {"a": 1}<end>', template, prefix="A:") == {
        "role": "assistant",
        "call": {"a": 1},
    }
    assert parse_response('so {"a": 1}<end>', template, prefix="A:") == {
        "role": "assistant",
        "content": 'so {"a": 1}',
    }


def test_markers_that_match_nothing_forever_are_refused():
    template = {
        "start_anchor": "A:",
        "fields": {
            "x": {"open_pattern": "(?=a)", "close_pattern": "(?=a)", "content": "text"},
            "content": {"content": "text"},
        },
    }
    with pytest.raises(ValueError, match="^the response_template's markers match the empty text"):
        parse_response("aaa", template, prefix="")
