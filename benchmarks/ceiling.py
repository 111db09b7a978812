"""What N independent processes reach on this machine, with no `batch` around them: the ceiling
against which `batch --workers N`'s speed-up is read.

    python -m benchmarks.ceiling                    # 1, 4, 8, 16 processes, then 1 again
    python -m benchmarks.ceiling --workers 1,2,4 --rows 4000

Each process does the same fixed work and reports its own CPU and wall seconds: `spin`, an
integer loop that touches no data (what the cores and their clock give), and `render`, the plain
in-process loop of benchmarks.scale over generated conversations (what rendering alone gives,
with nothing shipped between processes). N processes finish N pieces of work; their speed-up
over one is the sum of their rates over one process's, as a batch that hands out work while
there is some would see it. One process is timed before and after the others, and its mean is
the base: on a shared or virtual machine the same work takes a different time from one minute
to the next, and the two single runs show by how much.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.scale import ROOT, write_input

KINDS = ("spin", "render")

# The child: its own CPU and wall seconds for one piece of work, on one line.
_CHILD = """
import sys, time
kind, source, start_at = sys.argv[1], sys.argv[2], float(sys.argv[3])
if kind == "render":
    from pathlib import Path
    from benchmarks.scale import run_loop
    import minijinja_py.chat
while time.time() < start_at:  # every process starts its work at the same moment
    time.sleep(0.001)
wall, cpu = time.perf_counter(), time.process_time()
if kind == "spin":
    total = 0
    for number in range(20_000_000):
        total += number
else:
    run_loop(Path(source))
print(time.process_time() - cpu, time.perf_counter() - wall)
"""


@dataclass(frozen=True)
class Round:
    """N processes started together: each one's CPU and wall seconds."""

    cpu: list[float]
    wall: list[float]


def run_round(kind: str, processes: int, source: Path) -> Round:
    # time for every child to start and import what it needs before the common start
    start_at = time.time() + 1.0 + processes * 0.1
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _CHILD, kind, str(source), repr(start_at)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(processes)
    ]
    cpu, wall = [], []
    for child in children:
        out, _ = child.communicate()
        if child.returncode:
            raise SystemExit(f"a {kind} process exited with {child.returncode}")
        first, second = out.split()
        cpu.append(float(first))
        wall.append(float(second))
    return Round(cpu, wall)


def speed_up(single_walls: list[float], walls: list[float]) -> float:
    """The rate of processes that each did one piece of work in `walls` seconds, over one
    process's (the mean of `single_walls`)."""
    base = statistics.fmean(single_walls)
    return sum(base / wall for wall in walls)


def print_ceiling(kind: str, singles: list[Round], rounds: dict[int, Round]) -> None:
    single_walls = [wall for single in singles for wall in single.wall]
    single_cpu = statistics.fmean(cpu for single in singles for cpu in single.cpu)
    print(
        f"\n`{kind}`: one process alone, before and after: "
        + ", ".join(f"{wall:.2f} s" for wall in single_walls)
        + "\n"
    )
    print(
        "| processes | CPU per process: mean (min–max) | over one alone | speed-up over one "
        "| per process |"
    )
    print("| ---: | ---: | ---: | ---: | ---: |")
    print(f"| 1 | {single_cpu:.2f} s | 1.00× | 1.0× | 100% |")
    for processes, run in sorted(rounds.items()):
        mean = statistics.fmean(run.cpu)
        gain = speed_up(single_walls, run.wall)
        print(
            f"| {processes} | {mean:.2f} s ({min(run.cpu):.2f}–{max(run.cpu):.2f}) "
            f"| {mean / single_cpu:.2f}× | {gain:.1f}× | {gain / processes:.0%} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", default="4,8,16", help="process counts besides one")
    parser.add_argument("--rows", type=int, default=8000, help="conversations per render")
    parser.add_argument("--only", default=",".join(KINDS))
    args = parser.parse_args()
    counts = [int(n) for n in args.workers.split(",") if int(n) > 1]
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "in.jsonl"
        write_input(source, args.rows)
        for kind in args.only.split(","):
            before = run_round(kind, 1, source)
            rounds = {processes: run_round(kind, processes, source) for processes in counts}
            after = run_round(kind, 1, source)
            print_ceiling(kind, [before, after], rounds)


if __name__ == "__main__":
    main()
