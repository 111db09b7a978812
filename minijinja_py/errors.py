"""The error family raised by the engine.

Every failure that leaves `render()` is a `TemplateError`.  Errors carry the source offset
where they happened; line and column are computed only when somebody asks for them, so raising
stays cheap on the hot path.
"""

from __future__ import annotations

from typing import Any

#: The most characters of an error's message kept as they are: a message can quote a value as
#: long as the data (``float(big)`` quotes all of ``big``; ``raise_exception(x)`` prints ``x``).
#: A longer message keeps its first MAX_MESSAGE characters and ends in an elision marker,
#: ``... (N characters in all)`` or, where the whole text was never made, ``... (cut at
#: MAX_MESSAGE characters)``: every message is at most :data:`MAX_MESSAGE_TOTAL` characters.
MAX_MESSAGE = 2000
#: The longest message any error of the engine carries, elision marker included.
MAX_MESSAGE_TOTAL = MAX_MESSAGE + 48
# Decimal digits of an int printed in full; longer ones are described (Python's own default
# limit, which a process may have raised or lowered: converting is quadratic in the digits).
_MAX_INT_DIGITS = 4300


def capped_message(text: str) -> str:
    """`text`, cut to `MAX_MESSAGE` characters with a note of its length."""
    if len(text) <= MAX_MESSAGE:
        return text
    return f"{str.__getitem__(text, slice(0, MAX_MESSAGE))}... ({len(text)} characters in all)"


def bounded_text(value: object, limit: int = MAX_MESSAGE) -> str:
    """`str(value)` as a message: a plain `str` of at most `limit` characters and an
    elision marker, made without ever building more than `limit + 1` characters of it.

    Safe for any value: an int past the digit limit is described (`<int of 5001 digits>`),
    containers are printed by our own walk (shared or self-referencing ones included), and an
    object whose `__str__` raises is named (`<unprintable Foo object>`).

    >>> bounded_text([1, "a"])
    "[1, 'a']"
    >>> bounded_text(10**5000)
    '<int of 5001 digits>'
    >>> bounded_text("x" * 3000, 4)
    'xxxx... (3000 characters in all)'
    """
    if isinstance(value, str):
        if type(value) is str and len(value) <= limit:
            return value
        if len(value) <= limit:
            return str.__getitem__(value, slice(None))  # a plain str of a subclass's text
        head = str.__getitem__(value, slice(0, limit))
        return f"{head}... ({len(value)} characters in all)"
    if isinstance(value, BaseException) and type(value).__str__ is BaseException.__str__:
        # Python's own rule for an exception's text, with its arguments printed by our walk.
        args = value.args
        if not args:
            return ""
        return bounded_text(args[0] if len(args) == 1 else args, limit)
    if isinstance(value, KeyError) and len(value.args) == 1:  # Python quotes the key
        return bounded_repr(value.args[0], limit)
    if _printed_by_walk(value):
        return _walk(value, limit)
    try:
        text = str(value)
    except Exception:  # noqa: BLE001 - a message must come out of anything raised with
        return f"<unprintable {_type_name(value)} object>"
    if not isinstance(text, str):  # pragma: no cover - str() always gives a str
        return f"<unprintable {_type_name(value)} object>"
    return bounded_text(text, limit)


def bounded_repr(value: object, limit: int = MAX_MESSAGE) -> str:
    """`repr(value)` under the rules of `bounded_text`.

    >>> bounded_repr("it's")
    '"it\'s"'
    """
    if isinstance(value, str) or _printed_by_walk(value):
        return _walk(value, limit, quote=True)
    if isinstance(value, BaseException) and type(value).__repr__ is BaseException.__repr__:
        args = value.args
        name = _type_name(value)
        shown = bounded_repr(args[0] if len(args) == 1 else args, limit)
        return bounded_text(f"{name}({shown})" if len(args) == 1 else f"{name}{shown}", limit)
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001
        return f"<unprintable {_type_name(value)} object>"
    return bounded_text(text, limit)


def _type_name(value: object) -> str:
    try:
        return str(type(value).__name__)
    except Exception:  # noqa: BLE001 - a metaclass may do anything
        return "object"


# The builtin types our walk prints as Python's repr does, and the repr each inherits.
_WALKED = {
    int: int.__repr__,
    float: float.__repr__,
    bool: bool.__repr__,
    type(None): object.__repr__,
    list: list.__repr__,
    tuple: tuple.__repr__,
    dict: dict.__repr__,
    set: set.__repr__,
    frozenset: frozenset.__repr__,
}


def _base(value: object) -> type | None:
    """The builtin type whose printing `value` inherits unchanged, if any."""
    kind = type(value)
    if kind in _WALKED:
        return kind
    for base in (bool, int, float, list, tuple, dict, set, frozenset):
        if isinstance(value, base):
            return base if getattr(kind, "__repr__", None) is _WALKED[base] else None
    return None


def _printed_by_walk(value: object) -> bool:
    base = _base(value)
    if base is None:
        return False
    # A subclass with its own __str__ prints its own way.
    return type(value).__str__ in (object.__str__, base.__str__)


class _Full(Exception):
    """The text reached its limit: the walk stops."""


class _Text:
    """Parts of a text, refusing more than `room` characters."""

    def __init__(self, room: int) -> None:
        self.parts: list[str] = []
        self.room = room

    def add(self, text: str) -> None:
        if len(text) > self.room:
            self.parts.append(text[: self.room])
            self.room = 0
            raise _Full
        self.parts.append(text)
        self.room -= len(text)


def _walk(value: object, limit: int, quote: bool = False) -> str:
    out = _Text(limit + 1)
    try:
        _print(value, out, quote)
    except _Full:
        text = "".join(out.parts)
        return f"{text[:limit]}... (cut at {limit} characters)"
    return "".join(out.parts)


_CLOSERS: dict[type, tuple[str, str, str]] = {
    list: ("[", "]", "[...]"),
    tuple: ("(", ")", "(...)"),
    dict: ("{", "}", "{...}"),
}


def _print(value: object, out: _Text, quote: bool) -> None:
    """Python's repr of `value` (its str at the top when `quote` is false), without
    recursion: a stack of iterators over each open container's pieces."""
    stack: list[Any] = [iter(((value, quote),))]
    open_ids: list[int] = [-1]
    while stack:
        piece = next(stack[-1], None)
        if piece is None:
            stack.pop()
            open_ids.pop()
            continue
        if isinstance(piece, str):
            out.add(piece)
            continue
        item, as_repr = piece
        if isinstance(item, str):
            out.add(_str_repr(item, out.room) if as_repr else bounded_text(item, out.room))
            continue
        base = _base(item)
        if base is None:
            out.add(bounded_repr(item, out.room))
        elif base is int:
            out.add(_int_text(item))
        elif item is None:
            out.add("None")
        elif base in (float, bool):
            out.add(_WALKED[base](item))
        elif id(item) in open_ids:
            out.add(_CLOSERS.get(base, ("", "", "{...}"))[2])
        else:
            stack.append(_pieces(item, base))
            open_ids.append(id(item))


def _pieces(value: Any, base: type) -> Any:
    """The pieces of a container's repr: text, and (item, True) for each item to print."""
    if base is dict:
        yield "{"
        for index, (key, item) in enumerate(dict.items(value)):
            if index:
                yield ", "
            yield (key, True)
            yield ": "
            yield (item, True)
        yield "}"
        return
    if base in (set, frozenset):
        name = "set" if base is set else "frozenset"
        if not value:
            yield f"{name}()"
            return
        yield "{" if base is set else "frozenset({"
        for index, item in enumerate(value):
            if index:
                yield ", "
            yield (item, True)
        yield "}" if base is set else "})"
        return
    opener, closer, _ = _CLOSERS[base]
    yield opener
    count = 0
    for item in value:
        if count:
            yield ", "
        yield (item, True)
        count += 1
    if base is tuple and count == 1:
        yield ","
    yield closer


def _str_repr(text: str, room: int) -> str:
    # The repr of a prefix long enough to fill the room: no copy of a long string.
    head = str.__getitem__(text, slice(0, room + 1))
    shown = str.__repr__(head)
    if type(text) is not str and type(text).__repr__ is not str.__repr__:
        shown = f"{_type_name(text)}({shown})"  # Markup('...'), as its own repr has it
    return shown


def _int_text(value: int) -> str:
    digits = _digits(value)
    described = f"<{'negative ' if value < 0 else ''}int of {digits} digits>"
    if digits > _MAX_INT_DIGITS:
        return described
    try:
        return int.__repr__(value)
    except ValueError:  # this process lowered Python's own limit
        return described


def _digits(value: int) -> int:
    """Decimal digits of `abs(value)`, from its bit length (no decimal conversion)."""
    magnitude = -value if value < 0 else value
    if magnitude < 10:
        return 1
    digits = max(1, (magnitude.bit_length() - 1) * 30103 // 100000)
    power = 10**digits
    while power <= magnitude:
        digits += 1
        power *= 10
    return digits


# Excerpts of longer lines show this many characters either side of the caret.
_EXCERPT_LINE = 100
_EXCERPT_SIDE = 40


class TemplateError(Exception):
    """Base class of every error the engine raises; `raise_exception(msg)` raises exactly this.

    `message` is the message alone, always a `str` of at most `MAX_MESSAGE_TOTAL`
    characters: whatever an error is raised with (`raise_exception(10**5000)`, a list, an
    object whose `__str__` fails) becomes bounded text when the error is made, as
    `bounded_text` prints it (`raise_exception([1, 2])` has the message `'[1, 2]'`,
    the text Jinja2's error shows).  `lineno` and `colno` (1-based) place the error in the
    template, and `str(error)` adds the position and the source line with a caret.

    Examples:
        >>> from minijinja_py import chat_environment
        >>> template = chat_environment().from_string("{{ raise_exception('no system role') }}")
        >>> try:
        ...     template.render()
        ... except TemplateError as error:
        ...     print(error.message, error.lineno, error.colno)
        no system role 1 4
    """

    message: str

    def __init__(self, message: object = "") -> None:
        # Text already bounded (up to its elision marker) is kept as it is: never cut twice.
        if type(message) is str and len(message) <= MAX_MESSAGE_TOTAL:
            text = message
        else:
            text = bounded_text(message)
        super().__init__(text)
        self.message = text
        self.source: str | None = None
        self.offset: int | None = None
        self.name: str | None = None

    def with_position(self, source: str | None, offset: int | None) -> TemplateError:
        """Attach a position unless an inner frame already did."""
        if self.offset is None and offset is not None:
            self.source = source
            self.offset = offset
        return self

    @property
    def lineno(self) -> int | None:
        """The error's line, from 1; `None` when the error has no position."""
        if self.offset is None or self.source is None:
            return None
        return self.source.count("\n", 0, self.offset) + 1

    @property
    def colno(self) -> int | None:
        """The error's column, from 1; `None` when the error has no position."""
        if self.offset is None or self.source is None:
            return None
        return self.offset - (self.source.rfind("\n", 0, self.offset) + 1) + 1

    def source_excerpt(self) -> str:
        """The offending source line followed by a caret under the column; of a line longer
        than 100 characters (a one-line template), the 40 characters either side of the caret."""
        if self.offset is None or self.source is None:
            return ""
        start = self.source.rfind("\n", 0, self.offset) + 1
        end = self.source.find("\n", self.offset)
        if end == -1:
            end = len(self.source)
        before, after = "", ""
        if end - start > _EXCERPT_LINE:
            if self.offset - start > _EXCERPT_SIDE:
                start, before = self.offset - _EXCERPT_SIDE, "..."
            if end - self.offset > _EXCERPT_SIDE + 1:
                end, after = self.offset + _EXCERPT_SIDE + 1, "..."
        caret = " " * (len(before) + self.offset - start) + "^"
        return f"{before}{self.source[start:end]}{after}\n{caret}"

    def __str__(self) -> str:
        message = self.message
        if self.offset is None or self.source is None:
            return message
        where = f"line {self.lineno}, column {self.colno}"
        if self.name:
            where = f"{self.name}, {where}"
        return f"{message}\n  ({where})\n{self.source_excerpt()}"

    def __reduce__(self) -> tuple[Any, ...]:  # pickling (worker pools) keeps message and position
        return (_rebuild_error, (type(self), self.message, self.source, self.offset, self.name))


def _rebuild_error(
    cls: type[TemplateError],
    message: str,
    source: str | None,
    offset: int | None,
    name: str | None,
) -> TemplateError:
    error = cls.__new__(cls)
    TemplateError.__init__(error, message)
    error.source, error.offset, error.name = source, offset, name
    return error


class TemplateSyntaxError(TemplateError):
    """The template text does not parse.

    Messages name the innermost unclosed block, as Jinja2's parser does.

    Examples:
        >>> from minijinja_py import Environment
        >>> try:
        ...     Environment().from_string("{% for m in messages %}{{ m }}")
        ... except TemplateSyntaxError as error:
        ...     print(error.message)
        Unexpected end of template. Jinja was looking for the following tags: 'endfor' or 'else'. The innermost block that needs to be closed is 'for'.
    """


class TemplateRuntimeError(TemplateError):
    """A generic failure while rendering (bad operand types, wrong call arguments, ...).

    Examples:
        >>> from minijinja_py import Template
        >>> try:
        ...     Template("{{ 1 + 'a' }}").render()
        ... except TemplateRuntimeError as error:
        ...     print(error.message)
        unsupported operand type(s) for +: 'int' and 'str'
    """


class UndefinedError(TemplateRuntimeError):
    """An undefined value was used in a way that needs a real value.

    Examples:
        >>> from minijinja_py import Template
        >>> try:
        ...     Template("{{ message.content.strip() }}").render()
        ... except UndefinedError as error:
        ...     print(error.message)
        'message' is undefined
    """


class SecurityError(TemplateRuntimeError):
    """The template tried to reach something the sandbox refuses.

    Examples:
        >>> from minijinja_py import Template
        >>> try:
        ...     Template("{{ messages.append('injected') }}").render(messages=[])
        ... except SecurityError as error:
        ...     print(error.message)
        access to attribute 'append' of 'list' object is unsafe.
    """


class LimitError(TemplateRuntimeError):
    """A resource limit of the environment was exceeded; the message names the limit.

    Examples:
        >>> from minijinja_py import Environment, Limits
        >>> env = Environment(limits=Limits(max_range=10))
        >>> try:
        ...     env.from_string("{{ range(100)|list }}").render()
        ... except LimitError as error:
        ...     print(error.message)
        Range too big. The sandbox blocks ranges larger than MAX_RANGE (10).
    """


class FilterArgumentError(TemplateRuntimeError):
    """A filter was called with arguments it cannot use."""
