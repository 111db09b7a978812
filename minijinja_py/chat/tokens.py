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

import json
import os
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate
from operator import itemgetter
from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

from .loading import read_text
from .types import TokenizedChat

__all__ = ["ControlToken", "encode_chat", "find_control_tokens", "load_tokenizer"]


def load_tokenizer(source: Any) -> Any:
    """A `tokenizers.Tokenizer` from a model folder's `tokenizer.json` (or one given)."""
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
    # (an ASCII text, which Python knows without reading it, holds no surrogate)
    unencodable = None if text.isascii() else _SURROGATE.search(text)
    if unencodable is not None:
        raise ValueError(
            f"the rendered text holds a lone surrogate (U+{ord(unencodable.group()):04X}) at"
            f" character {unencodable.start()}, which cannot be encoded as UTF-8 or tokenized"
        )
    char_to_token: Callable[[int], int | None] | None = None
    if caller_spans is not None:
        ids, char_to_token = _encode_protected(tokenizer, text, caller_spans)
    elif not masks:
        ids = _ids(tokenizer, text)
    else:
        ids, char_to_token = _encode_byte_level(tokenizer, text, spans)
        if char_to_token is None:
            encoding = tokenizer.encode(text, add_special_tokens=False)
            ids = encoding.ids
            char_to_token = encoding.char_to_token
    result: TokenizedChat = {"input_ids": ids, "attention_mask": [1] * len(ids)}
    if masks:
        result["assistant_masks"] = assistant_mask(len(ids), spans, char_to_token)
    return result


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


def _ids(tokenizer: Any, text: str) -> list[int]:
    # The ids alone: the library's encode without the offsets nobody reads (tokenizers 0.20.2
    # and later; before, its plain encode).
    fast = getattr(tokenizer, "encode_batch_fast", None)
    if fast is None:
        return list(tokenizer.encode(text, add_special_tokens=False).ids)
    return fast([text], add_special_tokens=False)[0].ids  # (a new list at each call)


def _encode_byte_level(
    tokenizer: Any, text: str, spans: Sequence[tuple[int, int]]
) -> tuple[list[int], Callable[[int], int | None] | None]:
    """The ids of `text` and transformers' char_to_token without the library's offsets, for a
    byte-level BPE (GPT-2, Llama 3, Qwen: most chat models), or no mapping where that does
    not hold.

    There each token's string spells exactly the bytes of the text it covers, and the tokens
    cover the text in order: their byte lengths (a table per tokenizer) summed give where each
    ends, and the token of a character is the one holding its first byte, which is what the
    library's char offsets give (a token holding part of a character's bytes is given the
    whole character, and char_to_token takes the first token that holds it).  Encoding without
    offsets costs about three quarters of encoding with them.  A call whose tokens do not add
    up to the text's bytes (an added token that strips whitespace, a token the table does not
    know) is left to the library's offsets."""
    table = _byte_table(tokenizer)
    if table is None or not hasattr(tokenizer, "encode_batch_fast"):
        return [], None
    for start, end in spans:
        if start < 0 or end < 1:  # (the library's own error for a negative character)
            return [], None
    ids = _ids(tokenizer, text)
    count = len(ids)
    try:  # (an id past the table: the tokenizer changed under us)
        lengths = itemgetter(*ids)(table) if count > 1 else tuple(table[i] for i in ids)
    except IndexError:
        return [], None
    ascii_text = text.isascii()
    if sum(lengths) != (len(text) if ascii_text else len(text.encode("utf-8"))):
        return [], None
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

    return ids, char_to_token


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
    """Each id's byte length where `tokenizer` is a byte-level BPE (see _encode_byte_level),
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
    import json

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


_SURROGATE = re.compile("[\ud800-\udfff]")


# Per tokenizer with added tokens that are not special: a copy of it whose added tokens are all
# special, set to encode them as text, and the pattern of those tokens (see _plain_encoder).
_PLAIN: WeakKeyDictionary[Any, tuple[Any, tuple[Any, re.Pattern[str]] | None]] = (
    WeakKeyDictionary()
)


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
    others = sorted({t.content for t in decoder.values() if not t.special and t.content}, key=len)
    made = None
    if others:
        from tokenizers import Tokenizer

        spec = json.loads(tokenizer.to_str())
        for added in spec.get("added_tokens") or []:
            added["special"] = True
        copy = Tokenizer.from_str(json.dumps(spec))
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
