"""What the chat layer's tracing calls import on first use and keep.

Provenance, spans and the token encoder (with `tokenizers`) are imported by the first call that
needs them, so that a process that only renders text imports none of them
(tests/test_startup.py); kept after that, because an import statement in a method costs
microseconds at every call.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple


class Tracing(NamedTuple):
    has_generation_blocks: Callable[[str], bool]
    chat_spans: Callable[..., Any]
    traced_render: Callable[..., Any]


@functools.cache
def tracing() -> Tracing:
    """Provenance and spans: `tokenize`, `assistant_spans` and `render_with_provenance`."""
    from .provenance import has_generation_blocks
    from .spans import chat_spans, traced_render

    return Tracing(has_generation_blocks, chat_spans, traced_render)


@functools.cache
def encode_chat() -> Callable[..., Any]:
    """The token encoder: `tokenize`."""
    from .tokens import encode_chat as encode

    return encode
