"""The drop-in's `sanitize_control_tokens=True`, as transformers 5.23 does it: the control
tokens in the caller's strings are wrapped in two private-use markers before the render, and the
rendered text is encoded piece by piece, a wrapped token as plain text, everything else (the
template's own control tokens) as the tokenizer encodes it.

Wrapping before the render is what the template sees: a Qwen 3 template that splits a reply at
`</think>` does not split at a wrapped one.  (`tokenize(protect_special_tokens=True)` protects by
provenance instead, which leaves the text the template sees unchanged.)

The control tokens are the tokenizer's special added tokens, and its other added tokens that the
template's own text holds (not whitespace ones), unless the folder's `tokenizer_config.json`
lists them as `chat_control_tokens`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from ..syntax import nodes

__all__ = ["control_tokens", "encode_marked", "mark_control_tokens", "template_literals"]

_START = "\U000f0000"
_END = "\U000f0001"


def template_literals(tree: Any) -> str:
    """The template's text and string constants, joined by NUL so that no search matches across
    two of them."""
    found: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, nodes.Data):
            found.add(node.text)
        elif isinstance(node, nodes.Const) and isinstance(node.value, str):
            found.add(node.value)
        for name in getattr(node, "_children", ()):
            child = getattr(node, name, None)
            if isinstance(child, (tuple, list)):
                stack.extend(item for item in child if item is not None)
            elif child is not None:
                stack.append(child)
    return "\0".join(found)


def control_tokens(
    tokenizer: Any, literals: str, listed: Sequence[str] | None = None
) -> tuple[str, ...]:
    """The added tokens that caller data may not write as control tokens."""
    added = tokenizer.get_added_tokens_decoder().values()
    if listed is not None:
        chosen = set(listed)
        return tuple(token.content for token in added if token.special or token.content in chosen)
    return tuple(
        token.content
        for token in added
        if token.special or (token.content in literals and not token.content.isspace())
    )


@lru_cache(maxsize=32)
def _patterns(tokens: tuple[str, ...]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    # (longest first: a token wins over the tokens it holds; an empty list matches nothing)
    longest = sorted(tokens, key=len, reverse=True)
    tokens_re = re.compile("|".join(map(re.escape, longest)) or "(?!)")
    marked_re = re.compile(f"{_START}({tokens_re.pattern}){_END}|[{_START}{_END}]")
    return tokens_re, marked_re


def mark_control_tokens(value: Any, tokens: tuple[str, ...]) -> Any:
    """`value` (template data: strings, lists, dicts) with each control token in its strings
    wrapped in the markers; markers already there are dropped first, so none can be forged."""
    pattern = _patterns(tokens)[0]
    wrap = f"{_START}\\g<0>{_END}"

    def marked(item: Any) -> Any:
        if isinstance(item, str):
            return pattern.sub(wrap, item.replace(_START, "").replace(_END, ""))
        if isinstance(item, dict):
            return {key: marked(child) for key, child in item.items()}
        if isinstance(item, (list, tuple)):
            return [marked(child) for child in item]
        return item

    return marked(value)


def encode_marked(tokenizer: Any, text: str) -> list[int]:
    """The ids of a text rendered from marked data: a wrapped token as plain text, a lone marker
    (a template's split can part a pair) dropped, still breaking the text around it.

    Raises:
        ValueError: when a wrapped token's text encodes to the token itself.
    """
    added = tuple(token.content for token in tokenizer.get_added_tokens_decoder().values())
    pieces = _patterns(added)[1].split(text)
    newline = _encode(tokenizer, "\n", False)
    ids = _encode(tokenizer, pieces[0], False)
    for index, piece in enumerate(pieces[1:], start=1):
        if not piece:
            continue
        as_text = index % 2 == 1  # (the odd pieces are the wrapped tokens)
        piece_ids = _encode(tokenizer, "\n" + piece, as_text)
        if piece_ids[: len(newline)] == newline:
            piece_ids = piece_ids[len(newline) :]
        else:
            piece_ids = _encode(tokenizer, piece, as_text)
        if as_text and tokenizer.token_to_id(piece) in piece_ids:
            raise ValueError(f"Can't sanitize {piece!r}: the tokenizer produces it from plain text")
        ids += piece_ids
    return ids


def _encode(tokenizer: Any, text: str, as_text: bool) -> list[int]:
    if not text:
        return []
    if not as_text:
        return list(tokenizer.encode(text, add_special_tokens=False).ids)
    # As plain text: the tokenizer's pipeline without its added tokens, special or not (the
    # library's encode_special_tokens leaves the others matched).
    if tokenizer.normalizer is not None:
        text = tokenizer.normalizer.normalize_str(text)
    splits = [text]
    if tokenizer.pre_tokenizer is not None:
        splits = [split for split, _ in tokenizer.pre_tokenizer.pre_tokenize_str(text)]
    return [token.id for split in splits for token in tokenizer.model.tokenize(split)]
