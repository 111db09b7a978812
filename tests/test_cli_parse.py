"""`minijinja-py parse` and RowParser: generated text back into messages, one result per row."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from minijinja_py import ChatTemplate
from minijinja_py.cli import main
from minijinja_py.pipelines.responses import RowParser

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
    "{% if m.reasoning_content %}<think>\n{{ m.reasoning_content }}\n</think>\n\n{% endif %}"
    "{{ m.content }}"
    "{% for c in m.tool_calls or [] %}<tool_call>\n{{ c.function | tojson }}\n</tool_call>"
    "{% endfor %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
CALL = '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call><|im_end|>'


def test_row_parser_reads_strings_and_objects():
    rows = RowParser(ChatTemplate.from_string(CHATML), passthrough=["id"])
    assert rows.parse_value("<think>\nhm\n</think>\n\nFour.<|im_end|>") == {
        "id": None,
        "message": {"role": "assistant", "reasoning_content": "hm", "content": "Four."},
        "error": None,
    }
    assert rows.parse_value({"id": 3, "response": CALL, "prefix": "<|im_start|>assistant\n"}) == {
        "id": 3,
        "message": {
            "role": "assistant",
            "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}],
        },
        "error": None,
    }
    assert rows.parse_value({"id": 4, "text": "x"})["error"]["message"] == (
        "'text' is not a key of a response row"
    )
    assert rows.parse_value(5)["error"]["message"] == (
        'expected a JSON string or an object with a "response" string, not int'
    )


def test_a_template_nothing_can_be_inferred_from_fails_when_the_parser_is_made():
    with pytest.raises(ValueError) as caught:
        RowParser(
            ChatTemplate.from_string(
                "{% for m in messages if m.role == 'user' %}<u>{{ m.content }}</u>{% endfor %}"
                "{% if add_generation_prompt %}<a>{% endif %}"
            )
        )
    assert str(caught.value).startswith("cannot infer a response template:")


def test_parse_command_writes_one_line_per_row(capsys, tmp_path: Path):
    template = tmp_path / "t.jinja"
    template.write_text(CHATML, encoding="utf-8")
    generated = tmp_path / "in.jsonl"
    generated.write_text(
        json.dumps("Hello.<|im_end|>") + "\n\n" + "not json\n" + json.dumps({"response": CALL}) + "\n",
        encoding="utf-8",
    )
    status = main(["parse", "--template", str(template), str(generated), "-"])
    out, err = capsys.readouterr()
    assert (status, err) == (0, "")
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[0] == {"message": {"role": "assistant", "content": "Hello."}, "error": None}
    assert lines[1] == {
        "message": None,
        "error": {
            "kind": "JSONDecodeError",
            "message": "Expecting value: column 1 of the JSON text",
            "line": None,
            "column": None,
            "input_line": 3,
        },
    }
    assert lines[2]["message"]["tool_calls"][0]["function"] == {"name": "f", "arguments": {"a": 1}}
    assert len(lines) == 3


def test_parse_command_with_a_schema(capsys, tmp_path: Path):
    template = tmp_path / "t.jinja"
    template.write_text("{{ messages }}", encoding="utf-8")
    schema = tmp_path / "schema.json"
    schema.write_text(
        json.dumps({"start_anchor": "A:", "fields": {"content": {"close": "<end>"}}}),
        encoding="utf-8",
    )
    generated = tmp_path / "in.jsonl"
    generated.write_text(json.dumps("Hi<end>") + "\n", encoding="utf-8")
    status = main(
        ["parse", "--template", str(template), "--schema", str(schema), str(generated), "-"]
    )
    out, _ = capsys.readouterr()
    assert (status, out) == (0, '{"message": {"content": "Hi"}, "error": null}\n')
