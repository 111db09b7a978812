"""The attribute policy's lookups: sandboxed `x.y` and `x[y]` (see policy.py, which names them).

Apart from policy.py's `dict` and `namespace` globals (a metaclass and a subclass of the
runtime's Namespace, which stay interpreted), so that the compiled build compiles the lookups
that every `message.role`, `loop.index0` and `dict.get` of a render goes through.
"""

from __future__ import annotations

import types
from typing import Any, Final

from ..errors import SecurityError
from ..sandbox.budget import CHARS_PER_STEP, PLAIN_TEXT, charge_size
from ..sandbox.measure import check_key
from ..sandbox.opaque import opaque_text
from ..values import runtime
from ..values.runtime import Cycler, Joiner, Macro, Namespace, Undefined
from . import methods
from .costs import charge_method
from .methods import STR_METHODS, is_mutating_method

# What the common lookups read from modules the compiled build leaves interpreted, held as
# Finals of this one: the compiled build reads them as C statics, where it would look each up
# in this module's dict at every lookup.
MISSING: Final[Any] = runtime.MISSING
LoopContext: Final = runtime.LoopContext
PLAIN_NAMESPACES: Final = runtime.PLAIN_NAMESPACES
DICT_METHODS: Final = methods.DICT_METHODS
get_method: Final = methods.get_method


def unsafe(obj: Any, name: Any) -> Undefined:
    """An undefined value that raises SecurityError when used, as Jinja2's sandbox returns."""
    return Undefined(
        f"access to attribute {name!r} of {type(obj).__name__!r} object is unsafe.",
        obj=obj,
        name=name,
        exc=SecurityError,
    )


LOOP_ATTRIBUTES: Final = frozenset(
    "index index0 revindex revindex0 first last length previtem nextitem depth depth0 "
    "cycle changed".split()
)
# The str methods get_method hands out unwrapped (the others check sizes or sandbox format).
_PLAIN_STR_METHODS: Final = STR_METHODS - {
    "format",
    "format_map",
    "center",
    "ljust",
    "rjust",
    "zfill",
    "expandtabs",
    "replace",
    "join",
}
_MACRO_ATTRIBUTES: Final = frozenset("name arguments catch_kwargs catch_varargs caller".split())
_CYCLER_ATTRIBUTES: Final = frozenset(["next", "reset", "current", "items"])
_DATA_TYPES: Final = (str, dict, list, tuple, int, float, set, frozenset)

# Values never handed to a template, whoever's attribute they are.
_HIDDEN_VALUES: Final = (
    types.ModuleType,
    types.GeneratorType,
    types.CoroutineType,
    types.AsyncGeneratorType,
    types.FrameType,
    types.CodeType,
    types.TracebackType,
    type,
)
# Values whose attributes would expose the interpreter itself: those, and functions.
_OPAQUE_TYPES: Final = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.BuiltinMethodType,
    *_HIDDEN_VALUES,
)


# Methods that hash their arguments: a dict's get, and a set's methods taking other sets.
_HASHING_METHODS: Final = frozenset(
    """get difference intersection isdisjoint issubset issuperset symmetric_difference
    union""".split()
)


class _KeyGuarded:
    """A bound method whose arguments are checked by `check_key` (and its elements',
    for a set's methods) before the method hashes them; prints as the method does."""

    __slots__ = ("_method",)

    def __init__(self, method: Any) -> None:
        self._method = method

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for arg in args:
            if type(arg) is str:  # the usual key: nothing nested to check
                continue
            if type(arg) is tuple:
                check_key(arg)
            elif isinstance(arg, (list, set, frozenset, dict)):
                for item in arg:
                    if type(item) is tuple:
                        check_key(item)
        return self._method(*args, **kwargs)

    def __repr__(self) -> str:
        return opaque_text(self._method) or repr(self._method)


def _guard_keys(obj: Any, name: Any, method: Any) -> Any:
    # The method is looked up to be called, and most of them scan the whole value
    # (``count``, ``find``, ``split``, ``index``): its declared cost (methods.METHOD_COSTS) is
    # charged here, on the receiver, whatever subclass of str it is (a dict's lookups read
    # nothing of it; markupsafe's split and unescape run Python code per part).
    charge_method(obj, name)
    if name in _HASHING_METHODS and isinstance(obj, (dict, set, frozenset)):
        return _KeyGuarded(method)
    return method


_NO_ITEM: Final = object()  # a dict's miss (no value a caller passes can be this object)


def _would_insert(obj: Any, key: Any) -> bool:
    """Whether reading a missing `key` would run the mapping's `__missing__` (a caller's
    `defaultdict` gains the key it is asked for): a template only reads."""
    return (
        type(obj) is not dict
        and hasattr(type(obj), "__missing__")
        and isinstance(obj, dict)
        and key not in obj
    )


class AttributePolicy:
    """Sandboxed `x.y` and `x[y]` for an environment."""

    def __init__(self, environment: Any) -> None:
        self.environment = environment

    def getattr(self, obj: Any, name: Any) -> Any:
        # (`name` is a str from templates, anything from `attr(...)`: typed Any, so that the
        # compiled build checks nothing a pure one would not)
        # The common cases first, each answered as the general path below would answer it.
        cls = type(obj)
        if type(name) is not str:
            pass
        elif cls is str:
            if name in _PLAIN_STR_METHODS:
                if len(obj) >= CHARS_PER_STEP:
                    charge_size(obj)  # their declared cost (RECEIVER), as _guard_keys charges it
                return getattr(obj, name)
        elif cls is LoopContext:
            if name in LOOP_ATTRIBUTES:
                return getattr(obj, name)
        elif cls is dict:
            if name in DICT_METHODS:
                if name == "get":
                    return _KeyGuarded(obj.get)
                if name == "copy":
                    charge_size(obj)  # (its declared cost, RECEIVER)
                return getattr(obj, name)
        elif cls in PLAIN_NAMESPACES and name[:1] != "_":
            # Read as `set ns.x` writes them (statements.SetAttribute): in the dict itself.
            value = obj._attrs.get(name, MISSING)
            return self.environment.undefined(obj=obj, name=name) if value is MISSING else value
        elif isinstance(obj, Namespace) and name[:1] != "_":
            value = obj.get(name)
            return self.environment.undefined(obj=obj, name=name) if value is MISSING else value
        elif cls in PLAIN_TEXT and name in _PLAIN_STR_METHODS:
            # (a traced string: its method, charged as a plain string's, as below)
            if len(obj) >= CHARS_PER_STEP:
                charge_size(obj)
            return getattr(obj, name)
        environment = self.environment
        if isinstance(obj, _DATA_TYPES):
            method = get_method(obj, name, environment)
            if method is not MISSING:
                return _guard_keys(obj, name, method)
            if isinstance(obj, tuple) and name in getattr(type(obj), "_fields", ()):
                return getattr(obj, name)  # a named tuple's field (groupby's grouper, list)
            if hasattr(obj, name):  # a real attribute; a dict key "_x" is data
                return unsafe(obj, name)
            if isinstance(obj, dict) and not _would_insert(obj, name):
                try:
                    return obj[name]
                except (TypeError, LookupError):
                    pass
            return environment.undefined(obj=obj, name=name)
        return self._special_attribute(obj, name)

    def getitem(self, obj: Any, key: Any) -> Any:
        cls = type(key)
        if cls is str:
            # A string never has a string item, and a dict's miss need not raise: both go
            # straight to the attribute fallback below.
            kind = type(obj)
            if kind is str or kind in PLAIN_TEXT:
                if key in STR_METHODS:
                    return self._item_fallback(obj, key)
                # (what _item_fallback answers for a name that is no method of a str)
                if key[:1] == "_" or hasattr(obj, key):
                    return unsafe(obj, key)
                return self.environment.undefined(obj=obj, name=key)
            if type(obj) is dict:
                value = obj.get(key, _NO_ITEM)
                return self._item_fallback(obj, key) if value is _NO_ITEM else value
        elif cls is tuple:
            check_key(key)
        try:
            if not _would_insert(obj, key):
                return obj[key]
        except (TypeError, LookupError):
            pass
        except SecurityError:
            raise
        if isinstance(key, str):
            return self._item_fallback(obj, key)
        return self.environment.undefined(obj=obj, name=key)

    def _item_fallback(self, obj: Any, key: str) -> Any:
        # ``x['y']`` where x has no item y: the attribute, as in Jinja.
        if isinstance(obj, _DATA_TYPES):
            method = get_method(obj, key, self.environment)
            if method is not MISSING:
                return _guard_keys(obj, key, method)
            if key[:1] == "_" or hasattr(obj, key):
                return unsafe(obj, key)
            return self.environment.undefined(obj=obj, name=key)
        return self._special_attribute(obj, key)

    def _special_attribute(self, obj: Any, name: Any) -> Any:
        undefined = self.environment.undefined
        if isinstance(obj, Undefined):
            # As in Jinja: a private attribute the value really has (``__class__``) is unsafe;
            # any other private name is looked up as an item, which fails the way the
            # undefined value fails (SecurityError for the sandbox's unsafe ones).
            if name[:1] == "_":
                try:
                    object.__getattribute__(obj, name)
                except AttributeError:
                    return obj[name]
                return unsafe(obj, name)
            return getattr(obj, name)
        if name[:1] == "_":
            return unsafe(obj, name)
        if isinstance(obj, Namespace):
            value = obj.get(name)
            return undefined(obj=obj, name=name) if value is MISSING else value
        if isinstance(obj, LoopContext):
            allowed = LOOP_ATTRIBUTES
        elif isinstance(obj, Macro):
            allowed = _MACRO_ATTRIBUTES
        elif isinstance(obj, Cycler):
            allowed = _CYCLER_ATTRIBUTES
        elif isinstance(obj, _OPAQUE_TYPES):
            # Functions, types, modules, generators: nothing of them is data.  An attribute
            # that exists is refused as Jinja2 refuses ``dict.mro``, a SecurityError on use.
            if hasattr(obj, name):
                return unsafe(obj, name)
            return undefined(obj=obj, name=name)
        elif isinstance(obj, Joiner):
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
