"""The Python methods a template may call on its values, restricted to an allow-list.

Jinja2's ImmutableSandboxedEnvironment lets templates call any public, non-mutating method of a
value.  We allow a fixed list instead (the non-mutating methods of `str`, `dict`, `list`,
`tuple`, `set` and the numeric attributes of `int`/`float`), which covers what chat
templates use, while keeping the Jinja2 results for every allowed method.

`str.format` and `str.format_map` are wrapped like Jinja2's `SandboxedFormatter`: the
attribute and item lookups inside replacement fields go through the sandbox.  Methods of
`Markup` values keep markupsafe's semantics (arguments are escaped,
results stay markup).
"""

from __future__ import annotations

import functools
import types
from array import array
from collections import abc, deque
from collections.abc import Callable
from typing import Any

from ..errors import LimitError, SecurityError
from ..sandbox.budget import (
    CHARS_PER_STEP,
    FILTER_ITEMS_PER_STEP,
    charge_steps,
    check_size,
    max_string,
)
from ..sandbox.format_spec import join_bound, percent_bound
from ..sandbox.measure import check_printable, measure_text, printed_size
from ..sandbox.opaque import shown, shown_str
from ..sandbox.printing import CHUNK, escaped_size
from ..values.runtime import MISSING, Markup, Undefined, escape, use_markup_mod
from .costs import FREE, RECEIVER, WORDS, Cost, declare, guarded

STR_METHODS = frozenset(
    """capitalize casefold center count endswith expandtabs find format format_map index
    isalnum isalpha isascii isdecimal isdigit isidentifier islower isnumeric isprintable isspace
    istitle isupper join ljust lower lstrip partition removeprefix removesuffix replace rfind
    rindex rjust rpartition rsplit rstrip split splitlines startswith strip swapcase title upper
    zfill""".split()
)
#: markupsafe's own additions, on Markup values only
MARKUP_METHODS = frozenset(["unescape", "striptags", "escape"])
DICT_METHODS = frozenset(["get", "items", "keys", "values", "copy"])
LIST_METHODS = frozenset(["index", "count", "copy"])
TUPLE_METHODS = frozenset(["index", "count"])
SET_METHODS = frozenset(
    """copy difference intersection isdisjoint issubset issuperset symmetric_difference
    union""".split()
)
NUMBER_ATTRIBUTES = frozenset(["real", "imag", "conjugate", "bit_length", "is_integer"])

_LIST_MUTATORS = frozenset(
    ["append", "clear", "extend", "insert", "pop", "remove", "reverse", "sort"]
)
# Jinja2 checks the ABCs in this order and stops at the first match; we keep the order but give
# deque its own complete list (Jinja2 lets ``appendleft`` through because a deque is a
# MutableSequence) and count ``intersection_update`` as mutating (Jinja2 forgets it).
_MUTATORS: tuple[tuple[type, frozenset[str]], ...] = (
    (
        abc.MutableSet,
        frozenset(
            """add clear difference_update discard intersection_update pop remove
            symmetric_difference_update update""".split()
        ),
    ),
    (abc.MutableMapping, frozenset(["clear", "pop", "popitem", "setdefault", "update"])),
    (deque, _LIST_MUTATORS | {"appendleft", "extendleft", "popleft", "rotate"}),
    # an array also changes in place by swapping its bytes or reading more items in
    (
        array,
        _LIST_MUTATORS | {"byteswap", "frombytes", "fromfile", "fromlist", "fromunicode"},
    ),
    (abc.MutableSequence, _LIST_MUTATORS),
)


def is_mutating_method(obj: Any, name: str) -> bool:
    """True when calling `obj.name` would modify a builtin mutable container."""
    for kind, names in _MUTATORS:
        if isinstance(obj, kind):
            return name in names
    return False


def check_width(width: Any, env: Any = None) -> None:
    """Refuse a padding width (or count) that would build an enormous value in one step."""
    if isinstance(width, int):
        check_size(width, env)


def join_characters(separator: str, text: str, env: Any = None) -> str:
    """`separator.join(text)`: the text's characters joined, measured and charged first,
    and made a chunk at a time (Python would first make an object of each character)."""
    count = len(text)
    if isinstance(separator, Markup):
        # markupsafe escapes each character, in Python code: a step per two of them
        charge_steps(count // 2)
        check_size(escaped_size(text) + len(separator) * max(count - 1, 0), env)
        return Markup(str.join(separator, [escape(char) for char in text]))
    charge_steps(count // 64)  # (a step per 64 items, as any walk of a list is charged)
    check_size(count + len(separator) * max(count - 1, 0), env)
    if not separator:
        return str(text)
    return separator.join(
        [separator.join(text[start : start + CHUNK]) for start in range(0, count, CHUNK)]
    )


def check_replace(text: Any, old: Any, new: Any, count: Any = -1, env: Any = None) -> None:
    """Refuse a `replace` whose result would exceed `max_string` (`"".replace` grows)."""
    if not (isinstance(text, str) and isinstance(old, str) and isinstance(new, str)):
        return
    if len(new) <= len(old):
        return
    found = len(text) + 1 if old == "" else text.count(old)
    if isinstance(count, int) and count >= 0:
        found = min(found, count)
    check_size(len(text) + found * (len(new) - len(old)), env)


def check_join(separator: str, items: list[Any], env: Any = None) -> None:
    """Refuse a `join` whose result would exceed `max_string`."""
    size = len(separator) * max(len(items) - 1, 0)
    for item in items:
        if isinstance(item, str):
            size += len(item)
    check_size(size, env)


def check_percent_format(template: str, values: Any, env: Any = None) -> None:
    """Refuse `"%999999999d" % x` style widths and precisions (wherever Python reads them:
    behind a `%(key(with)parens)`, through `*`), and a result whose widths and printed
    values add up beyond max_string; count the result's size as made."""
    if "%" not in template:
        return
    limit = max_string(env)
    size = percent_bound(template, values, limit, isinstance(template, Markup))
    if size > limit or size >= CHARS_PER_STEP:  # (below both, check_size has nothing to do)
        check_size(size, env)


# ---------------------------------------------------------------------------------------------
# sandboxed str.format


def _fallback_getattr(obj: Any, name: str) -> Any:
    # Used when no environment is at hand: Jinja2's sandboxed getattr (attribute first, then
    # item) with our allow-list for builtin values; private or refused names give an undefined
    # that raises SecurityError when used.
    try:
        value = getattr(obj, name)
    except AttributeError:
        try:
            return obj[name]
        except (TypeError, LookupError):
            return Undefined(obj=obj, name=name)
    allowed = get_method(obj, name)
    if allowed is not MISSING:
        return allowed
    if name.startswith("_") or is_mutating_method(obj, name) or type(obj) in _BUILTIN_TYPES:
        return Undefined(
            f"access to attribute {name!r} of {type(obj).__name__!r} object is unsafe.",
            obj=obj,
            name=name,
            exc=SecurityError,
        )
    return value


def _fallback_getitem(obj: Any, key: Any) -> Any:
    try:
        return obj[key]
    except (TypeError, LookupError):
        if isinstance(key, str):
            return _fallback_getattr(obj, key)
    return Undefined(obj=obj, name=key)


class _NoEnvironment:
    """What the sandboxed str.format looks fields up with when no environment is at hand: the
    fallbacks above, and no limits (the defaults apply)."""

    limits = None
    getattr = staticmethod(_fallback_getattr)
    getitem = staticmethod(_fallback_getitem)


_NO_ENVIRONMENT = _NoEnvironment()


def _format_method(obj: str, name: str, env: Any) -> Callable[..., str]:
    # The formatters subclass string.Formatter: imported when a template first formats.
    from .formatting import SandboxedEscapeFormatter, SandboxedFormatter

    is_markup = isinstance(obj, Markup)
    if env is None:
        env = _NO_ENVIRONMENT
    formatter = SandboxedEscapeFormatter(env) if is_markup else SandboxedFormatter(env)
    result_type = Markup if is_markup else str
    is_format_map = name == "format_map"

    def wrapper(*args: Any, **kwargs: Any) -> str:
        if is_format_map:
            if kwargs:
                raise TypeError("format_map() takes no keyword arguments")
            if len(args) != 1:
                raise TypeError(f"format_map() takes exactly one argument ({len(args)} given)")
            kwargs = args[0]
            args = ()
        return result_type(formatter.vformat(obj, args, kwargs))

    # Looks like Jinja2's wrapper when printed: ``<function str.format at 0x...>``.
    return functools.update_wrapper(wrapper, getattr(obj, name))


# ---------------------------------------------------------------------------------------------
# markupsafe semantics for Markup values


def markup_mod(template: Markup, value: Any, env: Any = None) -> Markup:
    """`Markup('<b>%s</b>') % '<'` escapes the arguments, as markupsafe does."""
    check_percent_format(template, value, env)
    if isinstance(value, tuple):
        value = tuple(_EscapeHelper(x) for x in value)
    elif hasattr(type(value), "__getitem__") and not isinstance(value, str):
        value = _EscapeHelper(value)
    else:
        value = (_EscapeHelper(value),)
    return Markup(str.__mod__(template, value))


use_markup_mod(markup_mod)


class _EscapeHelper:
    __slots__ = ("obj",)

    def __init__(self, obj: Any) -> None:
        self.obj = obj

    def __getitem__(self, key: Any) -> _EscapeHelper:
        return _EscapeHelper(self.obj[key])

    def __str__(self) -> str:
        return str(escape(self.obj))

    def __repr__(self) -> str:
        return str(escape(repr(shown(self.obj))))

    def __int__(self) -> int:
        return int(self.obj)

    def __float__(self) -> float:
        return float(self.obj)


# The methods markupsafe's Markup overrides, with its signatures (so that argument errors read
# the same): results are Markup, and inserted text is escaped.


def _upper(self: Markup, /) -> Markup:
    return Markup(str.upper(self))


def _lower(self: Markup, /) -> Markup:
    return Markup(str.lower(self))


def _capitalize(self: Markup, /) -> Markup:
    return Markup(str.capitalize(self))


def _title(self: Markup, /) -> Markup:
    return Markup(str.title(self))


def _swapcase(self: Markup, /) -> Markup:
    return Markup(str.swapcase(self))


def _casefold(self: Markup, /) -> Markup:
    return Markup(str.casefold(self))


def _strip(self: Markup, chars: str | None = None, /) -> Markup:
    return Markup(str.strip(self, chars))


def _lstrip(self: Markup, chars: str | None = None, /) -> Markup:
    return Markup(str.lstrip(self, chars))


def _rstrip(self: Markup, chars: str | None = None, /) -> Markup:
    return Markup(str.rstrip(self, chars))


def _removeprefix(self: Markup, prefix: str, /) -> Markup:
    return Markup(str.removeprefix(self, prefix))


def _removesuffix(self: Markup, suffix: str) -> Markup:
    return Markup(str.removesuffix(self, suffix))


def _expandtabs(self: Markup, /, tabsize: int = 8) -> Markup:
    return Markup(str.expandtabs(self, tabsize))


def _zfill(self: Markup, width: int, /) -> Markup:
    return Markup(str.zfill(self, width))


def _replace(self: Markup, old: str, new: str, count: int = -1, /) -> Markup:
    return Markup(str.replace(self, old, escape(new), count))


def _ljust(self: Markup, width: int, fillchar: str = " ", /) -> Markup:
    return Markup(str.ljust(self, width, escape(fillchar)))


def _rjust(self: Markup, width: int, fillchar: str = " ", /) -> Markup:
    return Markup(str.rjust(self, width, escape(fillchar)))


def _center(self: Markup, width: int, fillchar: str = " ", /) -> Markup:
    return Markup(str.center(self, width, escape(fillchar)))


def _partition(self: Markup, sep: str, /) -> tuple[Markup, Markup, Markup]:
    left, middle, right = str.partition(self, sep)
    return Markup(left), Markup(middle), Markup(right)


def _rpartition(self: Markup, sep: str, /) -> tuple[Markup, Markup, Markup]:
    left, middle, right = str.rpartition(self, sep)
    return Markup(left), Markup(middle), Markup(right)


def _split(self: Markup, /, sep: str | None = None, maxsplit: int = -1) -> list[Markup]:
    return [Markup(part) for part in str.split(self, sep, maxsplit)]


def _rsplit(self: Markup, /, sep: str | None = None, maxsplit: int = -1) -> list[Markup]:
    return [Markup(part) for part in str.rsplit(self, sep, maxsplit)]


def _splitlines(self: Markup, /, keepends: bool = False) -> list[Markup]:
    return [Markup(part) for part in str.splitlines(self, keepends)]


def _join(self: Markup, iterable: Any, /) -> Markup:
    return Markup(str.join(self, map(escape, iterable)))


# The striptags filter, kept here because Markup.striptags is the same function.


def _strip_markup(text: str) -> str:
    """Remove comments and tags in one left-to-right scan, as current markupsafe does: a
    "<!--" runs to the next "-->", any other "<" to the next ">", and an unclosed one keeps
    the rest of the text."""
    kept: list[str] = []
    pos = 0
    while (start := text.find("<", pos)) != -1:
        if text.startswith("<!--", start):
            stop = text.find("-->", start + 4)
            if stop == -1:
                break
            end = stop + 3
        else:
            stop = text.find(">", start)
            if stop == -1:
                break
            end = stop + 1
        kept.append(text[pos:start])
        pos = end
    if not kept:
        return text
    kept.append(text[pos:])
    return "".join(kept)


def do_striptags(value: Any) -> str:
    """`{{ "<b>a</b>  &amp; b"|striptags }}` -> `a & b`"""
    import html

    if hasattr(value, "__html__"):
        value = value.__html__()
    elif not isinstance(value, str):
        measure_text(value)  # ``str(value)``, measured before it is made
    text = _strip_markup(shown_str(value))
    return html.unescape(" ".join(text.split()))


def _unescape(self: Markup, /) -> str:
    import html

    return html.unescape(str(self))


def _striptags(self: Markup, /) -> str:
    return do_striptags(self)


def _escape(cls: type, s: Any, /) -> Markup:
    if not isinstance(s, str):
        check_printable(s)  # its text is made: ``[big] * 1000`` prints a thousand bigs
    return escape(s)


class _MarkupEscape:
    """`markup.escape`: markupsafe's classmethod, printed as any method is (sandbox/opaque.py)."""

    __slots__ = ()
    __name__ = __qualname__ = "escape"

    def __call__(self, *args: Any, **kwargs: Any) -> Markup:
        # (called as the classmethod is, so that a wrong call is worded as Python words it)
        return _escape(Markup, *args, **kwargs)

    def __repr__(self) -> str:
        return "<method escape of Markup>"


MARKUP_ESCAPE = _MarkupEscape()

_MARKUP_METHODS: dict[str, Callable[..., Any]] = {
    func.__name__[1:]: func
    for func in (
        _upper,
        _lower,
        _capitalize,
        _title,
        _swapcase,
        _casefold,
        _strip,
        _lstrip,
        _rstrip,
        _removeprefix,
        _removesuffix,
        _expandtabs,
        _zfill,
        _replace,
        _ljust,
        _rjust,
        _center,
        _partition,
        _rpartition,
        _split,
        _rsplit,
        _splitlines,
        _join,
        _unescape,
        _striptags,
        _escape,
    )  # fmt: skip
}
for _name, _func in _MARKUP_METHODS.items():
    # so that ``{{ m.upper }}`` prints ``<bound method Markup.upper of Markup('...')>``
    _func.__name__ = _name
    _func.__qualname__ = f"Markup.{_name}"
del _name, _func


# ---------------------------------------------------------------------------------------------
# plain str methods that could allocate without bound


def _guarded(bound: Callable[..., Any], check: Callable[..., None]) -> Callable[..., Any]:
    # ``check`` sees the call's arguments and raises LimitError before ``bound`` runs; the
    # wrapper carries the method's name, so its own argument errors stay the builtin's.
    def method(*args: Any, **kwargs: Any) -> Any:
        check(*args, **kwargs)
        return bound(*args, **kwargs)

    return functools.update_wrapper(method, bound)


def _str_method(obj: str, name: str, env: Any) -> Any:
    if name in ("format", "format_map"):
        return _format_method(obj, name, env)
    if isinstance(obj, Markup) and name == "escape":
        return MARKUP_ESCAPE
    if isinstance(obj, Markup) and name in _MARKUP_METHODS:
        bound: Any = types.MethodType(_MARKUP_METHODS[name], obj)
    else:
        bound = getattr(obj, name)

    if name in ("center", "ljust", "rjust", "zfill"):

        def check(*args: Any, **kwargs: Any) -> None:
            if args:
                check_width(args[0], env)

    elif name == "expandtabs":

        def check(*args: Any, **kwargs: Any) -> None:
            size = args[0] if args else kwargs.get("tabsize", 8)
            if isinstance(size, int) and size > 1:
                check_size(len(obj) + obj.count("\t") * size, env)

    elif name == "replace":

        def check(*args: Any, **kwargs: Any) -> None:
            if len(args) >= 2:
                new = escape(args[1]) if isinstance(obj, Markup) else args[1]
                check_replace(obj, args[0], new, args[2] if len(args) > 2 else -1, env)

    elif name == "join":

        def join(*args: Any, **kwargs: Any) -> Any:
            # The items are needed twice (to measure, then to join): take them once.
            if len(args) == 1 and not kwargs:
                if isinstance(args[0], str):
                    # (not through a list of its characters: ten million objects at once)
                    return join_characters(obj, args[0], env)
                try:
                    items = args[0] if isinstance(args[0], list) else list(args[0])
                except TypeError:
                    return bound(*args)  # not iterable: the builtin's own error
                if isinstance(obj, Markup):
                    # every item is printed and escaped (in Python: a step per two items)
                    charge_steps(len(items) // FILTER_ITEMS_PER_STEP)
                    check_size(join_bound(obj, items, max_string(env), escaped=True), env)
                else:
                    check_join(obj, items, env)
                return bound(items)
            return bound(*args, **kwargs)

        return functools.update_wrapper(join, bound)
    else:
        return bound
    return _guarded(bound, check)


def get_method(obj: Any, name: str, env: Any = None) -> Any:
    """The allowed attribute `name` of `obj` (usually a bound method), else `MISSING`.

    `env`, when given, provides `getattr`/`getitem` for lookups inside `str.format`
    fields; without it the same sandbox rule is applied locally.
    """
    if not isinstance(name, str) or name[:1] == "_":
        return MISSING
    if isinstance(obj, str):
        if name in STR_METHODS or (name in MARKUP_METHODS and isinstance(obj, Markup)):
            return _str_method(obj, name, env)
        return MISSING
    if isinstance(obj, dict):
        allowed: frozenset[str] = DICT_METHODS
    elif isinstance(obj, list):
        allowed = LIST_METHODS
    elif isinstance(obj, tuple):
        # A named tuple's fields are data (``groupby`` yields ``(grouper, list)`` ones).
        if name in getattr(type(obj), "_fields", ()):
            return getattr(obj, name)
        allowed = TUPLE_METHODS
    elif isinstance(obj, (set, frozenset)):
        allowed = SET_METHODS
    elif isinstance(obj, (int, float)):
        allowed = NUMBER_ATTRIBUTES
    else:
        return MISSING
    if name not in allowed:
        return MISSING
    if name == "index" and isinstance(obj, list):
        return _list_index(obj)
    # ``getattr`` keeps subclass overrides and says "missing" for ``tuple.copy`` or
    # ``int.is_integer`` on Pythons that lack them, as Jinja2 would on the same interpreter.
    return getattr(obj, name, MISSING)


# The longest value an error message shows whole.
SHOWN_IN_MESSAGES = 1000


def _prints_long(value: Any) -> bool:
    try:
        return printed_size(value) > SHOWN_IN_MESSAGES
    except LimitError:  # (longer than any string may be)
        return True


def _list_index(items: list[Any]) -> Callable[..., int]:
    # list.index writes the repr of a value it does not find into its error: for ``(big,) *
    # 1000`` that is a thousand copies of big.  A value that prints long is looked for first.
    method = items.index

    def index(*args: Any, **kwargs: Any) -> int:
        if 1 <= len(args) <= 3 and not kwargs and _prints_long(args[0]):
            value, *bounds = args
            if value not in (items[slice(*bounds)] if bounds else items):
                raise ValueError(f"a {type(value).__name__} that prints long is not in list")
        return method(*args, **kwargs)  # (Python's own errors for the wrong arguments)

    return index


_BUILTIN_TYPES = frozenset(
    [str, Markup, dict, list, tuple, set, frozenset, int, float, bool, bytes, bytearray, deque]
)

METHODS: dict[type, frozenset[str]] = {
    str: STR_METHODS,
    dict: DICT_METHODS,
    list: LIST_METHODS,
    tuple: TUPLE_METHODS,
    set: SET_METHODS,
    frozenset: SET_METHODS,
    int: NUMBER_ATTRIBUTES,
    float: NUMBER_ATTRIBUTES,
}


# Each method's cost (see costs.py), by the type whose method it is ("str.count",
# "Markup.unescape"): charged on the receiver when the method is looked up to be called, its
# arguments by the call.  A str method reads its receiver at C speed (RECEIVER); the ones that
# pad or repeat check the size they would build first; markupsafe's own methods run Python
# code per part, match or item.
_WIDTH = "width: within max_string"
METHOD_COSTS: dict[str, Cost] = {
    **{f"str.{name}": RECEIVER for name in STR_METHODS},
    **{f"str.{name}": guarded(RECEIVER, _WIDTH) for name in ("center", "ljust", "rjust", "zfill")},
    "str.expandtabs": guarded(RECEIVER, "tabs times tab size: within max_string"),
    "str.replace": guarded(RECEIVER, "matches times growth: within max_string"),
    "str.join": guarded(RECEIVER, "separator times items plus items: within max_string"),
    "str.format": guarded(RECEIVER, "the sandboxed formatter: widths and fields"),
    "str.format_map": guarded(RECEIVER, "the sandboxed formatter: widths and fields"),
    **{f"Markup.{name}": WORDS for name in ("split", "rsplit", "splitlines", "unescape", "striptags")},
    "Markup.join": guarded(RECEIVER, "each item escaped: a step per two items"),
    "Markup.escape": guarded(FREE, "the printed size of a non-string argument"),
    **{f"dict.{name}": FREE for name in ("get", "items", "keys", "values")},
    "dict.copy": RECEIVER,
    **{f"list.{name}": RECEIVER for name in LIST_METHODS},
    **{f"tuple.{name}": RECEIVER for name in TUPLE_METHODS},
    **{f"set.{name}": RECEIVER for name in SET_METHODS},
    **{f"number.{name}": FREE for name in NUMBER_ATTRIBUTES},
}
declare("method", METHOD_COSTS)
