"""Where our engine spends its time on the corpus: cProfile (and pyinstrument when installed).

    python -m benchmarks.profile                 # cold and warm, whole agreeing corpus
    python -m benchmarks.profile --template qwen # only templates whose name contains "qwen"
    python -m benchmarks.profile --engine jinja2 # the same workload under Jinja2, to compare
    python -m benchmarks.profile --growth 1000   # long generated chats on the growth templates

Cold = new environment + compile + first render of each template (parser already built);
warm = rendering every agreeing conversation of already compiled templates, repeated.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):
    # Run as a script, benchmarks/ would be sys.path[0] and this file would shadow the
    # standard library's ``profile`` module that cProfile imports: use the repository root.
    sys.path[0] = str(Path(__file__).resolve().parent.parent)
    __package__ = "benchmarks"  # noqa: A001 - lets the relative imports below resolve

import argparse  # noqa: E402
import cProfile  # noqa: E402
import io  # noqa: E402
import pstats  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

from . import corpus as C  # noqa: E402
from . import run  # noqa: E402
from .corpus import REPO_ROOT  # noqa: E402
from .engines import all_engines  # noqa: E402


def short_path(filename: str) -> str:
    """Repository-relative or package-relative file names keep the table narrow."""
    p = Path(filename)
    try:
        return str(p.resolve().relative_to(REPO_ROOT))
    except (ValueError, OSError):
        pass
    parts = p.parts
    if "site-packages" in parts:
        return "/".join(parts[parts.index("site-packages") + 1 :])
    for i, part in enumerate(parts):
        if part.startswith("python3.") and i + 1 < len(parts):
            return "stdlib/" + "/".join(parts[i + 1 :])
    return filename


def top_table(profiler: cProfile.Profile, sort: str, top: int) -> str:
    stats = pstats.Stats(profiler, stream=io.StringIO())
    rows = []
    for (filename, line, func), (_cc, ncalls, tottime, cumtime, _callers) in stats.stats.items():
        where = f"{short_path(filename)}:{line}" if line else filename
        rows.append((tottime, cumtime, ncalls, f"{func} ({where})"))
    key = 0 if sort == "tottime" else 1
    rows.sort(key=lambda r: r[key], reverse=True)
    total = stats.total_tt or 1.0
    out = [f"  {'self s':>8} {'self %':>6} {'cum s':>8} {'calls':>9}  function"]
    for tottime, cumtime, ncalls, name in rows[:top]:
        out.append(
            f"  {tottime:8.3f} {100 * tottime / total:5.1f}% {cumtime:8.3f} {ncalls:9d}  {name}"
        )
    return "\n".join(out)


def profile_with(
    label: str, work: Callable[[], None], top: int, use_pyinstrument: bool, tree_lines: int
) -> None:
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    work()
    prof.disable()
    wall = time.perf_counter() - t0
    print(f"\n## {label}: cProfile ({wall:.2f} s under the profiler)\n")
    print(f"### top {top} by self time\n")
    print(top_table(prof, "tottime", top))
    print(f"\n### top {top} by cumulative time\n")
    print(top_table(prof, "cumtime", top))
    if not use_pyinstrument:
        return
    try:
        from pyinstrument import Profiler
    except ImportError:
        print("\n(pyinstrument not installed: pip install pyinstrument for a call tree)")
        return
    sampler = Profiler(interval=0.0005)
    sampler.start()
    work()
    sampler.stop()
    # Nodes under 2 % are pruned and the tree is cut to ``tree_lines``: deep closure chains
    # would otherwise bury the few branches worth optimising.
    text = sampler.output_text(
        unicode=False, color=False, processor_options={"filter_threshold": 0.02}
    )
    lines = text.strip("\n").splitlines()
    print(f"\n## {label}: pyinstrument call tree (first {tree_lines} lines)\n")
    print("\n".join(lines[:tree_lines]))


def profile_growth(engine, args: argparse.Namespace) -> int:
    """Per-message cost on long chats: the growth section's workload, one template at a time."""
    by_name = {t.name: t for t in C.load_templates()}
    picks = C.pick_growth_templates(sorted(by_name))
    if args.template:
        picks = [(n, n) for n in sorted(by_name) if any(p in n for p in args.template)]
    run.warm_up({engine.key: engine})
    for label, name in picks:
        tpl = by_name[name]
        ctx = C.growth_context(tpl.meta, args.growth)
        compiled = engine.compile(engine.new_env(), tpl.source)
        engine.render(compiled, ctx)
        repeats = max(1, 20_000 // args.growth)

        def work(compiled=compiled, ctx=ctx, repeats=repeats) -> None:
            for _ in range(repeats):
                engine.render(compiled, ctx)

        title = f"{label} (`{name}`): {repeats} renders of {args.growth} messages"
        profile_with(title, work, args.top, not args.no_pyinstrument, args.tree_lines)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.profile", description=__doc__)
    ap.add_argument("--engine", default="ours", choices=("ours", "jinja2", "minijinja"))
    ap.add_argument("--template", action="append", default=[], metavar="SUBSTR")
    ap.add_argument("--top", type=int, default=30, help="rows per table (default 30)")
    ap.add_argument("--warm-repeats", type=int, default=5, help="passes over the corpus")
    ap.add_argument("--no-pyinstrument", action="store_true")
    ap.add_argument("--tree-lines", type=int, default=80, help="pyinstrument tree lines shown")
    ap.add_argument("--only", choices=("cold", "warm"), help="profile one phase only")
    ap.add_argument(
        "--growth",
        type=int,
        metavar="N",
        help="instead: warm renders of a generated N-message chat on the growth templates",
    )
    args = ap.parse_args(argv)

    engines = {e.key: e for e in all_engines()}
    engine = engines[args.engine]
    if not engine.available:
        print(f"{engine.label} is not available: {engine.reason}", file=sys.stderr)
        return 2
    if args.growth:
        return profile_growth(engine, args)
    run.log("agreement pass")
    corpus = run.agreement(engines, run.FULL, args.template)
    templates = corpus.templates
    if args.engine == "minijinja":
        templates = [t for t in templates if corpus.mj_ok.get(t.name)]
    run.log(f"  {len(templates)} templates, {sum(len(t.contexts) for t in templates)} pairs")
    run.warm_up(engines)  # the one-time parser build is not part of either phase
    use_pi = not args.no_pyinstrument
    print(f"# Profile of {engine.label} on {len(templates)} corpus templates")

    if args.only in (None, "cold"):
        counter = [0]

        def cold() -> None:
            for tpl in templates:
                src = run.nonce(tpl.source, counter)
                engine.render(engine.compile(engine.new_env(), src), tpl.contexts[0])

        profile_with(
            "Cold (new env + compile + first render)", cold, args.top, use_pi, args.tree_lines
        )

    if args.only in (None, "warm"):
        compiled = []
        for tpl in templates:
            t = engine.compile(engine.new_env(), tpl.source)
            for ctx in tpl.contexts:
                engine.render(t, ctx)
            compiled.append((t, tpl.contexts))

        def warm() -> None:
            render = engine.render
            for _ in range(args.warm_repeats):
                for t, ctxs in compiled:
                    for ctx in ctxs:
                        render(t, ctx)

        label = f"Warm (render compiled templates, {args.warm_repeats} passes)"
        profile_with(label, warm, args.top, use_pi, args.tree_lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
