"""Content parsers: the text a region captured, made into the value of its message field;
and `transform` templates that reshape that value (transformers 5.23's `content` and
`transform` of a response_template field).

Every parser runs in time linear in the region's text: string delimiters are found with
`str.find`, tag patterns on the linear matcher of pattern.py, and JSON deeper than
`MAX_JSON_DEPTH` is refused before `json` recurses into it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...errors import bounded_repr
from ..loading import MAX_JSON_DEPTH, json_deeper_than
from .literals import read_literals
from .pattern import Pattern, find_all

__all__ = [
    "CONTENT_PARSERS",
    "STREAMABLE_PARSERS",
    "PlaceholderError",
    "apply_transform",
    "check_transform",
    "parse_content",
]

#: parsers whose streamed chunks are the value itself (`dirty: False` in events)
STREAMABLE_PARSERS = frozenset({"text", "int", "float", "bool"})
# ("python" is this project's extension to transformers' set: calls and values written in Python
# or JSON syntax, read by literals.py)
CONTENT_PARSERS = ("text", "int", "float", "bool", "json", "xml-inline", "kv-lines", "python")

# (the text of the template's own transform strings, not of the response)
_PLACEHOLDER = re.compile(r"\{(\w+(?:\.\w+)*)\}")
# Bare keys written without quotes: a class of one character, then a word: linear.
_BARE_KEY = re.compile(r"(?<=[{,])(\w+):")
_OPEN, _CLOSE = "\x01", "\x02"


class PlaceholderError(KeyError, ValueError):
    """A transform names a value the region did not produce. A `KeyError` as in
    transformers, and a `ValueError` as every error of parsing a response is."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def _strip(text: str, args: dict[str, Any]) -> str:
    return text.strip() if args.get("strip", True) else text


def loads(text: str) -> Any:
    """`json.loads`, with nesting past MAX_JSON_DEPTH refused as invalid JSON."""
    if json_deeper_than(text, MAX_JSON_DEPTH):
        raise ValueError(f"JSON nested more than {MAX_JSON_DEPTH} levels deep")
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError(f"JSON nested more than {MAX_JSON_DEPTH} levels deep") from None


def _swap_delimited(text: str, delims: list[Any]) -> tuple[str, list[str]]:
    """Each string written between custom delimiters replaced by a numbered placeholder
    (left to right, shortest body, as a lazy `open(.*?)close` substitution would)."""
    captured: list[str] = []
    for pair in delims:
        if not (
            isinstance(pair, (list, tuple))
            and len(pair) == 2
            and all(isinstance(p, str) for p in pair)
        ):
            raise ValueError("json: each string_delims entry must be [open, close] strings")
        opener, closer = pair
        if not opener:
            raise ValueError("json: a string_delims opener cannot be empty")
        pieces, pos = [], 0
        while True:
            start = text.find(opener, pos)
            if start < 0:
                break
            end = text.find(closer, start + len(opener))
            if end < 0:
                break
            pieces.append(text[pos:start])
            captured.append(text[start + len(opener) : end])
            pieces.append(f"{_OPEN}{len(captured) - 1}{_CLOSE}")
            pos = end + len(closer)
        pieces.append(text[pos:])
        text = "".join(pieces)
    return text, captured


def _json(text: str, args: dict[str, Any]) -> Any:
    delims = args.get("string_delims") or []
    if delims and (_OPEN in text or _CLOSE in text):
        raise ValueError("json: the region holds \\x01 or \\x02, reserved for string_delims")
    working, captured = _swap_delimited(text, delims) if delims else (text, [])
    if args.get("unquoted_keys", False):
        working = _BARE_KEY.sub(r'"\1":', working)
    for index, body in enumerate(captured):
        working = working.replace(f"{_OPEN}{index}{_CLOSE}", json.dumps(body))
    try:
        return loads(working)
    except ValueError as exc:
        if args.get("allow_non_json"):
            return _strip(text, args)
        raise ValueError(
            f"json: the region is not valid JSON ({exc}); region: {bounded_repr(text)}"
        ) from None


def _sub_value(raw: Any, value_parser: Any) -> Any:
    if value_parser is None or raw is None:
        return raw
    if not isinstance(value_parser, dict):
        raise ValueError("value_parser must be an object with 'name' and optional 'args'")
    return parse_content(raw, value_parser.get("name", "text"), value_parser.get("args", {}))


def _xml_inline(text: str, args: dict[str, Any]) -> dict[str, Any]:
    source = args.get("tag_pattern")
    if source is None:
        raise ValueError("xml-inline: content_args needs a 'tag_pattern'")
    pattern = tag_pattern(source)
    if "key" not in pattern.groupindex:
        raise ValueError(
            f"xml-inline: tag_pattern needs a group named 'key': {bounded_repr(source)}"
        )
    merge = args.get("merge_duplicates", False)
    out: dict[str, Any] = {}
    for match in find_all(pattern, text):
        key = match.groups["key"]
        if key is None:
            raise ValueError(
                f"xml-inline: tag_pattern matched without its 'key': {bounded_repr(source)}"
            )
        value = _sub_value(match.groups.get("value", ""), args.get("value_parser"))
        if merge and key in out:
            if not isinstance(out[key], list):
                out[key] = [out[key]]
            out[key].append(value)
        else:
            out[key] = value
    return out


_TAG_PATTERNS: dict[str, Pattern] = {}


def tag_pattern(source: Any) -> Pattern:
    """xml-inline's compiled tag pattern (kept: templates are few and reused)."""
    if not isinstance(source, str):
        raise ValueError(f"xml-inline: tag_pattern must be a string, got {type(source).__name__}")
    pattern = _TAG_PATTERNS.get(source)
    if pattern is None:
        pattern = Pattern(source, "xml-inline tag_pattern")
        if len(_TAG_PATTERNS) > 256:
            _TAG_PATTERNS.clear()
        _TAG_PATTERNS[source] = pattern
    return pattern


def _kv_lines(text: str, args: dict[str, Any]) -> dict[str, Any]:
    line_sep, kv_sep = args.get("line_sep", "\n"), args.get("kv_sep", ":")
    if not (isinstance(line_sep, str) and line_sep and isinstance(kv_sep, str) and kv_sep):
        raise ValueError("kv-lines: line_sep and kv_sep must be non-empty strings")
    out: dict[str, Any] = {}
    for line in text.split(line_sep):
        line = _strip(line, args)
        if line and kv_sep in line:
            key, value = line.split(kv_sep, 1)
            out[_strip(key, args)] = _sub_value(_strip(value, args), args.get("value_parser"))
    return out


def _calls_by_name_key(value: Any) -> Any:
    # A call written as an object whose one key is its name (`{"get_weather": {"city": ...}}`)
    # reads as a pythonic call does: {"name": ..., "arguments": ...}.
    if isinstance(value, list):
        return [_calls_by_name_key(item) for item in value]
    if isinstance(value, dict) and len(value) == 1:
        [(name, arguments)] = value.items()
        if isinstance(name, str):
            return {"name": name, "arguments": arguments}
    return value


def parse_content(text: str, name: str, args: Any) -> Any:
    """The value of a region's text under the content parser `name`."""
    if not isinstance(args, dict):
        raise ValueError(f"content_args must be an object, got {type(args).__name__}")
    if not isinstance(text, str):
        raise ValueError(f"{name}: expected text, got {type(text).__name__}")
    if name == "text":
        return _strip(text, args)
    if name == "int":
        return int(_strip(text, args))
    if name == "float":
        return float(_strip(text, args))
    if name == "bool":
        return _strip(text, args).lower() in ("true", "1")
    if name == "json":
        return _json(text, args)
    if name == "xml-inline":
        return _xml_inline(text, args)
    if name == "kv-lines":
        return _kv_lines(text, args)
    if name == "python":
        as_list = args.get("list", False)
        if not isinstance(as_list, bool):
            raise ValueError(f"python: content_args 'list' must be a bool, got {as_list!r}")
        named = args.get("name_keys", False)
        if not isinstance(named, bool):
            raise ValueError(f"python: content_args 'name_keys' must be a bool, got {named!r}")
        value = read_literals(text, as_list)
        return _calls_by_name_key(value) if named else value
    raise ValueError(f"unknown content parser {bounded_repr(name)}; known: {list(CONTENT_PARSERS)}")


def check_transform(scope: str, transform: Any) -> None:
    """Refuse a transform string that mixes a `{placeholder}` with other text: only whole
    placeholders and plain literals are supported."""
    if isinstance(transform, dict):
        for value in transform.values():
            check_transform(scope, value)
    elif isinstance(transform, list):
        for value in transform:
            check_transform(scope, value)
    elif isinstance(transform, str):
        if _PLACEHOLDER.search(transform) and not _PLACEHOLDER.fullmatch(transform):
            raise ValueError(
                f"{scope}: the transform string {transform!r} mixes a {{placeholder}} with "
                "other text; string interpolation is not supported (write the placeholder "
                "alone, or a plain literal)"
            )


def apply_transform(transform: Any, scope: dict[str, Any]) -> Any:
    """`transform` with each whole-string placeholder (`{name}`, `{name.key.key}`) replaced by
    the value it names in `scope`."""
    if isinstance(transform, dict):
        return {key: apply_transform(value, scope) for key, value in transform.items()}
    if isinstance(transform, list):
        return [apply_transform(value, scope) for value in transform]
    if not isinstance(transform, str):
        return transform
    whole = _PLACEHOLDER.fullmatch(transform)
    if whole is None:
        return transform
    path = whole.group(1)
    root, *keys = path.split(".")
    if root not in scope:
        raise PlaceholderError(
            f"transform placeholder '{{{path}}}' names nothing the region produced "
            f"(it has: {sorted(scope)})"
        )
    value = scope[root]
    for key in keys:
        if not isinstance(value, dict):
            raise ValueError(
                f"transform placeholder '{{{path}}}' cannot index into {type(value).__name__} at '{key}'"
            )
        if key not in value:
            raise ValueError(
                f"transform placeholder '{{{path}}}' is missing key '{key}' "
                f"(it has: {bounded_repr(sorted(value, key=str))})"
            )
        value = value[key]
    return value
