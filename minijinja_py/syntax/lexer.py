"""Splits template text into the tokens the grammar expects, applying Jinja's whitespace rules.

Whitespace control is lexical in Jinja: `-` markers, `trim_blocks` and `lstrip_blocks`
decide which characters of the surrounding text belong to the output.  It is done here, once,
with the same rules as Jinja2's lexer, so the parser and the evaluator never see stripped text.

Inside a tag the scanner is built from the expression terminals of `grammar/jinja.lark`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from sys import intern

from ..errors import TemplateSyntaxError
from .blocks import open_blocks, tag_failure

_TAG_START = re.compile(r"\{[{%#]")
_WHITESPACE = re.compile(r"\s+")
_SPACES = re.compile(r"\s*")
_TAG_NAME = re.compile(r"\s*([^\W\d]\w*)")
_RAW_BEGIN = re.compile(r"\{%([-+]?)\s*raw\s*(-%\}\s*|%\})")
_ENDRAW = re.compile(r"\{%([-+]?)\s*endraw\s*(\+%\}|-%\}\s*|%\})")
_COMMENT_END = re.compile(r"\+#\}|-#\}\s*|#\}")

_CLOSERS = {"(": ")", "[": "]", "{": "}"}
_OPENERS_CLOSED = frozenset(_CLOSERS.values())


class Token:
    """One token: its grammar terminal, its text and its offset in the (normalised) source."""

    __slots__ = ("type", "value", "start_pos")
    type: str
    value: str
    start_pos: int

    def __init__(self, type: str, value: str, start_pos: int) -> None:
        self.type = type
        self.value = value
        self.start_pos = start_pos

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"Token({self.type!r}, {self.value!r})"


def normalise_newlines(source: str, options: LexOptions) -> str:
    """Jinja's view of the text: every newline is \\n, and one trailing newline is dropped
    unless `keep_trailing_newline`; error positions refer to this text."""
    if "\r" in source:
        source = source.replace("\r\n", "\n").replace("\r", "\n")
    if not options.keep_trailing_newline and source.endswith("\n"):
        return source[:-1]
    return source


class LexOptions:
    """The environment options that change how text is split."""

    __slots__ = ("trim_blocks", "lstrip_blocks", "keep_trailing_newline", "disabled_tags")
    trim_blocks: bool
    lstrip_blocks: bool
    keep_trailing_newline: bool
    disabled_tags: frozenset[str]

    def __init__(
        self,
        trim_blocks: bool = False,
        lstrip_blocks: bool = False,
        keep_trailing_newline: bool = False,
        disabled_tags: frozenset[str] = frozenset(),  # grammar tags switched off here
    ) -> None:
        self.trim_blocks = trim_blocks
        self.lstrip_blocks = lstrip_blocks
        self.keep_trailing_newline = keep_trailing_newline
        self.disabled_tags = disabled_tags


class TagScanner:
    """Scans the inside of `{{ }}` and `{% %}` with the grammar's expression terminals."""

    operator_names: dict[str, str]
    tag_names: frozenset[str]

    def __init__(self, terminals: Iterable[tuple[str, str, bool]], tag_names: Iterable[str]):
        patterns: dict[str, str] = {}
        operators: list[tuple[str, str]] = []
        self.keywords: dict[str, str] = {}
        for name, pattern, is_literal in terminals:
            if not is_literal:
                patterns[name] = pattern
            elif re.fullmatch(r"[^\W\d]\w*", pattern):
                self.keywords[pattern] = name
            else:
                operators.append((name, pattern))
        operators.sort(key=lambda item: -len(item[1]))
        self.operator_names = {pattern: name for name, pattern in operators}
        # Tried as the grammar says (FLOAT, INT, NAME, STRING, operators) but cheaper: a
        # number starts with a digit, so a token that does not is first tried as a name, a
        # string and an operator (most tokens, spared two failing number patterns), and one
        # that does goes to FLOAT, INT and then NAME as before (DIGIT_NAME).
        operator_pattern = "|".join(re.escape(p) for _, p in operators)
        self._inside = "|".join(
            [
                f"(?P<NAME>(?!\\d)(?:{patterns['NAME']}))",
                f"(?P<STRING>{patterns['STRING']})",
                f"(?P<OP>{operator_pattern})",
                f"(?P<FLOAT>{patterns['FLOAT']})",
                f"(?P<INT>{patterns['INT']})",
                f"(?P<DIGIT_NAME>{patterns['NAME']})",
            ]
        )
        self._regex: re.Pattern[str] | None = None
        self._with_end: dict[str, re.Pattern[str]] = {}
        self.tag_names = frozenset(tag_names)
        self._tag_terminals: dict[frozenset[str], dict[str, str]] = {}

    def tag_terminals(self, disabled: frozenset[str]) -> dict[str, str]:
        """{tag name: its terminal} for the tags not in `disabled`."""
        terminals = self._tag_terminals.get(disabled)
        if terminals is None:
            terminals = {t: "TAG_" + t.upper() for t in self.tag_names if t not in disabled}
            self._tag_terminals[disabled] = terminals
        return terminals

    # The patterns are compiled when first needed (a few milliseconds each, and a process
    # using one kind of environment never needs all of them).

    @property
    def regex(self) -> re.Pattern[str]:
        """A token inside a tag; leading whitespace is consumed by the same match."""
        if self._regex is None:
            self._regex = re.compile(f"\\s*(?:{self._inside})", re.S)
        return self._regex

    def with_end(self, end_name: str) -> re.Pattern[str]:
        """A token inside a tag or the tag's closing marker, tried first as Jinja's lexer
        does: one regex per kind of tag keeps each token to a single match."""
        pattern = self._with_end.get(end_name)
        if pattern is None:
            closing = _CLOSING[end_name]
            pattern = re.compile(f"\\s*(?:(?P<END>{closing})|{self._inside})", re.S)
            self._with_end[end_name] = pattern
        return pattern


class Lexer:
    """One template's worth of scanning; `tokenize` is the entry point."""

    def __init__(
        self, scanner: TagScanner, options: LexOptions, max_nesting: int | None = None
    ) -> None:
        self.scanner = scanner
        self.options = options
        # Brackets nested deeper than this are refused where the lexer meets the first one too
        # many: a hundred thousand of them would otherwise be read, parsed and walked before
        # the analysis of the tree found the template too deep.  (A bracket is at least one
        # level of the tree: Jinja's own parser recurses a dozen Python frames per bracket.)
        self.max_nesting = max_nesting if max_nesting is not None else _UNBOUNDED
        self.var_end = scanner.with_end("var")
        self.tag_end = scanner.with_end("block_trim" if options.trim_blocks else "block")
        # The terminal of each tag name this environment takes.
        self.tag_terminals = scanner.tag_terminals(options.disabled_tags)
        self.tokens: list[Token] = []
        self.comment_suffix = "\n" if options.trim_blocks else ""

    def tokenize(self, source: str) -> tuple[str, list[Token]]:
        """Return the normalised source (as Jinja normalises newlines) and its tokens."""
        source = normalise_newlines(source, self.options)
        # Kept on the lexer: when scanning fails, the parser still sees the tokens before.
        tokens: list[Token] = []
        self.tokens = tokens
        pos = 0
        line_starting = True
        end = len(source)
        # (a raw block needs the word: most templates are spared a match per block tag)
        may_be_raw = "raw" in source
        lstrip_blocks = self.options.lstrip_blocks
        search = _TAG_START.search
        while pos < end:
            match = search(source, pos)
            if match is None:
                tokens.append(Token("DATA", source[pos:], pos))
                break
            start = match.start()
            kind = source[start + 1]
            marker = source[start + 2 : start + 3]
            raw = _RAW_BEGIN.match(source, start) if kind == "%" and may_be_raw else None
            if start > pos:
                text = source[pos:start]
                if marker == "-":
                    text = text.rstrip()
                elif marker != "+" and kind != "{" and lstrip_blocks:
                    text = self._lstrip_tail(text, line_starting)
                if text:
                    tokens.append(Token("DATA", text, pos))
            if raw is not None:
                pos, line_starting = self._raw(source, raw, tokens)
            elif kind == "#":
                pos, line_starting = self._comment(source, start, marker)
            else:
                pos, line_starting = self._tag(source, start, kind, tokens)
        return source, tokens

    def _lstrip_tail(self, text: str, line_starting: bool) -> str:
        # lstrip_blocks removes the spaces and tabs that stand alone between a newline (or the
        # start of a line) and the tag.
        line_pos = text.rfind("\n") + 1
        if (line_pos > 0 or line_starting) and _WHITESPACE.fullmatch(text, line_pos):
            return text[:line_pos]
        return text

    def _comment(self, source: str, start: int, begin_marker: str) -> tuple[int, bool]:
        search_from = start + 3 if begin_marker in ("-", "+") else start + 2
        idx = source.find("#}", search_from)
        if idx == -1:
            if search_from >= len(source):
                # Jinja's lexer stops quietly when nothing at all follows the opening.
                return len(source), False
            raise _syntax_error("Missing end of comment tag", source, start)
        # Jinja matches the shortest comment body followed by '+#}', '-#}' or '#}'.
        if idx - 1 >= search_from and source[idx - 1] in "+-":
            marker = source[idx - 1]
        else:
            marker = ""
        after = idx + 2
        if marker == "-":
            after = _after_spaces(source, after)
        elif marker == "" and self.comment_suffix and source.startswith("\n", after):
            after += 1
        return after, source[after - 1] == "\n"

    def _raw(self, source: str, raw: re.Match[str], tokens: list[Token]) -> tuple[int, bool]:
        body_start = raw.end()
        begin_line_starting = source[body_start - 1] == "\n"
        end_match = _ENDRAW.search(source, body_start)
        if end_match is None:
            if body_start >= len(source):
                return len(source), False  # nothing follows: Jinja stops quietly, as above
            raise _syntax_error("Missing end of raw directive", source, raw.start())
        body = source[body_start : end_match.start()]
        marker = end_match.group(1)
        if marker == "-":
            body = body.rstrip()
        elif marker != "+" and self.options.lstrip_blocks and body:
            body = self._lstrip_tail(body, begin_line_starting)
        if body:
            tokens.append(Token("DATA", body, body_start))
        after = end_match.end()
        closer = end_match.group(2)
        if closer == "%}" and self.options.trim_blocks and source.startswith("\n", after):
            after += 1
        return after, source[after - 1] == "\n"

    def _tag(self, source: str, start: int, kind: str, tokens: list[Token]) -> tuple[int, bool]:
        pos = start + 2
        if source[pos : pos + 1] in ("-", "+"):
            pos += 1
        if kind == "{":
            tokens.append(Token("_VAR_BEGIN", source[start:pos], start))
            return self._scan_inside(source, pos, self.var_end, "_VAR_END", tokens)
        name_match = _TAG_NAME.match(source, pos)
        tag = name_match.group(1) if name_match else ""
        terminal = self.tag_terminals.get(tag)
        if terminal is None or name_match is None:  # (no name: no terminal either)
            message = tag_failure(tag, open_blocks(tokens)) if tag else "tag name expected"
            raise _syntax_error(message, source, start)
        tokens.append(Token(terminal, tag, start))
        return self._scan_inside(source, name_match.end(), self.tag_end, "_BLOCK_END", tokens)

    def _scan_inside(
        self, source: str, pos: int, with_end: re.Pattern[str], end_type: str, tokens: list[Token]
    ) -> tuple[int, bool]:
        scanner = self.scanner
        keywords = scanner.keywords
        operator_names = scanner.operator_names
        match_at = with_end.match
        append = tokens.append
        balance: list[str] = []
        while True:
            match = match_at(source, pos)
            if match is None:
                pos = _after_spaces(source, pos)
                if pos >= len(source):
                    # Jinja's lexer stops at the end of the text inside a tag as anywhere;
                    # its parser then says what the unfinished tag was waiting for.
                    return pos, False
                raise _syntax_error(f"unexpected char {source[pos]!r} at {pos}", source, pos)
            group = match.lastgroup
            assert group is not None  # (every alternative of the pattern is named)
            if group == "NAME":
                start, pos = match.span(group)
                value = source[start:pos]
                if not value.isascii():
                    value = _checked_name(value, source, start)
                    pos = start + len(value)
                # Interned: a compiled template keeps one copy of each name it reads.
                append(Token(keywords.get(value, "NAME"), intern(value), start))
                continue
            if group == "END":
                if not balance:
                    start, after = match.span(group)
                    append(Token(end_type, source[start:after], start))
                    return after, source[after - 1] == "\n"
                # Inside brackets a closing marker is only an operator ('}' of a dict).
                match = scanner.regex.match(source, pos)
                if match is None:
                    raise _syntax_error(f"unexpected char {source[pos]!r} at {pos}", source, pos)
                group = match.lastgroup
                assert group is not None
            start, pos = match.span(group)
            value = source[start:pos]
            if group == "OP":
                if value in _CLOSERS:
                    balance.append(_CLOSERS[value])
                    if len(balance) > self.max_nesting:
                        raise _syntax_error(
                            f"the template nests deeper than max_nesting ({self.max_nesting})",
                            source,
                            start,
                        )
                elif value in _OPENERS_CLOSED:
                    if not balance:
                        raise _syntax_error(f"unexpected {value!r}", source, start)
                    expected = balance.pop()
                    if expected != value:
                        raise _syntax_error(
                            f"unexpected {value!r}, expected {expected!r}", source, start
                        )
                append(Token(operator_names[value], value, start))
            elif group == "DIGIT_NAME":  # (a name starting with a non-ASCII digit)
                value = _checked_name(value, source, start)
                pos = start + len(value)
                append(Token(keywords.get(value, "NAME"), intern(value), start))
            else:
                append(Token(group, value, start))


def _after_spaces(source: str, pos: int) -> int:
    """The offset of the first character at or after `pos` that is not whitespace."""
    match = _SPACES.match(source, pos)
    assert match is not None  # (`\s*` matches anywhere)
    return match.end()


_WORD = re.compile(r"\w")


def _checked_name(text: str, source: str, start: int) -> str:
    """The name Jinja reads at the start of `text` (a NAME match holding non-ASCII
    characters), or the error it reports there."""
    value = _jinja_name(text)
    if not value:
        raise _syntax_error(f"unexpected char {source[start]!r} at {start}", source, start)
    if not value.isidentifier():
        raise _syntax_error("Invalid character in identifier", source, start)
    return value


def _jinja_name(text: str) -> str:
    """The longest start of `text` made of the characters Jinja's names hold: word
    characters and those a Python identifier may continue with (combining marks, U+00B7...).
    Jinja's own table of them dates from an older Unicode; this follows the running Python's."""
    for index, char in enumerate(text):
        if not (_WORD.match(char) or ("a" + char).isidentifier()):
            return text[:index]
    return text


_CLOSING = {
    "var": r"-\}\}\s*|\}\}",
    "block": r"\+%\}|-%\}\s*|%\}",
    "block_trim": r"\+%\}|-%\}\s*|%\}\n?",
}


_UNBOUNDED = 1 << 62


def _syntax_error(message: str, source: str, offset: int) -> TemplateSyntaxError:
    error = TemplateSyntaxError(message)
    error.source = source
    error.offset = offset
    return error
