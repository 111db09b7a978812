"""A user's code calling every documented entry point, checked with ``mypy --strict``.

tests/test_readme_types.py type-checks this file; it is not run (some calls need a model folder
with a tokenizer, Arrow, datasets or a Ray cluster). Each annotation says what the docs promise,
so that a signature that stops returning what the docs say fails the check.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from minijinja_py import (
    ChainableUndefined,
    ChatTemplate,
    Environment,
    IsolatedRenderer,
    IsolatedTemplate,
    IsolationError,
    LimitError,
    Limits,
    SecurityError,
    StrictUndefined,
    Template,
    TemplateError,
    TemplateRuntimeError,
    TemplateSyntaxError,
    Undefined,
    UndefinedError,
    chat_environment,
    pass_environment,
)
from minijinja_py.chat import ChatCapabilities, ChatProvenance, get_json_schema
from minijinja_py.chat.types import TokenizedBatch, TokenizedChat
from minijinja_py.cli import main
from minijinja_py.pipelines import RowRenderer
from minijinja_py.pipelines.arrow import render_arrow, render_columns
from minijinja_py.pipelines.hf_datasets import render_dataset
from minijinja_py.pipelines.ray_data import render_files

Message = dict[str, Any]


def engine() -> str:
    env = Environment(trim_blocks=True, lstrip_blocks=True, limits=Limits(max_steps=10_000))
    env.filters["shout"] = lambda s: s.upper() + "!"
    template: Template = env.from_string("{% for x in items %}{{ x|shout }} {% endfor %}")
    text: str = template.render(items=["a", "b"])
    text += Template("Hello {{ name }}!").render({"name": "World"})
    spans_text, spans = Template(
        "{% generation %}x{% endgeneration %}", extensions=["generation"]
    ).render_with_spans()
    first: tuple[int, int] = spans[0]
    names: set[str] = Template("{{ y }}").undeclared_variables()
    for undefined in (Undefined, StrictUndefined, ChainableUndefined):
        Environment(undefined=undefined)
    chat_env = chat_environment()
    chat_env.globals["strftime_now"] = lambda fmt: "26 Jul 2024"
    return text + spans_text + str(first) + str(sorted(names))


@pass_environment
def with_environment(environment: Environment, value: str) -> str:
    return value


def message_of(error: TemplateError) -> str:
    # The docs show .message as always set (issue 25): this must type-check as a str.
    return error.message


def errors() -> list[str]:
    messages: list[str] = []
    try:
        Environment().from_string("{% if %}")
    except TemplateSyntaxError as error:
        line: int | None = error.lineno
        messages.append(f"{message_of(error)} {line} {error.colno}")
    for kind in (TemplateRuntimeError, UndefinedError, SecurityError, LimitError, IsolationError):
        assert issubclass(kind, TemplateError)
    return messages


def chat_layer(messages: list[Message], batch: list[list[Message]]) -> None:
    chat = ChatTemplate.from_file("examples/chatml.jinja")
    chat = ChatTemplate.from_string(
        "{{ messages[0].content }}", limits=Limits(), now=datetime(2024, 7, 26)
    )
    chat = ChatTemplate.from_pretrained("path/to/model", name=None)
    chat = ChatTemplate.from_gguf("model.gguf")
    text: str = chat.render(messages, add_generation_prompt=True, enable_thinking=False)
    texts: list[str] = chat.render(batch)
    texts = chat.render_many(batch, tools=[get_json_schema(engine)])
    spanned, spans = chat.render_with_spans(messages)
    first_span: tuple[int, int] = spans[0]
    traced: ChatProvenance = chat.render_with_provenance(messages)
    where = traced.sources_at(traced.text.index("x"))
    assistant: list[tuple[int, int]] = traced.assistant_spans
    capabilities: ChatCapabilities = chat.capabilities()
    tools_ok: bool = capabilities.supports_tools and capabilities.preserves_prefix
    variables: set[str] = chat.undeclared_variables()

    tokens: TokenizedChat = chat.tokenize(messages, return_assistant_tokens_mask=True)
    ids: list[int] = tokens["input_ids"]
    attention: list[int] = tokens["attention_mask"]
    mask: list[int] = tokens.get("assistant_masks", [])
    prompt: str = chat.tokenize(messages, return_text=True).get("text", "")
    batch_tokens: TokenizedBatch = chat.tokenize(batch)
    batch_ids: list[list[int]] = batch_tokens["input_ids"]
    each: list[TokenizedChat] = chat.tokenize_many(batch)
    found: list[dict[str, Any]] = chat.find_control_tokens(messages)
    print(text, texts, spanned, first_span, where, assistant, tools_ok, variables, ids, attention)
    print(mask, prompt, batch_ids, each, found)


def isolation(messages: list[Message]) -> None:
    chat = ChatTemplate.from_string("{% for m in messages %}{{ m.content }}{% endfor %}")
    with IsolatedRenderer(workers=2, max_memory_bytes=1 << 30, timeout=5) as iso:
        remote: IsolatedTemplate = iso.wrap(chat)
        print(iso.call(chat, "render", messages), remote.render(messages))
        print(iso.from_string("{{ 6 * 7 }}").render())


def pipelines(arrow_table: Any, dataset: Any) -> None:
    chat = ChatTemplate.from_file("examples/chatml.jinja")
    renderer = RowRenderer(
        chat, variables={"enable_thinking": False}, passthrough=["id"], spans=True
    )
    row: dict[str, Any] = renderer.render_row({"messages": [{"role": "user", "content": "Hi"}]})
    columns: dict[str, list[Any]] = render_columns(renderer, {"id": [1], "messages": [[]]})
    table = render_arrow(renderer, arrow_table)
    rendered = render_dataset(dataset, renderer, num_proc=2)
    render_files("in/", "out/", renderer, concurrency=2, num_cpus=1)
    print(json.dumps(row), columns, table, rendered)


def command_line() -> int:
    status: int = main(
        [
            "render",
            "--template",
            "examples/chatml.jinja",
            "--messages",
            "examples/conversation.json",
        ]
    )
    return status
