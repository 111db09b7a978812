"""Shrink a disagreeing case to a small template that still disagrees the same way.

Delta debugging in two passes: first over the template's pieces (tags, outputs, comments and
single text characters), then over characters. A candidate is kept when the reference still gives
the same kind of outcome (and the same error class) and ours still disagrees with it the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .reference import Outcome, agree, render_ours, render_reference

_PIECES = re.compile(r"\{%.*?%\}|\{\{.*?\}\}|\{#.*?#\}|.", re.S)


def _signature(ref: Outcome, got: Outcome) -> tuple:
    ref_key = ref[0] if ref[0] != "error" else ("error", ref[1])
    got_key = got[0] if got[0] == "ok" else (got[0], got[1].split(":")[0])
    return ref_key, got_key


def disagreement(config: str, options: dict, context: dict) -> Callable[[str], tuple | None]:
    """A function: template -> signature of the disagreement, or None when both agree."""

    def check(source: str) -> tuple | None:
        ref = render_reference(config, source, context, **options)
        got = render_ours(config, source, context, **options)
        if agree(ref, got):
            return None
        return _signature(ref, got)

    return check


def _ddmin(items: list[str], keep: Callable[[list[str]], bool], budget: list[int]) -> list[str]:
    n = 2
    while len(items) >= 2 and budget[0] > 0:
        chunk = max(1, len(items) // n)
        reduced = False
        for start in range(0, len(items), chunk):
            candidate = items[:start] + items[start + chunk :]
            budget[0] -= 1
            if candidate and keep(candidate):
                items = candidate
                n = max(n - 1, 2)
                reduced = True
                break
            if budget[0] <= 0:
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(len(items), n * 2)
    return items


def minimize(config: str, options: dict, context: dict, source: str, max_tests: int = 600) -> str:
    """The smallest template found that disagrees like ``source`` does."""
    check = disagreement(config, options, context)
    target = check(source)
    if target is None:
        return source
    budget = [max_tests]

    def keep(parts: list[str]) -> bool:
        return check("".join(parts)) == target

    pieces = _ddmin(_PIECES.findall(source), keep, budget)
    chars = _ddmin(list("".join(pieces)), keep, budget)
    return "".join(chars)
