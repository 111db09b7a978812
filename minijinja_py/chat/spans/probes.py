"""What a template writes around an assistant turn, read off probe renders.

The rule of span inference (spans/inferred.py) needs a template's role header, its end-of-turn
markers, the whitespace after them and what a tool call's turn writes around the call.  These
are read off the template itself: a few renders of made-up turns (a user turn with and without
the generation prompt; a user and an assistant turn; the same with a user turn after it; a
tool call, with and without a result), whose texts are compared.
"""

from __future__ import annotations

import re
from functools import lru_cache
from os.path import commonprefix
from typing import Any, NamedTuple

__all__ = ["ROLE_HEADER", "TurnTexts", "probe_turn_texts", "role_header_forms"]


#: The role header's text in a generation prompt: through its first line that is not blank.
ROLE_HEADER = re.compile(r"\s*[^\n]*\n?\s*")


@lru_cache(maxsize=64)  # (asked for every turn, of a template's one or two prompts)
def role_header_forms(generation_prompt: str) -> tuple[str, ...]:
    """The forms of the role header a turn may be written with."""
    # The role header: the prompt through its first line that is not blank and the whitespace
    # after it.  What a prompt writes after that (Qwen 3.5's "<think>\n") is the start of the
    # reply, which a past turn writes too.
    if not generation_prompt:
        return ()
    header = ROLE_HEADER.match(generation_prompt).group()  # type: ignore[union-attr]
    forms = [header]
    if header[0].isspace() and header.strip():
        # (the whitespace that separates turns, which a first turn does not write:
        # Falcon's "\nFalcon:")
        forms.append(header.lstrip())
    line = header.find("\n")
    if 0 <= line < len(header) - 1:
        forms.append(header[: line + 1])
    return tuple(forms)


class TurnTexts(NamedTuple):
    """What a template writes around an assistant turn, read off probe renders."""

    #: The text ``add_generation_prompt=True`` appends.
    generation_prompt: str = ""
    #: The marker written after a final assistant message.
    end_of_turn: str = ""
    #: The marker written after a user message, when it is another (gpt-oss ends the last turn
    #: with ``<|return|>`` and every past one with ``<|end|>``).
    past_end_of_turn: str = ""
    #: The whitespace written after the marker of a final assistant message (``"\n"`` in ChatML).
    line_end: str = ""
    #: The whitespace written after the marker of an assistant message that another follows.
    past_line_end: str = ""
    #: What a final tool call's turn writes after the call's arguments (gpt-oss's
    #: ``"}<|call|>``): looked for where no end-of-turn marker follows a turn.
    call_end: str = ""
    #: What a tool call's turn writes before the call's name, after its role header (Mistral's
    #: ``[TOOL_CALLS] [{"name": "``): looked for where no role header precedes a turn.
    call_start: str = ""
    #: What a template that writes no end-of-turn marker writes between an assistant turn's
    #: text and the next user turn's (Falcon's ``"\nUser: "``): where an empty turn ends.
    next_header: str = ""
    #: The whitespace a template writes after a user turn's marker when that turn ends the
    #: conversation (Llama 2 chujiezheng's newline after " [/INST]"): the user's, not the reply's.
    user_line_end: str = ""
    #: The same after a tool result that ends the conversation (Mistral's " " after
    #: " [/TOOL_RESULTS]").
    tool_line_end: str = ""
    #: What the template writes before a conversation's first user message (a default system
    #: prompt): read by the header convention of the template's family, not by the rule.
    opening: str = ""

    def rule_texts(self) -> tuple[str, ...]:
        """The texts the rule reads (spans/inferred.py), in its arguments' order: all but
        `opening`."""
        return tuple(self)[:-1]


_PROBE_USER = "Probe question 7f3a?"
_PROBE_ASSISTANT = "Probe answer 9c1e."
_PROBE_NAME = "probe_function"
_PROBE_VALUE = "Probe value 3b8d"
_PROBE_RESULT = "Probe result 5e2a"


def probe_turn_texts(render: Any) -> TurnTexts:
    """The texts a template writes around an assistant turn.

    `render(messages, add_generation_prompt)` renders with the call's other inputs; a failing
    probe (a template that wants a system message first, say) is retried with one, and one that
    does not print string contents (a vision template) with typed contents.
    """
    found = None
    for typed in (False, True):
        for system in (False, True):
            texts = _probe_shape(render, typed, system)
            if texts is None:
                continue
            if texts[1]:  # (the answer was printed: its marker read)
                return texts[0]
            found = found or texts[0]
    return found or TurnTexts()


def _text(text: str, typed: bool) -> Any:
    return [{"type": "text", "text": text}] if typed else text


def _probe_shape(render: Any, typed: bool, system: bool) -> tuple[TurnTexts, bool] | None:
    prefix = [{"role": "system", "content": _text("Probe system.", typed)}] if system else []
    user = [*prefix, {"role": "user", "content": _text(_PROBE_USER, typed)}]
    answered = [*user, {"role": "assistant", "content": _text(_PROBE_ASSISTANT, typed)}]
    try:
        without = render(user, False)
        with_prompt = render(user, True)
        reply = render(answered, False)
    except Exception:  # the probe is the template's business: try the next shape
        return None
    try:
        followed = render(
            [*answered, {"role": "user", "content": _text(_PROBE_USER, typed)}], False
        )
    except Exception:  # (then no line end is read for past turns)
        followed = ""
    marker, line_end = _marker_after(reply, _PROBE_ASSISTANT)
    past, user_line_end = _marker_after(without, _PROBE_USER)
    if marker and past.startswith(marker):
        past = ""  # (Phi 4's user line goes on with the next header)
    if len(with_prompt) > len(without) and with_prompt.startswith(without):
        prompt = with_prompt[len(without) :]
    else:
        # The user turn writes the prompt itself (Phi 3 and 4, Yi), or a conversation that
        # ends without it ends otherwise (with the EOS token): the prompt is what follows
        # the user turn's marker.
        prompt = _after_user_turn(with_prompt, (marker, past))
    trailing = ""
    if not prompt and past and marker:
        # A template that writes the next assistant header after every conversation, with or
        # without the prompt (Command R7B's tool-use template): it ends both probes' tails.
        found = _trailing_header(past, marker, _tail_after(reply, _PROBE_USER))
        if found is not None:
            trailing, prompt = found
            past = past[: len(past) - len(trailing)]
            user_line_end = ""
            marker = marker[: len(marker) - len(trailing)]
    past_line_end = _past_line_end(followed, without, (marker, past), line_end)
    call_start, call_end, tool_line_end = _call_texts(render, user, without, prompt)
    if trailing and call_end.endswith(trailing):
        call_end = call_end[: len(call_end) - len(trailing)]
    next_header = "" if marker else _between(followed, _PROBE_ASSISTANT, _PROBE_USER)
    closing = _shared_lines(prompt, next_header) if not marker else ""
    if closing.strip():
        # A template that ends a turn only where another follows (Qwen 1.5 writes
        # "<|im_end|>\n" before the next turn's "<|im_start|>", none after the last): the
        # prompt starts with that end, as the next user turn does; it is the turn before's
        # marker and line end, not the reply's header.
        prompt = prompt[len(closing) :]
        marker = closing.rstrip()
        past_line_end = closing[len(marker) :]
    opening = without[: without.rfind(_PROBE_USER)]
    texts = TurnTexts(
        prompt,
        marker,
        past,
        line_end,
        past_line_end,
        call_end,
        call_start,
        next_header,
        user_line_end,
        tool_line_end,
        opening,
    )
    return texts, _PROBE_ASSISTANT in reply


_TOKEN = re.compile(r"<[^<>\s]*>|\[[^\[\]\s]*\]|\s+|[^<\[\s]+|.")


def _token_starts(text: str) -> list[int]:
    # Where the special tokens, words and runs of whitespace of `text` start.
    return [found.start() for found in _TOKEN.finditer(text)]


def _token_cut(text: str, length: int) -> int:
    # `length` moved back to the start of the token of `text` it falls inside.
    if length >= len(text):
        return len(text)
    starts = _token_starts(text)
    return max((start for start in starts if start <= length), default=0)


def _between(text: str, first: str, second: str) -> str:
    at = text.find(first)
    end = text.find(second, at) if at >= 0 else -1
    return text[at + len(first) : end] if end >= 0 else ""


def _shared_lines(first: str, second: str) -> str:
    # The whole lines (each with its newline) that both texts start with.
    shared = commonprefix((first, second))
    return shared[: shared.rfind("\n") + 1]


def _tail_after(text: str, probe: str) -> str:
    at = text.rfind(probe)
    return text[at + len(probe) :] if at >= 0 else ""


def _trailing_header(user_tail: str, answer_tail: str, reply_tail: str) -> tuple[str, str] | None:
    # (the header written after every conversation, the part of it a past turn writes too)
    # It ends what follows the user's probe and what follows the assistant's, and the reply's
    # own assistant header, written after the user turn's marker, starts as it does.  The user
    # turn's marker is at least one token: of the cuts that fit, the first after the start.
    for cut in _token_starts(user_tail)[1:]:
        trailing = user_tail[cut:]
        if len(answer_tail) <= len(trailing) or not answer_tail.endswith(trailing):
            continue
        if not reply_tail.startswith(user_tail[:cut]):
            continue
        shared = _token_cut(trailing, len(commonprefix((trailing, reply_tail[cut:]))))
        if shared:
            return trailing, trailing[:shared]
    return None


def _after_user_turn(text: str, markers: tuple[str, str]) -> str:
    tail = text[text.rfind(_PROBE_USER) + len(_PROBE_USER) :].lstrip("\n")
    for marker in markers:
        if marker and tail.startswith(marker):
            return tail[len(marker) :].lstrip()
    return ""


def _call_texts(
    render: Any, user: list[dict[str, Any]], without: str, prompt: str
) -> tuple[str, str, str]:
    # What a tool call's turn writes before the call's name and after its arguments, and the
    # whitespace a tool result's turn ends with when it ends the conversation.
    call = {
        "id": "call_probe",
        "type": "function",
        "function": {"name": _PROBE_NAME, "arguments": {"probe_argument": _PROBE_VALUE}},
    }
    turn = {"role": "assistant", "content": "", "tool_calls": [call]}
    try:
        text = render([*user, turn], False)
    except Exception:  # a template without tool calls: neither
        return "", "", ""
    at = text.rfind(_PROBE_VALUE)
    name_at = text.find(_PROBE_NAME, len(without))
    if at < 0 or name_at < 0 or not text.startswith(without):
        return "", "", ""
    start = text[len(without) : name_at]
    header = next(iter(role_header_forms(prompt)), "")
    if header and start.startswith(header):
        start = start[len(header) :]
    # (the whitespace between the turns is not the call's: Mistral's " [TOOL_CALLS]")
    end = text[at + len(_PROBE_VALUE) :].rstrip()
    if "<" in end:
        end = _without_result_opener(render, [*user, turn], end)
    return start.lstrip(), end, _result_line_end(render, [*user, turn])


def _result_line_end(render: Any, called: list[dict[str, Any]]) -> str:
    # The whitespace after the text a tool result's turn writes last, when it ends the
    # conversation.
    # (a result that names its call, as templates that write the call's id ask)
    result = {"role": "tool", "tool_call_id": "call_probe", "content": _PROBE_RESULT}
    try:
        text = render([*called, result], False)
    except Exception:  # (a template that wants something else after a call: none)
        return ""
    at = text.rfind(_PROBE_RESULT)
    tail = text[at + len(_PROBE_RESULT) :] if at >= 0 else ""
    return tail[len(tail.rstrip()) :] if tail.strip() else ""


_OPENER = re.compile(r"<\|?([A-Za-z_][\w.-]*)>")


def _without_result_opener(render: Any, called: list[dict[str, Any]], end: str) -> str:
    # A template that writes a call's result inside the calling turn may open the result's
    # element after every call (Gemma 4's "<|tool_response>"): the element is the result's,
    # closed after the result's text, not the call's end.
    try:
        text = render([*called, {"role": "tool", "content": _PROBE_RESULT}], False)
    except Exception:  # (a template that wants something else after a call: no cut)
        return end
    at = text.rfind(_PROBE_RESULT)
    if at < 0:
        return end
    after = text[at + len(_PROBE_RESULT) :]
    for found in _OPENER.finditer(end):
        name = found.group(1)
        if f"</{name}>" in after or f"<{name}|>" in after:
            return end[: found.start()]
    return end


def _marker_after(text: str, probe: str) -> tuple[str, str]:
    # What follows the probe's text on its line (a template may write more turns after it),
    # and the whitespace after that.
    at = text.rfind(probe)
    tail = text[at + len(probe) :] if at >= 0 else ""
    if not tail.strip():
        return "", ""
    lead = len(tail) - len(tail.lstrip("\n"))
    marker = tail[lead:].split("\n", 1)[0].rstrip()
    rest = tail[lead + len(marker) :]
    return marker, rest[: len(rest) - len(rest.lstrip())]


def _past_line_end(followed: str, without: str, markers: tuple[str, str], line_end: str) -> str:
    # The whitespace after the assistant probe's marker where a user turn follows.  What the
    # next turn writes before its question must still end as the user turn's header does
    # alone (GLM writes the next turn's header, "<|user|>", as a marker: the newline after it
    # is the user turn's); where more than one cut does, the final turn's line end, else the
    # shortest (Mistral's " [INST]" is the user turn's, with its space).
    at = followed.find(_PROBE_ASSISTANT)
    question = followed.find(_PROBE_USER, at)
    if at < 0 or question < 0:
        return ""
    header = without[: without.rfind(_PROBE_USER)]
    tail_at = at + len(_PROBE_ASSISTANT)
    tail = followed[tail_at:question]
    tail_at += len(tail) - len(tail.lstrip("\n"))
    for marker in markers:
        if marker and followed.startswith(marker, tail_at):
            end = tail_at + len(marker)
            between = followed[end:question]
            space = between[: len(between) - len(between.lstrip())]
            cuts = [
                space[:size]
                for size in range(len(space) + 1)
                if between[size:] and header.endswith(between[size:])
            ]
            if line_end in cuts:
                return line_end
            return cuts[0] if cuts else ""
    return ""
