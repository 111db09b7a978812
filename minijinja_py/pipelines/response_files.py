"""A JSONL or Parquet file of generated text to a JSONL or Parquet file of parsed messages,
streaming: `minijinja-py parse`'s driver, the way back's sibling of `files.render_stream`.

The files are read and written by `files.py`'s sources and sinks, a chunk of rows at a time, so
memory stays flat however long the input. Row N of the output answers row N of the input,
always, as in `minijinja-py batch`:

- a blank JSONL line (nothing but whitespace) is no row: it is skipped and counted, and the rows
  after it keep their line numbers (`input_line` of an error record);
- a line longer than `MAX_LINE_BYTES` is an error row, read past without being held;
- a line that is not JSON, a row without its response, a response the template cannot read:
  each is an error row in its own place, and the run goes on;
- with worker processes, a chunk whose worker dies is parsed again a row at a time, and a row
  that kills its worker alone is an error row (`WorkerError`).

A JSONL result line is `{<pass-through keys>, "message": {...}, "error": null}` (the message
an object); a Parquet result row holds the pass-through columns, `message` as JSON text (see
`response_columns`) and `error`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .files import (
    Chunk,
    Lines,
    Rows,
    RowSizeError,
    Sink,
    Source,
    WorkerError,
)
from .inputs import MAX_LINE_BYTES
from .pool import WorkerPool, run_in_order
from .response_columns import parse_arrow, parse_records, parsed_records_to_arrow
from .responses import RowParser
from .rows import error_record, parse_json

__all__ = ["ParseCounts", "encode_parsed", "parse_chunk", "parse_stream"]


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


def parse_chunk(parser: RowParser, chunk: Lines | Rows, output_format: str) -> Chunk:
    """The rows of `chunk` (JSONL lines or an Arrow batch) parsed and encoded for
    `output_format`: `Chunk.output` is JSONL bytes or an Arrow batch."""
    if isinstance(chunk, Rows) and output_format != "jsonl":
        # (Parquet to Parquet: the pass-through columns keep their Arrow types)
        batch = parse_arrow(parser, chunk.batch, chunk.first)
        errors = batch.num_rows - batch.column("error").null_count
        return Chunk(batch, batch.num_rows, errors, 0, len(chunk))
    skipped = 0
    if isinstance(chunk, Lines):
        records, skipped = _line_records(parser, chunk)
    else:
        batch = chunk.batch
        records = parse_records(parser, _columns(parser, batch), chunk.first, num_rows=len(chunk))
    errors = sum(1 for record in records if record["error"] is not None)
    output: Any = (
        b"".join(map(encode_parsed, records))
        if output_format == "jsonl"
        else parsed_records_to_arrow(parser, records)
    )
    return Chunk(output, len(records), errors, skipped, len(chunk))


def _columns(parser: RowParser, batch: Any) -> dict[str, list[Any]]:
    """The columns of an Arrow batch that the parser reads or passes through, as lists."""
    names = (parser.response_key, parser.prefix_key, *parser.passthrough)
    return {name: batch.column(name).to_pylist() for name in batch.schema.names if name in names}


def parse_stream(
    parser: RowParser,
    source: Source,
    sink: Sink,
    *,
    output_format: str,
    chunk_size: int = 256,
    workers: int = 1,
) -> ParseCounts:
    """Parse every row of `source` (`files.open_source`) into `sink` (`files.open_sink`) in
    order, `chunk_size` lines or Parquet rows at a time; `output_format` is `"jsonl"` or
    `"parquet"`, as `files.file_format` names the output's.

    With `workers > 1` a process pool parses chunks, at most `2 * workers` in flight. A chunk
    whose worker dies or fails is parsed again a row at a time, each row alone in a fresh pool,
    and a row that fails alone is an error row (`WorkerError`): no other row is lost."""
    counts = ParseCounts()

    def deliver(done: Chunk) -> None:
        if done.rows:
            sink.write(done.output)
        counts.rows += done.rows
        counts.errors += done.errors
        counts.skipped += done.skipped

    if workers <= 1:
        for chunk in source.chunks(chunk_size):
            deliver(parse_chunk(parser, chunk, output_format))
        return counts
    pool = WorkerPool(workers, (parser, output_format), _init_worker, _parse_in_worker)
    run_in_order(
        pool,
        source.chunks(chunk_size),
        workers,
        deliver,
        lambda one, exc: _dead_row(parser, one, output_format, exc),
    )
    return counts


# -- the worker processes -----------------------------------------------------------------------

_WORKER: dict[str, Any] = {}


def _init_worker(parser: RowParser, output_format: str) -> None:
    _WORKER["parser"], _WORKER["format"] = parser, output_format


def _parse_in_worker(chunk: Lines | Rows) -> Chunk:
    return parse_chunk(_WORKER["parser"], chunk, _WORKER["format"])


def _dead_row(
    parser: RowParser, chunk: Lines | Rows, output_format: str, exc: BaseException
) -> Chunk:
    """The error row of a one-row chunk whose parsing killed or failed its worker (made here,
    parsing nothing of the row)."""
    if isinstance(chunk, Lines) and not chunk.lines[0].strip(b" \t\r\n") and not chunk.too_long:
        return Chunk(b"" if output_format == "jsonl" else None, 0, 0, 1, 1)  # (a blank line)
    kept = None
    if isinstance(chunk, Rows):
        names = [n for n in parser.passthrough if n in chunk.batch.schema.names]
        kept = {name: chunk.batch.column(name)[0].as_py() for name in names}
    failure = WorkerError(
        "the worker process parsing this row died or failed, twice "
        f"({type(exc).__name__}: {error_record(exc)['message']})"
    )
    record = parser.failed_row(failure, kept)
    record["error"]["input_line"] = chunk.first
    output: Any = (
        encode_parsed(record)
        if output_format == "jsonl"
        else parsed_records_to_arrow(parser, [record])
    )
    return Chunk(output, 1, 1, 0, 1)
