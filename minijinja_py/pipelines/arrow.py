"""Columns of conversations in, columns of results out: Arrow batches and tables, or a dict of
columns (what `datasets` hands a batched map function).

The input holds a `messages` column (JSON text, or lists of structs as Arrow stores them),
optionally `tools` and `documents` columns, pass-through columns (an `id`: copied to the
output untouched, not given to the template) and any other column as a template variable. Fields
that are `None` are dropped from every value before rendering, because Arrow fills the keys a
message lacks with nulls: a message without `tool_calls` must stay without them. A column of
the JSON extension type (how `datasets` 5 stores free-form objects, its `Json` feature) is
decoded back into the objects that were written, key order included. A nested column of structs
cannot keep each row's key order (Arrow orders a struct's fields by the schema): a
`KeyOrderWarning` says so once per run, where the template can print key order (`tojson`,
`items`, ...); JSON text columns are exact.

The output holds the pass-through columns, then `text`, `assistant_spans` (when the renderer
asks for spans) and `error` (a struct of `kind`, `message`, `line`, `column`, `input_line`;
null for a row that rendered). `pyarrow` (the `arrow` extra) is imported by this module only.
"""

from __future__ import annotations

import json
import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .rows import InputError, RowRenderer, drop_none_fields, parse_json

__all__ = [
    "ColumnRenderer",
    "KeyOrderWarning",
    "JsonLineRenderer",
    "error_type",
    "json_decoder",
    "key_order_columns",
    "records_to_arrow",
    "render_arrow",
    "render_columns",
    "result_schema",
]


def render_columns(
    renderer: RowRenderer,
    columns: Mapping[str, Sequence[Any]],
    decoders: Mapping[str, Callable[[Any], Any]] | None = None,
    first_line: int | None = None,
) -> dict[str, list[Any]]:
    """The result columns of a dict of equally long columns (pass-through columns first).

    Nulls are Arrow's filling: a null field or column is an absent key. `decoders` (column name
    to function) turn a column's stored form back into what was written, after the nulls are
    dropped (a JSON null inside a `datasets` `Json` value is the writer's own, and stays); a
    value that fails to decode fails its own row.  `first_line` is the number of the first row
    in its input file (from 1), which error records carry as `input_line`; `None` where unknown.
    """
    names = list(columns)
    count = len(columns[names[0]]) if names else 0
    values = [columns[name] for name in names]
    decoders = decoders or {}
    passthrough = renderer.passthrough
    results = []
    for row in zip(*values, strict=True) if names else ():
        try:
            cleaned = {
                name: _clean(value, decoders.get(name))
                for name, value in zip(names, row, strict=True)
                if value is not None and name not in passthrough
            }
        except Exception as exc:  # a stored JSON text that does not parse: this row's error
            results.append(renderer.failed_row(exc))
        else:
            results.append(renderer.render_row(cleaned))
        if first_line is not None and results[-1]["error"] is not None:
            results[-1]["error"]["input_line"] = first_line + len(results) - 1
    out: dict[str, list[Any]] = {}
    for name in renderer.passthrough:
        out[name] = list(columns[name]) if name in columns else [None] * count
    for column in renderer.columns:
        out[column] = [result[column] for result in results]
    return out


def _clean(value: Any, decode: Callable[[Any], Any] | None) -> Any:
    value = drop_none_fields(value)
    return decode(value) if decode is not None else value


# -- Arrow types that do not hold a value as it was written ---------------------------------------


class KeyOrderWarning(UserWarning):
    """A nested Arrow column gives the template its objects' keys in the schema's order."""


_WARNED: set[str] = set()


def _is_json(arrow_type: Any) -> bool:
    # The canonical JSON extension type (``datasets``' ``Json`` feature stores values with it).
    return getattr(arrow_type, "extension_name", None) == "arrow.json"


def _children(arrow_type: Any) -> list[tuple[str | None, Any]]:
    import pyarrow.types as t

    if t.is_struct(arrow_type):
        return [(field.name, field.type) for field in arrow_type]
    if t.is_list(arrow_type) or t.is_large_list(arrow_type) or t.is_fixed_size_list(arrow_type):
        return [(None, arrow_type.value_type)]
    if t.is_map(arrow_type):
        return [(None, arrow_type.item_type)]
    return []


def json_decoder(arrow_type: Any) -> Callable[[Any], Any] | None:
    """A function that decodes the JSON text at the places where `arrow_type` holds the JSON
    extension type (the `Json` feature of `datasets`), or `None` where it holds none."""
    if _is_json(arrow_type):
        return _decode_json
    import pyarrow.types as t

    if t.is_struct(arrow_type):
        found = {field.name: json_decoder(field.type) for field in arrow_type}
        fields = {name: decode for name, decode in found.items() if decode is not None}
        if not fields:
            return None

        def decode_struct(value: Any) -> Any:
            if not isinstance(value, dict):
                return value
            return {k: fields[k](v) if k in fields else v for k, v in value.items()}

        return decode_struct
    if t.is_list(arrow_type) or t.is_large_list(arrow_type) or t.is_fixed_size_list(arrow_type):
        item = json_decoder(arrow_type.value_type)
        if item is None:
            return None
        return lambda value: [item(v) for v in value] if isinstance(value, list) else value
    return None


def _decode_json(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    try:
        return parse_json(value)
    except json.JSONDecodeError as exc:
        raise InputError(f"a Json value holds invalid JSON: {exc}") from None


def _reorders_keys(arrow_type: Any) -> bool:
    """Whether a value of `arrow_type` holds a struct of two or more fields (outside JSON
    text): Arrow orders a struct's fields by the schema, not as each row wrote its keys."""
    import pyarrow.types as t

    if _is_json(arrow_type):
        return False
    if t.is_struct(arrow_type) and arrow_type.num_fields >= 2:
        return True
    return any(_reorders_keys(child) for _, child in _children(arrow_type))


# What lets a template see the order of an object's keys: printing it as JSON or as text, or
# walking its keys, values or items.  A template that only reads fields by name (m.role,
# m.content) renders the same whatever the order, and is not warned about.
_KEY_ORDER_READERS = re.compile(r"\b(?:tojson|items|keys|values|list|string|pprint)\b")


def reads_key_order(renderer: RowRenderer) -> bool:
    """Whether one of the renderer's templates can print the order of an object's keys
    (`tojson`, `items`, `keys`, `values`, `list`, `string`, `pprint`; a plain `for` over an
    object, which the source does not tell apart from one over a list, is not seen)."""
    return any(_KEY_ORDER_READERS.search(source) for source in renderer.chat.sources.values())


def key_order_columns(renderer: RowRenderer, schema: Any) -> list[str]:
    """The columns of `schema` (an Arrow schema) that give the template objects in the schema's
    key order rather than the rows', where the renderer's template can print that order."""
    names = [
        field.name
        for field in schema
        if field.name not in renderer.passthrough and _reorders_keys(field.type)
    ]
    return names if names and reads_key_order(renderer) else []


def key_order_message(columns: Sequence[str]) -> str:
    """The one-line text of the `KeyOrderWarning` about `columns`."""
    named = ", ".join(repr(name) for name in columns)
    return (
        f"column{'s' if len(columns) > 1 else ''} {named} {'are' if len(columns) > 1 else 'is'} "
        "nested Arrow data: its objects' keys reach the template in the schema's order, not in "
        "the order each row wrote them, so tojson may print them in another order than "
        "transformers would; store the column as JSON text for exact output"
    )


def warn_key_order(columns: Sequence[str], stacklevel: int = 2) -> None:
    """One `KeyOrderWarning` about `columns` per process (whatever the number of batches),
    pointing at the caller's `stacklevel`."""
    key = ",".join(columns)
    if not columns or key in _WARNED:
        return
    _WARNED.add(key)
    warnings.warn(key_order_message(columns), KeyOrderWarning, stacklevel=stacklevel + 1)


def error_type() -> Any:
    """The Arrow type of an `error` column: the record of `rows.error_record`."""
    import pyarrow as pa

    return pa.struct(
        [
            ("kind", pa.string()),
            ("message", pa.string()),
            ("line", pa.int64()),
            ("column", pa.int64()),
            ("input_line", pa.int64()),
        ]
    )


def result_schema(renderer: RowRenderer) -> Any:
    """The Arrow types of the renderer's result columns (without the pass-through ones)."""
    import pyarrow as pa

    types = {
        "text": pa.string(),
        "assistant_spans": pa.list_(pa.list_(pa.int64())),
        # the token columns, for a renderer that makes them
        "input_ids": pa.list_(pa.int64()),
        "assistant_masks": pa.list_(pa.int8()),
        "error": error_type(),
    }
    return pa.schema([pa.field(name, types[name]) for name in renderer.columns])


def render_arrow(
    renderer: RowRenderer, data: Any, first_line: int | None = None, *, warn: bool = True
) -> Any:
    """The results of an Arrow `RecordBatch` or `Table` (the same kind comes back), with the
    pass-through columns copied as they are; `first_line`: see `render_columns`.  With `warn`,
    a `KeyOrderWarning` (once per process) where nested columns can change the output; a
    driver that checked the schema itself passes `warn=False` to its workers."""

    inputs = [name for name in data.schema.names if name not in renderer.passthrough]
    decoders = {}
    for name in inputs:
        decode = json_decoder(data.schema.field(name).type)
        if decode is not None:
            decoders[name] = decode
    if warn:
        warn_key_order(key_order_columns(renderer, data.schema), stacklevel=2)
    results = render_columns(
        renderer, {name: data.column(name).to_pylist() for name in inputs}, decoders, first_line
    )
    if not inputs:  # no columns to render, yet as many rows as the input
        results = {column: [None] * data.num_rows for column in renderer.columns}
    return beside_passthrough(data, renderer.passthrough, results, result_schema(renderer))


def beside_passthrough(
    data: Any, passthrough: Sequence[str], results: Mapping[str, list[Any]], schema: Any
) -> Any:
    """`data`'s pass-through columns (copied with their types; one it lacks as nulls), then the
    result columns of `schema` from `results`: a `RecordBatch` for a batch, else a `Table`."""
    import pyarrow as pa

    arrays: list[Any] = []
    fields: list[Any] = []
    for name in passthrough:
        if name in data.schema.names:
            arrays.append(data.column(name))
            fields.append(data.schema.field(name))
        else:
            arrays.append(pa.nulls(data.num_rows))
            fields.append(pa.field(name, pa.null()))
    for field in schema:
        arrays.append(pa.array(results[field.name], type=field.type))
        fields.append(field)
    if isinstance(data, pa.RecordBatch):
        arrays = [a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a for a in arrays]
        return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def records_to_arrow(renderer: RowRenderer, records: list[dict[str, Any]]) -> Any:
    """Result rows (pass-through keys and result columns) as an Arrow `RecordBatch`."""
    import pyarrow as pa

    names = renderer.passthrough
    arrays = [pa.array([record[name] for record in records]) for name in names]
    fields = [pa.field(name, array.type) for name, array in zip(names, arrays, strict=True)]
    for field in result_schema(renderer):
        arrays.append(pa.array([record[field.name] for record in records], type=field.type))
        fields.append(field)
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


class ColumnRenderer:
    """A picklable callable for batched maps: `datasets` `Dataset.map(batched=True)` (a dict
    of columns in, a dict out) and Ray Data `map_batches` (an Arrow table in, a table out).

    Each worker process or actor unpickles it once and compiles the template on its first batch.
    Its pickled state is plain data, the same in every process, so `datasets` fingerprints it
    identically and reuses its cache.
    """

    def __init__(self, renderer: RowRenderer, warn: bool = True) -> None:
        self.renderer = renderer
        #: whether each process warns of key order itself (False: the driver warned once)
        self.warn = warn

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update({"warn": True, **state})  # (pickles without the flag)

    def __call__(self, batch: Any) -> Any:
        if isinstance(batch, Mapping):
            return render_columns(self.renderer, batch)
        return render_arrow(self.renderer, batch, warn=self.warn)


class JsonLineRenderer:
    """A picklable callable for Ray Data `map_batches` over raw JSON lines: an Arrow table whose
    `column` holds one input line per row (bytes or text) in, the result table out, each line
    rendered exactly as `minijinja-py batch` renders it (the pass-through keys read from the
    line's object); a blank line is skipped."""

    def __init__(self, renderer: RowRenderer, column: str = "line") -> None:
        self.renderer = renderer
        self.column = column

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        from .jsonl import render_line

        lines = batch.column(self.column).to_pylist()
        raw = [line if isinstance(line, bytes) else line.encode() for line in lines]
        # a blank line is no row, as in `minijinja-py batch`
        records = [render_line(self.renderer, line) for line in raw if line.strip(b" \t\r\n")]
        return pa.Table.from_batches([records_to_arrow(self.renderer, records)])
