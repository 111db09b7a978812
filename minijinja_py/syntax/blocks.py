"""Which blocks are open at a point of the token stream, for Jinja's syntax-error messages."""

from __future__ import annotations

from typing import Any

# What Jinja reports as the tags it is waiting for, per open block (before and after `else`).
_END_TAGS = {
    "if": ("elif", "else", "endif"),
    "for": ("endfor", "else"),
    "macro": ("endmacro",),
    "call": ("endcall",),
    "filter": ("endfilter",),
    "set": ("endset",),
    "with": ("endwith",),
    "generation": ("endgeneration",),
    "block": ("endblock",),
}
_AFTER_ELSE = {"if": ("endif",), "for": ("endfor",)}


def open_blocks(tokens: list[Any]) -> list[tuple[str, bool]]:
    """The blocks still open before the failing token: (tag, seen its else)."""
    stack: list[tuple[str, bool]] = []
    for i, token in enumerate(tokens):
        kind = token.type
        if not kind.startswith("TAG_"):
            continue
        tag = kind[4:].lower()
        if tag == "set":
            # Only `{% set x %}` without `=` opens a block.
            j = i + 1
            while j < len(tokens) and tokens[j].type not in ("_BLOCK_END", "_ASSIGN"):
                j += 1
            if j < len(tokens) and tokens[j].type == "_ASSIGN":
                continue
            stack.append(("set", False))
        elif tag in _END_TAGS:
            stack.append((tag, False))
        elif tag == "else" and stack and stack[-1][0] in _AFTER_ELSE:
            stack[-1] = (stack[-1][0], True)
        elif tag.startswith("end") and stack and tag[3:] == stack[-1][0]:
            stack.pop()
    return stack


def tag_failure(name: str | None, stack: list[tuple[str, bool]]) -> str:
    expected: set[str] = set()
    for tag, after_else in stack:
        expected.update(_AFTER_ELSE[tag] if after_else else _END_TAGS[tag])
    parts = [
        "Unexpected end of template." if name is None else f"Encountered unknown tag {name!r}."
    ]
    if stack:
        tag, after_else = stack[-1]
        looking = " or ".join(repr(t) for t in (_AFTER_ELSE[tag] if after_else else _END_TAGS[tag]))
        if name is not None and name in expected:
            parts.append(
                "You probably made a nesting mistake. Jinja is expecting this tag,"
                f" but currently looking for {looking}."
            )
        else:
            parts.append(f"Jinja was looking for the following tags: {looking}.")
        parts.append(f"The innermost block that needs to be closed is {tag!r}.")
    return " ".join(parts)
