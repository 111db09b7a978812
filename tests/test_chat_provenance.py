"""ChatTemplate.render_with_provenance: chat sources and assistant spans."""

from __future__ import annotations

from minijinja_py import ChatTemplate

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
    assert (result.generation_prompt, result.end_of_turn) == (
        "<|im_start|>assistant\n",
        "<|im_end|>",
    )
    assert [result.text[a:b] for a, b in result.assistant_spans] == [
        "Hello!<|im_end|>",
        "<|im_end|>",  # an empty turn: between its generation prompt and its marker
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
    assert (result.end_of_turn, result.past_end_of_turn) == ("<|return|>", "<|end|>")
    assert [result.text[a:b] for a, b in result.assistant_spans] == [
        "<|message|>Hello<|end|>",
        "<|message|>See you<|return|>",
    ]


def test_generation_blocks_win_over_the_rule():
    source = CHATML.replace(
        "{{ m.content }}<|im_end|>",
        "{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}"
        "{% else %}{{ m.content }}{% endif %}<|im_end|>",
    )
    result = ChatTemplate.from_string(source).render_with_provenance(MESSAGES)
    assert result.assistant_rule == "generation"
    assert [result.text[a:b] for a, b in result.assistant_spans] == ["Hello!", ""]
