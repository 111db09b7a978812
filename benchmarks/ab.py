"""This engine against itself at an earlier commit, in one process, interleaved.

    python -m benchmarks.ab fae9324                 # the whole corpus, warm and cold
    python -m benchmarks.ab HEAD~3 --template qwen  # only templates whose name contains "qwen"
    python -m benchmarks.ab main --rounds 15 --json ab.json

Two runs of ``python -m benchmarks`` taken one after the other differ by more than most changes
do on a shared machine (another process, a collection landing in one sample): a before/after
figure is only as good as its noise.  Here the engine of the earlier commit is extracted with
``git archive`` under another package name and imported beside the working tree's, and every
round times both (and Jinja2, as the common yardstick) on the same template back to back, in
rotating order, on CPU time; a warm sample repeats the template's conversations for at least
5 ms (a single pass of a small template is mostly noise).  What a change costs is the median over templates of the per-template
ratio new / old; each engine's ratio to Jinja2 is reported as ``python -m benchmarks`` does.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

from . import corpus as C
from .engines import Jinja2Engine, OursEngine
from .run import frozen_heap, nonce, rotated, time_passes

REPO_ROOT = C.REPO_ROOT


class _EngineAt(OursEngine):
    """`OursEngine` over an already imported copy of the package."""

    def __init__(self, module: Any, key: str) -> None:
        self._mod = module
        self.key = key
        self.label = key
        self.available = True
        self.version = getattr(module, "__version__", "")


def import_at(revision: str, into: Path, suffix: str = "") -> Any:
    """The package as it was at `revision`, imported as ``minijinja_py_<sha><suffix>``."""
    sha = subprocess.run(
        ["git", "rev-parse", "--short", revision],
        cwd=REPO_ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    archive = subprocess.run(
        ["git", "archive", "--format=tar", sha, "minijinja_py", "grammar"],
        cwd=REPO_ROOT,
        check=True,
        capture_output=True,
    ).stdout
    name = f"minijinja_py_{sha}{suffix}"
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    package = into / "minijinja_py"
    # The package tells its own classes by their module's name: renamed with it.
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if '"minijinja_py.' in text:
            path.write_text(text.replace('"minijinja_py.', f'"{name}.'), encoding="utf-8")
    package.rename(into / name)
    sys.path.insert(0, str(into))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(into))


# A warm sample renders the template's conversations this long at least (a pass of a small
# template takes 100 µs, where the clock and the machine's noise are felt).
SAMPLE_SECONDS = 0.005


def measure(engines: list[Any], templates: list[C.Template], rounds: int) -> dict[str, Any]:
    """{section: {template: {engine: median seconds}}} for "warm" and "cold"."""
    compiled: dict[tuple[str, str], Any] = {}
    passes: dict[str, int] = {}
    for tpl in templates:
        for e in engines:
            compiled[tpl.name, e.key] = t = e.compile(e.new_env(), tpl.source)
            for ctx in tpl.contexts:  # (first renders fill lazy caches: untimed)
                e.render(t, ctx)
        once = time_passes(engines[0].render, compiled[tpl.name, engines[0].key], tpl.contexts, 1)
        passes[tpl.name] = max(1, round(SAMPLE_SECONDS / max(once, 1e-6)))
    samples: dict[str, dict[str, dict[str, list[float]]]] = {"warm": {}, "cold": {}}
    counter = [0]
    with frozen_heap():  # (see measure_warm in run.py)
        _rounds(engines, templates, rounds, compiled, passes, samples, counter)
    return {
        section: {
            name: {key: statistics.median(xs) for key, xs in per.items()}
            for name, per in by_name.items()
        }
        for section, by_name in samples.items()
    }


def _rounds(engines, templates, rounds, compiled, passes, samples, counter) -> None:
    for r in range(rounds):
        print(f"  round {r + 1}/{rounds}", file=sys.stderr, flush=True)
        for i, tpl in enumerate(templates):
            for e in rotated(engines, r + i):
                gc.collect()  # (see measure_cold in run.py)
                dt = time_passes(
                    e.render, compiled[tpl.name, e.key], tpl.contexts, passes[tpl.name]
                )
                samples["warm"].setdefault(tpl.name, {}).setdefault(e.key, []).append(dt)
            for e in rotated(engines, r + i):
                src = nonce(tpl.source, counter)
                gc.collect()
                start = time.process_time()
                e.render(e.compile(e.new_env(), src), tpl.contexts[0])
                dt = time.process_time() - start
                samples["cold"].setdefault(tpl.name, {}).setdefault(e.key, []).append(dt)


def summary(figures: dict[str, Any], old: str, new: str) -> str:
    lines = [
        f"| section | median {new}/{old} | total {new}/{old} | {old} / Jinja2 (median) "
        f"| {new} / Jinja2 (median) | templates slower than Jinja2: {old} / {new} |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for section, by_name in figures.items():
        change = [t[new] / t[old] for t in by_name.values()]
        before = [t[old] / t["jinja2"] for t in by_name.values()]
        after = [t[new] / t["jinja2"] for t in by_name.values()]
        total = sum(t[new] for t in by_name.values()) / sum(t[old] for t in by_name.values())
        lines.append(
            f"| {section} | {statistics.median(change):.3f} | {total:.3f} "
            f"| {statistics.median(before):.3f} | {statistics.median(after):.3f} "
            f"| {sum(x > 1 for x in before)} / {sum(x > 1 for x in after)} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.ab", description=__doc__.split("\n")[0])
    ap.add_argument("revision", help="the git revision to compare the working tree with")
    ap.add_argument(
        "--against",
        metavar="REVISION",
        help="time this commit's engine, extracted the same way, instead of the working tree's"
        " (both sides then load alike: the working tree's copy measures a few percent slower"
        " than an extracted copy of itself)",
    )
    ap.add_argument("--rounds", type=int, default=9, help="interleaved rounds (default 9)")
    ap.add_argument("--template", action="append", default=[], help="name contains SUBSTR")
    ap.add_argument("--json", help="write the per-template medians here")
    ap.add_argument("--details", action="store_true", help="also list the 15 largest changes")
    args = ap.parse_args(argv)
    if not C.corpus_available():
        print(f"corpus not found at {C.CORPUS_DIR}", file=sys.stderr)
        return 2
    from .run import Mode, agreement

    jinja2 = Jinja2Engine()
    new = OursEngine()
    # (kept until the end: the package imports some of its modules when first used)
    keep = tempfile.TemporaryDirectory()
    old = _EngineAt(import_at(args.revision, Path(keep.name) / "old"), args.revision)
    if args.against:
        key = args.against if args.against != args.revision else f"{args.against} (again)"
        new = _EngineAt(import_at(args.against, Path(keep.name) / "new", "_b"), key)
    if not args.against:
        new.key = "now"
    mode = Mode("ab", None, 1, 1, 0, {}, 0, None, 0, 0, 0)
    from .engines import MiniJinjaRustEngine

    rust = MiniJinjaRustEngine()
    rust.available = False  # (agreement wants the slot; the Rust binding is not compared)
    corpus = agreement({"ours": new, "jinja2": jinja2, "minijinja": rust}, mode, args.template)
    templates = [t for t in corpus.templates if t.contexts]
    figures = measure([new, old, jinja2], templates, args.rounds)
    print(summary(figures, old.key, new.key))
    if args.details:
        for section, by_name in figures.items():
            ranked = sorted(by_name.items(), key=lambda kv: kv[1][new.key] / kv[1][old.key])
            shown = ranked if len(ranked) <= 15 else ranked[:5] + ranked[-10:]
            for name, t in shown:
                print(f"{section} {t[new.key] / t[old.key]:.2f} {name}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1), encoding="utf-8")
    keep.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
