"""Template text to syntax tree: the lexer, Lark's LALR parser over grammar/jinja.lark, and the
builder that turns grammar rules into :mod:`nodes`.

The Lark parser is built on first use and shared by every environment of the process.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

from . import nodes as n
from .blocks import open_blocks, tag_failure
from .errors import TemplateSyntaxError
from .lexer import Lexer, LexOptions, TagScanner, Token
from .table import load_table

_CONSTANT_NAMES = {
    "true": True,
    "True": True,
    "false": False,
    "False": False,
    "none": None,
    "None": None,
}
# Python's own default bound on the digits int() converts (sys.get_int_max_str_digits).
_MAX_INT_LITERAL = 4300


class _ParseFailure(Exception):
    def __init__(self, token: Token, expected: Iterable[str]) -> None:
        super().__init__(token)
        self.token = token
        self.expected = expected


class _Machine:
    """Runs the LALR table over a token list, building nodes as rules are reduced."""

    def __init__(self, table: dict[str, Any]) -> None:
        builder = self.builder = _AstBuilder()
        # The grammar's words (`if`, `in`, ...): terminals whose text could be a name.
        self.keywords = frozenset(
            name for name, text, literal in table["terminals"] if literal and text.isidentifier()
        )
        self.states: list[dict[str, int]] = table["states"]
        self.start: int = table["start"]
        self.end: int = table["end"]
        self.rules = []
        for origin, codes, inline, expand1, callback in table["rules"]:
            # A unit rule (`?sum: product`) hands its only child up unchanged; the precedence
            # ladder makes most reductions of this kind, so they skip the reducer entirely.
            unit = codes == "k" and expand1
            reduce = _reducer(codes, inline, expand1, getattr(builder, callback, None))
            self.rules.append((origin, len(codes), reduce, unit))
        # (state below, state on top, lookahead) -> top state after the chain of unit reductions
        self.unit_chains: dict[tuple[int, int, str], int] = {}

    def _unit_chain(self, below: int, top: int, lookahead: str) -> int:
        states = self.states
        rules = self.rules
        state = top
        while True:
            action = states[state].get(lookahead)
            if action is None or action >= 0 or not rules[-1 - action][3]:
                break
            state = states[below][rules[-1 - action][0]]
        self.unit_chains[(below, top, lookahead)] = state
        return state

    def _accepts(self, stack: list[int], kind: str) -> bool:
        """Whether ``kind`` can come next: the reductions it causes, then a shift, simulated on
        the state stack without touching it."""
        states = self.states
        rules = self.rules
        unit_chains = self.unit_chains
        depth = len(stack)
        pushed: list[int] = []
        while True:
            top = pushed[-1] if pushed else stack[depth - 1]
            action = states[top].get(kind)
            if action is None:
                return False
            if action >= 0:
                return True
            origin, size, _, unit = rules[-1 - action]
            if unit:
                # The precedence ladder's unit reductions in one step, as run takes them.
                if pushed:
                    pushed.pop()
                else:
                    depth -= 1
                below = pushed[-1] if pushed else stack[depth - 1]
                chained = unit_chains.get((below, top, kind))
                if chained is None:
                    chained = self._unit_chain(below, top, kind)
                pushed.append(chained)
                continue
            if size <= len(pushed):
                del pushed[len(pushed) - size :]
            else:
                depth -= size - len(pushed)
                pushed.clear()
            below = pushed[-1] if pushed else stack[depth - 1]
            pushed.append(states[below][origin])

    def _read_word(self, stack: list[int], tokens: list[Token], index: int) -> str:
        """Jinja's lexer has no keywords: ``if``, ``in``, ``not``, ... are names that its parser
        reads as operators only where it looks for one.  A word is read as the keyword where the
        grammar can take it, else as a name, except where Jinja's parser looks for the word
        first (the argument of a test, a keyword argument, an element after a comma)."""
        kind = tokens[index].type
        previous = tokens[index - 1].type if index else None
        following = tokens[index + 1].type if index + 1 < len(tokens) else "$END"
        if _after_test_name(tokens, index):
            if kind == "_IS":
                return "_CHAINED_IS"  # refused by Jinja: no grammar rule takes it
            if kind not in _TEST_ARGUMENT_WORDS:
                return kind
            if self._accepts(stack, "NAME"):
                return "NAME"
        if following == "_ASSIGN" and previous in _NAME_FIRST:
            if self._accepts(stack, "NAME"):
                return "NAME"
        if previous == "_COMMA" and kind != "NOT" and self._accepts(stack, "NAME"):
            return "NAME"  # an element starts after a comma (`for x in a, recursive`)
        if kind == "NOT" and following != "IN" and not self._accepts(stack, "NAME"):
            # After an operand Jinja reads `not` only as the start of `not in`.
            return "_STRAY_NOT"
        if self._accepts(stack, kind):
            return kind
        if self._accepts(stack, "NAME"):
            return "NAME"
        return kind

    def run(self, tokens: list[Token], source_length: int) -> n.Template:
        self.builder.in_parentheses.clear()
        states = self.states
        rules = self.rules
        unit_chains = self.unit_chains
        end_state = self.end
        state_stack = [self.start]
        value_stack: list[Any] = []
        keywords = self.keywords
        for index, token in enumerate(tokens):
            kind = token.type
            if kind in keywords:
                # A word the grammar shifts at once is read as itself, unless it stands where
                # _read_word looks for a name first (after `(`, `,`, a test's name, or `not`).
                action = states[state_stack[-1]].get(kind)
                previous = tokens[index - 1].type if index else None
                if (
                    action is None
                    or action < 0
                    or kind == "NOT"
                    or previous in _NAME_FIRST
                    or (previous in _TEST_NAME_ENDS and _after_test_name(tokens, index))
                ):
                    kind = self._read_word(state_stack, tokens, index)
                    token.type = kind
            while True:
                top = state_stack[-1]
                action = states[top].get(kind)
                if action is None:
                    raise _ParseFailure(token, states[top])
                if action >= 0:
                    state_stack.append(action)
                    value_stack.append(token)
                    break
                origin, size, reduce, unit = rules[-1 - action]
                if unit:
                    below = state_stack[-2]
                    chained = unit_chains.get((below, top, kind))
                    if chained is None:
                        chained = self._unit_chain(below, top, kind)
                    state_stack[-1] = chained
                    continue
                if size:
                    values = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    values = []
                state_stack.append(states[state_stack[-1]][origin])
                value_stack.append(reduce(values))
        end_token = Token("$END", "", source_length)
        while True:
            action = states[state_stack[-1]].get("$END")
            if action is None or action >= 0:
                raise _ParseFailure(end_token, states[state_stack[-1]])
            origin, size, reduce, _ = rules[-1 - action]
            if size:
                values = value_stack[-size:]
                del state_stack[-size:]
                del value_stack[-size:]
            else:
                values = []
            state_stack.append(states[state_stack[-1]][origin])
            value_stack.append(reduce(values))
            if state_stack[-1] == end_state:
                return value_stack[-1]


# Jinja reads the word after an argument-less test's name as the test's argument if it is one of
# these (`else`, `or` and `and` stay operators, `is` is refused).
_TEST_ARGUMENT_WORDS = frozenset(["_IF", "IN", "NOT", "RECURSIVE"])
# The tokens after which _read_word may read a word as a name although the grammar takes it.
_NAME_FIRST = frozenset(["_LPAR", "_COMMA"])
_TEST_NAME_ENDS = frozenset(["NAME", "IN"])  # (the last token of `is [not] name` or `is in`)


def _after_test_name(tokens: list[Token], index: int) -> bool:
    """Whether ``tokens[index]`` directly follows ``is [not] name(.name)*``."""
    i = index - 1
    if i >= 1 and tokens[i].type == "IN" and tokens[i - 1].type in ("_IS", "NOT"):
        i -= 1
    else:
        while i >= 2 and tokens[i].type == "NAME" and tokens[i - 1].type == "_DOT":
            i -= 2
        if i < 0 or tokens[i].type != "NAME":
            return False
        i -= 1
    if i >= 0 and tokens[i].type == "NOT":
        i -= 1
    return i >= 0 and tokens[i].type == "_IS"


def _reducer(codes: str, inline: bool, expand1: bool, callback: Any) -> Any:
    """What reducing one rule does with its children, decided once per rule."""
    if codes == "k" * len(codes):

        def collect(values: list) -> list:
            return values
    elif "s" not in codes:
        keep = [i for i, code in enumerate(codes) if code == "k"]

        def collect(values: list) -> list:
            return [values[i] for i in keep]
    elif codes[0] == "s":
        # A left-recursive repetition (`body: _node*` becomes `items: items _node`): the
        # items so far arrive as a list no one else holds, so it grows in place.  Copying
        # it on every reduction would make a body of n statements cost n**2.
        rest = tuple(codes[1:])

        def collect(values: list) -> list:
            children: list = values[0]
            for code, value in zip(rest, values[1:], strict=True):
                if code == "k":
                    children.append(value)
                elif code == "s":
                    children.extend(value)
            return children
    else:
        plan = tuple(codes)

        def collect(values: list) -> list:
            children: list = []
            for code, value in zip(plan, values, strict=True):
                if code == "k":
                    children.append(value)
                elif code == "s":
                    children.extend(value)
            return children

    if inline:
        return collect
    if expand1:

        def reduce_expand(values: list) -> Any:
            children = collect(values)
            if len(children) == 1:
                return children[0]
            return callback(children)

        return reduce_expand
    if callback is None:  # pragma: no cover - every named rule has a builder
        raise AssertionError("grammar rule without a builder")

    def reduce(values: list) -> Any:
        return callback(collect(values))

    return reduce


@functools.lru_cache(maxsize=1)
def _machinery() -> tuple[_Machine, TagScanner]:
    table = load_table()
    scanner = TagScanner((tuple(t) for t in table["terminals"]), table["tags"])
    return _Machine(table), scanner


def parse(source: str, options: LexOptions) -> tuple[str, n.Template]:
    """Parse ``source``; return the normalised source (offsets refer to it) and the tree."""
    machine, scanner = _machinery()
    lexer = Lexer(scanner, options)
    try:
        normalised, tokens = lexer.tokenize(source)
    except TemplateSyntaxError as error:
        raise _earlier_parse_error(machine, lexer.tokens, error) from None
    try:
        return normalised, machine.run(tokens, len(normalised))
    except TemplateSyntaxError as error:
        if error.source is None:
            error.source = normalised
        raise
    except _ParseFailure as failure:
        raise _describe_parse_error(failure, normalised, tokens) from None


def _earlier_parse_error(
    machine: _Machine, tokens: list[Token], scan_error: TemplateSyntaxError
) -> TemplateSyntaxError:
    """The error Jinja reports when its lexer fails: its parser pulls one token at a time, so
    a parse error at a token before the place the lexer fails comes first."""
    source = scan_error.source or ""
    try:
        machine.run(tokens, len(source))
    except _ParseFailure as failure:
        if failure.token.type != "$END":
            return _describe_parse_error(failure, source, tokens)
    except TemplateSyntaxError:
        pass  # a rule of the tree builder; the lexer's error stands
    return scan_error


def _describe_parse_error(error: _ParseFailure, source: str, tokens: list) -> TemplateSyntaxError:
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
    keywords and ``*args``, then ``**kwargs``."""
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
    """Whether ``before`` ends with the ``(params)`` right after ``{% call``."""
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
    """The kinds of ``tokens`` outside any bracket they open."""
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
    """The token that opened the tag being parsed: ``_VAR_BEGIN`` or a block tag's TAG_*."""
    for token in reversed(before):
        if token.type == "_VAR_BEGIN" or token.type.startswith("TAG_"):
            return token.type
        if token.type in _TAG_ENDS:
            return None
    return None


def _seen_in_tag(before: list[Token], kind: str) -> bool:
    """Whether a ``kind`` token already came in the tag being parsed."""
    for token in reversed(before):
        if token.type == kind:
            return True
        if token.type == "_VAR_BEGIN" or token.type.startswith("TAG_"):
            return False
    return False


def _innermost_bracket(before: list[Token]) -> int | None:
    """The index in ``before`` of the bracket still open at its end, within the current tag."""
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


# A backslash and what follows it in a literal; octal escapes take up to three digits.
_ESCAPE = re.compile(r"\\([0-7]{1,3}|.)", re.DOTALL)
# What may follow a backslash in Python's unicode-escape codec (and so in Jinja2's literals).
_VALID_ESCAPES = frozenset("\n\\'\"abfnrtvxuUN")


def _quiet_escape(match: re.Match[str]) -> str:
    # Jinja2 decodes with unicode-escape, which keeps an invalid escape (``\q`` stays ``\q``) but
    # warns (DeprecationWarning), as Python 3.12 does of octal escapes past 0o377: the same
    # text, written so that the codec has nothing to warn about.
    escape = match.group(1)
    if escape[0] in "01234567":
        code = int(escape, 8)
        return f"\\u{code:04x}" if code > 0o377 else match.group()
    if escape in _VALID_ESCAPES:
        return match.group()
    return "\\\\" + escape


def _decode_string(token: Any) -> str:
    body = str(token)[1:-1]
    if "\\" not in body:
        return body
    try:
        # As Jinja2: non-ASCII characters become escapes first (``\é`` gives the four
        # characters ``\xe9``), then the escapes are decoded.
        ascii_body = body.encode("ascii", "backslashreplace").decode("ascii")
        return _ESCAPE.sub(_quiet_escape, ascii_body).encode("ascii").decode("unicode-escape")
    except UnicodeDecodeError as error:
        failure = TemplateSyntaxError(error.reason)
        failure.offset = token.start_pos
        raise failure from None


def _pos(item: Any) -> int | None:
    if isinstance(item, n.Node):
        return item.pos
    return getattr(item, "start_pos", None)


def _refuse_chained_test(value: n.Node, pos: int, parenthesised: set[int]) -> None:
    # Jinja reads the word after an argument-less test as its argument, and refuses `is`
    # there; `(x is odd) is true` is fine.
    if id(value) in parenthesised:
        return
    inner = value.operand if isinstance(value, n.Unary) and value.op == "not" else value
    if isinstance(inner, n.Test) and inner.arguments is n.NO_ARGUMENTS:
        error = TemplateSyntaxError("You cannot chain multiple tests with is")
        error.offset = pos
        raise error


def _syntax_failure(message: str, pos: int | None) -> TemplateSyntaxError:
    error = TemplateSyntaxError(message)
    error.offset = pos
    return error


def _refuse_repeated_keywords(arguments: n.Arguments) -> None:
    # A call is a Python call, where a repeated keyword is an error; filter and test
    # arguments are not checked by Jinja (the last one wins).
    seen: set[str] = set()
    for key, value in arguments.kwargs:
        if key in seen:
            raise _syntax_failure(f"keyword argument repeated: {key}", value.pos)
        seen.add(key)


def _fold_trailers(base: n.Node, trailers: list) -> n.Node:
    node = base
    for kind, value, pos in trailers:
        if kind == "attr":
            node = n.GetAttr(pos, node, value)
        elif kind == "item":
            node = n.GetItem(pos, node, value)
        else:
            node = n.Call(node.pos if pos is None else pos, node, value)
    return node


class _AstBuilder:
    """Callbacks, one per grammar rule or alias, building nodes while the parser runs."""

    def __init__(self) -> None:
        # Nodes written in parentheses during the current parse (ids; cleared per parse).
        self.in_parentheses: set[int] = set()

    # Lark looks callbacks up by attribute name; children arrive as a list.
    def start(self, c):
        return n.Template(0, c[0])

    def body(self, c):
        return tuple(c)

    def data(self, c):
        return n.Data(c[0].start_pos, str(c[0]))

    def output(self, c):
        return n.Output(c[0].pos, c[0])

    def if_stmt(self, c):
        tag, test, body = c[0], c[1], c[2]
        branches = [(tag.start_pos, test, body)]
        otherwise: tuple = ()
        for item in c[3:]:
            if isinstance(item, tuple) and item and item[0] == "elif":
                branches.append(item[1:])
            elif isinstance(item, tuple) and item and item[0] == "else":
                otherwise = item[1]
        for pos, branch_test, branch_body in reversed(branches):
            otherwise = (n.If(pos, branch_test, branch_body, otherwise),)
        return otherwise[0]

    def elif_clause(self, c):
        return ("elif", c[0].start_pos, c[1], c[2])

    def else_clause(self, c):
        return ("else", c[1])

    def for_stmt(self, c):
        tag, target, _in, iterable = c[0], c[1], c[2], c[3]
        condition = None
        recursive = False
        body: tuple = ()
        otherwise: tuple = ()
        for item in c[4:]:
            if isinstance(item, tuple) and item and item[0] == "filter":
                condition = item[1]
            elif isinstance(item, bool):
                recursive = item
            elif isinstance(item, tuple) and item and item[0] == "else":
                otherwise = item[1]
            elif isinstance(item, tuple):
                body = item
        return n.For(tag.start_pos, target, iterable, body, otherwise, condition, recursive)

    def for_filter(self, c):
        return ("filter", c[0])

    def recursive_flag(self, c):
        return bool(c)

    def tuple(self, c):
        return n.TupleLit(_pos(c[0]), tuple(c))

    def empty_tuple(self, c):
        return n.TupleLit(None, ())

    def target_name(self, c):
        name = str(c[0])
        if name in _CONSTANT_NAMES:
            error = TemplateSyntaxError("can't assign to 'const'")
            error.offset = c[0].start_pos
            raise error
        return n.TargetName(c[0].start_pos, name)

    def target_tuple(self, c):
        return n.TargetTuple(c[0].pos, tuple(c))

    def target_attr(self, c):
        return n.TargetAttr(c[0].start_pos, str(c[0]), str(c[1]))

    def set_stmt(self, c):
        return n.Assign(c[0].start_pos, c[1], c[2])

    def set_block(self, c):
        filters = c[2] if len(c) == 5 else ()
        return n.AssignBlock(c[0].start_pos, c[1], filters, c[-2])

    def macro(self, c):
        params = c[2] if len(c) == 5 else ()
        return n.Macro(c[0].start_pos, str(c[1]), params, c[-2])

    def params(self, c):
        seen_default = False
        for param in c:
            if param.default is not None:
                seen_default = True
            elif seen_default:
                raise _syntax_failure("non-default argument follows default argument", None)
        return tuple(c)

    def param(self, c):
        return n.Param(str(c[0]), c[1] if len(c) > 1 else None)

    def call_block(self, c):
        params = c[1] if len(c) == 5 else ()
        return n.CallBlock(c[0].start_pos, c[-3], params, c[-2])

    def call_target(self, c):
        name = c[0]
        node = _fold_trailers(n.Name(name.start_pos, str(name)), c[1:-1])
        _refuse_repeated_keywords(c[-1])
        return n.Call(node.pos, node, c[-1])

    def filter_block(self, c):
        return n.FilterBlock(c[0].start_pos, c[1], c[2])

    def filter_chain(self, c):
        return tuple(n.Filter(pos, None, name, args) for pos, name, args in c)

    def filter_call(self, c):
        pos, name = c[0]
        return (pos, name, c[1] if len(c) > 1 else n.NO_ARGUMENTS)

    def with_stmt(self, c):
        return n.With(c[0].start_pos, tuple(c[1:-2]), c[-2])

    def with_assign(self, c):
        return (c[0], c[1])

    def generation(self, c):
        return n.Generation(c[0].start_pos, c[1])

    def block_stmt(self, c):
        tag, name = c[0], str(c[1])
        flags = [item for item in c[2:] if isinstance(item, str)]
        # Jinja takes `scoped`, then `required`, each once, in that order.
        allowed = ["scoped", "required"]
        for flag in flags:
            if flag not in allowed:
                raise _syntax_failure(
                    f"expected token 'end of statement block', got {flag!r}", tag.start_pos
                )
            del allowed[: allowed.index(flag) + 1]
        closing = [t for t in c if getattr(t, "type", None) == "NAME" and t is not c[1]]
        if closing and str(closing[-1]) != name:
            raise _syntax_failure(f"'{name}' expected, got '{closing[-1]}'", closing[-1].start_pos)
        body = next(item for item in c if isinstance(item, tuple))
        required = "required" in flags
        if required and not all(isinstance(i, n.Data) and i.text.isspace() for i in body):
            end = next(t for t in c if getattr(t, "type", None) == "TAG_ENDBLOCK")
            raise _syntax_failure(
                "Required blocks can only contain comments or whitespace", end.start_pos
            )
        return n.Block(tag.start_pos, name, "scoped" in flags, required, body)

    def block_flag(self, c):
        return str(c[0])

    def break_stmt(self, c):
        return n.Break(c[0].start_pos)

    def continue_stmt(self, c):
        return n.Continue(c[0].start_pos)

    # ------------------------------------------------------------ expressions

    def cond_expr(self, c):
        return n.CondExpr(c[0].pos, c[1], c[0], c[2] if len(c) > 2 else None)

    def or_op(self, c):
        return n.Or(c[0].pos, c[0], c[1])

    def and_op(self, c):
        return n.And(c[0].pos, c[0], c[1])

    def not_op(self, c):
        return n.Unary(c[0].start_pos, "not", c[1])

    def compare(self, c):
        return n.Compare(c[0].pos, c[0], tuple(c[1:]))

    def comparison(self, c):
        return (c[0], c[1])

    def comp_op(self, c):
        return "notin" if len(c) == 2 else str(c[0])

    def binop(self, c):
        return n.BinOp(c[1].start_pos, str(c[1]), c[0], c[2])

    def concat(self, c):
        left = c[0]
        items = left.items if isinstance(left, n.Concat) else (left,)
        return n.Concat(left.pos, items + (c[1],))

    def filter_expr(self, c):
        pos, name, args = c[1]
        return n.Filter(pos, c[0], name, args)

    def test_expr(self, c):
        pos, name, args = c[1]
        _refuse_chained_test(c[0], pos, self.in_parentheses)
        return n.Test(pos, c[0], name, args)

    def not_test_expr(self, c):
        pos, name, args = c[2]
        _refuse_chained_test(c[0], pos, self.in_parentheses)
        return n.Unary(pos, "not", n.Test(pos, c[0], name, args))

    def parenthesised(self, c):
        self.in_parentheses.add(id(c[0]))
        return c[0]

    def neg(self, c):
        return n.Unary(c[0].start_pos, "-", c[1])

    def pos(self, c):
        return n.Unary(c[0].start_pos, "+", c[1])

    def test_call(self, c):
        pos, name = c[0]
        if len(c) == 1:
            return (pos, name, n.NO_ARGUMENTS)
        return (pos, name, c[1])

    def in_test_name(self, c):
        return (c[0].start_pos, "in")

    def test_arg(self, c):
        return n.Arguments(args=(_fold_trailers(c[0], c[1:]),))

    def dotted_name(self, c):
        return (c[0].start_pos, ".".join(str(t) for t in c))

    def postfix(self, c):
        return _fold_trailers(c[0], c[1:])

    def attr_trailer(self, c):
        return ("attr", str(c[0]), c[0].start_pos)

    def index_trailer(self, c):
        return ("item", n.Const(c[0].start_pos, int(str(c[0]).replace("_", ""), 0)), c[0].start_pos)

    def item_trailer(self, c):
        return ("item", c[0], _pos(c[0]))

    def empty_item_trailer(self, c):
        # Jinja reads `x[]` as `x[()]`.
        return ("item", n.TupleLit(None, ()), None)

    def call_trailer(self, c):
        _refuse_repeated_keywords(c[0])
        return ("call", c[0], None)

    def subscript(self, c):
        if len(c) == 1:
            return c[0]
        return n.TupleLit(_pos(c[0]), tuple(c))

    def slice(self, c):
        parts: list = [None, None, None]
        index = 0
        position = None
        for item in c:
            if getattr(item, "type", None) == "COLON":
                position = position if position is not None else item.start_pos
                index += 1
            else:
                parts[index] = item
        first = next((p for p in parts if p is not None), None)
        return n.Slice(first.pos if first is not None else position, *parts)

    def call_args(self, c):
        args: list = []
        kwargs: list = []
        star = dstar = None
        for kind, value in c:
            # Jinja's order: positional, keywords and *args, then **kwargs.
            if kind == "pos":
                valid = star is None and dstar is None and not kwargs
            elif kind == "kw":
                valid = dstar is None
            elif kind == "star":
                valid = star is None and dstar is None
            else:
                valid = dstar is None
            if not valid:
                position = value[1].pos if kind == "kw" else value.pos
                raise _syntax_failure("invalid syntax for function call expression", position)
            if kind == "pos":
                args.append(value)
            elif kind == "kw":
                kwargs.append(value)
            elif kind == "star":
                star = value
            else:
                dstar = value
        return n.Arguments(tuple(args), tuple(kwargs), star, dstar)

    def pos_arg(self, c):
        return ("pos", c[0])

    def kw_arg(self, c):
        return ("kw", (str(c[0]), c[1]))

    def star_arg(self, c):
        return ("star", c[1])

    def dstar_arg(self, c):
        return ("dstar", c[1])

    def name(self, c):
        token = c[0]
        value = str(token)
        if value in _CONSTANT_NAMES:
            return n.Const(token.start_pos, _CONSTANT_NAMES[value])
        return n.Name(token.start_pos, value)

    def string(self, c):
        return n.Const(c[0].start_pos, "".join(_decode_string(t) for t in c))

    def int_lit(self, c):
        digits = str(c[0]).replace("_", "")
        if len(digits) > _MAX_INT_LITERAL:
            # int() refuses (3.11+) or takes quadratic time (3.10) on such a literal.
            error = TemplateSyntaxError(
                f"an integer literal of {len(digits)} digits is longer than {_MAX_INT_LITERAL}"
            )
            error.offset = c[0].start_pos
            raise error
        return n.Const(c[0].start_pos, int(digits, 0))

    def float_lit(self, c):
        return n.Const(c[0].start_pos, float(str(c[0]).replace("_", "")))

    def list_lit(self, c):
        return n.ListLit(_pos(c[0]) if c else None, tuple(c))

    def dict_lit(self, c):
        return n.DictLit(_pos(c[0][0]) if c else None, tuple(c))

    def dict_item(self, c):
        return (c[0], c[2])
