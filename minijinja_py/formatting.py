"""The sandboxed ``str.format``: replacement fields look values up as templates do.

Kept apart from :mod:`methods` so that ``string`` is imported only when a template formats.
"""

from __future__ import annotations

import string
from _string import formatter_field_name_split  # type: ignore[import-not-found]
from typing import Any

from .methods import _check_format_spec, _fallback_getattr, _fallback_getitem
from .runtime import Markup, escape


class SandboxedFormatter(string.Formatter):
    """``str.format`` whose ``{0.attr}`` and ``{0[key]}`` lookups obey the sandbox."""

    def __init__(self, env: Any = None) -> None:
        super().__init__()
        self._env = env
        self._getattr = env.getattr if env is not None else _fallback_getattr
        self._getitem = env.getitem if env is not None else _fallback_getitem

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> tuple[Any, Any]:
        first, rest = formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, key in rest:
            obj = self._getattr(obj, key) if is_attr else self._getitem(obj, key)
        return obj, first

    def format_field(self, value: Any, format_spec: str) -> Any:
        _check_format_spec(format_spec, self._env)
        return super().format_field(value, format_spec)


class SandboxedEscapeFormatter(SandboxedFormatter):
    """The formatter of ``Markup.format``: every field is HTML-escaped unless it is markup."""

    def format_field(self, value: Any, format_spec: str) -> str:
        _check_format_spec(format_spec, self._env)
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
            rv = string.Formatter.format_field(self, value, str(format_spec))
        return str(escape(rv))
