"""One render call of a ChatTemplate: what its conversations share (the compiled template, the
context, the options), the engine it runs on, and transformers' continue_final_message cut.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ..errors import bounded_repr, bounded_text
from ..sandbox.limits import Limits
from .inputs import REASONING_FIELDS, to_template_data, to_template_tree
from .schema import tool_to_schema

if TYPE_CHECKING:
    from .provenance import TurnTexts
    from .template import ChatTemplate

_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


def prepare_call(
    template: ChatTemplate,
    tools: Any,
    documents: Any,
    add_generation_prompt: Any,
    continue_final_message: bool | str,
    spans: bool,
    chat_template: str | None,
    kwargs: Mapping[str, Any],
) -> _Call:
    source = template.select(tools, chat_template)
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
    compiled = template._compile(source)
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
    if template.now is not None:  # first, so that a caller's own strftime_now still wins
        context["strftime_now"] = _pinned_clock(template.now)
    context.update(template.special_tokens)
    for key, value in kwargs.items():
        context[key] = to_template_data(value, f"keyword argument {bounded_repr(key)}")
    context.update(
        tools=tool_schemas,
        documents=documents,
        add_generation_prompt=to_template_data(add_generation_prompt, "add_generation_prompt"),
    )
    call = _Call(compiled, source, context, continue_final_message)
    call.tools_tree = tools_tree
    return call


@dataclasses.dataclass
class _Call:
    """What one render call shares among its conversations."""

    compiled: Any
    source: str
    context: dict[str, Any]
    continue_final_message: bool | str
    #: The context variables whose strings a render with provenance traces.
    traced_names: list[str] = dataclasses.field(default_factory=list)
    #: The generation prompt and end-of-turn marker, probed once per call.
    probes: TurnTexts | None = None
    #: Whether the template has {% generation %} blocks (asked once per tokenize call).
    generation: bool = False
    #: The conventions of inferred masks (see masks.adjust_spans).
    mask_header: str = "auto"
    mask_final_eos: bool = False
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


def _refuse_tokenizer_options(method: str, kwargs: Mapping[str, Any]) -> None:
    # Passed on, they would become template variables and a string would come back silently.
    given = [name for name in TOKENIZER_OPTIONS if name in kwargs]
    if given:
        raise TypeError(
            f"{method}() renders text and does not take the tokenizer's option "
            f"{bounded_repr(given[0])}; use apply_chat_template() (transformers' signature) or tokenize() "
            "for token ids"
        )


def _tag_final_message(
    chat: list[dict[str, Any]], continue_final_message: bool | str, source: str
) -> Any:
    # Marks where the final message's text ends, as transformers does, and returns that text.
    if not chat:
        raise ValueError("continue_final_message is set but the conversation is empty!")
    field = continue_final_message if isinstance(continue_final_message, str) else "content"
    last = chat[-1]
    final_message = last.get(field)
    if final_message is None:
        raise ValueError(
            f'continue_final_message is set but the final message has no "{field}" to continue!'
        )
    fields = [field]
    if field in REASONING_FIELDS:  # reasoning is copied under several names: tag each copy
        fields = [name for name in REASONING_FIELDS if last.get(name) == final_message]
    if not any(name in source for name in fields):
        raise ValueError(
            f'continue_final_message is set to "{field}" but this is not an accepted field '
            "in the chat_template"
        )
    if isinstance(final_message, (list, tuple)):
        for block in reversed(final_message):
            if "text" in block:
                final_message = block["text"]
                block["text"] = block["text"] + _CONTINUE_TAG
                return final_message
        raise ValueError(
            "continue_final_message is set but we could not find any text to continue in the "
            "final message!"
        )
    for name in fields:
        last[name] = last[name] + _CONTINUE_TAG
    return final_message


def _cut_at_tag(rendered: str, final_message: Any) -> str:
    final = final_message.strip() if isinstance(final_message, str) else final_message
    tag = _CONTINUE_TAG.strip()
    if final not in rendered or tag not in rendered:
        raise ValueError(
            "continue_final_message is set but the final message does not appear in the chat after "
            "applying the chat template! This can happen if the chat template deletes portions of "
            "the final message. Please verify the chat template and final message in your chat to "
            "ensure they are compatible."
            # (both quoted within the bounds of an error message: a render can be 45 MB)
            f"Final message to continue: {bounded_text(final)}\n"
            f"Rendered chat:\n{bounded_text(rendered)}"
        )
    at = rendered.rindex(tag)
    if rendered[at : at + len(_CONTINUE_TAG)] == _CONTINUE_TAG:
        return rendered[:at]
    return rendered[:at].rstrip()


_ENVIRONMENTS: dict[Limits | None, Any] = {}


def _environment(limits: Limits | None = None) -> Any:
    environment = _ENVIRONMENTS.get(limits)
    if environment is None:
        from ..environment import chat_environment

        if len(_ENVIRONMENTS) >= 16:  # distinct Limits are few; never let the cache grow unbounded
            _ENVIRONMENTS.clear()
        environment = _ENVIRONMENTS[limits] = chat_environment(limits)
    return environment


_MAX_TIME_FORMAT = 1_000


def _pinned_clock(now: datetime) -> Any:
    def strftime_now(format: str) -> str:
        if not isinstance(format, str) or len(format) > _MAX_TIME_FORMAT:
            raise ValueError(
                f"strftime_now takes a format string of at most {_MAX_TIME_FORMAT} characters"
            )
        return now.strftime(format)

    return strftime_now
