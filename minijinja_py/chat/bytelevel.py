"""A byte-level BPE's char_to_token without the tokenizers library's offsets.

For a byte-level BPE (GPT-2, Llama 3, Qwen: most chat models) each token's string spells
exactly the bytes of the text it covers, so the ids encoded without offsets (about three
quarters of the cost of an encode with them) give transformers' char_to_token from a table of
each id's byte length, kept per tokenizer and rebuilt when its configuration changes.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Callable, Iterable
from itertools import accumulate
from operator import itemgetter
from typing import Any
from weakref import WeakKeyDictionary

__all__ = ["byte_level_mapping", "byte_level_table"]


def byte_level_table(tokenizer: Any, spans: Iterable[tuple[int, int]]) -> list[int] | None:
    """Each id's byte length where `tokenizer` is a byte-level BPE whose char_to_token
    byte_level_mapping can give for these spans, else None (the library's offsets are
    needed)."""
    table = _byte_table(tokenizer)
    if table is None or not hasattr(tokenizer, "encode_batch_fast"):
        return None
    for start, end in spans:
        if start < 0 or end < 1:  # (the library's own error for a negative character)
            return None
    return table


def byte_level_mapping(table: Any, text: str, ids: list[int]) -> Callable[[int], int | None] | None:
    """transformers' char_to_token for `ids`, the encoding of `text` by a byte-level BPE whose
    byte lengths are `table`, or None where the ids do not spell the text's bytes.

    There each token's string spells exactly the bytes of the text it covers, and the tokens
    cover the text in order: their byte lengths (a table per tokenizer) summed give where each
    ends, and the token of a character is the one holding its first byte, which is what the
    library's char offsets give (a token holding part of a character's bytes is given the
    whole character, and char_to_token takes the first token that holds it).  Encoding without
    offsets costs about three quarters of encoding with them.  A call whose tokens do not add
    up to the text's bytes (an added token that strips whitespace, a token the table does not
    know) is left to the library's offsets."""
    count = len(ids)
    try:  # (an id past the table: the tokenizer changed under us)
        lengths = itemgetter(*ids)(table) if count > 1 else tuple(table[i] for i in ids)
    except IndexError:
        return None
    ascii_text = text.isascii()
    if sum(lengths) != (len(text) if ascii_text else len(text.encode("utf-8"))):
        return None
    # Where each block of tokens ends (a few dozen sums in C); a character's token is found
    # in its block, so no call walks every token in Python.
    block_ends = list(
        accumulate(
            map(
                sum,
                map(lengths.__getitem__, map(slice, range(0, count, _BLOCK), _block_stops(count))),
            )
        )
    )
    length = len(text)

    def char_to_token(char: int) -> int | None:
        if char >= length:
            return None
        at = char if ascii_text else len(text[:char].encode("utf-8"))
        block = bisect_right(block_ends, at)
        first = block * _BLOCK
        ends = list(
            accumulate(
                lengths[first : first + _BLOCK], initial=block_ends[block - 1] if block else 0
            )
        )
        return first + bisect_right(ends, at) - 1

    return char_to_token


_BLOCK = 64


def _block_stops(count: int) -> range:
    return range(_BLOCK, count + _BLOCK, _BLOCK)


# Byte-level BPE: the 256 characters that stand for the bytes (GPT-2's table: the printable
# Latin-1 characters for themselves, the others shifted past 255).
_BYTE_CHARS = frozenset(
    [chr(b) for b in range(33, 127)]
    + [chr(b) for b in range(161, 173)]
    + [chr(b) for b in range(174, 256)]
    + [chr(256 + n) for n in range(68)]
)
# A token whose byte length is unknown: any call that meets it sums past the text's bytes.
_UNKNOWN = 1 << 62
# Per tokenizer, while it lives: its configuration when its table was made, and the table.
_TABLES: WeakKeyDictionary[Any, tuple[tuple[Any, ...], list[int] | None]] = WeakKeyDictionary()
# The pre-tokenizers that split the text without changing or dropping any of it, besides the
# byte-level one, and the post-processors that leave offsets as they are without special tokens.
_SPLITTERS = frozenset(["Split", "Digits", "Punctuation"])
_KEEPING = frozenset(["ByteLevel", "TemplateProcessing"])


def _byte_table(tokenizer: Any) -> list[int] | None:
    """Each id's byte length where `tokenizer` is a byte-level BPE (see byte_level_mapping),
    else None; rebuilt when the tokenizer's configuration changes."""
    try:
        state = _configuration(tokenizer)
    except Exception:  # (not a tokenizers.Tokenizer: a test double, a wrapper)
        return None
    kept = _TABLES.get(tokenizer)
    if kept is not None and kept[0] == state:
        return kept[1]
    table = _build_table(tokenizer, state)
    _TABLES[tokenizer] = (state, table)
    return table


def _configuration(tokenizer: Any) -> tuple[Any, ...]:
    # What the table and its validity depend on, read at each call (about 2 microseconds).
    def state(part: Any) -> Any:
        return None if part is None else part.__getstate__()

    return (
        tokenizer.get_vocab_size(with_added_tokens=True),
        state(tokenizer.normalizer),
        state(tokenizer.pre_tokenizer),
        state(tokenizer.post_processor),
        type(tokenizer.model).__name__,
        tokenizer.truncation,
        tokenizer.padding,
    )


def _build_table(tokenizer: Any, state: tuple[Any, ...]) -> list[int] | None:
    size, normalizer, pre_tokenizer, post_processor, model, truncation, padding = state
    if normalizer is not None or truncation is not None or padding is not None:
        return None
    if model != "BPE" or pre_tokenizer is None:
        return None
    bpe = tokenizer.model
    if bpe.byte_fallback or bpe.continuing_subword_prefix or bpe.end_of_word_suffix:
        return None
    steps = json.loads(pre_tokenizer)
    steps = steps.get("pretokenizers", [steps]) if steps.get("type") == "Sequence" else [steps]
    byte_level = False
    for step in steps:
        if step.get("type") == "ByteLevel" and not step.get("add_prefix_space"):
            byte_level = True
        elif step.get("type") not in _SPLITTERS or step.get("behavior") == "Removed":
            return None
    if not byte_level:
        return None
    if post_processor is not None:
        steps = json.loads(post_processor)
        steps = steps.get("processors", [steps]) if steps.get("type") == "Sequence" else [steps]
        for step in steps:
            if step.get("type") not in _KEEPING or step.get("trim_offsets"):
                return None
    table = [_UNKNOWN] * size
    chars = _BYTE_CHARS
    model_ids = set()
    for token, index in tokenizer.get_vocab(with_added_tokens=False).items():
        if 0 <= index < size:
            model_ids.add(index)
            if token and chars.issuperset(token):
                table[index] = len(token)
    for index, added in tokenizer.get_added_tokens_decoder().items():
        if not 0 <= index < size:
            continue
        length = len(added.content.encode("utf-8"))
        if added.lstrip or added.rstrip or not length:  # (it may take the text around it)
            table[index] = _UNKNOWN
        elif index in model_ids and table[index] != length:
            table[index] = _UNKNOWN  # (the model's token of that id spells other bytes)
        else:
            table[index] = length
    return table
