"""Whether a template marks its assistant turns itself, with `{% generation %}` blocks: then the
blocks are the spans (transformers' only source), and no inference runs."""

from __future__ import annotations

import re

from ..kept import KeptBytes

__all__ = ["has_generation_blocks"]

_GENERATION_TAG = re.compile(r"\{%[-+]?\s*generation\s*[-+]?%\}")


def has_generation_blocks(source: str) -> bool:
    """Whether `source` holds a `{% generation %}` tag."""
    # (asked at every traced render of the same few sources: kept, bounded in bytes)
    found: bool | None = _HAS_GENERATION.get(source)
    if found is None:
        found = _GENERATION_TAG.search(source) is not None
        _HAS_GENERATION.put(source, found, len(source) + 128)
    return found


_HAS_GENERATION = KeptBytes(4 << 20)
