"""Rows of conversations that every data path must render alike: a reserved key and an option
that one row sets and the others lack (Arrow fills them with nulls), a variable some rows set,
tools whose free-form ``parameters`` differ from row to row (``datasets`` stores them as JSON
text) and tool calls with arguments.

The keys of each object are written in the order Arrow's schema union gives them, so that the
nested Parquet path keeps them too (a test of its own shows what happens otherwise).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from minijinja_py.chat import ChatTemplate
from minijinja_py.pipelines import RowRenderer

TEMPLATE = (
    "{{ bos_token }}{% if tools %}[{{ tools | tojson }}]{% endif %}"
    "{% for m in messages %}<{{ m.role }}>{{ m.content }}"
    "{% for c in m.tool_calls | default([]) %}{{ c.function.name }}"
    "{{ c.function.arguments | tojson }}{% endfor %}{% endfor %}"
    "{% if extra is defined %}({{ extra }}){% endif %}"
)

WEATHER = {
    "type": "function",
    "function": {
        "name": "weather",
        "description": "The weather in a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
            "required": ["city"],
        },
    },
}
ADD = {
    "type": "function",
    "function": {
        "name": "add",
        "description": "a + b",
        "parameters": {
            "type": "object",
            "properties": {"b": {"type": "integer"}, "a": {"type": "integer"}},
        },
    },
}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"type": "function", "function": {"name": name, "arguments": arguments}}],
    }


def rows(count: int = 12) -> list[dict[str, Any]]:
    """``count`` rows cycling through six kinds; the row at index 2 sets ``bos_token`` and the
    row at index 3 ``add_generation_prompt``: those two fail, every other row renders."""
    kinds = [
        lambda i: {"id": i, "messages": [user(f"q{i}")]},
        lambda i: {"id": i, "messages": [user(f"w{i}")], "tools": [WEATHER], "extra": f"x{i}"},
        lambda i: {"id": i, "messages": [user("evil")], "bos_token": "EVIL"},
        lambda i: {"id": i, "messages": [user("opt")], "add_generation_prompt": True},
        lambda i: {
            "id": i,
            "messages": [user(f"c{i}"), call("weather", {"city": "Paris", "unit": "c"})],
            "tools": [WEATHER, ADD],
        },
        lambda i: {"id": i, "messages": [user(f"s{i}"), call("add", {"b": 1, "a": i})]},
    ]
    out = [kinds[i % len(kinds)](i) for i in range(count)]
    for row in out[6:]:  # later rows that set nothing reserved: null from the union only
        row.pop("bos_token", None)
        row.pop("add_generation_prompt", None)
    return out


def renderer() -> RowRenderer:
    return RowRenderer(
        ChatTemplate.from_string(TEMPLATE, {"bos_token": "<s>", "eos_token": "</s>"}),
        passthrough=["id"],
    )


def model_folder(folder: Path) -> Path:
    """A model folder of the template and its special tokens, for ``--model``."""
    folder.mkdir()
    config = {"chat_template": TEMPLATE, "bos_token": "<s>", "eos_token": "</s>"}
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    return folder


def jsonl(items: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in items)


def as_json_text(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows with ``messages`` and ``tools`` as JSON text: the exact Parquet form."""
    return [
        {
            "id": row["id"],
            "messages": json.dumps(row["messages"]),
            "tools": json.dumps(row["tools"]) if "tools" in row else None,
            "extra": row.get("extra"),
            "bos_token": row.get("bos_token"),
            "add_generation_prompt": row.get("add_generation_prompt"),
        }
        for row in items
    ]


def loop(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the plain loop gives: the id, then the renderer's result row."""
    render = renderer()
    return [{"id": row["id"], **render.render_row(row)} for row in items]


# -- the way back: generated text that every data path must parse alike ------------------------

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
    "{% if m.reasoning_content %}<think>\n{{ m.reasoning_content }}\n</think>\n\n{% endif %}"
    "{{ m.content }}"
    "{% for c in m.tool_calls or [] %}<tool_call>\n{{ c.function | tojson }}\n</tool_call>"
    "{% endfor %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def generations(count: int) -> dict[str, list[Any]]:
    """Columns of generated text: content, reasoning, a call, a call whose JSON is broken (a
    failure), a null response (a failure) and a row with its own prefix, in turn."""
    kinds = [
        "Four.<|im_end|>",
        "<think>\nhm\n</think>\n\nFour.<|im_end|>",
        '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call><|im_end|>',
        "<tool_call>\n{not json\n</tool_call><|im_end|>",
        None,
        "hm\n</think>\n\nFour.<|im_end|>",
    ]
    return {
        "id": list(range(count)),
        "response": [kinds[i % 6] for i in range(count)],
        "prefix": ["<|im_start|>assistant\n<think>\n" if i % 6 == 5 else None for i in range(count)],
    }


def parser() -> Any:
    from minijinja_py.pipelines.responses import RowParser

    return RowParser(ChatTemplate.from_string(CHATML), passthrough=["id"])


def parse_loop(columns: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """What the plain loop over RowParser gives, as the column paths write it: the id, the
    message as JSON text and the error."""
    rows = parser()
    out = []
    for index, number in enumerate(columns["id"]):
        row = {
            key: columns[key][index]
            for key in ("response", "prefix")
            if columns[key][index] is not None
        }
        result = rows.parse_value(row)
        message = result["message"]
        text = None if message is None else json.dumps(message, ensure_ascii=False)
        out.append({"id": number, "message": text, "error": result["error"]})
    return out
