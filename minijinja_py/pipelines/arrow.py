"""Columns of conversations in, columns of results out: Arrow batches and tables, or a dict of
columns (what ``datasets`` hands a batched map function).

The input holds a ``messages`` column (JSON text, or lists of structs as Arrow stores them),
optionally ``tools`` and ``documents`` columns, pass-through columns (an ``id``: copied to the
output untouched, not given to the template) and any other column as a template variable. Fields
that are ``None`` are dropped from every value before rendering, because Arrow fills the keys a
message lacks with nulls: a message without ``tool_calls`` must stay without them.

The output holds the pass-through columns, then ``text``, ``assistant_spans`` (when the renderer
asks for spans) and ``error`` (a struct of ``kind``, ``message``, ``line``, ``column``; null for a
row that rendered). ``pyarrow`` (the ``data`` extra) is imported by this module only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .rows import RowRenderer

__all__ = [
    "ColumnRenderer",
    "JsonLineRenderer",
    "records_to_arrow",
    "render_arrow",
    "render_columns",
    "result_schema",
]


def render_columns(
    renderer: RowRenderer, columns: Mapping[str, Sequence[Any]]
) -> dict[str, list[Any]]:
    """The result columns of a dict of equally long columns (pass-through columns first)."""
    names = list(columns)
    count = len(columns[names[0]]) if names else 0
    values = [columns[name] for name in names]
    results = (
        [
            renderer.render_row(dict(zip(names, row, strict=True)), drop_none=True)
            for row in zip(*values, strict=True)
        ]
        if names
        else []
    )
    out: dict[str, list[Any]] = {}
    for name in renderer.passthrough:
        out[name] = list(columns[name]) if name in columns else [None] * count
    for column in renderer.columns:
        out[column] = [result[column] for result in results]
    return out


def result_schema(renderer: RowRenderer) -> Any:
    """The Arrow types of the renderer's result columns (without the pass-through ones)."""
    import pyarrow as pa

    types = {
        "text": pa.string(),
        "assistant_spans": pa.list_(pa.list_(pa.int64())),
        # the token columns, for a renderer that makes them
        "input_ids": pa.list_(pa.int64()),
        "assistant_masks": pa.list_(pa.int8()),
        "error": pa.struct(
            [
                ("kind", pa.string()),
                ("message", pa.string()),
                ("line", pa.int64()),
                ("column", pa.int64()),
            ]
        ),
    }
    return pa.schema([pa.field(name, types[name]) for name in renderer.columns])


def render_arrow(renderer: RowRenderer, data: Any) -> Any:
    """The results of an Arrow ``RecordBatch`` or ``Table`` (the same kind comes back), with the
    pass-through columns copied as they are."""
    import pyarrow as pa

    inputs = [name for name in data.schema.names if name not in renderer.passthrough]
    results = render_columns(renderer, {name: data.column(name).to_pylist() for name in inputs})
    if not inputs:  # no columns to render, yet as many rows as the input
        results = {column: [None] * data.num_rows for column in renderer.columns}
    schema = result_schema(renderer)
    arrays: list[Any] = []
    fields: list[Any] = []
    for name in renderer.passthrough:
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
    """Result rows (pass-through keys and result columns) as an Arrow ``RecordBatch``."""
    import pyarrow as pa

    names = renderer.passthrough
    arrays = [pa.array([record[name] for record in records]) for name in names]
    fields = [pa.field(name, array.type) for name, array in zip(names, arrays, strict=True)]
    for field in result_schema(renderer):
        arrays.append(pa.array([record[field.name] for record in records], type=field.type))
        fields.append(field)
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))


class ColumnRenderer:
    """A picklable callable for batched maps: ``datasets`` ``Dataset.map(batched=True)`` (a dict
    of columns in, a dict out) and Ray Data ``map_batches`` (an Arrow table in, a table out).

    Each worker process or actor unpickles it once and compiles the template on its first batch.
    Its pickled state is plain data, the same in every process, so ``datasets`` fingerprints it
    identically and reuses its cache.
    """

    def __init__(self, renderer: RowRenderer) -> None:
        self.renderer = renderer

    def __call__(self, batch: Any) -> Any:
        if isinstance(batch, Mapping):
            return render_columns(self.renderer, batch)
        return render_arrow(self.renderer, batch)


class JsonLineRenderer:
    """A picklable callable for Ray Data ``map_batches`` over raw JSON lines: an Arrow table whose
    ``column`` holds one input line per row (bytes or text) in, the result table out, each line
    rendered exactly as ``minijinja-py batch`` renders it (the pass-through keys read from the
    line's object)."""

    def __init__(self, renderer: RowRenderer, column: str = "line") -> None:
        self.renderer = renderer
        self.column = column

    def __call__(self, batch: Any) -> Any:
        import pyarrow as pa

        from .jsonl import render_line

        lines = batch.column(self.column).to_pylist()
        records = [
            render_line(self.renderer, line if isinstance(line, bytes) else line.encode())
            for line in lines
        ]
        return pa.Table.from_batches([records_to_arrow(self.renderer, records)])
