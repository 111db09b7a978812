"""Attacks on the way back (issue 40): model output is untrusted input.  Responses built to make
a parser backtrack, hold text without end, nest without end or grow without bound, through the
response template inferred from a chat template and through a written one with patterns; each
ends in a bounded result or a ValueError, within the CPU bound of every attack."""

from __future__ import annotations

from .model import Attack, Ok

RESPONSES = "hostile-responses"

_CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
    "{% if m.reasoning_content %}<think>\n{{ m.reasoning_content }}\n</think>\n\n{% endif %}"
    "{{ m.content }}"
    "{% for c in m.tool_calls or [] %}<tool_call>\n{{ c.function | tojson }}\n</tool_call>"
    "{% endfor %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
_PREFIX = "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n"
# A written template whose call opener is a pattern with a lazy repeat (gpt-oss's shape).
_PATTERNED = {
    "start_anchor": "<|start|>assistant",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<\|channel\|>commentary to=functions\.(?P<name>\w+).*?<\|message\|>",
            "close": "<|call|>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
        },
        "content": {"close": "<|return|>"},
    },
}

# A written template whose calls are Python syntax, read by the `python` content parser (the
# list of calls itself: transforms are measured elsewhere).
_PYTHONIC_ANCHOR = "<|start_header_id|>assistant<|end_header_id|>\n\n"
_PYTHONIC = {
    "start_anchor": _PYTHONIC_ANCHOR,
    "fields": {
        "tool_calls": {
            "open": "<|python_tag|>",
            "close": "<|eom_id|>",
            "content": "python",
            "content_args": {"list": True},
        },
        "content": {"close": "<|python_tag|>"},
    },
}


def _outcome(parse) -> str:
    try:
        message = parse()
    except ValueError as error:
        return f"ValueError: {str(error)[:120]}"
    return "ok " + ", ".join(f"{key}={len(str(value))}" for key, value in sorted(message.items()))


def _inferred(response: str) -> str:
    from minijinja_py import ChatTemplate

    chat = ChatTemplate.from_string(_CHATML)
    return _outcome(lambda: chat.parse_response(response, prefix=_PREFIX))


def _patterned(response: str) -> str:
    from minijinja_py import ChatTemplate

    chat = ChatTemplate.from_string(_CHATML, response_template=_PATTERNED)
    return _outcome(lambda: chat.parse_response(response, prefix=""))


def _pythonic(response: str) -> str:
    from minijinja_py import ChatTemplate

    chat = ChatTemplate.from_string(_CHATML, response_template=_PYTHONIC)
    return _outcome(lambda: chat.parse_response(response, prefix=_PYTHONIC_ANCHOR))


def unterminated_think() -> str:
    return _inferred("<think>" + "x" * 5_000_000)


def many_unterminated_calls() -> str:
    return _inferred("<tool_call>{" * 200_000)


def deep_json_call() -> str:
    return _inferred("<tool_call>\n" + "[" * 200_000 + "]" * 200_000 + "\n</tool_call><|im_end|>")


def lazy_pattern_never_closed() -> str:
    return _patterned("<|channel|>commentary to=functions.a " * 50_000)


def markers_split_everywhere() -> str:
    return _inferred("<thi<tool_<|im_en" * 100_000)


def response_over_max_string() -> str:
    return _inferred("a" * 20_000_001)


def streamed_one_character_at_a_time() -> str:
    from minijinja_py import ChatTemplate

    chat = ChatTemplate.from_string(_CHATML)
    parser = chat.get_response_parser(prefix=_PREFIX)
    for char in "<tool_call" * 5_000:
        parser.feed(char)
    message, _ = parser.finalize()
    return "ok " + ", ".join(sorted(message))


def deep_python_calls() -> str:
    return _pythonic("<|python_tag|>[" + "f(a=[" * 200_000 + "<|eom_id|>")


def megabytes_of_python_calls() -> str:
    # Four megabytes of calls with a sentence in each: linear time, under the reader's item cap.
    note = "The forecast for the next days, with the hourly temperature and the wind. " * 2
    call = f"get_weather(city='Paris', days=3, note=\"{note}\"), "
    return _pythonic("<|python_tag|>[" + call * (4_000_000 // len(call)) + "]<|eom_id|>")


def dense_python_values() -> str:
    # Eight megabytes of the smallest values: refused at MAX_PYTHON_ITEMS, a fraction of a second.
    return _pythonic("<|python_tag|>[" + "1," * 4_000_000 + "]<|eom_id|>")


def _streamed(parser, pieces) -> str:
    """Feeds `pieces` and finalizes; says what came out and the most text the parser held at
    once: its buffer (at most 5 x MAX_ANCHOR plus one feed) and the strings of its open region
    (a block per 1,024 pieces: about the region's own text, however small the feeds)."""
    held = strings = 0
    try:
        for piece in pieces:
            parser.feed(piece)
            held = max(held, len(parser._buffer))
            strings = max(strings, len(parser._body) + len(parser._pieces))
        message, _ = parser.finalize()
    except ValueError as error:
        return f"ValueError: {str(error)[:120]}"
    fields = ", ".join(f"{key}={len(str(value))}" for key, value in sorted(message.items()))
    return f"ok {fields}; buffer <= {held}, region strings <= {strings}"


def streamed_field_never_closed() -> str:
    from minijinja_py import ChatTemplate

    parser = ChatTemplate.from_string(_CHATML).get_response_parser(prefix=_PREFIX)
    return _streamed(parser, ["<think>", *["xy"] * 20_000])


def streamed_huge_chunk_over_max_string() -> str:
    from minijinja_py import ChatTemplate

    parser = ChatTemplate.from_string(_CHATML).get_response_parser(prefix=_PREFIX)
    return _streamed(parser, ["a" * 20_000_001])


def streamed_tiny_feeds_over_max_string() -> str:
    from minijinja_py.chat.responses import ResponseParser
    from minijinja_py.sandbox.limits import Limits

    spec = {"start_anchor": "S", "fields": {"content": {"close": "<end>"}}}
    parser = ResponseParser(spec, "S", limits=Limits(max_string=30_000))
    return _streamed(parser, ["<"] * 40_000)


# Two openers of 4,096 characters (MAX_ANCHOR), the first held back as a partial marker while
# the text grows: the second's partial search once tried every start of the held text again at
# each feed (0.8 ms of CPU a character, 4,096 string slices); each start is tried once now.
_LONG_OPENERS = {
    "start_anchor": "S",
    "fields": {
        "reasoning_content": {"open": "c" + "d" * 4095, "close": "</r>"},
        "tool_calls": {"open": "e" * 4096, "close": "</t>"},
        "content": {"close": "<end>"},
    },
}


def streamed_long_partial_marker() -> str:
    from minijinja_py.chat.responses import ResponseParser

    parser = ResponseParser(_LONG_OPENERS, "S")
    return _streamed(parser, ["c", *["d"] * 20_000])


def streamed_empty_feeds_on_a_held_marker() -> str:
    from minijinja_py import ChatTemplate

    parser = ChatTemplate.from_string(_CHATML).get_response_parser(prefix=_PREFIX)
    return _streamed(parser, ["Hi<|im_en", *[""] * 30_000, "d|>"])


def _fn(name: str) -> str:
    return f"{__name__}:{name}"


RESPONSE_ATTACKS = [
    Attack(RESPONSES, "unterminated-think", call=_fn("unterminated_think"),
           expect=Ok("ok reasoning_content=5000000, role=9")),
    Attack(RESPONSES, "many-unterminated-calls", call=_fn("many_unterminated_calls"),
           expect=Ok("ValueError: json: the region is not valid JSON (JSON nested more than 100 "
                     "levels deep); region: '{<tool_call>{<tool_call>{<tool_call")),
    Attack(RESPONSES, "deep-json-call", call=_fn("deep_json_call"),
           expect=Ok("ValueError: json: the region is not valid JSON (JSON nested more than 100 "
                     "levels deep); region: '\\n[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[")),
    Attack(RESPONSES, "lazy-pattern-never-closed", call=_fn("lazy_pattern_never_closed"),
           expect=Ok("ValueError: the response keeps a marker's pattern matching over more than "
                     "200000 characters (a marker is at most 4096)")),
    Attack(RESPONSES, "markers-split-everywhere", call=_fn("markers_split_everywhere"),
           expect=Ok("ok content=1700000, role=9")),
    Attack(RESPONSES, "response-over-max-string", call=_fn("response_over_max_string"),
           expect=Ok("ValueError: the response (with its prefix) is longer than max_string "
                     "(10000000 characters)")),
    Attack(RESPONSES, "streamed-one-character-at-a-time",
           call=_fn("streamed_one_character_at_a_time"), expect=Ok("ok content, role")),
    Attack(RESPONSES, "deep-python-calls", call=_fn("deep_python_calls"),
           expect=Ok("ValueError: python: nested more than 100 levels deep at position 250: "
                     "'[f(a=[f(a=[f(a=[f(a=[f(a=[f(a=[f(a=[f(a='")),
    Attack(RESPONSES, "megabytes-of-python-calls", call=_fn("megabytes_of_python_calls"),
           expect=Ok("ok tool_calls=4749924")),
    Attack(RESPONSES, "dense-python-values", call=_fn("dense_python_values"),
           expect=Ok("ValueError: python: the region holds more than 200000 values, escapes and "
                     "brackets at position 399999: '1,1,1,1,1,1,1,1,1,1,1,1,1,1,")),
    Attack(RESPONSES, "streamed-field-never-closed", call=_fn("streamed_field_never_closed"),
           expect=Ok("ok reasoning_content=40000, role=9; buffer <= 16383, region strings <= 1041")),
    Attack(RESPONSES, "streamed-huge-chunk-over-max-string",
           call=_fn("streamed_huge_chunk_over_max_string"),
           expect=Ok("ValueError: the response (with its prefix) is longer than max_string "
                     "(10000000 characters)")),
    Attack(RESPONSES, "streamed-tiny-feeds-over-max-string",
           call=_fn("streamed_tiny_feeds_over_max_string"),
           expect=Ok("ValueError: the response (with its prefix) is longer than max_string "
                     "(30000 characters)")),
    Attack(RESPONSES, "streamed-long-partial-marker", call=_fn("streamed_long_partial_marker"),
           expect=Ok("ok reasoning_content=15905; buffer <= 16384, region strings <= 1037")),
    Attack(RESPONSES, "streamed-empty-feeds-on-a-held-marker",
           call=_fn("streamed_empty_feeds_on_a_held_marker"),
           expect=Ok("ok content=2, role=9; buffer <= 12, region strings <= 1")),
]
