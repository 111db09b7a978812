"""``python -m conformance report [--cases N] [--seed S]``: a differential report by feature.

Generates N cases (default 20,000) with the seeded generator of :mod:`conformance.strategies`
(full templates in both configurations, single expressions, whitespace-control programs, and
the real corpus templates fed generated conversations when the corpus is present), renders
each with Jinja2 and with minijinja_py, and prints: the share of cases Jinja2 renders, overall
agreement, agreement by feature, and minimized examples of each kind of disagreement. Case ``i``
of seed ``S`` is always the same program, whatever the number of worker processes.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor

from .corpus import corpus_missing
from .reference import agree, engine_available, render_ours, render_reference
from .strategies import build_case, build_expression_case, build_whitespace_case

MODES = {
    "chat": lambda ch: build_case(ch, "chat"),
    "plain": lambda ch: build_case(ch, "plain"),
    "expression": build_expression_case,
    "whitespace": build_whitespace_case,
    "loose": lambda ch: build_expression_case(ch, loose=35),
}
MIX = ["chat", "chat", "chat", "plain", "plain", "plain", "expression", "loose", "whitespace"]


def _corpus_case(ch):
    from .corpus import build_corpus_case

    return build_corpus_case(ch)


if corpus_missing() is None:
    MODES["corpus"] = _corpus_case
    MIX.append("corpus")


def make_case(seed: int, index: int, modes: list[str]):
    from .strategies import RandomChooser

    rng = random.Random(f"{seed}:{index}")
    mode = modes[index % len(modes)]
    return MODES[mode](RandomChooser(rng))


def _run_chunk(args):
    seed, indices, modes = args
    rows = []
    for i in indices:
        case = make_case(seed, i, modes)
        ref = render_reference(case.config, case.source, case.context, **case.options)
        got = render_ours(case.config, case.source, case.context, **case.options)
        ok = agree(ref, got)
        rows.append((i, case.features, ref[0], ok, None if ok else (case, ref, got)))
    return rows


def report(n: int, seed: int, jobs: int, modes: list[str], examples: int) -> int:
    missing = engine_available()
    if missing:
        print(missing)
        return 2
    start = time.time()
    step = 100
    chunks = [(seed, list(range(lo, min(n, lo + step))), modes) for lo in range(0, n, step)]
    rows = []
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            for part in pool.map(_run_chunk, chunks):
                rows.extend(part)
    else:
        for chunk in chunks:
            rows.extend(_run_chunk(chunk))
    elapsed = time.time() - start

    kinds = Counter(r[2] for r in rows)
    agreed = sum(1 for r in rows if r[3])
    per_feature: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for _, features, _, ok, _ in rows:
        for feature in features:
            per_feature[feature][0] += 1
            per_feature[feature][1] += ok

    print(f"{n} cases (seed {seed}, modes {','.join(sorted(set(modes)))}) in {elapsed:.1f}s")
    print(
        f"Jinja2 renders {kinds['ok'] / n:.1%}; raise_exception {kinds['raise_exception'] / n:.1%};"
        f" other errors {kinds['error'] / n:.1%}"
    )
    print(f"agreement: {agreed}/{n} = {agreed / n:.2%}\n")
    by_mode: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for _, features, kind, ok, _ in rows:
        for feature in features:
            if feature.startswith(("mode:", "config:")):
                by_mode[feature][0] += 1
                by_mode[feature][1] += kind == "ok"
                by_mode[feature][2] += ok
    print(f"{'generator':40} {'cases':>7} {'renders':>8} {'agree':>8}")
    for mode, (total, rendered, ok) in sorted(by_mode.items()):
        print(f"{mode:40} {total:7d} {rendered / total:8.1%} {ok / total:8.2%}")
    print()
    print(f"{'feature':40} {'cases':>7} {'agree':>8}")
    ordered = sorted(per_feature.items(), key=lambda kv: (kv[1][1] - kv[1][0], kv[0]))
    for feature, (total, ok) in ordered:
        flag = "  <--" if ok < total else ""
        print(f"{feature:40} {total:7d} {ok / total:8.2%}{flag}")

    failures = [r[4] for r in rows if r[4] is not None]
    if failures:
        from .minimize import minimize

        print(f"\nminimal failing examples (up to {examples} distinct):")
        seen = set()
        for case, ref, got in failures:
            if len(seen) >= examples:
                break
            signature = (case.config, ref[0], got[0], got[1] if got[0] != "ok" else "")
            if signature in seen:
                continue
            seen.add(signature)
            small = minimize(case.config, case.options, case.context, case.source, max_tests=800)
            print("-" * 72)
            print(f"config={case.config} {case.options}")
            print(f"template: {small!r}")
            used = {k: v for k, v in case.context.items() if k in small}
            print(f"context (used names): {used!r}")
            print(f"Jinja2: {render_reference(case.config, small, case.context, **case.options)!r}")
            print(f"ours:   {render_ours(case.config, small, case.context, **case.options)!r}")
    return 0 if agreed == n else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conformance", description=__doc__.split("\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report", help="differential report by feature")
    rep.add_argument("--cases", type=int, default=20_000)
    rep.add_argument("--seed", type=int, default=0)
    rep.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    rep.add_argument("--mode", choices=["mix", *MODES], default="mix")
    rep.add_argument("--examples", type=int, default=10, help="minimized examples to print")
    args = parser.parse_args(argv)
    modes = MIX if args.mode == "mix" else [args.mode]
    return report(args.cases, args.seed, max(1, args.jobs), modes, args.examples)


if __name__ == "__main__":
    sys.exit(main())
