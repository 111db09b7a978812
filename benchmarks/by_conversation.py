"""Where the warm figure comes from: each corpus conversation's ratio to Jinja2, over templates.

    python -m benchmarks.by_conversation                  # the whole corpus, a few minutes
    python -m benchmarks.by_conversation --template qwen  # only templates whose name has "qwen"
    python -m benchmarks.by_conversation --without-measure

`python -m benchmarks` times all of a template's conversations in one sample; this splits them.
Every (template, conversation) pair that agrees with Jinja2 is timed alone, both engines in
turn, in rotating order, in a frozen heap (see run.py's measure_warm), each sample repeating the
render for at least a millisecond; a pair's figure is the median of its samples. The table
gives, per conversation, the ratio of the summed times and the median over templates; below
it the per-template figures (median, worst, how many above 1.0) over all conversations, over
those without tools and over those with tools (a `tools` list, a tool call or a tool message).

`--without-measure` is an experiment, never a figure of the engine: the sandbox's quick measure
of a printed structure (sandbox/measure.py's `_measure_small`, run before `tojson`, `string`
or printing a list) is replaced by a constant, so that the share of the time it takes shows.
The rendered text does not change; the charges do.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
from collections import defaultdict
from typing import Any

from . import corpus as C
from . import run as R
from .engines import all_engines

# The shortest sample, in seconds of CPU: one render of a small template is a few microseconds.
SAMPLE_SECONDS = 0.001


def uses_tools(context: dict[str, Any]) -> bool:
    """Whether a conversation offers tools or holds a tool call or a tool's answer."""
    if context.get("tools"):
        return True
    for message in context.get("messages") or ():
        if message.get("tool_calls") or message.get("role") in ("tool", "tool_results", "ipython"):
            return True
    return False


def measure(engines: list[Any], corpus: R.Corpus, rounds: int) -> dict[tuple[str, str], dict]:
    """{(template, conversation): {engine key: seconds per render}}, medians of `rounds`."""
    compiled = {}
    for tpl in corpus.templates:
        for e in engines:
            compiled[tpl.name, e.key] = t = e.compile(e.new_env(), tpl.source)
            for ctx in tpl.contexts:  # (first renders fill lazy caches: untimed)
                e.render(t, ctx)
    samples: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    with R.frozen_heap():
        for r in range(rounds):
            R.log(f"  round {r + 1}/{rounds}")
            for i, tpl in enumerate(corpus.templates):
                for name, ctx in zip(tpl.context_names, tpl.contexts, strict=True):
                    for e in R.rotated(engines, r + i):
                        t = compiled[tpl.name, e.key]
                        count = R.repeats_for(e.render, t, ctx, SAMPLE_SECONDS)
                        gc.collect()
                        seconds = R.time_passes(e.render, t, [ctx], count)
                        samples[tpl.name, name][e.key].append(seconds)
    return {
        pair: {key: statistics.median(xs) for key, xs in per.items()}
        for pair, per in samples.items()
    }


def _per_template(times: dict[tuple[str, str], dict], keep: Any) -> list[float]:
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for (template, conversation), t in times.items():
        if keep(conversation):
            sums[template][0] += t["ours"]
            sums[template][1] += t["jinja2"]
    return sorted(ours / jinja2 for ours, jinja2 in sums.values())


def report(times: dict[tuple[str, str], dict], with_tools: set[str]) -> str:
    by_name: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for (_, conversation), t in times.items():
        by_name[conversation].append((t["ours"], t["jinja2"]))
    lines = [
        "| conversation | tools | templates | sums ours / Jinja2 | median over templates |",
        "|---|:---:|---:|---:|---:|",
    ]
    for name in sorted(by_name):
        pairs = by_name[name]
        ours = sum(o for o, _ in pairs)
        jinja2 = sum(j for _, j in pairs)
        median = statistics.median(o / j for o, j in pairs)
        tools = "yes" if name in with_tools else ""
        lines.append(f"| {name} | {tools} | {len(pairs)} | {ours / jinja2:.2f} | {median:.2f} |")
    lines += [
        "",
        "| per template, ours / Jinja2 | templates | median | worst | above 1.00 |",
        "|---|---:|---:|---:|---:|",
    ]
    for label, keep in (
        ("all conversations", lambda name: True),
        ("conversations without tools", lambda name: name not in with_tools),
        ("conversations with tools", lambda name: name in with_tools),
    ):
        ratios = _per_template(times, keep)
        if ratios:
            above = sum(r > 1.0 for r in ratios)
            lines.append(
                f"| {label} | {len(ratios)} | {statistics.median(ratios):.2f} |"
                f" {ratios[-1]:.2f} | {above} |"
            )
    return "\n".join(lines)


def without_measure() -> None:
    """The experiment of --without-measure (see the module's docstring)."""
    from minijinja_py.sandbox import measure as measure_module

    def constant(value: Any, most: int, limit: int, deepest: int) -> tuple[int, int, int]:
        return 2, 10, 1

    measure_module._measure_small = constant


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.by_conversation")
    ap.add_argument("--template", action="append", default=[], metavar="SUBSTR")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--without-measure",
        action="store_true",
        help="replace the sandbox's quick measure by a constant (an experiment: see above)",
    )
    args = ap.parse_args(argv)
    if not C.corpus_available():
        R.log(f"corpus not found at {C.CORPUS_DIR} (set MINIJINJA_PY_CORPUS)")
        return 2
    if args.without_measure:
        without_measure()
    engines = {e.key: e for e in all_engines()}
    engines["minijinja"].available = False
    for key in ("ours", "jinja2"):
        if not engines[key].available:
            R.log(f"{engines[key].label} unavailable: {engines[key].reason}")
            return 2
    corpus = R.agreement(engines, R.FULL, args.template)
    with_tools = {
        name
        for tpl in corpus.templates
        for name, ctx in zip(tpl.context_names, tpl.contexts, strict=True)
        if uses_tools(ctx)
    }
    times = measure([engines["ours"], engines["jinja2"]], corpus, args.rounds)
    print(report(times, with_tools))
    return 0


if __name__ == "__main__":
    sys.exit(main())
