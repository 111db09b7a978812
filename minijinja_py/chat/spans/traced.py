"""The traced render of one conversation: the text, where each of its characters came from
(named as a chat caller knows its data: `("message", 3, "content")`, `("tool", 0)`,
`("document", 1)`, `("keyword", "date_string")`), and its assistant spans (the template's
`{% generation %}` blocks, else inferred: spans/inferred.py).

The engine traces every string of the caller's data (`minijinja_py.provenance`); this module
names its paths for the chat layer and keeps, per template, what a traced render can reuse from
the last calls (probed turn texts, traced tool lists; bounded in bytes, see chat/kept.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...provenance import Provenance, Segment, check_traceable, keep_traced, track_value
from ..call import Call
from ..model import ChatModel
from .blocks import has_generation_blocks
from .conventions import convention_spans
from .inferred import infer_assistant_spans
from .probes import TurnTexts, probe_turn_texts

__all__ = ["ChatProvenance", "ChatSource", "chat_source", "traced_render"]

ChatSource = tuple[Any, ...]

_TRACED_ROOTS = {"messages": "message", "tools": "tool", "documents": "document"}


def chat_source(path: tuple[Any, ...]) -> ChatSource:
    """The engine's path of a context value, named for a chat caller."""
    root = path[0]
    kind = _TRACED_ROOTS.get(root)
    if kind is None:
        return ("keyword", *path)
    if kind == "message":
        return ("message", *path[1:])
    return (kind, *path[1:2])


@dataclass(frozen=True)
class ChatProvenance:
    """A rendered conversation with the origin of each character and the assistant spans."""

    text: str
    #: The engine's segments (paths as in the template's context), sorted by start.
    segments: tuple[Segment, ...]
    #: (start, end) character spans of the assistant's turns: the template's generation blocks
    #: when it has them, else inferred (see the module's rule) with the role-header convention
    #: of the template's family ("auto" of .conventions.adjust_spans).
    assistant_spans: list[tuple[int, int]]
    #: "generation" or "inferred": where ``assistant_spans`` came from.
    assistant_rule: str
    #: The messages as the template saw them (their strings are ``str`` objects that carry
    #: their sources).
    messages: list[dict[str, Any]] = field(default_factory=list, repr=False)
    #: What the probes read off the template for the rule (empty for generation blocks).
    turn_texts: TurnTexts = TurnTexts()
    #: The rule's spans, the role header excluded, before ``assistant_spans`` took the
    #: header convention of the template's family (see .conventions.family_header; empty for
    #: generation blocks).
    rule_spans: list[tuple[int, int]] = field(default_factory=list, repr=False)
    #: The end-of-sequence token the render was traced with (its final one is the last
    #: assistant turn's, see .conventions.adjust_spans), None when the template has none.
    eos_token: str | None = None

    def sources_at(self, index: int) -> list[ChatSource]:
        """The chat sources of the character at `index` (empty: the template's own text)."""
        found: list[ChatSource] = []
        for segment in self.segments:
            if segment.start <= index < segment.end:
                source = chat_source(segment.path)
                if source not in found:
                    found.append(source)
        return found

    def char_sources(self) -> list[tuple[ChatSource, ...]]:
        """For every character, the chat sources it came from."""
        sources: list[list[ChatSource]] = [[] for _ in self.text]
        for segment in self.segments:
            source = chat_source(segment.path)
            for index in range(segment.start, segment.end):
                if source not in sources[index]:
                    sources[index].append(source)
        return [tuple(found) for found in sources]

    def caller_spans(self) -> list[tuple[int, int]]:
        """Merged (start, end) spans of the characters that came from the caller's data."""
        merged: list[tuple[int, int]] = []
        for segment in sorted(self.segments, key=lambda s: (s.start, s.end)):
            if merged and segment.start <= merged[-1][1]:
                if segment.end > merged[-1][1]:
                    merged[-1] = (merged[-1][0], segment.end)
            else:
                merged.append((segment.start, segment.end))
        return merged


def chat_provenance(
    traced: Provenance,
    messages: list[dict[str, Any]],
    probes: TurnTexts | None,
    eos_token: str | None = None,
) -> ChatProvenance:
    """The chat view of an engine render with provenance (`probes` None: the template's
    generation blocks give the spans; `eos_token`: the template's, see ChatProvenance)."""
    if probes is None:
        return ChatProvenance(
            traced.text,
            traced.segments,
            [tuple(span) for span in traced.generation_spans],  # type: ignore[misc]
            "generation",
            messages=messages,
            eos_token=eos_token,
        )
    spans = infer_assistant_spans(traced.text, traced.segments, messages, *probes.rule_texts())
    family = convention_spans(traced.text, spans, probes, messages, eos_token=eos_token)
    return ChatProvenance(
        traced.text,
        traced.segments,
        family,
        "inferred",
        messages,
        probes,
        rule_spans=spans,
        eos_token=eos_token,
    )


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


def traced_render(model: ChatModel, call: Call, chat: list[dict[str, Any]]) -> ChatProvenance:
    names = call.traced_names or ["messages", "tools", "documents"]
    context = {**call.context, "messages": chat}
    if (
        context.get("tools") is not None
        and "tools" in names
        # (a template that never names its tools leaves them untraced: no key to make)
        and "tools" in call.compiled._run_with_provenance().reads
    ):
        context["tools"] = sourced_tools(model, context["tools"], call.tools_tree)
        names = [name for name in names if name != "tools"]
    # (the call's data and chat are copies made by this object: traced in place)
    traced = call.compiled.trace(context, names, private=True)
    probes = None
    if not has_generation_blocks(call.source):
        if call.probes is None:
            # The probes read the template's headers and markers, which depend on its
            # options (enable_thinking, ...), not on the tools or documents: kept per options.
            key = (call.source, _option_key(call.context))
            call.probes = model.kept.probes.get(key)
            if call.probes is None:

                def render(probe: list[dict[str, Any]], prompt: bool) -> str:
                    context = {
                        **call.context,
                        "messages": probe,
                        "add_generation_prompt": prompt,
                    }
                    return call.compiled.render(context)

                call.probes = probe_turn_texts(render)
                model.kept.probes.put(key, call.probes, _probes_size(key, call.probes))
        probes = call.probes
    eos = model.special_tokens.get("eos_token")
    return chat_provenance(traced, chat, probes, eos if isinstance(eos, str) else None)


def sourced_tools(model: ChatModel, tools: Any, tree: bool = False) -> Any:
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
    sourced = model.kept.tools.get(key)
    if sourced is None:
        sourced = track_value(tools, ("tools",), in_place=True)  # (this call's own copy)
        # (the traced copy's bytes, about, as keep_traced counts them, and its key's)
        size = keep_traced(sourced) + _TRACED_BYTES_PER_CHAR * len(key) + _TRACED_BYTES_EACH
        model.kept.tools.put(key, sourced, size)
    return sourced


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
