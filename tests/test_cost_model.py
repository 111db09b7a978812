"""The cost model: work, memory and depth are paid for where they happen.  Each attack runs in
its own process under a 1 GiB address-space cap (a crash there fails one test, not the run)
and must end in the exact error named, or render harmlessly."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import minijinja_py as mj
from minijinja_py import Limits

ROOT = Path(__file__).resolve().parents[1]
MEMORY_CAP = 1 << 30

RUNNER = textwrap.dedent(
    """
    import json, sys
    sys.path.insert(0, sys.argv[1])
    case = json.loads(sys.argv[2])
    sys.setrecursionlimit(case["recursion_limit"])
    import minijinja_py as mj
    context = {}
    exec(case["setup"], {}, context)
    env = mj.chat_environment()
    try:
        out = env.from_string(case["source"]).render(context)
        result = {"kind": "ok", "message": out[:200]}
    except mj.TemplateError as error:
        result = {"kind": type(error).__name__, "message": str(error.message)[:300]}
    except BaseException as error:
        result = {"kind": "bare " + type(error).__name__, "message": str(error)[:200]}
    print(json.dumps(result))
    """
)


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_isolated(source: str, setup: str = "", recursion_limit: int = 1000) -> dict:
    case = json.dumps({"source": source, "setup": setup, "recursion_limit": recursion_limit})
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, str(ROOT), case],
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=_cap_memory,
    )
    assert proc.returncode == 0, f"the process died: {proc.returncode} {proc.stderr[-500:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


BIG = "big = 'x' * 40_000_000\nlst = [big] * 1000"
DEEP = (
    "{% set ns = namespace(t=()) %}{% for i in range(300) %}{% for j in range(500) %}"
    "{% set ns.t = (ns.t,) %}{% endfor %}{% endfor %}"
)
STEPS = "the render exceeded max_steps (200000)"
DEEP_VALUE = "a value nested deeper than max_recursion (100)"
PRINTED_TOO_BIG = (
    "printing a structure of more than 10000000 characters exceeds max_string (10000000)"
)

# (id, setup, template, error class or "ok", exact message or output)
ATTACKS = [
    # work that used to cost nothing
    ("set-statements", "", "{% for i in range(100000) %}{% for j in range(500) %}"
     "{% set x = 1 %}{% endfor %}{% endfor %}", "LimitError", STEPS),
    ("if-statements", "", "{% for i in range(100000) %}{% for j in range(500) %}"
     "{% if false %}{% endif %}{% endfor %}{% endfor %}", "LimitError", STEPS),
    ("for-if-rejects", "", "{% for i in range(100000) %}{% for j in range(100000) if false %}"
     "{% endfor %}{% endfor %}", "LimitError", STEPS),
    ("startswith-tuple", "d = {'t': tuple(map(str, range(1000000)))}",
     "{% for i in range(1000) %}{{ 'a'.startswith(d.t) }}{% endfor %}", "LimitError",
     "the render exceeded its budget of 200003 steps (max_steps (200000) + max_steps_growth"
     " (3) x 1**2 for a context of 1 items)"),
    ("strip-chars", "s = 'x' * 10_000_000",
     "{% for i in range(100000) %}{{ 'a'.strip(s) }}{% endfor %}", "LimitError", STEPS),
    ("join-list", "",
     "{% set l = range(100000)|list %}{% for i in range(100000) %}{{ ''.join(l|map('string')) }}"
     "{% endfor %}", "LimitError", STEPS),
    ("cycle-star", "",
     "{% set l = range(100000)|list %}{% for i in range(100000) %}{{ loop.cycle(*l) }}"
     "{% endfor %}", "LimitError", STEPS),
    ("macro-dstar", "",
     "{% set d = dict.fromkeys(range(100000)|map('string')) %}"
     "{% macro m() %}{{ kwargs|length }}{% endmacro %}"
     "{% for i in range(100000) %}{{ m(**d) }}{% endfor %}", "LimitError", STEPS),
    ("slice-count", "", "{{ []|slice(10000000)|list|length }}", "LimitError",
     "a list of 10000000 items exceeds max_items (1000000)"),
    ("batch-fill", "", "{{ [1]|batch(10000000, 0)|list|length }}", "LimitError",
     "a list of 10000000 items exceeds max_items (1000000)"),
    ("sum-lists", "", "{{ ([[1] * 100] * 100000)|sum(start=[])|length }}", "LimitError", STEPS),
    # (a long word is matched in linear time now, and charged as escaped: rendered)
    ("urlize-long-word", "", "{{ ('a.' * 20000)|urlize|length }}", "ok", "40000"),
    ("round-huge-digits", "", "{{ 1|round(-10000000) }}", "LimitError",
     "rounding to -10000000 digits would exceed max_int_bits (65536)"),
    ("int-base-16", "", "{{ ('f' * 2000000)|int(base=16) }}", "LimitError",
     "an integer of 2000000 digits in base 16 would exceed max_int_bits (65536)"),
    ("strftime-format", "", "{{ strftime_now('%c' * 5000000)|length }}", "LimitError",
     "a strftime format of 10000000 characters could exceed max_string (10000000)"),
    ("folded-constant-copies", "",
     "{% for i in range(100000) %}{{ ([[0] * 1000] * 1000)|length }}{% endfor %}", "LimitError",
     STEPS),
    # memory totals
    ("upper-of-list", BIG, "{{ lst|upper }}", "LimitError", PRINTED_TOO_BIG),
    ("percent-list", BIG, "{{ '%s' % (lst,) }}", "LimitError", PRINTED_TOO_BIG),
    ("format-list", BIG, "{{ '{}'.format(lst) }}", "LimitError", PRINTED_TOO_BIG),
    ("namespace-list", BIG, "{% set ns = namespace(a=lst) %}{{ ns }}", "LimitError",
     PRINTED_TOO_BIG),
    ("raise-exception-list", BIG, "{{ raise_exception(lst) }}", "LimitError", PRINTED_TOO_BIG),
    ("percent-widths-summed", "", "{{ '%9000000s%9000000s' % ('a', 'b') }}", "LimitError",
     "a string of 18000000 characters exceeds max_string (10000000)"),
    ("format-widths-summed", "", "{{ '{:9000000}{:9000000}'.format('a', 'b') }}", "LimitError",
     "a string of 18000020 characters exceeds max_string (10000000)"),
    ("map-center", "", "{{ range(1000)|map('center', 10000000)|join|length }}", "LimitError",
     STEPS),
    ("concat-many-strings", "",
     "{% set ns = namespace(l=[]) %}{% for i in range(100) %}"
     "{% set ns.l = ns.l + ['x' * (9000000 + i)] %}{% endfor %}{{ ns.l|length }}", "LimitError",
     STEPS),
    # depth: crashes of the process before
    ("deep-tuple-is-test", "", DEEP + "{{ ns.t is test }}", "LimitError", DEEP_VALUE),
    ("deep-tuple-map", "", DEEP + "{{ [1]|map(ns.t)|list }}", "LimitError", DEEP_VALUE),
    # (a groupby result holds its key twice, as the grouper and inside its list: the value
    # doubles on every level, and the walk of grouping it runs out of steps before its depth
    # reaches max_recursion)
    ("deep-groupby-key", "",
     "{% set ns = namespace(t=[]) %}{% for i in range(300) %}{% for j in range(500) %}"
     "{% set ns.t = [{'a': ns.t}]|groupby('a') %}{% endfor %}{% endfor %}{{ {ns.t[0]: 1} }}",
     "LimitError", STEPS),
    ("deep-groupby-unique", "",
     "{% set ns = namespace(t=[]) %}{% for i in range(300) %}{% for j in range(500) %}"
     "{% set ns.t = [{'a': ns.t}]|groupby('a') %}{% endfor %}{% endfor %}{{ ns.t|unique|list }}",
     "LimitError", STEPS),
    ("deep-dict-pairs-reverse", "",
     DEEP + "{{ dict([(ns.t, 1)]|reverse) }}", "LimitError", DEEP_VALUE),
    ("deep-set-chain", "", "{% set x = () %}" + "{% set x = (x,) %}" * 150, "LimitError",
     DEEP_VALUE),
    ("deep-batch-chain", "", "{% set x = [1] %}" + "{% set x = x|batch(1)|list %}" * 150,
     "LimitError", DEEP_VALUE),
]


@pytest.mark.parametrize(
    "name, setup, source, kind, message", ATTACKS, ids=[a[0] for a in ATTACKS]
)
def test_attack(name, setup, source, kind, message):
    result = run_isolated(source, setup)
    assert (result["kind"], result["message"]) == (kind, message)


# With a host that raised Python's recursion limit, nothing may reach the C stack's end.
RAISED = [
    ("deep-list-printed", "deep = []\nfor _ in range(200000): deep = [deep]", "{{ deep }}",
     DEEP_VALUE),
    ("deep-list-tojson", "deep = []\nfor _ in range(200000): deep = [deep]",
     "{{ deep|tojson }}", DEEP_VALUE),
    ("deep-list-compared", "deep = []\nfor _ in range(200000): deep = [deep]",
     "{{ deep == deep2 }}".replace("deep2", "[deep]"), DEEP_VALUE),
    ("deep-list-sorted", "deep = []\nfor _ in range(200000): deep = [deep]",
     "{{ [deep, deep]|sort }}", DEEP_VALUE),
    ("macro-default-recursion", "", "{% macro m(a=m()) %}{% endmacro %}{{ m() }}",
     "macro calls nest deeper than max_recursion (100)"),
    ("macro-recursion", "", "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
     "macro calls nest deeper than max_recursion (100)"),
    ("deep-namespace-printed", "",
     "{% set ns = namespace(x=0) %}{% for i in range(150) %}"
     "{% set ns.x = namespace(a=ns.x) %}{% endfor %}{{ ns.x }}", DEEP_VALUE),
]


@pytest.mark.parametrize("name, setup, source, message", RAISED, ids=[a[0] for a in RAISED])
def test_safe_with_a_raised_recursion_limit(name, setup, source, message):
    result = run_isolated(source, setup, recursion_limit=10**6)
    assert (result["kind"], result["message"]) == ("LimitError", message)


def test_deep_macro_bodies_are_counted_not_read_from_the_stack():
    """Each macro level keeps its body's depth of template code open: the engine counts it
    and stops at the same place whatever Python's recursion limit."""
    inner = "{% if true %}" * 60 + "{{ f() }}" + "{% endif %}" * 60
    source = "{% macro f() %}" + inner + "{% endmacro %}{{ f() }}"
    for limit in (1000, 10**6):
        result = run_isolated(source, recursion_limit=limit)
        assert result == {
            "kind": "LimitError",
            "message": "macro calls nest deeper than the engine evaluates (400 levels of"
            " template code) before reaching max_recursion (100)",
        }


def test_a_default_argument_recursing_is_a_macro_level():
    env = mj.Environment(limits=Limits(max_recursion=5))
    with pytest.raises(mj.LimitError, match=r"^macro calls nest deeper than max_recursion \(5\)"):
        env.from_string("{% macro m(a=m()) %}{% endmacro %}{{ m() }}").render()


# ------------------------------------------------------------------ memory


def test_memory_budget_counts_what_the_render_makes():
    env = mj.Environment(limits=Limits(max_memory=5_000_000))
    source = "{% set ns = namespace(s='') %}{% for i in range(n) %}{% set ns.s = ns.s ~ ('x' * 100000) %}{% endfor %}{{ ns.s|length }}"
    # 20 pieces: 100 KB + 200 KB + ... + 2 MB made, 21 MB in all.
    with pytest.raises(mj.LimitError, match=r"^the render exceeded max_memory \(5000000\)"):
        env.from_string(source).render(n=20)
    assert env.from_string(source).render(n=5) == "500000"


def test_memory_budget_grows_with_the_context():
    env = mj.Environment(limits=Limits(max_memory=1_000_000, max_memory_growth=1))
    template = env.from_string("{{ ('x' * 1500000)|length }}")
    with pytest.raises(mj.LimitError, match=r"^the render exceeded max_memory \(1000000\)"):
        template.render()
    assert template.render(items=list(range(1000))) == "1500000"  # 1 MB + 1 x 1000**2
    with pytest.raises(
        mj.LimitError,
        match=r"^the render exceeded its memory budget of 1010000 bytes \(max_memory \(1000000\)"
        r" \+ max_memory_growth \(1\) x 100\*\*2 for a context of 100 items\)",
    ):
        template.render(items=list(range(100)))


# ------------------------------------------------------------------ compile


def test_max_source():
    env = mj.Environment(limits=Limits(max_source=100))
    assert env.from_string("x" * 100).render() == "x" * 100
    with pytest.raises(mj.LimitError) as caught:
        env.from_string("x" * 101)
    assert caught.value.message == "a template source of 101 characters exceeds max_source (100)"
    assert (caught.value.lineno, caught.value.colno) == (1, 1)


def test_parsing_a_long_body_is_linear():
    """80,000 statements in one body: the parser used to copy the body's list at each one."""
    import gc
    import time

    from minijinja_py.syntax.parser import parse

    env = mj.Environment()
    timings = []
    for count in (10_000, 40_000):
        sources = "{% set x = 1 %}" * count
        best = float("inf")
        # (the best of three, the collector off: its full passes over a growing heap of nodes
        # grow faster than the parse, and a busy host's slowest run says nothing of the parser)
        for _ in range(3):
            gc.disable()
            try:
                start = time.process_time()
                parse(sources, env._lex_options)
                best = min(best, time.process_time() - start)
            finally:
                gc.enable()
        timings.append(best)
    # (a ratio, not a time: four times the statements, well under sixteen times the work)
    assert timings[1] < 8 * timings[0] + 0.5


# ------------------------------------------------------------------ nothing survives a render


def test_break_and_continue_raise_fresh_exceptions():
    env = mj.chat_environment()
    template = env.from_string(
        "{% for i in range(3) %}{% if i == 1 %}{% continue %}{% endif %}{{ i }}"
        "{% if i == 2 %}{% break %}{% endif %}{% endfor %}"
    )
    assert template.render() == "02"
    from minijinja_py.run import frames

    assert not hasattr(frames, "BREAK") and not hasattr(frames, "CONTINUE")


MEMORY_PROBE = textwrap.dedent(
    """
    import gc, sys, tracemalloc
    sys.path.insert(0, sys.argv[1])
    import minijinja_py as mj
    env = mj.chat_environment()
    template = env.from_string(
        "{% for m in messages %}{% if loop.index0 == 1 %}{% continue %}{% endif %}"
        "{{ m|tojson(indent=i) }}{% if loop.index0 == 2 %}{% break %}{% endif %}{% endfor %}"
        "{% generation %}{{ i }}{% endgeneration %}"
    )
    messages = [{"role": "user", "content": "hi"}] * 4
    def renders(start, stop):
        # (a new negative indent now and then: the encoders' cache must not keep them)
        for n in range(start, stop):
            indent = -(n % 5000) if n % 50 == 0 else n % 3
            if n % 2:
                template.render(messages=messages, i=indent)
            else:
                template.render_with_spans(messages=messages, i=indent)
    # (warmed up long enough for the interpreter's own free lists and caches to settle: on
    # Python 3.10 they still grew by 3 KiB, once, between the 2,000th and the 30,000th render)
    renders(0, 30_000)
    tracemalloc.start()
    renders(30_000, 31_000)
    gc.collect()  # (json's encoders make reference cycles, freed by the collector)
    first = tracemalloc.get_traced_memory()[0]
    # (20,000 renders: a leak of one small object per render, or of one per fifty (the
    # negative indents), keeps several times the bound below)
    renders(31_000, 51_000)
    gc.collect()
    print(tracemalloc.get_traced_memory()[0] - first)
    """
)


def test_memory_after_many_renders_is_memory_after_a_thousand():
    proc = subprocess.run(
        [sys.executable, "-c", MEMORY_PROBE, str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-500:]
    grown = int(proc.stdout.strip())
    assert grown < 2048, f"{grown} bytes kept by 20,000 more renders"  # (a few stray frees)


def test_generation_spans_in_a_loop():
    env = mj.chat_environment()
    template = env.from_string(
        "{% for i in range(3) %}<{% generation %}{{ i }}{% endgeneration %}>{% endfor %}"
    )
    assert template.render_with_spans() == ("<0><1><2>", [(1, 2), (4, 5), (7, 8)])


def test_a_block_calling_itself_is_a_counted_level():
    env = mj.Environment()
    assert env.from_string("{% block a %}x{% endblock %}{{ self.a() }}").render() == "xx"
    with pytest.raises(
        mj.LimitError,
        match=r"^block calls nest deeper than the engine evaluates \(400 levels of template"
        r" code\) before reaching max_recursion \(100\)",
    ):
        env.from_string("{% block a %}{{ self.a() }}{% endblock %}").render()
