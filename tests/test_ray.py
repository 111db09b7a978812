"""Ray Data on a real two-node local cluster started here: two ``ray start`` raylets of one CPU
each, with token authentication as Ray 2.60 sets it up for a second node. Each scenario runs the
documented call in a driver process of its own (tests/ray_driver.py) and must give the plain
loop's rows, with both nodes doing work; a third node is killed mid-run to see the job complete
or fail with its cause, never hang. The cluster's processes (and only they: ``ray stop --force``
would also stop other people's clusters on a shared machine) are stopped at the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ray")
pytest.importorskip("pyarrow")

import mixed_rows  # noqa: E402

pytestmark = pytest.mark.ray

ROOT = Path(__file__).resolve().parents[1]
RAY = str(Path(sys.executable).with_name("ray"))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def ray_cli(env: dict[str, str], *args: str) -> None:
    done = subprocess.run(
        [RAY, *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    token = secrets.token_hex(32)
    env = {
        **os.environ,
        # every process of the cluster and every driver must present the same token
        "RAY_AUTH_MODE": "token",
        "RAY_AUTH_TOKEN": token,
        # the workers import this checkout's package and the tests' helpers
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")]),
        # the memory monitor kills workers on a busy shared machine; a lost node is found fast
        "RAY_memory_monitor_refresh_ms": "0",
        "RAY_health_check_period_ms": "1000",
        "RAY_health_check_failure_threshold": "3",
        "RAY_USAGE_STATS_ENABLED": "0",
    }
    address = f"127.0.0.1:{free_port()}"
    temp = tmp_path_factory.mktemp("ray-cluster")
    try:
        ray_cli(
            env,
            "start",
            "--head",
            f"--port={address.split(':')[1]}",
            "--num-cpus=1",
            "--include-dashboard=false",
            f"--temp-dir={temp}",
        )
        ray_cli(env, "start", f"--address={address}", "--num-cpus=1")
        yield {"address": address, "env": env}
    finally:
        stop_cluster(str(temp))


def _processes() -> dict[int, tuple[int, str]]:
    """Every process: its parent's pid and its command line."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:  # gone meanwhile
            continue
        found[int(entry)] = (int(stat.rsplit(")", 1)[1].split()[1]), command)
    return found


def stop_cluster(temp: str) -> None:
    """Stop this cluster's processes (both nodes' and their workers), and only them: ``ray stop
    --force`` would stop every Ray process of the machine, other people's clusters included.
    A process of this cluster names its temporary folder on its command line; its workers are
    its descendants (their command line is their title, ``ray::IDLE``)."""
    ours: set[int] = set()
    table = _processes()
    mine = {os.getpid()}  # this process and its ancestors are not the cluster's
    pid = os.getpid()
    while pid in table and table[pid][0] > 1:
        pid = table[pid][0]
        mine.add(pid)
    for signal_number, wait in ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0)):
        table = _processes()
        ours |= {pid for pid, (_, command) in table.items() if temp + "/" in command} - mine
        grown = True
        while grown:  # the workers: descendants of the cluster's processes
            children = {pid for pid, (parent, _) in table.items() if parent in ours} - ours
            grown = bool(children)
            ours |= children
        for pid in sorted(ours & set(table)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal_number)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and ours & set(_processes()):
            time.sleep(0.2)
        if not ours & set(_processes()):
            return


def drive(cluster, scenario: str, workdir: Path, timeout: float = 150) -> dict:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "tests" / "ray_driver.py"),
            scenario,
            cluster["address"],
            str(workdir),
        ],
        env=cluster["env"],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return result_of(done.stdout)


def result_of(stdout: str) -> dict:
    (line,) = [line for line in stdout.splitlines() if line.startswith("RESULT ")]
    return json.loads(line[len("RESULT ") :])


def nodes(workdir: Path) -> set[str]:
    return {name.split(".")[0] for name in os.listdir(workdir / "markers")}


def test_parquet_folder_with_the_defaults_equals_the_loop_on_both_nodes(cluster, tmp_path):
    result = drive(cluster, "parquet folder", tmp_path)
    assert result["rows"] == mixed_rows.loop(mixed_rows.rows(400))  # in input order
    assert len(nodes(tmp_path)) == 2


def test_jsonl_files_with_the_defaults_equal_the_loop_on_both_nodes(cluster, tmp_path):
    result = drive(cluster, "jsonl files", tmp_path)
    assert result["rows"] == mixed_rows.loop(mixed_rows.rows(400))
    assert len(nodes(tmp_path)) == 2


def test_an_actor_pool_on_one_cpu_nodes_makes_progress(cluster, tmp_path):
    result = drive(cluster, "actors", tmp_path)
    assert result["rows"] == mixed_rows.loop(mixed_rows.rows(400))
    assert len(nodes(tmp_path)) == 2


def test_render_dataset_of_nested_parquet_and_of_json_lines(cluster, tmp_path):
    result = drive(cluster, "datasets of Ray", tmp_path)
    expected = mixed_rows.loop(mixed_rows.rows(400))
    assert result["rows"] == expected
    assert result["lines"] == expected


def test_parse_dataset_in_tasks_and_in_actors_gives_the_loops_rows(cluster, tmp_path):
    result = drive(cluster, "parse", tmp_path)
    expected = mixed_rows.parse_loop(mixed_rows.generations(200))
    assert result["tasks"] == expected
    assert result["actors"] == expected
    assert sum(1 for row in expected if row["error"] is not None) == 66  # (one bad row in 3)


def test_a_job_the_cluster_cannot_run_is_refused_before_it_starts(cluster, tmp_path):
    assert drive(cluster, "too big", tmp_path)["errors"] == [
        "each render task or actor asks for 3 CPUs and the cluster has 2: lower num_cpus or "
        "add nodes",
        "3 actors of 1 CPUs need 3 CPUs and the cluster has 2: use fewer actors, fewer CPUs "
        "each, or tasks (leave compute out)",
    ]


def test_a_job_without_progress_stops_with_its_cause(cluster, tmp_path):
    error = drive(cluster, "stall", tmp_path)["error"]
    assert error.startswith(
        "render_files made no progress for 1 s on a cluster of 2 CPUs (2 nodes known, 2 alive): "
        "Dataset execution made no progress for at least 1s"
    ), error


def test_concurrency_is_deprecated_for_compute():
    from ray.data import ActorPoolStrategy, TaskPoolStrategy

    from minijinja_py.pipelines.ray_data import _compute

    with pytest.warns(DeprecationWarning, match=r"^concurrency=N is deprecated \(as in Ray 2.51\)"):
        pool = _compute(None, 3)
    assert isinstance(pool, ActorPoolStrategy) and pool.min_size == pool.max_size == 3
    assert isinstance(_compute(None, None), TaskPoolStrategy)
    with pytest.raises(ValueError, match="^give compute or concurrency, not both$"):
        _compute(TaskPoolStrategy(), 2)


def raylets() -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and Path(f"/proc/{entry}/comm").read_text().strip() == "raylet":
                found.add(int(entry))
        except OSError:  # gone meanwhile
            pass
    return found


def test_a_node_lost_mid_run_completes_or_names_the_cause(cluster, tmp_path):
    # a third node, whose raylet is killed once it has started rendering
    before = raylets()
    ray_cli(cluster["env"], "start", f"--address={cluster['address']}", "--num-cpus=1")
    (third,) = raylets() - before
    driver = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "tests" / "ray_driver.py"),
            "lose a node",
            cluster["address"],
            str(tmp_path),
        ],
        env=cluster["env"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    markers = tmp_path / "markers"
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and driver.poll() is None:
            time.sleep(0.2)
            parents = (
                {int((markers / n).read_text()) for n in os.listdir(markers)}
                if markers.exists()
                else set()
            )
            if third in parents:
                os.kill(third, signal.SIGKILL)
                break
        else:
            pytest.fail("the job never ran on the third node")
        out, err = driver.communicate(timeout=150)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.communicate()
    assert driver.returncode == 0, (out[-2000:], err[-4000:])
    result = result_of(out)
    assert len(nodes(tmp_path)) == 3
    if "error" in result:  # allowed: an error that names the lost node
        assert "node" in result["error"].lower(), result["error"]
    else:  # complete, each row once, in order
        assert result["rows"] == mixed_rows.loop(mixed_rows.rows(240))
    print(result.get("error", "complete"), result["seconds"])
