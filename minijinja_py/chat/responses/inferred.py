"""A response template inferred from the chat template itself: the way back from what a model
writes to the message it meant, for a template nobody wrote a `response_template` for.

The chat template is rendered on probe messages (content alone; with reasoning under each field
name templates read; with one tool call, its arguments as a dict and as a string; with two calls),
and the texts are compared: what the template writes before and after each field is the marker
that opens and closes it in a generated turn, and how it writes a call (a JSON object, a JSON
list of them, or the name outside and JSON arguments after it) is how a generated call is read.
The result is a response template in transformers' format (`fields` with literal `open`/
`close` markers, `content` parsers, a `transform` for calls), read by the same parser as a model
folder's own, so that an inferred parser and a written one behave alike.

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

__all__ = ["InferredResponseTemplate", "infer_response_template"]

#: render(messages, add_generation_prompt, tools) -> text
Render = Callable[[list[dict[str, Any]], bool, "list[dict[str, Any]] | None"], str]

_USER = "Probe question 7f3a?"
_CONTENT = "Probe answer 9c1e."
_REASONING = "Probe thought 4d2b."
_NAME = "probe_function"
_NAME_2 = "probe_other"
_KEY = "probe_arg"
_VALUE = "Probe value 3b8d"
_REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
_PROBE_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": "A probe.",
            "parameters": {
                "type": "object",
                "properties": {_KEY: {"type": "string", "description": "A probe."}},
                "required": [_KEY],
            },
        },
    }
    for name in (_NAME, _NAME_2)
]
# A name written inside a pattern: what a function name may hold.
_NAME_PATTERN = r"(?P<name>[A-Za-z0-9_.\-]+)"


@dataclass
class InferredResponseTemplate:
    """A response template read off a chat template, and what it cannot give back."""

    #: The response template, in transformers' format (see `parse_response`).
    template: dict[str, Any]
    #: One sentence per field the template does not let come back, with the reason.
    lost: list[str] = field(default_factory=list)


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
        offered = _PROBE_TOOLS
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

    def turn(message: dict[str, Any], tools: list[dict[str, Any]] | None = None) -> str | None:
        try:
            return render([user, {"role": "assistant", **message}], False, tools)
        except Exception:  # (a probe the template refuses: that input does not come back)
            return None

    # The header a past turn writes: the prompt's, or its start (a prompt that pre-writes the
    # reply's first marker on the header's line: "<｜Assistant｜><think>\n").
    plain_turn = turn({"content": _CONTENT}) or ""
    after_user = plain_turn.find(_USER)
    anchor = next(
        (
            start
            for start in _header_starts(header)
            if 0 <= plain_turn.find(start, max(after_user, 0)) < plain_turn.find(_CONTENT)
        ),
        None,
    )
    if anchor is None:
        raise ValueError(
            "cannot infer a response template: the template does not write an assistant "
            f"message's content after its header {header!r}"
        )
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
    end_marker = _first_token(after_content)
    fields: dict[str, Any] = {}
    reasoning = _reasoning_field(body, lost)
    if reasoning is not None:
        fields[reasoning[0]] = reasoning[1]
        # (an empty reasoning block the template writes before every reply is not the
        # content's opener: Qwen 3's "<think>\n\n</think>\n\n")
        opener, closer = reasoning[1]["open"], reasoning[1]["close"]
        at = before_content.find(opener)
        if at >= 0 and closer in before_content[at:]:
            before_content = before_content[before_content.index(closer, at) + len(closer) :]
    calls = _tool_calls_field(body, end_marker, lost)
    section: list[str] = []
    if calls is not None:
        fields["tool_calls"], section = calls
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
    closers = [marker for marker in (end_marker, *section) if marker and marker != content.get("open")]
    if closers:
        content["close"] = closers[0] if len(closers) == 1 else closers
    fields["content"] = content
    template = {"defaults": {"role": "assistant"}, "start_anchor": anchor, "fields": fields}
    _keep_what_comes_back(template, body, reasoning[0] if reasoning else None, lost)
    return InferredResponseTemplate(template, lost)


def _keep_what_comes_back(
    template: dict[str, Any],
    body: Callable[..., str | None],
    reasoning: str | None,
    lost: list[str],
) -> None:
    """Read the probes' own turns with the template: a field whose probe does not come back
    is dropped (and named in `lost`); content that does not come back is not a parser."""
    from .parse import parse_response

    fields = template["fields"]
    close = fields["content"].get("close")
    end = close[0] if isinstance(close, list) else close

    def back(message: dict[str, Any], tools: Any = None) -> dict[str, Any] | None:
        text = body(message, tools)
        if text is None:
            return None
        if end and end in text:
            text = text[: text.rindex(end) + len(end)]
        try:
            return dict(parse_response(text, template, prefix=template["start_anchor"]))
        except ValueError:
            return None

    if "tool_calls" in fields:
        for names in ((_NAME,), (_NAME, _NAME_2)):
            got = None
            for arguments in ({_KEY: _VALUE}, json.dumps({_KEY: _VALUE})):
                got = back(_calls_message(names, arguments, ""), _PROBE_TOOLS)
                if got is not None and got.get("tool_calls"):
                    break
            calls = (got or {}).get("tool_calls") or []
            read = [(call["function"]["name"], call["function"]["arguments"]) for call in calls]
            if read != [(name, {_KEY: _VALUE}) for name in names]:
                del fields["tool_calls"]
                lost.append(
                    "tool_calls: the template's calls, read back with what was inferred, are not "
                    "the calls it was given"
                )
                break
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


def _header_starts(header: str) -> list[str]:
    # The header, then its starts at each marker boundary, longest first.
    starts = [header]
    for token in reversed(list(_TOKEN.finditer(header))):
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


# A marker: a special token (`<|im_end|>`, `</tool_call>`, `[TOOL_CALLS]`) or a word.
_TOKEN = re.compile(r"<[^<>\s]*>|\[[^\[\]\s]*\]|[^<\[\s]+|[<\[]")


def _first_token(text: str) -> str:
    # The marker at the start of `text` (after whitespace).
    found = _TOKEN.search(text)
    return found.group() if found is not None else ""


def _last_token(text: str) -> str:
    # The marker at the end of `text` (before whitespace).
    tokens = _TOKEN.findall(text)
    return tokens[-1] if tokens else ""


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
            closer = _first_token(text[end : text.index(_CONTENT)])
        else:
            closer = _first_token(text[end:])
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


def _call(name: str, arguments: Any, index: int = 0) -> dict[str, Any]:
    # (an id of nine letters and digits: Mistral's templates refuse any other)
    function = {"name": name, "arguments": arguments}
    return {"id": _ID % index, "type": "function", "function": function}


# The probe calls' ids, and what stands for an id in the texts the two calls share: a model
# writes its own ids, so an id the template writes around a call is read as any word.
_ID = "call%dabcd"
_ANY_ID = "\0" * len(_ID % 0)


@dataclass
class _Calls:
    """Where the probe's calls lie in a turn's text: (start, name, end) of each, and how they
    are read (the field's parser and transform, and a pattern when the name is outside JSON)."""

    text: str
    places: list[tuple[int, int, int]]
    spec: dict[str, Any]
    #: The text a name-outside call writes between its name and its arguments.
    between: str = ""
    #: That text, for each call.
    betweens: list[str] = field(default_factory=list)


def _calls_message(names: tuple[str, ...], arguments: Any, content: str | None) -> dict[str, Any]:
    calls = [_call(name, arguments, index) for index, name in enumerate(names)]
    return {"tool_calls": calls} if content is None else {"content": content, "tool_calls": calls}


def _probe_calls(body: Callable[..., str | None]) -> tuple[str, str | None, bool]:
    # The turn with one call, and with two (None where the template refuses two), and whether
    # its arguments had to be a JSON string.
    for arguments in ({_KEY: _VALUE}, json.dumps({_KEY: _VALUE})):
        for content in ("", None):
            one = body(_calls_message((_NAME,), arguments, content), _PROBE_TOOLS)
            if one is not None and _NAME in one and _VALUE in one:
                two = body(_calls_message((_NAME, _NAME_2), arguments, content), _PROBE_TOOLS)
                if two is not None and (_NAME_2 not in two or two.count(_VALUE) != 2):
                    two = None
                return one, two, isinstance(arguments, str)
    return "", None, False


def _tool_calls_field(
    body: Callable[..., str | None], end_marker: str, lost: list[str]
) -> tuple[dict[str, Any], list[str]] | None:
    """The tool_calls field, and the section markers around all calls (which the content field
    must stop at: they are not the reply's text)."""
    one, two, _ = _probe_calls(body)
    if not one:
        lost.append("tool_calls: the template does not write an assistant message's tool calls")
        return None
    calls = _find_calls(one, (_NAME,))
    if calls is None:
        lost.append(
            "tool_calls: the template writes a call in a form that is neither a JSON object "
            "(or a list of them) nor a name followed by JSON arguments"
        )
        return None
    spec = calls.spec
    section: list[str] = []
    if spec.get("transform_each"):
        # One JSON list holds every call: its markers are the field's.
        start, _, end = calls.places[0]
        opener, closer = _last_token(one[:start]), _first_token(one[end:])
        if not opener:
            lost.append(_NO_CALL_MARKER)
            return None
        spec = {"open": opener, **spec}
        if closer or end_marker:
            spec["close"] = closer or end_marker
        return spec, section
    start, name_at, end = calls.places[0]
    named = "open_pattern" in spec
    opener = _last_token(one[:start])
    closer = _first_token(one[end:])
    both = _find_calls(two, (_NAME, _NAME_2)) if two is not None else None
    if both is not None and len(both.places) == 2:
        # What each call writes is what the two calls' texts share around them; a marker
        # written once before (or after) all the calls is the section's.
        two = two.replace(_ID % 0, _ANY_ID).replace(_ID % 1, _ANY_ID)
        (start_1, name_1, end_1), (start_2, name_2, end_2) = both.places
        head = two[: name_1 if named else start_1]
        gap = two[end_1 : name_2 if named else start_2]
        tail = two[end_2:]
        lead = _whole_tokens_suffix(gap, _common_suffix(head, gap))
        trail = _whole_tokens_prefix(gap, commonprefix([gap, tail]))
        if len(lead) + len(trail) > len(gap):
            trail = trail[: len(gap) - len(lead)]
        opener, closer = lead.strip(), trail.strip()
        section += [_last_token(head[: len(head) - len(lead)])] if head[: len(head) - len(lead)] else []
        section += [_first_token(tail[len(trail) :])]
    elif named:
        lead = one[:name_at]
        cut = max(lead.rfind(" "), lead.rfind("\n"))
        opener = lead[cut + 1 :].strip()
    if named:
        if not opener:
            lost.append(_NO_CALL_MARKER)
            return None
        betweens = both.betweens if both is not None else [calls.between]
        spec["open_pattern"] = _literal_pattern(opener) + _NAME_PATTERN + _between_pattern(betweens)
    elif not opener:
        lost.append(_NO_CALL_MARKER)
        return None
    elif _ANY_ID in opener:
        spec = {"open_pattern": _literal_pattern(opener), **spec}
    else:
        spec = {"open": opener, **spec}
    if closer or end_marker:
        spec["close"] = closer or end_marker
    section = [marker for marker in section if marker and marker not in (opener, closer, end_marker)]
    return spec, section


def _literal_pattern(text: str) -> str:
    # The text as a pattern, an id written in it (see _ANY_ID) read as any word.
    return "[^<>\\s]*".join(_whitespace_pattern(piece) for piece in text.split(_ANY_ID))


def _between_pattern(betweens: list[str]) -> str:
    # What calls write between a name and its arguments: the same text, or the same text around
    # a part that differs per call (Kimi's index, "functions.NAME:0"), read as any word.
    if len(set(betweens)) == 1:
        return _whitespace_pattern(betweens[0])
    head = commonprefix(betweens)
    tail = _common_suffix(betweens[0][len(head) :], betweens[1][len(head) :])
    return _whitespace_pattern(head) + "[^<>\\s]*?" + _whitespace_pattern(tail)


def _whole_tokens_prefix(text: str, prefix: str) -> str:
    # `prefix` of `text` cut back to the end of its last whole marker.
    end = 0
    for token in _TOKEN.finditer(text):
        if token.end() > len(prefix):
            break
        end = token.end()
    return prefix[:end] if prefix.strip() else prefix


def _whole_tokens_suffix(text: str, suffix: str) -> str:
    # `suffix` of `text` cut forward to the start of its first whole marker.
    low = len(text) - len(suffix)
    for token in _TOKEN.finditer(text):
        if token.start() >= low:
            return text[token.start() :] if token.start() > low else suffix
    return ""


def _common_suffix(first: str, second: str) -> str:
    size = len(commonprefix([first[::-1], second[::-1]]))
    return first[len(first) - size :] if size else ""


_NO_CALL_MARKER = (
    "tool_calls: the template writes a call with no marker before it, so a generated text "
    "cannot tell a call from the content"
)


def _decoded_at(text: str, at: int) -> tuple[Any, int] | None:
    try:
        return json.JSONDecoder().raw_decode(text, at)
    except ValueError:
        return None


def _find_calls(text: str, names: tuple[str, ...]) -> _Calls | None:
    """The calls of `names` in `text`: JSON objects holding the name and the arguments, one
    JSON list of them, or each name followed by its JSON arguments."""
    places: list[tuple[int, int, int]] = []
    spec: dict[str, Any] | None = None
    between = ""
    betweens: list[str] = []
    low = 0
    for name in names:
        name_at = text.find(name, low)
        if name_at < 0:
            return None
        found = (
            _json_call(text, name, name_at)
            or _json_arguments(text, name_at, len(name))
            or _tagged_arguments(text, name_at, len(name))
        )
        if found is None:
            return None
        start, end, spec, between = found
        betweens.append(between)
        if spec.get("transform_each"):
            return _Calls(text, [(start, name_at, end)], spec)
        places.append((start, name_at, end))
        low = end
    assert spec is not None
    return _Calls(text, places, spec, between, betweens)


def _json_call(text: str, name: str, name_at: int) -> tuple[int, int, dict[str, Any], str] | None:
    """A call written as a JSON object holding the name and the arguments, or a JSON list of
    such objects: where it starts and ends, and the field's parser and transform."""
    for at in range(name_at - 1, -1, -1):
        if text[at] != "{":
            continue
        decoded = _decoded_at(text, at)
        if decoded is None or decoded[1] <= name_at:
            continue
        value, end = decoded
        if not isinstance(value, dict):
            continue
        keys = _call_keys(value, name)
        if keys is None:
            continue
        name_key, arguments_key = keys
        # Inside a JSON list of calls?
        before = text[:at].rstrip()
        if before.endswith("[") or before.endswith(","):
            bracket = before.rfind("[")
            listed = _decoded_at(text, bracket) if bracket >= 0 else None
            if listed is not None and isinstance(listed[0], list) and value in listed[0]:
                transform = {"name": f"{{{name_key}}}", "arguments": f"{{{arguments_key}}}"}
                return bracket, listed[1], {
                    "content": "json",
                    "transform_each": True,
                    "transform": {"type": "function", "function": transform},
                }, ""
        transform = {
            "name": f"{{content.{name_key}}}",
            "arguments": f"{{content.{arguments_key}}}",
        }
        return at, end, {
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": transform},
        }, ""
    return None


def _call_keys(item: dict[str, Any], name: str) -> tuple[str, str] | None:
    # (the key holding the call's name, and the one holding its arguments)
    name_key = next((key for key, value in item.items() if value == name), None)
    if name_key is None:
        return None
    for key, value in item.items():
        if key == name_key:
            continue
        if value == {_KEY: _VALUE} or (isinstance(value, str) and _VALUE in value):
            return name_key, key
    return None


def _json_arguments(
    text: str, name_at: int, name_length: int
) -> tuple[int, int, dict[str, Any], str] | None:
    """A call written as its name, then its arguments as a JSON object (gpt-oss's
    `to=functions.NAME ... <|message|>{...}`, Mistral's `[TOOL_CALLS]NAME[ARGS]{...}`)."""
    name_end = name_at + name_length
    brace = text.find("{", name_end)
    while brace >= 0:
        decoded = _decoded_at(text, brace)
        if decoded is not None and decoded[0] == {_KEY: _VALUE}:
            break
        brace = text.find("{", brace + 1)
    else:
        return None
    assert decoded is not None
    between = text[name_end:brace]
    if "\n\n" in between or len(between) > 200:
        return None
    return name_at, decoded[1], {
        "open_pattern": "",
        "repeats": True,
        "content": "json",
        "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
    }, between


def _tagged_arguments(
    text: str, name_at: int, name_length: int
) -> tuple[int, int, dict[str, Any], str] | None:
    """A call written as its name, then each argument in tags of its own (Qwen 3 Coder's
    `<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>`): the argument's tags, read off
    the probe's one argument, make the pattern of every argument."""
    name_end = name_at + name_length
    key_at = text.find(_KEY, name_end)
    value_at = text.find(_VALUE, key_at + len(_KEY)) if key_at >= 0 else -1
    if value_at < 0:
        return None
    tag_at = text.rfind("<", name_end, key_at)
    if tag_at < 0:
        return None
    key_prefix = text[tag_at:key_at]
    key_suffix = text[key_at + len(_KEY) : value_at]
    value_end = value_at + len(_VALUE)
    closing = text.find(">", value_end)
    if closing < 0 or not key_suffix.strip() or "\n\n" in text[value_end:closing]:
        return None
    value_suffix = text[value_end : closing + 1]
    tag = (
        _whitespace_pattern(key_prefix)
        + r"(?P<key>[^<>\s]+)"
        + _whitespace_pattern(key_suffix.rstrip())
        + r"\s*(?P<value>.*?)"
        + _whitespace_pattern(value_suffix)
    )
    return name_at, closing + 1, {
        "open_pattern": "",
        "repeats": True,
        "content": "xml-inline",
        "content_args": {
            "tag_pattern": tag,
            "value_parser": {"name": "json", "args": {"allow_non_json": True}},
        },
        "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
    }, text[name_end:tag_at]


def _whitespace_pattern(text: str) -> str:
    # The literal text, where any run of whitespace may be any run of whitespace.
    return r"\s*".join(re.escape(piece) for piece in re.split(r"\s+", text))
