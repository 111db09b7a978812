"""Render Parquet or JSONL files of conversations with Ray Data, on one machine or a cluster.

By default the rendering runs in Ray *tasks* (`ray.data.TaskPoolStrategy`): Ray fuses reading a
block, rendering it and writing it into one task of `num_cpus` CPUs, so a task never waits for a
CPU that another part of the job holds. That makes progress on a cluster of any size (nodes of one
CPU included), and a task lost with its node runs again elsewhere: the output is complete and has
no duplicate. Each worker process compiles the template once and keeps it for the tasks it runs.
An actor pool (`compute=ray.data.ActorPoolStrategy(size=n)`) is offered too; its read and write
tasks then ask for no CPU, so that the actors cannot starve them.

>>> import ray
>>> from minijinja_py.chat import ChatTemplate
>>> from minijinja_py.pipelines import RowRenderer
>>> from minijinja_py.pipelines.ray_data import render_dataset
>>> renderer = RowRenderer(ChatTemplate.from_pretrained("Qwen/Qwen3-0.6B"), passthrough=["id"])
>>> rows = ray.data.read_parquet("s3://bucket/conversations/")  # doctest: +SKIP
>>> rendered = render_dataset(rows, renderer)  # doctest: +SKIP

`render_files` does the whole trip in one call; `parse_dataset` is the way back (rows of
generated text into parsed messages, with a `RowParser`). `ray` is imported by this module only.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from collections.abc import Sequence
from typing import Any

from .arrow import ColumnRenderer, JsonLineRenderer
from .files import input_files, prepare_output_folder
from .response_columns import ColumnParser
from .responses import RowParser
from .rows import RowRenderer

__all__ = [
    "ClusterError",
    "PartRenderer",
    "parse_dataset",
    "read_json_lines",
    "render_dataset",
    "render_files",
]

#: Bytes of JSONL that one read task takes (a file is split at line ends into parts this long).
JSONL_PART_BYTES = 32 * 1024 * 1024
#: Bytes of Parquet data (uncompressed, as the footer counts them) that one read task takes.
PARQUET_PART_BYTES = 64 * 1024 * 1024
#: Seconds without progress after which ``render_files`` stops with a ``ClusterError``.
DEFAULT_STALL_TIMEOUT_S = 600.0


class ClusterError(RuntimeError):
    """The cluster cannot run the job, or the job stopped making progress on it."""


# -- reading files in parts: one read task per part, in input order --------------------------------
# The reads are this module's own (pyarrow reads each part), not ray.data.read_parquet: Ray's path
# resolution lists a list of files in threads that race on importing fsspec's HTTP filesystem,
# and fail when aiohttp is missing. A part is a byte range of a JSONL file cut at line ends, or
# row groups of a Parquet file.


def _jsonl_parts(files: Sequence[str], part_bytes: int) -> list[dict[str, Any]]:
    from .files import _filesystem

    parts = []
    for name in files:
        filesystem, inner, _ = _filesystem(name)
        size = filesystem.get_file_info(inner).size or 0
        for start in range(0, max(size, 1), part_bytes):
            parts.append({"path": name, "start": start, "end": min(start + part_bytes, size)})
    return parts


def _parquet_parts(
    files: Sequence[str], blocks: int | None, part_bytes: int = PARQUET_PART_BYTES
) -> list[dict[str, Any]]:
    """Row groups of the files (their footers are read here), at most `part_bytes` bytes of
    data a part (a row group larger than that is a part of its own), and with `blocks` smaller
    parts still until there are about `blocks` of them."""
    import pyarrow.parquet as pq

    from .files import _filesystem

    sizes = []
    for name in files:
        filesystem, inner, _ = _filesystem(name)
        with filesystem.open_input_file(inner) as stream:
            meta = pq.ParquetFile(stream).metadata
            sizes.append([meta.row_group(i).total_byte_size for i in range(meta.num_row_groups)])
    if blocks:
        total = sum(sum(groups) for groups in sizes)
        part_bytes = max(1, min(part_bytes, total // blocks))
    parts = []
    for name, groups in zip(files, sizes, strict=True):
        start, size = 0, 0
        for index, group in enumerate(groups):
            if index > start and size + group > part_bytes:
                parts.append({"path": name, "start": start, "end": index})
                start, size = index, 0
            size += group
        parts.append({"path": name, "start": start, "end": len(groups)})
    return parts


def _read_parts(parts: Any, fmt: str) -> Any:
    import pyarrow as pa

    tables = [
        _read_jsonl_part(part) if fmt == "jsonl" else _read_parquet_part(part)
        for part in parts.to_pylist()
    ]
    if not tables:
        return pa.table({"line": pa.array([], pa.binary())}) if fmt == "jsonl" else pa.table({})
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]


def _read_parquet_part(part: dict[str, Any]) -> Any:
    import pyarrow.parquet as pq

    from .files import _filesystem

    filesystem, inner, _ = _filesystem(part["path"])
    with filesystem.open_input_file(inner) as stream:
        return pq.ParquetFile(stream).read_row_groups(list(range(part["start"], part["end"])))


def _read_jsonl_part(part: dict[str, Any]) -> Any:
    """The lines that begin inside `[start, end)` of the file, split on `\\n` only as the
    command line splits (Ray's own text reader also splits on `\\r`): a line that crosses
    `start` belongs to the part before."""
    import pyarrow as pa

    from .files import _filesystem

    filesystem, inner, _ = _filesystem(part["path"])
    start, end = part["start"], part["end"]
    with filesystem.open_input_file(inner) as stream:
        if start > 0:
            stream.seek(start - 1)
            if stream.read(1) != b"\n":
                start += len(_read_line(stream))
        data = b""
        if start < end:
            stream.seek(start)
            data = stream.read(end - start)
            if not data.endswith(b"\n"):
                data += _read_line(stream)  # the last line that begins here ends after ``end``
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return pa.table({"line": pa.array(lines, pa.binary())})


def _read_line(stream: Any) -> bytes:
    out = bytearray()
    while True:
        block = stream.read(1 << 16)
        if not block:
            return bytes(out)
        cut = block.find(b"\n")
        if cut >= 0:
            return bytes(out + block[: cut + 1])
        out += block


def _warn_key_order(name: str, renderer: RowRenderer) -> None:
    """The one KeyOrderWarning of a run, from the first file's schema (its tasks warn none)."""
    import pyarrow.parquet as pq

    from .arrow import key_order_columns, warn_key_order
    from .files import _filesystem

    filesystem, inner, _ = _filesystem(name)
    with filesystem.open_input_file(inner) as stream:
        schema = pq.ParquetFile(stream).schema_arrow
    warn_key_order(key_order_columns(renderer, schema), stacklevel=3)


def _from_parts(parts: list[dict[str, Any]]) -> Any:
    import ray

    return ray.data.from_items(parts, override_num_blocks=max(1, len(parts)))


def read_json_lines(
    paths: str | Sequence[str], *, part_bytes: int = JSONL_PART_BYTES, num_cpus: float = 1.0
) -> Any:
    """A Ray `Dataset` of the raw lines of JSONL files (column `line`), in order: files,
    folders or globs (`files.input_files`), each file read in parts
    of `part_bytes` bytes cut at line ends, one read task per part."""
    fmt, files = input_files(paths)
    if fmt != "jsonl":
        raise ValueError(f"read_json_lines reads JSONL files, and {files[0]!r} is Parquet")
    # batch_size=1: one part a task, so that the parts spread over the cluster
    return _from_parts(_jsonl_parts(files, part_bytes)).map_batches(
        _read_parts, fn_args=("jsonl",), batch_format="pyarrow", batch_size=1, num_cpus=num_cpus
    )


# -- rendering blocks in tasks: the template compiled once per worker process ---------------------

_COMPILED: dict[bytes, Any] = {}


def _render_block(batch: Any, renderer: RowRenderer, json_lines: bool, warn: bool = True) -> Any:
    from ray import cloudpickle  # the worker's own: it pickles a class defined by value too

    key = hashlib.sha256(cloudpickle.dumps((renderer, json_lines, warn))).digest()
    function = _COMPILED.get(key)
    if function is None:
        # a worker process runs many tasks: the first one compiles, the others reuse it
        function = JsonLineRenderer(renderer) if json_lines else ColumnRenderer(renderer, warn)
        _COMPILED.clear()
        _COMPILED[key] = function
    return function(batch)


def _render_table(function: Any, table: Any, batch_size: int | None) -> Any:
    import pyarrow as pa

    if not batch_size or table.num_rows <= batch_size:
        return function(table)
    pieces = [function(table.slice(i, batch_size)) for i in range(0, table.num_rows, batch_size)]
    return pa.concat_tables(pieces, promote_options="permissive")


def _render_parts(parts: Any, fmt: str, renderer: RowRenderer, batch_size: int | None) -> Any:
    """Read each part and render it, `batch_size` rows at a time: one task does both, so
    that no CPU is held by one half of the job while the other half waits for it."""
    table = _read_parts(parts, fmt)
    return _render_table(  # (render_files warned of key order, once)
        lambda piece: _render_block(piece, renderer, fmt == "jsonl", False), table, batch_size
    )


class PartRenderer:
    """The actor form of `_render_parts`, for `compute=ActorPoolStrategy(...)`."""

    def __init__(self, renderer: RowRenderer, fmt: str, batch_size: int | None) -> None:
        self.function: JsonLineRenderer | ColumnRenderer = (
            JsonLineRenderer(renderer) if fmt == "jsonl" else ColumnRenderer(renderer, False)
        )
        self.fmt = fmt
        self.batch_size = batch_size

    def __call__(self, parts: Any) -> Any:
        return _render_table(self.function, _read_parts(parts, self.fmt), self.batch_size)


def _is_actor_pool(compute: Any) -> bool:
    import ray

    return isinstance(compute, ray.data.ActorPoolStrategy)


def _compute(compute: Any, concurrency: int | None) -> Any:
    import ray

    if concurrency is not None:
        if compute is not None:
            raise ValueError("give compute or concurrency, not both")
        warnings.warn(
            "concurrency=N is deprecated (as in Ray 2.51): pass "
            "compute=ray.data.ActorPoolStrategy(size=N) for N actors, or leave compute out "
            "for tasks",
            DeprecationWarning,
            stacklevel=3,
        )
        return ray.data.ActorPoolStrategy(size=concurrency)
    return compute if compute is not None else ray.data.TaskPoolStrategy()


def _check_cluster(compute: Any, num_cpus: float) -> None:
    """Refuse, before any work, a job that the cluster's CPUs can never run."""
    import ray

    cpus = ray.cluster_resources().get("CPU", 0.0)
    if num_cpus > cpus:
        raise ClusterError(
            f"each render task or actor asks for {num_cpus:g} CPUs and the cluster has "
            f"{cpus:g}: lower num_cpus or add nodes"
        )
    if _is_actor_pool(compute):
        actors = compute.min_size
        if actors * num_cpus > cpus:
            raise ClusterError(
                f"{actors} actors of {num_cpus:g} CPUs need {actors * num_cpus:g} CPUs and the "
                f"cluster has {cpus:g}: use fewer actors, fewer CPUs each, or tasks "
                "(leave compute out)"
            )


def render_dataset(
    dataset: Any,
    renderer: RowRenderer,
    *,
    json_lines: bool = False,
    compute: Any = None,
    num_cpus: float = 1.0,
    batch_size: int | None = 1024,
    concurrency: int | None = None,
) -> Any:
    """`dataset` (rows of conversations, or with `json_lines` the `line` rows of
    `read_json_lines`) mapped to result rows; lazy, like every Ray Data transformation.

    `compute` is Ray Data's: leave it out for tasks of `num_cpus` CPUs (which Ray fuses with
    the read before them and the write after them), or pass
    `ray.data.ActorPoolStrategy(size=n)` for `n` actors of `num_cpus` CPUs each.
    `concurrency=n` (deprecated, as in Ray) means `ActorPoolStrategy(size=n)`. With actors,
    read the dataset with tasks that ask for no CPU (`ray.data.read_parquet(...,
    ray_remote_args={"num_cpus": 0})`): actors that hold every CPU of a node would otherwise
    leave none to the reads, and the job would wait for ever. The rows come
    back in input order when the dataset's `context.execution_options.preserve_order` is set
    (as `render_files` sets it); otherwise Ray may return them in another order.
    """
    compute = _compute(compute, concurrency)
    if _is_actor_pool(compute):
        function: Any = JsonLineRenderer if json_lines else ColumnRenderer
        return dataset.map_batches(
            function,
            fn_constructor_args=(renderer,),
            batch_format="pyarrow",
            batch_size=batch_size,
            compute=compute,
            num_cpus=num_cpus,
        )
    return dataset.map_batches(
        _render_block,
        fn_args=(renderer, json_lines),
        batch_format="pyarrow",
        batch_size=batch_size,
        compute=compute,
        num_cpus=num_cpus,
    )


def _parse_block(batch: Any, parser: RowParser) -> Any:
    from ray import cloudpickle

    key = hashlib.sha256(cloudpickle.dumps(("parse", parser))).digest()
    function = _COMPILED.get(key)
    if function is None:
        # (a worker process runs many tasks: the first reads or infers the response template,
        # the others reuse it)
        function = ColumnParser(parser)
        _COMPILED.clear()
        _COMPILED[key] = function
    return function(batch)


def parse_dataset(
    dataset: Any,
    parser: RowParser,
    *,
    compute: Any = None,
    num_cpus: float = 1.0,
    batch_size: int | None = 1024,
) -> Any:
    """`dataset`'s rows of generated text (its `parser.response_key` column, and
    `parser.prefix_key` where it has one) mapped to result rows: the pass-through columns,
    `message` (JSON text) and `error`, each failure in its own row; lazy, like every Ray Data
    transformation. `compute` and `num_cpus` are `render_dataset`'s: tasks by default, or
    `ray.data.ActorPoolStrategy(size=n)` for `n` actors."""
    compute = _compute(compute, None)
    if _is_actor_pool(compute):
        return dataset.map_batches(
            ColumnParser,
            fn_constructor_args=(parser,),
            batch_format="pyarrow",
            batch_size=batch_size,
            compute=compute,
            num_cpus=num_cpus,
        )
    return dataset.map_batches(
        _parse_block,
        fn_args=(parser,),
        batch_format="pyarrow",
        batch_size=batch_size,
        compute=compute,
        num_cpus=num_cpus,
    )


def render_files(
    inputs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    renderer: RowRenderer,
    *,
    compute: Any = None,
    num_cpus: float = 1.0,
    blocks: int | None = None,
    batch_size: int | None = 1024,
    preserve_order: bool = True,
    stall_timeout_s: float | None = DEFAULT_STALL_TIMEOUT_S,
    concurrency: int | None = None,
    overwrite: bool = False,
) -> None:
    """Render Parquet or JSONL `inputs` (files, folders or globs; local paths or URIs that
    pyarrow reads: `s3://`, `gs://`, `hdfs://`) into Parquet files in the folder `output`.

    The input format is found from the files' suffixes before any work (a mix of formats, or a
    file of another suffix, is a `ValueError`). With `preserve_order` (the default) the output
    files, read in file-name order, hold the rows in input order. `blocks` asks for at least that
    many parts (a part: up to 32 MiB of a JSONL file cut at line ends, or up to 64 MiB of a Parquet
    file's row groups; one task reads, renders and writes a part, into one output file), so that
    a small input still spreads over the cluster.

    The job runs in tasks unless `compute` is an actor pool (see `render_dataset`). A job
    that the cluster's CPUs can never run is refused with a `ClusterError` before it starts;
    one that makes no progress for `stall_timeout_s` seconds (a lost node whose work cannot be
    placed, a cluster taken by other jobs) stops with a `ClusterError` that says why
    (`None`: wait for ever). Call `ray.init(...)` first to choose the cluster
    (`ray.init(address="auto")` joins a running one); otherwise Ray starts a local one.

    `output` must be absent or empty: a folder that holds anything is refused with
    `FileExistsError` before any work (a second run's files beside the first's would double the
    rows). `overwrite=True` deletes a previous run's Parquet files first (a folder holding
    anything else, or the inputs, is still refused).
    """
    import ray

    fmt, files = input_files(inputs)
    prepare_output_folder(output, files, overwrite=overwrite)
    compute = _compute(compute, concurrency)
    if not ray.is_initialized():
        ray.init()
    _check_cluster(compute, num_cpus)
    actors = _is_actor_pool(compute)
    # With actors, writes ask for no CPU: actors holding every CPU cannot starve them. Tasks read,
    # render and write in one (Ray fuses the write into the render task).
    io_cpus = 0.0 if actors else num_cpus
    if fmt == "jsonl":
        part_bytes = JSONL_PART_BYTES
        if blocks:
            total = sum(p["end"] - p["start"] for p in _jsonl_parts(files, JSONL_PART_BYTES))
            part_bytes = max(1, min(part_bytes, -(-total // blocks)))
        parts = _jsonl_parts(files, part_bytes)
    else:
        parts = _parquet_parts(files, blocks)
        _warn_key_order(files[0], renderer)
    dataset = _from_parts(parts)
    context = dataset.context
    context.execution_options.preserve_order = preserve_order
    context.execution_no_progress_timeout_s = (
        -1 if stall_timeout_s is None else float(stall_timeout_s)
    )
    if actors:
        # the pool hands out parts once all its actors are up (so that each gets work), or fails
        # with Ray's "Timed out while starting actors" when the cluster cannot place them
        context.wait_for_min_actors_s = int(stall_timeout_s or DEFAULT_STALL_TIMEOUT_S)
        rendered = dataset.map_batches(
            PartRenderer,
            fn_constructor_args=(renderer, fmt, batch_size),
            batch_format="pyarrow",
            batch_size=1,  # one part a call
            compute=compute,
            num_cpus=num_cpus,
        )
    else:
        rendered = dataset.map_batches(
            _render_parts,
            fn_args=(fmt, renderer, batch_size),
            batch_format="pyarrow",
            batch_size=1,  # one part a task, so that the parts spread over the cluster
            compute=compute,
            num_cpus=num_cpus,
        )
    try:
        rendered.write_parquet(os.fspath(output), ray_remote_args={"num_cpus": io_cpus})
    except Exception as exc:
        if type(exc).__name__ in ("ExecutionTimeoutError", "GetTimeoutError"):
            raise ClusterError(
                f"render_files made no progress for {stall_timeout_s:g} s on a cluster of "
                f"{ray.cluster_resources().get('CPU', 0):g} CPUs "
                f"({len(ray.nodes())} nodes known, "
                f"{sum(1 for node in ray.nodes() if node.get('Alive'))} alive): {exc}"
            ) from exc
        raise
