"""Render a JSONL or Parquet file of conversations to a JSONL or Parquet file, streaming.

The input is read a chunk at a time (JSONL: ``chunk_size`` lines; Parquet: up to ``chunk_size``
rows of one row group at a time), each chunk is rendered as a whole (in this process or in a
worker process: chunks, not lines, cross the process boundary) and written before more than
``2 * workers`` chunks are in flight, so memory stays flat however long the input is. Row N of
the output answers row N of the input.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import IO, Any

from .jsonl import encode_records, render_line
from .rows import RowRenderer

__all__ = ["Source", "Sink", "file_format", "open_source", "open_sink", "render_stream"]

PARQUET_SUFFIXES = (".parquet", ".pq")


def file_format(path: str) -> str:
    """``"parquet"`` for a ``.parquet``/``.pq`` path, ``"jsonl"`` otherwise (and for ``-``)."""
    return "parquet" if path.lower().endswith(PARQUET_SUFFIXES) else "jsonl"


@dataclass
class Chunk:
    """A chunk's results: the encoded output, and how many rows it held and how many failed."""

    output: Any
    rows: int
    errors: int


class Source:
    """Chunks of an input; ``total`` and ``done`` (in ``unit``) measure progress when known."""

    unit = "rows"
    total: int | None = None
    done = 0

    def chunks(self, size: int) -> Iterator[Any]:
        raise NotImplementedError

    def close(self) -> None:
        pass


class JsonlSource(Source):
    unit = "bytes"

    def __init__(self, stream: IO[bytes], close: bool = True) -> None:
        self.stream = stream
        self._close = close
        try:
            self.total = os.fstat(stream.fileno()).st_size or None
        except (OSError, AttributeError, ValueError):
            self.total = None

    def chunks(self, size: int) -> Iterator[list[bytes]]:
        # Binary lines end at b"\n" only: a raw "\r" inside a JSON line stays in that line.
        lines = iter(self.stream)
        while True:
            chunk = list(islice(lines, size))
            if not chunk:
                return
            self.done += sum(map(len, chunk))
            yield chunk

    def close(self) -> None:
        if self._close:
            self.stream.close()


class ParquetSource(Source):
    def __init__(self, path: str) -> None:
        import pyarrow.parquet as pq

        self.file = pq.ParquetFile(path)
        self.total = self.file.metadata.num_rows

    def chunks(self, size: int) -> Iterator[Any]:
        for batch in self.file.iter_batches(batch_size=size):
            self.done += batch.num_rows
            yield batch

    def close(self) -> None:
        self.file.close()


def open_source(path: str, stdin: IO[bytes] | None = None) -> Source:
    """The input at ``path`` (``-``: ``stdin``, read as JSONL)."""
    if path == "-":
        assert stdin is not None
        return JsonlSource(stdin, close=False)
    if file_format(path) == "parquet":
        return ParquetSource(path)
    return JsonlSource(open(path, "rb"))


class Sink:
    def write(self, output: Any) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


class JsonlSink(Sink):
    def __init__(self, stream: IO[bytes], close: bool = True) -> None:
        self.stream = stream
        self._close = close

    def write(self, output: bytes) -> None:
        self.stream.write(output)

    def close(self) -> None:
        self.stream.flush()
        if self._close:
            self.stream.close()


class ParquetSink(Sink):
    """Writes each chunk as a row group; the schema is the first chunk's."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.writer: Any = None

    def write(self, output: Any) -> None:
        import pyarrow.parquet as pq

        if self.writer is None:
            self.schema = output.schema
            self.writer = pq.ParquetWriter(self.path, self.schema)
        elif output.schema != self.schema:  # a pass-through column typed differently (or null)
            output = output.cast(self.schema)
        self.writer.write_batch(output)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def open_sink(path: str, stdout: IO[bytes] | None = None) -> Sink:
    """The output at ``path`` (``-``: ``stdout``, written as JSONL)."""
    if path == "-":
        assert stdout is not None
        return JsonlSink(stdout, close=False)
    if file_format(path) == "parquet":
        return ParquetSink(path)
    return JsonlSink(open(path, "wb"))


def render_chunk(renderer: RowRenderer, chunk: Any, output_format: str) -> Chunk:
    """One chunk (JSONL lines or an Arrow batch) rendered and encoded for ``output_format``."""
    records: list[dict[str, Any]] | None = None
    batch: Any = None
    if isinstance(chunk, list):
        records = [render_line(renderer, raw) for raw in chunk]
    else:
        from .arrow import render_arrow

        batch = render_arrow(renderer, chunk)
    if output_format == "jsonl":
        if records is None:
            records = batch.to_pylist()
        errors = sum(1 for record in records if record["error"] is not None)
        return Chunk(encode_records(records), len(records), errors)
    if batch is None:
        from .arrow import records_to_arrow

        batch = records_to_arrow(renderer, records or [])
    return Chunk(batch, batch.num_rows, batch.num_rows - batch.column("error").null_count)


# -- the driver: in this process, or chunks through a pool of worker processes ------------------

_WORKER: dict[str, Any] = {}


def _init_worker(renderer: RowRenderer, output_format: str) -> None:
    _WORKER["renderer"] = renderer
    _WORKER["format"] = output_format


def _render_in_worker(chunk: Any) -> Chunk:
    return render_chunk(_WORKER["renderer"], chunk, _WORKER["format"])


def render_stream(
    renderer: RowRenderer,
    source: Source,
    sink: Sink,
    *,
    output_format: str,
    workers: int = 1,
    chunk_size: int = 256,
    on_chunk: Callable[[Chunk], None] | None = None,
) -> tuple[int, int]:
    """Render every chunk of ``source`` into ``sink`` in order; returns (rows, failed rows).

    With ``workers > 1`` a process pool renders chunks; at most ``2 * workers`` are in flight.
    """
    rows = errors = 0

    def deliver(done: Chunk) -> None:
        nonlocal rows, errors
        sink.write(done.output)
        rows += done.rows
        errors += done.errors
        if on_chunk is not None:
            on_chunk(done)

    chunks = source.chunks(chunk_size)
    if workers <= 1:
        for chunk in chunks:
            deliver(render_chunk(renderer, chunk, output_format))
        return rows, errors

    from concurrent.futures import ProcessPoolExecutor

    window: deque[Any] = deque()
    with ProcessPoolExecutor(
        max_workers=workers, initializer=_init_worker, initargs=(renderer, output_format)
    ) as pool:
        for chunk in chunks:
            window.append(pool.submit(_render_in_worker, chunk))
            if len(window) >= 2 * workers:
                deliver(window.popleft().result())
        while window:
            deliver(window.popleft().result())
    return rows, errors
