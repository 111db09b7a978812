"""The spans stage's choice: the assistant spans of one conversation from the sources a mask
mode allows (spans/modes.py): the template's `{% generation %}` blocks, a hand-tagged copy of a
known template (spans/registry.py), or the turns inferred from the traced render
(spans/traced.py, spans/inferred.py), with the caller's spans when tokens are protected.
"""

from __future__ import annotations

from typing import Any

from ..call import Call
from ..model import ChatModel
from ..render import render_chat
from .blocks import has_generation_blocks
from .conventions import adjust_spans
from .registry import tagged_source
from .traced import ChatProvenance, traced_render

__all__ = ["chat_spans"]


def chat_spans(
    model: ChatModel, call: Call, chat: list[dict[str, Any]], mask: str | None, protect: bool
) -> tuple[str, list[tuple[int, int]], str | None, list[tuple[int, int]] | None]:
    """(text, assistant spans, their source, the caller's spans when protecting) of one
    conversation, the spans taken from the sources `mask` allows (see .masks); a
    `mask` of None asks for no spans."""
    if mask is None or has_generation_blocks(call.source):
        source = None if mask is None else "generation"
        if protect:
            whole = traced_render(model, call, chat)
            spans = whole.assistant_spans if mask is not None else []
            if call.continue_final_message:  # (masks are refused with it)
                return continued(model, call, chat, whole)
            return whole.text, spans, source, whole.caller_spans()
        text, spans = render_chat(call, chat, mask is not None)
        return text, spans, source, None
    tagged = tagged_spans(model, call, chat) if mask in ("tagged", "auto") else None
    traced: ChatProvenance | None = traced_render(model, call, chat) if protect else None
    plain = traced.text if traced is not None else None
    if tagged is not None:
        if plain is None:
            plain = render_chat(call, chat, False)[0]
        # (a hand-tagged copy is trusted only where it writes the template's very text)
        if tagged[0] == plain:
            return plain, tagged[1], "tagged", _caller(traced)
    if mask == "tagged":
        raise ValueError(
            "mask='tagged': this template has no {% generation %} blocks and no hand-tagged "
            "copy of it is known (see minijinja_py.chat.spans); use mask='inferred' or 'auto'"
        )
    if mask == "generation":
        if plain is None:
            plain = render_chat(call, chat, False)[0]
        return plain, [], "none", _caller(traced)
    if traced is None:
        traced = traced_render(model, call, chat)
    caller = traced.caller_spans() if protect else None
    eos = model.special_tokens.get("eos_token")
    spans = adjust_spans(
        traced,
        call.mask_header,
        call.mask_final_eos,
        eos if isinstance(eos, str) else None,
    )
    return traced.text, spans, "inferred", caller


def continued(
    model: ChatModel, call: Call, chat: list[dict[str, Any]], traced: ChatProvenance
) -> tuple[str, list[tuple[int, int]], None, list[tuple[int, int]]]:
    # A traced render is not cut; the cut text is a prefix of it (the cut marks the end of
    # the final message's text), so the caller's spans are clipped to that prefix.
    text = render_chat(call, chat, False)[0]  # (after the trace: it tags the chat)
    if not traced.text.startswith(text):
        raise ValueError(
            "continue_final_message with sanitize_control_tokens: the cut text is not a "
            "prefix of the whole render, so the caller's text cannot be placed in it"
        )
    end = len(text)
    caller = [(start, min(stop, end)) for start, stop in traced.caller_spans() if start < end]
    return text, [], None, caller


def tagged_spans(
    model: ChatModel, call: Call, chat: list[dict[str, Any]]
) -> tuple[str, list[tuple[int, int]]] | None:
    source = tagged_source(call.source)
    if source is None:
        return None
    tagged = Call(model.compiled_source(source), source, call.context, False)
    # (rendered before any tracing, which changes the chat's strings in place)
    return render_chat(tagged, [dict(message) for message in chat], True)


def _caller(traced: ChatProvenance | None) -> list[tuple[int, int]] | None:
    return None if traced is None else traced.caller_spans()
