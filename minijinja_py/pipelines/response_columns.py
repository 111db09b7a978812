"""Columns of generated text in, columns of parsed messages out: `arrow.py`'s sibling for the
way back. Arrow batches and tables (Ray Data's `map_batches`, a Parquet file's row groups) or a
dict of columns (what `datasets` hands a batched map function).

Only the parser's columns are read: the response column (`response`, or the parser's
`response_key`), the prefix column when there is one, and the pass-through columns, copied to
the output as they are; a table's other columns (the prompt, the model's name) are not looked
at. A null is an absent value, as Arrow fills one: a null prefix is the parser's prefix, a null
response fails its own row.

The output holds the pass-through columns, then `message` and `error`. `message` is the parsed
message as JSON text (null for a row that failed): a message's keys and its calls' arguments
change from row to row, which one Arrow struct type cannot hold, and JSON text keeps them as
parsed. `error` is the record `{kind, message, line, column, input_line}` of `arrow.py`'s
results. `pyarrow` is imported inside the functions that need it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from .arrow import beside_passthrough
from .responses import RowParser

__all__ = [
    "ColumnParser",
    "message_text",
    "parse_arrow",
    "parse_columns",
    "parse_records",
    "parsed_records_to_arrow",
    "parsed_schema",
]


def message_text(message: Any) -> str | None:
    """A parsed message as the JSON text the `message` column holds (None stays None); a lone
    surrogate, which UTF-8 cannot hold, is kept as a `\\u` escape."""
    if message is None:
        return None
    text = json.dumps(message, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(message)
    return text


def parse_records(
    parser: RowParser,
    columns: Mapping[str, Sequence[Any]],
    first_line: int | None = None,
    *,
    num_rows: int | None = None,
) -> list[dict[str, Any]]:
    """The result rows (`RowParser.parse_value`'s: pass-through values, the message as a dict,
    the error) of a dict of equally long columns. `first_line` is the number (from 1) of the
    first row in its input, which error records carry as `input_line`; `None` where unknown.
    `num_rows` is the number of rows where no column says it."""
    names = [name for name in (parser.response_key, parser.prefix_key) if name in columns]
    count = len(next(iter(columns.values()))) if columns else (num_rows or 0)
    kept = [name for name in parser.passthrough if name in columns]
    records = []
    for index in range(count):
        # (a null is Arrow's filling: the key is absent; the response's absence fails the row)
        row = {name: columns[name][index] for name in names if columns[name][index] is not None}
        result = parser.parse_value(row)
        if result["error"] is not None and first_line is not None:
            result["error"]["input_line"] = first_line + index
        passed = dict.fromkeys(parser.passthrough)
        passed.update({name: columns[name][index] for name in kept})
        records.append({**passed, "message": result["message"], "error": result["error"]})
    return records


def parse_columns(
    parser: RowParser,
    columns: Mapping[str, Sequence[Any]],
    first_line: int | None = None,
    *,
    num_rows: int | None = None,
) -> dict[str, list[Any]]:
    """The result columns of a dict of equally long columns (pass-through columns first), the
    message as JSON text; the arguments are `parse_records`'."""
    records = parse_records(parser, columns, first_line, num_rows=num_rows)
    out = {name: [record[name] for record in records] for name in parser.passthrough}
    out["message"] = [message_text(record["message"]) for record in records]
    out["error"] = [record["error"] for record in records]
    return out


def parsed_schema() -> Any:
    """The Arrow types of the result columns (without the pass-through ones)."""
    import pyarrow as pa

    from .arrow import error_type

    return pa.schema([pa.field("message", pa.string()), pa.field("error", error_type())])


def parse_arrow(parser: RowParser, data: Any, first_line: int | None = None) -> Any:
    """The results of an Arrow `RecordBatch` or `Table` (the same kind comes back), the
    pass-through columns copied with their types; `first_line`: see `parse_columns`."""
    present = set(data.schema.names)
    wanted = [name for name in (parser.response_key, parser.prefix_key) if name in present]
    columns = {name: data.column(name).to_pylist() for name in wanted}
    results = parse_columns(parser, columns, first_line, num_rows=data.num_rows)
    return beside_passthrough(data, parser.passthrough, results, parsed_schema())


def parsed_records_to_arrow(parser: RowParser, records: list[dict[str, Any]]) -> Any:
    """Result rows (`RowParser.parse_value`'s, the message a dict) as an Arrow `RecordBatch`."""
    import pyarrow as pa

    names = parser.passthrough
    arrays = [_passed_array([record.get(name) for record in records]) for name in names]
    fields = [pa.field(name, array.type) for name, array in zip(names, arrays, strict=True)]
    columns = {
        "message": [message_text(record["message"]) for record in records],
        "error": [record["error"] for record in records],
    }
    for field in parsed_schema():
        arrays.append(pa.array(columns[field.name], type=field.type))
        fields.append(field)
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


def _passed_array(values: list[Any]) -> Any:
    """A pass-through column of JSON rows as Arrow: typed as Arrow infers it, or, where Arrow
    cannot hold the values as one type (ids that are numbers in some rows and text in others,
    a lone surrogate), each value as its JSON text: a row's value never stops the run."""
    import pyarrow as pa

    try:
        return pa.array(values)
    except (pa.ArrowException, UnicodeEncodeError, TypeError, ValueError, OverflowError):
        return pa.array([None if v is None else json.dumps(v, default=str) for v in values])


class ColumnParser:
    """A picklable callable for batched maps: `datasets` `Dataset.map(batched=True)` (a dict
    of columns in, a dict out) and Ray Data `map_batches` (an Arrow table in, a table out),
    each row parsed by `parser` and its failure kept in its own row.

    Its pickled state is plain data (the chat template's sources and the parser's options), the
    same in every process, so `datasets` fingerprints it identically and reuses its cache; each
    process reads (or infers) the response template once, on its first batch.
    """

    def __init__(self, parser: RowParser) -> None:
        self.parser = parser

    def __call__(self, batch: Any) -> Any:
        if isinstance(batch, Mapping):
            return parse_columns(self.parser, batch)
        return parse_arrow(self.parser, batch)
