"""The shapes of what the chat layer returns, for type checkers.

A `TypedDict` is a plain `dict` at run time: these classes add no cost and change no value;
they let `mypy --strict` know that `chat.tokenize(messages)["input_ids"]` is a
`list[int]`.
"""

from __future__ import annotations

from typing import Any, TypedDict

__all__ = ["ChatEncoding", "TokenizedBatch", "TokenizedChat"]


class _TokenizedChatOptional(TypedDict, total=False):
    # Present only when asked for: return_assistant_tokens_mask=True, return_text=True.
    assistant_masks: list[int]
    text: str


class TokenizedChat(_TokenizedChatOptional):
    """What `ChatTemplate.tokenize` returns for one conversation (and `tokenize_many` for each).

    `input_ids` and `attention_mask` are always there; `assistant_masks` (1 for a token of an
    assistant span) only with `return_assistant_tokens_mask=True`, `text` (the prompt the ids
    encode) only with `return_text=True`.

    >>> chat: TokenizedChat = {"input_ids": [1, 2], "attention_mask": [1, 1]}
    >>> chat["input_ids"]
    [1, 2]
    """

    input_ids: list[int]
    attention_mask: list[int]


class _TokenizedBatchOptional(TypedDict, total=False):
    assistant_masks: list[list[int]]
    text: list[str]


class TokenizedBatch(_TokenizedBatchOptional):
    """What `ChatTemplate.tokenize` returns for a batch: each key holds one list per conversation.

    >>> batch: TokenizedBatch = {"input_ids": [[1], [2, 3]], "attention_mask": [[1], [1, 1]]}
    >>> [len(ids) for ids in batch["input_ids"]]
    [1, 2]
    """

    input_ids: list[list[int]]
    attention_mask: list[list[int]]


class ChatEncoding(dict[str, Any]):
    """The token lists of a chat (a plain dict, equal to transformers' for the same keys), with
    `mask_source`: where its assistant_masks came from (one of `MASK_SOURCES`, a list of
    them for a batch, or None when no mask was asked for).  The attribute does not take part in
    dict equality, nor in a copy made with dict()."""

    mask_source: Any = None
    #: One line saying where the masks came from and why (a list for a batch; None when no
    #: mask was asked for), e.g. "inferred: from the end of '<|im_start|>assistant\\n' through
    #: '<|im_end|>'".
    mask_reason: Any = None
