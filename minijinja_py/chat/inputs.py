"""Caller values rebuilt as the plain JSON-like data a template sees."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

__all__ = ["REASONING_FIELDS", "offer_reasoning", "to_template_data"]

REASONING_FIELDS = ("reasoning_content", "thinking")


def to_template_data(value: Any) -> Any:
    """``value`` rebuilt from plain JSON-like data, as a template should see it.

    ``None``/``bool``/``int``/``float``/``str`` stay (subclasses such as enums become the plain
    value), dicts/lists/tuples are rebuilt (tuples as lists), dataclass instances and pydantic
    models become dicts of their fields, and anything else becomes the string ``"<TypeName>"``.
    Input nested too deeply (or containing itself) raises ``ValueError``.
    """
    try:
        return _plain(value)
    except RecursionError:
        raise ValueError("chat input is nested too deeply (or contains itself)") from None


_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any) -> Any:
    cls = type(value)
    if cls in _SCALAR_TYPES:
        return value
    if cls is dict:  # the common case, kept tight: most values are plain scalars
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                key = _key(key)
            out[key] = item if type(item) in _SCALAR_TYPES else _plain(item)
        return out
    if cls is list:
        return [item if type(item) in _SCALAR_TYPES else _plain(item) for item in value]
    return _plain_other(value, cls)


def _plain_other(value: Any, cls: type) -> Any:
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):  # bool cannot be subclassed, so this is an int subclass
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {_key(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)  # pydantic 2
    if callable(dump) and not isinstance(value, type):
        return _plain(dump())
    if hasattr(cls, "__fields__") and callable(getattr(value, "dict", None)):  # pydantic 1
        return _plain(value.dict())
    return f"<{cls.__name__}>"


def _key(key: Any) -> Any:
    plain = _plain(key)
    return plain if isinstance(plain, (str, int, float, bool)) or plain is None else str(plain)


def offer_reasoning(message: Any) -> Any:
    if isinstance(message, dict):
        present = [f for f in REASONING_FIELDS if f in message]
        if len(present) == 1:
            other = (
                REASONING_FIELDS[1] if present[0] == REASONING_FIELDS[0] else REASONING_FIELDS[0]
            )
            message[other] = message[present[0]]
    return message
