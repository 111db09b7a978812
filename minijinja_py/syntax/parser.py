"""Template text to syntax tree: the lexer, Lark's LALR parser over grammar/jinja.lark, and the
builder that turns grammar rules into `nodes`.

The Lark parser is built on first use and shared by every environment of the process.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from ..errors import TemplateSyntaxError
from . import nodes as n
from .lexer import Lexer, LexOptions, TagScanner, Token
from .parse_errors import ParseFailure, describe_parse_error
from .reducers import reducer
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
            reduce = reducer(codes, inline, expand1, getattr(builder, callback, None))
            self.rules.append((origin, len(codes), reduce, unit))
        # (state below, state on top, lookahead) -> top state after the chain of unit reductions
        self.unit_chains: dict[tuple[int, int, str], int] = {}
        # The same key -> the top state after the chain of reductions of one symbol, and what
        # each reduction does to the value on top (as in run: None wraps it in a list).
        self.top_chains: dict[tuple[int, int, str], tuple[int, tuple[Any, ...], Any]] = {}

    def _top_chain(self, below: int, top: int, lookahead: str) -> tuple[int, tuple[Any, ...], Any]:
        states = self.states
        rules = self.rules
        state = top
        reducers = []
        while True:
            action = states[state].get(lookahead)
            if action is None or action >= 0:
                break
            origin, size, reduce, unit = rules[-1 - action]
            if size != 1:
                break
            if not unit:
                reducers.append(reduce)
            state = states[below][origin]
        # (with the action that follows the chain, which the chain has just looked up)
        chain = self.top_chains[(below, top, lookahead)] = (state, tuple(reducers), action)
        return chain

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
        """Whether `kind` can come next: the reductions it causes, then a shift, simulated on
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
        """Jinja's lexer has no keywords: `if`, `in`, `not`, ... are names that its parser
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

    def run(
        self, tokens: list[Token], source_length: int, max_nesting: int | None = None
    ) -> n.Template:
        self.builder.in_parentheses.clear()
        # Every construct left open on the stack holds less than the longest rule (a `for` tag,
        # 11 symbols) and is a level of the tree or a bracket: a stack deeper than this holds
        # more levels than max_nesting allows, and is refused as it grows (`- - - ... x` of a
        # hundred thousand signs stops at the 2,265th), not after the whole tree is built.
        deepest = _LONGEST_RULE * 2 * max_nesting + 64 if max_nesting is not None else -1
        states = self.states
        rules = self.rules
        top_chains = self.top_chains
        end_state = self.end
        top = self.start  # (always state_stack[-1])
        state_stack = [top]
        value_stack: list[Any] = []
        keywords = self.keywords
        for index, token in enumerate(tokens):
            kind = token.type
            action = states[top].get(kind)
            if kind in keywords:
                # A word the grammar shifts at once is read as itself, unless it stands where
                # _read_word looks for a name first (after `(`, `,`, a test's name, or `not`).
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
                    action = states[top].get(kind)
            while True:
                if action is None:
                    raise ParseFailure(token, states[top])
                if action >= 0:
                    state_stack.append(action)
                    value_stack.append(token)
                    top = action
                    if len(state_stack) == deepest:
                        error = TemplateSyntaxError(
                            f"the template nests deeper than max_nesting ({max_nesting})"
                        )
                        error.offset = token.start_pos
                        raise error
                    break
                origin, size, reduce, unit = rules[-1 - action]
                if size == 1:
                    # Most reductions replace the top of the stacks: a run of them depends only
                    # on the two top states and the lookahead, and is taken in one step.
                    below = state_stack[-2]
                    chain = top_chains.get((below, top, kind))
                    if chain is None:
                        chain = self._top_chain(below, top, kind)
                    top, reducers, action = chain
                    state_stack[-1] = top
                    if reducers:
                        value = value_stack[-1]
                        for reduce in reducers:
                            value = [value] if reduce is None else reduce([value])
                        value_stack[-1] = value
                    continue
                if size:
                    values = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    values = []
                top = states[state_stack[-1]][origin]
                state_stack.append(top)
                value_stack.append(values if reduce is None else reduce(values))
                action = states[top].get(kind)
        end_token = Token("$END", "", source_length)
        while True:
            action = states[state_stack[-1]].get("$END")
            if action is None or action >= 0:
                raise ParseFailure(end_token, states[state_stack[-1]])
            origin, size, reduce, _ = rules[-1 - action]
            if size:
                values = value_stack[-size:]
                del state_stack[-size:]
                del value_stack[-size:]
            else:
                values = []
            state_stack.append(states[state_stack[-1]][origin])
            value_stack.append(values if reduce is None else reduce(values))
            if state_stack[-1] == end_state:
                return value_stack[-1]


# Jinja reads the word after an argument-less test's name as the test's argument if it is one of
# these (`else`, `or` and `and` stay operators, `is` is refused).
_TEST_ARGUMENT_WORDS = frozenset(["_IF", "IN", "NOT", "RECURSIVE"])
# The tokens after which _read_word may read a word as a name although the grammar takes it.
_NAME_FIRST = frozenset(["_LPAR", "_COMMA"])
_TEST_NAME_ENDS = frozenset(["NAME", "IN"])  # (the last token of `is [not] name` or `is in`)


def _after_test_name(tokens: list[Token], index: int) -> bool:
    """Whether `tokens[index]` directly follows `is [not] name(.name)*`."""
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


_LONGEST_RULE = 11


@functools.lru_cache(maxsize=1)
def _machinery() -> tuple[_Machine, TagScanner]:
    table = load_table()
    scanner = TagScanner((tuple(t) for t in table["terminals"]), table["tags"])
    return _Machine(table), scanner


def parse(
    source: str, options: LexOptions, max_nesting: int | None = None
) -> tuple[str, n.Template]:
    """Parse `source`; return the normalised source (offsets refer to it) and the tree.

    `max_nesting`: brackets nested deeper are refused as the lexer reads them, and a parser
    stack deeper than that many levels can hold as it grows (the tree's own depth is checked
    by the compiler's analysis, after)."""
    machine, scanner = _machinery()
    lexer = Lexer(scanner, options, max_nesting)
    try:
        normalised, tokens = lexer.tokenize(source)
    except TemplateSyntaxError as error:
        raise _earlier_parse_error(machine, lexer.tokens, error) from None
    try:
        return normalised, machine.run(tokens, len(normalised), max_nesting)
    except TemplateSyntaxError as error:
        if error.source is None:
            error.source = normalised
        raise
    except ParseFailure as failure:
        raise describe_parse_error(failure, normalised, tokens) from None


def _earlier_parse_error(
    machine: _Machine, tokens: list[Token], scan_error: TemplateSyntaxError
) -> TemplateSyntaxError:
    """The error Jinja reports when its lexer fails: its parser pulls one token at a time, so
    a parse error at a token before the place the lexer fails comes first."""
    source = scan_error.source or ""
    try:
        machine.run(tokens, len(source))
    except ParseFailure as failure:
        if failure.token.type != "$END":
            return describe_parse_error(failure, source, tokens)
    except TemplateSyntaxError:
        pass  # a rule of the tree builder; the lexer's error stands
    return scan_error


# A backslash and what follows it in a literal; octal escapes take up to three digits.
_ESCAPE = re.compile(r"\\([0-7]{1,3}|.)", re.DOTALL)
# What may follow a backslash in Python's unicode-escape codec (and so in Jinja2's literals).
_VALID_ESCAPES = frozenset("\n\\'\"abfnrtvxuUN")
# A body whose escapes are all valid and none octal: _quiet_escape would leave it as it is.
_PLAIN_ESCAPES = re.compile(r"[^\\]*(?:\\[\n\\'\"abfnrtvxuUN][^\\]*)*")


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
    body = token.value[1:-1]
    if "\\" not in body:
        return body
    try:
        # As Jinja2: non-ASCII characters become escapes first (``\é`` gives the four
        # characters ``\xe9``), then the escapes are decoded.
        ascii_body = body.encode("ascii", "backslashreplace").decode("ascii")
        if _PLAIN_ESCAPES.fullmatch(ascii_body) is None:  # (most literals: `'\n'`)
            ascii_body = _ESCAPE.sub(_quiet_escape, ascii_body)
        return ascii_body.encode("ascii").decode("unicode-escape")
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
        return n.Data(c[0].start_pos, c[0].value)

    def output(self, c):
        return n.Output(c[0].pos, c[0])

    def if_stmt(self, c):
        tag, test, body = c[0], c[1], c[2]
        branches = [(tag.start_pos, test, body)]
        otherwise = ()
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
        body = ()
        otherwise = ()
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
        name = c[0].value
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
        return "notin" if len(c) == 2 else c[0].value

    def binop(self, c):
        return n.BinOp(c[1].start_pos, c[1].value, c[0], c[2])

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
        if len(c) == 1:
            return (c[0].start_pos, c[0].value)
        return (c[0].start_pos, ".".join(t.value for t in c))

    def postfix(self, c):
        return _fold_trailers(c[0], c[1:])

    def attr_trailer(self, c):
        return ("attr", c[0].value, c[0].start_pos)

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
        parts = [None, None, None]
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
        args = []
        kwargs = []
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
        return ("kw", (c[0].value, c[1]))

    def star_arg(self, c):
        return ("star", c[1])

    def dstar_arg(self, c):
        return ("dstar", c[1])

    def name(self, c):
        token = c[0]
        value = token.value
        if value in _CONSTANT_NAMES:
            return n.Const(token.start_pos, _CONSTANT_NAMES[value])
        return n.Name(token.start_pos, value)

    def string(self, c):
        if len(c) == 1:
            return n.Const(c[0].start_pos, _decode_string(c[0]))
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
