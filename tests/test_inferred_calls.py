"""The way back for the forms in which templates write tool calls: a small chat template of each
form, the response template inferred from it, and a generation written by hand (not rendered)
parsed into exactly the message it means."""

from __future__ import annotations

import pytest

from minijinja_py import ChatTemplate
from minijinja_py.chat.responses import parse_response
from minijinja_py.chat.responses.inferred import infer_response_template

_TURNS = (
    "{%- for m in messages %}<|{{ m.role }}|>"
    "{%- if m.tool_calls %}CALLS{% else %}{{ m.content }}{% endif %}<|end|>{% endfor %}"
    "{%- if add_generation_prompt %}<|assistant|>{% endif %}"
)


def _inferred(calls: str, turns: str = _TURNS):
    chat = ChatTemplate.from_string(turns.replace("CALLS", calls))

    def render(messages, prompt, tools):
        return chat.render(messages, tools=tools, add_generation_prompt=prompt)

    return infer_response_template(render)


def _call(name, arguments):
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def _parsed(inferred, text):
    return parse_response(text, inferred.template, prefix="<|user|>Hi<|end|><|assistant|>")


def test_json_calls_that_open_the_turn_with_no_marker():
    inferred = _inferred(
        "{% for c in m.tool_calls %}"
        '{{ {"name": c.function.name, "parameters": c.function.arguments} | tojson }}'
        "{% endfor %}"
    )
    assert inferred.template["fields"]["tool_calls"]["open_pattern"] == ('\\A\\s*(?=\\{\\s*"name")')
    text = '{"name": "f", "parameters": {"a": 1}}{"name": "g", "parameters": {}}<|end|>'
    assert _parsed(inferred, text) == {
        "role": "assistant",
        "tool_calls": [_call("f", {"a": 1}), _call("g", {})],
    }
    # (JSON the reply only quotes is the reply's)
    assert _parsed(inferred, 'Write {"name": "x"}.<|end|>') == {
        "role": "assistant",
        "content": 'Write {"name": "x"}.',
    }


_PYTHONIC = (
    "{% for c in m.tool_calls %}{{ c.function.name }}("
    "{% for k, v in c.function.arguments.items() %}{{ k }}={{ v | tojson }}"
    "{% if not loop.last %}, {% endif %}{% endfor %})"
    "{% if not loop.last %}, {% endif %}{% endfor %}"
)


def test_pythonic_calls_in_a_list_that_opens_the_turn():
    inferred = _inferred("[" + _PYTHONIC + "]")
    text = '[f(city="Paris", days=3), g(exact=true)]<|end|>'
    assert _parsed(inferred, text) == {
        "role": "assistant",
        "tool_calls": [_call("f", {"city": "Paris", "days": 3}), _call("g", {"exact": True})],
    }
    assert _parsed(inferred, "Paris (France) is sunny.<|end|>") == {
        "role": "assistant",
        "content": "Paris (France) is sunny.",
    }


def test_pythonic_calls_in_a_code_fence_between_markers():
    inferred = _inferred(
        "<calls>\n```python\n"
        + _PYTHONIC.replace(", {% endif %}{% endfor %}", "\n{% endif %}{% endfor %}", 1)
        + "\n```\n</calls>"
    )
    assert inferred.template["fields"]["tool_calls"]["open"] == "<calls>"
    text = 'Sure.<calls>\n```python\nf(a="x")\ng(b=2)\n```\n</calls><|end|>'
    assert _parsed(inferred, text) == {
        "role": "assistant",
        "content": "Sure.",
        "tool_calls": [_call("f", {"a": "x"}), _call("g", {"b": 2})],
    }


def test_strings_between_the_templates_own_delimiters():
    inferred = _inferred(
        "{% for c in m.tool_calls %}<call>call:{{ c.function.name }}{{ '{' }}"
        "{% for k, v in c.function.arguments.items() %}{{ k }}:"
        "{% if v is string %}<q>{{ v }}<q>{% else %}{{ v | tojson }}{% endif %}"
        "{% if not loop.last %},{% endif %}{% endfor %}}<end_call>{% endfor %}"
    )
    text = '<call>call:f{city:<q>Paris, "FR"<q>,days:3}<end_call><|end|>'
    assert _parsed(inferred, text) == {
        "role": "assistant",
        "tool_calls": [_call("f", {"city": 'Paris, "FR"', "days": 3})],
    }


def test_calls_that_only_the_next_calls_opener_ends():
    inferred = _inferred(
        "{% for c in m.tool_calls %}[CALL]{{ c.function.name }}[ARGS]"
        "{{ c.function.arguments | tojson }}{% endfor %}",
        _TURNS.replace("<|end|>{% endfor %}", "</s>{% endfor %}"),
    )
    assert inferred.template["fields"]["tool_calls"]["close_pattern"] == ("(?=\\[CALL\\])|</s>")
    text = '[CALL]f[ARGS]{"a": "[x]"}[CALL]g[ARGS]{}</s>'
    assert _parsed(inferred, text) == {
        "role": "assistant",
        "tool_calls": [_call("f", {"a": "[x]"}), _call("g", {})],
    }


def test_a_template_that_writes_one_call_per_message_says_so():
    inferred = _inferred(
        "{% set c = m.tool_calls[0] %}<call>{{ c.function.name }} "
        "{{ c.function.arguments | tojson }}</call>"
    )
    assert (
        "tool_calls: the template writes one call per message (it refuses or drops a second), "
        "so only one comes back"
    ) in inferred.lost
    assert _parsed(inferred, '<call>f {"a": 1}</call><|end|>') == {
        "role": "assistant",
        "tool_calls": [_call("f", {"a": 1})],
    }


def test_a_replys_opener_that_a_calls_opener_also_reads():
    inferred = _inferred(
        "{% for c in m.tool_calls %}>>>{{ c.function.name }}\n"
        "{{ c.function.arguments | tojson }}{% endfor %}",
        _TURNS.replace("{{ m.content }}", ">>>all\n{{ m.content }}"),
    )
    text = '>>>all\nLet me look.>>>f\n{"a": 1}<|end|>'
    assert _parsed(inferred, text) == {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [_call("f", {"a": 1})],
    }


@pytest.mark.parametrize("step", [1, 3, 100])
def test_streamed_calls_that_open_the_turn_read_alike(step):
    from minijinja_py.chat.responses.stream import ResponseParser

    inferred = _inferred("[" + _PYTHONIC + "]")
    text = '[f(city="Paris", days=3), g(exact=true)]<|end|>'
    parser = ResponseParser(inferred.template, prefix="<|assistant|>")
    for at in range(0, len(text), step):
        parser.feed(text[at : at + step])
    assert parser.finalize()[0] == _parsed(inferred, text)


def test_calls_named_by_their_key_in_python_syntax_opening_the_turn():
    inferred = _inferred(
        "[{% for c in m.tool_calls %}{{ {c.function.name: c.function.arguments} }}"
        "{% if not loop.last %}, {% endif %}{% endfor %}]"
    )
    text = "[{'f': {'city': 'Paris', 'ok': True}}, {'g': {}}]<|end|>"
    assert _parsed(inferred, text) == {
        "role": "assistant",
        "tool_calls": [_call("f", {"city": "Paris", "ok": True}), _call("g", {})],
    }


# Turns: where a reply starts and ends when the template writes it unusually ------------------


def _inferred_from(source: str):
    chat = ChatTemplate.from_string(source)

    def render(messages, prompt, tools):
        return chat.render(messages, tools=tools, add_generation_prompt=prompt)

    return infer_response_template(render), render


def test_past_turns_written_with_another_header_than_the_prompts():
    # (the prompt's header, written after every conversation, names who the reply is for)
    inferred, render = _inferred_from(
        "{% for m in messages %}Source: {{ m.role }}\n\n {{ m.content }} <step> {% endfor %}"
        "Source: assistant\nDestination: user\n\n "
    )
    prompt = render([{"role": "user", "content": "Hi"}], True, None)
    assert parse_response("It is sunny. <step>", inferred.template, prefix=prompt) == {
        "role": "assistant",
        "content": "It is sunny.",
    }


def test_a_reply_read_from_where_the_prompt_ends():
    inferred, render = _inferred_from(
        "{% for m in messages %}{{ m.role }}: {{ m.content }}<eot>{% endfor %}"
        "{% if add_generation_prompt %}Your answer, please.{% endif %}"
    )
    assert inferred.template["start_anchor_pattern"] == "\\Z"
    assert inferred.turn_header == "<eot>assistant:"
    prompt = render([{"role": "user", "content": "Hi"}], True, None)
    assert parse_response("Sunny.<eot>", inferred.template, prefix=prompt) == {
        "role": "assistant",
        "content": "Sunny.",
    }


def test_a_template_that_drops_the_last_assistant_message():
    inferred, render = _inferred_from(
        "{% for m in messages %}{% if not (loop.last and m.role == 'assistant') %}"
        "{{ m.role }}: {{ m.content }}<eot>{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}assistant:{% endif %}"
    )
    assert inferred.needs_follow_up
    prompt = render([{"role": "user", "content": "Hi"}], True, None)
    assert parse_response(" Sunny.<eot>", inferred.template, prefix=prompt) == {
        "role": "assistant",
        "content": "Sunny.",
    }


def test_a_turn_ends_at_the_first_end_marker_after_its_own_text():
    from minijinja_py.chat.responses.inferred import through_turn_end

    text = "Sunny.<end><sys>Answer briefly.<end>"
    assert through_turn_end(text, ["<end>"], ["Sunny."]) == "Sunny.<end>"
    assert through_turn_end(text, ["<stop>"], ["Sunny."]) == text


def test_what_the_prompt_writes_after_the_header_is_not_the_reply():
    # (text after the header: part of the header; an opening tag: the reasoning it opens)
    inferred, render = _inferred_from(
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}<eot>{% endfor %}"
        "{% if add_generation_prompt %}<assistant>[SEP]{% endif %}"
    )
    assert inferred.template["start_anchor"] == ["<assistant>", "<assistant>[SEP]"]
    prompt = render([{"role": "user", "content": "Hi"}], True, None)
    assert parse_response("Sunny.<eot>", inferred.template, prefix=prompt) == {
        "role": "assistant",
        "content": "Sunny.",
    }
    inferred, render = _inferred_from(
        "{% for m in messages %}<{{ m.role }}>{{ m.content }}<eot>{% endfor %}"
        "{% if add_generation_prompt %}<assistant><think>\n{% endif %}"
    )
    prompt = render([{"role": "user", "content": "Hi"}], True, None)
    assert parse_response("Look.</think>Sunny.<eot>", inferred.template, prefix=prompt) == {
        "role": "assistant",
        "reasoning_content": "Look.",
        "content": "Sunny.",
    }


def test_calls_that_open_a_turn_no_marker_ends():
    # (no end-of-turn marker after a reply or a call: the calls run to the end of the text)
    inferred, render = _inferred_from(
        "{% for m in messages %}{{ m.role }}: {% if m.tool_calls %}"
        "{% for c in m.tool_calls %}{{ {'name': c.function.name, 'arguments': c.function.arguments}"
        " | tojson }}{% endfor %}{% else %}{{ m.content }}{% endif %}\n\n{% endfor %}"
        "{% if add_generation_prompt %}assistant: {% endif %}"
    )
    assert "close" not in inferred.template["fields"]["tool_calls"]
    prompt = render([{"role": "user", "content": "Hi"}], True, None)
    text = '{"name": "f", "arguments": {"a": 1}}'
    assert parse_response(text, inferred.template, prefix=prompt) == {
        "role": "assistant",
        "tool_calls": [_call("f", {"a": 1})],
    }
