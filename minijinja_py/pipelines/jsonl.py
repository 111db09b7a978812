"""Blocks of JSON lines in, blocks of JSON result lines out, line N answering line N.

Lines are split on `\\n` only (a raw `\\r` inside a line stays in it; a `\\r\\n` ending loses
its `\\r`), undecodable bytes become U+FFFD, a blank line (only whitespace) is skipped, as JSONL
readers skip it, and a line that is not a conversation becomes an error record in its own place,
whose `input_line` is the line's number in its file. Each output line is a JSON object: the pass-through keys first
(`null` where a line lacks them), then the renderer's result columns.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from .fastjson import FAST_ENCODE, exactly_encodable
from .rows import RowRenderer, parse_json

__all__ = ["encode_record", "encode_records", "render_line", "render_lines"]


def _line_text(raw: bytes) -> str:
    if raw.endswith(b"\n"):
        raw = raw[:-1]
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return raw.decode("utf-8", "replace")


def render_line(renderer: RowRenderer, raw: bytes, number: int | None = None) -> dict[str, Any]:
    """The output record of one raw input line: its pass-through keys, then the result; an
    error record gets `number` (the line's number in its file, from 1) as its `input_line`."""
    try:
        value = parse_json(_line_text(raw))
    except Exception as exc:  # invalid JSON, too deep, too long a number: this line's error
        record = {**dict.fromkeys(renderer.passthrough), **renderer.failed_row(exc)}
    else:
        kept = {
            key: value.get(key) if isinstance(value, dict) else None for key in renderer.passthrough
        }
        record = {**kept, **renderer.render_value(value)}
    if record["error"] is not None:
        record["error"]["input_line"] = number
    return record


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


def encode_record(record: dict[str, Any]) -> bytes:
    """One record as a compact UTF-8 JSON line, without its line end (as `encode_records`
    writes it)."""
    if FAST_ENCODE is not None and exactly_encodable(record):
        try:
            return FAST_ENCODE(record)
        except Exception:  # noqa: BLE001, S110 - json's path below writes it, or fails
            pass
    try:
        return _ENCODE(record).encode()
    except UnicodeEncodeError:  # a lone surrogate: kept, escaped
        return _dump(record).encode()


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


def render_lines(
    renderer: RowRenderer, lines: Iterable[bytes], first: int = 1
) -> tuple[bytes, int, int]:
    """The UTF-8 output lines of `lines` (raw input lines, the first of them line `first` of
    its file), with the counts of rows and of failed rows.  A blank line (only whitespace) is
    no row, as in `minijinja-py batch`: no output line; the error records of the rows after it
    still name their own line (`input_line`)."""
    records = [
        render_line(renderer, raw, number)
        for number, raw in enumerate(lines, first)
        if raw.strip(b" \t\r\n")
    ]
    errors = sum(1 for record in records if record["error"] is not None)
    return encode_records(records), len(records), errors
