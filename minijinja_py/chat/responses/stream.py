"""The incremental response parser: text in (the prompt's tail, then the model's output in
chunks of any size), regions and their values out as events, and the message at the end.

The buffer is scanned with the markers the current state can meet: inside an explicit region
only its closer; elsewhere every field's opener and the implicit field's closer. The earliest
match wins (the longest at one place, an opener before a closer, then the field's name), as in
transformers 5.23. Text that may still be the start of a marker is held back until more text
settles it; at most `MAX_ANCHOR` characters are held, and consumed text is dropped, so the
buffer stays bounded however long the stream. The whole stream is bounded by
`Limits.max_string` characters.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from ...errors import bounded_repr
from ...sandbox.limits import Limits
from .casting import cast_tool_calls, tool_parameters
from .content import STREAMABLE_PARSERS, apply_transform, parse_content
from .pattern import MAX_ANCHOR, Match, Scan
from .template import ResponseTemplate, ResponseTemplateField, load_response_template

__all__ = ["ResponseParser"]

Event = dict[str, Any]

# Consumed text is dropped from the buffer once this much of it has piled up.
_TRIM = 4 * MAX_ANCHOR
# The pieces of a region's text are joined this many at a time: a stream fed a character or two
# at a time keeps its open region as a few long strings, not one small string object (about 50
# bytes) per feed, so a region is held in about the memory of its text however it is fed.
_PIECES = 1024


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, dict)) and not value)


class ResponseParser:
    """transformers' `ResponseParser`: `feed(text)` returns the events the text settles,
    `finalize()` returns `(message, last_events)`; `initial_events` are those of the prefix.

    Events: `{"type": "region_open", "field"}`, `{"type": "region_chunk", "field", "text",
    "dirty"}` (`dirty` when the field's value is parsed from the text only at its close) and
    `{"type": "region_close", "field", "value"}`.

    `prefix` (the prompt before the generation) is required: templates often pre-write the
    start of the assistant turn (`<think>\\n`), which the parser must see; pass `""` when the
    response holds the whole message."""

    def __init__(
        self,
        response_template: Mapping[str, Any] | ResponseTemplate,
        prefix: str | None = None,
        *,
        tools: Sequence[Any] | None = None,
        limits: Limits | None = None,
    ) -> None:
        self._spec = load_response_template(response_template)  # type: ignore[arg-type]
        if prefix is None:
            raise ValueError(
                "parsing a response needs prefix= (the prompt sent before the generation): chat "
                "templates often pre-write part of the assistant message (an opening <think>), "
                'which the parser must see; pass prefix="" when the response is the whole message'
            )
        if not isinstance(prefix, str):
            raise ValueError(f"prefix must be a string, got {type(prefix).__name__}")
        self._max = (limits or Limits()).max_string
        self._params = tool_parameters(tools)
        self._buffer = ""
        self._shift = 0  # (characters dropped from the buffer's start)
        self._pos = 0
        self._seen = 0
        self._scans: dict[int, Scan] = {}
        self._output: dict[str, Any] = copy.deepcopy(self._spec.defaults)
        self._current: str | None = self._spec.implicit
        self._captures: dict[str, str] = {}
        self._body: list[str] = []  # (the open region's text: blocks of _PIECES pieces)
        self._pieces: list[str] = []  # (and the pieces routed since the last block)
        self._opened = False
        self._finalized = False
        self.initial_events: list[Event] = []
        if prefix:
            tail = self._spec.after_last_anchor(self._bounded(prefix))
            if tail:
                self._buffer = tail
                self._process(self.initial_events, eos=False)

    def _bounded(self, text: str) -> str:
        self._seen += len(text)
        if self._seen > self._max:
            raise ValueError(
                f"the response (with its prefix) is longer than max_string ({self._max} characters)"
            )
        return text

    def feed(self, text: str) -> list[Event]:
        """Add model output; returns the events it settles."""
        if self._finalized:
            raise RuntimeError("ResponseParser already finalized")
        if not isinstance(text, str):
            raise ValueError(f"feed() takes text, got {type(text).__name__}")
        if text:
            self._buffer += self._bounded(text)
        events: list[Event] = []
        self._process(events, eos=False)
        return events

    def finalize(self) -> tuple[dict[str, Any], list[Event]]:
        """End the stream: `(message, events)`. Raises ValueError when a required field
        (`"optional": false`) never appeared."""
        if self._finalized:
            raise RuntimeError("ResponseParser already finalized")
        events: list[Event] = []
        self._process(events, eos=True)
        missing = [
            name
            for name, item in self._spec.fields.items()
            if not item.optional and name not in self._output
        ]
        if missing:
            raise ValueError(
                f"Required response_template fields missing from the parsed output: {missing}"
            )
        defaults = self._spec.defaults
        self._output = {k: v for k, v in self._output.items() if k in defaults or not _empty(v)}
        self._finalized = True
        return self._output, events

    # scanning -----------------------------------------------------------------------------

    def _watched(self) -> list[tuple[str, ResponseTemplateField]]:
        fields = self._spec.fields
        if self._current is not None and self._current != self._spec.implicit:
            closer = fields[self._current]
            return [("close", closer)] if closer.close is not None else []
        watched = [("open", item) for item in fields.values() if item.open is not None]
        if self._spec.implicit is not None and fields[self._spec.implicit].close is not None:
            watched.append(("close", fields[self._spec.implicit]))
        return watched

    def _search(self, kind: str, item: ResponseTemplateField, eos: bool) -> Match | None:
        anchor = item.open if kind == "open" else item.close
        assert anchor is not None
        key = id(anchor)
        found, self._scans[key] = anchor.search(
            self._buffer, self._pos, partial=not eos, scan=self._scans.get(key), shift=self._shift
        )
        return found

    def _scan(self, eos: bool) -> tuple[tuple[str, ResponseTemplateField, Match] | None, int]:
        """The match to act on now (or None), and where held-back text begins."""
        hold = len(self._buffer)
        best: tuple[str, ResponseTemplateField, Match] | None = None
        best_key: tuple[Any, ...] | None = None
        for kind, item in self._watched():
            found = self._search(kind, item, eos)
            if found is None:
                continue
            if not eos and (found.partial or self._may_grow(kind, item, found)):
                hold = min(hold, found.start)
                continue
            key = (found.start, found.start - found.end, 0 if kind == "open" else 1, item.name)
            if best_key is None or key < best_key:
                best_key, best = key, (kind, item, found)
        # an earlier (or same-place) marker still pending could be the real one
        if best is not None and best[2].start >= hold:
            best = None
        return best, hold

    def _may_grow(self, kind: str, item: ResponseTemplateField, found: Match) -> bool:
        if found.reach != len(self._buffer):
            return False
        if found.start == found.reach:
            return True  # (\Z holds only at the true end)
        anchor = item.open if kind == "open" else item.close
        return not anchor.literal or anchor.can_extend  # type: ignore[union-attr]

    def _process(self, events: list[Event], eos: bool) -> None:
        empty = 0  # (markers matched on the empty text at this place, one after another)
        while True:
            best, hold = self._scan(eos)
            if best is not None:
                kind, item, found = best
                if found.start > self._pos:
                    self._route(events, self._buffer[self._pos : found.start])
                    empty = 0
                if found.end == found.start == self._pos:
                    empty += 1
                    if empty > 2 * len(self._spec.fields) + 2:
                        raise ValueError(
                            "the response_template's markers match the empty text at one "
                            "place over and over (a region opens and closes there forever)"
                        )
                else:
                    empty = 0
                self._pos = found.end
                if kind == "open":
                    self._close(events)
                    self._open(events, item, found)
                    continue
                had_text = self._opened
                self._close(events)
                if not had_text and found.start == found.end:
                    break  # (an empty close of an empty region would fire forever)
                continue
            if eos:
                if self._pos < len(self._buffer):
                    self._route(events, self._buffer[self._pos :])
                    self._pos = len(self._buffer)
                self._close(events)
                break
            if hold > self._pos:
                self._route(events, self._buffer[self._pos : hold])
                self._pos = hold
            break
        self._trim()

    def _trim(self) -> None:
        if self._pos > _TRIM:
            keep = self._pos - 1  # (one character of context, for \b)
            self._buffer = self._buffer[keep:]
            self._shift += keep
            self._pos -= keep
            self._scans.clear()

    # regions ------------------------------------------------------------------------------

    def _route(self, events: list[Event], text: str) -> None:
        if not text or self._current is None:
            return  # (no implicit field: text outside every region is dropped)
        item = self._spec.fields[self._current]
        if not self._opened:
            events.append({"type": "region_open", "field": self._current})
            self._opened = True
        self._pieces.append(text)
        if len(self._pieces) >= _PIECES:
            self._body.append("".join(self._pieces))
            self._pieces = []
        dirty = item.content not in STREAMABLE_PARSERS
        events.append(
            {"type": "region_chunk", "field": self._current, "text": text, "dirty": dirty}
        )

    def _open(self, events: list[Event], item: ResponseTemplateField, found: Match) -> None:
        self._current = item.name
        self._captures = {k: v for k, v in found.groups.items() if v is not None}
        self._body = []
        self._pieces = []
        self._opened = True
        events.append({"type": "region_open", "field": item.name})

    def _value(self, item: ResponseTemplateField) -> Any:
        try:
            text = "".join([*self._body, *self._pieces])
            value = parse_content(text, item.content, item.content_args)
        except (TypeError, AttributeError, LookupError) as exc:
            if isinstance(exc, ValueError):
                raise
            raise ValueError(f"Field '{item.name}': {bounded_repr(exc)}") from None
        if item.transform is None:
            return value
        if not item.transform_each:
            return apply_transform(item.transform, {**self._captures, "content": value})
        if not isinstance(value, list):
            raise ValueError(
                f"Field '{item.name}': transform_each needs the content to parse to a list, "
                f"got {type(value).__name__}"
            )
        out = []
        for element in value:
            if not isinstance(element, dict):
                raise ValueError(
                    f"Field '{item.name}': transform_each needs every element to be a dict, "
                    f"got {type(element).__name__}"
                )
            out.append(apply_transform(item.transform, {**self._captures, **element}))
        return out

    def _close(self, events: list[Event]) -> None:
        if self._current is None or not self._opened:
            self._reset()
            return
        item = self._spec.fields[self._current]
        value = self._value(item)
        if self._params:
            value = cast_tool_calls(value, self._params)
        if item.join is not None:
            if not isinstance(value, str):
                raise ValueError(
                    f"Field '{item.name}': 'join' needs each match to parse to a string, "
                    f"got {type(value).__name__}"
                )
            before = self._output.get(item.name)
            self._output[item.name] = value if before is None else before + item.join + value
        elif item.repeats:
            self._output.setdefault(item.name, []).append(value)
        else:
            self._output[item.name] = value
        events.append({"type": "region_close", "field": item.name, "value": value})
        self._reset()

    def _reset(self) -> None:
        self._current = self._spec.implicit
        self._captures = {}
        self._body = []
        self._pieces = []
        self._opened = False
