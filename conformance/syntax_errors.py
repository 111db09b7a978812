"""``python -m conformance.syntax_errors [--cases N] [--seed S]``: syntax-error wording vs Jinja2.

The differential report compares outcomes by class; this measures the exact messages of syntax
errors, which a template author reads. Each case is one tag (``{{ ... }}`` or ``{% ... %}``) cut
from a corpus template with one token deleted or one token of the tag inserted again before
another; cases Jinja2 rejects with a TemplateSyntaxError are compiled by both engines in the chat
configuration, and the share with the identical message is printed with the most common
differences. Case ``i`` of seed ``S`` is always the same mutation.  With ``--truncated`` the cases
are unfinished templates instead: every prefix of every corpus tag and of the golden templates.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections import Counter
from collections.abc import Callable

from .corpus import corpus_missing, template_names, template_source
from .reference import reference_environment

_TOKEN = re.compile(r"\{\{|\}\}|\{%|%\}|[A-Za-z_]\w*|\d+|'[^']*'|\"[^\"]*\"|\S")
_TAG_START = re.compile(r"\{[{%]")


def mutated_tag(rng: random.Random, sources: list[str]) -> str | None:
    """One tag of a random template with one token deleted or duplicated; None if unsuitable."""
    source = rng.choice(sources)
    starts = [m.start() for m in _TAG_START.finditer(source)]
    if not starts:
        return None
    start = rng.choice(starts)
    end = source.find("}}" if source[start + 1] == "{" else "%}", start + 2)
    if end < 0:
        return None
    tag = source[start : end + 2]
    tokens = list(_TOKEN.finditer(tag))
    if len(tokens) < 3:
        return None
    victim = tokens[rng.randrange(1, len(tokens) - 1)]
    if rng.random() < 0.5:
        return tag[: victim.start()] + tag[victim.end() :]
    extra = rng.choice(tokens).group()
    return tag[: victim.start()] + extra + " " + tag[victim.start() :]


def truncated_tags(sources: list[str]) -> list[str]:
    """Every tag of every source cut after each of its tokens (``{{ f(a``, ``{% for m``), and
    every source cut after each token of its first 400 characters: unfinished templates."""
    seen: set[str] = set()
    cases: list[str] = []

    def add(text: str) -> None:
        if text not in seen:
            seen.add(text)
            cases.append(text)

    for source in sources:
        for match in _TAG_START.finditer(source):
            start = match.start()
            end = source.find("}}" if source[start + 1] == "{" else "%}", start + 2)
            tag = source[start : end + 2] if end >= 0 else source[start : start + 200]
            for token in _TOKEN.finditer(tag):
                add(tag[: token.end()])
        head = source[:400]
        for token in _TOKEN.finditer(head):
            add(head[: token.end()])
    return cases


def _golden_templates() -> list[str]:
    from pathlib import Path

    from .test_golden import FILES, parse

    return [parse(Path(path))["template"] for path in FILES]


def _message(compile_: Callable[[str], object], source: str) -> tuple[str, str] | None:
    try:
        compile_(source)
    except Exception as error:  # noqa: BLE001 - classifying failures is the point
        return type(error).__name__, str(getattr(error, "message", error))
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m conformance.syntax_errors")
    parser.add_argument("--cases", type=int, default=3000, help="mutated tags to try")
    parser.add_argument("--seed", type=int, default=5)
    parser.add_argument("--show", type=int, default=10, help="differences to list")
    parser.add_argument(
        "--truncated",
        action="store_true",
        help="unfinished templates: every prefix of corpus tags and of the golden templates",
    )
    args = parser.parse_args(argv)
    missing = corpus_missing()
    if missing:
        print(missing, file=sys.stderr)
        return 2
    import minijinja_py

    sources = [template_source(name) for name in template_names()]
    reference = reference_environment("chat")
    ours = minijinja_py.chat_environment()
    rng = random.Random(args.seed)
    compared = same = 0
    differences: Counter[tuple[str, str]] = Counter()
    example: dict[tuple[str, str], str] = {}
    if args.truncated:
        candidates: list[str | None] = truncated_tags(sources + _golden_templates())
    else:
        candidates = [mutated_tag(rng, sources) for _ in range(args.cases)]
    for tag in candidates:
        if tag is None:
            continue
        expected = _message(reference.parse, tag)
        if expected is None or expected[0] != "TemplateSyntaxError":
            continue
        compared += 1
        got = _message(ours.from_string, tag)
        if got == expected:
            same += 1
        else:
            key = (expected[1], got[1] if got else "(compiles)")
            differences[key] += 1
            example.setdefault(key, tag)
    print(f"{compared} syntax errors, identical message: {same} ({100 * same / compared:.1f}%)")
    for (expected_text, got_text), count in differences.most_common(args.show):
        print(f"{count:5}  Jinja2: {expected_text!r}\n       ours:   {got_text!r}")
        print(f"       e.g.    {example[(expected_text, got_text)]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
