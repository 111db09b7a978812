"""The conventions of inferred spans that a template cannot decide: whether a turn's span takes
its role header or the header's trailing whitespace (the family's hand tags decide, see
HEADERS_THE_TURN_TAKES and HEADER_WHITESPACE_THE_TURN_TAKES), and whether an end-of-sequence
token written after the whole conversation belongs to its last turn (by default it does: the
model writes it to stop)."""

from __future__ import annotations

from typing import Any

from ...errors import bounded_repr

__all__ = [
    "HEADERS_THE_TURN_TAKES",
    "HEADER_CONVENTIONS",
    "HEADER_WHITESPACE_THE_TURN_TAKES",
    "adjust_spans",
    "check_mask_conventions",
    "convention_spans",
    "family_header",
]


HEADER_CONVENTIONS: tuple[str, ...] = ("auto", "exclude", "whitespace", "include")

#: The role headers whose families' hand tags take the header as the turn's, and the tags
#: that say so; "auto" includes these headers and excludes every other.  Read against the
#: generation prompt's start.
HEADERS_THE_TURN_TAKES: dict[str, str] = {
    # The model writes this header itself between the messages of one turn (an analysis
    # message, then the final one or a call), so the header is generated text.
    "<|start|>assistant": "gpt-oss: TRL's training tags, and this project's",
    "<｜Assistant｜>": "DeepSeek V3, R1, V3.1: TRL's DeepSeek V3 training tags, and this project's",
    "<assistant>": "Laguna: the tags the template ships",
}


#: The families whose hand tags take the role header's trailing whitespace as the turn's
#: ("whitespace"), each known by the default system prompt its template writes before a
#: conversation that has none (the header itself is shared with families tagged the other way:
#: Qwen 3 writes the same "<|im_start|>assistant\n", and TRL's Qwen 3 tags leave its newline
#: out).  Read against what the template writes before the first user turn.
HEADER_WHITESPACE_THE_TURN_TAKES: dict[str, str] = {
    "You are Qwen, created by Alibaba Cloud.": "Qwen 2.5: TRL's training tags (the newline "
    "after '<|im_start|>assistant'), and this project's",
}


def family_header(generation_prompt: str, opening: str = "") -> str:
    """The header convention "auto" stands for with a template whose generation prompt is
    `generation_prompt` and that writes `opening` before a conversation's first user turn:
    "include" for the families of HEADERS_THE_TURN_TAKES, "whitespace" for those of
    HEADER_WHITESPACE_THE_TURN_TAKES, else "exclude"."""
    prompt = generation_prompt.lstrip()
    if prompt.startswith(tuple(HEADERS_THE_TURN_TAKES)):
        return "include"
    if opening and any(text in opening for text in HEADER_WHITESPACE_THE_TURN_TAKES):
        return "whitespace"
    return "exclude"


def check_mask_conventions(header: Any, final_eos: Any) -> None:
    """Refuses an unknown header convention or a final_eos that is not a bool.

    Raises:
        ValueError: for a header convention not in HEADER_CONVENTIONS.
        TypeError: for a final_eos that is not a bool.
    """
    if header not in HEADER_CONVENTIONS:
        raise ValueError(
            f"mask_header must be one of {list(HEADER_CONVENTIONS)}, not {bounded_repr(header)}"
        )
    if not isinstance(final_eos, bool):
        raise TypeError(f"mask_final_eos must be a bool, not {type(final_eos).__name__}")


def adjust_spans(
    provenance: Any,
    header: str = "auto",
    final_eos: bool = True,
    eos_token: str | None = None,
) -> list[tuple[int, int]]:
    """The inferred assistant spans of a render with provenance, under the conventions chosen.

    Hand-tagged training templates part on two points the rule cannot decide from the template:

    Args:
        provenance: A ChatProvenance (its spans are returned as they are when they came from
            {% generation %} blocks).
        header: Where a turn's span starts.  "auto" (the default): the convention of the
            template's family, "include" for the headers of HEADERS_THE_TURN_TAKES and
            "exclude" for every other.  "exclude" (most training tags): after the assistant's
            role header and the whitespace that ends it.
            "whitespace": the header's trailing whitespace is the turn's (the newline after
            Qwen 2.5's "<|im_start|>assistant", the space after LLaVA's "[/INST]").
            "include": the header is the turn's in every family (SmolLM 3's shipped tags).
        final_eos: Whether an end-of-sequence token written once after the whole conversation
            (Phi 3's "<|endoftext|>") belongs to the last turn when nothing else follows it
            (the default: the model writes it to stop, and TRL's tags take it).
        eos_token: That token (the template's eos_token; by default the one the render
            was traced with).

    Returns:
        The spans, sorted and disjoint as they came.
    """
    if provenance.assistant_rule == "generation" or (header == "auto" and final_eos):
        # (inferred spans already carry the default conventions: chat_provenance made them)
        return list(provenance.assistant_spans)
    if eos_token is None:
        eos_token = provenance.eos_token
    return convention_spans(
        provenance.text,
        provenance.rule_spans,
        provenance.turn_texts,
        provenance.messages,
        header,
        final_eos,
        eos_token,
    )


def convention_spans(
    text: str,
    rule_spans: list[tuple[int, int]],
    turn_texts: Any,
    messages: list[Any],
    header: str = "auto",
    final_eos: bool = True,
    eos_token: str | None = None,
) -> list[tuple[int, int]]:
    """The rule's spans `rule_spans` (role header excluded) of `text` under the conventions
    chosen (see adjust_spans); `turn_texts` is what the probes read off the template."""
    spans = list(rule_spans)
    if not spans:
        return spans
    if header == "auto":
        header = family_header(turn_texts.generation_prompt, turn_texts.opening)
    if header != "exclude":
        prompt = turn_texts.generation_prompt.rstrip()
        # (a tool call's turn may write its own header: DeepSeek's "<｜Assistant｜><｜tool▁calls▁begin｜>")
        call_start = turn_texts.call_start
        moved = []
        floor = 0
        for start, end in spans:
            at = start
            while at > floor and text[at - 1] in " \t\r\n":
                at -= 1
            if header == "include":
                # (the pieces of a header: DeepSeek V3.1's past turn writes the prompt's
                # "<｜Assistant｜><think>" and then the "</think>" its tool-call turn starts with)
                taken = at
                for _ in range(_HEADER_PIECES):
                    found = _header_before(text, taken, floor, prompt) or _header_before(
                        text, taken, floor, call_start
                    )
                    if not found:
                        break
                    taken -= found
                at = taken if taken < at else start  # (no header before this turn: none taken)
            moved.append((at, end))
            floor = end
        spans = moved
    last_is_assistant = bool(messages) and messages[-1].get("role") == "assistant"
    if final_eos and eos_token and last_is_assistant:
        start, end = spans[-1]
        rest = text[end:]
        if rest and rest.rstrip() == eos_token:
            spans[-1] = (start, len(text))
    return spans


_HEADER_PIECES = 2


def _header_before(text: str, at: int, floor: int, prompt: str) -> int:
    # The length of the longest start of the generation prompt written just before `at` (a
    # past turn writes the prompt's header without what the prompt adds after it: DeepSeek R1's
    # "<think>"), not reaching back before `floor`.
    for length in range(min(len(prompt), at - floor), 0, -1):
        head = prompt[:length]
        if len(head.strip()) > 1 and text.startswith(head, at - length):
            return length
    return 0
