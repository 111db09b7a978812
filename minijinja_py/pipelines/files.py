"""Render a JSONL or Parquet file of conversations to a JSONL or Parquet file, streaming.

The input is read a chunk at a time (JSONL: `chunk_size` lines; Parquet: up to `chunk_size`
rows of one row group at a time), each chunk is rendered as a whole (in this process or in a
worker process: chunks, not lines, cross the process boundary) and written before more than
`2 * workers` chunks are in flight, so memory stays flat however long the input is. Row N of
the output answers row N of the input.
"""

from __future__ import annotations

import fnmatch
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import IO, Any

from .jsonl import encode_records, render_line
from .rows import RowRenderer

__all__ = [
    "Source",
    "Sink",
    "file_format",
    "input_files",
    "open_source",
    "open_sink",
    "render_stream",
]

PARQUET_SUFFIXES = (".parquet", ".pq")
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
_GLOB = frozenset("*?[")


def file_format(path: str) -> str:
    """`"parquet"` for a `.parquet`/`.pq` path, `"jsonl"` otherwise (and for `-`)."""
    return "parquet" if path.lower().endswith(PARQUET_SUFFIXES) else "jsonl"


def _known_format(path: str) -> str | None:
    lower = path.lower()
    if lower.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if lower.endswith(JSONL_SUFFIXES):
        return "jsonl"
    return None


def _filesystem(path: str) -> tuple[Any, str, str]:
    """The pyarrow filesystem of `path`, the path inside it and the prefix that gives a URI
    back (`""` for a local path)."""
    from pyarrow import fs

    if "://" not in path:
        return fs.LocalFileSystem(), os.path.abspath(path), ""
    filesystem, inner = fs.FileSystem.from_uri(path)
    return filesystem, inner, path[: path.index("://") + 3]


def _hidden(name: str) -> bool:
    # Spark's _SUCCESS, Hadoop's .crc files, editors' dot files: not data
    return name.startswith(("_", "."))


def input_files(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
) -> tuple[str, list[str]]:
    """The input format (`"parquet"` or `"jsonl"`) and the files of `paths`: files, folders
    (every file below them, hidden and `_`-prefixed ones left out) and globs (`*`, `?`,
    `[...]` in the last part of a path), local or as URIs that pyarrow reads (`s3://`,
    `gs://`, `hdfs://`). The format is found from the files' suffixes (`.parquet`/`.pq`;
    `.jsonl`/`.ndjson`/`.json`); a file of another suffix, a mix of both formats or nothing
    to read is refused with a `ValueError` before any work."""
    from pyarrow import fs

    given = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    files: list[str] = []
    for raw in given:
        path = os.fspath(raw)
        filesystem, inner, scheme = _filesystem(path)
        base = os.path.basename(inner)
        if _GLOB & set(base):
            parent = os.path.dirname(inner)
            found = filesystem.get_file_info(fs.FileSelector(parent, allow_not_found=True))
            matched = sorted(
                info.path
                for info in found
                if info.type == fs.FileType.File and fnmatch.fnmatchcase(info.base_name, base)
            )
            if not matched:
                raise ValueError(f"no file matches {path!r}")
            files += [scheme + name for name in matched]
            continue
        info = filesystem.get_file_info(inner)
        if info.type == fs.FileType.NotFound:
            raise ValueError(f"no such file or folder: {path!r}")
        if info.type == fs.FileType.Directory:
            found = filesystem.get_file_info(fs.FileSelector(inner, recursive=True))
            inside = sorted(
                entry.path
                for entry in found
                if entry.type == fs.FileType.File
                and not any(_hidden(part) for part in os.path.relpath(entry.path, inner).split("/"))
            )
            if not inside:
                raise ValueError(f"the folder {path!r} holds no file")
            files += [scheme + name for name in inside]
        else:
            files.append(scheme + inner if scheme else inner)
    if not files:
        raise ValueError("no input files given")
    formats = {name: _known_format(name) for name in files}
    unknown = [name for name, found in formats.items() if found is None]
    if unknown:
        raise ValueError(
            f"cannot tell the format of {unknown[0]!r}"
            + (f" (and {len(unknown) - 1} more files)" if len(unknown) > 1 else "")
            + ": inputs are Parquet (.parquet, .pq) or JSONL (.jsonl, .ndjson, .json) files"
        )
    found_formats = sorted(set(formats.values()))  # type: ignore[type-var]
    if len(found_formats) > 1:
        first = {fmt: next(n for n, f in formats.items() if f == fmt) for fmt in found_formats}
        raise ValueError(
            "the inputs mix Parquet and JSONL files "
            f"({first['parquet']!r} and {first['jsonl']!r}): render each format on its own"
        )
    return str(found_formats[0]), files


@dataclass
class Chunk:
    """A chunk's results: the encoded output, and how many rows it held and how many failed."""

    output: Any
    rows: int
    errors: int


class Source:
    """Chunks of an input; `total` and `done` (in `unit`) measure progress when known."""

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
    file: Any
    total: int | None

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
    """The input at `path` (`-`: `stdin`, read as JSONL)."""
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

    schema: Any

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
    """The output at `path` (`-`: `stdout`, written as JSONL)."""
    if path == "-":
        assert stdout is not None
        return JsonlSink(stdout, close=False)
    if file_format(path) == "parquet":
        return ParquetSink(path)
    return JsonlSink(open(path, "wb"))


def render_chunk(renderer: RowRenderer, chunk: Any, output_format: str) -> Chunk:
    """One chunk (JSONL lines or an Arrow batch) rendered and encoded for `output_format`."""
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
    if isinstance(chunk, bytes):  # (JSONL lines shipped joined: see _shipped)
        lines = chunk.split(b"\n")
        if not lines[-1]:
            lines.pop()
        chunk = lines
    return render_chunk(_WORKER["renderer"], chunk, _WORKER["format"])


def _shipped(chunk: Any) -> Any:
    # JSONL lines cross to a worker as one bytes object: pickling it is a copy, where a list
    # of lines costs the driver, the serial part of a batch, a microsecond per line.  The
    # worker cuts it at b"\n" again (a line's own "\r" stays in it, as in a file's lines).
    return b"".join(chunk) if isinstance(chunk, list) else chunk


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
    """Render every chunk of `source` into `sink` in order; returns (rows, failed rows).

    With `workers > 1` a process pool renders chunks; at most `2 * workers` are in flight.
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
            window.append(pool.submit(_render_in_worker, _shipped(chunk)))
            if len(window) >= 2 * workers:
                deliver(window.popleft().result())
        while window:
            deliver(window.popleft().result())
    return rows, errors
