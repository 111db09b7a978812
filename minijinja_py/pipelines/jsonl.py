"""Blocks of JSON lines in, blocks of JSON result lines out, line N answering line N.

Lines are split on `\\n` only (a raw `\\r` inside a line stays in it; a `\\r\\n` ending loses
its `\\r`), undecodable bytes become U+FFFD, and a line that is not a conversation becomes an
error record in its own place. Each output line is a JSON object: the pass-through keys first
(`null` where a line lacks them), then the renderer's result columns.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .fastjson import FAST_ENCODE, exactly_encodable
from .rows import RowRenderer, parse_json

__all__ = ["encode_records", "render_line", "render_lines"]


def _line_text(raw: bytes) -> str:
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return raw.decode("utf-8", "replace")


def render_line(renderer: RowRenderer, raw: bytes) -> dict[str, Any]:
    """The output record of one raw input line: its pass-through keys, then the result."""
    try:
        value = parse_json(_line_text(raw))
    except Exception as exc:  # invalid JSON, too deep, too long a number: this line's error
        return {**dict.fromkeys(renderer.passthrough), **renderer.failed_row(exc)}
    kept = {
        key: value.get(key) if isinstance(value, dict) else None for key in renderer.passthrough
    }
    return {**kept, **renderer.render_value(value)}


# One encoder for every record: json.dumps given ensure_ascii builds a new one per call (a
# third of the time of writing a short record). Compact, as msgspec writes (fastjson).
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _dump(record: dict[str, Any]) -> str:
    text = _ENCODE(record)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate in a pass-through value: keep it, escaped
        text = json.dumps(record, separators=(",", ":"))
    return text


def encode_records(records: list[dict[str, Any]]) -> bytes:
    """Records as compact UTF-8 JSON lines (a lone surrogate in a value is kept as a `\\u`
    escape)."""
    if not records:
        return b""
    if FAST_ENCODE is not None:
        encode = FAST_ENCODE
        try:
            lines = [
                encode(record) if exactly_encodable(record) else _ENCODE(record).encode()
                for record in records
            ]
            return b"\n".join(lines) + b"\n"
        except Exception:  # noqa: BLE001, S110 - a lone surrogate (json escapes it) or whatever
            pass  # else msgspec refuses: json's path below writes, or fails, as without msgspec
    try:
        return ("\n".join(map(_ENCODE, records)) + "\n").encode()
    except UnicodeEncodeError:  # rare: escape only the records that need it
        return ("\n".join(_dump(r) for r in records) + "\n").encode()


def render_lines(renderer: RowRenderer, lines: Iterable[bytes]) -> tuple[bytes, int, int]:
    """The UTF-8 output lines of `lines` (raw input lines), with the counts of lines and of
    failed lines."""
    records = [render_line(renderer, raw) for raw in lines]
    errors = sum(1 for record in records if record["error"] is not None)
    return encode_records(records), len(records), errors
