"""Where each character of a chat prompt came from, and which spans are the assistant's turns.

The engine traces every string of the caller's data (see `minijinja_py.provenance`); here its
paths are named as a chat caller knows them: `("message", 3, "content")`,
`("message", 2, "tool_calls", 0, "function", "arguments")`, `("tool", 0)`, `("document", 1)`,
`("keyword", "date_string")`.

**Assistant spans.**  A template with `{% generation %}` blocks gives them.  Otherwise they are
inferred by one rule, the convention of hand-tagged training templates:

    an assistant turn's span starts where the template's *role header* for the assistant ends,
    just before the turn's first traced character, and runs through the turn's last traced
    character, the *end-of-turn marker* that the template writes after an assistant message
    (where that marker is not found, the one it writes after a user message: gpt-oss ends the
    last turn with `<|return|>` and past ones with `<|end|>`), and the whitespace it writes
    after the marker to end the turn (ChatML's newline after `<|im_end|>`).

These texts are read off the template itself with probe renders (a user turn with and without
the generation prompt; a user and an assistant turn; the same with a user turn after it).  The
role header is the generation prompt (the text `add_generation_prompt=True` appends) through
its first line that is not blank and the whitespace after it: what a prompt writes after that
(Qwen 3.5's `<think>\n`) starts the reply, as a past turn writes it.  A template whose user
turn writes the prompt itself (Phi 3 and 4, Yi) has it read after the user turn's marker.  The
whitespace after a marker is taken where it is the turn's and not the start of the next turn:
what the next turn writes before its text must be the whole of a user turn's header (Mistral's
`" [INST]"` keeps its space; GLM writes the next header, `<|user|>`, as the marker, and the
newline after it is the user's).

A template that writes the next assistant header after every conversation, with or without
the prompt (Command R7B's tool use), ends both the user probe's and the assistant probe's tail
with it: it is cut from their markers (a user turn's marker is at least one token), and the part
of it that the reply's own header starts with is the role header.  A header that begins with the
whitespace separating turns is also looked for without it (a first turn).  What the model writes
after the prompt is the turn's: an element the prompt opens and a past turn closes at once
(DeepSeek V3.1's prompt `<think>`, a past turn's `<think></think>`) has its closer in the span,
and where a template writes no generation prompt (the user turn writes the assistant's header,
or there is none), the whitespace between the template text that ends the turn before and the
reply is the reply's (Llama 2's `" "` after `" [/INST]"`), except the whitespace that turn writes
when it ends a conversation (read off the probes for a user turn and a tool result).

A tool call's turn is probed too (a user turn and an assistant turn with one call): where no
end-of-turn marker follows a turn, what the template wrote after the call's arguments ends it
(gpt-oss's `<|call|>`), and where no role header precedes it, what it wrote before the call's
name starts it (Mistral's `[TOOL_CALLS] [{"name": "`).  A call's end stops before an element it
opens that a tool result closes (Gemma 4's `<|tool_response>`, read off a probe with a result).

The characters of a turn are those traced to the message (its content, reasoning, tool calls; not
its role or its tool calls' ids; a tool call's name only where it is first written, since gpt-oss
and Gemma 4 write it again in the tool result's header), up to the first character of a later
message; a turn never reaches back into the span before it (a template that drops tool turns writes
the next assistant turn without a header). When the role header does not occur before the turn (a
template that writes past turns differently), its first line is looked for, then the span starts at
the first traced character; a template that writes no marker (the next header follows at once) ends
the span at the last traced character. An assistant message with no traced character (empty
content) has a span where its role header and a marker are found between its neighbours; where
the template writes no marker at all, from its header to the next turn's (Falcon's `\nUser: `). A turn's
content or reasoning written after a later message's text (Gemma 4 writes a tool-calling turn's
text after the results it holds) makes a span of its own.  An empty past turn that writes less of
the header than the prompt does, a marker right after it, has its span there (DeepSeek V3's
`<｜Assistant｜><｜end▁of▁sentence｜>` where the prompt is `<｜Assistant｜><think>\n`).

**The family's header convention.**  The rule leaves the role header out; a few families' hand
tags take it as the turn's (`.conventions.HEADERS_THE_TURN_TAKES`: gpt-oss, whose model writes
`<|start|>assistant` itself between a turn's messages, DeepSeek and Laguna), and
`ChatProvenance.assistant_spans` follows them; `rule_spans` keeps the rule's own spans.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from typing import Any

from ...provenance import Segment
from .overlap import longest_start_before, start_ending
from .probes import ROLE_HEADER, role_header_forms

__all__ = ["infer_assistant_spans", "message_regions"]


def message_regions(
    segments: Sequence[Segment], message_count: int
) -> dict[int, list[tuple[int, int]]]:
    """For each message, the spans of the characters traced to it (its role and its tool calls'
    ids excluded, which a tool result may repeat; a tool call's name only where it is first
    written: gpt-oss and Gemma 4 write it again in the tool result's header, which is the tool
    turn's)."""
    regions: dict[int, list[tuple[int, int]]] = {}
    calls_written = set()
    for start, end, path, _, _ in segments:
        if (
            len(path) >= 3
            and path[0] == "messages"
            and path[2] != "role"
            and path[1].__class__ is int
            and path[1] < message_count
        ):
            if path[2] == "tool_calls":
                if path[-1] == "id" or path in calls_written:
                    continue
                calls_written.add(path)
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
    line_end: str = "",
    past_line_end: str = "",
    call_end: str = "",
    call_start: str = "",
    next_header: str = "",
    user_line_end: str = "",
    tool_line_end: str = "",
) -> list[tuple[int, int]]:
    """The assistant spans of `text` by the module's rule (the arguments as in
    `TurnTexts`)."""
    markers = [marker for marker in (end_of_turn, past_end_of_turn) if marker]
    last_message = len(messages) - 1
    assistants = [
        index
        for index, message in enumerate(messages)
        if isinstance(message, dict) and message.get("role") == "assistant"
    ]
    if not assistants:
        return []
    regions = message_regions(segments, len(messages))
    neighbours = _Neighbours(regions, len(messages), len(text), len(assistants) > _FEW_TURNS)
    replies: dict[int, list[tuple[int, int]]] | None = None  # (see _later_reply)
    spans: list[tuple[int, int]] = []
    later: list[tuple[int, int]] = []  # (see _later_reply)
    for index in assistants:
        own = sorted(regions.get(index, ()))
        if not own:
            # Nothing of the turn is traced (empty content): its generation prompt between the
            # neighbouring messages, then the marker, make the span.
            if neighbours.sorted:
                low = neighbours.end_before[index]
                high = neighbours.start_after[index]
            else:
                low = max(
                    (end for other, found in regions.items() if other < index for _, end in found),
                    default=0,
                )
                high = min(
                    (
                        start
                        for other, found in regions.items()
                        if other > index
                        for start, _ in found
                    ),
                    default=len(text),
                )
            if spans:
                low = max(low, spans[-1][1])
            start = _prompt_end(text, low, high, generation_prompt)
            if start is None and generation_prompt:
                start = _short_header_end(text, low, high, generation_prompt, markers)
            if start is None:
                if generation_prompt or not past_end_of_turn or not end_of_turn:
                    continue
                # No role header at all (Mistral, Llama 2), and a user turn ends otherwise: the
                # turn is its marker, " </s>", after the user turn's.
                user_end = text.find(past_end_of_turn, low, high)
                if user_end >= 0:
                    low = user_end + len(past_end_of_turn)
                start = text.find(end_of_turn, low, high)
                if start < 0:
                    continue
                if user_end >= 0:
                    # (the whitespace the reply writes after the user's marker, before its
                    # own: Llama 2's "  </s>")
                    start = _after_turn_end(text, low, start, user_line_end, -1)
            found = _marker_end(text, markers, start, high)
            if found is not None:
                after = line_end if index == last_message else past_line_end
                spans.append((start, _line_end(text, found, high, after)))
            elif not markers and next_header:
                # No marker ends a turn: the empty turn runs to where the next turn's header
                # (or its start: a tool result's line end) begins, the next user's or the next
                # assistant's; where none is found, the turn has no span.
                end = _header_start(text, start, high, next_header, generation_prompt)
                if end > start:
                    spans.append((start, end))
            continue
        first = own[0][0]
        if neighbours.sorted:
            following = neighbours.following(index, first)  # where the next message's text begins
            before = neighbours.before(index, first)  # where the last one's before the turn ends
        else:  # (a few turns: the walk over the other messages costs less than sorting them)
            following = len(text)
            before = 0
            for other, found in regions.items():
                if other == index:
                    continue
                for start, end in found:
                    if first <= start < following:
                        following = start
                    if before < end <= first:
                        before = end
        last = max(end for start, end in own if start < following)
        message_end = before  # (where the text of the message before ends)
        if spans:
            # (a turn the template writes without a header of its own, after a dropped tool
            # turn, does not reach back into the turn before)
            before = max(before, spans[-1][1])
        start = _after_prompt(text, before, first, generation_prompt)
        if (
            start == first
            and call_start
            and first - len(call_start) >= before
            and text.startswith(call_start, first - len(call_start))
        ):
            start = first - len(call_start)
        if not generation_prompt and start > before:
            previous = messages[index - 1] if index else None
            after_tool = isinstance(previous, dict) and previous.get("role") == "tool"
            start = _after_turn_end(
                text, before, start, tool_line_end if after_tool else user_line_end, message_end
            )
        found = _marker_end(text, markers, last, following)
        if found is None and call_end:
            found = _call_end(text, call_end, last, following)
        if found is None:
            spans.append((start, last))
        else:
            after = line_end if index == last_message else past_line_end
            spans.append((start, _line_end(text, found, following, after)))
        if own[-1][0] >= following:
            if replies is None:
                replies = _replies(segments)
            later.extend(_later_reply(replies.get(index, ()), spans[-1][1]))
    if later:
        return _disjoint(sorted(spans + later))
    return spans


# Up to this many assistant turns, each turn's neighbours are found by a walk over the other
# messages (cheaper than sorting for a short conversation; quadratic for a long one).
_FEW_TURNS = 16


class _Neighbours:
    """Where the other messages' text lies around a turn, read off sorted lists of the
    regions' starts and ends (and running bounds by message index) instead of a walk over every
    message for each turn: linear in the segments, whatever the number of turns."""

    def __init__(
        self, regions: dict[int, list[tuple[int, int]]], count: int, length: int, sort: bool
    ) -> None:
        self.sorted = sort
        self.length = length
        if not sort:
            return  # (a few turns: see _FEW_TURNS)
        starts = sorted((start, other) for other, found in regions.items() for start, _ in found)
        ends = sorted((end, other) for other, found in regions.items() for _, end in found)
        self.starts = starts
        self.start_keys = [start for start, _ in starts]
        self.ends = ends
        self.end_keys = [end for end, _ in ends]
        # the furthest end of the messages before each index, the first start of those after
        highest = [max((end for _, end in regions.get(i, ())), default=0) for i in range(count)]
        lowest = [
            min((start for start, _ in regions.get(i, ())), default=length) for i in range(count)
        ]
        self.end_before = [0] * count
        self.start_after = [length] * count
        for i in range(1, count):
            self.end_before[i] = max(self.end_before[i - 1], highest[i - 1])
        for i in range(count - 2, -1, -1):
            self.start_after[i] = min(self.start_after[i + 1], lowest[i + 1])

    def following(self, index: int, first: int) -> int:
        """The first start at or after `first` of another message's text (else the end)."""
        at = bisect_left(self.start_keys, first)
        starts = self.starts
        while at < len(starts) and starts[at][1] == index:
            at += 1
        return starts[at][0] if at < len(starts) else self.length

    def before(self, index: int, first: int) -> int:
        """The last end at or before `first` of another message's text (else 0)."""
        at = bisect_right(self.end_keys, first) - 1
        ends = self.ends
        while at >= 0 and ends[at][1] == index:
            at -= 1
        return ends[at][0] if at >= 0 else 0


_REPLY_FIELDS = frozenset(["content", "reasoning_content", "reasoning", "thinking"])


def _replies(segments: Sequence[Segment]) -> dict[int, list[tuple[int, int]]]:
    # The segments of each message's text and reasoning, by message, in the segments' order.
    found: dict[int, list[tuple[int, int]]] = {}
    for start, end, path, _, _ in segments:
        if len(path) >= 3 and path[0] == "messages" and path[2] in _REPLY_FIELDS:
            found.setdefault(path[1], []).append((start, end))
    return found


def _later_reply(replies: Iterable[tuple[int, int]], low: int) -> list[tuple[int, int]]:
    # A turn's reply written after other messages' text: Gemma 4 writes a tool-calling turn's
    # content after the tool results it holds.  Its text and reasoning only (a tool result may
    # repeat a call's id).
    found: list[tuple[int, int]] = []
    for start, end in replies:
        if start >= low:
            if found and start <= found[-1][1]:
                found[-1] = (found[-1][0], max(end, found[-1][1]))
            else:
                found.append((start, end))
    return found


def _disjoint(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    joined: list[tuple[int, int]] = []
    for start, end in spans:
        if joined and start < joined[-1][1]:
            joined[-1] = (joined[-1][0], max(end, joined[-1][1]))
        else:
            joined.append((start, end))
    return joined


def _header_start(text: str, low: int, high: int, header: str, prompt: str) -> int:
    # Where the next turn's header, `header` (a user's) or `prompt` (an assistant's), begins in
    # text[low:high], the whitespace that separates turns before it included (Alpaca's "\n\n"
    # before "### Response:"); else where a start of `header` ends the range; else `low`.  A
    # range that holds a line of the user's header (a prompt misread) is not a turn's.
    end = low
    found = [at for at in (text.find(header, low, high), text.find(prompt, low, high)) if at >= 0]
    if found:
        end = min(found)
        separator = header[: len(header) - len(header.lstrip())]
        if (
            separator
            and end - len(separator) >= low
            and text.startswith(separator, end - len(separator))
        ):
            end -= len(separator)
    else:
        size = start_ending(text, low, high, header, len(header))
        if size:
            end = high - size
    held = text[low:end]
    if any(line.strip() and line.strip() in held for line in header.splitlines()):
        return low
    return end


def _after_turn_end(
    text: str, low: int, start: int, line_end: str, message_end: int | None = None
) -> int:
    # A template that writes no generation prompt (the user turn writes the assistant's header,
    # or none is written): the whitespace between the template's text that ends the turn before
    # and the reply is the reply's, what the model writes after the prompt (Llama 2's " "
    # after " [/INST]"), except `line_end`, which the turn before writes when it ends the
    # conversation.  Whitespace right after the last message's own text (`message_end`, else
    # `low`: no template text between; -1: template text ends at `low`) separates the two:
    # `start` stays.
    at = start
    while at > low and text[at - 1].isspace():
        at -= 1
    if at == start or at == (low if message_end is None else message_end):
        return start
    if line_end and text.startswith(line_end, at):
        at = min(at + len(line_end), start)
    return at


def _line_end(text: str, end: int, high: int, line_end: str) -> int:
    # Only whitespace that ends a line: spaces alone after a marker go with what follows (a
    # tokenizer joins a space to the word after it: LLaVA's "</s> " before "[INST]").
    if "\n" not in line_end:
        return end
    if end + len(line_end) <= high and text.startswith(line_end, end):
        return end + len(line_end)
    return end


def _call_end(text: str, call_end: str, low: int, high: int) -> int | None:
    # The call's end as the probe wrote it, else from each of its special tokens on (the
    # probe's argument is a string; a number's JSON has no closing quote).
    for at, char in enumerate(call_end):
        if at == 0 or char == "<":
            found = text.find(call_end[at:], low, high)
            if found >= 0:
                return found + len(call_end) - at
    return None


def _marker_end(text: str, markers: list[str], low: int, high: int) -> int | None:
    # Where the first of the markers found in text[low:high] ends (the markers in order).
    for marker in markers:
        at = text.find(marker, low, high)
        if at >= 0:
            return at + len(marker)
    return None


def _prompt_end(text: str, low: int, high: int, generation_prompt: str) -> int | None:
    # Where the first role header in text[low:high] ends.
    for prompt in role_header_forms(generation_prompt):
        found = text.find(prompt, low, high)
        if found >= 0:
            return found + len(prompt)
    return None


def _short_header_end(
    text: str, low: int, high: int, generation_prompt: str, markers: list[str]
) -> int | None:
    # Where a start of the role header that a marker follows at once ends in text[low:high]:
    # an empty past turn may write less of the header than the prompt does (DeepSeek V3's
    # "<｜Assistant｜><｜end▁of▁sentence｜>" where the prompt is "<｜Assistant｜><think>\n").
    header = ROLE_HEADER.match(generation_prompt).group().strip()  # type: ignore[union-attr]
    found = longest_start_before(text, low, high, header, markers, 2)
    return None if found is None else found[1]


def _after_prompt(text: str, low: int, first: int, generation_prompt: str) -> int:
    for prompt in role_header_forms(generation_prompt):
        found = text.rfind(prompt, low, first)
        if found >= 0:
            return found + len(prompt)
    return first
