"""The markers of a template's text, read off probe renders: a special token or a word (`TOKEN`),
the first and last of a text, whole markers at the ends of a shared text, and the patterns that
read a literal text back (any run of whitespace as any run; an id as any word)."""

from __future__ import annotations

import re
from os.path import commonprefix

__all__ = [
    "ANY_ID",
    "TOKEN",
    "common_suffix",
    "first_token",
    "last_token",
    "literal_pattern",
    "whitespace_pattern",
    "whole_tokens_prefix",
    "whole_tokens_suffix",
]

#: What stands for an id in the texts two probe calls share (see call_forms.ID): a model writes
#: its own ids, so an id the template writes around a call is read as any word.
ANY_ID = "\0" * 9


# A marker: a special token (`<|im_end|>`, `</tool_call>`, `[TOOL_CALLS]`), a bracketed phrase in
# capitals (Apriel's `[BEGIN FINAL RESPONSE]`), one that opens with a bracket and runs to the
# next space (MiniMax's `[e~[`), or a word.
TOKEN = re.compile(r"<[^<>\s]*>|\[[^\[\]\s]*\]|\[[A-Z][A-Z ]*\]|[^<\[\s]+|[<\[]\S*")


def first_token(text: str) -> str:
    # The marker at the start of `text` (after whitespace).
    found = TOKEN.search(text)
    return found.group() if found is not None else ""


def last_token(text: str) -> str:
    # The marker at the end of `text` (before whitespace).
    tokens = TOKEN.findall(text)
    return tokens[-1] if tokens else ""


def whole_tokens_prefix(text: str, prefix: str) -> str:
    # `prefix` of `text` cut back to the end of its last whole marker.
    end = 0
    for token in TOKEN.finditer(text):
        if token.end() > len(prefix):
            break
        end = token.end()
    return prefix[:end] if prefix.strip() else prefix


def whole_tokens_suffix(text: str, suffix: str) -> str:
    # `suffix` of `text` cut forward to the start of its first whole marker.
    low = len(text) - len(suffix)
    for token in TOKEN.finditer(text):
        if token.start() >= low:
            return text[token.start() :] if token.start() > low else suffix
    return ""


def common_suffix(first: str, second: str) -> str:
    size = len(commonprefix([first[::-1], second[::-1]]))
    return first[len(first) - size :] if size else ""


def whitespace_pattern(text: str) -> str:
    # The literal text, where any run of whitespace may be any run of whitespace.
    return r"\s*".join(re.escape(piece) for piece in re.split(r"\s+", text))


def literal_pattern(text: str) -> str:
    # The text as a pattern, an id written in it (see ANY_ID) read as any word.
    return "[^<>\\s]*".join(whitespace_pattern(piece) for piece in text.split(ANY_ID))
