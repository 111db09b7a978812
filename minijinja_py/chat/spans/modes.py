"""Mask modes and sources: which characters of a rendered chat are the assistant's, and from
where that is known.

A mask comes from one of four sources, and every result says which one it came from:

- `"generation"`: the template's own `{% generation %}` blocks (transformers' only source);
- `"tagged"`: a hand-tagged copy of a known template, shipped with this package in
  `spans/tagged/` and found by the normalised hash of the template's source (spans/registry.py);
- `"inferred"`: the rule of spans/inferred.py (the end-of-turn marker and its line end
  included; the role header as the template's family tags it, see spans/conventions.py);
- `"none"`: no source was asked for or found, and the mask is zeros (transformers' result for
  a template without generation blocks).

The caller picks the sources with a mode:

- `"generation"`: the template's blocks, else zeros;
- `"tagged"`: the template's blocks, else a hand-tagged copy, else a `ValueError`;
- `"inferred"`: the template's blocks, else the rule (the registry is not read);
- `"auto"`: the template's blocks, else a hand-tagged copy, else the rule.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from ...errors import bounded_repr

__all__ = [
    "MASK_MODES",
    "MASK_SOURCES",
    "AssistantSpans",
    "MaskMode",
    "MaskSource",
    "check_mask_mode",
]

MaskMode = Literal["generation", "tagged", "inferred", "auto"]
MaskSource = Literal["generation", "tagged", "inferred", "none"]

MASK_MODES: tuple[str, ...] = ("generation", "tagged", "inferred", "auto")
MASK_SOURCES: tuple[str, ...] = ("generation", "tagged", "inferred", "none")


class AssistantSpans(NamedTuple):
    """A rendered conversation's assistant spans and their source."""

    #: The prompt text.
    text: str
    #: (start, end) character offsets of the assistant's turns in `text`.
    spans: list[tuple[int, int]]
    #: One of MASK_SOURCES.
    source: str


def check_mask_mode(mode: Any) -> str:
    """`mode` when it is one of `MASK_MODES`.

    Raises:
        ValueError: for any other value.
    """
    if mode not in MASK_MODES:
        raise ValueError(f"mask must be one of {list(MASK_MODES)}, not {bounded_repr(mode)}")
    return str(mode)


def mask_reason(source: Any, turn_texts: Any = None) -> str | None:
    """One line saying where a mask came from and why: `source` (one of `MASK_SOURCES`, or None
    when no mask was asked for) and, for inferred spans, the texts the rule read off the template
    (a `TurnTexts`: the generation prompt and the end-of-turn marker)."""
    if source is None:
        return None
    if source == "generation":
        return "generation: the template's {% generation %} blocks"
    if source == "tagged":
        return "tagged: the hand-tagged copy of this template shipped with minijinja_py"
    if source == "inferred":
        header = getattr(turn_texts, "generation_prompt", "") or ""
        end = getattr(turn_texts, "end_of_turn", "") or getattr(turn_texts, "past_end_of_turn", "")
        if end:
            return f"inferred: from the end of {header!r} through {end!r}"
        return f"inferred: from the end of {header!r} through the turn's last character"
    return "none: no source gave spans; the mask is zeros"
