"""A text's token ids as the ids of its pieces between the tokenizer's added tokens, each
piece's ids kept between calls.

The tokenizers library cuts a text at its added tokens (leftmost-longest) before anything
else, and normalizes, pre-tokenizes and encodes each piece between them on its own: where no
normalizer runs and no added token strips the text around it or matches single words only, the
ids of a text are those of its pieces and its added tokens in order.  Rows of a data set
rendered by one template share many pieces (a system prompt, the tools' schemas, the text
around each turn), which are then encoded once while the store keeps them; the pieces not
kept are encoded in one call of the library.  Any other tokenizer is encoded whole.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any
from weakref import WeakKeyDictionary

from .kept import KeptBytes

__all__ = ["LONG_PIECE", "encode_by_pieces", "encode_one_by_pieces"]


def encode_by_pieces(
    tokenizer: Any,
    table: Any,
    texts: Sequence[str],
    kept: KeptBytes,
    encode: Any,
    pattern_of: Any,
) -> list[list[int]] | None:
    """The ids of each text, its pieces' ids taken from `kept` or encoded by `encode` (a list
    and its texts -> a list of id lists, one call) and kept; None for a tokenizer whose ids are not
    those of its pieces.  `table` is the tokenizer's byte table (bytelevel.py: a byte-level
    BPE without a normalizer, its configuration unchanged since the table was made);
    `pattern_of(tokenizer)` is the leftmost-longest pattern of its added tokens (tokens.py's)."""
    cutter = _cutter(tokenizer, table, pattern_of)
    if cutter is None or tokenizer.encode_special_tokens:
        return None
    tag, splitter, token_ids, _ = cutter
    plans: list[list[Any]] = []  # per text: id lists, or the index of a piece to encode
    missing: list[str] = []
    waiting: dict[str, int] = {}
    get = kept.get
    for text in texts:
        # (the pieces between added tokens, some empty, and the tokens, in turn, cut in C)
        parts = splitter.split(text) if splitter is not None else [text]
        plan: list[Any] = []
        for piece, token in zip(parts[0::2], [*parts[1::2], None], strict=True):
            if piece:
                ids = get((tag, piece))
                if ids is None:
                    index = waiting.get(piece)
                    if index is None:
                        index = waiting[piece] = len(missing)
                        missing.append(piece)
                    plan.append(index)
                else:
                    plan.append(ids)
            if token is not None:
                plan.append(token_ids[token])
        plans.append(plan)
    encoded = encode(tokenizer, missing) if missing else []
    for piece, ids in zip(missing, encoded, strict=True):
        _keep(kept, tag, piece, ids)
    results = []
    for plan in plans:
        ids = []
        for part in plan:
            ids += encoded[part] if type(part) is int else part
        results.append(ids)
    return results


def encode_one_by_pieces(
    tokenizer: Any, table: Any, text: str, kept: KeptBytes, encode: Any, pattern_of: Any
) -> list[int] | None:
    """encode_by_pieces of one text, which keeps only its long pieces (a tool list, a system
    prompt: what the next call may write again) and encodes everything else where it stands,
    all in one text on the calling thread (a list of pieces would go to the library's
    threads, which cost one conversation more than its pieces do).

    The long pieces are cut out by an added token (see _separators): the text encoded is
    ``run SEP long SEP run SEP long SEP run``, each `long` empty where its ids are kept, and its
    ids are cut at the separator's id again."""
    if len(text) < LONG_PIECE:
        return None  # (no piece of it is worth keeping)
    cutter = _cutter(tokenizer, table, pattern_of)
    if cutter is None or tokenizer.encode_special_tokens:
        return None
    tag, splitter, token_ids, separators = cutter
    if not separators:
        return None
    # (the pieces between added tokens, some empty, and the tokens, in turn, cut in C)
    parts = splitter.split(text) if splitter is not None else [text]
    if max(map(len, parts[0::2])) < LONG_PIECE:
        return None
    longs = [at for at in range(0, len(parts), 2) if len(parts[at]) >= LONG_PIECE]
    # A long piece is cut out from the second time it is met on: most are met once (a
    # conversation's own long message), and cutting one out costs a few passes over the ids.
    cut: list[int] = []
    found: list[list[int] | None] = []  # per piece cut out: its kept ids, or None
    get = kept.get
    for at in longs:
        piece = parts[at]
        ids = get((tag, piece))
        if ids is None:
            met = (tag, hash(piece))
            if get(met) is None:
                kept.put(met, True, _MET_SIZE)
                continue
        cut.append(at)
        found.append(ids)
    if not cut:
        return None
    # (one the text does not hold, so that its runs keep their added tokens: looked for only
    # now, a scan of the text per candidate that a text whose long pieces are new is spared)
    separator = next((one for one in separators if one[0] not in text), None)
    if separator is None:
        return None
    sep, sep_id = separator
    longs = cut
    written: list[str] = []
    start = 0
    for at, ids in zip(longs, found, strict=True):
        written += (*parts[start:at], sep, "" if ids is not None else parts[at], sep)
        start = at + 1
    written += parts[start:]
    encoded = encode(tokenizer, ["".join(written)])[0]
    # Segments: run, long, run, long, ..., run (2 per long piece, and the last run).
    segments: list[list[int]] = []
    begin = 0
    for _ in range(2 * len(longs)):
        try:
            end = encoded.index(sep_id, begin)
        except ValueError:
            return None  # (never, by _separators' rules; the caller encodes it whole)
        segments.append(encoded[begin:end])
        begin = end + 1
    segments.append(encoded[begin:])
    if sep_id in segments[-1]:
        return None
    ids = segments[0]
    for number, kept_ids in enumerate(found):
        if kept_ids is None:
            kept_ids = segments[2 * number + 1]
            _keep(kept, tag, parts[longs[number]], kept_ids)
        ids += kept_ids
        ids += segments[2 * number + 2]
    return ids


# The pieces a single text keeps: this long or longer (a tool list, a system prompt).  Keeping
# a piece costs a few microseconds; encoding this many characters costs tens of them.
LONG_PIECE = 256
# What a long piece met once weighs in the store (a key: the model's tag, the piece's hash).
_MET_SIZE = 120


def _keep(kept: KeptBytes, tag: object, piece: str, ids: list[int]) -> None:
    # (about what the key and the list hold: the string, 8 bytes an id, the containers)
    kept.put((tag, piece), ids, len(piece) + 8 * len(ids) + 200)


# A tokenizer's cutter: the tag keying its pieces in the store, the splitting pattern of its
# added tokens (None without any), each added token's id (a list of one), and its separators.
_Cutter = tuple[object, "re.Pattern[str] | None", dict[str, list[int]], list[tuple[str, int]]]

# Per tokenizer while it lives: the byte table its cutter was made with (bytelevel.py makes a
# new one whenever the tokenizer's configuration changes), and the cutter, or None.
_CUTTERS: WeakKeyDictionary[Any, tuple[Any, _Cutter | None]] = WeakKeyDictionary()


def _cutter(tokenizer: Any, table: Any, pattern_of: Any) -> _Cutter | None:
    found = _CUTTERS.get(tokenizer)
    if found is not None and found[0] is table:
        return found[1]
    cutter = _make_cutter(tokenizer, pattern_of)
    _CUTTERS[tokenizer] = (table, cutter)
    return cutter


def _make_cutter(tokenizer: Any, pattern_of: Any) -> _Cutter | None:
    added = tokenizer.get_added_tokens_decoder()
    token_ids: dict[str, list[int]] = {}
    for index, token in added.items():
        if token.lstrip or token.rstrip or token.single_word or not token.content:
            return None  # (it takes or refuses the text around it)
        if token.content in token_ids:
            return None  # (two ids for one text)
        token_ids[token.content] = [index]
    if len({token.normalized for token in added.values()}) > 1:
        # The library matches the tokens that are not normalized first, then the others in
        # what is left: one leftmost-longest pass is that only for tokens of one kind.
        return None
    pattern = pattern_of(tokenizer)
    splitter = None if pattern is None else re.compile(f"({pattern.pattern})")
    return object(), splitter, token_ids, _separators(tokenizer, token_ids)


def _separators(tokenizer: Any, token_ids: dict[str, list[int]]) -> list[tuple[str, int]]:
    """The added tokens that a text's runs and long pieces can be joined by and cut at again:
    (its text, its id) each.  Pieces hold no added token; joined, no added token may match
    across a join (none holds the separator's first character after its own first, none
    begins with the separator), and no piece may encode to the separator's id (it is not in
    the model's own vocabulary)."""
    try:
        vocabulary = set(tokenizer.get_vocab(with_added_tokens=False).values())
    except Exception:  # (a test double)
        return []
    found = []
    for text, ids in sorted(token_ids.items()):
        if ids[0] in vocabulary:
            continue
        if any(
            text[0] in other[1:] or (other != text and other.startswith(text))
            for other in token_ids
        ):
            continue
        found.append((text, ids[0]))
    return found
