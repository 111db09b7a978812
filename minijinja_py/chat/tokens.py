"""Token ids and assistant masks from a rendered conversation, with the `tokenizers` library.

`encode_chat` gives what transformers' `apply_chat_template(..., tokenize=True,
return_dict=True, return_assistant_tokens_mask=True)` gives: the text encoded once without
added special tokens (the template writes its own), an attention mask of ones, and a mask of
the tokens that the assistant spans' characters fall in, mapped as transformers maps them (the
token of a span's first character through the token of its last one).

With `protect_special_tokens` the text is encoded in pieces: at each added token the
*template* wrote, which stays a control token; every other piece is encoded with added tokens
read as ordinary text, so that a caller's `<|im_end|>` cannot end a turn.

`tokenizers` is imported here only (the `tokens` extra).
"""

from __future__ import annotations

import importlib
import json
import os
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

from .bytelevel import byte_level_mapping, byte_level_table
from .kept import KeptBytes
from .loading import read_text
from .pieces import encode_by_pieces, encode_one_by_pieces
from .types import TokenizedChat

__all__ = [
    "ControlToken",
    "encode_chat",
    "encode_chats",
    "encoded_ids",
    "find_control_tokens",
    "load_tokenizer",
]


def load_tokenizer(source: Any) -> Any:
    """A `tokenizers.Tokenizer` from a model folder's `tokenizer.json` (or one given)."""
    if source is None or not isinstance(source, (str, os.PathLike)):
        return source
    tokenizer_type = _tokenizer_class()
    path = Path(source)
    if path.is_dir():
        path = path / "tokenizer.json"
    text = read_text(path)  # size-capped, as every file a loader reads
    try:
        return tokenizer_type.from_str(text)
    except Exception as exc:  # the library's own parse errors
        raise ValueError(f"{path}: not a tokenizer file ({exc})") from None


def _tokenizer_class() -> Any:
    # (imported by name: the compiled build type-checks this module where the tokens extra
    # is not installed)
    return importlib.import_module("tokenizers").Tokenizer


def added_tokens(tokenizer: Any) -> list[str]:
    """The contents of the tokenizer's added tokens (special or not), longest first."""
    decoder = tokenizer.get_added_tokens_decoder()
    return sorted({token.content for token in decoder.values()}, key=len, reverse=True)


def _added_pattern(tokenizer: Any) -> re.Pattern[str] | None:
    tokens = tuple(t for t in added_tokens(tokenizer) if t)
    if not tokens:
        return None
    pattern = _PATTERNS.get(tokens)
    if pattern is None:
        if len(_PATTERNS) >= 8:  # (a process meets few tokenizers)
            _PATTERNS.clear()
        pattern = _PATTERNS[tokens] = _token_pattern(tokens)
    return pattern


_PATTERNS: dict[tuple[str, ...], re.Pattern[str]] = {}
# The nesting of groups up to which the tokens are matched through their trie (the regex
# parser recurses on groups); a deeper trie is matched as an alternation.
_TRIE_NESTING = 40


def _token_pattern(tokens: tuple[str, ...]) -> re.Pattern[str]:
    """A pattern that finds the tokens leftmost-longest, as the tokenizer matches its added
    tokens, by their trie: at each position the text is read once along one branch (an
    alternation of every token would try each token in turn at each `<`)."""
    trie: dict[str, Any] = {}
    for token in tokens:
        node = trie
        for char in token:
            node = node.setdefault(char, {})
        node[""] = True  # (a token ends here; "" is no character)
    # The pattern of each node, children before parents (an explicit stack: tokens may be long).
    patterns: dict[int, tuple[str, int]] = {}
    stack: list[tuple[dict[str, Any], bool]] = [(trie, False)]
    while stack:
        node, ready = stack.pop()
        if not ready:
            stack.append((node, True))
            stack.extend((child, False) for char, child in node.items() if char)
            continue
        branches = [
            (re.escape(char) + patterns[id(child)][0], patterns[id(child)][1])
            for char, child in sorted(node.items())
            if char
        ]
        nesting = max((depth for _, depth in branches), default=0)
        if not branches:
            text = ""
        elif len(branches) == 1:
            text = branches[0][0]
        else:
            text = "(?:" + "|".join(branch for branch, _ in branches) + ")"
            nesting += 1
        if "" in node and branches:
            text = "(?:" + text + ")?"  # (greedy: the longer token first)
            nesting += 1
        patterns[id(node)] = (text, nesting)
    text, nesting = patterns[id(trie)]
    if nesting > _TRIE_NESTING:
        # Longest first: leftmost-longest, as the tokenizer matches its added tokens.
        return re.compile("|".join(re.escape(t) for t in tokens))
    return re.compile(text)


def encode_chat(
    tokenizer: Any,
    text: str,
    spans: Sequence[tuple[int, int]],
    caller_spans: Sequence[tuple[int, int]] | None = None,
    masks: bool = True,
) -> TokenizedChat:
    """`input_ids`, `attention_mask` and (with `masks`) `assistant_masks` of `text`.

    `caller_spans` (the characters that came from the caller) switches protection on.
    A text no tokenizer can encode (a lone surrogate, which the caller's data may hold) is
    refused with a `ValueError`.
    """
    if caller_spans is None:
        return encode_chats(tokenizer, [text], [spans], masks)[0]
    _refuse_surrogates(text)
    ids, char_to_token = _encode_protected(tokenizer, text, caller_spans)
    result: TokenizedChat = {"input_ids": ids, "attention_mask": [1] * len(ids)}
    if masks:
        result["assistant_masks"] = assistant_mask(len(ids), spans, char_to_token)
    return result


def encode_chats(
    tokenizer: Any,
    texts: Sequence[str],
    spans: Sequence[Sequence[tuple[int, int]]],
    masks: bool = True,
    kept: KeptBytes | None = None,
) -> list[TokenizedChat]:
    """encode_chat of each text with its spans, unprotected, in one call of the library: a
    batch is encoded on its own threads, and a call of one text pays what one call costs.
    With `kept` (the model's store of pieces), the pieces between added tokens that it keeps
    are not encoded again (see pieces.py)."""
    for text in texts:
        _refuse_surrogates(text)
    table = byte_level_table(tokenizer, (span for one in spans for span in one) if masks else ())
    sequences = None if table is None else encoded_ids(tokenizer, texts, table, kept)
    results: list[TokenizedChat] = []
    if not masks:
        for ids in sequences or encoded_ids(tokenizer, texts):
            results.append({"input_ids": ids, "attention_mask": [1] * len(ids)})
        return results
    if sequences is None:
        if len(texts) > 1 and hasattr(tokenizer, "encode_batch"):
            encodings = tokenizer.encode_batch(list(texts), add_special_tokens=False)
        else:  # (one text, or a test double with the plain encode only)
            encodings = [tokenizer.encode(text, add_special_tokens=False) for text in texts]
        found = [(encoding.ids, encoding.char_to_token) for encoding in encodings]
    else:
        found = []
        for text, ids in zip(texts, sequences, strict=True):
            char_to_token = byte_level_mapping(table, text, ids)
            if char_to_token is None:
                encoding = tokenizer.encode(text, add_special_tokens=False)
                ids, char_to_token = encoding.ids, encoding.char_to_token
            found.append((ids, char_to_token))
    for (ids, char_to_token), one in zip(found, spans, strict=True):
        count = len(ids)
        results.append(
            {
                "input_ids": ids,
                "attention_mask": [1] * count,
                "assistant_masks": assistant_mask(count, one, char_to_token),
            }
        )
    return results


def _refuse_surrogates(text: str) -> None:
    # (an ASCII text, which Python knows without reading it, holds no surrogate)
    unencodable = None if text.isascii() else _SURROGATE.search(text)
    if unencodable is not None:
        raise ValueError(
            f"the rendered text holds a lone surrogate (U+{ord(unencodable.group()):04X}) at"
            f" character {unencodable.start()}, which cannot be encoded as UTF-8 or tokenized"
        )


def assistant_mask(count: int, spans: Sequence[tuple[int, int]], char_to_token: Any) -> list[int]:
    """The mask of the tokens the spans fall in, by transformers' mapping, quirks included: a
    span whose first character has no token ends the marking; an end that maps to no token
    (or to token 0) runs to the end.

    Each span gives a range of tokens; the ranges, sorted and merged, are marked by slices:
    linear in the tokens and the spans, however many spans run to the end."""
    ranges = []
    for start, end in spans:
        start_token = char_to_token(start)
        end_token = char_to_token(end - 1)
        if start_token is None:
            break
        stop = end_token + 1 if end_token else count
        if start_token < stop:
            ranges.append((start_token, stop))
    mask = [0] * count
    if not ranges:
        return mask
    ranges.sort()
    low, high = ranges[0]
    for start, stop in ranges:
        if start > high:
            mask[low:high] = [1] * (high - low)
            low = start
        if stop > high:
            high = stop
    mask[low:high] = [1] * (high - low)
    return mask


def encoded_ids(
    tokenizer: Any, texts: Sequence[str], table: Any = None, kept: KeptBytes | None = None
) -> list[list[int]]:
    """The ids of each text alone (without offsets, which nobody reads), in one call of the
    library; with the tokenizer's byte table and the model's store of pieces, by pieces
    (pieces.py) where the tokenizer allows: a batch by all its pieces, one text by its long
    ones."""
    if table is not None and kept is not None:
        if len(texts) == 1:
            one = encode_one_by_pieces(tokenizer, table, texts[0], kept, _plain_ids, _added_pattern)
            if one is not None:
                return [one]
        else:
            found = encode_by_pieces(tokenizer, table, texts, kept, _plain_ids, _added_pattern)
            if found is not None:
                return found
    return _plain_ids(tokenizer, texts)


def _plain_ids(tokenizer: Any, texts: Sequence[str]) -> list[list[int]]:
    # The library's encode without offsets (tokenizers 0.20.2 and later; before, its plain
    # encode).
    fast = getattr(tokenizer, "encode_batch_fast", None)
    if fast is None:
        return [list(tokenizer.encode(text, add_special_tokens=False).ids) for text in texts]
    return [encoding.ids for encoding in fast(list(texts), add_special_tokens=False)]


def _encode_byte_level(
    tokenizer: Any, text: str, spans: Sequence[tuple[int, int]]
) -> tuple[list[int], Callable[[int], int | None] | None]:
    """The ids of `text` and transformers' char_to_token without the library's offsets, or
    ([], None) where the byte-level mapping does not hold (see byte_level_mapping)."""
    table = byte_level_table(tokenizer, spans)
    if table is None:
        return [], None
    ids = encoded_ids(tokenizer, [text])[0]
    char_to_token = byte_level_mapping(table, text, ids)
    return (ids, char_to_token) if char_to_token is not None else ([], None)


# (the range written by chr(): the compiled build takes no surrogate in a string literal)
_SURROGATE = re.compile(f"[{chr(0xD800)}-{chr(0xDFFF)}]")


# Per tokenizer with added tokens that are not special: a copy of it whose added tokens are all
# special, set to encode them as text, and the pattern of those tokens (see _plain_encoder).
_PLAIN: WeakKeyDictionary[Any, tuple[Any, tuple[Any, re.Pattern[str]] | None]] = WeakKeyDictionary()


def _plain_encoder(tokenizer: Any) -> tuple[Any, re.Pattern[str]] | None:
    """A tokenizer that reads every added token as text, and the pattern of the added tokens
    that are not special; None where all are special (the library's `encode_special_tokens`
    reads those as text, and leaves the others matched: Qwen's `<tool_call>`, `<think>`).
    Made once per tokenizer and configuration."""
    try:
        state = tokenizer.get_vocab_size(with_added_tokens=True)
        decoder = tokenizer.get_added_tokens_decoder()
    except Exception:  # (not a tokenizers.Tokenizer: a test double, a wrapper)
        return None
    kept = _PLAIN.get(tokenizer)
    if kept is not None and kept[0] == state:
        return kept[1]
    others: list[str] = sorted(
        {t.content for t in decoder.values() if not t.special and t.content}, key=len
    )
    made = None
    if others:
        tokenizer_type = _tokenizer_class()
        spec = json.loads(tokenizer.to_str())
        for added in spec.get("added_tokens") or []:
            added["special"] = True
        copy = tokenizer_type.from_str(json.dumps(spec))
        copy.encode_special_tokens = True
        made = (copy, re.compile("|".join(re.escape(t) for t in reversed(others))))
    _PLAIN[tokenizer] = (state, made)
    return made


def _encode_protected(
    tokenizer: Any, text: str, caller_spans: Sequence[tuple[int, int]]
) -> tuple[list[int], Any]:
    pattern = _added_pattern(tokenizer)
    controls: list[tuple[int, int]] = []
    if pattern is not None:
        # The matches come in order: one sweep over the caller's spans, sorted by start,
        # keeping the furthest end of those that start before a match ends (a match
        # overlaps a span exactly when that end passes its start).
        ordered = sorted(caller_spans)
        following = 0
        reach = -1
        for match in pattern.finditer(text):
            start, end = match.span()
            while following < len(ordered) and ordered[following][0] < end:
                if ordered[following][1] > reach:
                    reach = ordered[following][1]
                following += 1
            if reach <= start:
                controls.append((start, end))
    ids: list[int] = []
    pieces: list[tuple[int, int, int, Any]] = []  # (char start, char end, first token, encoding)
    position = 0
    plain = _plain_encoder(tokenizer)
    previous = tokenizer.encode_special_tokens
    tokenizer.encode_special_tokens = True
    try:
        for start, end in [*controls, (len(text), len(text))]:
            if position < start:
                # (an added token left in a piece is the caller's: text, special or not)
                piece = text[position:start]
                encoder = plain if plain is not None and plain[1].search(piece) else None
                encoding = (encoder[0] if encoder else tokenizer).encode(
                    piece, add_special_tokens=False
                )
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

    starts = [piece[0] for piece in pieces]

    def char_to_token(char: int) -> int | None:
        # (the pieces are in order and do not overlap: the one that may hold char, by bisection)
        at = bisect_right(starts, char) - 1
        if at < 0:
            return None
        start, end, first, encoding = pieces[at]
        if not start <= char < end:
            return None
        found = encoding.char_to_token(char - start)
        return None if found is None else first + found

    return ids, char_to_token


class ControlToken(dict[str, Any]):
    """One added token found in the caller's data: `source` (a chat source path), `token`,
    `offset` (in that string)."""


def find_control_tokens(
    tokenizer: Any, data: Iterable[tuple[tuple[Any, ...], Any]]
) -> list[ControlToken]:
    """Every added token (special or not) that occurs in the strings of `data`.

    `data` pairs a chat source path with a value; strings nested in lists and dicts are read.
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
