"""Caller values rebuilt as the plain JSON-like data a template sees, as transformers 5.23 does.

A chat template is untrusted code from a model repository, so nothing the caller passes reaches
it as a live Python object: messages, tools, documents and every keyword argument are rebuilt by
:func:`to_template_data`.  The rules are those of transformers' ``apply_chat_template`` (5.23),
so that a template sees the same values here as there:

- ``None``, ``bool``, ``int``, ``float``, ``str`` stay; subclasses (enums, numpy scalars) become
  the plain value (``np.bool_(False)`` becomes ``False``, ``np.float32(1.5)`` becomes ``1.5``);
- mappings become dicts (read through ``items()``: a ``defaultdict`` gains no keys), lists stay
  lists and tuples stay tuples, each rebuilt item by item, keys included;
- dataclass instances and pydantic (2) models become dicts of their fields;
- anything else becomes the inert string ``"<TypeName>"``: ``"<ndarray>"``, ``"<PosixPath>"``,
  ``"<array>"``, ``"<bytes>"``, ``"<set>"``, ``"<Image>"``.

Data nested deeper than :data:`MAX_DEPTH` (or containing itself) is refused with a ``TypeError``
naming the argument, where transformers runs into Python's recursion limit.

A conversation is normalised by :func:`normalise_conversations`: an empty one is refused, a list
of conversations is a batch, each message must be a mapping (or a dataclass or pydantic model,
which transformers 5.23 fails on with an ``AttributeError``), its ``None``-valued keys are
dropped, and :func:`alias_reasoning` offers its reasoning under every name templates read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

__all__ = [
    "MAX_DEPTH",
    "REASONING_FIELDS",
    "alias_reasoning",
    "normalise_conversations",
    "to_template_data",
]

#: how deeply caller data may nest (messages, tools, documents, keyword arguments)
MAX_DEPTH = 200
#: names a message's reasoning is read under; templates read the first, gpt-oss reads the second
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")

_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})


class _TooDeep(Exception):
    pass


def to_template_data(value: Any, argument: str = "value") -> Any:
    """``value`` rebuilt from plain JSON-like data, as a template should see it (see the module).

    ``argument`` names the value in the ``TypeError`` raised for data nested too deeply.
    """
    try:
        return _plain(value, MAX_DEPTH)
    except _TooDeep:
        raise TypeError(
            f"{argument} is nested more than {MAX_DEPTH} levels deep (or contains itself)"
        ) from None


def _plain(value: Any, depth: int) -> Any:
    cls = type(value)
    if cls in _SCALAR_TYPES:
        return value
    if depth <= 0:
        raise _TooDeep
    depth -= 1
    if cls is dict:  # the common case, kept tight: most values are plain scalars
        out = {}
        for key, item in value.items():
            if type(key) not in _SCALAR_TYPES:
                key = _plain(key, depth)
            out[key] = item if type(item) in _SCALAR_TYPES else _plain(item, depth)
        return out
    if cls is list:
        return [item if type(item) in _SCALAR_TYPES else _plain(item, depth) for item in value]
    return _plain_other(value, cls, depth)


def _plain_other(value: Any, cls: type, depth: int) -> Any:
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):  # bool cannot be subclassed, so this is an int subclass
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {_plain(k, depth): _plain(v, depth) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(item, depth) for item in value]
    if isinstance(value, tuple):
        return tuple(_plain(item, depth) for item in value)
    if _is_numpy_scalar(cls):
        return _plain(value.item(), depth)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # One field at a time: arrays and images inside are not deep-copied.
        return {f.name: _plain(getattr(value, f.name), depth) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)  # pydantic 2
    if callable(dump) and not isinstance(value, type):
        return _plain(dump(), depth)
    return f"<{cls.__name__}>"


def _is_numpy_scalar(cls: type) -> bool:
    # numpy.generic, found without importing numpy: the caller's values already imported it.
    return any(base.__name__ == "generic" and base.__module__ == "numpy" for base in cls.__mro__)


def alias_reasoning(message: dict[str, Any]) -> dict[str, Any]:
    """``message`` with its reasoning under ``thinking`` (first) and ``reasoning_content`` (last).

    The reasoning is the first non-``None`` of ``reasoning_content``, ``thinking``, ``reasoning``;
    keys the message already has keep their place, as in transformers 5.23.
    """
    for key in REASONING_FIELDS:
        reasoning = message.get(key)
        if reasoning is not None:
            return {"thinking": reasoning, **message, "reasoning_content": reasoning}
    return message


def _message(message: Any) -> dict[str, Any]:
    if isinstance(message, Mapping):
        # Dropped before the rebuild, as transformers does: Arrow and Parquet rows carry a None
        # for every field a message lacks, and templates test for a key, not for None.
        kept = {key: item for key, item in message.items() if item is not None}
        return to_template_data(kept, "messages")
    if (dataclasses.is_dataclass(message) and not isinstance(message, type)) or (
        callable(getattr(message, "model_dump", None)) and not isinstance(message, type)
    ):
        plain = to_template_data(message, "messages")
        return {key: item for key, item in plain.items() if item is not None}
    raise TypeError(
        f"Chat messages should be dicts, dataclasses or pydantic models, but got {message!r}."
    )


def _conversation(conversation: Any) -> list[dict[str, Any]]:
    if hasattr(conversation, "messages") and not isinstance(conversation, (list, tuple, Mapping)):
        conversation = conversation.messages  # a Conversation-like object
    if not isinstance(conversation, (list, tuple)):
        raise TypeError(
            "messages must be a list of message dicts (or a list of such lists), not "
            f"{type(conversation).__name__}"
        )
    return [_message(message) for message in conversation]


def normalise_conversations(
    messages: Any, offer_reasoning: bool = True
) -> tuple[list[list[dict[str, Any]]], bool]:
    """The conversations of ``messages`` as plain data, and whether ``messages`` was a batch.

    A batch is a list whose first item is itself a list (or has ``.messages``), as transformers
    decides it.  Raises ``ValueError`` for an empty conversation and ``TypeError`` for a message
    that is not a mapping, with transformers' messages.
    """
    if isinstance(messages, (list, tuple)) and len(messages) == 0:
        raise ValueError(
            "Cannot apply chat template to an empty conversation. Provide at least one message."
        )
    batched = isinstance(messages, (list, tuple)) and (
        isinstance(messages[0], (list, tuple)) or hasattr(messages[0], "messages")
    )
    conversations = [_conversation(c) for c in (messages if batched else [messages])]
    if offer_reasoning:
        conversations = [[alias_reasoning(m) for m in chat] for chat in conversations]
    return conversations, batched
