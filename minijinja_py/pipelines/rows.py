"""One row of data in, one row of results out; every failure is an error record in its place.

A row is a mapping (a JSON object, a row of an Arrow table, a `datasets` example) that holds:

- `messages`: the conversation, a list of message objects (or that list, or each message, as
  JSON text);
- `tools` and `documents` (optional): this conversation's tools and documents (or JSON text);
  when absent or null, the renderer's configured ones are used;
- any other key: a template variable of this conversation, overriding the configured variables.

A row never chooses the template or an option of the run. The keys in `RESERVED_KEYS` (the
options of `ChatTemplate.render` and of transformers' `apply_chat_template`) and the model's
special-token names are refused: such a row becomes an `InputError` record, so that a data
line cannot replace the configured template, turn on the generation prompt or change the model's
`eos_token`. Those belong to whoever configures the run.

The result row holds `text` (`None` on failure), `assistant_spans` (when asked for: the
`[start, end)` character spans of the `{% generation %}` blocks) and `error`: `None`, or
`error_record` of the failure: `{"kind", "message", "line", "column", "input_line"}`, where
`line` and `column` are a position in the template (a template error's; `None` otherwise) and
`input_line` the row's number in its input file, from 1 (its line in JSONL, its row in
Parquet), where the reader knows it (`None` otherwise).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..chat import SPECIAL_TOKEN_NAMES, ChatTemplate
from ..chat.loading import json_deeper_than
from ..errors import TemplateError, bounded_repr, bounded_text
from .fastjson import FAST_DECODE, ints_bounded

__all__ = [
    "MAX_INT_DIGITS",
    "MAX_JSON_DEPTH",
    "RESERVED_KEYS",
    "InputError",
    "RowRenderer",
    "error_record",
    "parse_json",
]

#: Keys a row may not carry: they choose the template or an option of the whole run.
RESERVED_KEYS = frozenset(
    {
        # ChatTemplate.render
        "chat_template",
        "add_generation_prompt",
        "continue_final_message",
        # transformers' apply_chat_template
        "tokenize",
        "padding",
        "truncation",
        "max_length",
        "return_tensors",
        "return_dict",
        "return_assistant_tokens_mask",
        "tokenizer_kwargs",
    }
)
#: Conversation data of a row; every other key of a row is a template variable.
DATA_KEYS = ("messages", "tools", "documents")
#: Nesting of a JSON value (arrays and objects); deeper input is refused before it is parsed.
MAX_JSON_DEPTH = 100
#: Digits of a JSON integer (Python's own default limit for converting text to int).
MAX_INT_DIGITS = 4300


class InputError(ValueError):
    """A row that is not a conversation: wrong shape, a reserved key, oversized numbers."""


def _bounded_int(digits: str) -> int:
    count = len(digits) - digits.startswith("-")
    if count > MAX_INT_DIGITS:
        raise InputError(f"an integer of {count} digits: at most {MAX_INT_DIGITS} are accepted")
    return int(digits)


# One decoder for every line: json.loads given parse_int builds a new one per call, which cost
# a batch 4 us a row (a sixth of reading one).
_DECODE = json.JSONDecoder(parse_int=_bounded_int).decode


def _check_depth(text: str) -> None:
    # (a linear scan: a regex for strings backtracked on an unterminated one of escapes)
    if json_deeper_than(text, MAX_JSON_DEPTH):
        raise InputError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")


def parse_json(text: str) -> Any:
    """`text` parsed as strict JSON, refusing nesting deeper than `MAX_JSON_DEPTH` and
    integers longer than `MAX_INT_DIGITS` digits with `InputError`.

    >>> parse_json('{"messages": []}')
    {'messages': []}
    """
    _check_depth(text)
    if text.startswith("\ufeff"):  # (json.loads's own check, which decode() skips)
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    if FAST_DECODE is not None and ints_bounded(MAX_INT_DIGITS):
        try:
            return FAST_DECODE(text)
        except Exception:  # noqa: BLE001, S110 - json decides: its value, or its error (fastjson)
            pass
    try:
        return _DECODE(text)
    except RecursionError:  # the caller's stack was already deep
        raise InputError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None


def _describe(exc: BaseException) -> str:
    # Bounded text whatever the exception holds (an int past the digit limit, a 45 MB render).
    if isinstance(exc, KeyError) and len(exc.args) == 1:
        return f"missing key {bounded_repr(exc.args[0])}"
    return bounded_text(exc) or type(exc).__name__


def _encodable(text: str) -> str:
    """`text` with lone surrogates written as `\\udxxx` escapes, so that UTF-8 can hold it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def error_record(exc: BaseException) -> dict[str, Any]:
    """The error record of a failed row: the exception's class name as `kind`, its message,
    the line and column of the template it points at (a template error's; `None` otherwise:
    a `JSONDecodeError` says its column in the message) and `input_line`, the row's place in
    its input, which the reader fills in (`None` here).  The message is bounded text
    (`MAX_MESSAGE`), whatever the exception holds, and the record
    never fails to be made nor to be written as JSON: should describing the error fail, the
    record names only its class.  One row's failure never ends the run.

    >>> error_record(InputError("no messages"))
    {'kind': 'InputError', 'message': 'no messages', 'line': None, 'column': None, 'input_line': None}
    >>> error_record(ValueError(10**5000))["message"]
    '<int of 5001 digits>'
    """
    try:
        record = _record(exc)
        json.dumps(record, ensure_ascii=False).encode("utf-8")  # as it will be written
        return record
    except Exception:  # noqa: BLE001 - the record of last resort
        kind = _encodable(bounded_text(type(exc).__name__))
        message = f"<the error of this row could not be described ({kind})>"
        return {
            "kind": kind,
            "message": message,
            "line": None,
            "column": None,
            "input_line": None,
        }


def _record(exc: BaseException) -> dict[str, Any]:
    line = column = None
    if isinstance(exc, TemplateError):
        message = exc.message
        line, column = exc.lineno, exc.colno
    elif isinstance(exc, json.JSONDecodeError):
        # (a position in the JSON text, not in the template: said in the message)
        where = (
            f"column {exc.colno}" if exc.lineno == 1 else f"line {exc.lineno} column {exc.colno}"
        )
        message = f"{bounded_text(exc.msg)}: {where} of the JSON text"
    else:
        message = _describe(exc)
    return {
        "kind": type(exc).__name__,
        "message": _encodable(message),
        "line": line,
        "column": column,
        "input_line": None,
    }


def drop_none_fields(value: Any) -> Any:
    """`value` without the dict keys whose value is `None`, at every level.

    Arrow stores a list of messages as a list of structs whose fields are the union of all
    messages' keys, filling the missing ones with null; dropping them gives the template back the
    messages as they were written (`message.tool_calls is defined` stays false).
    """
    if isinstance(value, dict):
        return {k: drop_none_fields(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [drop_none_fields(item) for item in value]
    return value


def _data(value: Any, key: str) -> Any:
    """Conversation data as written, or as JSON text: the whole list, or each of its items (the
    `Json` feature of `datasets` stores each message as its own JSON text)."""
    if isinstance(value, str):
        return _parse_field(value, key)
    if isinstance(value, list):
        # (the types of the items, gathered in C: a list of dicts, the usual one, is done)
        kinds = set(map(type, value))
        if kinds - _DICT_ONLY and any(issubclass(kind, str) for kind in kinds):
            return [_parse_field(item, key) if isinstance(item, str) else item for item in value]
    return value


_DICT_ONLY = {dict}


def _parse_field(text: str, key: str) -> Any:
    try:
        return parse_json(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{bounded_repr(key)} holds invalid JSON: {exc}") from None


class RowRenderer:
    """Renders rows of conversations with one chat template and one set of run options.

    The template is compiled once per process (pickling carries its source, not the compiled
    form), never per row. The result columns are `columns`: `text`, `assistant_spans`
    with `spans` (the generation blocks), `input_ids` and `assistant_masks` with `tokens`
    (as `ChatTemplate.tokenize` makes them with the chat's tokenizer), and `error`.

    Examples:
        >>> chat = ChatTemplate.from_string("{{ greeting }} {{ messages[0].content }}")
        >>> renderer = RowRenderer(chat, variables={"greeting": "Hi"})
        >>> renderer.render_row({"messages": [{"role": "user", "content": "Bob"}]})
        {'text': 'Hi Bob', 'error': None}
        >>> renderer.render_row({"messages": [], "chat_template": "{{ 1 }}"})["error"]["message"]
        "'chat_template' is an option of the run, not a template variable"
    """

    passthrough: tuple[str, ...]
    variables: dict[str, Any]

    def __init__(
        self,
        chat: ChatTemplate,
        *,
        tools: Any = None,
        documents: Any = None,
        add_generation_prompt: bool = False,
        continue_final_message: bool | str = False,
        variables: Mapping[str, Any] | None = None,
        spans: bool = False,
        tokens: bool = False,
        passthrough: tuple[str, ...] | list[str] = (),
    ) -> None:
        if tokens:
            if continue_final_message:
                # (transformers refuses return_assistant_tokens_mask with it too)
                raise ValueError("assistant masks are not made for continue_final_message")
            chat.tokenizer  # noqa: B018 - a chat without a tokenizer fails here, not on each row
        self.chat = chat
        self.tools = tools
        self.documents = documents
        self.add_generation_prompt = add_generation_prompt
        self.continue_final_message = continue_final_message
        self.variables = dict(variables or {})
        self.spans = spans
        #: whether rows get ``input_ids`` and ``assistant_masks`` (the chat's tokenizer)
        self.tokens = tokens
        #: keys copied to the output beside the result and not given to the template
        self.passthrough = tuple(passthrough)
        self._reserved = self._reserved_keys()

    def _reserved_keys(self) -> frozenset[str]:
        return RESERVED_KEYS | frozenset(SPECIAL_TOKEN_NAMES) | frozenset(self.chat.special_tokens)

    # A set pickles in an order that varies between processes; the state stays plain and ordered
    # so that ``datasets`` fingerprints a renderer the same way in every process.
    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_reserved"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._reserved = self._reserved_keys()

    @property
    def columns(self) -> tuple[str, ...]:
        """The result columns, in order."""
        spans = ("assistant_spans",) if self.spans else ()
        tokens = ("input_ids", "assistant_masks") if self.tokens else ()
        return ("text", *spans, *tokens, "error")

    def render_value(self, value: Any) -> dict[str, Any]:
        """One parsed JSON line: a list of messages, or a row object."""
        if isinstance(value, list):
            value = {"messages": value}
        return self.render_row(value)

    def render_row(self, row: Any, drop_none: bool = False) -> dict[str, Any]:
        """The result row of `row`; `drop_none` drops None-valued fields (Arrow's filling)."""
        try:
            text, spans, encoded = self._render(row, drop_none)
        except Exception as exc:  # every failure becomes this row's error record
            return self._failed(exc)
        return self._result(text, spans, encoded)

    def _render(
        self, row: Any, drop_none: bool
    ) -> tuple[str, list[tuple[int, int]], dict[str, Any] | None]:
        if row.__class__ is not dict and not isinstance(row, Mapping):  # (an ABC's check is slow)
            raise InputError(
                'expected a JSON object with "messages" or a JSON list of messages, not '
                f"{_json_type(row)}"
            )
        variables = dict(self.variables)
        tools, documents, messages = self.tools, self.documents, None
        passthrough = self.passthrough
        reserved = self._reserved
        for key, value in row.items():
            if key in passthrough:
                continue
            if key in reserved:
                # A null is an absent key, as transformers drops None-valued keys: Arrow's
                # schema union gives every row a column that one row set, so only a row that
                # really sets a reserved key is refused.
                if value is None:
                    continue
                if key in RESERVED_KEYS:
                    raise InputError(f"{bounded_repr(key)} is an option of the run, not a template variable")
                raise InputError(f"{bounded_repr(key)} is a special token of the model, not a row's variable")
            if value is None and drop_none:
                continue
            if key == "messages":
                messages = _data(value, key)
            elif key == "tools":
                tools = _data(value, key) if value is not None else tools
            elif key == "documents":
                documents = _data(value, key) if value is not None else documents
            else:
                variables[key] = drop_none_fields(value) if drop_none else value
        if messages is None:
            raise InputError('the row has no "messages"')
        if not isinstance(messages, list):
            raise InputError(f'"messages" must be a list of messages, not {_json_type(messages)}')
        if drop_none:
            messages = drop_none_fields(messages)
            tools = drop_none_fields(tools)
            documents = drop_none_fields(documents)
        options = dict(
            tools=tools,
            documents=documents,
            add_generation_prompt=self.add_generation_prompt,
            continue_final_message=self.continue_final_message,
            **variables,
        )
        # One conversation per row: each call is given a list of one, so that a list of
        # conversations is refused, not rendered as a batch.
        encoded = None
        if self.tokens:
            # As ChatTemplate.tokenize makes them: the ids of the whole text, and the mask of the
            # assistant spans (the generation blocks, or the turns inferred without them); the
            # text comes with them, rendered once.
            del options["continue_final_message"]
            encoded = self.chat.tokenize_many(
                [messages], return_assistant_tokens_mask=True, return_text=True, **options
            )[0]
        if self.spans:
            text, spans = self.chat.render_with_spans(messages, **options)
        elif encoded is not None:
            text, spans = encoded["text"], []
        else:
            text, spans = self.chat.render_many([messages], **options)[0], []
        if not text.isascii():
            _check_encodable(text)
        return text, spans, encoded

    def _result(
        self, text: str, spans: list[tuple[int, int]], encoded: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        # The one place a successful row's columns are built.
        result: dict[str, Any] = {"text": text}
        if self.spans:
            result["assistant_spans"] = [list(span) for span in spans]
        if encoded is not None:
            result["input_ids"] = encoded["input_ids"]
            result["assistant_masks"] = encoded["assistant_masks"]
        result["error"] = None
        return result

    def _failed(self, exc: BaseException) -> dict[str, Any]:
        result: dict[str, Any] = dict.fromkeys(self.columns)
        result["error"] = error_record(exc)
        return result

    def failed_row(self, exc: BaseException) -> dict[str, Any]:
        """The result row of a row that could not even be read (invalid JSON)."""
        return self._failed(exc)


def _check_encodable(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(
            f"the text holds a lone surrogate (U+{ord(text[exc.start]):04X}) at index {exc.start}, "
            "which UTF-8 cannot encode"
        ) from None


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "a number"
    return names.get(type(value), type(value).__name__)
