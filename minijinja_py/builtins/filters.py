"""The built-in filters used with the ``|`` operator, with Jinja2 3.1.6's semantics.

Filters marked with :func:`~minijinja_py.values.runtime.pass_environment` get the environment first; it
offers ``undefined``, ``getattr``, ``getitem``, ``call_filter``, ``call_test`` and ``policies``.
The filters that return lazy iterators in Jinja2 do so here too, through generators that carry
Jinja2's names, so that printing one shows the same ``<generator object sync_do_map ...>``.
"""

from __future__ import annotations

import math
import re
from collections import abc
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, groupby
from typing import Any, NamedTuple

from ..errors import FilterArgumentError, LimitError
from ..sandbox.budget import (
    PLAIN_TYPES,
    charge_big_int,
    charge_work,
    check_key,
    check_length,
    check_printable,
    check_size,
    costly,
    current_limits,
    measure_text,
    no_charge,
)
from ..sandbox.format_spec import join_bound
from ..sandbox.printing import json_layout, layout_bound
from ..values.runtime import Markup, Undefined, pass_environment, wants_environment
from ..values.runtime import escape as html_escape
from .costs import (
    COMPARE,
    ESCAPE,
    FREE,
    PPRINT,
    PRINT,
    SCAN,
    SORT,
    TEXT,
    WALK,
    WORDS,
    Cost,
    charge_for,
    declare,
    guarded,
)
from .methods import (
    check_percent_format,
    check_replace,
    check_width,
    do_striptags,
    markup_mod,
    max_string,
)
from .tests import test_eq, test_ne

# Jinja2's defaults for the policies a bare environment may not carry.
_DEFAULT_POLICIES: dict[str, Any] = {
    "urlize.rel": "noopener",
    "urlize.target": None,
    "urlize.extra_schemes": None,
    "truncate.leeway": 5,
    "json.dumps_function": None,
    "json.dumps_kwargs": {"sort_keys": True},
}


def _jinja_name(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a filter the function name Jinja2's has, so argument errors read the same.

    Python names the function in them: ``sync_do_first() takes 2 positional arguments ...``.
    The function is also bound to that name in this module: pickle finds functions by
    qualified name, and environments holding these filters must stay picklable.
    """

    def rename(func: Callable[..., Any]) -> Callable[..., Any]:
        func.__name__ = func.__qualname__ = name
        globals()[name] = func
        return func

    return rename


def _generator_name(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Name a generator function as Jinja2's, so ``{{ x|map(...) }}`` prints the same."""

    def rename(func: Callable[..., Any]) -> Callable[..., Any]:
        func.__name__ = func.__qualname__ = name
        return func

    return rename


def _policy(env: Any, name: str) -> Any:
    policies = getattr(env, "policies", None) or {}
    return policies[name] if name in policies else _DEFAULT_POLICIES[name]


def _soft_str(value: Any) -> str:
    # Markup stays Markup (it is a str), everything else becomes its str(), measured first
    # (``[big] * 1000|upper`` would print gigabytes).
    if isinstance(value, str):
        return value
    if type(value) is int:
        charge_big_int(value.bit_length())
    else:
        check_printable(value)
    return str(value)


def _text(value: Any) -> str:
    # ``str(value)``, measured before it is made (a container prints its items' reprs).
    if not isinstance(value, str):
        measure_text(value)
    return str(value)


def _like(original: Any, result: str) -> str:
    # markupsafe's str methods return Markup for Markup input; ours are plain str methods.
    return Markup(result) if isinstance(original, Markup) else result


# ---------------------------------------------------------------------------------------------
# attribute paths ("address.city", "items.0", "age,name")


def _ignore_case(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def _attribute_parts(attribute: Any) -> list[Any]:
    if attribute is None:
        return []
    if isinstance(attribute, str):
        return [int(part) if part.isdigit() else part for part in attribute.split(".")]
    return [attribute]


def make_attrgetter(
    env: Any,
    attribute: Any,
    postprocess: Callable[[Any], Any] | None = None,
    default: Any = None,
) -> Callable[[Any], Any]:
    """A function looking up ``attribute`` (dotted, integer parts as indexes) with ``env.getitem``."""
    parts = _attribute_parts(attribute)

    def getter(item: Any) -> Any:
        for part in parts:
            item = env.getitem(item, part)
            if default is not None and isinstance(item, Undefined):
                item = default
        if postprocess is not None:
            item = postprocess(item)
        return item

    return getter


def make_multi_attrgetter(
    env: Any, attribute: Any, postprocess: Callable[[Any], Any] | None = None
) -> Callable[[Any], list[Any]]:
    """Like :func:`make_attrgetter` for a comma separated list of paths; returns a list."""
    paths = attribute.split(",") if isinstance(attribute, str) else [attribute]
    parts_list = [_attribute_parts(path) for path in paths]

    def getter(item: Any) -> list[Any]:
        values = []
        for parts in parts_list:
            value = item
            for part in parts:
                value = env.getitem(value, part)
            if postprocess is not None:
                value = postprocess(value)
            values.append(value)
        return values

    return getter


# ---------------------------------------------------------------------------------------------
# strings


def do_upper(s: Any) -> str:
    """``{{ "hi"|upper }}`` -> ``HI``"""
    if type(s) is str:  # (neither converted nor markup)
        return str.upper(s)
    s = _soft_str(s)
    return _like(s, str.upper(s))


def do_lower(s: Any) -> str:
    """``{{ "Hi"|lower }}`` -> ``hi``"""
    if type(s) is str:  # (neither converted nor markup)
        return str.lower(s)
    s = _soft_str(s)
    return _like(s, str.lower(s))


def do_capitalize(s: Any) -> str:
    """``{{ "hello WORLD"|capitalize }}`` -> ``Hello world``"""
    if type(s) is str:  # (neither converted nor markup)
        return str.capitalize(s)
    s = _soft_str(s)
    return _like(s, str.capitalize(s))


_word_beginning_split_re = re.compile(r"([-\s({\[<]+)")


def do_title(s: Any) -> str:
    """``{{ "they're here"|title }}`` -> ``They're Here`` (unlike ``str.title``)"""
    pieces = _word_beginning_split_re.split(_soft_str(s))
    return "".join(piece[0].upper() + piece[1:].lower() for piece in pieces if piece)


def do_center(value: Any, width: int = 80) -> str:
    """``{{ "x"|center(5) }}`` -> ``  x  ``"""
    check_width(width)
    value = _soft_str(value)
    return _like(value, str.center(value, width))


def do_trim(value: Any, chars: str | None = None) -> str:
    """``{{ "  x  "|trim }}`` -> ``x``; ``{{ "xxaxx"|trim("x") }}`` -> ``a``"""
    if type(value) is str:  # (neither converted nor markup)
        return str.strip(value, chars)
    value = _soft_str(value)
    return _like(value, str.strip(value, chars))


@pass_environment
# Filters that receive the environment name that parameter as Jinja's do (environment, eval_ctx,
# context): from Python 3.13 a wrong keyword argument is answered with the closest parameter
# name ("Did you mean 'env'?"), so the names are part of the messages Jinja2 gives.


def do_replace(eval_ctx: Any, s: Any, old: Any, new: Any, count: int | None = None) -> str:
    """``{{ "aaaaargh"|replace("a", "d'oh, ", 2) }}`` -> ``d'oh, d'oh, aaargh``"""
    if count is None:
        count = -1
    s, old, new = _text(s), _text(old), _text(new)
    check_replace(s, old, new, count, eval_ctx)
    return s.replace(old, new, count)


@_jinja_name("soft_str")
def do_string(s: Any, /) -> str:
    """``{{ 1|string ~ 2 }}`` -> ``12``; markup stays markup"""
    return _soft_str(s)


def do_wordcount(s: Any) -> int:
    """``{{ "a b-c"|wordcount }}`` -> ``3``"""
    return len(re.findall(r"\w+", _soft_str(s)))


def do_format(value: Any, *args: Any, **kwargs: Any) -> str:
    """``{{ "%s, %s!"|format("Hello", "World") }}`` -> ``Hello, World!``"""
    if args and kwargs:
        raise FilterArgumentError("can't handle positional and keyword arguments at the same time")
    value = _soft_str(value)
    if isinstance(value, Markup):
        return markup_mod(value, kwargs or args)
    check_percent_format(value, kwargs or args)
    return value % (kwargs or args)


def do_indent(s: Any, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
    """``{{ "a\\nb"|indent(2) }}`` -> ``a\\n  b`` (first and blank lines untouched by default)"""
    if isinstance(width, str):
        indention = width
    else:
        check_width(width)
        indention = " " * width
    is_markup = isinstance(s, Markup)
    if is_markup:
        # Every piece would be markup in markupsafe, so nothing gets escaped: work on str.
        s, indention = str(s), str(indention)
    if isinstance(s, str) and isinstance(indention, str):
        check_size(len(s) + len(indention) * (s.count("\n") + 2))
    # Jinja2 appends a newline so that a trailing newline yields an empty last line.
    s += "\n"
    lines = s.splitlines()
    if blank:
        rv = ("\n" + indention).join(lines)
    else:
        rv = lines.pop(0)
        if lines:
            rv += "\n" + "\n".join(indention + line if line else line for line in lines)
    if first:
        rv = indention + rv
    return Markup(rv) if is_markup else rv


@pass_environment
def do_truncate(
    env: Any,
    s: Any,
    length: int = 255,
    killwords: bool = False,
    end: str = "...",
    leeway: int | None = None,
) -> str:
    """``{{ "foo bar baz qux"|truncate(9) }}`` -> ``foo...``"""
    if leeway is None:
        leeway = _policy(env, "truncate.leeway")
    if not length >= len(end):
        raise AssertionError(f"expected length >= {len(end)}, got {length}")
    if not leeway >= 0:
        raise AssertionError(f"expected leeway >= 0, got {leeway}")
    if len(s) <= length + leeway:
        return s
    if killwords:
        result = s[: length - len(end)]
    else:
        result = s[: length - len(end)].rsplit(" ", 1)[0]
    if isinstance(s, Markup):
        return Markup(result) + end
    return result + end


@pass_environment
def do_wordwrap(
    environment: Any,
    s: str,
    width: int = 79,
    break_long_words: bool = True,
    wrapstring: str | None = None,
    break_on_hyphens: bool = True,
) -> str:
    """``{{ "aaa bbb"|wordwrap(3) }}`` -> ``aaa\\nbbb``"""
    import textwrap

    if wrapstring is None:
        wrapstring = getattr(environment, "newline_sequence", "\n")
    if isinstance(s, str) and isinstance(wrapstring, str) and isinstance(width, int) and width > 0:
        # Two consecutive wrapped lines hold more than ``width`` characters together.
        lines = 2 * len(s) // width + s.count("\n") + 2
        check_size(len(s) + len(wrapstring) * lines, environment)
        if break_long_words and len(s) > width:
            # textwrap cuts a long word one line at a time, copying the rest of it each time:
            # its cost grows with the square of the word's length.  Charge that up front.
            charge_work(chars=sum(len(w) * len(w) // width for w in s.split() if len(w) > width))
    # Each existing line is a paragraph of its own: textwrap alone would ignore the newlines.
    return wrapstring.join(
        [
            wrapstring.join(
                textwrap.wrap(
                    line,
                    width=width,
                    expand_tabs=False,
                    replace_whitespace=False,
                    break_long_words=break_long_words,
                    break_on_hyphens=break_on_hyphens,
                )
            )
            for line in s.splitlines()
        ]
    )


def do_filesizeformat(value: Any, binary: bool = False) -> str:
    """``{{ 1500|filesizeformat }}`` -> ``1.5 kB``; ``{{ 1024|filesizeformat(true) }}`` -> ``1.0 KiB``"""
    size = float(value)
    base = 1024 if binary else 1000
    prefixes = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"] if binary else list("kMGTPEZY")
    if size == 1:
        return "1 Byte"
    if size < base:
        return f"{int(size)} Bytes"
    for i, prefix in enumerate(prefixes):
        unit = base ** (i + 2)
        if size < unit:
            return f"{base * size / unit:.1f} {prefix}B"
    # beyond yotta: keep the largest prefix
    return f"{base * size / unit:.1f} {prefixes[-1]}B"


def do_pprint(value: Any) -> str:
    """``{{ {"b": 1, "a": 2}|pprint }}`` -> ``{'a': 2, 'b': 1}``"""
    import pprint

    # Lines of a pprint layout are indented to their bracket's column, and a long string is
    # split into a piece per line or word, each on its own indented line: bounded first.
    size, nodes = layout_bound(value, max_string(), "pprint")
    charge_work(items=nodes)
    check_size(size)
    return pprint.pformat(value)


def _url_quote(obj: Any, for_qs: bool = False) -> str:
    from urllib.parse import quote_from_bytes

    if not isinstance(obj, bytes):
        obj = _text(obj).encode("utf-8")
    # Each byte that is not kept becomes three characters (an emoji: twelve): counted first.
    kept = _URL_SAFE if for_qs else _URL_SAFE + b"/"
    check_size(len(obj) + 2 * len(obj.translate(None, kept)))
    rv = quote_from_bytes(obj, b"" if for_qs else b"/")
    return rv.replace("%20", "+") if for_qs else rv


# The bytes quote_from_bytes never quotes.
_URL_SAFE = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~"


def do_urlencode(value: Any) -> str:
    """``{{ "a b/c"|urlencode }}`` -> ``a%20b/c``; ``{{ {"a": "x y"}|urlencode }}`` -> ``a=x+y``"""
    if isinstance(value, str) or not isinstance(value, abc.Iterable):
        return _url_quote(value)
    items = value.items() if isinstance(value, dict) else value
    return "&".join(f"{_url_quote(k, True)}={_url_quote(v, True)}" for k, v in items)


# urlize's patterns, compiled by `re` on first use (and cached there): compiling them when
# the module loads would cost every process a millisecond and a half for a rare filter.
_HTTP_PATTERN = r"""
    ^(
        (https?://|www\.)(([\w%-]+\.)+)?([a-z]{2,63}|xn--[\w%]{2,59})
      | ([\w%-]{2,63}\.)+(com|net|int|edu|gov|org|info|mil)
      | (https?://)((([\d]{1,3})(\.[\d]{1,3}){3})|(\[([\da-f]{0,4}:){2}([\da-f]{0,4}:?){1,6}]))
    )
    (?::[\d]{1,5})?
    (?:[/?#]\S*)?
    $
    """
_HTTP_FLAGS = re.IGNORECASE | re.VERBOSE
_EMAIL_PATTERN = r"^\S+@\w[\w.-]*\.\w+$"
_URI_SCHEME_PATTERN = r"^([\w.+-]{2,}:(/){0,2})$"


def _urlize_word(
    word: str,
    trim: Callable[[str], str],
    rel_attr: str,
    target_attr: str,
    extra_schemes: Iterable[str],
) -> str:
    head, middle, tail = "", word, ""
    match = re.match(r"^([(<]|&lt;)+", middle)
    if match:
        head = match.group()
        middle = middle[match.end() :]
    if middle.endswith((")", ">", ".", ",", "\n", "&gt;")):
        match = re.search(r"([)>.,\n]|&gt;)+$", middle)
        if match:
            tail = match.group()
            middle = middle[: match.start()]
    # An unbalanced opening bracket takes its closing partner back from the tail.
    for opening, closing in ("(", ")"), ("<", ">"), ("&lt;", "&gt;"):
        opened = middle.count(opening)
        if opened <= middle.count(closing):
            continue
        for _ in range(min(opened, tail.count(closing))):
            cut = tail.index(closing) + len(closing)
            middle += tail[:cut]
            tail = tail[cut:]
    if re.match(_HTTP_PATTERN, middle, _HTTP_FLAGS):
        href = middle if middle.startswith(("https://", "http://")) else f"https://{middle}"
        middle = f'<a href="{href}"{rel_attr}{target_attr}>{trim(middle)}</a>'
    elif middle.startswith("mailto:") and re.match(_EMAIL_PATTERN, middle[7:]):
        middle = f'<a href="{middle}">{middle[7:]}</a>'
    elif (
        "@" in middle
        and not middle.startswith(("www.", "@"))
        and ":" not in middle
        and re.match(_EMAIL_PATTERN, middle)
    ):
        middle = f'<a href="mailto:{middle}">{middle}</a>'
    else:
        for scheme in extra_schemes:
            if middle != scheme and middle.startswith(scheme):
                middle = f'<a href="{middle}"{rel_attr}{target_attr}>{middle}</a>'
    return f"{head}{middle}{tail}"


@pass_environment
def do_urlize(
    eval_ctx: Any,
    value: Any,
    trim_url_limit: int | None = None,
    nofollow: bool = False,
    target: str | None = None,
    rel: str | None = None,
    extra_schemes: Iterable[str] | None = None,
) -> str:
    """``{{ "see www.x.com"|urlize }}`` -> ``see <a href="https://www.x.com" rel="noopener">www.x.com</a>``"""
    rel_parts = set((rel or "").split())
    if nofollow:
        rel_parts.add("nofollow")
    rel_parts.update((_policy(eval_ctx, "urlize.rel") or "").split())
    rel = " ".join(sorted(rel_parts)) or None
    if target is None:
        target = _policy(eval_ctx, "urlize.target")
    if extra_schemes is None:
        extra_schemes = _policy(eval_ctx, "urlize.extra_schemes") or ()
    for scheme in extra_schemes:
        if re.fullmatch(_URI_SCHEME_PATTERN, scheme) is None:
            raise FilterArgumentError(f"{scheme!r} is not a valid URI scheme prefix.")

    if trim_url_limit is not None:
        limit = trim_url_limit

        def trim(url: str) -> str:
            return f"{url[:limit]}..." if len(url) > limit else url

    else:

        def trim(url: str) -> str:
            return url

    rel_attr = f' rel="{html_escape(rel)}"' if rel else ""
    target_attr = f' target="{html_escape(target)}"' if target else ""
    words = re.split(r"(\s+)", str(html_escape(value)))
    for word in words:
        if len(word) > _URLIZE_LONGEST_WORD:
            # The URL patterns backtrack: their time grows with the square of a word's length.
            raise LimitError(
                f"urlize of a word of {len(word)} characters: words longer than"
                f" {_URLIZE_LONGEST_WORD} are refused"
            )
    return "".join(_urlize_word(word, trim, rel_attr, target_attr, extra_schemes) for word in words)


# The longest word urlize matches against its patterns (their time is quadratic in it).
_URLIZE_LONGEST_WORD = 4096

_attr_key_re = re.compile(r"[\s/>=]", flags=re.ASCII)


@pass_environment
def do_xmlattr(eval_ctx: Any, d: Any, autospace: bool = True) -> str:
    """``{{ {"class": "a", "id": none}|xmlattr }}`` -> `` class="a"``"""
    items = []
    for key, value in d.items():
        if value is None or isinstance(value, Undefined):
            continue
        if _attr_key_re.search(key) is not None:
            raise ValueError(f"Invalid character in attribute name: {key!r}")
        items.append(f'{html_escape(key)}="{html_escape(value)}"')
    rv = " ".join(items)
    if autospace and rv:
        rv = " " + rv
    return rv


# ---------------------------------------------------------------------------------------------
# markup and JSON


@_jinja_name("escape")
def do_escape(s: Any, /) -> Markup:
    """``{{ "<a>"|e }}`` -> ``&lt;a&gt;``"""
    return html_escape(s)


def do_forceescape(value: Any) -> Markup:
    """``{{ "<a>"|safe|forceescape }}`` -> ``&lt;a&gt;`` (escapes even markup)"""
    if hasattr(value, "__html__"):
        value = value.__html__()
    return html_escape(_text(value))


def do_mark_safe(value: Any) -> Markup:
    """``{{ "<a>"|safe }}`` -> ``<a>``, marked as safe"""
    return Markup(value)


def _htmlsafe_json_dumps(obj: Any, dumps: Callable[..., str] | None, **kwargs: Any) -> Markup:
    import json

    text = (dumps or json.dumps)(obj, **kwargs)
    return Markup(
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("'", "\\u0027")
    )


_JSON_PROBE_WIDTH = 64


@pass_environment
def do_tojson(eval_ctx: Any, value: Any, indent: int | None = None) -> Markup:
    """``{{ {"b": "<", "a": 1}|tojson }}`` -> ``{"a": 1, "b": "\\u003c"}``"""
    kwargs = _policy(eval_ctx, "json.dumps_kwargs")
    if indent is not None:
        kwargs = {**kwargs, "indent": indent}
    dumps = _policy(eval_ctx, "json.dumps_function")
    if dumps is None:
        _check_json_bound(value, kwargs, eval_ctx, html=True)
    return _htmlsafe_json_dumps(value, dumps, **kwargs)


def _check_json_bound(value: Any, kwargs: dict[str, Any], env: Any = None, html: bool = False) -> None:
    # JSON writes a control character as six, an emoji as twelve (ensure_ascii), and repeats
    # its indentation on every line, deeper lines more: the text is bounded before it is made.
    width, item, key = json_layout(kwargs.get("indent"), kwargs.get("separators"))
    size, nodes = layout_bound(
        value,
        max_string(env),
        "json",
        indent=width,
        item_separator=item,
        key_separator=key,
        ensure_ascii=bool(kwargs.get("ensure_ascii", True)),
        html=html,
    )
    charge_work(items=nodes)
    check_size(size, env)


# json.dumps's encoder for each indent chat_tojson has used with its other defaults (at most
# 66: None and 0 to _JSON_PROBE_WIDTH).
_CHAT_ENCODERS: dict[int | None, Any] = {}


@_jinja_name("tojson")
def chat_tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    """The chat preset's ``tojson``: ``{{ {"b": "é", "a": 1}|tojson }}`` -> ``{"b": "é", "a": 1}``"""
    if (
        ensure_ascii is False
        and separators is None
        and sort_keys is False
        and (indent is None or (type(indent) is int and 0 <= indent <= _JSON_PROBE_WIDTH))
    ):
        # What templates pass: the encoder
        # json.dumps would build for these arguments can be built once and reused.
        _check_json_bound(value, {"indent": indent, "ensure_ascii": False})
        encoder = _CHAT_ENCODERS.get(indent)
        if encoder is None:
            import json

            encoder = _CHAT_ENCODERS[indent] = json.JSONEncoder(ensure_ascii=False, indent=indent)
        return encoder.encode(value)
    import json

    kwargs = {
        "ensure_ascii": ensure_ascii,
        "indent": indent,
        "separators": separators,
        "sort_keys": sort_keys,
    }
    _check_json_bound(value, kwargs)
    return json.dumps(value, **kwargs)


# ---------------------------------------------------------------------------------------------
# numbers


def do_abs(*args: Any, **kwargs: Any) -> Any:
    """``{{ -3|abs }}`` -> ``3``"""
    # Passing everything through lets the builtin word argument errors as Jinja2's does.
    return abs(*args, **kwargs)


def do_int(value: Any, default: int = 0, base: int = 10) -> int:
    """``{{ "42.5"|int }}`` -> ``42``; ``{{ "0x1A"|int(base=16) }}`` -> ``26``"""
    try:
        if isinstance(value, str):
            _check_digits(value, base)
            return int(value, base)
        return int(value)
    except (TypeError, ValueError):
        # "42.23"|int is 42: Jinja2 retries through float.
        try:
            return int(float(value))
        except (TypeError, ValueError, OverflowError):
            return default


def _check_digits(text: str, base: Any) -> None:
    # An integer of n digits in base b has about n * log2(b) bits: refused before it is made
    # (a power-of-two base converts any length; Python bounds only the others).
    if not isinstance(base, int) or len(text) < 64:
        return
    digits = text.strip().lstrip("+-")
    if not digits.replace("_", "").isalnum():
        return  # not a number: int() fails at once
    bits_per_digit = math.log2(base if base >= 2 else 36)
    bits = int(len(digits) * bits_per_digit)
    limit = current_limits().max_int_bits
    if bits > limit + bits_per_digit * 2:  # (a prefix such as 0x is two digits)
        raise LimitError(
            f"an integer of {len(text)} digits in base {base} would exceed max_int_bits ({limit})"
        )


def do_float(value: Any, default: float = 0.0) -> float:
    """``{{ "1.5"|float }}`` -> ``1.5``; ``{{ "x"|float }}`` -> ``0.0``"""
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def do_round(value: Any, precision: int = 0, method: str = "common") -> float:
    """``{{ 42.55|round }}`` -> ``43.0``; ``{{ 42.55|round(1, "floor") }}`` -> ``42.5``"""
    if method not in {"common", "ceil", "floor"}:
        raise FilterArgumentError("method must be common, ceil or floor")
    # 10**precision (and rounding an integer to a negative precision) makes an integer of
    # |precision| digits: refused beyond max_int_bits (a float rounds in constant time).
    if isinstance(precision, int) and not (method == "common" and isinstance(value, float)):
        limit = current_limits().max_int_bits
        if abs(precision) * 10 // 3 > limit:
            raise LimitError(f"rounding to {precision} digits would exceed max_int_bits ({limit})")
    if method == "common":
        return round(value, precision)
    func = math.ceil if method == "ceil" else math.floor
    return func(value * (10**precision)) / (10**precision)


# ---------------------------------------------------------------------------------------------
# values and sequences


def do_default(value: Any, default_value: Any = "", boolean: bool = False) -> Any:
    """``{{ missing|default("x") }}`` -> ``x``; ``{{ ""|d("x", true) }}`` -> ``x``"""
    if isinstance(value, Undefined) or (boolean and not value):
        return default_value
    return value


def do_length(*args: Any, **kwargs: Any) -> int:
    """``{{ [1, 2]|length }}`` -> ``2``"""
    return len(*args, **kwargs)


@_jinja_name("sync_do_list")
def do_list(value: Any) -> list[Any]:
    """``{{ "ab"|list }}`` -> ``['a', 'b']``"""
    return list(value)


@_jinja_name("sync_do_first")
@pass_environment
def do_first(environment: Any, seq: Any) -> Any:
    """``{{ [1, 2]|first }}`` -> ``1``"""
    try:
        return next(iter(seq))
    except StopIteration:
        return environment.undefined("No first item, sequence was empty.")


@pass_environment
def do_last(environment: Any, seq: Any) -> Any:
    """``{{ [1, 2]|last }}`` -> ``2`` (not for generators: ``|list|last``)"""
    try:
        return next(iter(reversed(seq)))
    except StopIteration:
        return environment.undefined("No last item, sequence was empty.")


@pass_environment
def do_random(context: Any, seq: Any) -> Any:
    """``{{ [1, 2, 3]|random }}`` -> one of the items, chosen at random"""
    import random

    try:
        return random.choice(seq)
    except IndexError:
        return context.undefined("No random item, sequence was empty.")


def do_reverse(value: Any) -> Any:
    """``{{ "abc"|reverse }}`` -> ``cba``; ``{{ [1, 2]|reverse|list }}`` -> ``[2, 1]``"""
    if isinstance(value, str):
        return _like(value, str.__getitem__(value, slice(None, None, -1)))
    try:
        return reversed(value)
    except TypeError:
        try:
            rv = list(value)
        except TypeError as exc:
            raise FilterArgumentError("argument must be iterable") from exc
        rv.reverse()
        return rv


@_jinja_name("sync_do_join")
@pass_environment
def do_join(eval_ctx: Any, value: Any, d: Any = "", attribute: Any = None) -> str:
    """``{{ [1, 2, 3]|join("|") }}`` -> ``1|2|3``"""
    if attribute is not None:
        value = map(make_attrgetter(eval_ctx, attribute), value)
    # Each item's text is measured before any is made: ``[big_list] * 1000`` prints the list
    # a thousand times.
    separator, items = _text(d), list(value)
    check_size(join_bound(separator, items, max_string(eval_ctx)), eval_ctx)
    items = [item if type(item) is str else str(item) for item in items]
    return separator.join(items)


def _min_or_max(
    env: Any, value: Any, func: Callable[..., Any], case_sensitive: bool, attribute: Any
) -> Any:
    it = iter(value)
    try:
        first = next(it)
    except StopIteration:
        return env.undefined("No aggregated item, sequence was empty.")
    key = make_attrgetter(env, attribute, postprocess=None if case_sensitive else _ignore_case)
    return func(chain([first], it), key=key)


@pass_environment
def do_min(
    environment: Any, value: Any, case_sensitive: bool = False, attribute: Any = None
) -> Any:
    """``{{ [3, 1, 2]|min }}`` -> ``1``; ``{{ ["b", "A"]|min }}`` -> ``A``"""
    return _min_or_max(environment, value, min, case_sensitive, attribute)


@pass_environment
def do_max(
    environment: Any, value: Any, case_sensitive: bool = False, attribute: Any = None
) -> Any:
    """``{{ [3, 1, 2]|max }}`` -> ``3``"""
    return _min_or_max(environment, value, max, case_sensitive, attribute)


@_jinja_name("sync_do_sum")
@pass_environment
def do_sum(environment: Any, iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
    """``{{ [1, 2, 3]|sum }}`` -> ``6``; ``{{ items|sum(attribute="price") }}``"""
    if attribute is not None:
        iterable = map(make_attrgetter(environment, attribute), iterable)
    if not isinstance(start, (list, tuple)):
        return sum(iterable, start)
    # Summing lists or strings copies the total at each item: the work grows with the
    # square of the result, so each addition goes through the checked operator.
    from .ops import make_add

    add = make_add(current_limits())
    total = start
    for item in iterable:
        total = add(total, item)
        charge_work(items=len(total) if hasattr(total, "__len__") else 0)
    return total


def do_dictsort(
    value: Any, case_sensitive: bool = False, by: str = "key", reverse: bool = False
) -> list[tuple[Any, Any]]:
    """``{{ {"b": 1, "A": 2}|dictsort }}`` -> ``[('A', 2), ('b', 1)]``"""
    if by == "key":
        pos = 0
    elif by == "value":
        pos = 1
    else:
        raise FilterArgumentError('You can only sort by either "key" or "value"')

    def sort_key(item: tuple[Any, Any]) -> Any:
        return item[pos] if case_sensitive else _ignore_case(item[pos])

    return sorted(value.items(), key=sort_key, reverse=reverse)


@pass_environment
def do_sort(
    environment: Any,
    value: Any,
    reverse: bool = False,
    case_sensitive: bool = False,
    attribute: Any = None,
) -> list[Any]:
    """``{{ [3, 1, 2]|sort }}`` -> ``[1, 2, 3]``; ``users|sort(attribute="age,name")``"""
    key = make_multi_attrgetter(
        environment, attribute, postprocess=None if case_sensitive else _ignore_case
    )
    return sorted(value, key=key, reverse=reverse)


@_generator_name("sync_do_unique")
def _unique_items(
    env: Any, value: Any, case_sensitive: bool = False, attribute: Any = None
) -> Iterator[Any]:
    getter = make_attrgetter(env, attribute, postprocess=None if case_sensitive else _ignore_case)
    seen = set()
    for item in value:
        key = getter(item)
        if type(key) is tuple:
            check_key(key)  # hashing a deep tuple crashes CPython; see sandbox.check_key
        if key not in seen:
            seen.add(key)
            yield item


@_jinja_name("sync_do_unique")
@pass_environment
def do_unique(
    environment: Any, value: Any, case_sensitive: bool = False, attribute: Any = None
) -> Iterator[Any]:
    """``{{ ["a", "b", "A"]|unique|list }}`` -> ``['a', 'b']``"""
    return _unique_items(environment, value, case_sensitive, attribute)


def do_items(value: Any) -> Iterator[tuple[Any, Any]]:
    """``{{ {"a": 1}|items|list }}`` -> ``[('a', 1)]``; undefined gives nothing"""
    if isinstance(value, Undefined):
        return
    if not isinstance(value, abc.Mapping):
        raise TypeError("Can only get item pairs from a mapping.")
    yield from value.items()


def do_batch(value: Any, linecount: int, fill_with: Any = None) -> Iterator[list[Any]]:
    """``{{ [1, 2, 3]|batch(2, 0)|list }}`` -> ``[[1, 2], [3, 0]]``"""
    tmp: list[Any] = []
    for item in value:
        if len(tmp) == linecount:
            yield tmp
            tmp = []
        tmp.append(item)
    if tmp:
        if fill_with is not None and len(tmp) < linecount:
            check_length(linecount, current_limits(), "list")
            tmp += [fill_with] * (linecount - len(tmp))
        yield tmp


@_generator_name("sync_do_slice")
def _slice_items(value: Any, slices: int, fill_with: Any = None) -> Iterator[list[Any]]:
    seq = list(value)
    # One list per slice, made whatever the input's length: counted before they are made.
    if isinstance(slices, int):
        check_length(slices, current_limits(), "list")
    length = len(seq)
    per_slice = length // slices
    with_extra = length % slices
    offset = 0
    for number in range(slices):
        start = offset + number * per_slice
        if number < with_extra:
            offset += 1
        end = offset + (number + 1) * per_slice
        part = seq[start:end]
        if fill_with is not None and number >= with_extra:
            part.append(fill_with)
        yield part


@_jinja_name("sync_do_slice")
def do_slice(value: Any, slices: int, fill_with: Any = None) -> Iterator[list[Any]]:
    """``{{ [1, 2, 3]|slice(2)|list }}`` -> ``[[1, 2], [3]]``"""
    return _slice_items(value, slices, fill_with)


class _GroupTuple(NamedTuple):
    grouper: Any
    list: list[Any]

    # Printed like a plain tuple, as in Jinja2.
    def __repr__(self) -> str:
        return tuple.__repr__(self)

    def __str__(self) -> str:
        return tuple.__str__(self)


@_jinja_name("sync_do_groupby")
@pass_environment
def do_groupby(
    environment: Any, value: Any, attribute: Any, default: Any = None, case_sensitive: bool = False
) -> list[_GroupTuple]:
    """``{% for city, users in users|groupby("city") %}``: sorted groups of ``(grouper, list)``"""
    key = make_attrgetter(
        environment,
        attribute,
        postprocess=None if case_sensitive else _ignore_case,
        default=default,
    )
    groups = [_GroupTuple(k, list(items)) for k, items in groupby(sorted(value, key=key), key)]
    if not case_sensitive:
        # The group shows the key as its first item spells it, not lowercased.
        real_key = make_attrgetter(environment, attribute, default=default)
        groups = [_GroupTuple(real_key(items[0]), items) for _, items in groups]
    return groups


@pass_environment
def do_attr(environment: Any, obj: Any, name: str) -> Any:
    """``{{ foo|attr("bar") }}`` is ``foo.bar`` without falling back to ``foo["bar"]``"""
    from inspect import getattr_static

    # getattr_static sees attributes without running descriptors; hasattr then catches the
    # dynamic ones.  Only an existing attribute goes to environment.getattr, which would otherwise
    # fall back to item lookup.
    try:
        getattr_static(obj, name)
    except AttributeError:
        if not hasattr(obj, name):
            return environment.undefined(obj=obj, name=name)
    return environment.getattr(obj, name)


def _registered(env: Any, kind: str, name: Any, args: tuple, kwargs: dict) -> Callable[[Any], Any]:
    """``item -> env.call_filter(name, item, args, kwargs)`` (or ``call_test``) with the filter
    or test looked up once rather than for each item, and each call charged as a filter or
    test the template called itself; an unknown name still fails only when the first item is
    given to it."""
    func = _lookup_registered(env, kind, name, args, kwargs)
    if kind == "test" and len(args) == 1 and not kwargs and args[0].__class__ in PLAIN_TYPES:
        # selectattr('role', 'equalto', 'user'): comparing with a string or a number takes at
        # most the time of reading that argument (charged as the filter's), and nests nothing;
        # made in place, without the test's own frame.
        test = _own_function(env, kind, name)
        other = args[0]
        if test is test_eq:
            return lambda item: item == other
        if test is test_ne:
            return lambda item: item != other
    charge = charge_for(kind, name if isinstance(name, str) else "")
    if charge is no_charge:
        return func

    def charged(item: Any) -> Any:
        # (``map('upper')`` over a thousand big strings pays for each; short strings and
        # scalars cost nothing, as when the template calls the filter itself)
        if costly(item):
            charge(item, None)
        result = func(item)
        if costly(result):
            charge(None, result)
        return result

    return charged


def _own_function(env: Any, kind: str, name: Any) -> Any:
    """The filter or test ``name`` as the environment holds it, when the environment calls
    it as ours does; else None (a caller's own environment, an unknown or unhashable name)."""
    method = "call_filter" if kind == "filter" else "call_test"
    environment = _environment_class()
    if (
        environment is None
        or getattr(type(env), method, None) is not getattr(environment, method)
        or getattr(type(env), "_call_registered", None) is not environment._call_registered
    ):
        return None
    try:
        return (env.filters if kind == "filter" else env.tests).get(check_key(name))
    except TypeError:
        return None


def _lookup_registered(
    env: Any, kind: str, name: Any, args: tuple, kwargs: dict
) -> Callable[[Any], Any]:
    func = _own_function(env, kind, name)
    if func is None:
        # The environment's own call: a caller's environment, or a name that fails ("No test
        # named ...", unhashable) only when the first item meets it.
        call = getattr(env, "call_filter" if kind == "filter" else "call_test")
        return lambda item: call(name, item, args, kwargs)
    if wants_environment(func):
        return lambda item: func(env, item, *args, **kwargs)
    if not args and not kwargs:
        return func
    return lambda item: func(item, *args, **kwargs)


def _environment_class() -> type | None:
    # The Environment class, registered by environment.py (which sits above this module) when
    # it builds its first environment: None before, when no environment of ours exists.
    return _ENVIRONMENT


def use_environment(environment: type) -> None:
    """Let map, select and their kin call the filters and tests of ``environment``'s
    instances directly when their class calls them as ``environment`` does."""
    global _ENVIRONMENT
    _ENVIRONMENT = environment


_ENVIRONMENT: type | None = None


@_generator_name("sync_do_map")
def _map_items(env: Any, value: Any, args: tuple, kwargs: dict) -> Iterator[Any]:
    if not value:
        return
    if not args and "attribute" in kwargs:
        attribute = kwargs.pop("attribute")
        default = kwargs.pop("default", None)
        if kwargs:
            raise FilterArgumentError(f"Unexpected keyword argument {next(iter(kwargs))!r}")
        func = make_attrgetter(env, attribute, default=default)
    else:
        if not args:
            raise FilterArgumentError("map requires a filter argument")
        name, args = args[0], args[1:]
        func = _registered(env, "filter", name, args, kwargs)

    for item in value:
        yield func(item)


@_jinja_name("sync_do_map")
@pass_environment
def do_map(context: Any, value: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
    """``{{ ["a", "b"]|map("upper")|join }}`` -> ``AB``; ``users|map(attribute="name")``"""
    return _map_items(context, value, args, kwargs)


def select_or_reject(
    env: Any,
    value: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    select: bool,
    lookup_attr: bool,
) -> Iterator[Any]:
    if not value:
        return
    if lookup_attr:
        if not args:
            raise FilterArgumentError("Missing parameter for attribute name")
        transform = make_attrgetter(env, args[0])
        args = args[1:]
    else:

        def transform(item: Any) -> Any:
            return item

    if args:
        name, args = args[0], args[1:]
        check = _registered(env, "test", name, args, kwargs)
    else:
        check = bool

    for item in value:
        if bool(check(transform(item))) is select:
            yield item


@_jinja_name("sync_do_select")
@pass_environment
def do_select(context: Any, value: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
    """``{{ [1, 2, 3]|select("odd")|list }}`` -> ``[1, 3]``"""
    return select_or_reject(context, value, args, kwargs, True, False)


@_jinja_name("sync_do_reject")
@pass_environment
def do_reject(context: Any, value: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
    """``{{ [1, 2, 3]|reject("odd")|list }}`` -> ``[2]``"""
    return select_or_reject(context, value, args, kwargs, False, False)


@_jinja_name("sync_do_selectattr")
@pass_environment
def do_selectattr(context: Any, value: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
    """``{{ users|selectattr("email", "none")|list }}``: users whose email is none"""
    return select_or_reject(context, value, args, kwargs, True, True)


@_jinja_name("sync_do_rejectattr")
@pass_environment
def do_rejectattr(context: Any, value: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
    """``{{ users|rejectattr("is_active")|list }}``: users that are not active"""
    return select_or_reject(context, value, args, kwargs, False, True)


FILTERS: dict[str, Callable[..., Any]] = {
    "abs": do_abs,
    "attr": do_attr,
    "batch": do_batch,
    "capitalize": do_capitalize,
    "center": do_center,
    "count": do_length,
    "d": do_default,
    "default": do_default,
    "dictsort": do_dictsort,
    "e": do_escape,
    "escape": do_escape,
    "filesizeformat": do_filesizeformat,
    "first": do_first,
    "float": do_float,
    "forceescape": do_forceescape,
    "format": do_format,
    "groupby": do_groupby,
    "indent": do_indent,
    "int": do_int,
    "items": do_items,
    "join": do_join,
    "last": do_last,
    "length": do_length,
    "list": do_list,
    "lower": do_lower,
    "map": do_map,
    "max": do_max,
    "min": do_min,
    "pprint": do_pprint,
    "random": do_random,
    "reject": do_reject,
    "rejectattr": do_rejectattr,
    "replace": do_replace,
    "reverse": do_reverse,
    "round": do_round,
    "safe": do_mark_safe,
    "select": do_select,
    "selectattr": do_selectattr,
    "slice": do_slice,
    "sort": do_sort,
    "string": do_string,
    "striptags": do_striptags,
    "sum": do_sum,
    "title": do_title,
    "tojson": do_tojson,
    "trim": do_trim,
    "truncate": do_truncate,
    "unique": do_unique,
    "upper": do_upper,
    "urlencode": do_urlencode,
    "urlize": do_urlize,
    "wordcount": do_wordcount,
    "wordwrap": do_wordwrap,
    "xmlattr": do_xmlattr,
}

# Each filter's cost (see costs.py): charged before it runs from its input's size (its other
# arguments by theirs), and on its output after; ``guarded`` names the check it makes itself
# from an argument's value before it builds.
FILTER_COSTS: dict[str, Cost] = {
    "abs": SCAN,
    "attr": FREE,
    "batch": guarded(WALK, "linecount: the number of rows, within max_items"),
    "capitalize": TEXT,
    "center": guarded(TEXT, "width: within max_string"),
    "count": FREE,
    "d": FREE,
    "default": FREE,
    "dictsort": SORT,
    "e": ESCAPE,
    "escape": ESCAPE,
    "filesizeformat": SCAN,
    "first": FREE,
    "float": SCAN,
    "forceescape": ESCAPE,
    "format": guarded(SCAN, "%-format widths and printed values: within max_string"),
    "groupby": SORT,
    "indent": guarded(WORDS, "width times lines: within max_string"),
    "int": SCAN,
    "items": WALK,
    "join": guarded(COMPARE, "separator times items plus items: within max_string"),
    "last": FREE,
    "length": FREE,
    "list": WALK,
    "lower": TEXT,
    "map": WALK,
    "max": COMPARE,
    "min": COMPARE,
    "pprint": PPRINT,
    "random": SCAN,
    "reject": WALK,
    "rejectattr": WALK,
    "replace": guarded(TEXT, "matches times growth: within max_string"),
    "reverse": SCAN,
    "round": SCAN,
    "safe": TEXT,
    "select": WALK,
    "selectattr": WALK,
    "slice": guarded(WALK, "slices: within max_items"),
    "sort": SORT,
    "string": PRINT,
    "striptags": WORDS,
    "sum": WALK,
    "title": WORDS,
    "tojson": guarded(PRINT, "indent times lines: within max_string"),
    "trim": TEXT,
    "truncate": TEXT,
    "unique": COMPARE,
    "upper": TEXT,
    "urlencode": COMPARE,
    "urlize": WORDS,
    "wordcount": WORDS,
    "wordwrap": guarded(WORDS, "wrapstring times lines: within max_string"),
    "xmlattr": COMPARE,
}
declare("filter", FILTER_COSTS)
