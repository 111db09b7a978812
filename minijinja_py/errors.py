"""The error family raised by the engine.

Every failure that leaves ``render()`` is a ``TemplateError``.  Errors carry the source offset
where they happened; line and column are computed only when somebody asks for them, so raising
stays cheap on the hot path.
"""

from __future__ import annotations

from typing import Any

#: The most characters of a Python error's message that the engine's error keeps: a message
#: can quote a value as long as the data (``float(big)`` quotes all of ``big``).
MAX_MESSAGE = 2000


def capped_message(text: str) -> str:
    """``text``, cut to :data:`MAX_MESSAGE` characters with a note of its length."""
    if len(text) <= MAX_MESSAGE:
        return text
    return f"{text[:MAX_MESSAGE]}... ({len(text)} characters in all)"


# Excerpts of longer lines show this many characters either side of the caret.
_EXCERPT_LINE = 100
_EXCERPT_SIDE = 40


class TemplateError(Exception):
    """Base class of every error the engine raises; ``raise_exception(msg)`` raises exactly this.

    ``message`` is the message alone; ``lineno`` and ``colno`` (1-based) place the error in the
    template, and ``str(error)`` adds the position and the source line with a caret.

    Examples:
        >>> from minijinja_py import chat_environment
        >>> template = chat_environment().from_string("{{ raise_exception('no system role') }}")
        >>> try:
        ...     template.render()
        ... except TemplateError as error:
        ...     print(error.message, error.lineno, error.colno)
        no system role 1 4
    """

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message)
        self.message = message
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
        """The error's line, from 1; ``None`` when the error has no position."""
        if self.offset is None or self.source is None:
            return None
        return self.source.count("\n", 0, self.offset) + 1

    @property
    def colno(self) -> int | None:
        """The error's column, from 1; ``None`` when the error has no position."""
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
        message = self.message if self.message is not None else ""
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
    message: str | None,
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
