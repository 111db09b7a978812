"""A JSONL or Parquet file of generated text to a JSONL or Parquet file of parsed messages,
streaming: `minijinja-py parse`'s driver, the way back's sibling of `files.render_stream`.

The files are read and written by `files.py`'s sources and sinks, a chunk of rows at a time, so
memory stays flat however long the input. Row N of the output answers row N of the input,
always, as in `minijinja-py batch`:

- a blank JSONL line (nothing but whitespace) is no row: it is skipped and counted, and the rows
  after it keep their line numbers (`input_line` of an error record);
- a line longer than `MAX_LINE_BYTES` is an error row, read past without being held;
- a line that is not JSON, a row without its response, a response the template cannot read:
  each is an error row in its own place, and the run goes on.

A JSONL result line is `{<pass-through keys>, "message": {...}, "error": null}` (the message
an object); a Parquet result row holds the pass-through columns, `message` as JSON text (see
`response_columns`) and `error`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .files import Lines, RowSizeError, Sink, Source
from .inputs import MAX_LINE_BYTES
from .response_columns import parse_arrow, parse_records, parsed_records_to_arrow
from .responses import RowParser
from .rows import parse_json

__all__ = ["ParseCounts", "encode_parsed", "parse_stream"]


@dataclass
class ParseCounts:
    """What a run did: rows written, of which failed, and blank lines skipped."""

    rows: int = 0
    errors: int = 0
    skipped: int = 0


def encode_parsed(record: dict[str, Any]) -> bytes:
    """One result row as a UTF-8 JSON line (with its line end). A lone surrogate in the text
    is kept as a `\\u` escape, and a pass-through value JSON has no type for (a Parquet date,
    bytes) is written as its text: no value a row holds can stop the run."""
    try:
        return json.dumps(record, ensure_ascii=False, default=str).encode("utf-8") + b"\n"
    except UnicodeEncodeError:
        return json.dumps(record, default=str).encode("ascii") + b"\n"


def _line_records(parser: RowParser, chunk: Lines) -> tuple[list[dict[str, Any]], int]:
    """The result rows of a chunk of JSONL lines, and how many blank lines it skipped."""
    records, skipped = [], 0
    for index, raw in enumerate(chunk.lines):
        number = chunk.first + index
        value: Any = None
        if index in chunk.too_long:
            record = parser.failed_row(
                RowSizeError(
                    f"the line is {chunk.too_long[index]:,} bytes, longer than the "
                    f"{MAX_LINE_BYTES:,} bytes of a row: not read"
                )
            )
        elif not raw.strip(b" \t\r\n"):
            skipped += 1  # (a blank line is no row, as JSONL readers skip it)
            continue
        else:
            try:
                value = parse_json(raw.decode("utf-8"))
            except (ValueError, UnicodeDecodeError) as exc:  # (JSONDecodeError is one)
                record = parser.failed_row(exc)
            else:
                record = parser.parse_value(value)
        if record["error"] is not None:
            record["error"]["input_line"] = number
        records.append(record)
    return records, skipped


def parse_stream(
    parser: RowParser,
    source: Source,
    sink: Sink,
    *,
    output_format: str,
    chunk_size: int = 256,
) -> ParseCounts:
    """Parse every row of `source` (`files.open_source`) into `sink` (`files.open_sink`),
    `chunk_size` lines or Parquet rows at a time; `output_format` is `"jsonl"` or
    `"parquet"`, as `files.file_format` names the output's."""
    counts = ParseCounts()
    for chunk in source.chunks(chunk_size):
        if isinstance(chunk, Lines):
            records, skipped = _line_records(parser, chunk)
            counts.skipped += skipped
        elif output_format == "jsonl":
            records = parse_records(
                parser, _columns(parser, chunk.batch), chunk.first, num_rows=chunk.batch.num_rows
            )
        else:  # (Parquet to Parquet: the pass-through columns keep their Arrow types)
            batch = parse_arrow(parser, chunk.batch, chunk.first)
            _count(counts, batch.num_rows, batch.num_rows - batch.column("error").null_count)
            sink.write(batch)
            continue
        _count(counts, len(records), sum(1 for r in records if r["error"] is not None))
        if not records:
            continue  # (a chunk of blank lines)
        if output_format == "jsonl":
            sink.write(b"".join(map(encode_parsed, records)))
        else:
            sink.write(parsed_records_to_arrow(parser, records))
    return counts


def _columns(parser: RowParser, batch: Any) -> dict[str, list[Any]]:
    """The columns of an Arrow batch that the parser reads or passes through, as lists."""
    names = (parser.response_key, parser.prefix_key, *parser.passthrough)
    return {name: batch.column(name).to_pylist() for name in batch.schema.names if name in names}


def _count(counts: ParseCounts, rows: int, errors: int) -> None:
    counts.rows += rows
    counts.errors += errors
