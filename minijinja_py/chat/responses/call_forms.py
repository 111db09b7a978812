"""How a template writes a tool call, read off the probe calls' texts: a pythonic call
(`NAME(KEY="VALUE")`, alone or in a list); an object holding the name and the arguments, in
JSON or Python syntax, or a list of them; an object whose one key is the name (Apertus); the
name then JSON arguments (gpt-oss, DeepSeek, Kimi, Mistral), arguments whose strings stand
between the template's own delimiters (Gemma), or each argument in tags of its own (Qwen 3
Coder, GLM, MiniMax); and the response template field that reads calls written that way."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from os.path import commonprefix
from typing import Any

from .literals import read_value
from .markers import ANY_ID, common_suffix, literal_pattern, whitespace_pattern

__all__ = [
    "ID",
    "KEY",
    "NAME",
    "NAME_2",
    "NAME_PATTERN",
    "PROBE_TOOLS",
    "PYTHON_CALLS",
    "VALUE",
    "FoundCalls",
    "read_as_python",
    "between_pattern",
    "calls_message",
    "decoded_at",
    "find_calls",
    "probe_call",
]

NAME = "probe_function"


NAME_2 = "probe_other"


KEY = "probe_arg"


VALUE = "Probe value 3b8d"


PROBE_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": "A probe.",
            "parameters": {
                "type": "object",
                "properties": {KEY: {"type": "string", "description": "A probe."}},
                "required": [KEY],
            },
        },
    }
    for name in (NAME, NAME_2)
]


# A name written inside a pattern: what a function name may hold.
NAME_PATTERN = r"(?P<name>[A-Za-z0-9_.\-]+)"


# The probe calls' ids (nine letters and digits; see markers.ANY_ID).
ID = "call%dabcd"




def probe_call(name: str, arguments: Any, index: int = 0) -> dict[str, Any]:
    # (an id of nine letters and digits: Mistral's templates refuse any other)
    function = {"name": name, "arguments": arguments}
    return {"id": ID % index, "type": "function", "function": function}


@dataclass
class FoundCalls:
    """Where the probe's calls lie in a turn's text: (start, name, end) of each, and how they
    are read (the field's parser and transform, and a pattern when the name is outside JSON)."""

    text: str
    places: list[tuple[int, int, int]]
    spec: dict[str, Any]
    #: The text a name-outside call writes between its name and its arguments.
    between: str = ""
    #: That text, for each call.
    betweens: list[str] = field(default_factory=list)


def calls_message(names: tuple[str, ...], arguments: Any, content: str | None) -> dict[str, Any]:
    calls = [probe_call(name, arguments, index) for index, name in enumerate(names)]
    return {"tool_calls": calls} if content is None else {"content": content, "tool_calls": calls}


def decoded_at(text: str, at: int) -> tuple[Any, int] | None:
    try:
        return json.JSONDecoder().raw_decode(text, at)
    except ValueError:
        return None


def find_calls(text: str, names: tuple[str, ...]) -> FoundCalls | None:
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
            _python_call(text, name, name_at)
            or _json_call(text, name, name_at)
            or _json_arguments(text, name_at, len(name))
            or _delimited_arguments(text, name_at, len(name))
            or _tagged_arguments(text, name_at, len(name))
        )
        if found is None:
            return None
        start, end, spec, between = found
        # (a name the call writes again after its header, MuseGlimmer's `<atem:invoke
        # name="NAME">`, is read as any word there)
        between = between.replace(name, ANY_ID)
        betweens.append(between)
        if spec.get("transform_each"):
            return FoundCalls(text, [(start, name_at, end)], spec)
        places.append((start, name_at, end))
        low = end
    assert spec is not None
    return FoundCalls(text, places, spec, between, betweens)


def _json_call(text: str, name: str, name_at: int) -> tuple[int, int, dict[str, Any], str] | None:
    """A call written as a JSON object holding the name and the arguments, or a JSON list of
    such objects: where it starts and ends, and the field's parser and transform."""
    for at in range(name_at - 1, -1, -1):
        if text[at] != "{":
            continue
        decoded = decoded_at(text, at)
        python = decoded is None  # (Python's literals, Phi-4-mini's `{'city': 'Paris'}`)
        if python:
            decoded = _python_at(text, at)
        if decoded is None or decoded[1] <= name_at:
            continue
        value, end = decoded
        if not isinstance(value, dict):
            continue
        listed = _listed(text, at, value)
        if list(value) == [name] and _probe_arguments(value[name]):
            # the name as the one key, the arguments its value (Apertus's `{"NAME": {...}}`)
            spec = {**PYTHON_CALLS, "content_args": {"list": True, "name_keys": True}}
            return (*(listed or (at, end)), spec, "")
        keys = _call_keys(value, name)
        if keys is None:
            continue
        name_key, arguments_key = keys
        if listed is not None:
            transform = {"name": f"{{{name_key}}}", "arguments": f"{{{arguments_key}}}"}
            spec = {
                "content": "json",
                "transform_each": True,
                "transform": {"type": "function", "function": transform},
            }
            return (*listed, read_as_python(spec) if python else spec, "")
        transform = {
            "name": f"{{content.{name_key}}}",
            "arguments": f"{{content.{arguments_key}}}",
        }
        spec = {
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": transform},
        }
        return at, end, read_as_python(spec) if python else spec, ""
    return None


#: The field that reads every call of a region as Python or JSON (pythonic lists, JSON objects one
#: after another): the content parser gives {"name", "arguments"} for each.
PYTHON_CALLS: dict[str, Any] = {
    "content": "python",
    "content_args": {"list": True},
    "transform_each": True,
    "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{arguments}"}},
}


def _python_call(text: str, name: str, name_at: int) -> tuple[int, int, dict[str, Any], str] | None:
    """A call written as Python, `NAME(KEY="VALUE")`, alone or in a list `[NAME(...), ...]`:
    the region of all the calls, read by the `python` content parser."""
    name_end = name_at + len(name)
    if not text.startswith("(", name_end) or not text[name_end + 1 :].lstrip().startswith(KEY):
        return None
    key_end = text.index(KEY, name_end) + len(KEY)
    if not text[key_end:].lstrip().startswith("="):
        return None
    value_at = text.find(VALUE, key_end)
    close = text.find(")", value_at + len(VALUE)) if value_at >= 0 else -1
    if close < 0:
        return None
    start, end = name_at, close + 1
    before = text[:name_at].rstrip()
    if before.endswith("["):
        bracket = text.find("]", end)
        if bracket >= 0 and not text[end:bracket].strip():
            start, end = len(before) - 1, bracket + 1
    return start, end, dict(PYTHON_CALLS), ""


def _python_at(text: str, at: int) -> tuple[Any, int] | None:
    try:
        return read_value(text, at)
    except ValueError:
        return None


def _listed(text: str, at: int, value: Any) -> tuple[int, int] | None:
    # Where the list holding the object at `at` (as one of its items) starts and ends, if any.
    before = text[:at].rstrip()
    if not (before.endswith("[") or before.endswith(",")):
        return None
    bracket = before.rfind("[")
    listed = (decoded_at(text, bracket) or _python_at(text, bracket)) if bracket >= 0 else None
    if listed is not None and isinstance(listed[0], list) and value in listed[0]:
        return bracket, listed[1]
    return None


def _probe_arguments(value: Any) -> bool:
    return value == {KEY: VALUE} or (isinstance(value, str) and VALUE in value)


def read_as_python(spec: dict[str, Any]) -> dict[str, Any]:
    """The calls `spec` reads as JSON, read instead by the python parser (a sequence of them, in
    a list or not, in a code fence or not, in Python's syntax or JSON's), under the same keys."""
    if spec.get("content") == "python":
        return spec
    function = spec["transform"]["function"]
    keys = {part: function[part].strip("{}").removeprefix("content.") for part in function}
    transform = {part: f"{{{key}}}" for part, key in keys.items()}
    return {**PYTHON_CALLS, "transform": {"type": "function", "function": transform}}


def _call_keys(item: dict[str, Any], name: str) -> tuple[str, str] | None:
    # (the key holding the call's name, and the one holding its arguments)
    name_key = next((key for key, value in item.items() if value == name), None)
    if name_key is None:
        return None
    for key, value in item.items():
        if key == name_key:
            continue
        if _probe_arguments(value):
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
        decoded = decoded_at(text, brace)
        if decoded is not None and decoded[0] == {KEY: VALUE}:
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


def _delimited_arguments(
    text: str, name_at: int, name_length: int
) -> tuple[int, int, dict[str, Any], str] | None:
    """A call written as its name, then its arguments as an object whose strings stand between
    delimiters of the template's own and whose keys may be bare (Gemma's
    `call:NAME{key:<|"|>text<|"|>}`): read as JSON with those delimiters."""
    from .content import parse_content

    name_end = name_at + name_length
    brace = text.find("{", name_end)
    key_at = text.find(KEY, brace) if brace >= 0 else -1
    value_at = text.find(VALUE, key_at) if key_at >= 0 else -1
    if value_at < 0 or value_at - name_end > 200:
        return None
    between = text[name_end:brace]
    if "\n\n" in between:
        return None
    quoted = text[key_at - 1] == '"' and text[key_at + len(KEY)] == '"'
    after_key = text[key_at + len(KEY) + quoted : value_at]
    if not after_key.startswith(":"):
        return None
    delimiter = after_key[1:].strip()
    value_end = value_at + len(VALUE)
    if not delimiter or not text.startswith(delimiter, value_end):
        return None
    args = {"string_delims": [[delimiter, delimiter]], "unquoted_keys": not quoted}
    close = text.find("}", value_end)
    while close >= 0:
        try:
            value = parse_content(text[brace : close + 1], "json", args)
        except ValueError:
            value = None
        if value == {KEY: VALUE}:
            break
        close = text.find("}", close + 1)
    else:
        return None
    return name_at, close + 1, {
        "open_pattern": "",
        "repeats": True,
        "content": "json",
        "content_args": args,
        "transform": {"type": "function", "function": {"name": "{name}", "arguments": "{content}"}},
    }, between


def _tagged_arguments(
    text: str, name_at: int, name_length: int
) -> tuple[int, int, dict[str, Any], str] | None:
    """A call written as its name, then each argument in tags of its own (Qwen 3 Coder's
    `<function=NAME>\n<parameter=KEY>\nVALUE\n</parameter>`): the argument's tags, read off
    the probe's one argument, make the pattern of every argument."""
    name_end = name_at + name_length
    key_at = text.find(KEY, name_end)
    value_at = text.find(VALUE, key_at + len(KEY)) if key_at >= 0 else -1
    if value_at < 0:
        return None
    tag_at = text.rfind("<", name_end, key_at)
    if tag_at < 0:
        return None
    key_prefix = text[tag_at:key_at]
    key_suffix = text[key_at + len(KEY) : value_at]
    value_end = value_at + len(VALUE)
    closing = text.find(">", value_end)
    if closing < 0 or not key_suffix.strip() or "\n\n" in text[value_end:closing]:
        return None
    value_suffix = text[value_end : closing + 1]
    tag = (
        whitespace_pattern(key_prefix)
        + r"(?P<key>[^<>\s]+)"
        + _any_attribute_values(whitespace_pattern(key_suffix.rstrip()))
        + r"\s*(?P<value>.*?)"
        + whitespace_pattern(value_suffix)
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


def _any_attribute_values(pattern: str) -> str:
    # An attribute the tag writes after the key is read with any value: DeepSeek V3.2's
    # `string="true"` says how the value is written, and differs per argument.
    return re.sub(r'=(\\?)"[^"\\]*"', r'=\1"[^"]*"', pattern)


def between_pattern(betweens: list[str]) -> str:
    # What calls write between a name and its arguments: the same text, or the same text around
    # a part that differs per call (Kimi's index, "functions.NAME:0"), read as any word.
    if len(set(betweens)) == 1:
        return literal_pattern(betweens[0])
    head = commonprefix(betweens)
    tail = common_suffix(betweens[0][len(head) :], betweens[1][len(head) :])
    return literal_pattern(head) + "[^<>\\s]*?" + literal_pattern(tail)
