"""A response template inferred from the chat template itself: the way back from what a model
writes to the message it meant, for a template nobody wrote a `response_template` for.

The chat template is rendered on probe messages (content alone; with reasoning under each field
name templates read; with one tool call, its arguments as a dict and as a string; with two calls),
and the texts are compared: what the template writes before and after each field is the marker
that opens and closes it in a generated turn, and how it writes a call (calls_field.py and
call_forms.py: JSON, Python, tags, the name outside) is how a generated call is read. Where past
turns are written with another header than the prompt's, the reply is read from where the
prompt ends; what the prompt writes after its header is never read as the reply.
The result is a response template in transformers' format (`fields` with `open`/`close`
markers, `content` parsers, a `transform` for calls), read by the same parser as a model
folder's own, so that an inferred parser and a written one behave alike (patterns with a final
lookahead and the `python` parser are this project's own where a form needs them).

What the template does not let come back is said when the parser is built, never on a response:
a field the template does not write, or writes without a marker that sets it apart from the text
around it, is named in `lost`; a template whose assistant content cannot be found at all raises
`ValueError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from os.path import commonprefix
from typing import Any

from .call_forms import (
    KEY,
    NAME,
    NAME_2,
    PROBE_TOOLS,
    VALUE,
    calls_message,
)
from .calls_field import tool_calls_field
from .markers import TOKEN, first_token

__all__ = [
    "UNQUOTED_STRINGS",
    "InferredResponseTemplate",
    "infer_response_template",
    "through_turn_end",
    "turn_ends",
]

#: render(messages, add_generation_prompt, tools) -> text
Render = Callable[[list[dict[str, Any]], bool, "list[dict[str, Any]] | None"], str]

_USER = "Probe question 7f3a?"
_CONTENT = "Probe answer 9c1e."
_REASONING = "Probe thought 4d2b."
_REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")


@dataclass
class InferredResponseTemplate:
    """A response template read off a chat template, and what it cannot give back."""

    #: The response template, in transformers' format (see `parse_response`).
    template: dict[str, Any]
    #: One sentence per field the template does not let come back, with the reason.
    lost: list[str] = field(default_factory=list)
    #: The header past assistant turns are written with (the start anchor, unless the prompt's
    #: header differs; empty where a reply follows the user's text with no header).
    turn_header: str = ""
    #: Whether the template writes an assistant message only when a user's turn follows it.
    needs_follow_up: bool = False


def infer_response_template(render: Render) -> InferredResponseTemplate:
    """The response template of the chat template that `render` renders.

    Raises:
        ValueError: when the assistant's content cannot be found in a generated turn: the
            template does not write it, or nothing marks where the assistant's turn begins.
    """
    user = {"role": "user", "content": _USER}
    try:
        base = render([user], False, None)
        prompt = render([user], True, None)
    except Exception as error:  # (a TemplateError, or what the template raises itself)
        # A template that renders only when tools are offered (it walks `tools` unguarded) is
        # probed with tools throughout.
        offered = PROBE_TOOLS
        plain_render = render

        def render(messages: list[dict[str, Any]], prompt: bool, tools: Any) -> str:
            return plain_render(messages, prompt, tools if tools is not None else offered)

        try:
            base = render([user], False, None)
            prompt = render([user], True, None)
        except Exception:
            raise ValueError(
                "cannot infer a response template: the template does not render a conversation "
                f"of one user message ({getattr(error, 'message', error)})"
            ) from None
    # (what the prompt adds where the two part: a template may end a conversation with a
    # marker that the prompt replaces)
    shared = len(commonprefix([base, prompt]))
    header = _start_anchor(prompt[shared:], base)

    # (a template that drops a conversation's last assistant message, taking it for the one
    # to generate, writes it when a user's turn follows)
    follow = [] if _CONTENT in _rendered(render, [user, _plain()]) else [_FOLLOW_UP]

    def turn(message: dict[str, Any], tools: list[dict[str, Any]] | None = None) -> str | None:
        try:
            return render([user, {"role": "assistant", **message}, *follow], False, tools)
        except Exception:  # (a probe the template refuses: that input does not come back)
            return None

    # The header a past turn writes: the prompt's, or its start (a prompt that pre-writes the
    # reply's first marker on the header's line: "<｜Assistant｜><think>\n").
    plain_turn = turn({"content": _CONTENT}) or ""
    after_user = plain_turn.find(_USER)
    if _CONTENT not in plain_turn or after_user < 0:
        raise ValueError(
            "cannot infer a response template: the template does not write an assistant "
            "message's content after the user's"
        )
    anchor = next(
        (
            start
            for start in _header_starts(header)
            if 0 <= plain_turn.find(start, after_user) < plain_turn.find(_CONTENT)
        ),
        None,
    )
    start_anchor: dict[str, str] = {"start_anchor": anchor or ""}
    if anchor is None:
        # Past turns are written with another header than the prompt's (CodeLlama 70B's
        # "Source: assistant" without the prompt's "Destination: user"), or none at all: the
        # reply is read from where the prompt ends, and probes from where past turns' own
        # header (or the user's text) ends.
        between = plain_turn[after_user + len(_USER) : plain_turn.find(_CONTENT)]
        anchor = between.strip() or _USER
        start_anchor = {"start_anchor_pattern": r"\Z"}
    lost: list[str] = []

    def body(message: dict[str, Any], tools: list[dict[str, Any]] | None = None) -> str | None:
        text = turn(message, tools)
        if text is None:
            return None
        at = text.find(anchor, max(text.find(_USER), 0))
        return None if at < 0 else text[at + len(anchor) :]

    plain = body({"content": _CONTENT})
    assert plain is not None and _CONTENT in plain
    before_content = plain[: plain.index(_CONTENT)]
    after_content = plain[plain.index(_CONTENT) + len(_CONTENT) :]
    end_marker = first_token(after_content)
    fields: dict[str, Any] = {}
    # What the prompt writes after the header: the model's turn goes on from there (Qwen's
    # "<think>\n", Apriel's "Here are my reasoning steps:\n").
    prewritten = prompt[prompt.rfind(anchor) + len(anchor) :] if anchor in prompt else ""
    reasoning = _reasoning_field(body, lost)
    if reasoning is not None:
        fields[reasoning[0]] = reasoning[1]
        # (an empty reasoning block the template writes before every reply is not the
        # content's opener: Qwen 3's "<think>\n\n</think>\n\n")
        opener, closer = reasoning[1]["open"], reasoning[1]["close"]
        at = before_content.find(opener)
        if at >= 0 and closer in before_content[at:]:
            before_content = before_content[before_content.index(closer, at) + len(closer) :]
    calls = tool_calls_field(body, end_marker, lost)
    section: list[str] = []
    several = False
    if calls is not None:
        fields["tool_calls"], section, several = calls
        if not several:
            lost.append(
                "tool_calls: the template writes one call per message (it refuses or drops a "
                "second), so only one comes back"
            )
        # (an empty reasoning block written before the calls is the reasoning field's)
        if reasoning is not None:
            markers = (reasoning[1]["open"], reasoning[1]["close"])
            section = [marker for marker in section if marker not in markers]
    content: dict[str, Any] = {"content": "text"}
    if before_content.strip():
        # (a reply the template opens with a marker of its own: gpt-oss's final channel)
        content["open"] = before_content.strip()
    # The reply stops at the end of the turn, and at a marker written around all the calls
    # (not at its own opener, which a template may also write before the calls).
    closers = [
        marker for marker in (end_marker, *section) if marker and marker != content.get("open")
    ]
    if "open" in content and "open_pattern" in fields.get("tool_calls", {}):
        content = _opener_beside_calls(content, fields["tool_calls"]["open_pattern"])
    if ("open" in content or "open_pattern" in content) and "tool_calls" in fields:
        # (a reply opened by a marker of its own is a region that only its closer ends: it
        # must also end where a call begins, GLM's "</think>" then "<tool_call>NAME")
        content["close_pattern"] = _ending_at_call(closers, fields["tool_calls"])
    elif closers:
        content["close"] = closers[0] if len(closers) == 1 else closers
    fields["content"] = content
    template = {"defaults": {"role": "assistant"}, **start_anchor, "fields": fields}
    if prewritten and "start_anchor" in template:
        _read_past_prewritten(template, prewritten)
    _keep_what_comes_back(template, body, reasoning[0] if reasoning else None, several, lost)
    header_written = "" if anchor == _USER else anchor
    return InferredResponseTemplate(template, lost, header_written, bool(follow))


def _read_past_prewritten(template: dict[str, Any], prewritten: str) -> None:
    """Text the prompt writes after the header must not read as the reply. An opening tag
    the past turns never write (DeepSeek R1 distill's "<think>\n": they drop reasoning) opens
    the reasoning the model writes up to its closing tag; other text (Yandex's "[SEP]", Gemma 4's
    empty thought block) is part of the header the reply starts after."""
    from .parse import parse_response

    got = parse_response("", template, prefix=template["start_anchor"] + prewritten)
    if not got.get("content"):
        return
    fields = template["fields"]
    tag = re.fullmatch(r"<(\w+)>", prewritten.strip())
    if tag is not None and not any(name in fields for name in _REASONING_FIELDS):
        fields["reasoning_content"] = {"open": tag.group(), "close": f"</{tag.group(1)}>"}
        template["fields"] = {"reasoning_content": fields.pop("reasoning_content"), **fields}
        return
    anchor = template["start_anchor"]
    template["start_anchor"] = [anchor, anchor + prewritten]


def _opener_beside_calls(content: dict[str, Any], calls_opener: str) -> dict[str, Any]:
    """A reply's opener that a call's opener also reads (Functionary's `>>>all` for the reply,
    `>>>NAME` for a call) is read with the spaces after it as a call's is, so that the two
    match alike and the tie goes to the reply (markers at one place tie by field name)."""
    from .pattern import Pattern

    opener = content["open"]
    found, _ = Pattern(calls_opener, "open_pattern").search(opener + "\n", 0, partial=False)
    if found is None or found.start != 0:
        return content
    reply = {key: value for key, value in content.items() if key != "open"}
    return {"open_pattern": re.escape(opener) + r"\s*", **reply}


def _ending_at_call(closers: list[str], calls: dict[str, Any]) -> str:
    # The closers, or (looked ahead at, not consumed) the calls' opener.
    opener = calls.get("open_pattern") or re.escape(calls["open"])
    opener = opener.replace("(?P<name>", "(?:")  # (the content's closer captures nothing)
    return "|".join([f"(?={opener})", *(re.escape(marker) for marker in closers)])


def turn_ends(template: dict[str, Any]) -> list[str]:
    """The literal markers that end a reply or a section of calls: where a model stops."""
    ends: list[str] = []
    for name in ("content", "tool_calls"):
        close = template["fields"].get(name, {}).get("close")
        ends += close if isinstance(close, list) else [close] if close else []
    return ends


def through_turn_end(text: str, ends: list[str], own: tuple[str, ...] | list[str]) -> str:
    """`text` through the first end marker after the last of the turn's `own` texts: a model
    stops there, where a template may write more (Command R+'s system turn after a reply)."""
    last = 0
    for item in set(own):  # (a text the turn holds k times: through its k-th occurrence)
        at = -len(item)
        for _ in range(own.count(item) if item else 0):
            found = text.find(item, at + len(item))
            if found < 0:
                break
            at = found
            last = max(last, at + len(item))
    stops = [(at, len(end)) for end in ends if (at := text.find(end, last)) >= 0]
    if not stops:
        return text
    at, size = min(stops)
    return text[: at + size]


def _keep_what_comes_back(
    template: dict[str, Any],
    body: Callable[..., str | None],
    reasoning: str | None,
    several: bool,
    lost: list[str],
) -> None:
    """Read the probes' own turns with the template: a field whose probe does not come back
    is dropped (and named in `lost`); content that does not come back is not a parser."""
    from .parse import parse_response

    fields = template["fields"]
    ends = turn_ends(template)

    def back(message: dict[str, Any], tools: Any = None) -> dict[str, Any] | None:
        text = body(message, tools)
        if text is None:
            return None
        text = through_turn_end(text, ends, _PROBE_TEXTS)
        try:
            return dict(parse_response(text, template, prefix=""))
        except ValueError:
            return None

    if "tool_calls" in fields:
        for names in ((NAME,), (NAME, NAME_2)) if several else ((NAME,),):
            got = None
            for arguments in ({KEY: VALUE}, json.dumps({KEY: VALUE})):
                got = back(calls_message(names, arguments, ""), PROBE_TOOLS)
                if got is not None and got.get("tool_calls"):
                    break
            calls = (got or {}).get("tool_calls") or []
            read = [(call["function"]["name"], call["function"]["arguments"]) for call in calls]
            if read != [(name, {KEY: VALUE}) for name in names]:
                del fields["tool_calls"]
                lost.append(
                    "tool_calls: the template's calls, read back with what was inferred, are not "
                    "the calls it was given"
                )
                break
        else:
            if not _awkward_strings_come_back(body, back):
                lost.append(UNQUOTED_STRINGS)
    if reasoning is not None:
        got = back({"content": _CONTENT, reasoning: _REASONING})
        if got is None or got.get(reasoning) != _REASONING or got.get("content") != _CONTENT:
            del fields[reasoning]
            lost.append(f"{reasoning}: read back with what was inferred, it is not what was given")
    got = back({"content": _CONTENT})
    if got is None or got.get("content") != _CONTENT:
        raise ValueError(
            "cannot infer a response template: the assistant's content, read back with what "
            f"was inferred, is not what was given ({_CONTENT!r} came back as "
            f"{(got or {}).get('content')!r})"
        )


def _awkward_strings_come_back(
    body: Callable[..., str | None], back: Callable[..., dict[str, Any] | None]
) -> bool:
    """Whether a string that holds what a call's syntax is made of comes back: a template that
    prints strings bare (`city=Paris`) or in quotes it does not escape writes it so that it
    reads otherwise."""
    for arguments in ({KEY: _AWKWARD}, json.dumps({KEY: _AWKWARD})):
        for content in ("", None):
            message = calls_message((NAME,), arguments, content)
            if body(message, PROBE_TOOLS) is None:
                continue  # (a probe the template refuses: try the next way of writing it)
            got = back(message, PROBE_TOOLS) or {}
            read = [call["function"]["arguments"] for call in got.get("tool_calls") or []]
            return read in ([{KEY: _AWKWARD}], [arguments])
    return True


_FOLLOW_UP = {"role": "user", "content": "Probe follow-up 5e6f?"}
# (what a probe's turn holds of its own, the last of which the turn's end marker follows)
_PROBE_TEXTS = (_CONTENT, _REASONING, VALUE, NAME, NAME_2)


def _plain() -> dict[str, Any]:
    return {"role": "assistant", "content": _CONTENT}


def _rendered(render: Render, messages: list[dict[str, Any]]) -> str:
    try:
        return render(messages, False, None)
    except Exception:  # (a template that refuses the conversation: nothing of it is written)
        return ""


def _header_starts(header: str) -> list[str]:
    # The header, then its starts at each marker boundary, longest first; and each without the
    # spaces it ends with (Granite's prompt "ASSISTANT: \n", its past turns "ASSISTANT:\n").
    starts = [header]
    if header.rstrip() and header.rstrip() != header:
        starts.append(header.rstrip())
    for token in reversed(list(TOKEN.finditer(header))):
        if token.start() > 0 and header[: token.start()].strip():
            starts.append(header[: token.start()])
    return starts


def _start_anchor(generation_prompt: str, base: str) -> str:
    # The role header the generation prompt writes (through its first line that is not blank),
    # else the marker that ends the user's turn (a template whose prompt writes nothing).
    header = re.match(r"\s*([^\n]*\n?)", generation_prompt)
    text = header.group(1) if header is not None else ""
    if text.strip():
        return text
    tail = base[base.rfind(_USER) + len(_USER) :].strip() if _USER in base else ""
    if not tail:
        raise ValueError(
            "cannot infer a response template: nothing marks where the assistant's turn begins "
            "(the generation prompt is empty and the user's turn ends with no marker)"
        )
    return tail.split()[-1]


def _reasoning_field(
    body: Callable[..., str | None], lost: list[str]
) -> tuple[str, dict[str, Any]] | None:
    for name in _REASONING_FIELDS:
        text = body({"content": _CONTENT, name: _REASONING})
        if text is None or _REASONING not in text:
            continue
        start = text.index(_REASONING)
        end = start + len(_REASONING)
        # (all the template writes before it in the turn: gpt-oss's "<|channel|>analysis<|message|>")
        opener = text[:start].strip()
        if _CONTENT in text and text.index(_CONTENT) > start:
            closer = first_token(text[end : text.index(_CONTENT)])
        else:
            closer = first_token(text[end:])
        if not opener or not closer:
            lost.append(
                f"{name}: the template writes it without a marker "
                f"{'before' if not opener else 'after'} it, so a generated text cannot tell it "
                "from the content"
            )
            return None
        return name, {"open": opener, "close": closer, "content": "text"}
    lost.append("reasoning: the template does not write an assistant message's reasoning")
    return None


_AWKWARD = 'Probe, (value) "3b8d" it\'s a\\b'

#: What `lost` says of a template whose string arguments do not all come back.
UNQUOTED_STRINGS = (
    "tool_calls: a string argument holding , ( ) \" ' or \\ does not come back as it was: the "
    "template writes strings without quotes, or in quotes it does not escape"
)
