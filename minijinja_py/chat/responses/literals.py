"""The `python` content parser (this project's extension to transformers' set): tool calls and
values a model writes in Python or JSON syntax, `[get_weather(city="Paris", days=3)]`, read
without `eval`, `exec`, `compile` or `ast` (a project rule: a region is untrusted text).

The reader is a recursive descent over tokens found with regular expressions that backtrack at
most over the token they try (each is a run of one character class, a word then `=`, or an
unrolled string body) and try each token at most three times, so its time is linear in the
region; nesting past `MAX_JSON_DEPTH` is refused before the recursion gets near Python's limit,
and a region of more than `MAX_PYTHON_ITEMS` items before its Python steps add up to seconds.
Every failure is a `ValueError` naming the position in the region's text as given, and a
bounded view of the text there.

What it reads: strings in '...' or "..." with Python's and JSON's escapes (JSON's surrogate
pairs joined); numbers (a leading zero reads as decimal, `007` is 7); True/False/None and
true/false/null; lists and tuples (both lists); dicts; calls `NAME(key=value ...)` read as
`{"name": NAME, "arguments": {...}}`; and a bare word in value position (`city=Paris City`),
read as its text up to the next `,`, newline or closing bracket of its own depth, stripped, as
templates that print strings without quotes write them.
"""

from __future__ import annotations

import re
from typing import Any

from ...errors import bounded_repr
from ..loading import MAX_JSON_DEPTH

__all__ = ["MAX_PYTHON_ITEMS", "read_literals", "read_value"]

_SPACE = re.compile(r"\s*")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
# A call's name, and the word checked for a constant or a call: dotted, with '-' (tool names).
_WORD = re.compile(r"[^\W\d][\w.\-]*")
_KEYWORD = re.compile(r"([^\W\d]\w*)\s*=(?!=)\s*")
_NUMBER_START = frozenset("0123456789-+.")
_SEPARATOR = re.compile(r"\s*(,\s*)?")
_COLON = re.compile(r"\s*:\s*")
# Unrolled string bodies: one escape or one run of plain characters per step, so no backtracking.
_BODY = {
    '"': re.compile(r'[^"\\]*(?:\\[\s\S][^"\\]*)*'),
    "'": re.compile(r"[^'\\]*(?:\\[\s\S][^'\\]*)*"),
}
_ESCAPE = re.compile(
    r"\\(?:u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"
    r"|u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|U([0-9a-fA-F]{8})|([0-7]{1,3})|([\s\S]))"
)
_SIMPLE = {
    "n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "a": "\a",
    "\\": "\\", "'": "'", '"': '"', "/": "/",
}  # fmt: skip
# A bare word runs to one of these at its own depth; brackets inside it nest.
_BARE_RUN = re.compile(r"[^,\n()\[\]{}]*")
_BARE_KEY = re.compile(r"[^:,\n()\[\]{}'\"]*")
_CONSTANTS: dict[str, Any] = {
    "True": True, "False": False, "None": None, "true": True, "false": False, "null": None,
}  # fmt: skip
_GLUED = re.compile(r"True|False|None|true|false|null")
_OPENERS = "([{"
_CLOSERS = ")]}"
_NOT_BARE = "'\"0123456789([{)]},:="
# Past 4300 digits int() is refused on Python 3.11+ and quadratic on 3.10: refuse it everywhere.
_MAX_DIGITS = 4300
_FENCE = "```"
#: Items (values, escapes, and brackets in bare words) one region may hold: the reader spends about a
#: microsecond of Python on each (json's C parser a hundredth of that), so the cap keeps ten
#: megabytes of `1,1,1`, `''''` or `"\n\n"` to a fraction of a second, far above any call list
#: a model writes (a hundred values is a lot).
MAX_PYTHON_ITEMS = 200_000


class _Reader:
    def __init__(self, text: str, end: int) -> None:
        self.text = text
        self.end = end
        self.left = MAX_PYTHON_ITEMS

    def fail(self, what: str, pos: int) -> ValueError:
        near = bounded_repr(self.text[pos : pos + 40])
        return ValueError(f"python: {what} at position {pos}: {near}")

    def charge(self, items: int, pos: int) -> None:
        """Count `items` against MAX_PYTHON_ITEMS; past it, refuse the region."""
        self.left -= items
        if self.left < 0:
            raise self.fail(
                f"the region holds more than {MAX_PYTHON_ITEMS} values, escapes and brackets", pos
            )

    def skip(self, pos: int) -> int:
        return _SPACE.match(self.text, pos, self.end).end()  # type: ignore[union-attr]

    def value(self, pos: int, depth: int) -> tuple[Any, int]:
        """The value starting at `pos` (no space before it) and the position after it."""
        self.left -= 1
        if self.left < 0:
            self.charge(0, pos)
        if pos >= self.end:
            raise self.fail("expected a value, found the end", pos)
        char = self.text[pos]
        if char in "\"'":
            return self.string(pos)
        if char in _OPENERS:
            if depth >= MAX_JSON_DEPTH:
                raise self.fail(f"nested more than {MAX_JSON_DEPTH} levels deep", pos)
            if char == "{":
                return self.mapping(pos + 1, depth + 1)
            return self.sequence(pos + 1, depth + 1, ")" if char == "(" else "]")
        number = _NUMBER.match(self.text, pos, self.end) if char in _NUMBER_START else None
        if number is not None:
            return self.number(number.group(), pos), number.end()
        word = _WORD.match(self.text, pos, self.end)
        if word is not None:
            after = word.end()
            # (the bracket right after the name: `Paris (France)` is a bare word)
            if after < self.end and self.text[after] == "(":
                if depth >= MAX_JSON_DEPTH:
                    raise self.fail(f"nested more than {MAX_JSON_DEPTH} levels deep", after)
                return self.call(word.group(), after + 1, depth + 1)
            if word.group() in _CONSTANTS:
                return _CONSTANTS[word.group()], word.end()
            # (a constant a template glued to the next keyword, `f(exact=falsezone="CET")`)
            glued = _GLUED.match(word.group())
            if glued is not None and _KEYWORD.match(self.text, pos + glued.end(), self.end):
                return _CONSTANTS[glued.group()], pos + glued.end()
        if char in _NOT_BARE:
            raise self.fail(f"expected a value, found {char!r}", pos)
        return self.bare(pos)

    def string(self, pos: int) -> tuple[str, int]:
        quote = self.text[pos]
        body = _BODY[quote].match(self.text, pos + 1, self.end)
        assert body is not None  # (a run of zero characters always matches)
        if body.end() >= self.end or self.text[body.end()] != quote:
            raise self.fail("unterminated string", pos)  # (or one ending in a lone backslash)
        raw = body.group()
        if "\\" not in raw:
            return raw, body.end() + 1
        start = pos + 1
        self.charge(raw.count("\\"), pos)  # (each escape is a Python call below)

        def unescape(match: re.Match[str]) -> str:
            high, low, unit, byte, wide, octal, other = match.groups()
            if high is not None:
                return chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + int(low, 16) - 0xDC00)
            if unit is not None or byte is not None:
                return chr(int(unit or byte, 16))
            if wide is not None:
                if int(wide, 16) > 0x10FFFF:
                    raise self.fail("escape past U+10FFFF", start + match.start())
                return chr(int(wide, 16))
            if octal is not None:
                return chr(int(octal, 8))
            return _SIMPLE.get(other, match.group())  # (unknown: the backslash stays)

        return _ESCAPE.sub(unescape, raw), body.end() + 1

    def number(self, written: str, pos: int) -> int | float:
        if "." in written or "e" in written or "E" in written:
            return float(written)
        if len(written) > _MAX_DIGITS:
            raise self.fail(f"integer longer than {_MAX_DIGITS} digits", pos)
        return int(written)

    def bare(self, pos: int) -> tuple[str, int]:
        """Text up to a `,`, newline or unmatched closer; brackets inside it nest (linear:
        each step jumps a run with one regex match)."""
        text, at, nested = self.text, pos, 0
        while True:
            at = _BARE_RUN.match(text, at, self.end).end()  # type: ignore[union-attr]
            if at >= self.end:
                break
            self.charge(1, at)
            char = text[at]
            if char in _OPENERS:
                nested += 1
            elif nested == 0:
                break  # (a closer, a ',' or a newline of its own depth)
            elif char in _CLOSERS:
                nested -= 1
            at += 1
        return text[pos:at].strip(), at

    # The loops below inline their regex matches: they are where a long region's time goes.

    def sequence(self, pos: int, depth: int, closer: str) -> tuple[list[Any], int]:
        text, end, items = self.text, self.end, []
        opened, pos = pos - 1, _SPACE.match(text, pos, end).end()  # type: ignore[union-attr]
        while self.more(pos, opened, closer):
            item, pos = self.value(pos, depth)
            items.append(item)
            pos = self.separator(pos, opened, closer)
        return items, pos + 1

    def more(self, pos: int, opened: int, closer: str) -> bool:
        """Whether another item follows before `closer` (at `pos`, past space)."""
        if pos >= self.end:
            raise self.fail(f"{self.text[opened]!r} is never closed", opened)
        return self.text[pos] != closer

    def separator(self, pos: int, opened: int, closer: str) -> int:
        """Past the space and `,` after an item, or at the closer; anything else is an error."""
        found = _SEPARATOR.match(self.text, pos, self.end)
        assert found is not None  # (space and an optional comma: empty matches too)
        if found.group(1) is None and self.more(found.end(), opened, closer):
            at = found.end()
            raise self.fail(f"expected ',' or {closer!r}, found {self.text[at]!r}", at)
        return found.end()

    def key(self, pos: int) -> tuple[Any, int]:
        if pos < self.end and self.text[pos] in "\"'":
            return self.string(pos)
        run = _BARE_KEY.match(self.text, pos, self.end)
        assert run is not None
        written = run.group().strip()
        if not written:
            found = "the end" if pos >= self.end else repr(self.text[pos])
            raise self.fail(f"expected a key, found {found}", pos)
        if written in _CONSTANTS:
            return _CONSTANTS[written], run.end()
        if _NUMBER.fullmatch(written):
            return self.number(written, pos), run.end()
        return written, run.end()

    def mapping(self, pos: int, depth: int) -> tuple[dict[Any, Any], int]:
        text, end, out = self.text, self.end, {}
        opened, pos = pos - 1, _SPACE.match(text, pos, end).end()  # type: ignore[union-attr]
        while self.more(pos, opened, "}"):
            key, pos = self.key(pos)
            colon = _COLON.match(text, pos, end)
            if colon is None:
                raise self.fail("expected ':' after a key", self.skip(pos))
            out[key], pos = self.value(colon.end(), depth)
            pos = self.separator(pos, opened, "}")
        return out, pos + 1

    def call(self, name: str, pos: int, depth: int) -> tuple[dict[str, Any], int]:
        text, end, arguments = self.text, self.end, {}
        opened, pos = pos - 1, _SPACE.match(text, pos, end).end()  # type: ignore[union-attr]
        while self.more(pos, opened, ")"):
            keyword = _KEYWORD.match(text, pos, end)
            if keyword is None:
                positional, _ = self.value(pos, depth)
                raise self.fail(
                    f"call {name!r} has a positional argument {bounded_repr(positional)} "
                    "(only keyword arguments are read)",
                    pos,
                )
            arguments[keyword.group(1)], pos = self.value(keyword.end(), depth)
            # (a comma, or no separator at all: templates write `f(a="x"b=3)`)
            pos = _SEPARATOR.match(text, pos, end).end()  # type: ignore[union-attr]
        return {"name": name, "arguments": arguments}, pos + 1


def _unfence(text: str, start: int, end: int) -> tuple[int, int]:
    """The span inside a Markdown code fence (```python, ```json or a bare ```), else the span;
    text after the closing fence (a model's remark) is dropped with it."""
    if not text.startswith(_FENCE, start, end):
        return start, end
    inner = start + len(_FENCE)
    closing = text.rfind(_FENCE, inner, end)
    if closing >= 0:
        end = closing
    newline = text.find("\n", inner, end)
    language = text[inner : end if newline < 0 else newline].strip()
    if newline >= 0 and (not language or language.isidentifier()):
        return newline + 1, end
    return inner, end  # (one line, ```f(a=1)```: no language word to drop)


def read_literals(text: str, as_list: bool = False) -> Any:
    """The values written in `text`, separated by commas or space: one as itself, several as a
    list of them; with `as_list`, always a list (one top-level list is that list)."""
    start = _SPACE.match(text).end()  # type: ignore[union-attr]
    end = len(text.rstrip())
    start, end = _unfence(text, start, max(start, end))
    reader = _Reader(text, end)
    pos = reader.skip(start)
    values: list[Any] = []
    while pos < end:
        value, pos = reader.value(pos, 0)
        values.append(value)
        pos = reader.skip(pos)
        if pos < end and text[pos] == ",":
            pos = reader.skip(pos + 1)
    if not values:
        if as_list:
            return []
        raise reader.fail("expected a value, found none", start)
    if len(values) == 1 and (not as_list or isinstance(values[0], list)):
        return values[0]
    return values


def read_value(text: str, pos: int) -> tuple[Any, int]:
    """The one value written at `pos` of `text` (no space before it), and where it ends."""
    return _Reader(text, len(text)).value(pos, 0)
