"""Padding token ids in Python as the tokenizers library pads a batch (and transformers'
tokenizer.pad() pads): to the longest sequence or to a fixed length, rounded up to a multiple,
on the left or the right, with attention masks of zeros over the pads.

The drop-in pads here where it encodes without the library's padding: ids encoded without
offsets (chat/tokens.py, byte-level) and ids encoded in protected pieces (chat/sanitize.py).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["pad_ids"]


def pad_ids(
    sequences: Sequence[list[int]],
    padding: str,
    max_length: int | None,
    multiple: int | None,
    side: str,
    pad_id: int,
) -> tuple[list[list[int]], list[list[int]], list[int]]:
    """(input_ids, attention_mask, the pads put before each sequence) of `sequences` padded
    by `padding` ("longest", "max_length" or "do_not_pad"); a sequence longer than the goal
    is left as it is."""
    target = None
    if padding == "longest":
        target = max((len(ids) for ids in sequences), default=0)
    elif padding == "max_length":
        target = max_length
    input_ids: list[list[int]] = []
    attention: list[list[int]] = []
    before: list[int] = []
    for ids in sequences:
        length = len(ids)
        goal = length if target is None else target
        if padding != "do_not_pad" and multiple and goal % multiple:
            goal = (goal // multiple + 1) * multiple
        missing = max(goal - length, 0) if padding != "do_not_pad" else 0
        pads = [pad_id] * missing
        zeros = [0] * missing
        if side == "left":
            input_ids.append(pads + ids)
            attention.append(zeros + [1] * length)
            before.append(missing)
        else:
            input_ids.append(ids + pads)
            attention.append([1] * length + zeros)
            before.append(0)
    return input_ids, attention, before
