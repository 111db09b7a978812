"""Ray Data on a real local cluster of 2 CPUs, started here: the same rows as the plain loop.

Two actors of half a CPU each leave room for Ray's read tasks on a 2-core machine; the memory
monitor is off (it kills workers on a busy shared machine); small inputs are repartitioned, and
the actor pool waits for both actors before it hands out blocks, so that both get work.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

ray = pytest.importorskip("ray")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from minijinja_py.chat import ChatTemplate  # noqa: E402
from minijinja_py.pipelines import RowRenderer  # noqa: E402
from minijinja_py.pipelines.arrow import JsonLineRenderer, render_arrow  # noqa: E402
from minijinja_py.pipelines.jsonl import render_lines  # noqa: E402
from minijinja_py.pipelines.ray_data import read_json_lines, render_files  # noqa: E402

pytestmark = pytest.mark.ray

TEMPLATE = (
    "{% for m in messages %}{% if m.content == 'boom' %}{{ raise_exception('boom') }}{% endif %}"
    "<{{ m.role }}>{{ m.content }}{% endfor %}"
)
COUNT = 200


@pytest.fixture(scope="module")
def cluster():
    os.environ["RAY_memory_monitor_refresh_ms"] = "0"
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
        runtime_env={"env_vars": {"RAY_memory_monitor_refresh_ms": "0"}},
    )
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    # the pool starts dispatching once both actors are up, so that both get blocks to render
    context.wait_for_min_actors_s = 300
    yield
    ray.shutdown()


def conversation(i: int) -> list[dict]:
    messages = [{"role": "user", "content": f"question {i}"}]
    if i % 4 == 1:
        messages.append({"role": "assistant", "content": f"answer {i}"})
    if i % 10 == 3:
        messages[0]["content"] = "boom"  # the template raises on this row alone
    return messages


def renderer() -> RowRenderer:
    return RowRenderer(ChatTemplate.from_string(TEMPLATE), passthrough=["id"])


class PidRenderer(JsonLineRenderer):
    """The library's actor class, with the process that rendered each row."""

    def __call__(self, batch):
        table = super().__call__(batch)
        return table.append_column("pid", pa.array([os.getpid()] * table.num_rows))


def test_json_lines_on_two_actors_equal_the_loop(cluster, tmp_path):
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    lines = [json.dumps({"id": i, "messages": conversation(i)}) for i in range(COUNT)]
    lines[17] = "{not json"
    lines[42] = json.dumps({"id": 42, "messages": [], "chat_template": "{{ 1 }}"})
    lines[77] = '[{"role": "user", "content": "a bare list"}]'
    path = tmp_path / "in.jsonl"
    path.write_bytes(("\n".join(lines) + "\n").encode())
    expected_bytes, rows, errors = render_lines(renderer(), [line.encode() for line in lines])
    expected = [json.loads(line) for line in expected_bytes.decode().splitlines()]
    assert (rows, errors) == (COUNT, 22)

    rendered = (
        read_json_lines(str(path))
        .repartition(4)
        .map_batches(
            PidRenderer,
            fn_constructor_args=(renderer(),),
            batch_format="pyarrow",
            batch_size=25,
            concurrency=2,
            num_cpus=0.5,
        )
    )
    rows = rendered.take_all()
    assert len({row.pop("pid") for row in rows}) == 2  # both actors rendered
    # without preserve_order the rows may come back in another order: compare them as sets
    assert sorted(rows, key=json.dumps) == sorted(expected, key=json.dumps)


def test_parquet_files_equal_the_loop(cluster, tmp_path):
    table = pa.table(
        {"id": list(range(COUNT)), "messages": [conversation(i) for i in range(COUNT)]}
    )
    source = tmp_path / "in.parquet"
    pq.write_table(table, source, row_group_size=50)
    out = tmp_path / "out"
    render_files(str(source), out, renderer(), concurrency=2, num_cpus=0.5, blocks=4, batch_size=25)
    result = pq.read_table(out)
    # the output folder holds one file per block, read back in file-name order: order by id
    rows = sorted(result.to_pylist(), key=lambda row: row["id"])
    assert rows == render_arrow(renderer(), table).to_pylist()
    assert result.column("error").null_count == COUNT - COUNT // 10
