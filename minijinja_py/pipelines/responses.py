"""Rows of generated text back into messages: `RowRenderer`'s sibling for the way back.

A row is a JSON string (what the model wrote) or an object with `response` (that text) and,
optionally, `prefix` (the prompt before it, which may pre-write part of the turn); pass-through
keys are copied to the result as they are.  The result row is `{"message": {...}, "error":
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
    ) -> None:
        self.chat = chat
        self.schema = dict(schema) if schema is not None else None
        self.prefix = prefix
        self.tools = tools
        self.passthrough = tuple(passthrough)
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
        kept = {}
        if isinstance(value, Mapping):
            kept = {key: value.get(key) for key in self.passthrough}
        try:
            message = self._parse(value)
        except Exception as exc:  # every failure becomes this row's error record
            return {**kept, "message": None, "error": error_record(exc)}
        return {**kept, "message": message, "error": None}

    def _parse(self, value: Any) -> dict[str, Any]:
        prefix = self.prefix
        if isinstance(value, Mapping):
            unknown = sorted(set(value) - {"response", "prefix", *self.passthrough})
            if unknown:
                raise InputError(f"{bounded_repr(unknown[0])} is not a key of a response row")
            prefix = value.get("prefix", prefix)
            value = value.get("response")
        if not isinstance(value, str):
            raise InputError(
                'expected a JSON string or an object with a "response" string, not '
                f"{type(value).__name__}"
            )
        if not isinstance(prefix, str):
            raise InputError(f'"prefix" must be a string, not {type(prefix).__name__}')
        parsed = self.chat.parse_response(value, self.schema, prefix=prefix, tools=self.tools)
        return dict(parsed)
