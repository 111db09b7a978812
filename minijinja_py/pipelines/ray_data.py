"""Render Parquet or JSONL files of conversations with Ray Data, on one machine or a cluster.

The callable classes of :mod:`.arrow` go to ``map_batches`` as they are: Ray builds one per
actor, and each actor compiles the template once, on its first batch.

>>> import ray
>>> from minijinja_py.chat import ChatTemplate
>>> from minijinja_py.pipelines import RowRenderer
>>> from minijinja_py.pipelines.arrow import ColumnRenderer
>>> renderer = RowRenderer(ChatTemplate.from_pretrained("Qwen/Qwen3-0.6B"), passthrough=["id"])
>>> rows = ray.data.read_parquet("s3://bucket/conversations/")  # doctest: +SKIP
>>> rendered = rows.map_batches(  # doctest: +SKIP
...     ColumnRenderer, fn_constructor_args=(renderer,), batch_format="pyarrow", concurrency=16
... )

:func:`render_files` does the whole trip in one call. ``ray`` is imported by this module only.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from .arrow import ColumnRenderer, JsonLineRenderer
from .files import file_format
from .rows import RowRenderer

__all__ = ["read_json_lines", "render_dataset", "render_files"]


def _split_lines(row: dict[str, Any]) -> list[dict[str, Any]]:
    # b"\n" only, as the command line splits: Ray's own text reader also splits on "\r".
    data = row["bytes"]
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [{"line": line} for line in lines]


def read_json_lines(paths: str | Sequence[str]) -> Any:
    """A Ray ``Dataset`` of the raw lines of JSONL files (column ``line``), in order; each file is
    read whole by one task, so split very large inputs into several files (or use Parquet)."""
    import ray

    return ray.data.read_binary_files(paths).flat_map(_split_lines)


def render_dataset(
    dataset: Any,
    renderer: RowRenderer,
    *,
    json_lines: bool = False,
    concurrency: int | None = None,
    num_cpus: float = 1.0,
    batch_size: int | None = 1024,
) -> Any:
    """``dataset`` (rows of conversations, or with ``json_lines`` the ``line`` rows of
    :func:`read_json_lines`) mapped to result rows by ``concurrency`` actors of ``num_cpus``
    CPUs each; lazy, like every Ray Data transformation."""
    function = JsonLineRenderer if json_lines else ColumnRenderer
    return dataset.map_batches(
        function,
        fn_constructor_args=(renderer,),
        batch_format="pyarrow",
        batch_size=batch_size,
        concurrency=concurrency,
        num_cpus=num_cpus,
    )


def render_files(
    inputs: str | Sequence[str],
    output: str | os.PathLike[str],
    renderer: RowRenderer,
    *,
    concurrency: int | None = None,
    num_cpus: float = 1.0,
    blocks: int | None = None,
    batch_size: int | None = 1024,
) -> None:
    """Render Parquet or JSONL ``inputs`` (files or folders; the format is read off the first
    path) into Parquet files in the folder ``output``: one file per block, each block's rows in
    input order; the files' names do not follow the input's order, so keep an id column
    (``passthrough``) to put the rows back in order.

    ``blocks`` repartitions the input first, so that a small input still reaches every actor.
    Call ``ray.init(...)`` first to choose the cluster (``ray.init("auto")`` joins a running one);
    otherwise Ray starts a local one.
    """
    import ray

    paths = [inputs] if isinstance(inputs, (str, os.PathLike)) else list(inputs)
    paths = [os.fspath(path) for path in paths]
    json_lines = file_format(paths[0]) == "jsonl"
    context = ray.data.DataContext.get_current()
    context.execution_options.preserve_order = True
    dataset = read_json_lines(paths) if json_lines else ray.data.read_parquet(paths)
    if blocks is not None:
        dataset = dataset.repartition(blocks)
    rendered = render_dataset(
        dataset,
        renderer,
        json_lines=json_lines,
        concurrency=concurrency,
        num_cpus=num_cpus,
        batch_size=batch_size,
    )
    rendered.write_parquet(os.fspath(output))
