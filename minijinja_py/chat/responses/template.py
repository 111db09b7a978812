"""Loading and checking a `response_template` (transformers 5.23's format, version 1).

A response_template is data from a model folder: it is checked whole when loaded, so that a
wrong one fails before any response is parsed, with the same conditions (and in the same
order) as transformers checks them. Patterns are compiled for pattern.py's linear matcher,
which refuses the constructs that need backtracking.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .content import CONTENT_PARSERS, check_transform
from .pattern import Literals, Pattern, last_match_end

__all__ = ["ResponseTemplate", "ResponseTemplateField", "load_response_template"]

_log = logging.getLogger("minijinja_py.chat.responses")

Anchor = Literals | Pattern

_TOP_KEYS = {"version", "defaults", "fields", "start_anchor", "start_anchor_pattern"}
_FIELD_KEYS = {
    "open",
    "open_pattern",
    "close",
    "close_pattern",
    "content",
    "content_args",
    "repeats",
    "join",
    "optional",
    "transform",
    "transform_each",
}


@dataclass(frozen=True)
class ResponseTemplateField:
    """One field of the message: how its region opens and closes and what its text becomes."""

    name: str
    open: Anchor | None
    close: Anchor | None
    content: str
    content_args: dict[str, Any]
    repeats: bool
    join: str | None
    optional: bool
    transform: Any
    transform_each: bool


@dataclass(frozen=True)
class ResponseTemplate:
    """A checked response_template: its fields in order, the defaults every message starts
    from, the implicit field (the one without an opener), and the start anchor."""

    defaults: dict[str, Any]
    fields: dict[str, ResponseTemplateField]
    start_anchor: Anchor
    implicit: str | None
    source: dict[str, Any]

    def after_last_anchor(self, prefix: str) -> str:
        """`prefix` from the end of its last start-anchor match on (the current assistant
        turn, with what the chat template pre-wrote of it); all of it when there is none."""
        end = last_match_end(self.start_anchor, prefix)
        if end is None:
            _log.info(
                "the response_template's start anchor is not in the prefix: all of it is parsed"
            )
            return prefix
        return prefix[end:]


def _anchor(scope: str, spec: Mapping[str, Any], literal: str, pattern: str) -> Anchor | None:
    if literal in spec and pattern in spec:
        raise ValueError(f"{scope}: '{literal}' and '{pattern}' cannot both be given")
    if literal in spec:
        return Literals(spec[literal], f"{scope}: '{literal}'")
    if pattern in spec:
        return Pattern(spec[pattern], f"{scope}: '{pattern}'")
    return None


def _field(name: str, spec: Any) -> ResponseTemplateField:
    scope = f"Field '{name}'"
    if not isinstance(spec, dict):
        raise ValueError(f"{scope} must be a dict")
    unknown = set(spec) - _FIELD_KEYS
    if unknown:
        raise ValueError(f"{scope}: unknown keys {sorted(unknown, key=str)}")
    content = spec.get("content", "text")
    if content not in CONTENT_PARSERS:
        raise ValueError(
            f"{scope}: unknown content parser {content!r} (known: {sorted(CONTENT_PARSERS)})"
        )
    opener = _anchor(scope, spec, "open", "open_pattern")
    closer = _anchor(scope, spec, "close", "close_pattern")
    join = spec.get("join")
    if join is not None and not isinstance(join, str):
        raise ValueError(f"{scope}: 'join' must be a string, got {type(join).__name__}")
    if join is not None and not spec.get("repeats", False):
        raise ValueError(f"{scope}: 'join' requires 'repeats': true")
    transform = spec.get("transform")
    each = spec.get("transform_each", False)
    if not isinstance(each, bool):
        raise ValueError(f"{scope}: transform_each must be a bool, got {type(each).__name__}")
    if each and transform is None:
        raise ValueError(f"{scope}: transform_each is set but there is no transform")
    if transform is not None:
        check_transform(scope, transform)
    else:
        named = sorted(
            {*(opener.groupindex if opener else ()), *(closer.groupindex if closer else ())}
        )
        if named:
            raise ValueError(
                f"{scope}: open_pattern/close_pattern name the groups {named}, but the field "
                "has no 'transform'; captures reach the message only through a transform "
                "(beside 'content'), so add one that uses them or drop the names"
            )
    args = spec.get("content_args", {})
    if not isinstance(args, dict):
        raise ValueError(f"{scope}: content_args must be a dict, got {type(args).__name__}")
    return ResponseTemplateField(
        name=name,
        open=opener,
        close=closer,
        content=content,
        content_args=args,
        repeats=bool(spec.get("repeats", False)),
        join=join,
        optional=bool(spec.get("optional", True)),
        transform=transform,
        transform_each=each,
    )


def load_response_template(spec: Mapping[str, Any] | ResponseTemplate) -> ResponseTemplate:
    """Check a response_template dict and compile it; a loaded one is returned as it is.

    Raises ValueError naming the first thing wrong."""
    if isinstance(spec, ResponseTemplate):
        return spec
    if not isinstance(spec, dict):
        raise ValueError(f"response_template must be a dict, got {type(spec).__name__}")
    version = spec.get("version", 1)
    if version != 1:
        raise ValueError(f"Unsupported response_template version: {version!r} (only 1 is known)")
    unknown = set(spec) - _TOP_KEYS
    if unknown:
        raise ValueError(f"Unknown keys in response_template: {sorted(unknown, key=str)}")
    defaults = spec.get("defaults", {})
    if not isinstance(defaults, dict):
        raise ValueError("response_template.defaults must be a dict")
    raw_fields = spec.get("fields", {})
    if not isinstance(raw_fields, dict) or not raw_fields:
        raise ValueError("response_template.fields must be a non-empty dict")
    fields = {name: _field(name, raw) for name, raw in raw_fields.items()}
    implicit = [name for name, item in fields.items() if item.open is None]
    if len(implicit) > 1:
        raise ValueError(
            "At most one field may have no 'open'/'open_pattern' (it takes the text outside "
            f"every other field); these have none: {', '.join(map(str, implicit))}"
        )
    anchor = _anchor("response_template", spec, "start_anchor", "start_anchor_pattern")
    if anchor is None:
        raise ValueError("response_template must define 'start_anchor' or 'start_anchor_pattern'")
    return ResponseTemplate(
        defaults=copy.deepcopy(defaults),
        fields=fields,
        start_anchor=anchor,
        implicit=implicit[0] if implicit else None,
        source=spec,
    )
