"""What a template may reach and how much it may spend.

Templates see data, not objects.  Attribute access follows Jinja2's sandbox (attribute first,
then item, for ``x.y``; item first, then attribute, for ``x['y']``) with one difference: instead
of allowing every public attribute of a builtin value, only the allow-listed methods of
:mod:`methods` are reachable, so nothing of Python's object model leaks through.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any

from .errors import LimitError, SecurityError
from .methods import get_method, is_mutating_method
from .runtime import MISSING, Cycler, Joiner, LoopContext, Macro, Namespace, Undefined


@dataclass(frozen=True)
class Limits:
    """Resource bounds of one render; every one raises :class:`LimitError` when exceeded."""

    #: loop iterations, macro and function calls and printed values, together
    max_steps: int = 20_000_000
    #: characters of output, the final text and any captured block alike
    max_output: int = 100_000_000
    #: nesting of macro calls and recursive loops
    max_recursion: int = 250
    #: nesting of brackets, operators, filters and blocks in the template text
    max_nesting: int = 200
    #: characters of any string a template builds
    max_string: int = 20_000_000
    #: items of any list or tuple a template builds
    max_items: int = 5_000_000
    #: bits of any integer a template builds
    max_int_bits: int = 65_536
    #: length of a ``range()``; 100,000 as in Jinja2's sandbox
    max_range: int = 100_000


def unsafe(obj: Any, name: Any) -> Undefined:
    """An undefined value that raises SecurityError when used, as Jinja2's sandbox returns."""
    return Undefined(
        f"access to attribute {name!r} of {type(obj).__name__!r} object is unsafe.",
        obj=obj,
        name=name,
        exc=SecurityError,
    )


_LOOP_ATTRIBUTES = frozenset(
    "index index0 revindex revindex0 first last length previtem nextitem depth depth0 "
    "cycle changed".split()
)
_MACRO_ATTRIBUTES = frozenset("name arguments defaults catch_kwargs catch_varargs caller".split())
_CYCLER_ATTRIBUTES = frozenset(["next", "reset", "current", "items"])
_DATA_TYPES = (str, dict, list, tuple, int, float, set, frozenset)
# Values whose attributes would expose the interpreter itself.
_OPAQUE_TYPES = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.BuiltinMethodType,
    types.ModuleType,
    types.GeneratorType,
    types.CoroutineType,
    types.AsyncGeneratorType,
    types.FrameType,
    types.CodeType,
    types.TracebackType,
    type,
)
# Values never handed to a template, whoever's attribute they are.
_HIDDEN_VALUES = (
    types.ModuleType,
    types.GeneratorType,
    types.CoroutineType,
    types.AsyncGeneratorType,
    types.FrameType,
    types.CodeType,
    types.TracebackType,
    type,
)


class AttributePolicy:
    """Sandboxed ``x.y`` and ``x[y]`` for an environment."""

    def __init__(self, environment: Any) -> None:
        self.environment = environment

    def getattr(self, obj: Any, name: str) -> Any:
        environment = self.environment
        if isinstance(obj, _DATA_TYPES):
            method = get_method(obj, name, environment)
            if method is not MISSING:
                return method
            if name[:1] == "_" or hasattr(obj, name):
                return unsafe(obj, name)
            if isinstance(obj, dict):
                try:
                    return obj[name]
                except (TypeError, LookupError):
                    pass
            return environment.undefined(obj=obj, name=name)
        return self._special_attribute(obj, name)

    def getitem(self, obj: Any, key: Any) -> Any:
        try:
            return obj[key]
        except (TypeError, LookupError):
            pass
        except SecurityError:
            raise
        if isinstance(key, str):
            if isinstance(obj, _DATA_TYPES):
                method = get_method(obj, key, self.environment)
                if method is not MISSING:
                    return method
                if key[:1] == "_" or hasattr(obj, key):
                    return unsafe(obj, key)
                return self.environment.undefined(obj=obj, name=key)
            return self._special_attribute(obj, key)
        return self.environment.undefined(obj=obj, name=key)

    def _special_attribute(self, obj: Any, name: str) -> Any:
        undefined = self.environment.undefined
        if isinstance(obj, Undefined):
            if name[:1] == "_":
                return unsafe(obj, name)
            return getattr(obj, name)
        if name[:1] == "_":
            return unsafe(obj, name)
        if isinstance(obj, Namespace):
            value = obj.get(name)
            return undefined(obj=obj, name=name) if value is MISSING else value
        if isinstance(obj, LoopContext):
            allowed = _LOOP_ATTRIBUTES
        elif isinstance(obj, Macro):
            allowed = _MACRO_ATTRIBUTES
        elif isinstance(obj, Cycler):
            allowed = _CYCLER_ATTRIBUTES
        elif isinstance(obj, (Joiner, *_OPAQUE_TYPES)):
            allowed = frozenset()
        else:
            # A caller's own object: its public attributes are data it chose to pass.
            value = getattr(obj, name, MISSING)
            if value is not MISSING and not isinstance(value, _HIDDEN_VALUES):
                if is_mutating_method(obj, name):
                    return unsafe(obj, name)
                return value
            try:
                return obj[name]
            except (TypeError, LookupError, AttributeError):
                return undefined(obj=obj, name=name)
        if name in allowed:
            return getattr(obj, name)
        return undefined(obj=obj, name=name)


def check_string(value: str, limits: Limits) -> str:
    if len(value) > limits.max_string:
        raise LimitError(
            f"a string of {len(value)} characters exceeds max_string ({limits.max_string})"
        )
    return value


def check_length(length: int, limits: Limits, what: str = "string") -> None:
    """Refuse, before building it, a value of ``length`` characters or items."""
    if what == "string":
        if length > limits.max_string:
            raise LimitError(
                f"a string of {length} characters exceeds max_string ({limits.max_string})"
            )
    elif length > limits.max_items:
        raise LimitError(f"a {what} of {length} items exceeds max_items ({limits.max_items})")


def check_int(value: int, limits: Limits) -> int:
    if value.bit_length() > limits.max_int_bits:
        raise LimitError(
            f"an integer of {value.bit_length()} bits exceeds max_int_bits ({limits.max_int_bits})"
        )
    return value
