"""The driver of tests/test_ray.py: one scenario run against a running cluster, in a process of
its own (Ray reads its token authentication settings when it is imported), printing its result
as one JSON line.

    python tests/ray_driver.py SCENARIO ADDRESS WORKDIR

The renderers here leave a marker per worker process (its node id, and its parent's pid: the
raylet that started it), so that the test sees which nodes did work and which raylet to kill.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import mixed_rows
import pyarrow as pa
import pyarrow.parquet as pq
import ray

from minijinja_py.pipelines import RowRenderer
from minijinja_py.pipelines.ray_data import (
    ClusterError,
    parse_dataset,
    read_json_lines,
    render_dataset,
    render_files,
)


class NodeRenderer(RowRenderer):
    """The library's renderer that leaves a marker file named after its node, once per process;
    with ``pause`` it also sleeps that long per row (to be caught mid-run)."""

    markers = ""
    pause = 0.0

    def render_row(self, row: Any, drop_none: bool = False) -> dict[str, Any]:
        if not getattr(self, "_marked", False):
            self._marked = True
            node = ray.get_runtime_context().get_node_id()
            Path(self.markers, f"{node}.{os.getpid()}").write_text(str(os.getppid()))
        if self.pause:
            time.sleep(self.pause)
        return super().render_row(row, drop_none)


def renderer(workdir: Path, pause: float = 0.0) -> NodeRenderer:
    base = mixed_rows.renderer()
    node = NodeRenderer(base.chat, passthrough=base.passthrough)
    node.markers = str(workdir / "markers")
    node.pause = pause
    (workdir / "markers").mkdir(exist_ok=True)
    return node


def parquet_folder(workdir: Path, count: int, files: int, nested: bool = False) -> Path:
    """The rows as Parquet files: JSON text columns, or nested columns (one schema, the union
    of every row's keys, for all the files)."""
    folder = workdir / "parquet"
    folder.mkdir()
    items = mixed_rows.rows(count)
    rows = items if nested else mixed_rows.as_json_text(items)
    schema = pa.array(rows).type
    size = -(-count // files)
    for i in range(files):
        part = pa.array(rows[i * size : (i + 1) * size], type=schema)
        table = pa.Table.from_struct_array(part)
        pq.write_table(table, folder / f"part-{i:03}.parquet")
    (folder / "_SUCCESS").write_text("")  # what Spark leaves: not an input
    return folder


def jsonl_files(workdir: Path, count: int, files: int) -> list[str]:
    rows = mixed_rows.rows(count)
    size = -(-count // files)
    names = []
    for i in range(files):
        path = workdir / f"in-{i}.jsonl"
        path.write_text(mixed_rows.jsonl(rows[i * size : (i + 1) * size]))
        names.append(str(path))
    return names


def output(folder: Path) -> list[dict[str, Any]]:
    names = sorted(name for name in os.listdir(folder) if name.endswith(".parquet"))
    return [row for name in names for row in pq.read_table(folder / name).to_pylist()]


def main() -> None:
    scenario, address, workdir = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    ray.init(address=address, log_to_driver=False, configure_logging=False)
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    result: dict[str, Any] = {}
    started = time.monotonic()
    if scenario == "parquet folder":  # the documented call with its defaults
        render_files(str(parquet_folder(workdir, 400, 4)), workdir / "out", renderer(workdir))
        result["rows"] = output(workdir / "out")
    elif scenario == "jsonl files":
        render_files(jsonl_files(workdir, 400, 2), workdir / "out", renderer(workdir), blocks=4)
        result["rows"] = output(workdir / "out")
    elif scenario == "actors":  # the settings that used to wait for ever on one-CPU nodes
        pool = ray.data.ActorPoolStrategy(size=2)
        folder = parquet_folder(workdir, 400, 4)
        render_files(str(folder / "*.parquet"), workdir / "out", renderer(workdir), compute=pool)
        result["rows"] = output(workdir / "out")
    elif scenario == "datasets of Ray":  # nested Parquet, and raw JSON lines
        folder = parquet_folder(workdir, 400, 4, nested=True)
        rows = render_dataset(ray.data.read_parquet(str(folder)), renderer(workdir)).take_all()
        result["rows"] = sorted(rows, key=lambda row: row["id"])  # no order asked for
        lines = read_json_lines(jsonl_files(workdir, 400, 2), part_bytes=4096)
        lines.context.execution_options.preserve_order = True
        result["lines"] = render_dataset(lines, renderer(workdir), json_lines=True).take_all()
    elif scenario == "parse":  # generated text back into messages, in tasks and in actors
        # (four blocks from the driver: no read task, which actors holding every CPU starve)
        table = pa.table(mixed_rows.generations(200))
        blocks = [table.slice(start, 50) for start in range(0, 200, 50)]
        actors = ray.data.ActorPoolStrategy(size=2)
        for name, options in (("tasks", {}), ("actors", {"compute": actors, "num_cpus": 0.5})):
            parsed = parse_dataset(
                ray.data.from_arrow(blocks), mixed_rows.parser(), batch_size=16, **options
            )
            result[name] = sorted(parsed.take_all(), key=lambda row: row["id"])
    elif scenario == "too big":
        errors = []
        for options in ({"num_cpus": 3}, {"compute": ray.data.ActorPoolStrategy(size=3)}):
            try:
                render_files(
                    jsonl_files(workdir, 10, 1), workdir / "out", renderer(workdir), **options
                )
            except ClusterError as exc:
                errors.append(str(exc))
        result["errors"] = errors
    elif scenario == "stall":  # a row that takes longer than the stall timeout
        try:
            render_files(
                jsonl_files(workdir, 2, 1),
                workdir / "out",
                renderer(workdir, 5.0),
                stall_timeout_s=1,
            )
        except ClusterError as exc:
            result["error"] = str(exc)
    elif scenario == "lose a node":
        try:
            render_files(
                str(parquet_folder(workdir, 240, 12)),
                workdir / "out",
                renderer(workdir, pause=0.05),
                stall_timeout_s=60,
            )
            result["rows"] = output(workdir / "out")
        except Exception as exc:  # the test accepts an error that names the cause
            result["error"] = f"{type(exc).__name__}: {exc}"
    result["seconds"] = time.monotonic() - started
    print("RESULT " + json.dumps(result), flush=True)
    ray.shutdown()


if __name__ == "__main__":
    main()
