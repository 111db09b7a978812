"""Token ids and assistant masks from a rendered conversation, with the ``tokenizers`` library.

:func:`encode_chat` gives what transformers' ``apply_chat_template(..., tokenize=True,
return_dict=True, return_assistant_tokens_mask=True)`` gives: the text encoded once without
added special tokens (the template writes its own), an attention mask of ones, and a mask of
the tokens that the assistant spans' characters fall in, mapped as transformers maps them (the
token of a span's first character through the token of its last one).

With ``protect_special_tokens`` the text is encoded in pieces: at each added token the
*template* wrote, which stays a control token; every other piece is encoded with added tokens
read as ordinary text, so that a caller's ``<|im_end|>`` cannot end a turn.

``tokenizers`` is imported here only (the ``tokens`` extra).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .loading import read_text
from .types import TokenizedChat

__all__ = ["ControlToken", "encode_chat", "find_control_tokens", "load_tokenizer"]


def load_tokenizer(source: Any) -> Any:
    """A ``tokenizers.Tokenizer`` from a model folder's ``tokenizer.json`` (or one given)."""
    if source is None or not isinstance(source, (str, os.PathLike)):
        return source
    from tokenizers import Tokenizer

    path = Path(source)
    if path.is_dir():
        path = path / "tokenizer.json"
    text = read_text(path)  # size-capped, as every file a loader reads
    try:
        return Tokenizer.from_str(text)
    except Exception as exc:  # the library's own parse errors
        raise ValueError(f"{path}: not a tokenizer file ({exc})") from None


def added_tokens(tokenizer: Any) -> list[str]:
    """The contents of the tokenizer's added tokens (special or not), longest first."""
    decoder = tokenizer.get_added_tokens_decoder()
    return sorted({token.content for token in decoder.values()}, key=len, reverse=True)


def _added_pattern(tokenizer: Any) -> re.Pattern[str] | None:
    tokens = [t for t in added_tokens(tokenizer) if t]
    if not tokens:
        return None
    # Longest first: leftmost-longest, as the tokenizer matches its added tokens.
    return re.compile("|".join(re.escape(t) for t in tokens))


def encode_chat(
    tokenizer: Any,
    text: str,
    spans: Sequence[tuple[int, int]],
    caller_spans: Sequence[tuple[int, int]] | None = None,
) -> TokenizedChat:
    """``input_ids``, ``attention_mask`` and ``assistant_masks`` of ``text``.

    ``caller_spans`` (the characters that came from the caller) switches protection on.
    """
    if caller_spans is None:
        encoding = tokenizer.encode(text, add_special_tokens=False)
        ids = list(encoding.ids)
        char_to_token = encoding.char_to_token
    else:
        ids, char_to_token = _encode_protected(tokenizer, text, caller_spans)
    mask = [0] * len(ids)
    for start, end in spans:
        # transformers' mapping, quirks included: a span whose first character has no token
        # ends the marking; an end that maps to no token (or to token 0) runs to the end.
        start_token = char_to_token(start)
        end_token = char_to_token(end - 1)
        if start_token is None:
            break
        for index in range(start_token, end_token + 1 if end_token else len(ids)):
            mask[index] = 1
    return {"input_ids": ids, "attention_mask": [1] * len(ids), "assistant_masks": mask}


def _encode_protected(
    tokenizer: Any, text: str, caller_spans: Sequence[tuple[int, int]]
) -> tuple[list[int], Any]:
    pattern = _added_pattern(tokenizer)
    controls: list[tuple[int, int]] = []
    if pattern is not None:
        for match in pattern.finditer(text):
            start, end = match.span()
            if not any(a < end and start < b for a, b in caller_spans):
                controls.append((start, end))
    ids: list[int] = []
    pieces: list[tuple[int, int, int, Any]] = []  # (char start, char end, first token, encoding)
    position = 0
    previous = tokenizer.encode_special_tokens
    tokenizer.encode_special_tokens = True
    try:
        for start, end in [*controls, (len(text), len(text))]:
            if position < start:
                encoding = tokenizer.encode(text[position:start], add_special_tokens=False)
                pieces.append((position, start, len(ids), encoding))
                ids += encoding.ids
            if start < end:
                tokenizer.encode_special_tokens = False
                encoding = tokenizer.encode(text[start:end], add_special_tokens=False)
                tokenizer.encode_special_tokens = True
                pieces.append((start, end, len(ids), encoding))
                ids += encoding.ids
            position = end
    finally:
        tokenizer.encode_special_tokens = previous

    def char_to_token(char: int) -> int | None:
        for start, end, first, encoding in pieces:
            if start <= char < end:
                found = encoding.char_to_token(char - start)
                return None if found is None else first + found
        return None

    return ids, char_to_token


class ControlToken(dict[str, Any]):
    """One added token found in the caller's data: ``source`` (a chat source path), ``token``,
    ``offset`` (in that string)."""


def find_control_tokens(
    tokenizer: Any, data: Iterable[tuple[tuple[Any, ...], Any]]
) -> list[ControlToken]:
    """Every added token (special or not) that occurs in the strings of ``data``.

    ``data`` pairs a chat source path with a value; strings nested in lists and dicts are read.
    """
    pattern = _added_pattern(tokenizer)
    found: list[ControlToken] = []
    if pattern is None:
        return found
    stack = list(data)
    stack.reverse()
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            for match in pattern.finditer(value):
                found.append(ControlToken(source=path, token=match.group(), offset=match.start()))
        elif isinstance(value, dict):
            stack.extend(reversed([((*path, k), v) for k, v in value.items()]))
        elif isinstance(value, (list, tuple)):
            stack.extend(reversed([((*path, i), v) for i, v in enumerate(value)]))
    return found
