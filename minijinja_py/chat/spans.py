"""The assistant spans of one conversation of a ChatTemplate call, and the traced render
(provenance) they are inferred from: the template's {% generation %} blocks, a hand-tagged copy
of a known template, or the assistant turns found in the traced text (see .masks).

Functions of the ChatTemplate they serve (passed in): this module does not import .template.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..provenance import check_traceable, keep_traced, track_value
from .calls import _Call
from .masks import adjust_spans, tagged_source
from .provenance import (
    ChatProvenance,
    TurnTexts,
    chat_provenance,
    has_generation_blocks,
    probe_turn_texts,
)

if TYPE_CHECKING:
    from .template import ChatTemplate

# What a traced tool list's key (its repr) holds per character, about, and each entry.
_TRACED_BYTES_PER_CHAR = 2
_TRACED_BYTES_EACH = 4096


def _probes_size(key: tuple[Any, ...], probes: TurnTexts) -> int:
    # (the source, the options' names and values, and the texts read: about their characters)
    source, options = key
    size = len(source) + sum(map(len, probes)) + 1024
    for name, value in options:
        size += len(name) + (len(value) if isinstance(value, str) else 32) + 64
    return size


def traced_render(
    template: ChatTemplate, call: _Call, chat: list[dict[str, Any]]
) -> ChatProvenance:
    names = call.traced_names or ["messages", "tools", "documents"]
    context = {**call.context, "messages": chat}
    if (
        context.get("tools") is not None
        and "tools" in names
        # (a template that never names its tools leaves them untraced: no key to make)
        and "tools" in call.compiled._run_with_provenance().reads
    ):
        context["tools"] = sourced_tools(template, context["tools"], call.tools_tree)
        names = [name for name in names if name != "tools"]
    # (the call's data and chat are copies made by this object: traced in place)
    traced = call.compiled.trace(context, names, private=True)
    probes = None
    if not has_generation_blocks(call.source):
        if call.probes is None:
            # The probes read the template's headers and markers, which depend on its
            # options (enable_thinking, ...), not on the tools or documents: kept per options.
            key = (call.source, _option_key(call.context))
            call.probes = template._probes.get(key)
            if call.probes is None:

                def render(probe: list[dict[str, Any]], prompt: bool) -> str:
                    context = {
                        **call.context,
                        "messages": probe,
                        "add_generation_prompt": prompt,
                    }
                    return call.compiled.render(context)

                call.probes = probe_turn_texts(render)
                template._probes.put(key, call.probes, _probes_size(key, call.probes))
        probes = call.probes
    return chat_provenance(traced, chat, probes)


def sourced_tools(template: ChatTemplate, tools: Any, tree: bool = False) -> Any:
    """`tools` (this call's template data) with its strings traced, from the last calls'
    when they passed the same tools.

    Tools repeat from call to call (every row of a dataset may offer the same ones), and
    tracing a schema's strings (and placing them in its JSON) is much of what provenance
    costs a call with tools.  The key is the data's `repr`, which tells apart every value
    template data holds (`1`, `True`, `"1"`, a tuple and a list); a template cannot
    change what it is given, so the traced copy is shared.  `tree`: the tools hold no list
    or dict twice (as their rebuild found), so the check of that before the `repr` is
    skipped."""
    if not tree:  # (shared lists would make a repr of a huge tree)
        check_traceable(tools, ("tools",))
    key = repr(tools)
    sourced = template._traced_tools.get(key)
    if sourced is None:
        sourced = track_value(tools, ("tools",), in_place=True)  # (this call's own copy)
        # (the traced copy's bytes, about, as keep_traced counts them, and its key's)
        size = keep_traced(sourced) + _TRACED_BYTES_PER_CHAR * len(key) + _TRACED_BYTES_EACH
        template._traced_tools.put(key, sourced, size)
    return sourced


def chat_spans(
    template: ChatTemplate, call: _Call, chat: list[dict[str, Any]], mask: str | None, protect: bool
) -> tuple[str, list[tuple[int, int]], str | None, list[tuple[int, int]] | None]:
    """(text, assistant spans, their source, the caller's spans when protecting) of one
    conversation, the spans taken from the sources `mask` allows (see .masks); a
    `mask` of None asks for no spans."""
    if mask is None or call.generation:
        source = None if mask is None else "generation"
        if protect:
            whole = traced_render(template, call, chat)
            spans = whole.assistant_spans if mask is not None else []
            if call.continue_final_message:  # (masks are refused with it)
                return continued(template, call, chat, whole)
            return whole.text, spans, source, whole.caller_spans()
        text, spans = template._render_chat(call, chat, mask is not None)
        return text, spans, source, None
    tagged = tagged_spans(template, call, chat) if mask in ("tagged", "auto") else None
    traced: ChatProvenance | None = traced_render(template, call, chat) if protect else None
    plain = traced.text if traced is not None else None
    if tagged is not None:
        if plain is None:
            plain = template._render_chat(call, chat, False)[0]
        # (a hand-tagged copy is trusted only where it writes the template's very text)
        if tagged[0] == plain:
            return plain, tagged[1], "tagged", _caller(traced)
    if mask == "tagged":
        raise ValueError(
            "mask='tagged': this template has no {% generation %} blocks and no hand-tagged "
            "copy of it is known (see minijinja_py.chat.masks); use mask='inferred' or 'auto'"
        )
    if mask == "generation":
        if plain is None:
            plain = template._render_chat(call, chat, False)[0]
        return plain, [], "none", _caller(traced)
    if traced is None:
        traced = traced_render(template, call, chat)
    caller = traced.caller_spans() if protect else None
    eos = template.special_tokens.get("eos_token")
    spans = adjust_spans(
        traced,
        call.mask_header,
        call.mask_final_eos,
        eos if isinstance(eos, str) else None,
    )
    return traced.text, spans, "inferred", caller


def continued(
    template: ChatTemplate, call: _Call, chat: list[dict[str, Any]], traced: ChatProvenance
) -> tuple[str, list[tuple[int, int]], None, list[tuple[int, int]]]:
    # A traced render is not cut; the cut text is a prefix of it (the cut marks the end of
    # the final message's text), so the caller's spans are clipped to that prefix.
    text = template._render_chat(call, chat, False)[0]  # (after the trace: it tags the chat)
    if not traced.text.startswith(text):
        raise ValueError(
            "continue_final_message with sanitize_control_tokens: the cut text is not a "
            "prefix of the whole render, so the caller's text cannot be placed in it"
        )
    end = len(text)
    caller = [(start, min(stop, end)) for start, stop in traced.caller_spans() if start < end]
    return text, [], None, caller


def tagged_spans(
    template: ChatTemplate, call: _Call, chat: list[dict[str, Any]]
) -> tuple[str, list[tuple[int, int]]] | None:
    source = tagged_source(call.source)
    if source is None:
        return None
    tagged = _Call(template._compile(source), source, call.context, False)
    # (rendered before any tracing, which changes the chat's strings in place)
    return template._render_chat(tagged, [dict(message) for message in chat], True)


def _caller(traced: ChatProvenance | None) -> list[tuple[int, int]] | None:
    return None if traced is None else traced.caller_spans()


def _option_key(context: dict[str, Any]) -> tuple:
    # (a list made, then a tuple: a generator costs more per item, at every traced render)
    return tuple(
        [
            (key, value)
            for key, value in context.items()
            if isinstance(value, _OPTION_TYPES) and key != "tools" and key != "documents"
        ]
    )


_OPTION_TYPES = (str, int, float, bool)
