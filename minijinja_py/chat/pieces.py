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

from collections.abc import Sequence
from typing import Any
from weakref import WeakKeyDictionary

from .kept import KeptBytes

__all__ = ["encode_by_pieces"]


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
    tag, pattern, token_ids = cutter
    plans: list[list[Any]] = []  # per text: id lists, or the index of a piece to encode
    missing: list[str] = []
    waiting: dict[str, int] = {}
    for text in texts:
        plan: list[Any] = []
        position = 0
        matches = pattern.finditer(text) if pattern is not None else ()
        for match in matches:
            start, end = match.span()
            if position < start:
                plan.append(_piece(text[position:start], tag, kept, missing, waiting))
            plan.append(token_ids[match.group()])
            position = end
        if position < len(text):
            plan.append(_piece(text[position:] if position else text, tag, kept, missing, waiting))
        plans.append(plan)
    encoded = encode(tokenizer, missing) if missing else []
    for piece, ids in zip(missing, encoded, strict=True):
        # (about what the key and the list hold: the string, 8 bytes an id, the containers)
        kept.put((tag, piece), ids, len(piece) + 8 * len(ids) + 200)
    results = []
    for plan in plans:
        ids = []
        for part in plan:
            ids += encoded[part] if type(part) is int else part
        results.append(ids)
    return results


def _piece(piece: str, tag: object, kept: KeptBytes, missing: list[str], waiting: dict) -> Any:
    # The piece's kept ids (a list), or the index of its place among the pieces to encode.
    ids = kept.get((tag, piece))
    if ids is not None:
        return ids
    index = waiting.get(piece)
    if index is None:
        index = waiting[piece] = len(missing)
        missing.append(piece)
    return index


# Per tokenizer while it lives: the byte table its cutter was made with (bytelevel.py makes a
# new one whenever the tokenizer's configuration changes), and the cutter (a tag unique to it,
# which keys its pieces in the store, the added tokens' pattern, each one's id), or None.
_CUTTERS: WeakKeyDictionary[Any, tuple[Any, Any]] = WeakKeyDictionary()


def _cutter(
    tokenizer: Any, table: Any, pattern_of: Any
) -> tuple[object, Any, dict[str, list[int]]] | None:
    found = _CUTTERS.get(tokenizer)
    if found is not None and found[0] is table:
        return found[1]
    cutter = _make_cutter(tokenizer, pattern_of)
    _CUTTERS[tokenizer] = (table, cutter)
    return cutter


def _make_cutter(
    tokenizer: Any, pattern_of: Any
) -> tuple[object, Any, dict[str, list[int]]] | None:
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
    return object(), pattern_of(tokenizer), token_ids
