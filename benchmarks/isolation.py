"""``python -m benchmarks.isolation``: renders per second in process and through IsolatedRenderer.

Each sample renders every (template, conversation) pair of a slice of the corpus once: in the
calling process, then through an IsolatedRenderer with one worker (one caller thread: the round
trip's cost) and with two workers fed by two caller threads (the throughput a server gets).
Wall-clock time (the pool's work happens in other processes), median of the repeats; worker
start-up is excluded (the pool is started and warmed before timing).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from .corpus import (
    build_context,
    corpus_available,
    load_conversations,
    load_templates,
    strftime_now,
)


def _pairs(every: int) -> list[tuple[object, dict]]:
    import minijinja_py as mj

    conversations = load_conversations()
    pairs = []
    for template in load_templates()[::every]:
        env = mj.chat_environment()
        env.globals["strftime_now"] = strftime_now
        compiled = env.from_string(template.source)
        for _, conversation in conversations:
            context = build_context(template.meta, conversation)
            try:
                compiled.render(context)
            except mj.TemplateError:
                continue
            pairs.append((compiled, context))
    return pairs


def _rate(render, pairs, threads: int = 1) -> float:
    start = time.perf_counter()
    if threads == 1:
        for template, context in pairs:
            render(template, context)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(lambda pair: render(*pair), pairs))
    return len(pairs) / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.isolation")
    parser.add_argument("--every", type=int, default=10, help="every Nth corpus template")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    if not corpus_available():
        print("chat-template corpus not found", file=sys.stderr)
        return 1
    from minijinja_py import IsolatedRenderer

    pairs = _pairs(args.every)
    rows = {}
    rows["in process"] = [_rate(lambda t, c: t.render(c), pairs) for _ in range(args.repeats)]
    for workers in (1, 2):
        with IsolatedRenderer(workers=workers, timeout=30) as iso:
            _rate(iso.render, pairs, workers)  # start-up and first sends, untimed
            rows[f"isolated, {workers} worker(s)"] = [
                _rate(iso.render, pairs, workers) for _ in range(args.repeats)
            ]
    base = statistics.median(rows["in process"])
    print(f"{len(pairs)} (template, conversation) pairs, median of {args.repeats}, wall clock")
    print("| renderer | renders/s | vs in process |")
    print("|---|---:|---:|")
    for name, rates in rows.items():
        rate = statistics.median(rates)
        print(f"| {name} | {rate:,.0f} | {rate / base:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
