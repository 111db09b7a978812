"""What a render costs once, and what each message costs, construct by construct, against Jinja2.

    python -m benchmarks.constructs            # every construct, a few seconds
    python -m benchmarks.constructs --only concat --only if_chain
    python -m benchmarks.constructs --template phi-3.5-mini-instruct --template qwen-3.8

The corpus figures (`python -m benchmarks`, `benchmarks.by_conversation`) add up two costs that
move apart: what a render pays whatever the template (making the render's state and scopes,
Jinja2's new context and generator) and what each message costs (the template's statements run
once per message). Here each construct is one loop over the messages, rendered with a short
conversation and a long one by both engines (configured as `python -m benchmarks` configures
them), and the two costs are read from the two times: per message, the difference over the
messages added; once, the short conversation's time less its messages. A corpus conversation
has two to eight messages, so the fixed cost weighs as much as a message or more there.

`--template NAME` adds a corpus template's rows, rendered with the same messages after a
system message (a long conversation, as training data has, is where the per-message cost
decides); one that either engine refuses or renders differently is left out, and said so.

Each time is the median of interleaved samples (both engines in turn, each sample repeating
the render for at least `SAMPLE_SECONDS` of CPU) in a frozen heap, as `benchmarks.ab` times.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from typing import Any

from . import corpus as C
from . import run as R
from .engines import all_engines

SAMPLE_SECONDS = 0.003
SHORT, LONG = 4, 64

# One loop over the messages each: the statements chat templates run for every message.
CONSTRUCTS: dict[str, str] = {
    "text": "{% for m in messages %}ab{% endfor %}",
    "item": "{% for m in messages %}{{ m['content'] }}{% endfor %}",
    "attribute": "{% for m in messages %}{{ m.content }}{% endfor %}",
    "two_items": "{% for m in messages %}{{ m['role'] }}{{ m['content'] }}{% endfor %}",
    "concat": "{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n'"
    " + m['content'] + '<|im_end|>\\n' }}{% endfor %}",
    "text_between": "{% for m in messages %}<|im_start|>{{ m['role'] }}\n"
    "{{ m['content'] }}<|im_end|>\n{% endfor %}",
    "tilde": "{% for m in messages %}{{ m.role ~ ':' ~ m.content }}{% endfor %}",
    "if_chain": "{% for m in messages %}{% if m['role'] == 'user' %}U{% elif m['role'] =="
    " 'assistant' %}A{% endif %}{% endfor %}",
    "if_one": "{% for m in messages %}{% if m['role'] == 'user' %}U{% endif %}{% endfor %}",
    "if_and": "{% for m in messages %}{% if m['role'] == 'user' and m['content'] %}U"
    "{% endif %}{% endfor %}",
    "set": "{% for m in messages %}{% set c = m['content'] %}{{ c }}{% endfor %}",
    "namespace": "{% set ns = namespace(x=false) %}{% for m in messages %}{% set ns.x = true %}"
    "{% endfor %}{{ ns.x }}",
    "loop_vars": "{% for m in messages %}{% if loop.first %}F{% endif %}{% if loop.last %}L"
    "{% endif %}{{ loop.index0 }}{% endfor %}",
    "macro": "{% macro f(x) %}[{{ x }}]{% endmacro %}{% for m in messages %}{{ f(m.content) }}"
    "{% endfor %}",
    "trim": "{% for m in messages %}{{ m['content'] | trim }}{% endfor %}",
    "is_defined": "{% for m in messages %}{% if m.tool_calls is defined %}T{% else %}N"
    "{% endif %}{% endfor %}",
    "method": "{% for m in messages %}{% if m.content.startswith('hello') %}y{% endif %}"
    "{% endfor %}",
    "tojson": "{% for m in messages %}{{ m | tojson }}{% endfor %}",
    "string": "{% for m in messages %}{{ m | string }}{% endfor %}",
}


def messages(count: int) -> list[dict[str, str]]:
    """`count` short messages, user and assistant in turn."""
    return [
        {"role": ("user", "assistant")[i % 2], "content": f"hello world {i}"} for i in range(count)
    ]


def template_contexts(count: int) -> dict[str, Any]:
    """What a corpus template is rendered with here: a system message, then `count` messages."""
    return {
        "messages": [{"role": "system", "content": "You are helpful."}, *messages(count)],
        "add_generation_prompt": True,
        "bos_token": "<s>",
        "eos_token": "</s>",
    }


def split_costs(short: float, long: float) -> tuple[float, float]:
    """(once, per message) from a render's time with SHORT and with LONG messages."""
    per_message = (long - short) / (LONG - SHORT)
    return short - SHORT * per_message, per_message


def measure(
    engines: list[Any], sources: dict[str, str], rounds: int, make: Any = None
) -> dict[str, dict[str, tuple]]:
    """{name: {engine key: (once, per message)}} in seconds, medians of `rounds` samples, of
    each source in `sources` rendered with `make(count)` (`{"messages": messages(count)}`)."""
    make = make or (lambda count: {"messages": messages(count)})
    contexts = {count: make(count) for count in (SHORT, LONG)}
    work = []
    names = list(sources)
    for name in names:
        texts = set()
        for e in engines:
            template = e.compile(e.new_env(), sources[name])
            for count, ctx in contexts.items():
                texts.add((count, e.render(template, ctx)))
                repeats = R.repeats_for(e.render, template, ctx, SAMPLE_SECONDS)
                work.append((name, e, count, template, ctx, repeats))
        if len(texts) != 2:
            raise RuntimeError(f"{name}: the engines render different text")
    samples: dict[tuple[str, str, int], list[float]] = {}
    with R.frozen_heap():
        for r in range(rounds):
            for name, e, count, template, ctx, repeats in R.rotated(work, r):
                seconds = R.time_passes(e.render, template, [ctx], repeats)
                samples.setdefault((name, e.key, count), []).append(seconds)
    result: dict[str, dict[str, tuple]] = {}
    for name in names:
        for e in engines:
            short, long = (statistics.median(samples[name, e.key, n]) for n in (SHORT, LONG))
            result.setdefault(name, {})[e.key] = split_costs(short, long)
    return result


def report(costs: dict[str, dict[str, tuple]]) -> str:
    lines = [
        "| construct | once: ours | once: Jinja2 | ours / Jinja2"
        " | per message: ours | per message: Jinja2 | ours / Jinja2 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, by_engine in costs.items():
        (once, each), (j_once, j_each) = by_engine["ours"], by_engine["jinja2"]
        lines.append(
            f"| {name} | {once * 1e6:.1f} µs | {j_once * 1e6:.1f} µs | {once / j_once:.2f}"
            f" | {each * 1e6:.2f} µs | {j_each * 1e6:.2f} µs | {each / j_each:.2f} |"
        )
    return "\n".join(lines)


def ours_and_jinja2() -> list[Any] | None:
    """Our engine and Jinja2's, or None (and why, on stderr) when either is unavailable."""
    engines = {e.key: e for e in all_engines()}
    for key in ("ours", "jinja2"):
        if not engines[key].available:
            R.log(f"{engines[key].label} unavailable: {engines[key].reason}")
            return None
    return [engines["ours"], engines["jinja2"]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.constructs")
    ap.add_argument("--only", action="append", choices=sorted(CONSTRUCTS), metavar="NAME")
    ap.add_argument("--template", action="append", default=[], metavar="NAME")
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args(argv)
    pair = ours_and_jinja2()
    if pair is None:
        return 2
    names = args.only or ([] if args.template else list(CONSTRUCTS))
    costs = measure(pair, {name: CONSTRUCTS[name] for name in names}, args.rounds)
    for name in args.template:
        source = (C.CORPUS_DIR / "templates" / f"{name}.jinja").read_text(encoding="utf-8")
        try:
            costs.update(measure(pair, {name: source}, args.rounds, template_contexts))
        except Exception as exc:  # (refused by an engine, or rendered differently)
            R.log(f"{name}: left out ({type(exc).__name__}: {exc})")
    print(f"{SHORT} and {LONG} messages, CPU time, medians of {args.rounds} samples\n")
    print(report(costs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
