"""One run, one table: the speed figures of issue 23, each beside the reference it is divided by.

    python -m benchmarks.report                  # full sizes: tens of minutes on 2 shared cores
    python -m benchmarks.report --quick          # few templates, small counts: a few minutes
    python -m benchmarks.report --compiled-python /path/to/venv/bin/python --write report.md

Rows: cold and warm of the engine against Jinja2 (configured as transformers configures it),
with the minijinja Rust binding's ratios in the same rows; the same for the compiled build when
``--compiled-python`` names an interpreter whose ``minijinja_py.COMPILED`` is true (measured in
a subprocess of that interpreter, on a copy of benchmarks/ so that this checkout's pure package
cannot shadow the installed one); tokenize with assistant masks against transformers'
``apply_chat_template`` on the tagged templates (in the compiled build's interpreter too, when
given); ``render_with_provenance`` against ``render``;
``batch --workers 1`` against the in-process loop; and the scaling model's 16 workers against
one. Every figure is CPU time. A section whose optional dependency is missing says so in its row.
Progress goes to stderr, the Markdown to stdout (and to ``--write PATH``).
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import itertools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    # Run as a script: make the repository root importable instead of benchmarks/ itself.
    sys.path[0] = str(Path(__file__).resolve().parent.parent)
    __package__ = "benchmarks"  # noqa: A001 - lets the relative imports below resolve

from . import corpus as C  # noqa: E402
from . import run as R  # noqa: E402

HERE = Path(__file__).resolve().parent

# The targets (issue 42's where it sets one, issue 23's cold and provenance otherwise). Ratios
# are ours / reference except the batch's, a rate (higher is better).
TARGETS = {
    "cold": 0.20,  # pure, ratio of the sums over templates
    "warm": 0.70,  # pure, median of the per-template ratios
    "worst": 1.00,  # pure, every template's warm ratio
    "compiled cold": 0.12,
    "compiled warm": 0.32,
    "compiled worst": 0.60,  # compiled, every template's warm ratio
    "import": 0.45,  # wall time of the import statement, median of fresh interpreters
    "training": 0.60,  # one conversation with masks, median of the per-template ratios
    "tokens batch": 0.45,  # a padded batch of 64 with masks, wall time, ratio of the sums
    "provenance": 1.50,  # ratio of the sums
    "batch": 0.90,  # rate of batch --workers 1 / rate of the loop
    "speedup": 13.0,  # predicted 16 workers / 1 worker
}
MODEL_WORKERS = 16
SECTIONS = (
    "engine", "compiled", "import", "training", "compiled training", "tokens batch",
    "provenance", "batch", "model",
)  # fmt: skip


@dataclass
class Size:
    """How much of each section one run measures."""

    name: str
    engine: R.Mode
    tagged_templates: int | None  # None: every tagged template
    token_repeats: int
    provenance_templates: int | None  # None: every corpus template
    provenance_repeats: int
    batch_count: int
    batch_repeats: int
    model_count: int
    model_repeats: int
    import_repeats: int = 15


FULL = Size("full", R.FULL, None, 5, None, 5, 20_000, 5, 20_000, 1)
QUICK = Size("quick", R.QUICK, 6, 2, 16, 2, 5_000, 1, 8_000, 1, 5)
SIZES = {s.name: s for s in (FULL, QUICK)}


class NotMeasured(Exception):
    """A section that cannot run here; its message goes into the section's row."""


# ---------------------------------------------------------------------------- pure figures


def ratio_stats(per_tpl: dict[str, dict[str, float]], a: str, b: str) -> dict[str, Any] | None:
    """Sums of ``a`` and ``b`` over the templates measured for both, the ratio of the sums,
    and the median, worst and count above 1 of the per-template ratios; None if none."""
    pairs = [(d[a], d[b]) for d in per_tpl.values() if a in d and b in d and d[b]]
    if not pairs:
        return None
    ratios = sorted(x / y for x, y in pairs)
    sa, sb = sum(x for x, _ in pairs), sum(y for _, y in pairs)
    return {
        "templates": len(pairs),
        "sum": sa,
        "reference": sb,
        "ratio": sa / sb,
        "median": statistics.median(ratios),
        "worst": ratios[-1],
        "slower": sum(r > 1.0 for r in ratios),
        "ratios": ratios,
    }


def met(value: float | None, target: float, higher_is_better: bool = False) -> str:
    if value is None:
        return "–"
    ok = value >= target if higher_is_better else value <= target
    return "yes" if ok else "**no**"


def spread(s: dict[str, Any]) -> str:
    return f"median {s['median']:.2f}, worst {s['worst']:.2f}"


def rust_cell(s: dict[str, Any] | None, warm: bool) -> str:
    if s is None:
        return "not measured"
    cell = f"{s['ratio']:.2f} ({spread(s)}; {s['templates']} tpl)"
    if warm:
        cell += f"; {s['slower']} slower than Jinja2"
    return cell


@dataclass
class Row:
    figure: str
    ours: str = "–"
    reference: str = "–"
    ratio: str = "–"
    detail: str = "–"
    target: str = "–"
    met: str = "–"
    rust: str = "–"


HEADER = (
    "| Figure | minijinja_py | Reference | ours / reference | Per template / detail | Target "
    "| Met | minijinja (Rust) / Jinja2 |"
)


def table(rows: list[Row]) -> str:
    lines = [HEADER, "|---|---:|---:|---:|---|---|:---:|---|"]
    for r in rows:
        cells = (r.figure, r.ours, r.reference, r.ratio, r.detail, r.target, r.met, r.rust)
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    return "\n".join(lines)


def not_measured(figure: str, why: str) -> Row:
    return Row(figure, ours=f"not measured: {why}")


def engine_rows(figures: dict[str, Any], build: str, compiled: bool) -> list[Row]:
    """Cold and warm rows of one build against Jinja2, and the Rust binding's in the same rows."""
    cold_key, warm_key = ("compiled cold", "compiled warm") if compiled else ("cold", "warm")
    rows = []
    for section, key in (("cold", cold_key), ("warm", warm_key)):
        per_tpl = figures[section]
        s = ratio_stats(per_tpl, "ours", "jinja2")
        what = (
            f"Cold, {build}: new env + compile + first render"
            if section == "cold"
            else f"Warm, {build}: render a compiled template"
        )
        if s is None:
            rows.append(not_measured(what, "no template measured"))
            continue
        rust = (
            "– (see the pure rows)"
            if compiled
            else rust_cell(ratio_stats(per_tpl, "minijinja", "jinja2"), section == "warm")
        )
        detail = spread(s) + (
            f"; {s['slower']} of {s['templates']} slower than Jinja2" if section == "warm" else ""
        )
        if section == "cold":
            target, judged = f"≤ {TARGETS[key]:.2f} (sums)", s["ratio"]
        else:
            target, judged = f"median ≤ {TARGETS[key]:.2f}", s["median"]
        rows.append(
            Row(
                what
                + (
                    f", sum over {s['templates']} templates"
                    if section == "cold"
                    else f", sum over {figures['pairs']} pairs of {s['templates']} templates"
                ),
                R.fmt_time(s["sum"]),
                f"Jinja2 {R.fmt_time(s['reference'])}",
                f"{s['ratio']:.2f}",
                detail,
                target,
                met(judged, TARGETS[key]),
                rust,
            )
        )
        if section == "warm":
            mj = None if compiled else ratio_stats(per_tpl, "minijinja", "jinja2")
            bound = TARGETS["compiled worst" if compiled else "worst"]
            above = sum(r > bound for r in s["ratios"])
            rows.append(
                Row(
                    f"Warm, {build}: templates above {bound:.2f} of Jinja2",
                    f"{above} of {s['templates']}",
                    "Jinja2",
                    f"worst {s['worst']:.2f}",
                    "–",
                    f"none (every template ≤ {bound:.2f})",
                    met(s["worst"], bound),
                    "– (see the pure rows)"
                    if compiled
                    else "not measured"
                    if mj is None
                    else f"{sum(r > bound for r in mj['ratios'])} of {mj['templates']}",
                )
            )
    return rows


def per_template_row(
    figure: str,
    medians: dict[str, dict[str, float]],
    ours: str,
    reference: str,
    reference_label: str,
    pairs: int,
    target_key: str,
    judge: str,
    rust: str,
) -> Row:
    """A row of ours against a reference timed template by template (tokens.interleaved's
    medians); ``judge`` is "median" or "ratio" (of the sums)."""
    per_tpl: dict[str, dict[str, float]] = {}
    for name, who in ((ours, "ours"), (reference, "ref")):
        for tpl, seconds in medians[name].items():
            per_tpl.setdefault(tpl, {})[who] = seconds
    s = ratio_stats(per_tpl, "ours", "ref")
    if s is None:
        return not_measured(figure, "no pair measured")
    target = TARGETS[target_key]
    return Row(
        f"{figure} ({s['templates']} templates, {pairs} pairs)",
        f"{pairs / s['sum']:,.0f} conv/s",
        f"{reference_label} {pairs / s['reference']:,.0f} conv/s",
        f"{s['ratio']:.2f}",
        spread(s),
        f"{'median' if judge == 'median' else 'sums'} ≤ {target:.2f}",
        met(s[judge], target),
        rust,
    )


def batch_row(loop_s: float, batch_s: float, count: int, equal: bool) -> Row:
    r = loop_s / batch_s
    return Row(
        f"`batch --workers 1` / in-process loop, {count:,} conversations, whole process"
        " (rate: higher is better)",
        f"{count / batch_s:,.0f} conv/CPU s",
        f"loop {count / loop_s:,.0f} conv/CPU s",
        f"{r:.2f}",
        "start-up (interpreter, imports, compiling the template) included, against `json.loads`"
        " + `render`; rows " + ("equal the loop's" if equal else "**differ from the loop's**"),
        "–",
        "–",
        "–",
    )


def batch_per_row_row(
    loop_s: float, batch_slope: float, count: int, equal: bool, codec: str = "json"
) -> Row:
    """The rate of `batch` per row, its start-up excluded: the CPU slope between the whole
    input and its first quarter (what the issue's "no per-row overhead" asks about); `codec`
    reads and writes the JSON lines (msgspec with the fastjson extra)."""
    r = (loop_s / count) / batch_slope
    return Row(
        "`batch --workers 1` / in-process loop, per row (rate: higher is better)",
        f"{1 / batch_slope:,.0f} conv/CPU s",
        f"loop {count / loop_s:,.0f} conv/CPU s",
        f"{r:.2f}",
        f"start-up excluded: CPU of {count:,} rows minus CPU of their first quarter, per row"
        f" (decode, render, encode, write; JSON lines by {codec})",
        f"≥ {TARGETS['batch']:.2f}",
        met(r, TARGETS["batch"], higher_is_better=True) if equal else "**no**",
        "–",
    )


def model_row(alone: float, driver: float, worker: float, machine: str) -> Row:
    """The scaling model's 16 workers against one (CPU seconds per row, see scale.Scaling)."""
    one = 1 / alone
    many = min(MODEL_WORKERS / (worker + driver), 1 / driver)
    speedup = many / one
    return Row(
        f"Model, not a measurement: {MODEL_WORKERS} workers / 1 worker of `batch`, predicted "
        f"from CPU per row measured on {machine}",
        f"{MODEL_WORKERS} workers {many:,.0f} rows/s",
        f"1 worker {one:,.0f} rows/s",
        f"{speedup:.1f}×",
        f"per row: one process {alone * 1e6:.0f} µs; with a pool the driver "
        f"{driver * 1e6:.1f} µs, the workers {worker * 1e6:.0f} µs",
        f"≥ {TARGETS['speedup']:.0f}×",
        met(speedup, TARGETS["speedup"], higher_is_better=True),
        "–",
    )


def duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


def version_of(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


def header(size: str, elapsed: float, compiled: str) -> str:
    import minijinja_py

    build = "compiled" if getattr(minijinja_py, "COMPILED", False) else "pure Python"
    versions = ", ".join(
        f"{label} {version_of(dist)}"
        for label, dist in (
            ("Jinja2", "jinja2"),
            ("transformers", "transformers"),
            ("tokenizers", "tokenizers"),
            ("msgspec", "msgspec"),
            ("minijinja (Rust)", "minijinja"),
        )
    )
    return (
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on {R.machine_info()}.  \n"
        f"minijinja_py {getattr(minijinja_py, '__version__', '?')} ({build}) at git "
        f"{R.git_rev()}; {versions}.  \n"
        f"Compiled build: {compiled}.  \n"
        f"`python -m benchmarks.report{' --quick' if size == 'quick' else ''}`: {size} sizes, "
        f"{duration(elapsed)}. CPU time unless a row says wall time (medians of interleaved "
        "repeats; batch: best of its repeats); ratios are ours / reference, lower is faster, "
        "except the batch's rate. Jinja2 is configured as transformers' `apply_chat_template` configures it."
    )


# ---------------------------------------------------------------------------- measurements


def measure_engines(mode: R.Mode, with_rust: bool = True) -> dict[str, Any]:
    """Cold and warm of this interpreter's minijinja_py, Jinja2 and (optionally) minijinja,
    interleaved per template (run.py's sections)."""
    from .engines import all_engines

    engines = {e.key: e for e in all_engines()}
    for key in ("ours", "jinja2"):
        if not engines[key].available:
            raise NotMeasured(engines[key].reason)
    if not with_rust:
        engines["minijinja"].available = False
    corpus = R.agreement(engines, mode, [])
    R.warm_up(engines)
    R.log("cold")
    cold = R.measure_cold(engines, corpus, mode)
    R.log("warm")
    warm = R.measure_warm(engines, corpus, mode)
    import minijinja_py

    return {
        "cold": cold,
        "warm": warm,
        "pairs": corpus.agreeing_pairs,
        "compiled": bool(getattr(minijinja_py, "COMPILED", False)),
        "module": minijinja_py.__file__,
        "version": getattr(minijinja_py, "__version__", "?"),
    }


# The child of --compiled-python: benchmarks/ (and conformance/, whose model folders the
# training figure encodes with) is copied to a folder of its own and only that folder is put on
# sys.path (PYTHONSAFEPATH keeps the working directory off it), so the checkout's pure package
# cannot shadow the installed, compiled one.
CHILD = """\
import json, sys
sys.path.insert(0, sys.argv[1])
from benchmarks.report import child
print(json.dumps(child(sys.argv[2], sys.argv[3])))
"""


def child(size: str, what: str) -> dict[str, Any]:
    """In the compiled build's interpreter: the engine's figures, or (`what` "training")
    tokenize with masks against transformers."""
    import minijinja_py

    if not getattr(minijinja_py, "COMPILED", False):
        return {"error": f"minijinja_py there is not compiled ({minijinja_py.__file__})"}
    try:
        if what == "training":
            medians, pairs = measure_training(SIZES[size])
            return {"medians": medians, "pairs": pairs}
        return measure_engines(SIZES[size].engine, with_rust=False)
    except NotMeasured as exc:
        return {"error": str(exc)}


def measure_compiled(python: str, size: Size, what: str = "engine") -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="minijinja-py-report-") as folder:
        copied = ("benchmarks", "conformance") if what == "training" else ("benchmarks",)
        for name in copied:
            shutil.copytree(
                HERE.parent / name,
                Path(folder) / name,
                ignore=shutil.ignore_patterns("__pycache__", "*.md"),
            )
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        env["PYTHONSAFEPATH"] = "1"
        env["MINIJINJA_PY_CORPUS"] = str(C.CORPUS_DIR)
        try:
            done = subprocess.run(
                [python, "-c", CHILD, folder, size.name, what],
                cwd=folder,
                env=env,
                stdout=subprocess.PIPE,
                text=True,
                timeout=3600,
            )
        except OSError as exc:
            raise NotMeasured(f"cannot run {python}: {exc}") from exc
    if done.returncode != 0 or not done.stdout.strip():
        raise NotMeasured(f"{python} failed (exit {done.returncode}, see stderr)")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if "error" in out:
        raise NotMeasured(out["error"])
    return out


def measure_training(size: Size) -> tuple[dict[str, dict[str, float]], int]:
    """tokenize(return_assistant_tokens_mask=True) against transformers' apply_chat_template
    with masks, on the tagged templates' pairs where both give the same lists."""
    try:
        import tokenizers  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:
        raise NotMeasured(f"{exc.name} not installed (the parity extra)") from exc
    from . import tokens as T

    work = T._workload(size.tagged_templates, tagged=True)
    _, medians = T.interleaved(work, dict(T._TAGGED_ENGINES), size.token_repeats)
    return medians, len(work)


def measure_tokens_batch(size: Size) -> tuple[dict[str, dict[str, float]], int]:
    """Our apply_chat_template of a padded numpy batch of 64 conversations with masks against
    transformers' batched call, per tagged template, in wall time (the tokenizers library
    encodes a batch on its own threads)."""
    try:
        import numpy  # noqa: F401
        import tokenizers  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:
        raise NotMeasured(f"{exc.name} not installed (the parity extra and numpy)") from exc
    from . import tokens as T

    work = T._batch_workload(BATCH_SIZE)[: size.tagged_templates]
    engines = {
        name: call for name, call in T._batch_engines().items() if name != T._TOKENIZE_BATCH
    }
    _, medians = T.interleaved(work, engines, size.token_repeats, "wall")
    return medians, BATCH_SIZE * len(work)


BATCH_SIZE = 64


def measure_import(size: Size) -> tuple[float, float]:
    """Wall seconds of `import minijinja_py` and of `import jinja2.sandbox`, each the median
    of fresh interpreters started in turn (bytecode cached, as an installed package is)."""
    found = R.import_medians(
        {"ours": "minijinja_py", "jinja2": "jinja2.sandbox"}, size.import_repeats, "perf_counter"
    )
    return found["ours"], found["jinja2"]


def measure_provenance(size: Size) -> tuple[dict[str, dict[str, float]], int]:
    from . import tokens as T

    work = T._provenance_workload(size.provenance_templates)
    engines = {n: T._ENGINES[n] for n in ("render", "render_with_provenance")}
    _, medians = T.interleaved(work, engines, size.provenance_repeats)
    return medians, len(work)


def json_codec() -> str:
    """What reads and writes the JSON lines of `batch` here (pipelines/fastjson.py)."""
    from minijinja_py.pipelines import fastjson

    return "json" if fastjson.FAST_DECODE is None else "msgspec (the fastjson extra)"


def measure_batch(size: Size, folder: Path) -> tuple[float, float, float, bool]:
    """(CPU seconds of the loop, of `batch --workers 1`, of `batch` per row without its
    start-up, whether their rows are equal): the best of interleaved repeats."""
    from . import scale as S

    source = folder / "in.jsonl"
    S.write_input(source, size.batch_count)
    quarter = folder / "quarter.jsonl"
    with open(source, encoding="utf-8") as lines, open(quarter, "w", encoding="utf-8") as out:
        out.writelines(itertools.islice(lines, size.batch_count // 4))
    env = R.child_env()  # bytecode cached, as an installed package imports
    S.write_input(folder / "tiny.jsonl", 10)
    S.run_batch(folder / "tiny.jsonl", folder / "tiny-out.jsonl", 1, env)  # fills that cache
    loops, batches, parts, equal = [], [], [], True
    for _ in range(size.batch_repeats):
        gc.collect()
        seconds, texts = S.run_loop(source, time.process_time)
        loops.append(seconds)
        batches.append(S.run_batch(source, folder / "out.jsonl", 1, env)[1])
        with open(folder / "out.jsonl", encoding="utf-8") as lines:
            equal = equal and [json.loads(line)["text"] for line in lines] == texts
        parts.append(S.run_batch(quarter, folder / "quarter-out.jsonl", 1, env)[1])
    rows = size.batch_count - size.batch_count // 4
    return min(loops), min(batches), (min(batches) - min(parts)) / rows, equal


def measure_model(size: Size, folder: Path) -> Any:
    from . import scale as S

    source = folder / "model.in.jsonl"
    S.write_input(source, size.model_count)
    return S.measure_scaling(source, folder, size.model_repeats, size.model_count)


def short_machine() -> str:
    info = R.machine_info()
    cpu, cores = info.split(", ")[:2]
    return f"{cpu} ({cores})"


def measure_all(
    size: Size, sections: set[str], compiled_python: str | None, notes: dict[str, str]
) -> list[Row]:
    """The rows of every section asked for; ``notes["compiled"]`` says which build ran."""
    rows: list[Row] = []
    notes["compiled"] = (
        f"`{compiled_python}`" if compiled_python else "not given (--compiled-python)"
    )

    def section(name: str, figure: str, fn: Callable[[], list[Row]]) -> None:
        if name not in sections:
            return
        R.log(f"== {name}")
        started = time.perf_counter()
        try:
            rows.extend(fn())
        except NotMeasured as exc:
            rows.append(not_measured(figure, str(exc)))
        except Exception as exc:  # one failing section must not cost the others their rows
            traceback.print_exc()
            rows.append(not_measured(figure, f"{type(exc).__name__}: {exc}"[:200]))
        R.log(f"   {name}: {time.perf_counter() - started:.0f} s")

    def engine() -> list[Row]:
        figures = measure_engines(size.engine)
        build = "compiled (this interpreter's)" if figures["compiled"] else "pure"
        return engine_rows(figures, build, compiled=False)

    section("engine", "Cold and warm, pure", engine)

    def compiled() -> list[Row]:
        if not compiled_python:
            raise NotMeasured("pass --compiled-python")
        figures = measure_compiled(compiled_python, size)
        notes["compiled"] += f" (minijinja_py {figures['version']} at `{figures['module']}`)"
        return engine_rows(figures, "compiled", compiled=True)

    section("compiled", "Cold and warm, compiled build", compiled)

    def imports() -> list[Row]:
        ours, theirs = measure_import(size)
        ratio = ours / theirs
        return [
            Row(
                f"`import minijinja_py` / `import jinja2.sandbox`, wall time of the statement,"
                f" median of {size.import_repeats} fresh interpreters each",
                R.fmt_time(ours),
                f"Jinja2 {R.fmt_time(theirs)}",
                f"{ratio:.2f}",
                "the modules a plain import may load: tests/test_startup.py",
                f"≤ {TARGETS['import']:.2f}",
                met(ratio, TARGETS["import"]),
                "–",
            )
        ]

    section("import", "Import / import jinja2.sandbox", imports)

    def training() -> list[Row]:
        from . import tokens as T

        medians, pairs = measure_training(size)
        return [
            per_template_row(
                "`tokenize(return_assistant_tokens_mask=True)` / transformers "
                "`apply_chat_template(tokenize=True, return_dict=True, "
                "return_assistant_tokens_mask=True)`, tagged templates",
                medians,
                "tokenize + assistant mask",
                T._TRANSFORMERS_MASK,
                "transformers",
                pairs,
                "training",
                "median",
                "– (no tokenizer)",
            )
        ]

    section("training", "Tokenize with masks / transformers", training)

    def compiled_training() -> list[Row]:
        from . import tokens as T

        if not compiled_python:
            raise NotMeasured("pass --compiled-python")
        out = measure_compiled(compiled_python, size, "training")
        return [
            per_template_row(
                "Compiled build: `tokenize(return_assistant_tokens_mask=True)` / transformers' "
                "call, as the row above",
                out["medians"],
                "tokenize + assistant mask",
                T._TRANSFORMERS_MASK,
                "transformers",
                out["pairs"],
                "training",
                "median",
                "– (no tokenizer)",
            )
        ]

    section("compiled training", "Tokenize with masks / transformers, compiled", compiled_training)

    def tokens_batch() -> list[Row]:
        from . import tokens as T

        medians, pairs = measure_tokens_batch(size)
        return [
            per_template_row(
                f"`apply_chat_template` of a batch of {BATCH_SIZE} (padded, numpy, masks) /"
                " transformers' batched call, wall time, tagged templates",
                medians,
                "apply_chat_template (padded, np)",
                T._TRANSFORMERS_BATCH,
                "transformers",
                pairs,
                "tokens batch",
                "ratio",
                "– (no tokenizer)",
            )
        ]

    section("tokens batch", "Batch of 64 / transformers' batched call", tokens_batch)

    def provenance() -> list[Row]:
        medians, pairs = measure_provenance(size)
        return [
            per_template_row(
                "`render_with_provenance` / `render` (ChatTemplate), corpus",
                medians,
                "render_with_provenance",
                "render",
                "render",
                pairs,
                "provenance",
                "ratio",
                "– (no provenance)",
            )
        ]

    section("provenance", "render_with_provenance / render", provenance)
    with tempfile.TemporaryDirectory(prefix="minijinja-py-report-") as folder:

        def batch() -> list[Row]:
            loop_s, batch_s, slope, equal = measure_batch(size, Path(folder))
            return [
                batch_per_row_row(loop_s, slope, size.batch_count, equal, json_codec()),
                batch_row(loop_s, batch_s, size.batch_count, equal),
            ]

        def model() -> list[Row]:
            m = measure_model(size, Path(folder))
            return [model_row(m.alone, m.driver, m.worker, short_machine())]

        section("batch", "`batch --workers 1` / in-process loop", batch)
        section("model", f"Model: {MODEL_WORKERS} workers / 1 worker", model)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.report", description=__doc__.splitlines()[0]
    )
    ap.add_argument("--quick", action="store_true", help="few templates, small counts")
    ap.add_argument("--write", metavar="PATH", help="also save the Markdown to PATH")
    ap.add_argument(
        "--compiled-python",
        metavar="PATH",
        help="a Python whose installed minijinja_py is the compiled build",
    )
    ap.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"comma-separated sections (default all: {','.join(SECTIONS)})",
    )
    ap.add_argument("--count", type=int, help="conversations for batch and model")
    args = ap.parse_args(argv)
    sections = {s.strip() for s in args.only.split(",") if s.strip()}
    if sections - set(SECTIONS):
        ap.error(f"unknown section(s): {', '.join(sorted(sections - set(SECTIONS)))}")
    if not C.corpus_available():
        R.log(f"corpus not found at {C.CORPUS_DIR} (set MINIJINJA_PY_CORPUS)")
        return 2
    size = QUICK if args.quick else FULL
    if args.count:
        size = dataclasses.replace(size, batch_count=args.count, model_count=args.count)
    started = time.perf_counter()
    notes: dict[str, str] = {}
    rows = measure_all(size, sections, args.compiled_python, notes)
    doc = header(size.name, time.perf_counter() - started, notes.get("compiled", "")) + "\n\n"
    doc += table(rows)
    print(doc)
    if args.write:
        Path(args.write).write_text(doc + "\n", encoding="utf-8")
        R.log(f"wrote {args.write}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
