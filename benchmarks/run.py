"""Side-by-side speed and memory of minijinja_py, Jinja2 (as transformers sets it up) and minijinja.

Run from the repository root: ``python -m benchmarks`` (or ``python benchmarks/run.py``);
``--quick`` for a sub-minute smoke run, ``--write`` to store the tables in benchmarks/results.md.
Progress goes to stderr, the Markdown report to stdout. See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    # Run as a script: make the repository root importable instead of benchmarks/ itself.
    _root = str(Path(__file__).resolve().parent.parent)
    sys.path[0] = _root
    __package__ = "benchmarks"  # noqa: A001 - lets the relative imports below resolve

from . import corpus as C  # noqa: E402
from .engines import Engine, all_engines  # noqa: E402

HERE = Path(__file__).resolve().parent
TARGETS = {"cold": 0.30, "warm": 1.00, "import": 1.00, "growth": 1.2, "memory": 1.00}
GROWTH_SIZES = (10, 100, 1_000, 10_000)
RENDER_TIMEOUT_S = 20.0  # an engine that hangs on one pair must not stall the whole run


class Clock:
    """What a sample measures. CPU time by default: the machines this runs on are shared
    (2 cores, other jobs), and CPU time of a single-threaded render is not inflated by another
    process being scheduled; ``--wall`` switches to elapsed time for an idle machine."""

    def __init__(self) -> None:
        self.use("process_time")

    def use(self, name: str) -> None:
        self.name = name  # also the function name used inside subprocess snippets
        self.now = getattr(time, name)

    def children(self) -> float:
        """Clock of finished child processes: their CPU time, or elapsed time with --wall."""
        if self.name == "perf_counter":
            return time.perf_counter()
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        return ru.ru_utime + ru.ru_stime


CLOCK = Clock()


@dataclass
class Mode:
    name: str
    max_templates: int | None
    cold_repeats: int
    warm_repeats: int
    growth_templates: int
    growth_repeats: dict[int, int]
    memory_repeats: int
    memory_templates: int | None  # tracemalloc slows compiles ~5x: sample the corpus
    import_repeats: int
    process_repeats: int
    parser_repeats: int


FULL = Mode("full", None, 5, 7, 5, {10: 21, 100: 9, 1_000: 5, 10_000: 3}, 1, 30, 25, 10, 7)
QUICK = Mode("quick", 8, 3, 3, 2, {10: 5, 100: 3, 1_000: 2, 10_000: 1}, 1, None, 8, 3, 3)
# Small, common templates that a quick run always covers besides the growth ones.
QUICK_EXTRA = ("chatml-transformers-default", "llama-2-chat", "zephyr-7b-beta")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class RenderTimeout(Exception):
    pass


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """SIGALRM-based guard; only used outside timed sections (it costs a syscall)."""

    def on_alarm(signum, frame):
        raise RenderTimeout(f"no result after {seconds:.0f} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def rotated(items: list, k: int) -> list:
    """Engine order for round ``k``: rotating it spreads cache and clock drift over all."""
    k %= max(len(items), 1)
    return items[k:] + items[:k]


def nonce(source: str, counter: list[int]) -> str:
    # A leading comment makes the source new to any cache keyed on the text, so "cold"
    # stays cold on every repeat; it renders as nothing.
    counter[0] += 1
    return "{# bench " + str(counter[0]) + " #}" + source


# ---------------------------------------------------------------------------- agreement


@dataclass
class Corpus:
    templates: list[C.Template]  # the agreeing ones, with their agreeing contexts
    total_templates: int = 0
    total_pairs: int = 0
    ref_ok_pairs: int = 0
    agreeing_pairs: int = 0
    # minijinja (Rust): per template, whether every agreeing pair renders, and how many match.
    mj_ok: dict[str, bool] = field(default_factory=dict)
    mj_identical: dict[str, int] = field(default_factory=dict)
    mj_reason: dict[str, str] = field(default_factory=dict)


def agreement(engines: dict[str, Engine], mode: Mode, patterns: list[str]) -> Corpus:
    ref = engines["jinja2"]
    ours = engines["ours"]
    mj = engines["minijinja"]
    templates = C.load_templates()
    conversations = C.load_conversations()
    if patterns:
        templates = [t for t in templates if any(p in t.name for p in patterns)]
    if mode.max_templates is not None and not patterns:
        wanted = {n for _, n in C.pick_growth_templates([t.name for t in templates])}
        wanted.update(QUICK_EXTRA)
        templates = [t for t in templates if t.name in wanted][: mode.max_templates]
    out = Corpus([], total_templates=len(templates))
    ref_env = ref.new_env()
    ours_env = ours.new_env() if ours.available else None
    for tpl in templates:
        try:
            ref_t = ref.compile(ref_env, tpl.source)
        except Exception:
            out.total_pairs += len(conversations)
            continue
        ours_t = None
        if ours_env is not None:
            try:
                with time_limit(RENDER_TIMEOUT_S):
                    ours_t = ours.compile(ours_env, tpl.source)
            except Exception as exc:
                log(f"  ours cannot compile {tpl.name}: {type(exc).__name__}: {exc}"[:200])
        for conv_name, conv in conversations:
            out.total_pairs += 1
            ctx = C.build_context(tpl.meta, conv)
            try:
                expected = ref.render(ref_t, ctx)
            except Exception:
                continue
            out.ref_ok_pairs += 1
            if ours.available:
                if ours_t is None:
                    continue
                try:
                    with time_limit(RENDER_TIMEOUT_S):
                        got = ours.render(ours_t, C.build_context(tpl.meta, conv))
                except Exception:
                    continue
                if got != expected:
                    continue
            tpl.contexts.append(ctx)
            tpl.context_names.append(conv_name)
            tpl.expected.append(expected)
        if tpl.contexts:
            out.templates.append(tpl)
            out.agreeing_pairs += len(tpl.contexts)
    if mj.available:
        for tpl in out.templates:
            check_minijinja(mj, tpl, out)
    return out


def check_minijinja(mj: Engine, tpl: C.Template, out: Corpus) -> None:
    """minijinja is timed on the same pairs when it renders all of them (match or not)."""
    try:
        t = mj.compile(mj.new_env(), tpl.source)
        same = 0
        for ctx, expected in zip(tpl.contexts, tpl.expected, strict=True):
            with time_limit(RENDER_TIMEOUT_S):
                same += mj.render(t, ctx) == expected
    except Exception as exc:
        out.mj_ok[tpl.name] = False
        out.mj_reason[tpl.name] = f"{type(exc).__name__}: {exc}".splitlines()[0][:120]
        return
    out.mj_ok[tpl.name] = True
    out.mj_identical[tpl.name] = same


def engines_for(tpl: C.Template, engines: dict[str, Engine], corpus: Corpus) -> list[Engine]:
    out = [e for e in engines.values() if e.available and e.key != "minijinja"]
    mj = engines["minijinja"]
    if mj.available and corpus.mj_ok.get(tpl.name):
        out.append(mj)
    return out


# ---------------------------------------------------------------------------- in-process timings


def warm_up(engines: dict[str, Engine]) -> None:
    """Build every per-process structure (our Lark parser, Jinja2's lexer) before timing."""
    src = "{% for m in messages %}{{ m['role'] ~ ': ' ~ m.content | trim }}\n{% endfor %}"
    for e in engines.values():
        if e.available:
            e.render(e.compile(e.new_env(), src), {"messages": [{"role": "u", "content": " x "}]})


def measure_cold(engines, corpus: Corpus, mode: Mode) -> dict[str, dict[str, float]]:
    """New environment + compile + first render of a never-seen source, median per template."""
    samples: dict[str, dict[str, list[float]]] = {}
    # The heap frozen as for the warm rounds (see measure_warm): a collection before each
    # sample that walks everything the harness holds evicts the processor's caches, a cost
    # of its own (about 100 us) added to either engine's compile.
    with frozen_heap():
        _cold_rounds(engines, corpus, mode, samples)
    return {n: {k: median(v) for k, v in d.items()} for n, d in samples.items()}


def _cold_rounds(engines, corpus: Corpus, mode: Mode, samples) -> None:
    counter = [0]
    pc = CLOCK.now
    for r in range(mode.cold_repeats):
        log(f"  cold round {r + 1}/{mode.cold_repeats}")
        for i, tpl in enumerate(corpus.templates):
            ctx = tpl.contexts[0]
            for e in rotated(engines_for(tpl, engines, corpus), r + i):
                src = nonce(tpl.source, counter)
                # Each sample starts with the collector's counts at zero: a full collection
                # that the garbage of earlier samples (or the harness) makes due would
                # otherwise land in whichever engine's sample comes next (30 ms on a 10 ms
                # compile); a collection the sample's own allocations cause stays in it.
                gc.collect()
                t0 = pc()
                e.render(e.compile(e.new_env(), src), ctx)
                dt = pc() - t0
                samples.setdefault(tpl.name, {}).setdefault(e.key, []).append(dt)


def measure_warm(engines, corpus: Corpus, mode: Mode) -> dict[str, dict[str, float]]:
    """Rendering all agreeing conversations of an already compiled template, median per pass."""
    compiled = {}
    for tpl in corpus.templates:
        for e in engines_for(tpl, engines, corpus):
            t = e.compile(e.new_env(), tpl.source)
            for ctx in tpl.contexts:  # first renders may fill lazy caches: keep them untimed
                e.render(t, ctx)
            compiled[tpl.name, e.key] = t
    samples: dict[str, dict[str, list[float]]] = {}
    pc = CLOCK.now
    # What the process holds by now (both engines' modules, the corpus, the compiled templates)
    # is moved out of the collector's reach: a full collection that walks it evicts from the
    # processor's caches everything a render reads, and the render after it took about 100 us
    # more than the next ones, for either engine (a 15 us render of the compiled build read
    # as 113 us; writing 64 MiB before the render costs as much).  Each sample still starts
    # after a collection, of the little made since.
    with frozen_heap():
        _warm_rounds(engines, corpus, mode, compiled, samples, pc)
    return {n: {k: median(v) for k, v in d.items()} for n, d in samples.items()}


@contextmanager
def frozen_heap() -> Iterator[None]:
    """What the process holds now is out of the collector's reach while the block runs (see
    measure_warm): a collection walks only what the block makes."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def time_passes(render: Any, template: Any, contexts: list[dict[str, Any]], passes: int) -> float:
    """CPU seconds of one pass over `contexts`, the mean of `passes` passes."""
    clock = time.process_time
    start = clock()
    for _ in range(passes):
        for ctx in contexts:
            render(template, ctx)
    return (clock() - start) / passes


def repeats_for(render: Any, template: Any, context: dict[str, Any], seconds: float) -> int:
    """How many renders of `context` make a sample of at least `seconds` of CPU (one, at
    least), estimated from three."""
    once = time_passes(render, template, [context], 3)
    return max(1, round(seconds / max(once, 1e-7)))


def _warm_rounds(engines, corpus: Corpus, mode: Mode, compiled, samples, pc) -> None:
    for r in range(mode.warm_repeats):
        log(f"  warm round {r + 1}/{mode.warm_repeats}")
        for i, tpl in enumerate(corpus.templates):
            for e in rotated(engines_for(tpl, engines, corpus), r + i):
                t = compiled[tpl.name, e.key]
                render = e.render
                ctxs = tpl.contexts
                gc.collect()  # (as in measure_cold; cheap once the process is frozen)
                t0 = pc()
                for ctx in ctxs:
                    render(t, ctx)
                dt = pc() - t0
                samples.setdefault(tpl.name, {}).setdefault(e.key, []).append(dt)


def memory_sample(templates: list[C.Template], k: int | None) -> list[C.Template]:
    """``k`` templates spread evenly over the corpus sorted by source length (all if None)."""
    if k is None or k >= len(templates):
        return templates
    by_len = sorted(templates, key=lambda t: len(t.source))
    step = (len(by_len) - 1) / (k - 1)
    return [by_len[round(i * step)] for i in range(k)]


def measure_memory(engines, corpus: Corpus, mode: Mode) -> dict[str, dict[str, float]]:
    """Bytes still held after compiling a template and rendering it once (tracemalloc).

    The first render is included because an engine may compile lazily; what it retains after
    rendering is the real footprint of a template kept in a cache. minijinja's Rust heap is
    invisible to tracemalloc, so it is not measured.
    """
    out: dict[str, dict[str, float]] = {}
    counter = [0]
    live = [e for e in engines.values() if e.available and e.key != "minijinja"]
    # One environment per engine, warmed on an unrelated template, so that caches shared by
    # all templates (parser tables, lexer regexes) are not charged to the first one measured.
    envs = {}
    for e in live:
        envs[e.key] = env = e.new_env()
        e.render(e.compile(env, "{% for x in xs %}{{ x }}{% endfor %}"), {"xs": [1]})
    sample = memory_sample(corpus.templates, mode.memory_templates)
    for i, tpl in enumerate(sample):
        if i % 10 == 0:
            log(f"  memory {i}/{len(sample)}")
        ctx = tpl.contexts[0]
        for e in rotated(live, i):
            sizes = []
            for _ in range(mode.memory_repeats):
                gc.collect()
                tracemalloc.start()
                t = e.compile(envs[e.key], nonce(tpl.source, counter))
                e.render(t, ctx)
                gc.collect()
                sizes.append(tracemalloc.get_traced_memory()[0])
                tracemalloc.stop()
                del t
            out.setdefault(tpl.name, {})[e.key] = median(sizes)
    return out


@dataclass
class GrowthRow:
    label: str
    template: str
    engine: str
    per_msg: dict[int, float] = field(default_factory=dict)  # seconds per message
    error: str = ""


def measure_growth(engines, corpus: Corpus, mode: Mode) -> list[GrowthRow]:
    """Render time per message for generated chats of 10 … 10,000 messages."""
    by_name = {t.name: t for t in C.load_templates()}
    picks = C.pick_growth_templates(sorted(by_name))[: mode.growth_templates]
    rows: list[GrowthRow] = []
    pc = CLOCK.now
    for label, name in picks:
        tpl = by_name[name]
        ref = engines["jinja2"]
        es = [e for e in engines.values() if e.available]
        compiled = {}
        row_of = {}
        for e in es:
            row = row_of[e.key] = GrowthRow(label, name, e.key)
            rows.append(row)
            try:
                compiled[e.key] = e.compile(e.new_env(), tpl.source)
            except Exception as exc:
                row.error = f"compile: {type(exc).__name__}"
        for n in GROWTH_SIZES:
            log(f"  growth {label} ({name}) n={n}")
            ctx = C.growth_context(tpl.meta, n)
            try:
                expected = ref.render(compiled["jinja2"], ctx)
            except Exception as exc:
                for row in row_of.values():
                    row.error = row.error or f"Jinja2 fails: {type(exc).__name__}: {exc}"[:80]
                break
            live = []
            for e in es:
                row = row_of[e.key]
                if row.error or e.key not in compiled:
                    continue
                try:
                    with time_limit(RENDER_TIMEOUT_S * 6):
                        got = e.render(compiled[e.key], ctx)
                except Exception as exc:
                    row.error = f"n={n}: {type(exc).__name__}: {exc}".splitlines()[0][:80]
                    continue
                if got != expected and e.key == "ours":
                    row.error = f"n={n}: output differs from Jinja2"
                    continue
                live.append(e)
            samples: dict[str, list[float]] = {e.key: [] for e in live}
            for r in range(mode.growth_repeats[n]):
                for e in rotated(live, r):
                    t0 = pc()
                    e.render(compiled[e.key], ctx)
                    samples[e.key].append(pc() - t0)
            for key, xs in samples.items():
                row_of[key].per_msg[n] = median(xs) / n
    return rows


# ---------------------------------------------------------------------------- subprocess timings

IMPORT_SNIPPET = (
    "import sys, time\n"
    "sys.path.insert(0, {root!r})\n"
    "t0 = time.{clock}()\n"
    "import {module}\n"
    "print(time.{clock}() - t0)\n"
)

# One-time cost of the first template in a process: the difference between the first and the
# second environment + compile + render (for us, mostly building the Lark parser).
FIRST_TEMPLATE_SNIPPET = (
    "import sys, time\n"
    "sys.path.insert(0, {root!r})\n"
    "from benchmarks.engines import {cls}\n"
    "e = {cls}({args})\n"
    "pc = time.{clock}\n"
    "t0 = pc(); e.render(e.compile(e.new_env(), '{{{{ a }}}}'), {{'a': 1}}); t1 = pc()\n"
    "e.render(e.compile(e.new_env(), '{{{{ b }}}}'), {{'b': 1}}); t2 = pc()\n"
    "print((t1 - t0) - (t2 - t1))\n"
)

# What transformers does, as a stand-alone process: the Jinja2 side of the CLI comparison.
JINJA2_PROCESS_SNIPPET = """\
import json, sys
from datetime import datetime
import jinja2, jinja2.ext
from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment
class Gen(jinja2.ext.Extension):
    tags = {"generation"}
    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_gen"), [], [], body).set_lineno(lineno)
    def _gen(self, caller):
        return caller()
def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                      sort_keys=sort_keys)
def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)
env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                   extensions=[Gen, jinja2.ext.loopcontrols])
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception
env.globals["strftime_now"] = lambda fmt: datetime(2026, 1, 15, 12).strftime(fmt)
with open(sys.argv[1], encoding="utf-8") as f:
    src = f.read()
with open(sys.argv[2], encoding="utf-8") as f:
    ctx = json.load(f)
sys.stdout.write(env.from_string(src).render(**ctx))
"""


def child_env() -> dict[str, str]:
    """Environment of every timed child process: bytecode caching on, in a cache of our own.

    An installed package imports from .pyc files (pip compiles them), so a child must not
    recompile our sources on every start because PYTHONDONTWRITEBYTECODE happens to be set
    (it is, on the project's machines). A shared prefix keeps the .pyc files out of the
    working tree and treats Jinja2 the same way; each section runs every command once untimed
    to fill it.
    """
    env = dict(os.environ, PYTHONPATH=str(C.REPO_ROOT))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "minijinja_py-bench-pycache")
    return env


def run_py(code: str) -> float:
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=C.REPO_ROOT,
        env=child_env(),
        timeout=120,
    )
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed")
    return float(proc.stdout.strip().splitlines()[-1])


def measure_imports(engines, mode: Mode) -> dict[str, float]:
    modules = {"ours": "minijinja_py", "jinja2": "jinja2.sandbox", "minijinja": "minijinja"}
    live = {k: module for k, module in modules.items() if engines[k].available}
    return import_medians(live, mode.import_repeats, CLOCK.name)


def import_medians(modules: dict[str, str], repeats: int, clock: str) -> dict[str, float]:
    """Per key, the median time (`clock`: a `time` function's name) of importing its module in
    a fresh interpreter, the interpreters started in turn."""
    root = str(C.REPO_ROOT)
    codes = {
        k: IMPORT_SNIPPET.format(root=root, module=module, clock=clock)
        for k, module in modules.items()
    }
    for code in codes.values():  # first run writes bytecode caches; an installed package ships them
        run_py(code)
    samples: dict[str, list[float]] = {k: [] for k in codes}
    for r in range(repeats):
        for k in rotated(list(codes), r):
            samples[k].append(run_py(codes[k]))
    return {k: median(v) for k, v in samples.items()}


def measure_first_template(engines, mode: Mode) -> dict[str, float]:
    classes = {"ours": "OursEngine", "jinja2": "Jinja2Engine", "minijinja": "MiniJinjaRustEngine"}
    live = [k for k in classes if engines[k].available]
    samples: dict[str, list[float]] = {k: [] for k in live}
    root = str(C.REPO_ROOT)
    codes = {
        k: FIRST_TEMPLATE_SNIPPET.format(
            root=root,
            cls=classes[k],
            args="probe=False" if k == "ours" else "",
            clock=CLOCK.name,
        )
        for k in live
    }
    for k in live:  # untimed: fills the bytecode cache of everything the first render imports
        run_py(codes[k])
    for r in range(mode.parser_repeats):
        for k in rotated(live, r):
            samples[k].append(run_py(codes[k]))
    return {k: median(v) for k, v in samples.items()}


# The command line is the lead's to design; these are the shapes we know how to drive. The
# first whose output equals Jinja2's is used, so a mismatch never yields a misleading figure.
CLI_SHAPES = (
    ("render", "{tpl}", "{ctx}"),
    ("render", "{tpl}", "--context", "{ctx}"),
    ("render", "--template", "{tpl}", "--context", "{ctx}"),
    ("render", "-t", "{tpl}", "-c", "{ctx}"),
)


def our_cli() -> tuple[list[str], str] | None:
    """The console script if installed, else ``python -m minijinja_py`` if it exists."""
    script = Path(sys.executable).parent / "minijinja-py"
    if script.exists():
        return [str(script)], "minijinja-py"
    found = shutil.which("minijinja-py")
    if found:
        return [found], "minijinja-py"
    if (C.REPO_ROOT / "minijinja_py" / "__main__.py").exists():
        return [sys.executable, "-m", "minijinja_py"], "python -m minijinja_py"
    return None


@dataclass
class ProcessResult:
    ours: float | None = None
    jinja2: float | None = None
    command: str = ""
    note: str = ""


def measure_process(engines, mode: Mode) -> ProcessResult:
    """Whole process, start to exit: our CLI rendering one pair vs the same in Jinja2."""
    res = ProcessResult()
    by_name = {t.name: t for t in C.load_templates()}
    name = next((n for _, n in C.pick_growth_templates(sorted(by_name))), None)
    if name is None:
        res.note = "no growth template in corpus"
        return res
    tpl = by_name[name]
    ctx = C.growth_context(tpl.meta, 10)
    with tempfile.TemporaryDirectory() as tmp:
        tpl_path = Path(tmp) / f"{name}.jinja"
        ctx_path = Path(tmp) / "ctx.json"
        tpl_path.write_text(tpl.source, encoding="utf-8")
        ctx_path.write_text(json.dumps(ctx, ensure_ascii=False), encoding="utf-8")
        j2_cmd = [sys.executable, "-c", JINJA2_PROCESS_SNIPPET, str(tpl_path), str(ctx_path)]
        env = child_env()
        # Also the untimed first run of Jinja2's side (bytecode cache); ours gets its own below.
        expected = subprocess.run(
            j2_cmd, capture_output=True, text=True, check=True, env=env
        ).stdout
        cmds = {"jinja2": j2_cmd}
        cli = our_cli() if engines["ours"].available else None
        if cli is None:
            res.note = "our command line is not there yet (no minijinja-py, no __main__.py)"
        else:
            base, res.command = cli
            for shape in CLI_SHAPES:
                args = [a.format(tpl=tpl_path, ctx=ctx_path) for a in shape]
                proc = subprocess.run(base + args, capture_output=True, text=True, env=env, cwd=tmp)
                if proc.returncode == 0 and proc.stdout == expected:
                    cmds["ours"] = base + args
                    shown = [a.format(tpl="T.jinja", ctx="C.json") for a in shape]
                    res.command = " ".join([res.command, *shown])
                    break
            else:
                res.note = f"{res.command}: no known argument shape reproduced Jinja2's output"
        samples: dict[str, list[float]] = {k: [] for k in cmds}
        for r in range(mode.process_repeats):
            for k in rotated(list(cmds), r):
                t0 = CLOCK.children()
                subprocess.run(cmds[k], capture_output=True, env=env, cwd=tmp, check=True)
                samples[k].append(CLOCK.children() - t0)
        res.jinja2 = median(samples["jinja2"])
        if "ours" in samples:
            res.ours = median(samples["ours"])
    res.note = res.note or f"template {name}, 10 messages"
    return res


# ---------------------------------------------------------------------------- report


def fmt_time(s: float | None) -> str:
    if s is None or s != s:
        return "n/a"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms" if s < 0.1 else f"{s * 1e3:.0f} ms"
    return f"{s * 1e6:.1f} µs"


def fmt_bytes(b: float | None) -> str:
    if b is None or b != b:
        return "n/a"
    if b >= 1 << 20:
        return f"{b / (1 << 20):.2f} MiB"
    return f"{b / 1024:.0f} KiB"


def fmt_ratio(x: float | None) -> str:
    return "n/a" if x is None or x != x else f"{x:.2f}"


def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or not b or a != a or b != b:
        return None
    return a / b


def met(x: float | None, target: float) -> str:
    if x is None:
        return "–"
    return "yes" if x <= target else "**no**"


def totals(per_tpl: dict[str, dict[str, float]], a: str, b: str) -> tuple[float, float, list]:
    """Sums of a and b over templates measured for both, and the per-template a/b ratios."""
    ta = tb = 0.0
    ratios = []
    for d in per_tpl.values():
        if a in d and b in d:
            ta += d[a]
            tb += d[b]
            ratios.append(d[a] / d[b] if d[b] else float("nan"))
    return ta, tb, ratios


def ratio_summary(ratios: list[float]) -> str:
    ratios = [r for r in ratios if r == r]
    if not ratios:
        return "n/a"
    return f"{statistics.median(ratios):.2f} (worst {max(ratios):.2f})"


def machine_info() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()} "
        f"({platform.python_implementation()}), {platform.system()} {platform.release()}"
    )


def git_rev() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=C.REPO_ROOT,
        )
        rev = out.stdout.strip() or "uncommitted"
        # The engine is imported from the working tree: say when it differs from the commit.
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "minijinja_py", "grammar"],
            capture_output=True,
            text=True,
            cwd=C.REPO_ROOT,
        ).stdout.strip()
        return rev + ("+dirty" if dirty else "")
    except OSError:
        return "?"


@dataclass
class Results:
    mode: str
    corpus: Corpus
    engines: dict[str, Engine]
    cold: dict = field(default_factory=dict)
    warm: dict = field(default_factory=dict)
    memory: dict = field(default_factory=dict)
    growth: list[GrowthRow] = field(default_factory=list)
    imports: dict = field(default_factory=dict)
    first: dict = field(default_factory=dict)
    process: ProcessResult | None = None
    elapsed: float = 0.0


def summary_table(res: Results) -> str:
    e = res.engines
    mj_on = e["minijinja"].available
    rows = []
    head = "| Measure | minijinja_py | Jinja2 | ours / Jinja2 | per template: median (worst) | Target | Met |"
    sep = "|---|---:|---:|---:|---:|---:|:---:|"
    if mj_on:
        head += " minijinja (Rust) | minijinja / Jinja2 |"
        sep += "---:|---:|"

    def mj_cols(per_tpl: dict, fmt: Callable) -> str:
        if not mj_on:
            return ""
        tm, tj, _ = totals(per_tpl, "minijinja", "jinja2")
        n = sum(1 for d in per_tpl.values() if "minijinja" in d)
        if not n:
            return " n/a | n/a |"
        return f" {fmt(tm)} ({n} tpl) | {fmt_ratio(ratio(tm, tj))} |"

    def timed_row(label: str, per_tpl: dict, target_key: str, fmt=fmt_time) -> None:
        if not per_tpl:
            return
        to, tj, ratios = totals(per_tpl, "ours", "jinja2")
        if not any("ours" in d for d in per_tpl.values()):
            tj = sum(d.get("jinja2", 0.0) for d in per_tpl.values())
            to = None
        r = ratio(to, tj)
        tgt = TARGETS[target_key]
        rows.append(
            f"| {label} | {fmt(to)} | {fmt(tj)} | {fmt_ratio(r)} | {ratio_summary(ratios)} "
            f"| ≤ {tgt:.2f} | {met(r, tgt)} |" + mj_cols(per_tpl, fmt)
        )

    n_tpl = len(res.corpus.templates)
    timed_row(
        f"Cold: new env + compile + first render, sum over {n_tpl} templates", res.cold, "cold"
    )
    n_pairs = res.corpus.agreeing_pairs
    timed_row(f"Warm: render compiled template, sum over {n_pairs} pairs", res.warm, "warm")
    if res.memory:
        mem_rows = {n: d for n, d in res.memory.items()}
        to, tj, ratios = totals(mem_rows, "ours", "jinja2")
        nm = len(mem_rows)
        mo = statistics.median([d["ours"] for d in mem_rows.values() if "ours" in d] or [0])
        mjm = statistics.median([d["jinja2"] for d in mem_rows.values() if "jinja2" in d] or [0])
        has_ours = any("ours" in d for d in mem_rows.values())
        r = ratio(to, tj) if has_ours else None
        rows.append(
            f"| Memory of a compiled template (tracemalloc), median of {nm} | "
            f"{fmt_bytes(mo) if has_ours else 'n/a'} | {fmt_bytes(mjm)} | "
            f"{fmt_ratio(r) + (' (sums)' if r is not None else '')} | {ratio_summary(ratios)} | ≤ {TARGETS['memory']:.2f} | {met(r, TARGETS['memory'])} |"
            + (" not visible | – |" if mj_on else "")
        )
    if res.imports:
        io, ij = res.imports.get("ours"), res.imports.get("jinja2")
        r = ratio(io, ij)
        rows.append(
            f"| Import in a fresh interpreter (`minijinja_py` vs `jinja2.sandbox`), median | "
            f"{fmt_time(io)} | {fmt_time(ij)} | {fmt_ratio(r)} | – | ≤ {TARGETS['import']:.2f} "
            f"| {met(r, TARGETS['import'])} |"
            + (
                f" {fmt_time(res.imports.get('minijinja'))} | "
                f"{fmt_ratio(ratio(res.imports.get('minijinja'), ij))} |"
                if mj_on
                else ""
            )
        )
    if res.growth:
        worst: dict[str, float] = {}
        for row in res.growth:
            g = ratio(row.per_msg.get(10_000), row.per_msg.get(1_000))
            if g is not None:
                worst[row.engine] = max(worst.get(row.engine, 0.0), g)
        go, gj = worst.get("ours"), worst.get("jinja2")
        tgt = TARGETS["growth"]
        ntg = len({row.template for row in res.growth})
        rows.append(
            f"| Growth: per-message time 10k / 1k messages, worst of {ntg} templates | "
            f"{fmt_ratio(go)} | {fmt_ratio(gj)} | – | – | ≤ {tgt:.1f} (ours) | {met(go, tgt)} |"
            + (f" {fmt_ratio(worst.get('minijinja'))} | – |" if mj_on else "")
        )
    if res.first:
        fo, fj = res.first.get("ours"), res.first.get("jinja2")
        rows.append(
            f"| One-time cost of the first template in a process (parser build) | "
            f"{fmt_time(fo)} | {fmt_time(fj)} | {fmt_ratio(ratio(fo, fj))} | – | – | – |"
            + (f" {fmt_time(res.first.get('minijinja'))} | – |" if mj_on else "")
        )
    p = res.process
    if p is not None:
        rows.append(
            f"| Whole process rendering one chat ({p.command or 'CLI'} vs `python -c` Jinja2) | "
            f"{fmt_time(p.ours)} | {fmt_time(p.jinja2)} | {fmt_ratio(ratio(p.ours, p.jinja2))} "
            f"| – | – | – |" + (" – | – |" if mj_on else "")
        )
    return "\n".join([head, sep, *rows])


def growth_table(rows: list[GrowthRow]) -> str:
    labels = {"ours": "minijinja_py", "jinja2": "Jinja2", "minijinja": "minijinja (Rust)"}
    out = [
        "| Template | Engine | µs/msg @10 | @100 | @1,000 | @10,000 | 10k / 1k |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        cells = [f"{row.per_msg[n] * 1e6:.1f}" if n in row.per_msg else "–" for n in GROWTH_SIZES]
        g = ratio(row.per_msg.get(10_000), row.per_msg.get(1_000))
        tail = fmt_ratio(g) + (f" ({row.error})" if row.error else "")
        out.append(
            f"| {row.label} (`{row.template}`) | {labels[row.engine]} | "
            + " | ".join(cells)
            + f" | {tail} |"
        )
    return "\n".join(out)


def per_template_table(res: Results) -> str:
    mj_on = res.engines["minijinja"].available
    head = (
        "| Template | Pairs | Cold ours | Cold Jinja2 | Ratio | Warm ours | Warm Jinja2 | Ratio "
        "| Mem ours | Mem Jinja2 | Ratio |"
    )
    sep = "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    if mj_on:
        head += " Cold minijinja | Warm minijinja | minijinja identical |"
        sep += "---:|---:|---|"
    out = [head, sep]
    for tpl in res.corpus.templates:
        c = res.cold.get(tpl.name, {})
        w = res.warm.get(tpl.name, {})
        m = res.memory.get(tpl.name, {})
        line = (
            f"| {tpl.name} | {len(tpl.contexts)} | {fmt_time(c.get('ours'))} | "
            f"{fmt_time(c.get('jinja2'))} | {fmt_ratio(ratio(c.get('ours'), c.get('jinja2')))} | "
            f"{fmt_time(w.get('ours'))} | {fmt_time(w.get('jinja2'))} | "
            f"{fmt_ratio(ratio(w.get('ours'), w.get('jinja2')))} | {fmt_bytes(m.get('ours'))} | "
            f"{fmt_bytes(m.get('jinja2'))} | {fmt_ratio(ratio(m.get('ours'), m.get('jinja2')))} |"
        )
        if mj_on:
            if res.corpus.mj_ok.get(tpl.name):
                same = f"{res.corpus.mj_identical[tpl.name]}/{len(tpl.contexts)}"
            else:
                same = "fails: " + res.corpus.mj_reason.get(tpl.name, "?").replace("|", "/")
            line += f" {fmt_time(c.get('minijinja'))} | {fmt_time(w.get('minijinja'))} | {same} |"
        out.append(line)
    return "\n".join(out)


def worst_templates(res: Results, k: int = 8) -> str:
    """The templates furthest behind Jinja2, per section: where optimising pays most."""
    out = []
    for title, per_tpl, fmt in (
        ("cold", res.cold, fmt_time),
        ("warm", res.warm, fmt_time),
        ("memory", res.memory, fmt_bytes),
    ):
        rows = [
            (d["ours"] / d["jinja2"], name, d["ours"], d["jinja2"])
            for name, d in per_tpl.items()
            if d.get("ours") and d.get("jinja2")
        ]
        rows.sort(reverse=True)
        if rows:
            cells = ", ".join(f"`{n}` {r:.2f} ({fmt(a)} vs {fmt(b)})" for r, n, a, b in rows[:k])
            out.append(f"- {title}: {cells}")
    if not out:
        return ""
    return "### Highest ours / Jinja2 ratios\n\n" + "\n".join(out)


def report(res: Results, details: bool) -> tuple[str, str]:
    """(printed summary, full document for results.md)."""
    e = res.engines
    co = res.corpus
    versions = [f"Jinja2 {e['jinja2'].version}"]
    if e["ours"].available:
        versions.insert(0, f"minijinja_py {e['ours'].version or '?'} (git {git_rev()})")
    if e["minijinja"].available:
        versions.append(f"minijinja (Rust binding) {e['minijinja'].version}")
    lines = [
        f"Machine: {machine_info()}.  ",
        f"Engines: {', '.join(versions)}. Mode: {res.mode}; "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.  ",
        f"Corpus: {co.total_templates} templates, {co.total_pairs} pairs, {co.ref_ok_pairs} render "
        f"in Jinja2; timed: {len(co.templates)} templates, {co.agreeing_pairs} pairs whose output "
        + (
            "is identical in both engines."
            if e["ours"].available
            else "Jinja2 renders (ours not available: " + e["ours"].reason + ")."
        ),
        "Ratios are ours / Jinja2: lower is better. Medians of interleaved repeats; "
        + (
            "elapsed wall-clock time."
            if CLOCK.name == "perf_counter"
            else "CPU time of the process (of the child for subprocess rows), not wall time."
        ),
        "",
        summary_table(res),
    ]
    if not e["minijinja"].available:
        lines += ["", f"minijinja (Rust) skipped: {e['minijinja'].reason}."]
    else:
        n_mj = sum(res.corpus.mj_ok.values())
        lines += [
            "",
            f"minijinja (Rust) is timed on the {n_mj} templates where it renders every timed pair "
            "(it has no `{% generation %}` tag); its output is not always identical, see the "
            "per-template table. Its memory is outside tracemalloc's view.",
        ]
    if res.process is not None and res.process.ours is None:
        lines += ["", f"Whole process, ours skipped: {res.process.note}."]
    summary = "\n".join(lines)
    growth = (
        "### Growth with conversation length\n\n" + growth_table(res.growth) if res.growth else ""
    )
    per_tpl = "### Per template\n\n" + per_template_table(res)
    worst = worst_templates(res)
    doc_parts = ["## Benchmark results", "", summary, ""]
    if growth:
        doc_parts += [growth, ""]
    if worst:
        doc_parts += [worst, ""]
    doc_parts += [
        # markdown="1": the documentation site renders the table inside (md_in_html); GitHub ignores it.
        "<details markdown=\"1\"><summary>Per-template figures</summary>",
        "",
        per_tpl,
        "",
        "</details>",
        "",
        f"Generated by `python -m benchmarks{' --quick' if res.mode == 'quick' else ''} --write` "
        f"in {res.elapsed:.0f} s.",
    ]
    printed = summary + ("\n\n" + growth if growth else "")
    if details:
        printed += "\n\n" + per_tpl
    return printed, "\n".join(doc_parts) + "\n"


def headline(raw: dict) -> dict[str, float]:
    """Our side's headline figures from a raw dump, restricted to what both runs can share."""
    out: dict[str, float] = {}
    for key in ("cold", "warm"):
        per = raw.get(key) or {}
        out[key] = {n: d["ours"] for n, d in per.items() if "ours" in d}
    mem = [d["ours"] for d in (raw.get("memory") or {}).values() if "ours" in d]
    if mem:
        out["memory (median)"] = statistics.median(mem)
    for key, src in (("import", "imports"), ("first template", "first_template")):
        if (raw.get(src) or {}).get("ours") is not None:
            out[key] = raw[src]["ours"]
    for row in raw.get("growth") or []:
        if row["engine"] == "ours" and "1000" in {str(k) for k in row["per_msg"]}:
            per_msg = {str(k): v for k, v in row["per_msg"].items()}
            out[f"growth {row['template']} @1k per msg"] = per_msg["1000"]
    return out


def compare(before: dict, after: dict) -> str:
    """Then-vs-now table of our figures; per-template sections are summed over common templates."""
    b, a = headline(before), headline(after)
    rows = ["| Ours | baseline | now | now / baseline |", "|---|---:|---:|---:|"]
    for key in a:
        if key not in b:
            continue
        x, y = b[key], a[key]
        if isinstance(y, dict):
            common = set(x) & set(y)
            if not common:
                continue
            x, y = sum(x[n] for n in common), sum(y[n] for n in common)
            key = f"{key} (sum of {len(common)} templates)"
        fmt = fmt_bytes if key.startswith("memory") else fmt_time
        rows.append(f"| {key} | {fmt(x)} | {fmt(y)} | {fmt_ratio(ratio(y, x))} |")
    note = ""
    # Early dumps have no "clock" key: warn only when both runs name different clocks.
    if before.get("clock") and before.get("clock") != after.get("clock"):
        note = "\n\nThe two runs used different clocks: compare with care."
    return "### Against the baseline\n\n" + "\n".join(rows) + note


# ---------------------------------------------------------------------------- main

SECTIONS = ("cold", "warm", "memory", "growth", "import", "first", "process")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="few templates, few repeats (< 1 min)")
    ap.add_argument("--write", action="store_true", help="also write benchmarks/results.md")
    ap.add_argument("--details", action="store_true", help="also print the per-template table")
    ap.add_argument("--json", metavar="PATH", help="dump raw figures as JSON")
    ap.add_argument(
        "--baseline",
        metavar="PATH",
        help="a --json file of an earlier run: also print our figures then vs now",
    )
    ap.add_argument(
        "--wall", action="store_true", help="time elapsed wall clock instead of CPU time"
    )
    ap.add_argument(
        "--template",
        action="append",
        default=[],
        metavar="SUBSTR",
        help="only corpus templates whose name contains SUBSTR (repeatable)",
    )
    ap.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"comma-separated sections to run (default all: {','.join(SECTIONS)})",
    )
    args = ap.parse_args(argv)
    sections = {s.strip() for s in args.only.split(",") if s.strip()}
    unknown = sections - set(SECTIONS)
    if unknown:
        ap.error(f"unknown section(s): {', '.join(sorted(unknown))}")
    if not C.corpus_available():
        log(f"corpus not found at {C.CORPUS_DIR} (set MINIJINJA_PY_CORPUS)")
        return 2
    mode = QUICK if args.quick else FULL
    CLOCK.use("perf_counter" if args.wall else "process_time")
    started = time.perf_counter()
    engines = {e.key: e for e in all_engines()}
    if not engines["jinja2"].available:
        log(engines["jinja2"].reason)
        return 2
    for e in engines.values():
        log(f"{e.label}: " + (f"available {e.version}" if e.available else f"SKIPPED: {e.reason}"))

    log("agreement pass (which pairs render identically)")
    corpus = agreement(engines, mode, args.template)
    log(f"  {len(corpus.templates)} templates, {corpus.agreeing_pairs} pairs agree")
    res = Results(mode.name, corpus, engines)
    warm_up(engines)
    log(f"  done ({time.perf_counter() - started:.0f} s)")
    steps = (
        ("first", "first template in a fresh process (parser build)", measure_first_template),
        ("cold", "cold", lambda es, m: measure_cold(es, corpus, m)),
        ("warm", "warm", lambda es, m: measure_warm(es, corpus, m)),
        ("growth", "growth", lambda es, m: measure_growth(es, corpus, m)),
        ("memory", "memory", lambda es, m: measure_memory(es, corpus, m)),
        ("import", "import time", measure_imports),
        ("process", "whole process", measure_process),
    )
    attr = {"first": "first", "import": "imports"}
    for key, title, fn in steps:
        if key not in sections:
            continue
        t0 = time.perf_counter()
        log(title)
        setattr(res, attr.get(key, key), fn(engines, mode))
        log(f"  done in {time.perf_counter() - t0:.0f} s")
    res.elapsed = time.perf_counter() - started
    printed, doc = report(res, args.details)
    print(printed)
    if args.write:
        (HERE / "results.md").write_text(doc, encoding="utf-8")
        log(f"wrote {HERE / 'results.md'}")
    raw = {
        "mode": res.mode,
        "machine": machine_info(),
        "clock": CLOCK.name,
        "cold": res.cold,
        "warm": res.warm,
        "memory": res.memory,
        "imports": res.imports,
        "first_template": res.first,
        "growth": [vars(r) for r in res.growth],
        "process": vars(res.process) if res.process else None,
    }
    if args.baseline:
        print("\n\n" + compare(json.loads(Path(args.baseline).read_text(encoding="utf-8")), raw))
    if args.json:
        Path(args.json).write_text(json.dumps(raw, indent=1), encoding="utf-8")
    log(f"done in {res.elapsed:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
