"""Jinja's wording of a parse error: what the parser found, what the open tag or bracket was
waiting for, and which block is unclosed (see parser.py, which raises ParseFailure)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ..errors import TemplateSyntaxError
from .blocks import open_blocks, tag_failure
from .lexer import Token


class ParseFailure(Exception):
    """The parser met `token` where the table allows only `expected`."""

    def __init__(self, token: Token, expected: Iterable[str]) -> None:
        super().__init__(token)
        self.token = token
        self.expected = expected


def describe_parse_error(error: ParseFailure, source: str, tokens: list) -> TemplateSyntaxError:
    token = error.token
    # Like Jinja, an unexpected end is reported where the template's last token starts.
    offset = token.start_pos if token.type != "$END" or not tokens else tokens[-1].start_pos
    index = next((i for i, t in enumerate(tokens) if t is token), len(tokens))
    stack = open_blocks(tokens[:index])
    if token.type == "$END" and _current_tag(tokens) is not None:
        # The text ends inside a tag: worded as Jinja's parser words a token it did not expect
        # there, or as its `expect` words the end ("unexpected end of template, expected ...").
        message = _unexpected_message(token, set(error.expected), tokens)
        wanted = re.fullmatch(r"expected token (.*), got 'end of template'", message)
        if wanted is not None:
            message = f"unexpected end of template, expected {wanted.group(1)}."
    elif token.type == "$END":
        message = tag_failure(None, stack)
    elif token.type.startswith("TAG_"):
        message = tag_failure(str(token.value), stack)
    else:
        message = _unexpected_message(token, set(error.expected), tokens[:index])
    result = TemplateSyntaxError(message)
    result.source = source
    result.offset = offset
    return result


# After these a Jinja tag parses a tuple of expressions, where nothing at all is reported as
# "Expected an expression" (elsewhere a missing operand is an "unexpected" token).
_TUPLE_STARTS = frozenset(
    ["_VAR_BEGIN", "TAG_IF", "TAG_ELIF", "TAG_SET", "TAG_FOR", "_ASSIGN", "IN"]
)
_TAG_ENDS = frozenset(["_VAR_END", "_BLOCK_END"])
_OPENERS = {"_LPAR": "_RPAR", "_LSQB": "_RSQB", "_LBRACE": "_RBRACE"}
_ELEMENT_STARTS = frozenset([*_OPENERS, "_COMMA"])
# Tokens after which "(" calls rather than groups.
_CALLABLE_ENDS = frozenset(["NAME", "_RPAR", "_RSQB", "STRING"])


def _unexpected_message(token: Token, expected: set[str], before: list[Token]) -> str:
    """Jinja's wording: what an expression or a tag was waiting for, and what came."""
    got = _describe_token(token)
    previous = before[-1] if before else None
    tag = _current_tag(before)
    if token.type == "_CHAINED_IS":
        return "You cannot chain multiple tests with is"
    special = _signature_message(token, before, tag)
    if special is not None:
        return special
    if (
        previous is not None
        and token.type in ("INT", "FLOAT", "STRING")
        and (
            previous.type in ("TAG_SET", "TAG_FOR", "TAG_WITH")
            # `with a = 1, 2`: after a value, a comma starts the next target
            or (
                tag == "TAG_WITH"
                and previous.type == "_COMMA"
                and _innermost_bracket(before) is None
            )
        )
    ):
        return "can't assign to 'const'"
    if token.type in _TAG_ENDS and previous is not None:
        if previous.type in _TUPLE_STARTS or (tag == "TAG_WITH" and previous.type == "_COMMA"):
            return f"Expected an expression, got {got!r}"
        if previous.type == "TAG_CALL":
            return f"unexpected {got!r}"  # Jinja parses the call as an expression
    if previous is not None and previous.type in ("TAG_SET", "TAG_FOR") and "NAME" in expected:
        return f"unexpected {got!r}"  # Jinja parses a target as an expression first
    if (
        previous is not None
        and token.type != "_LPAR"
        and (previous.type == "TAG_CALL" or (tag == "TAG_CALL" and _after_call_signature(before)))
    ):
        return f"unexpected {got!r}"  # Jinja parses the call as an expression
    if (
        token.type == "$END"
        and tag in ("TAG_FOR", "TAG_SET", "TAG_WITH")
        and previous is not None
        and previous.type in ("TAG_WITH", "_COMMA", "_LPAR")
        and "NAME" in expected
    ):
        return f"unexpected {got!r}"  # an element of a target (or value) list starts here
    if tag in ("TAG_BLOCK", "TAG_ENDBLOCK") and "_BLOCK_END" in expected:
        return f"expected token 'end of statement block', got {got!r}"
    if previous is not None and previous.type in _ELEMENT_STARTS and "STRING" in expected:
        return f"unexpected {got!r}"  # where an element of a call, list or dict starts
    # What Jinja's statement parsers wait for after a target.
    if (
        tag == "TAG_FOR"
        and "IN" in expected
        and not _seen_in_tag(before, "IN")
        and _innermost_bracket(before) is None
    ):
        return f"expected token 'in', got {got!r}"
    if tag == "TAG_WITH" and "_ASSIGN" in expected:
        return f"expected token '=', got {got!r}"
    if tag == "TAG_WITH" and "_COMMA" in expected and _innermost_bracket(before) is None:
        return f"expected token ',', got {got!r}"
    if "STRING" in expected and not expected & {"_VAR_END", "_BLOCK_END", "_RPAR"}:
        return f"unexpected {got!r}"
    if "NAME" in expected and "STRING" not in expected:
        return (
            "expected name or number"
            if "INT" in expected
            else (f"expected token 'name', got {got!r}")
        )
    opened = _innermost_bracket(before)
    if opened is not None:
        # Jinja's parser inside (), [] or {} waits for the separator: ':' after a dict key,
        # ')' closing a parenthesised expression, ',' between arguments and items.
        bracket = before[opened]
        if bracket.type == "_LBRACE" and "COLON" in expected:
            item = _top_level(before[opened + 1 :])
            last_comma = len(item) - 1 - item[::-1].index("_COMMA") if "_COMMA" in item else -1
            if "COLON" not in item[last_comma + 1 :]:
                return f"expected token ':', got {got!r}"  # after a key
        if expected & {"_COMMA", _OPENERS[bracket.type]}:
            called = opened > 0 and before[opened - 1].type in (*_CALLABLE_ENDS, "TAG_CALL")
            if bracket.type == "_LPAR" and not called:
                return f"expected token ')', got {got!r}"
            return f"expected token ',', got {got!r}"
    # The LALR states of a print tag and a block tag are shared: name the tag we are in.
    in_print = tag == "_VAR_BEGIN"
    for closing in ("_VAR_END", "_BLOCK_END", "_RPAR", "_RSQB", "_RBRACE"):
        if closing in _TAG_ENDS and (closing == "_VAR_END") != in_print:
            continue
        if closing in expected:
            return f"expected token {_describe_terminal(closing)!r}, got {got!r}"
    named = sorted(_describe_terminal(t) for t in expected if t.isupper() or t.startswith("_"))
    if len(named) == 1:
        return f"expected token {named[0]!r}, got {got!r}"
    return f"unexpected {got!r}"


def _signature_message(token: Token, before: list[Token], tag: str | None) -> str | None:
    """Jinja's messages about call arguments, macro parameters and call blocks, which its
    parser gives where ours would name a token."""
    opened = _innermost_bracket(before)
    previous = before[-1] if before else None
    if opened is not None and before[opened].type == "_LPAR" and previous is not None:
        inside = before[opened + 1 :]
        parameters = (
            opened > 0
            and before[opened - 1].type in ("TAG_CALL",)
            or (opened > 1 and before[opened - 2].type == "TAG_MACRO")
        )
        top = _top_level(inside)
        if parameters:
            # A parameter without a default after one with: refused before what follows.
            parameter = len(before) >= 2 and before[-2].type in ("_COMMA", "_LPAR")
            if (
                previous.type == "NAME"
                and parameter
                and token.type != "_ASSIGN"
                and "_ASSIGN" in top[:-1]
            ):
                return "non-default argument follows default argument"
        elif opened > 0 and before[opened - 1].type in _CALLABLE_ENDS:
            if not _argument_allowed([*inside, token]):
                return "invalid syntax for function call expression"
    if (
        tag == "TAG_CALL"
        and opened is None
        and token.type in ("$END", "_BLOCK_END")
        and previous is not None
        and previous.type in ("NAME", "INT", "_RSQB")
        and _seen_in_tag(before, "NAME")
    ):
        return "expected call"  # `{% call m %}`: the expression is not a call
    return None


def _argument_allowed(inside: list[Token]) -> bool:
    """Whether the argument being read in a call's parentheses may stand after the ones before
    it, decided as Jinja decides it when the argument starts: positional ones first, then
    keywords and `*args`, then `**kwargs`."""
    arguments: list[list[Token]] = [[]]
    depth = 0
    for token in inside:
        if token.type in _OPENERS:
            depth += 1
        elif token.type in ("_RPAR", "_RSQB", "_RBRACE"):
            depth -= 1
        elif depth == 0 and token.type == "_COMMA":
            arguments.append([])
            continue
        arguments[-1].append(token)
    star = dstar = keywords = False
    for argument in arguments:
        if not argument:
            continue
        first = argument[0].type
        if first == "_RPAR":
            break  # a trailing comma
        if first == "MUL":
            allowed = not (star or dstar)
            star = True
        elif first == "POW":
            allowed = not dstar
            dstar = True
        elif first == "NAME" and len(argument) > 1 and argument[1].type == "_ASSIGN":
            allowed = not dstar
            keywords = True
        else:
            allowed = not (star or dstar or keywords)
        if not allowed:
            return False
    return True


def _after_call_signature(before: list[Token]) -> bool:
    """Whether `before` ends with the `(params)` right after `{% call`."""
    depth = 0
    for index in range(len(before) - 1, -1, -1):
        kind = before[index].type
        if kind in ("_RPAR", "_RSQB", "_RBRACE"):
            depth += 1
        elif kind in _OPENERS:
            depth -= 1
            if depth == 0:
                return index > 0 and before[index - 1].type == "TAG_CALL"
        if depth == 0:
            return False
    return False


def _top_level(tokens: list[Token]) -> list[str]:
    """The kinds of `tokens` outside any bracket they open."""
    kinds = []
    depth = 0
    for token in tokens:
        if token.type in _OPENERS:
            depth += 1
        elif token.type in ("_RPAR", "_RSQB", "_RBRACE"):
            depth -= 1
        elif depth == 0:
            kinds.append(token.type)
    return kinds


def _current_tag(before: list[Token]) -> str | None:
    """The token that opened the tag being parsed: `_VAR_BEGIN` or a block tag's TAG_*."""
    for token in reversed(before):
        if token.type == "_VAR_BEGIN" or token.type.startswith("TAG_"):
            return token.type
        if token.type in _TAG_ENDS:
            return None
    return None


def _seen_in_tag(before: list[Token], kind: str) -> bool:
    """Whether a `kind` token already came in the tag being parsed."""
    for token in reversed(before):
        if token.type == kind:
            return True
        if token.type == "_VAR_BEGIN" or token.type.startswith("TAG_"):
            return False
    return False


def _innermost_bracket(before: list[Token]) -> int | None:
    """The index in `before` of the bracket still open at its end, within the current tag."""
    closers = {v: k for k, v in _OPENERS.items()}
    depth: dict[str, int] = {}
    for index in range(len(before) - 1, -1, -1):
        kind = before[index].type
        if kind == "_VAR_BEGIN" or kind.startswith("TAG_") or kind in _TAG_ENDS:
            return None
        if kind in closers:
            depth[closers[kind]] = depth.get(closers[kind], 0) + 1
        elif kind in _OPENERS:
            if depth.get(kind, 0):
                depth[kind] -= 1
            else:
                return index
    return None


_TOKEN_DESCRIPTIONS = {
    "_VAR_END": "end of print statement",
    "_BLOCK_END": "end of statement block",
    "DATA": "template data",
    "INT": "integer",
    "FLOAT": "float",
    "STRING": "string",
    "$END": "end of template",
}


def _describe_token(token: Any) -> str:
    """How Jinja names a token in messages: names and operators by their text, the rest by kind."""
    return _TOKEN_DESCRIPTIONS.get(token.type, str(token.value))


def _describe_terminal(name: str) -> str:
    return {
        "_VAR_END": "end of print statement",
        "_BLOCK_END": "end of statement block",
        "_RPAR": ")",
        "_RSQB": "]",
        "_RBRACE": "}",
        "_ASSIGN": "=",
        "_LPAR": "(",
    }.get(name, name.strip("_").lower())
