"""The call stage: one call's options made into what its conversations share (the template
chosen and compiled, the context with the special tokens and the caller's variables, the
options of the later stages), with transformers' checks of options that do not go together.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..errors import bounded_repr
from .inputs import to_template_data, to_template_tree
from .model import ChatModel
from .schema import tool_to_schema

__all__ = ["Call", "TOKENIZER_OPTIONS", "prepare_call", "refuse_tokenizer_options"]


def prepare_call(
    model: ChatModel,
    tools: Any,
    documents: Any,
    add_generation_prompt: Any,
    continue_final_message: bool | str,
    spans: bool,
    chat_template: str | None,
    kwargs: Mapping[str, Any],
) -> Call:
    """The call's shared part; `spans`: assistant spans are asked for (masks)."""
    source = model.select(tools, chat_template)
    if continue_final_message:
        if add_generation_prompt:
            raise ValueError(
                "continue_final_message and add_generation_prompt are not compatible. Use "
                "continue_final_message when you want the model to continue the final message, "
                "and add_generation_prompt when you want to add a header that will prompt it to "
                "start a new assistant message instead."
            )
        if spans:
            raise ValueError(
                "continue_final_message is not compatible with return_assistant_tokens_mask."
            )
    compiled = model.compiled_source(source)
    tool_schemas = None
    tools_tree = True
    if tools is not None:
        schemas = [tool_to_schema(tool) for tool in tools]
        tool_schemas, tools_tree = to_template_tree(schemas, "tools")
    if documents is not None:
        for document in documents:
            if not isinstance(document, dict):
                raise TypeError("Documents should be a list of dicts with 'title' and 'text' keys!")
        documents = to_template_data(documents, "documents")
    context: dict[str, Any] = {}
    if model.now is not None:  # first, so that a caller's own strftime_now still wins
        context["strftime_now"] = _pinned_clock(model.now)
    context.update(model.special_tokens)
    for key, value in kwargs.items():
        context[key] = to_template_data(value, f"keyword argument {bounded_repr(key)}")
    context.update(
        tools=tool_schemas,
        documents=documents,
        add_generation_prompt=to_template_data(add_generation_prompt, "add_generation_prompt"),
    )
    call = Call(compiled, source, context, continue_final_message)
    call.tools_tree = tools_tree
    return call


def prepare_traced_call(
    model: ChatModel,
    tools: Any,
    documents: Any,
    add_generation_prompt: Any,
    continue_final_message: bool | str,
    spans: bool,
    chat_template: str | None,
    kwargs: Mapping[str, Any],
    mask_header: str = "auto",
    mask_final_eos: bool = True,
) -> Call:
    """A call whose renders may be traced (spans, masks, protected tokens): the variables to
    trace and the conventions of inferred masks."""
    call = prepare_call(
        model,
        tools,
        documents,
        add_generation_prompt,
        continue_final_message,
        spans,
        chat_template,
        kwargs,
    )
    call.traced_names = ["messages", "tools", "documents", *kwargs]
    call.mask_header, call.mask_final_eos = mask_header, mask_final_eos
    return call


def prepare_tokens_call(
    model: ChatModel,
    tools: Any,
    documents: Any,
    add_generation_prompt: Any,
    continue_final_message: bool | str,
    masks: bool,
    protect: bool,
    chat_template: str | None,
    kwargs: Mapping[str, Any],
    mask_header: str = "auto",
    mask_final_eos: bool = True,
) -> Call:
    """A traced call that encodes: without a tokenizer, says how to get one first."""
    model.tokenizer  # noqa: B018
    if continue_final_message and protect:
        raise ValueError("continue_final_message is not compatible with protect_special_tokens.")
    return prepare_traced_call(
        model,
        tools,
        documents,
        add_generation_prompt,
        continue_final_message,
        masks,
        chat_template,
        kwargs,
        mask_header,
        mask_final_eos,
    )


@dataclasses.dataclass
class Call:
    """What one render call shares among its conversations."""

    compiled: Any
    source: str
    context: dict[str, Any]
    continue_final_message: bool | str
    #: The context variables whose strings a render with provenance traces.
    traced_names: list[str] = dataclasses.field(default_factory=list)
    #: The generation prompt and end-of-turn marker, probed once per call.
    probes: tuple[str, ...] | None = None  # (a spans.probes.TurnTexts)
    #: The conventions of inferred masks (see masks.adjust_spans).
    mask_header: str = "auto"
    mask_final_eos: bool = True
    #: Whether the tools' data is a tree (no list or dict in it twice): then provenance need
    #: not check that before keying the traced copy by its repr.
    tools_tree: bool = False


# Options of transformers' apply_chat_template that a tokenizer reads, not the template.
TOKENIZER_OPTIONS = (
    "tokenize",
    "return_dict",
    "return_tensors",
    "padding",
    "truncation",
    "max_length",
    "tokenizer_kwargs",
    "return_assistant_tokens_mask",
    "sanitize_control_tokens",
)


def refuse_tokenizer_options(method: str, kwargs: Mapping[str, Any]) -> None:
    # Passed on, they would become template variables and a string would come back silently.
    given = [name for name in TOKENIZER_OPTIONS if name in kwargs]
    if given:
        raise TypeError(
            f"{method}() renders text and does not take the tokenizer's option "
            f"{bounded_repr(given[0])}; use apply_chat_template() (transformers' signature) or tokenize() "
            "for token ids"
        )


_MAX_TIME_FORMAT = 1_000


def _pinned_clock(now: datetime) -> Any:
    def strftime_now(format: str) -> str:
        if not isinstance(format, str) or len(format) > _MAX_TIME_FORMAT:
            raise ValueError(
                f"strftime_now takes a format string of at most {_MAX_TIME_FORMAT} characters"
            )
        return now.strftime(format)

    return strftime_now
