"""The render stage: one conversation of a prepared call rendered to text (with the
`{% generation %}` spans when asked), and transformers' `continue_final_message` cut: the final
message's text is tagged before the render and the text cut at the tag after it.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..errors import bounded_text
from ..sandbox.limits import Limits
from .inputs import REASONING_FIELDS

__all__ = ["RenderCall", "chat_engine", "render_chat"]


class RenderCall(Protocol):
    """What a render reads of a prepared call (chat/call.py's `Call`)."""

    compiled: Any
    source: str
    context: dict[str, Any]
    continue_final_message: bool | str


_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


def render_chat(
    call: RenderCall, chat: list[dict[str, Any]], spans: bool = False
) -> tuple[str, list[tuple[int, int]]]:
    """The text of `chat` rendered by the call, and its generation spans when `spans`."""
    final_message: Any = None
    if call.continue_final_message:
        final_message = tag_final_message(chat, call.continue_final_message, call.source)
    context = {**call.context, "messages": chat}
    indices: list[tuple[int, int]] = []
    if spans:
        text, found = call.compiled.render_with_spans(context)
        indices = [(start, end) for start, end in found]
    else:
        text = call.compiled.render(context)
    if call.continue_final_message:
        text = cut_at_tag(text, final_message)
    return text, indices


def tag_final_message(
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


def cut_at_tag(rendered: str, final_message: Any) -> str:
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


def chat_engine(limits: Limits | None = None) -> Any:
    """The engine configured as transformers configures Jinja2, one per distinct `Limits`."""
    environment = _ENVIRONMENTS.get(limits)
    if environment is None:
        from ..environment import chat_environment

        if len(_ENVIRONMENTS) >= 16:  # distinct Limits are few; never let the cache grow unbounded
            _ENVIRONMENTS.clear()
        environment = _ENVIRONMENTS[limits] = chat_environment(limits)
    return environment
