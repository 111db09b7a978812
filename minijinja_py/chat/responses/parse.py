"""Parsing whole responses: one text, and the batch contract of transformers 5.23's
`tokenizer.parse_response` / `get_response_parser` (strings or token ids, one sequence or a
batch, one prefix broadcast or one per response).

Token ids are turned into text by a `decode` function the caller gives (ChatTemplate passes
its tokenizer's); without one, token ids are refused with ValueError.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...sandbox.limits import Limits
from .stream import ResponseParser
from .template import ResponseTemplate

__all__ = [
    "NoResponseTemplateError",
    "decode_with",
    "parse_response",
    "parse_responses",
    "response_parser",
]

Decode = Callable[[Any], "str | list[str]"]


class NoResponseTemplateError(AttributeError, ValueError):
    """There is no response_template to parse with. An `AttributeError` as in transformers
    (the tokenizer lacks the attribute), and a `ValueError`."""


def parse_response(
    text: str,
    response_template: Mapping[str, Any] | ResponseTemplate,
    *,
    prefix: str | None = None,
    tools: Sequence[Any] | None = None,
    limits: Limits | None = None,
) -> dict[str, Any]:
    """The message in one complete response."""
    parser = ResponseParser(response_template, prefix, tools=tools, limits=limits)
    parser.feed(text)
    message, _ = parser.finalize()
    return message


def decode_with(tokenizer: Any) -> Decode:
    """A `decode` for a `tokenizers.Tokenizer` (or a function giving one when first needed,
    so that text never loads a tokenizer): one sequence of ids to its text, a batch (a
    list of sequences, or a 2-D array or tensor) to a list of texts, special tokens kept as
    transformers' `decode` keeps them."""

    def decode(ids: Any) -> str | list[str]:
        nonlocal tokenizer
        if callable(tokenizer) and not hasattr(tokenizer, "decode"):
            tokenizer = tokenizer()
        if hasattr(ids, "tolist"):  # numpy arrays and torch tensors
            ids = ids.tolist()
        if isinstance(ids, int):
            ids = [ids]
        if not isinstance(ids, (list, tuple)):
            raise ValueError(f"expected text or token ids, got {type(ids).__name__}")
        try:
            if ids and isinstance(ids[0], (list, tuple)):
                return [tokenizer.decode(list(row), skip_special_tokens=False) for row in ids]
            return str(tokenizer.decode(list(ids), skip_special_tokens=False))
        except (TypeError, OverflowError) as exc:
            raise ValueError(f"could not decode the token ids: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - the tokenizer's own errors on bad ids
            if isinstance(exc, ValueError):
                raise
            raise ValueError(f"could not decode the token ids: {exc}") from None

    return decode


def _no_decode(ids: Any) -> str | list[str]:
    raise ValueError(
        "token ids need a tokenizer to decode them: load the chat template with "
        "from_pretrained() from a folder holding tokenizer.json, or pass text"
    )


def _texts(value: Any, decode: Decode) -> tuple[list[str], bool]:
    """(texts, batched) for a response or prefix argument."""
    if isinstance(value, str):
        return [value], False
    if isinstance(value, (list, tuple)) and (not value or isinstance(value[0], str)):
        if not all(isinstance(item, str) for item in value):
            raise ValueError("a batch of responses must hold only strings (or only token ids)")
        return list(value), True
    decoded = decode(value)
    return ([decoded], False) if isinstance(decoded, str) else (list(decoded), True)


def parse_responses(
    response: Any,
    response_template: Mapping[str, Any] | ResponseTemplate | None,
    *,
    prefix: Any = None,
    tools: Sequence[Any] | None = None,
    decode: Decode | None = None,
    limits: Limits | None = None,
) -> dict[str, Any] | list[dict[str, Any]]:
    """transformers' `tokenizer.parse_response`: a message for one sequence, a list of
    messages for a batch."""
    if response_template is None:
        raise NoResponseTemplateError(
            "there is no response_template to parse responses with: the model folder's "
            "tokenizer_config.json has none; pass schema= or set response_template"
        )
    if prefix is None:
        raise ValueError(
            "parse_response needs prefix= (the prompt before the generation): chat templates "
            "often pre-write part of the assistant message (an opening <think>) that the "
            'parser must see; pass prefix="" (or []) when the response is the whole message'
        )
    decode = decode or _no_decode
    responses, batched = _texts(response, decode)
    if isinstance(prefix, (list, tuple)) and not prefix:
        prefixes, prefix_batched = [""], False  # (the explicit "no prefix", for every response)
    else:
        prefixes, prefix_batched = _texts(prefix, decode)
    if not prefix_batched:
        prefixes = prefixes * len(responses)
    elif len(prefixes) != len(responses):
        raise ValueError(
            f"got {len(responses)} response(s) but {len(prefixes)} prefix(es): prefix must be one "
            "sequence (used for every response) or one per response"
        )
    parsed = [
        parse_response(text, response_template, prefix=before, tools=tools, limits=limits)
        for text, before in zip(responses, prefixes, strict=True)
    ]
    return parsed if batched else parsed[0]


def response_parser(
    response_template: Mapping[str, Any] | ResponseTemplate | None,
    *,
    prefix: Any = None,
    tools: Sequence[Any] | None = None,
    decode: Decode | None = None,
    limits: Limits | None = None,
) -> ResponseParser:
    """transformers' `tokenizer.get_response_parser`: a stream parser, already past `prefix`."""
    if response_template is None:
        raise NoResponseTemplateError(
            "there is no response_template to build a response parser with: the model "
            "folder's tokenizer_config.json has none; pass response_template="
        )
    if prefix is not None and not isinstance(prefix, str):
        prefix = (decode or _no_decode)(prefix)
        if not isinstance(prefix, str):
            raise ValueError("prefix= must be one sequence (text, token ids or a 1-D array) here")
    return ResponseParser(response_template, prefix, tools=tools, limits=limits)
