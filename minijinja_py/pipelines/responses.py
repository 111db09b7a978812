"""Rows of generated text back into messages: `RowRenderer`'s sibling for the way back.

A row is a JSON string (what the model wrote) or an object with `response` (that text) and,
optionally, `prefix` (the prompt before it, which may pre-write part of the turn); other names
for the two keys are given with `response_key` and `prefix_key`, and pass-through keys are
copied to the result as they are.  The result row is `{"message": {...}, "error":
null}`, or the message null and the error a record `{"kind", "message", ...}`: one result per row,
whatever a row holds.

>>> from minijinja_py import ChatTemplate
>>> chat = ChatTemplate.from_string(
...     "{% for m in messages %}<|im_start|>{{ m.role }}\\n{{ m.content }}<|im_end|>\\n{% endfor %}"
...     "{% if add_generation_prompt %}<|im_start|>assistant\\n{% endif %}"
... )
>>> RowParser(chat).parse_value("Hello!<|im_end|>")
{'message': {'role': 'assistant', 'content': 'Hello!'}, 'error': None}
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..chat import ChatTemplate
from ..errors import bounded_repr
from .rows import InputError, error_record

__all__ = ["RowParser"]


class RowParser:
    """Parses rows of generated text with `chat`'s response template (its model's, `schema`,
    or the one inferred from its chat template), with `tools` to type call arguments."""

    def __init__(
        self,
        chat: ChatTemplate,
        *,
        schema: Mapping[str, Any] | None = None,
        prefix: str = "",
        tools: Any = None,
        passthrough: tuple[str, ...] | list[str] = (),
        response_key: str = "response",
        prefix_key: str = "prefix",
    ) -> None:
        if response_key == prefix_key:
            raise ValueError(f"the response and the prefix are both read from {response_key!r}")
        self.chat = chat
        self.schema: dict[str, Any] | None = dict(schema) if schema is not None else None
        self.prefix = prefix
        self.tools = tools
        self.passthrough: tuple[str, ...] = tuple(passthrough)
        #: the keys (columns) a row's generated text and prompt are read from
        self.response_key = response_key
        self.prefix_key = prefix_key
        # (the template is read, or inferred, once: a template that cannot be inverted fails
        # here, not on every row)
        if self.schema is None:
            chat.get_response_parser(prefix="")

    @property
    def columns(self) -> tuple[str, ...]:
        """The result columns, in order (pass-through columns come first)."""
        return ("message", "error")

    def parse_value(self, value: Any) -> dict[str, Any]:
        """The result row of one row: a JSON string, or an object with `response`."""
        # (every result row has every pass-through key, null where the row has none: the
        # columns of a file or table are the same in every row)
        kept = dict.fromkeys(self.passthrough)
        if isinstance(value, Mapping):
            kept = {key: value.get(key) for key in self.passthrough}
        try:
            message = self._parse(value)
        except Exception as exc:  # every failure becomes this row's error record
            return {**kept, "message": None, "error": error_record(exc)}
        return {**kept, "message": message, "error": None}

    def failed_row(
        self, exc: BaseException, kept: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        """The result row of a row that failed before it could be parsed (its JSON text did not
        decode, it was too long), with its pass-through values `kept`."""
        kept = kept or {}
        return {
            **{key: kept.get(key) for key in self.passthrough},
            "message": None,
            "error": error_record(exc),
        }

    def _parse(self, value: Any) -> dict[str, Any]:
        prefix = self.prefix
        response, before = self.response_key, self.prefix_key
        if isinstance(value, Mapping):
            unknown = sorted(set(value) - {response, before, *self.passthrough})
            if unknown:
                raise InputError(f"{bounded_repr(unknown[0])} is not a key of a response row")
            if response not in value:
                raise InputError(f"the row has no {_quoted(response)}")
            prefix = value.get(before, prefix)
            value = value[response]
        if not isinstance(value, str):
            raise InputError(
                f"expected a JSON string or an object with a {_quoted(response)} string, not "
                f"{type(value).__name__}"
            )
        if not isinstance(prefix, str):
            raise InputError(f"{_quoted(before)} must be a string, not {type(prefix).__name__}")
        parsed = self.chat.parse_response(value, self.schema, prefix=prefix, tools=self.tools)
        return dict(parsed)


def _quoted(key: str) -> str:
    """A key as the messages name it: in double quotes, as JSON writes it, cut at 60 characters
    (a key comes from the command line or a caller, and an error message stays short)."""
    return json.dumps(key if len(key) <= 60 else key[:57] + "...", ensure_ascii=False)
