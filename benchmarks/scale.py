"""Throughput at scale: conversations per second through every way of rendering a data set, and
the peak memory of ``batch`` as its input grows.

    python -m benchmarks.scale                      # 100,000 conversations, every section
    python -m benchmarks.scale --count 20000 --only loop,batch1,batch2
    python -m benchmarks.scale --only memory --memory-lines 1000000
    python -m benchmarks.scale --only model         # CPU per row, and the rates on N cores

Every section renders the same generated conversations (3 to 13 messages, some with tool calls,
fixed seed) through the Qwen3 corpus template, and checks that its rows equal the plain loop's.
Figures are wall-clock seconds of the whole job (start-up included for the command line; Ray's
cluster start excluded, its job included), best of ``--repeat`` runs: run it on an idle machine.
Needs the ``data`` extra for the datasets and Ray sections.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import astuple, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("MINIJINJA_PY_CORPUS", ROOT.parent / "shared" / "chat-templates"))
TEMPLATE = CORPUS / "templates" / "qwen-3-0.6b.jinja"
SECTIONS = ("loop", "batch1", "batch2", "datasets", "ray", "memory", "model")
# Not in the default run: `--only sweep` (and `sweep-tokens`, with `--model`) times `batch` at
# every worker count of `--workers`, for a machine with that many idle cores.
SWEEPS = ("sweep", "sweep-tokens")
# Worker counts the scaling model predicts for.
MODEL_WORKERS = (1, 2, 4, 8, 16, 32)
WORDS = "the a model data token answer question city weather paris rome list value".split()


def conversation(rng: random.Random) -> list[dict]:
    messages = [{"role": "system", "content": "You are a helpful assistant."}]
    for turn in range(rng.randint(1, 6)):
        messages.append({"role": "user", "content": " ".join(rng.choices(WORDS, k=12))})
        if rng.random() < 0.15:
            call = {"name": "get_weather", "arguments": {"city": rng.choice(WORDS)}}
            messages.append(
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [{"type": "function", "function": call}],
                }
            )
            messages.append({"role": "tool", "content": json.dumps({"temp_c": turn})})
        else:
            messages.append({"role": "assistant", "content": " ".join(rng.choices(WORDS, k=30))})
    return messages


def write_input(path: Path, count: int, distinct: int | None = None) -> None:
    rng = random.Random(1234)
    pool = [conversation(rng) for _ in range(distinct)] if distinct else None
    with open(path, "w", encoding="utf-8") as out:
        for i in range(count):
            messages = pool[i % len(pool)] if pool else conversation(rng)
            out.write(json.dumps({"id": i, "messages": messages}) + "\n")


def renderer():
    sys.path.insert(0, str(ROOT))
    from minijinja_py.chat import ChatTemplate
    from minijinja_py.pipelines import RowRenderer

    return RowRenderer(ChatTemplate.from_file(TEMPLATE), passthrough=["id"])


def run_loop(source: Path, clock: Callable[[], float] = time.perf_counter) -> tuple[float, list]:
    """The plain loop: parse each line, render it with ChatTemplate.render, keep the texts.
    Seconds by `clock`: wall by default, `time.process_time` for its CPU."""
    from minijinja_py.chat import ChatTemplate

    chat = ChatTemplate.from_file(TEMPLATE)
    start = clock()
    texts = []
    with open(source, encoding="utf-8") as lines:
        for line in lines:
            texts.append(chat.render(json.loads(line)["messages"]))
    return clock() - start, texts


# `minijinja-py batch ARGS...` run by the command line's own `main`, which then writes the CPU
# seconds of its own process (the driver: reading, shipping chunks, writing) to the file named
# first; the workers' CPU is the rest of what the parent reads of its children.
_BATCH_TELLING_ITS_CPU = """
import resource, sys
from minijinja_py.cli import main
status = main(sys.argv[2:])
usage = resource.getrusage(resource.RUSAGE_SELF)
with open(sys.argv[1], "w") as out:
    out.write(repr(usage.ru_utime + usage.ru_stime))
sys.exit(status)
"""


def run_batch(
    source: Path,
    target: Path,
    workers: int,
    env: dict[str, str] | None = None,
    model: Path | None = None,
) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds (the process and its workers) and the CPU seconds of the
    driver process alone of one ``batch`` run (`env`: the child's environment, this one's by
    default; `model`: a model folder, rendered with ``--tokens`` instead of the corpus
    template)."""
    driver_file = target.with_name(target.name + ".driver-cpu")
    command = [sys.executable, "-c", _BATCH_TELLING_ITS_CPU, str(driver_file), "batch"]
    command += ["--model", str(model), "--tokens"] if model else ["--template", str(TEMPLATE)]
    command += [str(source), str(target), "--workers", str(workers), "--quiet", "--id-column", "id"]
    command += ["--overwrite"]  # (each repeat writes the same output again)
    before = _cpu(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, cwd=ROOT, env=env)
    wall = time.perf_counter() - start
    cpu = _cpu(resource.RUSAGE_CHILDREN) - before
    driver = float(driver_file.read_text(encoding="ascii"))
    driver_file.unlink()
    return wall, cpu, driver


DATASETS_JOB = """
import json, sys, time
from datasets import load_dataset
sys.path.insert(0, sys.argv[4])
from benchmarks.scale import renderer
from minijinja_py.pipelines.hf_datasets import render_dataset
rows = load_dataset("json", data_files=sys.argv[1], split="train", cache_dir=sys.argv[2])
start = time.perf_counter()
done = render_dataset(rows, renderer(), num_proc=int(sys.argv[3]), load_from_cache_file=False)
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "texts": list(done["text"])}))
"""

RAY_JOB = """
import json, os, sys, time
os.environ["RAY_memory_monitor_refresh_ms"] = "0"
import ray
sys.path.insert(0, sys.argv[3])
from benchmarks.scale import renderer
from minijinja_py.pipelines.ray_data import render_files
ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
ray.data.DataContext.get_current().enable_progress_bars = False
start = time.perf_counter()
blocks = int(sys.argv[4]) or None  # 0: the defaults (a task per 32 MiB of JSONL)
render_files(sys.argv[1], sys.argv[2], renderer(), blocks=blocks)
seconds = time.perf_counter() - start
import pyarrow.parquet as pq
names = sorted(n for n in os.listdir(sys.argv[2]) if n.endswith(".parquet"))
texts = [t for n in names for t in pq.read_table(os.path.join(sys.argv[2], n)).column("text").to_pylist()]
print(json.dumps({"seconds": seconds, "texts": texts}))
"""


def run_job(script: str, *args: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "HF_DATASETS_DISABLE_PROGRESS_BARS": "1"},
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout.splitlines()[-1])


def peak_rss_of_batch(source: Path, target: Path, workers: int) -> tuple[float, int]:
    """Wall seconds and the peak resident set (KiB) of the biggest process of one batch run."""
    script = (
        "import resource, subprocess, sys, time; start = time.perf_counter(); "
        "subprocess.run(sys.argv[1:], check=True); "
        "print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    command = [sys.executable, "-m", "minijinja_py", "batch", "--template", str(TEMPLATE)]
    command += [str(source), str(target), "--workers", str(workers), "--quiet"]
    done = subprocess.run(
        [sys.executable, "-c", script, *command],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    seconds, kib = done.stdout.split()
    return float(seconds), int(kib)


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def cpu_per_row(source: Path, target: Path, workers: int) -> tuple[float, float, int]:
    """(CPU seconds per row of this process, of its worker processes, rows) of rendering
    `source` with `render_stream`: the driver that `batch --workers N` runs."""
    from minijinja_py.pipelines.files import JsonlSink, JsonlSource, render_stream

    own, children = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    with open(source, "rb") as raw, open(target, "wb") as out:
        rows, _ = render_stream(
            renderer(), JsonlSource(raw), JsonlSink(out), output_format="jsonl", workers=workers
        )
    # (the pool's workers have been joined: their time is in RUSAGE_CHILDREN)
    own = _cpu(resource.RUSAGE_SELF) - own
    children = _cpu(resource.RUSAGE_CHILDREN) - children
    return own / rows, children / rows, rows


@dataclass
class Scaling:
    """CPU seconds per row of `batch`, as the scaling model measures them."""

    alone: float  # one worker: the whole batch in one process
    alone_once: float  # what a one-worker run pays once
    driver: float  # with a pool: the serial part, in the driver process
    worker: float  # with a pool: the parallel part, in the workers
    pool_once: float  # what a run with a pool pays once (its start)

    def rate(self, workers: int) -> float:
        """Predicted rows per second with `workers` workers on as many free cores."""
        if workers == 1:
            return 1 / self.alone
        return min(workers / (self.worker + self.driver), 1 / self.driver)

    def speedup(self, workers: int) -> float:
        return self.rate(workers) * self.alone


def scaling_model(source: Path, work: Path, repeat: int, count: int) -> None:
    """Print the scaling model's figures (see `measure_scaling`)."""
    m = measure_scaling(source, work, repeat, count)
    print(
        f"\nCPU per row: one process {m.alone * 1e6:.0f} us (plus {m.alone_once:.2f} s once per "
        f"run); with 2 workers the driver {m.driver * 1e6:.1f} us and the workers "
        f"{m.worker * 1e6:.0f} us (plus {m.pool_once:.2f} s once per run: the pool's start)\n"
    )
    print("| workers (N cores) | predicted rows/s | speed-up over one worker |")
    print("| ---: | ---: | ---: |")
    for n in MODEL_WORKERS:
        print(f"| {n} | {m.rate(n):,.0f} | {m.speedup(n):.1f} |")


def measure_scaling(source: Path, work: Path, repeat: int, count: int) -> Scaling:
    """Where a batch's CPU goes, per row, and the rates it allows on N cores.

    With N workers the driver process reads lines, ships chunks of raw lines and writes the
    encoded results (its CPU per row, `driver`, is serial), and the workers decode, render and
    encode (`worker`, parallel). Each is measured on the whole input and on its first quarter:
    the difference divided by the rows between is the cost of a row, without what a run pays
    once (starting the pool, the workers' first renders). On N cores shared by the N workers
    and the driver the rate is at most N / (worker + driver) rows per second, and never more
    than 1 / driver; one worker is `batch --workers 1`, which renders in its own process
    (`alone` per row).
    """
    quarter = work / "model-quarter.jsonl"
    write_input(quarter, count // 4)  # (the same generator: the whole input's first quarter)

    def slope(workers: int) -> tuple[float, float, float, float]:
        best = None
        for _ in range(repeat):
            whole = cpu_per_row(source, work / "model.jsonl", workers)
            part = cpu_per_row(quarter, work / "model.jsonl", workers)
            rows = whole[2] - part[2]
            own = (whole[0] * whole[2] - part[0] * part[2]) / rows
            kids = (whole[1] * whole[2] - part[1] * part[2]) / rows
            once = (whole[0] + whole[1]) * whole[2] - (own + kids) * whole[2]
            if best is None or own + kids < best[0] + best[1]:
                best = (own, kids, once, (whole[0] + whole[1]))
        assert best is not None
        return best

    alone, _, alone_once, _ = slope(1)
    driver, worker, pool_once, _ = slope(2)
    return Scaling(alone, alone_once, driver, worker, pool_once)


@dataclass(frozen=True)
class SweepPoint:
    """`batch --workers N` in a sweep, each figure the best of its rounds; per row is the slope
    between the whole input and its first quarter, as in `measure_scaling` (start-up left out)."""

    wall: float  # seconds, the whole input, start to exit
    per_row: float  # wall seconds per row
    cpu_per_row: float  # CPU seconds per row of every process (the driver and its workers)
    driver_per_row: float  # of which the driver process's (all of it with one worker)

    def best_with(self, other: SweepPoint) -> SweepPoint:
        return SweepPoint(*map(min, zip(astuple(self), astuple(other), strict=True)))


def sweep(
    source: Path, work: Path, counts: list[int], repeat: int, model: Path | None = None
) -> dict[int, SweepPoint]:
    """For each N of `counts`, `batch --workers N` on `source` (see SweepPoint). The counts
    are interleaved in each round so that a passing load is shared among them; every run's rows
    are checked against the first run's."""
    lines = source.read_bytes().count(b"\n")
    quarter = work / "sweep-quarter.jsonl"
    with open(source, "rb") as whole, open(quarter, "wb") as part:
        part.writelines(line for _, line in zip(range(lines // 4), whole, strict=False))
    between = lines - lines // 4
    best: dict[int, SweepPoint] = {}
    first: bytes | None = None
    for _ in range(repeat):
        for workers in counts:
            target = work / f"sweep{workers}.jsonl"
            part_wall, part_cpu, part_driver = run_batch(quarter, target, workers, model=model)
            wall, cpu, driver = run_batch(source, target, workers, model=model)
            point = SweepPoint(
                wall,
                (wall - part_wall) / between,
                (cpu - part_cpu) / between,
                (driver - part_driver) / between,
            )
            best[workers] = best[workers].best_with(point) if workers in best else point
            rows = target.read_bytes()
            if first is None:
                first = rows
            elif rows != first:
                raise SystemExit(f"batch --workers {workers} wrote other rows than the first run")
            print(f"  {workers} workers: {wall:.2f} s, quarter {part_wall:.2f} s", file=sys.stderr)
    return best


def print_sweep(title: str, count: int, best: dict[int, SweepPoint], loop: float | None) -> None:
    one = best[min(best)]
    print(f"\n{title}\n")
    print(
        "| workers | wall | rows/s | speed-up over 1 worker | per row, start-up left out: "
        "rows/s | speed-up | per worker | whole process vs the loop | CPU per row: every "
        "process (of it the driver) | CPU per row over 1 worker's |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for workers, point in sorted(best.items()):
        wall, per_row = point.wall, point.per_row
        versus = f"{loop / wall:.2f}" if loop else "–"
        print(
            f"| {workers} | {wall:.2f} s | {count / wall:,.0f} | {one.wall / wall:.1f}× "
            f"| {1 / per_row:,.0f} | {one.per_row / per_row:.1f}× "
            f"| {one.per_row / per_row / workers:.0%} | {versus} "
            f"| {point.cpu_per_row * 1e6:.0f} µs ({point.driver_per_row * 1e6:.1f} µs) "
            f"| {point.cpu_per_row / one.cpu_per_row:.2f}× |"
        )


def tokens_loop(source: Path, model: Path) -> float:
    """Wall seconds of the in-process loop with token ids and assistant masks."""
    from minijinja_py.chat import ChatTemplate

    chat = ChatTemplate.from_pretrained(model)
    start = time.perf_counter()
    with open(source, encoding="utf-8") as lines:
        for line in lines:
            chat.tokenize(json.loads(line)["messages"], return_assistant_tokens_mask=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", default=",".join(SECTIONS))
    parser.add_argument("--memory-lines", type=int, default=1_000_000)
    parser.add_argument("--workers", default="1,2,4,8,16", help="the sweep's worker counts")
    parser.add_argument("--model", type=Path, help="a model folder, for sweep-tokens")
    parser.add_argument("--tokens-count", type=int, default=20_000)
    args = parser.parse_args()
    only = args.only.split(",")
    sys.path.insert(0, str(ROOT))
    rows: list[tuple[str, float, str]] = []
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        source = work / "in.jsonl"
        if set(only) - {"memory", "sweep-tokens"}:
            write_input(source, args.count)
            print(
                f"{args.count:,} conversations, {source.stat().st_size / 1e6:.0f} MB",
                file=sys.stderr,
            )
        expected: list | None = None

        def record(name: str, seconds: float, texts: list | None, note: str = "") -> None:
            same = (
                ""
                if texts is None or expected is None
                else ("equal" if texts == expected else "DIFFERENT")
            )
            rows.append((name, args.count / seconds, f"{seconds:.1f} s {same} {note}".strip()))
            print(
                f"{name}: {args.count / seconds:,.0f}/s ({seconds:.1f} s) {same}", file=sys.stderr
            )

        if "loop" in only or expected is None and set(only) - {"memory", "model", *SWEEPS}:
            best, expected = min((run_loop(source) for _ in range(args.repeat)), key=lambda r: r[0])
            if "loop" in only:
                record("plain loop (ChatTemplate.render, one process)", best, None)
        # 1 and 2 workers interleaved, so that both see the same share of a shared machine
        runs: dict[int, list[tuple[float, float, float]]] = {1: [], 2: []}
        for _ in range(args.repeat):
            for workers in (1, 2):
                if f"batch{workers}" in only:
                    runs[workers].append(run_batch(source, work / f"out{workers}.jsonl", workers))
        for workers in (1, 2):
            if runs[workers]:
                wall, cpu, _ = min(runs[workers])
                target = work / f"out{workers}.jsonl"
                texts = [json.loads(line)["text"] for line in target.open(encoding="utf-8")]
                note = f"CPU {cpu:.1f} s"
                record(f"minijinja-py batch --workers {workers}", wall, texts, note)
        if "datasets" in only:
            for procs in (1, 2):
                runs = [
                    run_job(
                        DATASETS_JOB,
                        str(source),
                        str(work / f"cache{procs}{i}"),
                        str(procs),
                        str(ROOT),
                    )
                    for i in range(args.repeat)
                ]
                best_run = min(runs, key=lambda run: run["seconds"])
                record(
                    f"datasets Dataset.map, num_proc={procs}",
                    best_run["seconds"],
                    best_run["texts"],
                )
        if "ray" in only:
            for blocks in (0, 4):
                runs = [
                    run_job(
                        RAY_JOB, str(source), str(work / f"ray{blocks}-{i}"), str(ROOT), str(blocks)
                    )
                    for i in range(args.repeat)
                ]
                best_run = min(runs, key=lambda run: run["seconds"])
                name = "defaults" if not blocks else f"blocks={blocks}"
                record(
                    f"Ray Data render_files ({name}), local cluster of 2 CPUs",
                    best_run["seconds"],
                    best_run["texts"],
                )
        if rows:
            print("\n| way | conversations/s | note |\n| --- | ---: | --- |")
            for name, rate, note in rows:
                print(f"| {name} | {rate:,.0f} | {note} |")
        counts = [int(n) for n in args.workers.split(",")]
        if "sweep" in only:
            loop = min(run_loop(source)[0] for _ in range(args.repeat))
            best = sweep(source, work, counts, args.repeat)
            title = f"`batch` ({args.count:,} conversations, Qwen3 template), wall-clock, best of {args.repeat}; the loop {args.count / loop:,.0f}/s"
            print_sweep(title, args.count, best, loop)
        if "sweep-tokens" in only:
            if args.model is None:
                raise SystemExit(
                    "sweep-tokens needs --model FOLDER (tokenizer.json beside its template)"
                )
            small = work / "tokens.jsonl"
            write_input(small, args.tokens_count)
            loop = min(tokens_loop(small, args.model) for _ in range(args.repeat))
            best = sweep(small, work, counts, args.repeat, model=args.model)
            title = f"`batch --tokens` ({args.tokens_count:,} conversations), wall-clock, best of {args.repeat}; the loop {args.tokens_count / loop:,.0f}/s"
            print_sweep(title, args.tokens_count, best, loop)
        if "model" in only:
            scaling_model(source, work, args.repeat, args.count)
        if "memory" in only:
            print(
                "\n| batch input | workers | wall | peak RSS (largest process) |\n| ---: | ---: | ---: | ---: |"
            )
            for lines in (args.memory_lines // 10, args.memory_lines):
                big = work / f"memory{lines}.jsonl"
                write_input(big, lines, distinct=1000)
                for workers in (1, 2):
                    seconds, kib = peak_rss_of_batch(big, work / "memory-out.jsonl", workers)
                    print(
                        f"| {lines:,} lines ({big.stat().st_size / 1e6:.0f} MB) | {workers} | {seconds:.0f} s | {kib / 1024:.0f} MiB |"
                    )
                big.unlink()


if __name__ == "__main__":
    main()
