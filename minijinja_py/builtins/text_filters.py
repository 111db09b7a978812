"""The built-in filters on strings: case, spacing, replacing, truncating, wrapping, urlize."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import FilterArgumentError, LimitError
from ..sandbox.budget import (
    charge_work,
    check_size,
    max_string,
)
from ..sandbox.opaque import holds_opaque, shown
from ..values.runtime import Markup, pass_environment
from ..values.runtime import escape as html_escape
from .costs import (
    ESCAPED_WORDS,
    PRINT,
    SCAN,
    TEXT,
    WORDS,
    Cost,
    guarded,
)
from .filter_support import (
    _jinja_name,
    _like,
    _policy,
    _soft_str,
    _text,
)
from .methods import (
    check_percent_format,
    check_replace,
    check_width,
    markup_mod,
)

# ---------------------------------------------------------------------------------------------
# strings


def do_upper(s: Any) -> str:
    """`{{ "hi"|upper }}` -> `HI`"""
    if type(s) is str:  # (neither converted nor markup)
        return str.upper(s)
    s = _soft_str(s)
    return _like(s, str.upper(s))


def do_lower(s: Any) -> str:
    """`{{ "Hi"|lower }}` -> `hi`"""
    if type(s) is str:  # (neither converted nor markup)
        return str.lower(s)
    s = _soft_str(s)
    return _like(s, str.lower(s))


def do_capitalize(s: Any) -> str:
    """`{{ "hello WORLD"|capitalize }}` -> `Hello world`"""
    if type(s) is str:  # (neither converted nor markup)
        return str.capitalize(s)
    s = _soft_str(s)
    return _like(s, str.capitalize(s))


_word_beginning_split_re = re.compile(r"([-\s({\[<]+)")


def do_title(s: Any) -> str:
    """`{{ "they're here"|title }}` -> `They're Here` (unlike `str.title`)"""
    pieces = _word_beginning_split_re.split(_soft_str(s))
    return "".join(piece[0].upper() + piece[1:].lower() for piece in pieces if piece)


def do_center(value: Any, width: int = 80) -> str:
    """`{{ "x"|center(5) }}` -> `  x  `"""
    check_width(width)
    value = _soft_str(value)
    return _like(value, str.center(value, width))


def do_trim(value: Any, chars: str | None = None) -> str:
    """`{{ "  x  "|trim }}` -> `x`; `{{ "xxaxx"|trim("x") }}` -> `a`"""
    if type(value) is str:  # (neither converted nor markup)
        return str.strip(value, chars)
    value = _soft_str(value)
    return _like(value, str.strip(value, chars))


@pass_environment
# Filters that receive the environment name that parameter as Jinja's do (environment, eval_ctx,
# context): from Python 3.13 a wrong keyword argument is answered with the closest parameter
# name ("Did you mean 'env'?"), so the names are part of the messages Jinja2 gives.


def do_replace(eval_ctx: Any, s: Any, old: Any, new: Any, count: int | None = None) -> str:
    """`{{ "aaaaargh"|replace("a", "d'oh, ", 2) }}` -> `d'oh, d'oh, aaargh`"""
    if count is None:
        count = -1
    s, old, new = _text(s), _text(old), _text(new)
    check_replace(s, old, new, count, eval_ctx)
    return s.replace(old, new, count)


@_jinja_name("soft_str")
def do_string(s: Any, /) -> str:
    """`{{ 1|string ~ 2 }}` -> `12`; markup stays markup"""
    return _soft_str(s)


def do_wordcount(s: Any) -> int:
    """`{{ "a b-c"|wordcount }}` -> `3`"""
    return len(re.findall(r"\w+", _soft_str(s)))


def do_format(value: Any, *args: Any, **kwargs: Any) -> str:
    """`{{ "%s, %s!"|format("Hello", "World") }}` -> `Hello, World!`"""
    if args and kwargs:
        raise FilterArgumentError("can't handle positional and keyword arguments at the same time")
    value = _soft_str(value)
    if isinstance(value, Markup):
        return markup_mod(value, kwargs or args)
    check_percent_format(value, kwargs or args)
    values = kwargs or args
    return value % (shown(values) if holds_opaque(values) else values)


def do_indent(s: Any, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
    """`{{ "a\\nb"|indent(2) }}` -> `a\\n  b` (first and blank lines untouched by default)"""
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
    """`{{ "foo bar baz qux"|truncate(9) }}` -> `foo...`"""
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
    """`{{ "aaa bbb"|wordwrap(3) }}` -> `aaa\\nbbb`"""
    import textwrap

    if wrapstring is None:
        wrapstring = getattr(environment, "newline_sequence", "\n")
    lines_width = _wrapped_width(width)
    if isinstance(s, str) and lines_width:
        # Two consecutive wrapped lines hold more than ``width`` characters together.
        if isinstance(wrapstring, str):
            lines = 2 * len(s) // lines_width + s.count("\n") + 2
            check_size(len(s) + len(wrapstring) * lines, environment)
        if break_long_words and len(s) > lines_width:
            # textwrap cuts a long word one line at a time, copying the rest of it each time:
            # its cost grows with the square of the word's length.  Charge that up front
            # (before a wrapstring that is not text fails the join: the wrapping runs first).
            charge_work(
                chars=sum(len(w) * len(w) // lines_width for w in s.split() if len(w) > lines_width)
            )
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


def _wrapped_width(width: Any) -> int:
    """The line width textwrap really wraps at, for a width of any number type (0 for one it
    refuses or cannot compare): a float or a bool wraps as its floor, and below 1 as 1 (each
    character of a long word on a line of its own); NaN as 1 (the worst case)."""
    if not isinstance(width, (int, float)):
        return 0
    if width != width:
        return 1
    if width <= 0:
        return 0
    return max(1, int(min(width, 1 << 62)))


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


# What urlize strips off a word's ends: its leading run of `(`, `<`, `&lt;`; its trailing run of
# `)`, `>`, `.`, `,`, newline, `&gt;`.
_OPENERS = "(<"
_CLOSERS = ")>.,\n"


def _head_end(word: str) -> int:
    """Where the leading run of openers ends (`^([(<]|&lt;)+`), in one pass."""
    at, n = 0, len(word)
    while at < n:
        if word[at] in _OPENERS:
            at += 1
        elif word.startswith("&lt;", at):
            at += 4
        else:
            break
    return at


def _tail_start(word: str, start: int) -> int:
    """Where the trailing run of closers of `word[start:]` begins: the leftmost match of
    `([)>.,\n]|&gt;)+$`, found from the right in one pass (a search from each position,
    as the pattern does, is quadratic on a word of dots that ends otherwise)."""
    at = len(word)
    while at > start:
        if word[at - 1] in _CLOSERS:
            at -= 1
        elif word.endswith("&gt;", start, at):
            at -= 4
        else:
            break
    return at


def _balance(middle: str, tail: str) -> tuple[str, str]:
    """An unbalanced opening bracket takes its closing partner back from the tail, with what
    precedes it there: as many partners as the middle has openers, found in one pass."""
    for opening, closing in ("(", ")"), ("<", ">"), ("&lt;", "&gt;"):
        opened = middle.count(opening)
        if opened <= middle.count(closing):
            continue
        cut = 0
        for _ in range(min(opened, tail.count(closing))):
            cut = tail.index(closing, cut) + len(closing)
        middle += tail[:cut]
        tail = tail[cut:]
    return middle, tail


def _urlize_word(
    word: str,
    trim: Callable[[str], str],
    rel_attr: str,
    target_attr: str,
    extra_schemes: Iterable[str],
) -> str:
    cut = _head_end(word)
    head, middle, tail = word[:cut], word[cut:], ""
    cut = _tail_start(middle, 0)
    if cut < len(middle):
        middle, tail = middle[:cut], middle[cut:]
    if tail:
        middle, tail = _balance(middle, tail)
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
    """`{{ "see www.x.com"|urlize }}` -> `see <a href="https://www.x.com" rel="noopener">www.x.com</a>`"""
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
    # A link repeats its word and adds the attributes (the caller's `target` may be long): the
    # text made so far is held within max_string as it grows, before each piece is kept.
    most, made = max_string(eval_ctx), 0
    pieces = []
    for word in words:
        piece = _urlize_word(word, trim, rel_attr, target_attr, extra_schemes)
        made += len(piece)
        if made > most:
            raise LimitError(f"a string of {made} characters exceeds max_string ({most})")
        pieces.append(piece)
    return "".join(pieces)


# The costs of the string filters (see costs.py and the note in filters.py).
TEXT_FILTER_COSTS: dict[str, Cost] = {
    "capitalize": TEXT,
    "center": guarded(TEXT, "width: within max_string"),
    "format": guarded(SCAN, "%-format widths and printed values: within max_string"),
    "indent": guarded(WORDS, "width times lines: within max_string"),
    "lower": TEXT,
    "replace": guarded(TEXT, "matches times growth: within max_string"),
    "string": PRINT,
    "striptags": WORDS,
    "title": WORDS,
    "trim": TEXT,
    "truncate": TEXT,
    "upper": TEXT,
    "urlize": guarded(ESCAPED_WORDS, "the links made: within max_string"),
    "wordcount": WORDS,
    "wordwrap": guarded(WORDS, "wrapstring times lines: within max_string"),
}
