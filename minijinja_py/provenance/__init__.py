"""Where each character of a rendered text came from.

`Template.render_with_provenance` wraps every string of the caller's context in a
`Sourced` string: a `str` whose segments name the path of the value each of its characters
came from (`("messages", 3, "content")`).  The template compiled for provenance (see
`Compiler(..., instrument=track_operations)`) runs the same evaluators; only its filters, operators,
`str` methods and the joins of captured output go through `track_operations`, which keeps
the segments:

- exactly through the operations templates apply to strings (concatenation, slicing and indexing,
  `split`/`strip`/`replace`/`join` and the other `str` methods, `%` and `format`
  with plain `%s`/`{}` fields, and the filters `join`, `tojson`, `trim`, `indent`,
  `upper`/`lower`/`title`/`capitalize`, `center`, `reverse`, `format`);
- conservatively through everything else: a string that a filter, method or operator derives from
  sourced inputs is attributed, as a whole, to every source of those inputs (never to none);
  markup stays markup (`SourcedMarkup`), so that escaping filters treat it as before.

Only strings carry sources: numbers, booleans and `None` print without one, and so do dict keys.
A render without provenance never meets a `Sourced` string: its fast paths, which test
`type(x) is str`, are untouched.
"""

from __future__ import annotations

# What the engine, the chat layer and the tests import from ``provenance`` (the private names
# are the tests' own).
from .instrument import _uncovered, track_operations  # noqa: F401
from .result import Provenance, collect
from .tojson import json_text, scanned_json_text
from .traced import Path, Segment, Sourced, SourcedMarkup, join_text, paths_of
from .tracking import (  # noqa: F401
    _KEPT,
    _KEPT_SIZE,
    KEPT_BYTES,
    _source,
    check_traceable,
    keep_traced,
    track_value,
)

__all__ = [
    "KEPT_BYTES",
    "Path",
    "Provenance",
    "Segment",
    "Sourced",
    "SourcedMarkup",
    "check_traceable",
    "collect",
    "join_text",
    "json_text",
    "keep_traced",
    "paths_of",
    "scanned_json_text",
    "track_operations",
    "track_value",
]
