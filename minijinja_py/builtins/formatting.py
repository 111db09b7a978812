"""The sandboxed `str.format`: replacement fields look values up as templates do.

Kept apart from `methods` so that `string` is imported only when a template formats.
"""

from __future__ import annotations

import string
from _string import formatter_field_name_split  # type: ignore[import-not-found]
from typing import Any

from ..sandbox.budget import check_size, max_string
from ..sandbox.format_spec import escaped_bound, repr_bound, spec_bound
from ..sandbox.opaque import holds_opaque, shown
from ..values.runtime import Markup, escape


class SandboxedFormatter(string.Formatter):
    """`str.format` whose `{0.attr}` and `{0[key]}` lookups obey the sandbox."""
    made: int

    def __init__(self, env: Any) -> None:
        # ``env``: the environment, or the str methods' stand-in with the sandbox's own
        # lookups when none is at hand (this module sits below methods.py).
        super().__init__()
        self._env = env
        self._getattr = env.getattr
        self._getitem = env.getitem
        # Characters the fields of the current format() call may make, together.
        self.made = 0

    def vformat(self, format_string: Any, args: Any, kwargs: Any) -> str:
        self.made = len(format_string)
        check_size(self.made, self._env)
        return super().vformat(format_string, args, kwargs)

    def _count_field(self, value: Any, format_spec: str) -> int:
        # A field makes its value's text, padded to the width in its spec (read as Python
        # reads it, see format_spec): measured before it is made, and added to what the
        # call's other fields make (``'{:9999999}' * 9``).
        made = spec_bound(value, format_spec, max_string(self._env))
        self.made += made
        check_size(self.made, self._env)
        return made

    def convert_field(self, value: Any, conversion: str | None) -> Any:
        # ``{!r}`` and ``{!a}`` make the repr before the field is formatted: its size first.
        if conversion == "r" or conversion == "a":
            limit = max_string(self._env)
            check_size(repr_bound(value, limit, ascii_only=conversion == "a"), self._env)
            if holds_opaque(value):
                value = shown(value)
        return super().convert_field(value, conversion)

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> tuple[Any, Any]:
        first, rest = formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, key in rest:
            obj = self._getattr(obj, key) if is_attr else self._getitem(obj, key)
        return obj, first

    def format_field(self, value: Any, format_spec: str) -> Any:
        self._count_field(value, format_spec)
        if holds_opaque(value):
            value = shown(value)
        return super().format_field(value, format_spec)


class SandboxedEscapeFormatter(SandboxedFormatter):
    """The formatter of `Markup.format`: every field is HTML-escaped unless it is markup."""

    def format_field(self, value: Any, format_spec: str) -> str:
        made = self._count_field(value, format_spec)
        # escaping makes the field up to five times as long
        self.made += escaped_bound(value, made) - made
        check_size(self.made, self._env)
        if isinstance(value, Markup):
            if format_spec:
                raise ValueError("Unsupported format specification for Markup.")
            rv: Any = value
        elif hasattr(value, "__html_format__"):
            rv = value.__html_format__(format_spec)
        elif hasattr(value, "__html__"):
            if format_spec:
                raise ValueError(
                    f"Format specifier {format_spec} given, but {type(value)} does not"
                    " define __html_format__. A class that defines __html__ must define"
                    " __html_format__ to work with format specifiers."
                )
            rv = value.__html__()
        else:
            if holds_opaque(value):
                value = shown(value)
            rv = string.Formatter.format_field(self, value, str(format_spec))
        return str(escape(rv))
