"""Where each character of a chat prompt came from, and which spans are the assistant's turns.

The engine traces every string of the caller's data (see :mod:`minijinja_py.provenance`); here its
paths are named as a chat caller knows them: ``("message", 3, "content")``,
``("message", 2, "tool_calls", 0, "function", "arguments")``, ``("tool", 0)``, ``("document", 1)``,
``("keyword", "date_string")``.

**Assistant spans.**  A template with ``{% generation %}`` blocks gives them.  Otherwise they are
inferred by one rule, the convention of hand-tagged training templates:

    an assistant turn's span starts where the template's *generation prompt* (the text that
    ``add_generation_prompt=True`` appends) ends, just before the turn's first traced character,
    and runs through the turn's last traced character and the *end-of-turn marker* that the template
    writes after an assistant message (where that marker is not found, the one it writes after a
    user message: gpt-oss ends the last turn with ``<|return|>`` and past ones with ``<|end|>``).

These texts are read off the template itself with probe renders (a user turn with and without
the generation prompt; a user and an assistant turn).  The characters of a turn are those traced
to the message (its content, reasoning, tool calls; not its role), up to the first character of a
later message.  When the generation prompt does not occur before the turn (a template that writes
past turns differently), its first line is looked for, then the span starts at the first traced
character; a template that writes no marker (the next header follows at once) ends the span at the
last traced character.  An assistant message with no traced character (empty content) has no span.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..provenance import Provenance, Segment

__all__ = ["ChatProvenance", "chat_source", "infer_assistant_spans"]

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
    #: when it has them, else inferred (see the module's rule).
    assistant_spans: list[tuple[int, int]]
    #: "generation" or "inferred": where ``assistant_spans`` came from.
    assistant_rule: str
    generation_prompt: str = ""
    end_of_turn: str = ""
    #: The messages as the template saw them (their strings are ``str`` objects that carry
    #: their sources).
    messages: list[dict[str, Any]] = field(default_factory=list, repr=False)
    #: The marker looked for after a past assistant turn where ``end_of_turn`` is not found:
    #: the one the template writes after a user message, when it is another.
    past_end_of_turn: str = ""

    def sources_at(self, index: int) -> list[ChatSource]:
        """The chat sources of the character at ``index`` (empty: the template's own text)."""
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


def message_regions(
    segments: Sequence[Segment], message_count: int
) -> dict[int, list[tuple[int, int]]]:
    """For each message, the spans of the characters traced to it (its role excluded)."""
    regions: dict[int, list[tuple[int, int]]] = {}
    for start, end, path, _, _ in segments:
        if (
            len(path) >= 3
            and path[0] == "messages"
            and path[2] != "role"
            and path[1].__class__ is int
            and path[1] < message_count
        ):
            found = regions.get(path[1])
            if found is None:
                regions[path[1]] = [(start, end)]
            else:
                found.append((start, end))
    return regions


def infer_assistant_spans(
    text: str,
    segments: Sequence[Segment],
    messages: Sequence[Any],
    generation_prompt: str,
    end_of_turn: str,
    past_end_of_turn: str = "",
) -> list[tuple[int, int]]:
    """The assistant spans of ``text`` by the module's rule (``past_end_of_turn``: the marker
    looked for where ``end_of_turn`` is not found)."""
    markers = [marker for marker in (end_of_turn, past_end_of_turn) if marker]
    assistants = [
        index
        for index, message in enumerate(messages)
        if isinstance(message, dict) and message.get("role") == "assistant"
    ]
    if not assistants:
        return []
    regions = message_regions(segments, len(messages))
    spans: list[tuple[int, int]] = []
    for index in assistants:
        own = sorted(regions.get(index, ()))
        if not own:
            # Nothing of the turn is traced (empty content): its generation prompt between the
            # neighbouring messages, then the marker, make the span.
            low = max(
                (end for other, found in regions.items() if other < index for _, end in found),
                default=0,
            )
            high = min(
                (start for other, found in regions.items() if other > index for start, _ in found),
                default=len(text),
            )
            prompt_at = text.find(generation_prompt, low, high) if generation_prompt else -1
            if prompt_at < 0:
                continue
            start = prompt_at + len(generation_prompt)
            found = _marker_end(text, markers, start, high)
            if found is not None:
                spans.append((start, found))
            continue
        first = own[0][0]
        following = len(text)  # where the next other message's text begins
        before = 0  # where the last other message's text before the turn ends
        for other, found in regions.items():
            if other == index:
                continue
            for start, end in found:
                if first <= start < following:
                    following = start
                if before < end <= first:
                    before = end
        last = max(end for start, end in own if start < following)
        start = _after_prompt(text, before, first, generation_prompt)
        found = _marker_end(text, markers, last, following)
        spans.append((start, last if found is None else found))
    return spans


def _marker_end(text: str, markers: list[str], low: int, high: int) -> int | None:
    # Where the first of the markers found in text[low:high] ends (the markers in order).
    for marker in markers:
        at = text.find(marker, low, high)
        if at >= 0:
            return at + len(marker)
    return None


def _after_prompt(text: str, low: int, first: int, generation_prompt: str) -> int:
    for prompt in _prompt_forms(generation_prompt):
        found = text.rfind(prompt, low, first)
        if found >= 0:
            return found + len(prompt)
    return first


def _prompt_forms(generation_prompt: str) -> Iterable[str]:
    if generation_prompt:
        yield generation_prompt
        line = generation_prompt.find("\n")
        if 0 <= line < len(generation_prompt) - 1:
            yield generation_prompt[: line + 1]


_PROBE_USER = "Probe question 7f3a?"
_PROBE_ASSISTANT = "Probe answer 9c1e."


def probe_turn_texts(render: Any) -> tuple[str, str, str]:
    """The template's generation prompt, its end-of-turn marker after a final assistant message,
    and the marker it writes after a user message (templates such as gpt-oss end a final turn
    with one marker, ``<|return|>``, and every past turn with the one a user turn ends with,
    ``<|end|>``).

    ``render(messages, add_generation_prompt)`` renders with the call's other inputs; a failing
    probe (a template that wants a system message first, say) is retried with one.
    """
    for prefix in ([], [{"role": "system", "content": "Probe system."}]):
        user = [*prefix, {"role": "user", "content": _PROBE_USER}]
        try:
            without = render(user, False)
            with_prompt = render(user, True)
            reply = render([*user, {"role": "assistant", "content": _PROBE_ASSISTANT}], False)
        except Exception:  # the probe is the template's business: try the next shape
            continue
        prompt = with_prompt[len(without) :] if with_prompt.startswith(without) else ""
        marker = _marker_after(reply, _PROBE_ASSISTANT)
        past = _marker_after(without, _PROBE_USER)
        return prompt, marker, past if past != marker else ""
    return "", "", ""


def _marker_after(text: str, probe: str) -> str:
    # What follows the probe's text on its line (a template may write more turns after it).
    at = text.rfind(probe)
    tail = text[at + len(probe) :] if at >= 0 else ""
    return tail.lstrip("\n").split("\n", 1)[0].rstrip() if tail.strip() else ""


_GENERATION_TAG = re.compile(r"\{%[-+]?\s*generation\s*[-+]?%\}")


@lru_cache(maxsize=64)  # asked at every traced render of the same few sources
def has_generation_blocks(source: str) -> bool:
    return _GENERATION_TAG.search(source) is not None


def chat_provenance(
    traced: Provenance,
    messages: list[dict[str, Any]],
    probes: tuple[str, str, str] | None,
) -> ChatProvenance:
    """The chat view of an engine render with provenance (``probes`` None: the template's
    generation blocks give the spans)."""
    if probes is None:
        return ChatProvenance(
            traced.text,
            traced.segments,
            [tuple(span) for span in traced.generation_spans],  # type: ignore[misc]
            "generation",
            messages=messages,
        )
    prompt, marker, past = probes
    spans = infer_assistant_spans(traced.text, traced.segments, messages, prompt, marker, past)
    return ChatProvenance(
        traced.text,
        traced.segments,
        spans,
        "inferred",
        prompt,
        marker,
        messages,
        past_end_of_turn=past,
    )
