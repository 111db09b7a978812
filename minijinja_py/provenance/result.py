"""A render's result: its text and the sources of its characters."""

from __future__ import annotations

from itertools import repeat
from operator import itemgetter
from typing import Any, NamedTuple

from .traced import Path, Segment, Sourced, SourcedMarkup, _place

# -------------------------------------------------------------------- the result


class Provenance(NamedTuple):
    """A render's text, the sources of its characters, and its `{% generation %}` spans."""

    text: str
    #: Sorted by start; spans may overlap where a derived string has several sources.
    segments: tuple[Segment, ...]
    generation_spans: list[tuple[int, int]]

    def sources_at(self, index: int) -> list[Path]:
        """The paths of the values the character at `index` came from (empty: template text)."""
        return [s.path for s in self.segments if s.start <= index < s.end]

    def char_sources(self) -> list[tuple[Path, ...]]:
        """For every character of `text`, the paths it came from."""
        sources: list[list[Path]] = [[] for _ in self.text]
        for segment in self.segments:
            for index in range(segment.start, segment.end):
                if segment.path not in sources[index]:
                    sources[index].append(segment.path)
        return [tuple(paths) for paths in sources]


def collect(parts: list[Any], spans: list[tuple[int, int]]) -> Provenance:
    """The result of a render whose top-level output is `parts`."""
    # (join_text's placing, without making a sourced string of the whole text)
    segments: list[tuple] = []
    add = segments.append
    position = 0
    for part in parts:
        kind = part.__class__
        if kind is Sourced or kind is SourcedMarkup:
            own = part.segments
            if len(own) == 1:  # (one value's text, placed here without a call: most parts)
                start, end, path, offset, verbatim = own[0]
                add((start + position, end + position, path, offset, verbatim))
            else:
                _place(segments, own, position)
        position += len(part)
    # By start, then end: two stable sorts on an int each, which make no key tuples (a third
    # of the time of one sort on (start, end)); the parts come in order, so each is near linear.
    segments.sort(key=_END)
    segments.sort(key=_START)
    # (what Segment._make does, without its check)
    placed = tuple(map(tuple.__new__, repeat(Segment), segments))
    return Provenance("".join(parts), placed, list(spans))


_START = itemgetter(0)
_END = itemgetter(1)
