"""ChatTemplate.render_with_provenance: chat sources and assistant spans."""

from __future__ import annotations

from minijinja_py import ChatTemplate
from minijinja_py.chat.spans.conventions import adjust_spans

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
MESSAGES = [
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello!"},
    {"role": "user", "content": "Bye"},
    {"role": "assistant", "content": ""},
]


# DeepSeek V3's shape: the header written in one expression with the reply, a prompt that
# adds "<think>\n" to it.
DEEPSEEK = (
    "{% for m in messages %}{% if m.role == 'user' %}<｜User｜>{{ m.content }}"
    "{% else %}{{ '<｜Assistant｜>' + m.content + '<｜end▁of▁sentence｜>' }}{% endif %}"
    "{% endfor %}{% if add_generation_prompt %}<｜Assistant｜><think>\n{% endif %}"
)


def _span_texts(result, spans=None):
    found = result.assistant_spans if spans is None else spans
    return [result.text[start:end] for start, end in found]


def test_sources_are_named_for_the_chat_caller():
    chat = ChatTemplate.from_string(
        "{{ bos_token }}{{ tools[0].name }}:{{ messages[0].content }}{{ day }}",
        {"bos_token": "<s>"},
    )
    result = chat.render_with_provenance(MESSAGES, tools=[{"name": "f"}], day="Mon")
    assert result.text == "<s>f:HiMon"
    assert [result.sources_at(i) for i in range(len(result.text))] == [
        [],
        [],
        [],
        [("tool", 0)],
        [],
        [("message", 0, "content")],
        [("message", 0, "content")],
        [("keyword", "day")],
        [("keyword", "day")],
        [("keyword", "day")],
    ]


def test_spans_are_inferred_from_the_generation_prompt_through_the_end_marker():
    result = ChatTemplate.from_string(CHATML).render_with_provenance(MESSAGES)
    assert result.assistant_rule == "inferred"
    assert (result.turn_texts.generation_prompt, result.turn_texts.end_of_turn) == (
        "<|im_start|>assistant\n",
        "<|im_end|>",
    )
    assert (result.turn_texts.line_end, result.turn_texts.past_line_end) == ("\n", "\n")
    assert _span_texts(result) == [
        "Hello!<|im_end|>\n",
        "<|im_end|>\n",  # an empty turn: between its generation prompt and its marker
    ]


def test_a_turn_takes_the_line_end_the_template_writes_after_it_where_it_writes_one():
    # Olmo-like: a past turn ends its line after the EOS token, the last one does not
    source = (
        "{% for m in messages %}<|{{ m.role }}|>\n{{ m.content }}"
        "{% if m.role == 'assistant' %}</s>{% if not loop.last %}{{ '\\n' }}{% endif %}"
        "{% else %}{{ '\\n' }}{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
    )
    result = ChatTemplate.from_string(source).render_with_provenance(
        MESSAGES[:3] + [{"role": "assistant", "content": "Bye"}]
    )
    assert (result.turn_texts.line_end, result.turn_texts.past_line_end) == ("", "\n")
    assert _span_texts(result) == ["Hello!</s>\n", "Bye</s>"]


def test_whitespace_the_next_turn_begins_with_stays_outside():
    # Mistral-like: " [INST]" opens every user turn, the first one too
    mistral = (
        "<s>{% for m in messages %}{% if m.role == 'user' %} [INST] {{ m.content }} [/INST]"
        "{% else %}{{ m.content }}</s>{% endif %}{% endfor %}"
    )
    # GLM-like: a turn ends with the next turn's header, whose content line starts with "\n"
    glm = (
        "{% for m in messages %}{% if m.role == 'user' %}{% if loop.first %}<|user|>{% endif %}"
        "\n{{ m.content }}{% else %}<|assistant|>\n{{ m.content }}<|user|>{% endif %}"
        "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
    )
    messages = MESSAGES[:3]
    spans = {}
    for name, source in (("mistral", mistral), ("glm", glm)):
        result = ChatTemplate.from_string(source).render_with_provenance(messages)
        spans[name] = _span_texts(result)
    assert spans == {"mistral": ["Hello!</s>"], "glm": ["Hello!<|user|>"]}


def test_a_prompt_that_goes_on_past_the_role_header_is_the_start_of_the_reply():
    # Qwen 3.5-like: the generation prompt opens the reasoning, past turns write it closed
    source = (
        "{% for m in messages %}<|im_start|>{{ m.role }}\n"
        "{% if m.role == 'assistant' %}<think>\n\n</think>\n\n{% endif %}"
        "{{ m.content }}<|im_end|>\n{% endfor %}"
        "{% if add_generation_prompt %}<|im_start|>assistant\n<think>\n{% endif %}"
    )
    result = ChatTemplate.from_string(source).render_with_provenance(MESSAGES)
    assert result.turn_texts.generation_prompt == "<|im_start|>assistant\n<think>\n"
    assert _span_texts(result) == [
        "<think>\n\n</think>\n\nHello!<|im_end|>\n",
        "<think>\n\n</think>\n\n<|im_end|>\n",
    ]


def test_a_prompt_the_user_turn_writes_is_read_after_its_marker():
    # Phi 4-like: the user turn writes the assistant's header; tool turns are dropped, so the
    # turn after one has no header of its own and must not reach back into the turn before
    source = (
        "{% for m in messages %}{% if m.role == 'user' %}"
        "<|im_start|>user<|im_sep|>{{ m.content }}<|im_end|><|im_start|>assistant<|im_sep|>"
        "{% elif m.role == 'assistant' %}{{ m.content }}<|im_end|>{% endif %}{% endfor %}"
    )
    messages = [
        {"role": "user", "content": "Search"},
        {"role": "assistant", "content": ""},
        {"role": "tool", "content": "found"},
        {"role": "assistant", "content": "Found it."},
    ]
    result = ChatTemplate.from_string(source).render_with_provenance(messages)
    assert (
        result.turn_texts.generation_prompt,
        result.turn_texts.end_of_turn,
        result.turn_texts.past_end_of_turn,
    ) == (
        "<|im_start|>assistant<|im_sep|>",
        "<|im_end|>",
        "",
    )
    assert _span_texts(result) == [
        "<|im_end|>",
        "Found it.<|im_end|>",
    ]


def test_a_past_turn_ends_with_the_marker_a_user_turn_ends_with():
    # gpt-oss-like: the last assistant turn ends with <|return|>, every other turn with <|end|>
    source = (
        "{% for m in messages %}<|start|>{{ m.role }}<|message|>{{ m.content }}"
        "{% if m.role == 'assistant' and loop.last %}<|return|>{% else %}<|end|>{% endif %}"
        "{% endfor %}{% if add_generation_prompt %}<|start|>assistant{% endif %}"
    )
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Bye"},
        {"role": "assistant", "content": "See you"},
    ]
    result = ChatTemplate.from_string(source).render_with_provenance(messages)
    assert (result.turn_texts.end_of_turn, result.turn_texts.past_end_of_turn) == (
        "<|return|>",
        "<|end|>",
    )
    assert _span_texts(result, result.rule_spans) == [
        "<|message|>Hello<|end|>",
        "<|message|>See you<|return|>",
    ]
    # (the header of gpt-oss's family is the turn's: its model writes it between messages)
    assert _span_texts(result) == [
        "<|start|>assistant<|message|>Hello<|end|>",
        "<|start|>assistant<|message|>See you<|return|>",
    ]


def test_generation_blocks_win_over_the_rule():
    source = CHATML.replace(
        "{{ m.content }}<|im_end|>",
        "{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}"
        "{% else %}{{ m.content }}{% endif %}<|im_end|>",
    )
    result = ChatTemplate.from_string(source).render_with_provenance(MESSAGES)
    assert result.assistant_rule == "generation"
    assert _span_texts(result) == ["Hello!", ""]


_CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
}

# A tool call, its result, then the reply.
_CALL_THEN_REPLY = [
    {"role": "user", "content": "Weather?"},
    {"role": "assistant", "content": "", "tool_calls": [_CALL]},
    {"role": "tool", "content": "sunny"},
    {"role": "assistant", "content": "Sunny."},
]


def test_a_tool_call_turn_ends_with_the_call_end_the_template_writes():
    # gpt-oss-like: a call ends with <|call|>, and the tool result's header writes the call's
    # name again (the tool turn's, not the assistant's)
    source = (
        "{% for m in messages %}{% if m.role == 'assistant' and m.tool_calls %}"
        "{% set call = m.tool_calls[0].function %}"
        "<|start|>assistant to={{ call.name }}<|message|>{{ call.arguments | tojson }}<|call|>"
        "{% elif m.role == 'tool' %}<|start|>{{ messages[loop.index0 - 1].tool_calls[0].function.name }}"
        " to=assistant<|message|>{{ m.content }}<|end|>"
        "{% else %}<|start|>{{ m.role }}<|message|>{{ m.content }}<|end|>{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}<|start|>assistant{% endif %}"
    )
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": [_CALL]},
        {"role": "tool", "content": "sunny"},
    ]
    result = ChatTemplate.from_string(source).render_with_provenance(messages)
    assert _span_texts(result, result.rule_spans) == [
        ' to=get_weather<|message|>{"city": "Paris"}<|call|>'
    ]
    assert _span_texts(result) == [
        '<|start|>assistant to=get_weather<|message|>{"city": "Paris"}<|call|>'
    ]


def test_the_family_header_convention_takes_deepseeks_header_and_leaves_chatmls():
    result = ChatTemplate.from_string(DEEPSEEK).render_with_provenance(MESSAGES[:2])
    assert _span_texts(result) == ["<｜Assistant｜>Hello!<｜end▁of▁sentence｜>"]
    assert _span_texts(result, result.rule_spans) == ["Hello!<｜end▁of▁sentence｜>"]
    chatml = ChatTemplate.from_string(CHATML).render_with_provenance(MESSAGES[:2])
    assert _span_texts(chatml) == _span_texts(chatml, chatml.rule_spans) == ["Hello!<|im_end|>\n"]


def test_the_family_header_convention_takes_qwen_2_5s_newline_known_by_its_system_prompt():
    # Qwen 2.5 writes Qwen 3's ChatML header; TRL tags its newline as the turn's, and the
    # family is told by the default system prompt its template writes
    qwen_2_5 = (
        "{% if messages[0].role != 'system' %}<|im_start|>system\nYou are Qwen, created by "
        "Alibaba Cloud. You are a helpful assistant.<|im_end|>\n{% endif %}" + CHATML
    )
    result = ChatTemplate.from_string(qwen_2_5).render_with_provenance(MESSAGES[:2])
    assert result.turn_texts.opening.startswith("<|im_start|>system\nYou are Qwen, created")
    assert _span_texts(result) == ["\nHello!<|im_end|>\n"]
    assert _span_texts(result, result.rule_spans) == ["Hello!<|im_end|>\n"]
    with_system = [{"role": "system", "content": "Be brief."}, *MESSAGES[:2]]
    result = ChatTemplate.from_string(qwen_2_5).render_with_provenance(with_system)
    assert _span_texts(result) == ["\nHello!<|im_end|>\n"]  # (read off the probes)


def test_the_final_eos_is_the_last_assistant_turns_by_default():
    # The model writes it to stop (TRL's Phi 3 tags); after a user turn it is nobody's
    chat = ChatTemplate.from_string(CHATML + "{{ eos_token }}", {"eos_token": "</s>"})
    result = chat.render_with_provenance(MESSAGES[:2])
    assert result.eos_token == "</s>"
    assert _span_texts(result) == ["Hello!<|im_end|>\n</s>"]
    assert _span_texts(result, result.rule_spans) == ["Hello!<|im_end|>\n"]
    assert _span_texts(result, adjust_spans(result, final_eos=False)) == ["Hello!<|im_end|>\n"]
    result = chat.render_with_provenance(MESSAGES[:3])
    assert _span_texts(result) == ["Hello!<|im_end|>\n"]


def test_an_empty_past_turn_that_writes_less_of_the_header_has_its_span():
    # DeepSeek V3: the prompt is "<｜Assistant｜><think>\n"; an empty past turn writes the
    # header without "<think>", the marker right after it
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "Still there?"},
    ]
    result = ChatTemplate.from_string(DEEPSEEK).render_with_provenance(messages)
    assert _span_texts(result, result.rule_spans) == ["<｜end▁of▁sentence｜>"]
    assert _span_texts(result) == ["<｜Assistant｜><｜end▁of▁sentence｜>"]


def test_a_tool_call_turn_without_a_role_header_starts_with_the_call_opening():
    # Mistral-like: no generation prompt; a call turn opens with " [TOOL_CALLS] [" (the space
    # is the reply's too: the model writes it after the prompt's " [/INST]", as TRL's LLaVA-NeXT
    # tags have it; so is the one after " [/TOOL_RESULTS]")
    source = (
        "<s>{% for m in messages %}{% if m.role == 'user' %} [INST] {{ m.content }} [/INST]"
        "{% elif m.tool_calls %} [TOOL_CALLS] {{ m.tool_calls | map(attribute='function')"
        " | list | tojson }} </s>{% elif m.role == 'tool' %} [TOOL_RESULTS] {{ m.content }}"
        " [/TOOL_RESULTS]{% else %} {{ m.content }} </s>{% endif %}{% endfor %}"
    )
    result = ChatTemplate.from_string(source).render_with_provenance(_CALL_THEN_REPLY)
    assert result.turn_texts.call_start == '[TOOL_CALLS] [{"name": "'
    assert _span_texts(result) == [
        ' [TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}] </s>',
        " Sunny. </s>",
    ]


def test_an_empty_turn_without_a_role_header_is_its_marker():
    # Orion-like: the user turn writes "Assistant: </s>" itself, an empty reply only its EOS
    source = (
        "{% for m in messages %}{% if m.role == 'user' %}Human: {{ m.content }}\n\n"
        "Assistant: </s>{% else %}{{ m.content }}</s>{% endif %}{% endfor %}"
    )
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "There?"},
        {"role": "assistant", "content": "Yes."},
    ]
    result = ChatTemplate.from_string(source).render_with_provenance(messages)
    assert (result.turn_texts.generation_prompt, result.turn_texts.past_end_of_turn) == (
        "",
        "Assistant: </s>",
    )
    spans = result.assistant_spans
    assert [(start, result.text[start:end]) for start, end in spans] == [
        (26, "</s>"),  # the second EOS: the first is the user turn's
        (60, "Yes.</s>"),
    ]


def test_a_reply_written_after_the_tool_results_it_holds_is_the_turns():
    # Gemma 4-like: a tool-calling turn holds its results and writes its text after them; the
    # result repeats the call's id, which stays the tool turn's
    source = (
        "{% for m in messages %}{% if m.role == 'user' %}<user>{{ m.content }}<end>\n"
        "{% elif m.role == 'assistant' %}"
        "{% if loop.first or messages[loop.index0 - 1].role != 'tool' %}<model>{% endif %}"
        "{% for c in m.tool_calls or [] %}"
        "<call>{{ c.function.name }}{{ c.function.arguments | tojson }}</call>{% endfor %}"
        "{% if m.tool_calls %}{% for r in messages[loop.index0 + 1:] if r.role == 'tool' %}"
        "<result id={{ m.tool_calls[0].id }}>{{ r.content }}</result>{% endfor %}{% endif %}"
        "{{ m.content }}{% if not m.tool_calls %}<end>\n{% endif %}{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}<model>{% endif %}"
    )
    messages = [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "Checking.", "tool_calls": [_CALL]},
        {"role": "tool", "content": "sunny"},
        {"role": "assistant", "content": "Sunny."},
    ]
    result = ChatTemplate.from_string(source).render_with_provenance(messages)
    assert result.text == (
        '<user>Weather?<end>\n<model><call>get_weather{"city": "Paris"}</call>'
        "<result id=call_1>sunny</result>Checking.Sunny.<end>\n"
    )
    assert _span_texts(result) == [
        '<call>get_weather{"city": "Paris"}</call>',
        "Checking.",
        "Sunny.<end>\n",
    ]


def test_a_template_that_prints_only_typed_content_is_probed_with_typed_content():
    # Idefics-like: string contents print nothing, so the probes retry with typed ones
    source = (
        "{% for m in messages %}{{ m.role | capitalize }}:"
        "{% for part in m.content if part is mapping and part.type == 'text' %}"
        " {{ part.text }}{% endfor %}<end_of_utterance>\n{% endfor %}"
        "{% if add_generation_prompt %}Assistant:{% endif %}"
    )
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "What is this?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "A cat."}]},
    ]
    result = ChatTemplate.from_string(source).render_with_provenance(messages)
    assert (result.turn_texts.generation_prompt, result.turn_texts.end_of_turn) == (
        "Assistant:",
        "<end_of_utterance>",
    )
    assert _span_texts(result) == [" A cat.<end_of_utterance>\n"]


TOOLS_TEMPLATE = (
    "{% for t in tools %}{{ t|tojson }}|{{ t.function.name }}|"
    "{% for k, v in t.function.parameters.items() %}{{ k }}={{ v }};{% endfor %}\n{% endfor %}"
    "{{ messages[0].content }}"
)


def _tool(name, parameters):
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


def test_traced_tools_kept_between_calls_are_those_of_the_call():
    kept = ChatTemplate.from_string(TOOLS_TEMPLATE)
    # tools whose data differ only in a type (1 and True, a key 1 and "1", a list and a tuple)
    # must not be taken for one another
    calls = [
        [_tool("f", {"a": 1})],
        [_tool("f", {"a": True})],
        [_tool("f", {1: "x"})],
        [_tool("f", {"1": "x"})],
        [_tool("f", {"a": ["x", "y"]})],
        [_tool("f", {"a": ("x", "y")})],
        [_tool("f", {"a": 1})],
        [_tool("g", {"a": 'q"r'}), _tool("f", {"a": 1})],
    ]
    for tools in calls:
        result = kept.render_with_provenance(MESSAGES, tools=tools)
        fresh = ChatTemplate.from_string(TOOLS_TEMPLATE).render_with_provenance(
            MESSAGES, tools=tools
        )
        assert result.text == fresh.text == kept.render(MESSAGES, tools=tools)
        assert result.segments == fresh.segments
    assert kept.render_with_provenance(MESSAGES, tools=calls[1]).text.startswith(
        '{"type": "function", "function": {"name": "f", "parameters": {"a": true}}}|f|a=True;'
    )


def test_the_traced_tools_kept_are_bounded():
    from minijinja_py.chat.kept import TOOLS_BYTES

    chat = ChatTemplate.from_string(TOOLS_TEMPLATE)
    for index in range(48):
        chat.render_with_provenance(MESSAGES, tools=[_tool(f"f{index}", {"x" * 100_000: 1})])
    # (each list is its 100 KB repr, two bytes a character, and its three containers and
    # strings as keep_traced counts them: 205,839 bytes, of which 20 fit in 4 MiB)
    assert [size for _, size in chat.kept.tools._entries.values()] == [205_839] * 20
    assert chat.kept.tools.size <= TOOLS_BYTES


def test_a_header_written_after_every_conversation_is_cut_from_the_markers():
    # Command R7B-like: the next assistant header ends every conversation, with or without
    # the generation prompt; a past turn writes its start and its own response opener
    source = (
        "{% for m in messages %}{% if m.role == 'user' %}<|SOT|><|USER|>{{ m.content }}<|EOT|>"
        "{% else %}<|SOT|><|BOT|><|SR|>{{ m.content }}<|ER|><|EOT|>{% endif %}{% endfor %}"
        "<|SOT|><|BOT|><|ST|><|ET|>"
    )
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Bye"},
        {"role": "assistant", "content": "Yes"},
    ]
    result = ChatTemplate.from_string(source).render_with_provenance(messages)
    texts = result.turn_texts
    assert (texts.generation_prompt, texts.end_of_turn, texts.past_end_of_turn) == (
        "<|SOT|><|BOT|>",
        "<|ER|><|EOT|>",
        "<|EOT|>",
    )
    assert _span_texts(result) == ["<|SR|>Hello<|ER|><|EOT|>", "<|SR|>Yes<|ER|><|EOT|>"]


def test_a_call_end_stops_before_the_element_the_tool_result_closes():
    # Gemma 4-like: every call is followed by "<|tool_response>", which the result closes
    source = (
        "{% for m in messages %}{% if m.role == 'user' %}<|turn>user\n{{ m.content }}<turn|>\n"
        "{% elif m.role == 'assistant' and m.tool_calls %}<|turn>model\n"
        "{% for c in m.tool_calls %}<|tool_call>{{ c.function.name }}"
        "{{ c.function.arguments | tojson }}<tool_call|>{% endfor %}<|tool_response>"
        "{% elif m.role == 'assistant' %}{{ m.content }}<turn|>\n"
        "{% else %}{{ m.content }}<tool_response|>{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}<|turn>model\n{% endif %}"
    )
    result = ChatTemplate.from_string(source).render_with_provenance(_CALL_THEN_REPLY)
    assert result.turn_texts.call_end == '"}<tool_call|>'
    assert _span_texts(result) == [
        '<|tool_call>get_weather{"city": "Paris"}<tool_call|>',
        "Sunny.<turn|>\n",
    ]


def test_a_first_turn_and_an_empty_turn_without_markers():
    # Falcon-like: turns are separated by a newline and end with no marker; the first turn has
    # no newline before its header, an empty turn is the space after its header
    source = (
        "{% for m in messages %}{% if not loop.first %}{{ '\\n' }}{% endif %}"
        "{% if m.role == 'user' %}User: {% else %}Falcon: {% endif %}{{ m.content }}{% endfor %}"
        "{% if add_generation_prompt %}{{ '\\nFalcon:' }}{% endif %}"
    )
    messages = [
        {"role": "assistant", "content": "Hello"},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "There?"},
    ]
    result = ChatTemplate.from_string(source).render_with_provenance(messages)
    assert result.turn_texts.next_header == "\nUser: "
    assert [(start, result.text[start:end]) for start, end in result.assistant_spans] == [
        (7, " Hello"),
        (30, " "),
    ]


def test_the_closer_of_an_element_the_prompt_opens_is_the_replys():
    # DeepSeek V3.1-like: the prompt opens "<think>", a past turn closes it at once; the model
    # writes that "</think>" after the prompt (it was the header's before issue 41)
    source = (
        "{% for m in messages %}{% if m.role == 'user' %}<U>{{ m.content }}"
        "{% else %}<A><think></think>{{ m.content }}<eos>{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}<A><think>{% endif %}"
    )
    result = ChatTemplate.from_string(source).render_with_provenance(MESSAGES[:2])
    assert _span_texts(result) == ["</think>Hello!<eos>"]


def test_an_empty_turn_without_markers_leaves_the_separator_to_the_next_turn():
    # Alpaca-like: "\n\n" separates turns; an empty reply before another is no span
    source = (
        "{% for m in messages %}{% if m.role == 'user' %}### Instruction:\n{{ m.content }}\n\n"
        "{% else %}### Response:\n{{ m.content }}\n\n{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}### Response:\n{% endif %}"
    )
    messages = [
        {"role": "user", "content": "Q"},
        {"role": "assistant", "content": ""},
        {"role": "assistant", "content": "Yes"},
    ]
    result = ChatTemplate.from_string(source).render_with_provenance(messages)
    assert result.turn_texts.next_header == "\n\n### Instruction:\n"
    assert _span_texts(result) == ["Yes"]


def test_a_reply_after_a_prompt_that_does_not_write_its_space_starts_with_it():
    # Llama 2-like: no generation prompt; the reply writes " " after the user's " [/INST]"
    # (what the model writes), and the "\n" the user turn writes when it ends a conversation
    # stays the user's
    source = (
        "{% for m in messages %}{% if m.role == 'user' %}[INST] {{ m.content }} [/INST]\n"
        "{% else %} {{ m.content }} </s>{% endif %}{% endfor %}"
    )
    result = ChatTemplate.from_string(source).render_with_provenance(MESSAGES)
    assert result.turn_texts.user_line_end == "\n"
    assert _span_texts(result) == [" Hello! </s>", "  </s>"]


def test_a_space_alone_after_the_marker_is_not_the_turns():
    # LLaVA-NeXT-like: "</s> " before the next "[INST]" (a tokenizer joins the space to it)
    source = (
        "{% for m in messages %}{% if m.role == 'user' %}[INST] {{ m.content }} [/INST]"
        "{% else %}{{ ' ' + m.content + '</s> ' }}{% endif %}{% endfor %}"
    )
    result = ChatTemplate.from_string(source).render_with_provenance(MESSAGES[:3])
    assert _span_texts(result) == [" Hello!</s>"]


def test_a_turn_end_written_only_before_another_turn_is_the_turns_marker():
    # Qwen 1.5-like: "<|im_end|>\n" only where another turn follows, so the prompt starts
    # with it; it is the turn before's marker and line end, not the reply's header
    source = (
        "{% for m in messages %}{% if not loop.first %}<|im_end|>\n{% endif %}"
        "<|im_start|>{{ m.role }}\n{{ m.content }}{% endfor %}"
        "{% if add_generation_prompt %}<|im_end|>\n<|im_start|>assistant\n{% endif %}"
    )
    result = ChatTemplate.from_string(source).render_with_provenance(MESSAGES[:3])
    texts = result.turn_texts
    assert (texts.generation_prompt, texts.end_of_turn, texts.past_line_end) == (
        "<|im_start|>assistant\n",
        "<|im_end|>",
        "\n",
    )
    assert _span_texts(result) == ["Hello!<|im_end|>\n"]
