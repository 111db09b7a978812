"""Denial of service: every attack stops quickly with a LimitError (or a TemplateSyntaxError
for nesting) naming the limit and its value, inside a subprocess capped at 1 GiB of address
space, so that a failure here cannot take the test run down with it."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import minijinja_py as mj
from minijinja_py import Limits

ROOT = Path(__file__).resolve().parents[1]
# (appended: the compiled build's suite imports minijinja_py from where it is installed)
sys.path.append(str(ROOT))
from conformance.corpus import corpus_dir  # noqa: E402

MEMORY_CAP = 1 << 30
# CPU seconds of the whole subprocess (starting Python included), enforced by the kernel with
# RLIMIT_CPU: a busy machine stretches wall-clock time, not this.  The wall clock is only the
# backstop for a subprocess that blocks, ten times larger.
CPU_SECONDS = 20
BACKSTOP = 10 * CPU_SECONDS

RUNNER = textwrap.dedent(
    """
    import json, sys, time
    sys.path.insert(0, sys.argv[1])
    import minijinja_py as mj
    case = json.loads(sys.argv[2])
    env = mj.chat_environment() if case["env"] == "chat" else mj.Environment()
    start = time.perf_counter()
    try:
        out = env.from_string(case["source"]).render(case["context"])
        result = {"kind": "ok", "message": out[:200], "length": len(out)}
    except mj.TemplateError as error:
        result = {"kind": type(error).__name__, "message": error.message}
    except BaseException as error:  # what must never happen: a bare Python exception
        result = {"kind": "bare " + type(error).__name__, "message": str(error)[:200]}
    result["seconds"] = time.perf_counter() - start
    print(json.dumps(result))
    """
)


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS + 1))


def run_isolated(source: str, context: dict | None = None, env: str = "chat") -> dict:
    case = json.dumps({"source": source, "context": context or {}, "env": env})
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER, str(ROOT), case],
        capture_output=True,
        text=True,
        timeout=BACKSTOP,
        preexec_fn=_cap_memory,
    )
    wall = time.perf_counter() - start
    assert proc.returncode != -signal.SIGXCPU, f"the render ran past {CPU_SECONDS} s of CPU time"
    assert proc.returncode == 0, (
        f"the render crashed the process: {proc.returncode} {proc.stderr[-500:]}"
    )
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    result["wall"] = wall
    return result


def ns_loop(body: str, times: int = 100_000) -> str:
    return (
        "{% set ns = namespace(x=x0) %}"
        f"{{% for i in range({times}) %}}{{% set ns.x = {body} %}}{{% endfor %}}"
    )


# (id, template, context, error class, exact message)
STEPS = "the render exceeded max_steps (200000)"
DEEP_VALUE = "a value nested deeper than max_recursion (100)"
NESTING = "the template nests deeper than max_nesting (100)"


def too_long(n: int) -> str:
    return f"a string of {n} characters exceeds max_string (10000000)"


ATTACKS = [
    # steps
    (
        "loops",
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
        {},
        "LimitError",
        STEPS,
    ),
    (
        "loops-3",
        "{% for i in range(100000) %}{% for j in range(100000) %}{% for k in range(100000) %}x{% endfor %}{% endfor %}{% endfor %}",
        {},
        "LimitError",
        STEPS,
    ),
    (
        "loop-over-loop-var",
        "{% for a in range(99999) %}{% for b in range(99999) %}{{ a }}{% endfor %}{% endfor %}",
        {},
        "LimitError",
        STEPS,
    ),
    (
        "macro-calls",
        "{% macro f() %}{% endmacro %}{% for i in range(100000) %}{% for j in range(100) %}{{ f() }}{% endfor %}{% endfor %}",
        {},
        "LimitError",
        STEPS,
    ),
    (
        "sort-big-in-loop",
        "{% set big = range(100000)|list %}{% for i in range(100000) %}{{ big|sort|length }}{% endfor %}",
        {},
        "LimitError",
        STEPS,
    ),
    (
        "compare-big-in-loop",
        "{% set a = range(100000)|list %}{% set b = range(100000)|list %}{% for i in range(100000) %}{{ a == b }}{% endfor %}",
        {},
        "LimitError",
        STEPS,
    ),
    (
        "search-big-in-loop",
        "{% set s = 'ab' * 4000000 %}{% for i in range(100000) %}{{ s.count('b') }}{% endfor %}",
        {},
        "LimitError",
        STEPS,
    ),
    (
        "in-big-in-loop",
        "{% set a = range(100000)|list %}{% for i in range(100000) %}{{ -1 in a }}{% endfor %}",
        {},
        "LimitError",
        STEPS,
    ),
    ("wordwrap-long-word", "{{ ('a' * 1000000)|wordwrap(1)|length }}", {}, "LimitError", STEPS),
    ("batch-of-big-string", "{{ ('a' * 10000000)|batch(1)|list|length }}", {}, "LimitError", STEPS),
    (
        "map-over-big-string",
        "{{ ('a' * 10000000)|map('upper')|list|length }}",
        {},
        "LimitError",
        STEPS,
    ),
    ("title-of-many-words", "{{ ('a ' * 5000000)|title|length }}", {}, "LimitError", STEPS),
    ("pprint-nested", "{{ ([[0] * 1000] * 1000)|pprint|length }}", {}, "LimitError", STEPS),
    (
        "slice-copies-in-loop",
        "{% set b = range(100000)|list %}{% for i in range(100000) %}{{ b[1:]|length }}{% endfor %}",
        {},
        "LimitError",
        STEPS,
    ),
    (
        "dict-rebuilt-in-loop",
        "{% set ns = namespace(d={}) %}{% for i in range(100000) %}{% set ns.d = dict(ns.d, **{i|string: i}) %}{% endfor %}",
        {},
        "LimitError",
        STEPS,
    ),
    (
        "many-conversions",
        "{{ ('%s' * 1000000) % ((('a' * 100),) * 1000000)|length }}",
        {},
        "LimitError",
        STEPS,
    ),
    (
        "print-shared-big",
        "{{ [('a' * 1000000)] * 1000 }}",
        {},
        "LimitError",
        "printing a structure of more than 10000000 characters exceeds max_string (10000000)",
    ),
    (
        "tojson-shared-big",
        "{{ ([('a' * 1000000)] * 1000)|tojson|length }}",
        {},
        "LimitError",
        "printing a structure of more than 10000000 characters exceeds max_string (10000000)",
    ),
    # output
    (
        "output",
        "{% set x = 'x' * 10000000 %}{% for i in range(1000) %}{{ x }}{% endfor %}",
        {},
        "LimitError",
        "the output exceeded max_output (50000000)",
    ),
    # recursion: macros, recursive loops, data
    (
        "macro-recursion",
        "{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}",
        {},
        "LimitError",
        "macro calls nest deeper than max_recursion (100)",
    ),
    (
        "macro-recursion-deep-frames",
        "{% macro f(n) %}{% for a in [1] %}{% if 1 %}{% with %}{% filter upper %}{% for b in [1] %}{% if 1 %}{% set c %}{{ f(n + 1) }}{% endset %}{{ c }}{% endif %}{% endfor %}{% endfilter %}{% endwith %}{% endif %}{% endfor %}{% endmacro %}{{ f(0) }}",
        {},
        "LimitError",
        None,
    ),
    (
        "caller-recursion",
        "{% macro f() %}{% call f() %}x{% endcall %}{{ caller() }}{% endmacro %}{{ f() }}",
        {},
        "LimitError",
        "macro calls nest deeper than max_recursion (100)",
    ),
    (
        "recursive-loop",
        "{% for x in [[1]] recursive %}{{ loop([[x]]) }}{% endfor %}",
        {},
        "LimitError",
        DEEP_VALUE,
    ),
    (
        "deep-list-printed",
        ns_loop("[ns.x]", 3000) + "{{ ns.x }}",
        {"x0": []},
        "LimitError",
        DEEP_VALUE,
    ),
    (
        "deep-list-tojson",
        ns_loop("[ns.x]", 3000) + "{{ ns.x|tojson }}",
        {"x0": []},
        "LimitError",
        DEEP_VALUE,
    ),
    (
        "deep-list-pprint",
        ns_loop("[ns.x]", 3000) + "{{ ns.x|pprint }}",
        {"x0": []},
        "LimitError",
        DEEP_VALUE,
    ),
    (
        "deep-list-string",
        ns_loop("[ns.x]", 3000) + "{{ ns.x|string|length }}",
        {"x0": []},
        "LimitError",
        DEEP_VALUE,
    ),
    (
        "deep-list-compared",
        ns_loop("[ns.x]", 3000) + "{{ ns.x == [ns.x] }}",
        {"x0": []},
        "LimitError",
        DEEP_VALUE,
    ),
    (
        "deep-dict-printed",
        ns_loop("{'a': ns.x}", 3000) + "{{ ns.x }}",
        {"x0": {}},
        "LimitError",
        DEEP_VALUE,
    ),
    (
        "deep-namespace-printed",
        ns_loop("namespace(a=ns.x)", 5000) + "{{ ns.x }}",
        {"x0": 0},
        "LimitError",
        DEEP_VALUE,
    ),
    # a chain 60,000 deep (150,000 crash CPython's unguarded recursive hash on an 8 MiB stack)
    (
        "deep-tuple-long-chain",
        "{% set ns = namespace(x=()) %}{% for i in range(300) %}{% for j in range(200) %}"
        "{% set ns.x = (ns.x,) %}{% endfor %}{% endfor %}{{ {ns.x: 1} }}",
        {},
        "LimitError",
        DEEP_VALUE,
    ),
    (
        "deep-tuple-dict-key",
        ns_loop("(ns.x,)", 150) + "{{ {ns.x: 1} }}",
        {"x0": []},
        "LimitError",
        DEEP_VALUE,
    ),
    (
        "deep-tuple-in-dict",
        ns_loop("(ns.x,)", 150) + "{{ ns.x in {} }}",
        {"x0": []},
        "LimitError",
        DEEP_VALUE,
    ),
    (
        "deep-tuple-get",
        ns_loop("(ns.x,)", 150) + "{{ {}.get(ns.x) }}",
        {"x0": []},
        "LimitError",
        DEEP_VALUE,
    ),
    (
        "deep-tuple-subscript",
        ns_loop("(ns.x,)", 150) + "{{ {}[ns.x] }}",
        {"x0": []},
        "LimitError",
        DEEP_VALUE,
    ),
    (
        "deep-tuple-is-in",
        ns_loop("(ns.x,)", 150) + "{{ ns.x is in {} }}",
        {"x0": []},
        "LimitError",
        DEEP_VALUE,
    ),
    # sizes of strings, lists and integers
    ("str-times", "{{ 'a' * 10**10 }}", {}, "LimitError", too_long(10**10)),
    ("str-times-huge", '{{ "x" * (2**62) }}', {}, "LimitError", too_long(2**62)),
    (
        "list-times",
        "{{ [0] * 10**12 }}",
        {},
        "LimitError",
        "a list of 1000000000000 items exceeds max_items (1000000)",
    ),
    (
        "tuple-times",
        "{{ (1,) * 10**10 }}",
        {},
        "LimitError",
        "a list of 10000000000 items exceeds max_items (1000000)",
    ),
    (
        "list-of-range-times",
        "{{ (range(99999)|list) * 99999 }}",
        {},
        "LimitError",
        "a list of 9999800001 items exceeds max_items (1000000)",
    ),
    (
        "pow",
        "{{ 2 ** 100000000 }}",
        {},
        "LimitError",
        "a power of 100000000 would exceed max_int_bits (65536)",
    ),
    (
        "pow-twice",
        "{{ (2 ** 65000) ** 2 }}",
        {},
        "LimitError",
        "a power of 2 would exceed max_int_bits (65536)",
    ),
    (
        "product",
        "{% set a = 10**10000 %}{{ a * a * a * a * a * a * a }}",
        {},
        "LimitError",
        "the product would exceed max_int_bits (65536)",
    ),
    (
        "double-tilde",
        "{% set ns = namespace(s='a') %}{% for i in range(100) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
        {},
        "LimitError",
        too_long(16777216),
    ),
    (
        "double-plus",
        "{% set ns = namespace(s='a') %}{% for i in range(100) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
        {},
        "LimitError",
        too_long(16777216),
    ),
    (
        "double-list",
        "{% set ns = namespace(s=[1]) %}{% for i in range(100) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
        {},
        "LimitError",
        "a list of 1048576 items exceeds max_items (1000000)",
    ),
    ("center", "{{ 'a'|center(10**10) }}", {}, "LimitError", too_long(10**10)),
    ("indent", "{{ 'a'|indent(10**10) }}", {}, "LimitError", too_long(10**10)),
    ("ljust", "{{ 'a'.ljust(10**10) }}", {}, "LimitError", too_long(10**10)),
    ("rjust", "{{ 'a'.rjust(10**10) }}", {}, "LimitError", too_long(10**10)),
    ("zfill", "{{ 'a'.zfill(10**10) }}", {}, "LimitError", too_long(10**10)),
    ("str-center", "{{ 'a'.center(10**10) }}", {}, "LimitError", too_long(10**10)),
    (
        "format-width",
        "{{ '{:10000000000}'.format(1) }}",
        {},
        "LimitError",
        "a format width of 10000000000 exceeds max_string (10000000)",
    ),
    (
        "format-nested-width",
        "{{ '{:>{w}}'.format(1, w=10**10) }}",
        {},
        "LimitError",
        "a format width of 10000000000 exceeds max_string (10000000)",
    ),
    (
        "percent-width",
        "{{ '%10000000000d' % 1 }}",
        {},
        "LimitError",
        "a format width of 10000000000 exceeds max_string (10000000)",
    ),
    (
        "percent-star",
        "{{ '%*d' % (10**10, 1) }}",
        {},
        "LimitError",
        "a format width of 10000000000 exceeds max_string (10000000)",
    ),
    (
        "format-filter-width",
        "{{ '%10000000000d'|format(1) }}",
        {},
        "LimitError",
        "a format width of 10000000000 exceeds max_string (10000000)",
    ),
    (
        "lipsum",
        "{{ lipsum(10**7) }}",
        {},
        "LimitError",
        "lipsum(10000000, max=100) would exceed max_string",
    ),
    ("join-huge", "{{ range(100000)|join('x' * 10000) }}", {}, "LimitError", too_long(999990005)),
    (
        "join-times",
        "{{ range(100)|map('string')|join(',') * 1000000 }}",
        {},
        "LimitError",
        too_long(289000000),
    ),
    ("batch-fill", "{{ range(10)|batch(10**10, 0)|list|length }}", {}, "LimitError", None),
    (
        "range",
        "{{ range(10**12) }}",
        {},
        "LimitError",
        "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).",
    ),
    (
        "range-list",
        "{{ range(10**7)|list|length }}",
        {},
        "LimitError",
        "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).",
    ),
    ("indent-string", "{{ ('a\\n' * 100)|indent('x' * 10**7) }}", {}, "LimitError", None),
    # nesting in the template text
    ("lists", "{{ " + "[" * 5000 + "]" * 5000 + " }}", {}, "TemplateSyntaxError", NESTING),
    (
        "dicts",
        "{{ " + "{'a': " * 2000 + "1" + "}" * 2000 + " }}",
        {},
        "TemplateSyntaxError",
        NESTING,
    ),
    ("unary-minus", "{{ " + "- " * 5000 + "1 }}", {}, "TemplateSyntaxError", NESTING),
    ("not-chain", "{{ " + "not " * 5000 + "1 }}", {}, "TemplateSyntaxError", NESTING),
    ("filter-chain", "{{ 1" + "|string" * 5000 + " }}", {}, "TemplateSyntaxError", NESTING),
    ("plus-chain", "{{ " + "1 + " * 5000 + "1 }}", {}, "TemplateSyntaxError", NESTING),
    ("attr-chain", "{{ a" + ".b" * 5000 + " }}", {}, "TemplateSyntaxError", NESTING),
    ("call-chain", "{{ a" + "()" * 5000 + " }}", {}, "TemplateSyntaxError", NESTING),
    ("nested-if", "{% if 1 %}" * 1000 + "{% endif %}" * 1000, {}, "TemplateSyntaxError", NESTING),
    (
        "nested-for",
        "{% for a in b %}" * 1000 + "{% endfor %}" * 1000,
        {},
        "TemplateSyntaxError",
        NESTING,
    ),
    (
        "elif-chain",
        "{% if a %}" + "{% elif a %}" * 2000 + "{% endif %}",
        {},
        "TemplateSyntaxError",
        NESTING,
    ),
]


@pytest.fixture(scope="module")
def results():
    """Run every attack in its own capped process, two at a time."""
    with ThreadPoolExecutor(max_workers=max(2, (os.cpu_count() or 2))) as pool:
        futures = {case[0]: pool.submit(run_isolated, case[1], case[2]) for case in ATTACKS}
        outcomes = {}
        for name, future in futures.items():
            try:
                outcomes[name] = future.result()
            except Exception as error:  # a timeout or a crash fails that case only
                outcomes[name] = {"kind": repr(error), "message": "", "seconds": float("inf")}
        return outcomes


@pytest.mark.parametrize(
    "name, source, context, kind, message", ATTACKS, ids=[c[0] for c in ATTACKS]
)
def test_attack_is_stopped(results, name, source, context, kind, message):
    result = results[name]
    assert result["kind"] == kind, result
    if message is not None:
        assert result["message"] == message
    elif kind != "ok":
        assert "max_" in result["message"] or "maximum" in result["message"], result
    # How long each attack takes is measured, not asserted (timings belong to benchmarks):
    # the subprocess's CPU_SECONDS (and its wall-clock BACKSTOP) is the guard against a hang.


HARMLESS = [
    # Jinja's ** is left-associative: (10 ** 10) ** 10 is a modest number
    ("{{ 10 ** 10 ** 10 }}", "1" + "0" * 100),
    ("{{ 9 ** 9 ** 9 }}", str((9**9) ** 9)),
    ("{{ [1, 2] * -5 }}", "[]"),
    # parentheses make no node, but the lexer counts them as nesting: max_nesting of them
    # still render (Jinja2 itself fails past 74, in Python's recursion limit)
    ("{{ " + "(" * 100 + "1" + ")" * 100 + " }}", "1"),
    ("{{ 2 ** -10000 }}", "0.0"),
    ("{{ 1e308 * 10 }}", "inf"),
    ("{{ range(100000)|list|length }}", "100000"),
    ("{{ ([[]] * 1000)|tojson|length }}", "4000"),
]


@pytest.mark.parametrize("source, expected", HARMLESS, ids=[c[0][:60] for c in HARMLESS])
def test_harmless(source, expected):
    assert mj.chat_environment().from_string(source).render() == expected


@pytest.mark.parametrize("opener", ["(", "[", "{"])
def test_brackets_past_max_nesting_are_refused_where_the_lexer_meets_them(opener):
    # (the error names the first bracket too many, on its line, before the rest is read)
    source = "text\n{{ x + " + opener * 100_000 + " }}"
    with pytest.raises(mj.TemplateSyntaxError) as caught:
        mj.Environment().from_string(source)
    error = caught.value
    assert error.message == "the template nests deeper than max_nesting (100)"
    assert (error.lineno, error.colno) == (2, len("{{ x + ") + 101)


# ------------------------------------------------------------------ limits are configurable


def test_huge_integer_literal_is_a_syntax_error():
    with pytest.raises(mj.TemplateSyntaxError, match="an integer literal of 100000 digits"):
        mj.chat_environment().from_string("{{ " + "1" * 100_000 + " }}")


def test_limits_are_configurable():
    env = mj.Environment(
        limits=Limits(max_steps=1000, max_recursion=5, max_string=10, max_range=10)
    )
    with pytest.raises(mj.LimitError, match=r"max_steps \(1000\)"):
        env.from_string(
            "{% for i in range(10) %}{% for j in range(10) %}{% for k in range(10) %}{% endfor %}{% endfor %}{% endfor %}"
        ).render()
    with pytest.raises(mj.LimitError, match=r"max_recursion \(5\)"):
        env.from_string("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").render()
    with pytest.raises(mj.LimitError, match=r"max_string \(10\)"):
        env.from_string("{{ 'a' * 11 }}").render()
    with pytest.raises(mj.LimitError, match=r"MAX_RANGE \(10\)"):
        env.from_string("{{ range(11) }}").render()
    with pytest.raises(mj.TemplateSyntaxError, match=r"max_nesting \(3\)"):
        mj.Environment(limits=Limits(max_nesting=3)).from_string("{{ [[[[1]]]] }}")


def test_max_seconds_deadline():
    env = mj.Environment(limits=Limits(max_steps=10**9, max_seconds=0.2))
    start = time.process_time()  # CPU time: what the deadline saved, whatever else runs
    with pytest.raises(mj.LimitError, match=r"max_seconds \(0.2\)"):
        env.from_string(
            "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
        ).render()
    assert time.process_time() - start < 2


def test_recursion_limit_fires_before_pythons():
    """A macro level costs 5 to 12 Python frames depending on the blocks around the call;
    either max_recursion or the stack check stops it, never a RecursionError."""
    env = mj.Environment(limits=Limits(max_recursion=10**6))
    with pytest.raises(mj.LimitError, match=r"max_recursion \(1000000\)"):
        env.from_string("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}").render()
    assert sys.getrecursionlimit() == 1000 or True  # never changed by the engine


def test_step_budget_grows_with_the_context():
    """Chat templates walk the messages inside a walk over the messages: 500 messages need
    250,000 steps, over max_steps but within max_steps + 2 x 500**2."""
    source = "{% for m in messages %}{% for n in messages %}{% endfor %}{% endfor %}ok"
    messages = [{"role": "user", "content": "hi"}] * 500
    assert mj.chat_environment().from_string(source).render(messages=messages) == "ok"
    with pytest.raises(
        mj.LimitError,
        match=r"budget of 950000 steps \(max_steps \(200000\) \+ max_steps_growth \(3\) x 500\*\*2",
    ):
        mj.chat_environment().from_string(
            source.replace(
                "{% endfor %}{% endfor %}",
                "{% for k in range(10) %}{% endfor %}{% endfor %}{% endfor %}",
            )
        ).render(messages=messages)


def test_context_data_unchanged_by_limit_errors():
    ctx = {"messages": [{"role": "user", "content": "x"}]}
    with pytest.raises(mj.LimitError):
        mj.chat_environment().from_string("{{ messages[0].content * 10**10 }}").render(ctx)
    assert ctx == {"messages": [{"role": "user", "content": "x"}]}


CORPUS = corpus_dir() / "templates"


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"chat-template corpus not found at {CORPUS}")
@pytest.mark.parametrize(
    "name",
    [
        "chatml-transformers-default",
        "llama-3.1-8b-instruct",
        "qwen-2.5-7b-instruct",
        "mistral-7b-instruct-v0.3",
    ],
)
def test_two_thousand_messages_render(name):
    source = (CORPUS / f"{name}.jinja").read_text(encoding="utf-8")
    roles = ["user", "assistant"]
    messages = [{"role": roles[i % 2], "content": f"message {i}"} for i in range(2000)]
    env = mj.chat_environment()
    env.globals["strftime_now"] = lambda fmt: "26 Jul 2024"
    out = env.from_string(source).render(
        messages=messages, bos_token="<s>", eos_token="</s>", add_generation_prompt=True
    )
    assert "message 1999" in out


def test_security_md_lists_every_limit_with_its_default():
    import re

    text = (ROOT / "SECURITY.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(\w+)` \| ([^|]+) \|", text, re.MULTILINE))
    defaults = Limits()
    for name in Limits.__slots__:
        assert name in rows, f"SECURITY.md does not list {name}"
        documented = rows[name].strip().replace(",", "").strip("`")
        assert documented == str(getattr(defaults, name)), (name, documented)


def test_step_budget_growth_is_capped():
    from minijinja_py.sandbox.budget import Budget

    budget = Budget(Limits())
    budget.scale_to({"messages": [{}] * 100_000})
    assert budget.budget == 200_000 + 3 * 5000**2


@pytest.mark.parametrize("size, expected", [(10_000, "0"), (30_000, None)])
def test_unpacked_arguments_are_charged_per_item(size, expected):
    # `*big` costs a Python-level walk per item (the callee binds them, the call's charges look
    # at each): half a step each, 15,000 steps for 30,000 items, over a budget of 10,000
    env = mj.Environment(limits=mj.Limits(max_steps=10_000, max_steps_growth=0))
    template = env.from_string("{% for i in range(1) %}{{ loop.cycle(*big) }}{% endfor %}")
    if expected is not None:
        assert template.render(big=list(range(size))) == expected
    else:
        with pytest.raises(mj.LimitError, match=r"max_steps \(10000\)"):
            template.render(big=list(range(size)))


@pytest.mark.parametrize("chain", ["-", "not ", "{% if a %}"])
def test_a_parser_stack_past_max_nesting_is_refused_as_it_grows(chain):
    # (refused at the token that overflows the stack, far before the end of the chain)
    source = "text\n{{ " + chain * 100_000 + "1 }}" if "%" not in chain else chain * 40_000
    with pytest.raises(mj.TemplateSyntaxError) as caught:
        mj.Environment().from_string(source)
    assert caught.value.message == "the template nests deeper than max_nesting (100)"
    assert caught.value.offset < 5_000 * len(chain)


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        (
            {"max_steps": None},
            TypeError,
            "Limits(max_steps=None): max_steps must be an int, not NoneType",
        ),
        (
            {"max_steps": "10"},
            TypeError,
            "Limits(max_steps='10'): max_steps must be an int, not str",
        ),
        (
            {"max_output": 1.5},
            TypeError,
            "Limits(max_output=1.5): max_output must be an int, not float",
        ),
        (
            {"max_recursion": True},
            TypeError,
            "Limits(max_recursion=True): max_recursion must be an int, not bool",
        ),
        ({"max_range": -5}, ValueError, "Limits(max_range=-5): max_range must be at least 1"),
        ({"max_source": 0}, ValueError, "Limits(max_source=0): max_source must be at least 1"),
        (
            {"max_steps_growth": -1},
            ValueError,
            "Limits(max_steps_growth=-1): max_steps_growth must be at least 0",
        ),
        (
            {"max_seconds": "1"},
            TypeError,
            "Limits(max_seconds='1'): max_seconds must be a number of seconds or None (no deadline), not str",
        ),
        (
            {"max_seconds": False},
            TypeError,
            "Limits(max_seconds=False): max_seconds must be a number of seconds or None (no deadline), not bool",
        ),
        (
            {"max_seconds": 0},
            ValueError,
            "Limits(max_seconds=0): max_seconds must be a positive, finite number of seconds, or None for no deadline",
        ),
        (
            {"max_seconds": float("nan")},
            ValueError,
            "Limits(max_seconds=nan): max_seconds must be a positive, finite number of seconds, or None for no deadline",
        ),
    ],
)
def test_a_wrong_limit_is_refused_when_the_limits_are_made(fields, error, message):
    with pytest.raises(error) as raised:
        Limits(**fields)
    assert str(raised.value) == message
    with pytest.raises(error):
        Limits().replace(**fields)


def test_every_field_is_checked():
    for name in Limits.__slots__:
        with pytest.raises(TypeError, match=f"^Limits\\({name}='1'\\): {name} must be"):
            Limits(**{name: "1"})


def test_limits_keep_the_behaviour_of_a_frozen_value():
    import copy
    import enum
    import pickle

    class Steps(enum.IntEnum):
        FEW = 50

    limits = Limits(max_steps=Steps.FEW, max_seconds=2, max_steps_growth=0)
    assert type(limits.max_steps) is int  # an int subclass stands for its plain value
    assert repr(limits) == (
        "Limits(max_steps=50, max_steps_growth=0, max_output=50000000, max_recursion=100,"
        " max_nesting=100, max_string=10000000, max_items=1000000, max_int_bits=65536,"
        " max_range=100000, max_seconds=2, max_memory=256000000, max_memory_growth=256,"
        " max_source=500000)"
    )
    same = Limits(max_steps=50, max_seconds=2, max_steps_growth=0)
    assert limits == same and hash(limits) == hash(same) and limits != Limits()
    assert {limits: 1}[same] == 1
    assert pickle.loads(pickle.dumps(limits)) == limits == copy.deepcopy(limits)
    assert limits.replace(max_steps=7) == Limits(max_steps=7, max_seconds=2, max_steps_growth=0)
    with pytest.raises(TypeError, match="^Limits has no field 'max_stpes'$"):
        limits.replace(max_stpes=7)
    with pytest.raises(AttributeError, match="^cannot assign to field 'max_steps'"):
        limits.max_steps = 10  # type: ignore[misc]
    with pytest.raises(TypeError):
        Limits(max_stpes=7)  # type: ignore[call-arg]


def test_limits_of_another_type_are_refused_by_their_users():
    with pytest.raises(TypeError, match="^limits must be a Limits or None, not dict$"):
        mj.Environment(limits={"max_steps": 10})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="^limits must be a Limits or None, not int$"):
        mj.ChatTemplate("{{ 1 }}", limits=10)  # type: ignore[arg-type]


def test_an_int_subclass_from_the_caller_is_held_to_max_int_bits():
    import enum

    class Power(enum.IntEnum):
        TEN = 10

    env = mj.Environment()
    # (before, `type(a) is int` let an IntEnum through: 10 ** 10**8 was computed, for minutes)
    with pytest.raises(mj.LimitError, match=r"^a power of 100000000 would exceed max_int_bits"):
        env.from_string("{{ e ** 100000000 }}").render(e=Power.TEN)
    with pytest.raises(mj.LimitError, match=r"^the product would exceed max_int_bits \(65536\)"):
        env.from_string("{{ (2 ** 65535) * e }}").render(e=Power.TEN)
    assert env.from_string("{{ e ** 3 }} {{ e * 3 }} {{ 2 * e }}").render(e=Power.TEN) == "1000 30 20"


@pytest.mark.parametrize(
    ("source", "limits", "message", "where"),
    [
        (
            "{% for i in range(10**5) %}{% for j in range(10**5) %}{% endfor %}{% endfor %}",
            {},
            "the render exceeded max_steps (200000)",
            (1, 28),  # the innermost loop
        ),
        (
            "ab\n{% for i in range(10**5) %}x{% endfor %}",
            {"max_output": 1000},
            "the output exceeded max_output (1000)",
            (2, 1),
        ),
        (
            "{{ 'a' }}\n{{ 'b' * 5000 }}",
            {"max_output": 1000},
            "the output exceeded max_output (1000)",
            (2, 8),  # the printing statement's expression
        ),
        (
            "x" * 100,
            {"max_source": 10},
            "a template source of 100 characters exceeds max_source (10)",
            (1, 1),  # the whole source is refused
        ),
    ],
)
def test_limit_errors_say_where_the_render_was(source, limits, message, where):
    with pytest.raises(mj.LimitError) as caught:
        mj.Environment(limits=mj.Limits(**limits)).from_string(source).render()
    assert caught.value.message == message
    assert (caught.value.lineno, caught.value.colno) == where
