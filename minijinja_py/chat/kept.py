"""What a `ChatTemplate` keeps between calls, bounded in bytes.

A chat template object lives as long as its caller's process and sees every row of a data set:
whatever it keeps from one call to the next (templates compiled from a `chat_template=` source,
probes of a template's turns, traced copies of tool lists) is held in a `KeptBytes`, an
LRU mapping whose entries declare their size: the least recently used go first when a new one
would pass the bound, and an entry bigger than the bound is not kept at all.  Sizes are estimates
(a constant factor of the real bytes, measured with tracemalloc in tests/test_training_path.py),
never counts of entries: ten distinct 100 KB tool lists weigh what a thousand 1 KB ones do.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

__all__ = [
    "COMPILED_BYTES",
    "PIECES_BYTES",
    "PROBES_BYTES",
    "RESPONSES_BYTES",
    "TOOLS_BYTES",
    "KeptBetweenCalls",
    "KeptBytes",
    "compiled_size",
]

#: bytes of templates compiled from sources passed as ``chat_template=`` (the model's own
#: templates are always kept)
COMPILED_BYTES = 16 << 20
#: bytes of probed turn texts (keyed by the template's source and its options)
PROBES_BYTES = 4 << 20
#: bytes of traced tool lists (see spans/traced.py, sourced_tools)
TOOLS_BYTES = 4 << 20
#: bytes of the token ids of pieces of rendered text between added tokens (see pieces.py)
PIECES_BYTES = 4 << 20
#: bytes of response templates inferred from the sources read (see responses/inferred.py)
RESPONSES_BYTES = 1 << 20


def compiled_size(source: str) -> int:
    """About what a template compiled from `source` holds: measured at 5 to 80 bytes per
    character of the corpus's templates (the source, its tokens, the compiled nodes)."""
    return 64 * len(source) + 8192


class KeptBytes:
    """An LRU mapping of at most `most` bytes, by the sizes given to `put`."""

    __slots__ = ("most", "size", "_entries")

    def __init__(self, most: int) -> None:
        self.most: int = most
        self.size: int = 0
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    def get(self, key: Hashable) -> Any:
        """The value kept under `key` (now the most recently used), or None."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        self._entries.move_to_end(key)
        return entry[0]

    def put(self, key: Hashable, value: Any, size: int) -> None:
        """Keep `value` under `key` as `size` bytes, letting the least recently used go
        until it fits; a value bigger than the bound is not kept."""
        old = self._entries.pop(key, None)
        if old is not None:
            self.size -= old[1]
        if size > self.most:
            return
        while self._entries and self.size + size > self.most:
            _, (_, freed) = self._entries.popitem(last=False)
            self.size -= freed
        self._entries[key] = (value, size)
        self.size += size

    def clear(self) -> None:
        self._entries.clear()
        self.size = 0


class KeptBetweenCalls:
    """What one chat model keeps from call to call, each part bounded in bytes: templates
    compiled from sources passed as `chat_template=`, probed turn texts, traced tool lists,
    inferred response templates, the token ids of pieces of rendered text."""

    __slots__ = ("compiled", "probes", "tools", "responses", "pieces")

    def __init__(self) -> None:
        self.compiled: KeptBytes = KeptBytes(COMPILED_BYTES)
        self.probes: KeptBytes = KeptBytes(PROBES_BYTES)
        self.tools: KeptBytes = KeptBytes(TOOLS_BYTES)
        self.responses: KeptBytes = KeptBytes(RESPONSES_BYTES)
        self.pieces: KeptBytes = KeptBytes(PIECES_BYTES)
