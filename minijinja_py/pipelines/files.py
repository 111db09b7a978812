"""Render a JSONL or Parquet file of conversations to a JSONL or Parquet file, streaming.

The input is read a chunk at a time (JSONL: `chunk_size` lines; Parquet: up to `chunk_size`
rows of one row group at a time), each chunk is rendered as a whole (in this process or in a
worker process: chunks, not lines, cross the process boundary) and written before more than
`2 * workers` chunks are in flight, so memory stays flat however long the input is. Row N of
the output answers row N of the input, always:

- a blank JSONL line (nothing but whitespace) is no row: it is skipped and counted, and the rows
  after it keep their line numbers (`input_line` of an error record);
- a line longer than `MAX_LINE_BYTES` is an error row, read past without being held;
- a row whose output would pass `MAX_ROW_BYTES` is an error row (a bounded message);
- a chunk stops taking rows once its output passes `CHUNK_BYTES` (the rest is a chunk of its
  own), so that a worker never holds more than that and one row;
- a worker that dies or fails on a chunk costs no row: the chunk's rows are rendered again one
  by one in a fresh pool, and a row that fails alone again is an error row (`WorkerError`).

Whatever cannot keep that contract (the output cannot be written) ends the run with an
exception: the command line's exit status 1.
"""

from __future__ import annotations

import fnmatch
import functools
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any

from .inputs import MAX_LINE_BYTES, open_regular
from .jsonl import encode_record, render_line
from .pool import WorkerPool, run_in_order
from .rows import RowRenderer, error_record

__all__ = [
    "Source",
    "Sink",
    "file_format",
    "input_files",
    "open_source",
    "open_sink",
    "prepare_output_folder",
    "render_stream",
]

#: Bytes of one output row (a JSONL line; for Parquet, its text and token columns); a row over
#: it is an error row.  A render is at most `Limits.max_output` characters (50 million).
MAX_ROW_BYTES = 256 * 1024 * 1024
#: Bytes of output a chunk gathers before the rest of its rows go to a chunk of their own.
CHUNK_BYTES = 256 * 1024 * 1024

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


class RowSizeError(ValueError):
    """A row whose input line or output is past the bound of one row."""


class WorkerError(RuntimeError):
    """A row whose worker process died or failed while rendering it, alone."""


def prepare_output_folder(
    path: str | os.PathLike[str], inputs: Sequence[str] = (), *, overwrite: bool = False
) -> None:
    """Make sure the folder `path` (local or a URI) may receive a run's Parquet files: absent
    or empty, or with `overwrite` holding only Parquet files (and `_`/`.` files beside them),
    which are deleted.  Anything else is refused with `FileExistsError` before any work: files
    written beside a previous run's would mix the two (2,000 rows for 1,000), and deleting files
    that are not output, or the inputs, would lose data."""
    from pyarrow import fs

    where = os.fspath(path)
    filesystem, inner, _ = _filesystem(where)
    info = filesystem.get_file_info(inner)
    if info.type == fs.FileType.NotFound:
        return
    if info.type != fs.FileType.Directory:
        raise FileExistsError(
            f"{where}: a file, not a folder: the output is a folder of Parquet files"
        )
    inside = inner.rstrip("/") + "/"
    for name in inputs:
        if _filesystem(name)[1].startswith(inside):
            raise FileExistsError(
                f"{where}: the output folder holds an input ({name}): choose another"
            )
    entries = filesystem.get_file_info(fs.FileSelector(inner, recursive=False))
    if not entries:
        return
    if not overwrite:
        raise FileExistsError(
            f"{where}: the output folder is not empty ({len(entries)} "
            f"{'entry' if len(entries) == 1 else 'entries'}): rendering into it "
            "would mix this run's rows with what is there; choose an empty folder, or pass "
            "overwrite=True to replace a previous run's Parquet files"
        )
    others = [
        entry.base_name
        for entry in entries
        if entry.type != fs.FileType.File
        or not (_hidden(entry.base_name) or entry.base_name.lower().endswith(PARQUET_SUFFIXES))
    ]
    if others:
        raise FileExistsError(
            f"{where}: overwrite=True replaces only a previous run's Parquet files, and the "
            f"folder also holds {others[0]!r}"
            + (f" and {len(others) - 1} more" if len(others) > 1 else "")
            + ": nothing was deleted"
        )
    for entry in entries:
        filesystem.delete_file(entry.path)


@dataclass
class Chunk:
    """A chunk's results: the encoded output, how many rows it held, how many failed, how many
    blank lines it skipped, and how many of its input rows it took (`consumed`: fewer than
    given when its output reached `CHUNK_BYTES`)."""

    output: Any
    rows: int
    errors: int
    skipped: int = 0
    consumed: int = 0


@dataclass
class Lines:
    """JSONL lines of a chunk: `first` is the line number (from 1) of `lines[0]`; a line past
    `MAX_LINE_BYTES` stands as an empty line, its length in `too_long` (by index)."""

    first: int
    lines: list[bytes]
    too_long: dict[int, int]

    def __len__(self) -> int:
        return len(self.lines)

    def slice(self, start: int, stop: int) -> Lines:
        long = {i - start: n for i, n in self.too_long.items() if start <= i < stop}
        return Lines(self.first + start, self.lines[start:stop], long)

    def __reduce__(self) -> Any:
        # The lines cross to a worker as one bytes object: pickling a list of lines costs the
        # driver, the serial part of a batch, a microsecond per line.  Cut at b"\n" again there.
        ends = [line if line.endswith(b"\n") else line + b"\n" for line in self.lines]
        return (_lines_from, (self.first, b"".join(ends), self.too_long))


def _lines_from(first: int, data: bytes, too_long: dict[int, int]) -> Lines:
    lines = data.split(b"\n")
    lines.pop()  # (every line was shipped ending in b"\n")
    return Lines(first, lines, too_long)


@dataclass
class Rows:
    """An Arrow batch of a chunk: `first` is the row number (from 1) of its first row."""

    first: int
    batch: Any

    def __len__(self) -> int:
        return int(self.batch.num_rows)

    def slice(self, start: int, stop: int) -> Rows:
        return Rows(self.first + start, self.batch.slice(start, stop - start))


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

    def chunks(self, size: int) -> Iterator[Lines]:
        # Binary lines end at b"\n" only: a raw "\r" inside a JSON line stays in that line.
        first = 1
        read = self._reader()
        while True:
            lines: list[bytes] = []
            too_long: dict[int, int] = {}
            while len(lines) < size:
                line = read()
                if not line:
                    break
                self.done += len(line)
                if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
                    too_long[len(lines)] = len(line) + self._skip_line()
                    line = b"\n"
                lines.append(line)
            if not lines:
                return
            yield Lines(first, lines, too_long)
            first += len(lines)

    def _reader(self) -> Callable[[], bytes]:
        readline = getattr(self.stream, "readline", None)
        if readline is not None:
            return functools.partial(readline, MAX_LINE_BYTES + 1)
        lines = iter(self.stream)  # (an iterable of lines: each is whole already)
        return lambda: next(lines, b"")

    def _skip_line(self) -> int:
        """Read past the rest of an over-long line, a block at a time; its length."""
        skipped = 0
        while True:
            block = self.stream.readline(1 << 20)
            skipped += len(block)
            self.done += len(block)
            if not block or block.endswith(b"\n"):
                return skipped

    def close(self) -> None:
        if self._close:
            self.stream.close()


class ParquetSource(Source):
    file: Any
    total: int | None

    def __init__(self, path: str) -> None:
        import pyarrow.parquet as pq

        self._handle = open_regular(path)
        try:
            self.file = pq.ParquetFile(self._handle)
        except BaseException:
            self._handle.close()
            raise
        self.total = self.file.metadata.num_rows

    def chunks(self, size: int) -> Iterator[Rows]:
        for batch in self.file.iter_batches(batch_size=size):
            yield Rows(self.done + 1, batch)
            self.done += batch.num_rows

    def close(self) -> None:
        self.file.close()
        self._handle.close()


def open_source(path: str, stdin: IO[bytes] | None = None) -> Source:
    """The input at `path` (`-`: `stdin`, read as JSONL)."""
    if path == "-":
        assert stdin is not None
        return JsonlSource(stdin, close=False)
    if file_format(path) == "parquet":
        _needs_pyarrow()
        return ParquetSource(path)
    return JsonlSource(open_regular(path))


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


def open_sink(path: str, stdout: IO[bytes] | None = None, *, overwrite: bool = False) -> Sink:
    """The output at `path` (`-`: `stdout`, written as JSONL).  A file that exists and is not
    empty is refused with `FileExistsError` unless `overwrite`: a second run never mixes with
    or silently replaces the first one's output."""
    if path == "-":
        assert stdout is not None
        return JsonlSink(stdout, close=False)
    if not overwrite and os.path.exists(path) and (os.path.isdir(path) or os.path.getsize(path)):
        raise FileExistsError(
            f"{path}: the output exists and is not empty: choose another path, or replace it "
            "(--overwrite, overwrite=True)"
        )
    if file_format(path) == "parquet":
        _needs_pyarrow()
        return ParquetSink(path)
    return JsonlSink(open(path, "wb"))


def _needs_pyarrow() -> None:
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        raise ImportError(
            "reading or writing Parquet needs pyarrow: pip install 'minijinja_py[arrow]'"
        ) from None


def render_chunk(
    renderer: RowRenderer, chunk: Lines | Rows, output_format: str, budget: int = CHUNK_BYTES
) -> Chunk:
    """The rows of `chunk` (JSONL lines or an Arrow batch) rendered and encoded for
    `output_format`, until its output passes `budget` bytes (`Chunk.consumed` says how many
    rows it took; at least one)."""
    if isinstance(chunk, Lines):
        return _render_lines(renderer, chunk, output_format, budget)
    return _render_rows(renderer, chunk, output_format, budget)


_BLANK = b" \t\r\n"
_BLANK_START = frozenset({b"", b" ", b"\t", b"\r", b"\n"})


def _render_lines(renderer: RowRenderer, chunk: Lines, output_format: str, budget: int) -> Chunk:
    out: list[Any] = []
    errors = skipped = total = 0
    taken = count = len(chunk)
    first, too_long, jsonl = chunk.first, chunk.too_long, output_format == "jsonl"
    for index, raw in enumerate(chunk.lines):
        if too_long and index in too_long:
            failure = RowSizeError(
                f"the line is {too_long[index]:,} bytes, longer than the "
                f"{MAX_LINE_BYTES:,} bytes of a row: not read"
            )
            record = failed_record(renderer, failure, first + index)
        elif raw[:1] in _BLANK_START and not raw.strip(_BLANK):
            skipped += 1  # (a blank line is no row, as JSONL readers skip it)
            continue
        else:
            record = render_line(renderer, raw, first + index)
        if jsonl:
            line = encode_record(record)
            if len(line) > MAX_ROW_BYTES:
                _, line, _ = _sized(renderer, record, first + index, output_format)
                record = _ERROR_ROW
            out.append(line)
            total += len(line)
        else:
            size, record, _ = _sized(renderer, record, first + index, output_format)
            out.append(record)
            total += size
        if record["error"] is not None:
            errors += 1
        if total >= budget and index + 1 < count:
            taken = index + 1
            break
    if jsonl:
        return Chunk(b"\n".join(out) + b"\n" if out else b"", len(out), errors, skipped, taken)
    from .arrow import records_to_arrow

    return Chunk(records_to_arrow(renderer, out), len(out), errors, skipped, taken)


_ERROR_ROW: dict[str, Any] = {"error": True}  # (what a row replaced by its error row counts as)


def failed_record(
    renderer: RowRenderer, exc: BaseException, number: int | None, kept: Any = None
) -> dict[str, Any]:
    """The output record of a row that failed as a whole: its pass-through values (`kept`, else
    null), the null result columns and the error record of `exc` at input row `number`."""
    record = {**dict.fromkeys(renderer.passthrough), **(kept or {}), **renderer.failed_row(exc)}
    record["error"]["input_line"] = number
    return record


def _row_bytes(record: dict[str, Any]) -> int:
    # What a row costs in Parquet: its text in UTF-8, its token ids and masks and its spans.
    text = record.get("text") or ""
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    size += 9 * len(record.get("input_ids") or ())
    return size + 16 * len(record.get("assistant_spans") or ())


def _arrow_row_bytes(batch: Any) -> list[int]:
    """`_row_bytes` of each row of a result batch, counted by Arrow (no row made in Python)."""
    import pyarrow.compute as pc

    sizes = pc.fill_null(pc.binary_length(batch.column("text")), 0)
    for name, weight in (("input_ids", 9), ("assistant_spans", 16)):
        if name in batch.schema.names:
            count = pc.fill_null(pc.list_value_length(batch.column(name)), 0)
            sizes = pc.add(sizes, pc.multiply(count, weight))
    return [int(size) for size in sizes.to_pylist()]


def _too_large(size: int) -> RowSizeError:
    return RowSizeError(
        f"the output row is {size:,} bytes, over the {MAX_ROW_BYTES:,} bytes of a row: not written"
    )


def _sized(
    renderer: RowRenderer, record: dict[str, Any], number: int | None, output_format: str
) -> tuple[int, Any, int]:
    """The row's size, its output (a JSONL line, or the record for Arrow) and whether it
    failed; a row over `MAX_ROW_BYTES` becomes its error row, with its pass-through values."""
    line: Any
    if output_format == "jsonl":
        line = encode_record(record)
        size = len(line)
    else:
        line, size = record, _row_bytes(record)
    if size > MAX_ROW_BYTES:
        kept = {name: record.get(name) for name in renderer.passthrough}
        record = failed_record(renderer, _too_large(size), number, kept)
        if output_format == "jsonl":
            line = encode_record(record)
            if len(line) > MAX_ROW_BYTES:  # (the pass-through values themselves are too large)
                record = failed_record(renderer, _too_large(size), number)
                line = encode_record(record)
        else:
            line = record
        size = len(line) if isinstance(line, bytes) else 0
    return size, line, int(record["error"] is not None)


#: Rows of an Arrow batch rendered at once, between two looks at the chunk's output size.
_PIECE_ROWS = 64


def _render_rows(renderer: RowRenderer, chunk: Rows, output_format: str, budget: int) -> Chunk:
    from .arrow import records_to_arrow, render_arrow

    count, taken, total, errors = len(chunk), 0, 0, 0
    pieces: list[Any] = []
    while taken < count:
        stop = min(count, taken + _PIECE_ROWS)
        batch = render_arrow(  # (the driver warned of key order, once: key_order_columns)
            renderer,
            chunk.batch.slice(taken, stop - taken),
            first_line=chunk.first + taken,
            warn=False,
        )
        first, taken = chunk.first + taken, stop
        if output_format == "jsonl":
            for index, record in enumerate(batch.to_pylist()):
                size, line, failed = _sized(renderer, record, first + index, "jsonl")
                pieces.append(line + b"\n")
                errors += failed
                total += size
        else:
            sizes = _arrow_row_bytes(batch)
            if max(sizes, default=0) > MAX_ROW_BYTES:  # (rare: the rows go through Python)
                records = batch.to_pylist()
                fixed = [_sized(renderer, r, first + i, "arrow")[1] for i, r in enumerate(records)]
                batch = records_to_arrow(renderer, fixed)
            pieces.append(batch)
            total += sum(sizes)
        if total >= budget:
            break
    if output_format == "jsonl":
        return Chunk(b"".join(pieces), len(pieces), errors, 0, taken)
    import pyarrow as pa

    if len(pieces) == 1:
        batch = pieces[0]
    else:
        table = pa.Table.from_batches(pieces, schema=pieces[0].schema).combine_chunks()
        batch = table.to_batches()[0] if table.num_rows else pieces[0]
    return Chunk(batch, batch.num_rows, batch.num_rows - batch.column("error").null_count, 0, taken)


# -- the driver: in this process, or chunks through a pool of worker processes ------------------

_WORKER: dict[str, Any] = {}


def _init_worker(renderer: RowRenderer, output_format: str, budget: int) -> None:
    _WORKER["renderer"] = renderer
    _WORKER["format"] = output_format
    _WORKER["budget"] = budget


def _render_in_worker(chunk: Lines | Rows) -> Chunk:
    return render_chunk(_WORKER["renderer"], chunk, _WORKER["format"], _WORKER["budget"])


def _dead_rows(
    renderer: RowRenderer, chunk: Lines | Rows, output_format: str, exc: BaseException
) -> Chunk:
    """The error row of a one-row chunk whose render killed or failed its worker (made here
    without rendering, or parsing, anything of the row)."""
    failure = WorkerError(
        "the worker process rendering this row died or failed, twice "
        f"({type(exc).__name__}: {error_record(exc)['message']})"
    )
    if isinstance(chunk, Rows):
        names = [n for n in renderer.passthrough if n in chunk.batch.schema.names]
        kept = {name: chunk.batch.column(name)[0].as_py() for name in names}
    else:
        if not chunk.lines[0].strip(_BLANK) and 0 not in chunk.too_long:
            return Chunk(b"" if output_format == "jsonl" else None, 0, 0, 1, 1)
        kept = None
    record = failed_record(renderer, failure, chunk.first, kept)
    _, item, _ = _sized(renderer, record, chunk.first, output_format)
    if output_format == "jsonl":
        item += b"\n"
    else:
        from .arrow import records_to_arrow

        item = records_to_arrow(renderer, [item])
    return Chunk(item, 1, 1, 0, 1)


def render_stream(
    renderer: RowRenderer,
    source: Source,
    sink: Sink,
    *,
    output_format: str,
    workers: int = 1,
    chunk_size: int = 256,
    on_chunk: Callable[[Chunk], None] | None = None,
    budget: int = CHUNK_BYTES,
) -> tuple[int, int]:
    """Render every chunk of `source` into `sink` in order; returns (rows, failed rows).

    With `workers > 1` a process pool renders chunks; at most `2 * workers` are in flight.  A
    chunk whose worker dies or fails is rendered again a row at a time (see the module's notes).
    """
    rows = errors = 0

    def deliver(done: Chunk) -> None:
        nonlocal rows, errors
        if done.rows:
            sink.write(done.output)
        rows += done.rows
        errors += done.errors
        if on_chunk is not None:
            on_chunk(done)

    chunks = source.chunks(chunk_size)
    if workers <= 1:
        for chunk in chunks:
            while len(chunk):
                try:
                    done = render_chunk(renderer, chunk, output_format, budget)
                except Exception:  # noqa: BLE001 - the chunk again, a row at a time
                    for index in range(len(chunk)):
                        one = chunk.slice(index, index + 1)
                        try:
                            alone = render_chunk(renderer, one, output_format, budget)
                        except Exception as exc:  # noqa: BLE001 - this row's error row
                            alone = _dead_rows(renderer, one, output_format, exc)
                        deliver(alone)
                    break
                deliver(done)
                chunk = chunk.slice(done.consumed, len(chunk))
        return rows, errors

    pool = WorkerPool(workers, (renderer, output_format, budget), _init_worker, _render_in_worker)
    run_in_order(
        pool,
        chunks,
        workers,
        deliver,
        lambda one, exc: _dead_rows(renderer, one, output_format, exc),
    )
    return rows, errors
