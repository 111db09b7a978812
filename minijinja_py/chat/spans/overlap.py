"""How much of the start of a header ends a stretch of text, in one pass over each.

Span inference asks where a turn's header begins when the text holds only its first part (a
render cut by a later turn, or a past turn that writes less of its header than the generation
prompt does).  Trying each length of the header in turn costs the square of its length, and a
template chooses that length; these answers cost its length plus the text's, whatever both are
(Knuth–Morris–Pratt: how far the header is matched after each character).
"""

from __future__ import annotations

from collections.abc import Sequence

# Below this length, trying each length with the interpreter's own string search is faster
# than a pass in Python over the text (it is how every real header is measured).
SHORT_HEADER = 256


def _fallbacks(header: str) -> list[int]:
    # fallbacks[n]: the longest proper start of header[:n] that also ends it.
    fallbacks = [0] * (len(header) + 1)
    matched = 0
    for index in range(1, len(header)):
        char = header[index]
        while matched and header[matched] != char:
            matched = fallbacks[matched]
        if header[matched] == char:
            matched += 1
        fallbacks[index + 1] = matched
    return fallbacks


def _advance(header: str, fallbacks: list[int], matched: int, char: str) -> int:
    if matched == len(header):
        matched = fallbacks[matched]
    while matched and header[matched] != char:
        matched = fallbacks[matched]
    return matched + 1 if header[matched] == char else 0


def start_ending(text: str, low: int, high: int, header: str, longest: int) -> int:
    """The longest n <= `longest` such that text[low:high] ends with header[:n] (0 if none)."""
    longest = min(longest, len(header), high - low)
    if longest <= 0:
        return 0
    if len(header) <= SHORT_HEADER:
        for size in range(longest, 0, -1):
            if text.startswith(header[:size], high - size):
                return size
        return 0
    fallbacks = _fallbacks(header)
    matched = 0
    for at in range(high - longest, high):
        matched = _advance(header, fallbacks, matched, text[at])
    while matched > longest:
        matched = fallbacks[matched]
    return matched


def longest_start_before(
    text: str, low: int, high: int, header: str, markers: Sequence[str], shortest: int
) -> tuple[int, int] | None:
    """Of every place in text[low:high] where a marker begins right after a start of `header`
    (shorter than the whole header, `shortest` characters or more): the longest such start,
    the earlier marker of `markers` on a tie, then the earliest place.  Returns (the start's
    length, where the marker begins), or None."""
    longest = len(header) - 1
    if longest < shortest:
        return None
    if len(header) <= SHORT_HEADER:
        for length in range(longest, shortest - 1, -1):
            for marker in markers:
                found = text.find(header[:length] + marker, low, high)
                if found >= 0:
                    return length, found + length
        return None
    # Where each marker begins, and the start of the header that ends there.
    places: dict[int, list[int]] = {}
    for rank, marker in enumerate(markers):
        if not marker:
            continue
        at = text.find(marker, low + shortest, high)
        while at >= 0:
            if at + len(marker) <= high:
                places.setdefault(at, []).append(rank)
            at = text.find(marker, at + 1, high)
    best: tuple[int, int, int] | None = None  # (-length, rank, place)
    fallbacks = _fallbacks(header)
    matched = 0
    for at in range(low, high):
        if at in places:
            length = matched
            while length > longest:
                length = fallbacks[length]
            if length >= shortest:
                key = (-length, min(places[at]), at)
                if best is None or key < best:
                    best = key
        matched = _advance(header, fallbacks, matched, text[at])
    if best is None:
        return None
    return -best[0], best[2]
