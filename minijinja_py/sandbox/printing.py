"""The size of text before it is made: repr of strings, HTML escaping, JSON and pprint layout.

Python prints a string inside a container as its `repr`, where one character can take ten
(`'\\U000e0001'`); escaping for HTML turns `"` into `&#34;`; JSON writes a control
character as six and an emoji as twelve (`ensure_ascii`); an indented JSON or pprint layout
repeats its indentation on every line, deeper lines more.  Each function here returns an
upper bound of what Python will make (exact for strings), computed in C-speed passes over at
most `CHUNK` characters at a time, so that measuring never makes the big text itself.

Nothing here charges or refuses: the callers charge the bound and refuse it above their limit.
"""

from __future__ import annotations

import json
from typing import Any, Final

from .._mypyc import mypyc_attr

#: dict views print their items: ``dict_items([('a', 1)])``
VIEW_TYPES: tuple[type[Any], ...] = (type({}.keys()), type({}.values()), type({}.items()))
_SEQUENCE_TYPES: tuple[type[Any], ...] = (list, tuple, set, frozenset, *VIEW_TYPES)


@mypyc_attr(allow_interpreted_subclasses=True)  # the runtime's Namespace derives from it
class AttributeBag:
    """A value that prints as the dict of its attributes, kept in `_attrs`: the base of the
    runtime's `Namespace`, defined down here so that the sandbox sizes and prints one without
    importing the runtime values (which sit above the sandbox)."""

    __slots__ = ("_attrs",)
    _attrs: dict[str, Any]

#: Characters measured at a time: measuring a chunk makes its text (up to 12 times as long)
#: and drops it, so memory stays within about a megabyte whatever the string's length.
CHUNK: Final = 1 << 16


def repr_size(s: str, write: Any = str.__repr__, most: int | None = None) -> int:
    """`len(str.__repr__(s))` (or of `ascii(s)`, with `write=ascii`), exactly, without
    making the repr of a long string; with `most`, a size over `most` as soon as the chunks
    measured so far pass it (the caller refuses then: the rest need not be measured)."""
    n = len(s)
    if n <= CHUNK:
        return len(write(s))
    if s.isascii() and s.isprintable():
        # Only backslashes and quotes are escaped in printable ASCII.
        return n + 2 + s.count("\\") + _escaped_quotes(s)
    size = 2
    for start in range(0, n, CHUNK):
        chunk = s[start : start + CHUNK]
        size += len(write(chunk)) - 2 - _escaped_quotes(chunk)
        if most is not None and size > most:
            return size
    return size + _escaped_quotes(s)


def _escaped_quotes(s: str) -> int:
    # Python quotes with " (escaping nothing) when the text has ' but no ", else with '
    # (escaping each ').
    if "'" in s and '"' not in s:
        return 0
    return s.count("'")


def escaped_size(s: str) -> int:
    """`len(escape(s))` for a plain string: `&` `"` `'` take 5, `<` `>` take 4."""
    return (
        len(s)
        + 4 * (s.count("&") + s.count('"') + s.count("'"))
        + 3 * (s.count("<") + s.count(">"))
    )


def json_string_size(s: str, ensure_ascii: bool, html: bool = False) -> int:
    """`len(json.dumps(s, ensure_ascii=...))`, exactly; `html`: with `<>&'` written
    as `\\u003c` and the like, as the HTML-safe `tojson` does."""
    n = len(s)
    if s.isascii() and s.isprintable():
        size = n + 2 + s.count('"') + s.count("\\")
    elif n <= CHUNK:
        size = len(json.dumps(s, ensure_ascii=ensure_ascii))
    else:
        size = 2
        for start in range(0, n, CHUNK):
            size += len(json.dumps(s[start : start + CHUNK], ensure_ascii=ensure_ascii)) - 2
    if html:
        size += 5 * (s.count("<") + s.count(">") + s.count("&") + s.count("'"))
    return size


def prints_as_str(kind: type) -> bool:
    """Whether a string of type `kind` prints (`repr`, and pprint's layout, which is chosen by
    the type's `__repr__`) as a plain `str` does: `str`, a traced string; not Markup."""
    return kind is str or kind.__repr__ is str.__repr__


def leaf_repr_size(value: Any, most: int | None = None) -> int:
    """An upper bound of `len(repr(value))` for a value that holds no other value (for a
    string, over `most` as soon as it is known to be: see repr_size)."""
    if isinstance(value, str):
        size = repr_size(value, most=most)
        kind = type(value)
        if prints_as_str(kind):
            return size
        return size + 8 + len(kind.__name__)  # Markup('...')
    if isinstance(value, bool) or value is None:
        return 5
    if isinstance(value, int):
        return value.bit_length() // 3 + 4  # (a decimal digit holds 3.32 bits)
    if isinstance(value, float):
        return 24
    return len(repr(value))


def _pieces(s: str) -> int:
    """The most pieces pprint splits `s` into: a line, or a word of a line, each (every
    line boundary, `\u2028` included, is whitespace to `split`)."""
    if s.isalnum():
        return 1
    pieces = 0
    for start in range(0, len(s), CHUNK):
        chunk = s[start : start + CHUNK]
        pieces += len(chunk.splitlines()) + len(chunk.split())
    return max(pieces, 1)


def json_bound_of_printed(size: int, nodes: int, levels: int, indent: int | None) -> int:
    """An upper bound of `json.dumps(value, indent=indent, ensure_ascii=False)` from what
    measure.check_printable found of `value`: its printed size, nodes and levels.

    Compact JSON is at most twice the printed size: a string inside a structure prints as its
    repr, where a control character is four characters and six in JSON and a quote is one and
    two; separators, brackets and literals are no longer (`null` is `None`).  Indented, it has
    at most a line break per node and one per container, each indented at most `indent` per
    level."""
    bound = 2 * size
    if indent is not None:
        bound += 2 * nodes * (1 + indent * levels)
    return bound


def layout_bound(
    value: Any,
    limit: int,
    kind: str,
    indent: int | None = None,
    item_separator: int = 2,
    key_separator: int = 2,
    ensure_ascii: bool = False,
    html: bool = False,
    max_nodes: int = 1 << 62,
) -> tuple[int, int]:
    """An upper bound of the length of `value` printed by `kind` ("json": `json.dumps`
    with `indent` characters of indentation per level and the separators' lengths;
    "pprint": `pprint.pformat`), and the nodes walked (`indent` None: JSON on one
    line); stops early once the bound exceeds `limit` or the nodes `max_nodes` (the
    caller refuses then).

    Every line break is counted with the deepest indentation its node can have: JSON indents
    `indent` per level, pprint to the column of the enclosing bracket (a dict value sits after
    its key).  pprint may also split a string into one piece per line or word, each piece on
    its own line at that column."""
    size = 0
    nodes = 0
    stack: list[tuple[Any, int, int]] = [(value, 1, 0)]
    pop, push = stack.pop, stack.append
    is_json = kind == "json"
    lines = indent is not None
    width = indent or 0
    while stack:
        item, depth, column = pop()
        nodes += 1
        if isinstance(item, str):
            if is_json:
                size += json_string_size(item, ensure_ascii, html)
            else:
                size += leaf_repr_size(item)
                if prints_as_str(type(item)):
                    # (pprint splits whatever prints as str does, a traced string too): each
                    # piece after the first: two quotes, a line break and the column; and the
                    # parentheses around the pieces of a string printed alone
                    size += (_pieces(item) - 1) * (column + 3) + 2
        elif isinstance(item, dict):
            # brackets, then per item: its separators and a line break with indentation
            count = len(item)
            size += 2 + count * (item_separator + key_separator)
            if is_json:
                if lines:
                    size += (count + 1) * (1 + width * depth)
                for key, child in item.items():
                    # (JSON writes numbers, booleans and null keys as strings)
                    size += (
                        json_string_size(key, ensure_ascii, html)
                        if isinstance(key, str)
                        else leaf_repr_size(key) + 2
                    )
                    push((child, depth + 1, 0))
            else:
                size += count * (1 + column)
                for key, child in item.items():
                    key_size = leaf_repr_size(key) if not isinstance(key, tuple) else 0
                    if isinstance(key, tuple):
                        push((key, depth + 1, column + 1))
                    else:
                        size += key_size
                    push((child, depth + 1, column + 1 + key_size + 2))
        elif isinstance(item, AttributeBag):
            size += 12 + column
            push((item._attrs, depth, column))
        elif isinstance(item, _SEQUENCE_TYPES):
            count = len(item)
            size += 2 + count * item_separator
            if is_json:
                if lines:
                    size += (count + 1) * (1 + width * depth)
                child_column = 0
            else:
                size += count * (1 + column)
                if type(item) is not list and type(item) is not tuple:
                    size += 14  # set() frozenset({...}) dict_items([...])
                    child_column = column + 11
                else:
                    child_column = column + 1
                    size += 1  # (a tuple of one: ``(x,)``)
            for child in item:
                push((child, depth + 1, child_column))
        else:
            size += leaf_repr_size(item) + (0 if is_json else column)
        if size > limit or nodes > max_nodes:
            break
    return size, nodes


def json_layout(indent: Any, separators: Any) -> tuple[int | None, int, int]:
    """The indentation width (None: one line) and the two separators' lengths that
    `json.dumps(indent=indent, separators=separators)` writes."""
    if indent is None:
        width = None
    elif isinstance(indent, str):
        width = len(indent)
    elif isinstance(indent, int):
        width = max(indent, 0)
    else:
        width = 64  # (json raises for anything else)
    item, key = (1 if width is not None else 2), 2
    if isinstance(separators, (tuple, list)) and len(separators) == 2:
        item, key = (len(part) if isinstance(part, str) else 0 for part in separators)
    return width, item, key
