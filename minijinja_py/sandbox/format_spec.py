"""Our own reading of printf-style (`%`) and `str.format` field specs, to bound what a
format makes before Python makes it.

A width or precision can hide anywhere Python's own parser finds one: behind a mapping key
with nested parentheses (`'%(a(b))600000000s'`), after `*` (taken from the arguments),
after `.`, or in a `{0:{1}}` spec built by the format itself.  Guessing with a regular
expression misses some of them; these parsers follow Python's grammar step by step
(CPython's `unicode_format_arg_parse` and `parse_internal_render_format_spec`), so that
every width and precision Python would honour is seen and summed first.  Where Python would
raise (an unsupported conversion, a missing argument), the bound stops counting: Python raises
there too, before it goes any further.

Only sizes are computed here; Python still does the formatting, so the text is Python's.
"""

from __future__ import annotations

from typing import Any

from ..errors import LimitError
from .measure import printed_size
from .printing import escaped_size, leaf_repr_size, repr_size

# What a number can print as, besides its digits: a sign, a ``0x`` prefix, a ``%``.
_NUMBER_EXTRA = 4
# The most characters a float prints before its point (1.8e308 has 309 digits), plus sign,
# point and exponent.
_FLOAT_DIGITS = 320
_FLAGS = frozenset("-+ #0")


def str_bound(value: Any, limit: int) -> int:
    """An upper bound of `len(str(value))` (a container prints its items' reprs)."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value.bit_length() // 3 + 5
    return printed_size(value)


def repr_bound(value: Any, limit: int, ascii_only: bool = False) -> int:
    """An upper bound of `len(repr(value))` (`ascii_only`: of `ascii(value)`, which
    writes a non-ASCII character in up to ten)."""
    if isinstance(value, (int, float)) or value is None:
        return leaf_repr_size(value)
    if ascii_only:
        if type(value) is str:
            return repr_size(value, ascii)
        return 10 * (leaf_repr_size(value) if isinstance(value, str) else printed_size(value))
    if isinstance(value, str):
        return leaf_repr_size(value)
    return printed_size(value)


def escaped_bound(value: Any, printed: int) -> int:
    """An upper bound of the text of `value` escaped for HTML, `printed` long unescaped."""
    if hasattr(value, "__html__"):
        return printed
    if isinstance(value, str):
        # (padding beyond the text may be made of characters that escape too)
        return escaped_size(value) + 5 * max(0, printed - len(value))
    return 5 * printed


def join_bound(separator: str, items: list[Any], limit: int, escaped: bool = False) -> int:
    """An upper bound of the text of `items` joined by `separator`, each item printed
    with `str` (`escaped`: and escaped for HTML, as `Markup.join` does); stops counting
    above `limit`."""
    size = len(separator) * max(len(items) - 1, 0)
    for item in items:
        printed = str_bound(item, limit)
        size += escaped_bound(item, printed) if escaped else printed
        if size > limit:
            break
    return size


def _too_wide(what: str, number: int, limit: int) -> LimitError:
    return LimitError(f"a format {what} of {number} exceeds max_string ({limit})")


def _int_digits(value: Any, base: int = 10) -> int:
    """The most digits `value` (an int, or a float made an int) prints in `base`."""
    if isinstance(value, float):
        return _FLOAT_DIGITS
    try:
        bits = int(value).bit_length()
    except (TypeError, ValueError, OverflowError):
        return _FLOAT_DIGITS
    if base == 2:
        return bits + 1
    if base == 16:
        return bits // 4 + 1
    return bits // 3 + 1  # (a decimal digit holds 3.32 bits, an octal one 3)


def percent_bound(fmt: str, args: Any, limit: int, escaped: bool = False) -> int:
    """An upper bound of `len(fmt % args)`, counted before it is made.

    Raises `LimitError` for a width or precision above `limit` (that one field alone
    would be too long).  `escaped`: the fields are HTML-escaped as `Markup` does.
    """
    if type(fmt) is str:
        plan = _PLANS.get(fmt, _UNPLANNED)
        if plan is _UNPLANNED:
            plan = _plain_plan(fmt)
        if plan is not None:
            return _planned_bound(plan, args, limit, escaped)
    return parsed_bound(fmt, args, limit, escaped)


# A format whose every field is a bare `%s` ("%s", "%s=%s": what templates write, a `format`
# per tool argument) is read once: the lengths of its text between fields (`%%` one character),
# kept per string.  Its bound is then summed from them, as the parser below would sum it.
_PLANS: dict[str, tuple[int, ...] | None] = {}
_PLANNED_FORMATS = 512  # (kept at most; a format longer than this is parsed at each call)
_UNPLANNED: Any = object()


def _plain_plan(fmt: str) -> tuple[int, ...] | None:
    """The text lengths around the fields of `fmt` when each is a bare `%s`, else None."""
    lengths: list[int] = []
    text = 0
    pos = 0
    length = len(fmt)
    plain = True
    while True:
        found = fmt.find("%", pos)
        if found < 0:
            lengths.append(text + length - pos)
            break
        text += found - pos
        ch = fmt[found + 1] if found + 1 < length else ""  # ("": incomplete, the parser's)
        if ch == "%":
            text += 1
        elif ch == "s":
            lengths.append(text)
            text = 0
        else:
            plain = False
            break
        pos = found + 2
    plan = tuple(lengths) if plain else None
    if length <= _PLANNED_FORMATS:
        if len(_PLANS) >= _PLANNED_FORMATS:
            _PLANS.clear()  # (a process meets few formats; one that makes many starts again)
        _PLANS[fmt] = plan
    return plan


def _planned_bound(plan: tuple[int, ...], args: Any, limit: int, escaped: bool) -> int:
    # parsed_bound's sum for a format of bare `%s` fields, stopping where it stops.
    values: Any = args if isinstance(args, tuple) else (args,)
    size = 0
    fields = len(plan) - 1
    for index in range(fields):
        size += plan[index]
        if index >= len(values):
            return size  # "not enough arguments"
        value = values[index]
        made = str_bound(value, limit)
        if escaped:
            made = escaped_bound(value, made)
        size += made
        if size > limit:
            return size
    return size + plan[fields]


def parsed_bound(fmt: str, args: Any, limit: int, escaped: bool = False) -> int:
    """percent_bound of any format, read field by field as Python reads it."""
    size = 0
    length = len(fmt)
    # Python reads a mapping key only when the arguments are a mapping (not a tuple or str);
    # otherwise the arguments are a tuple of values, or one value.
    is_mapping = hasattr(type(args), "__getitem__") and not isinstance(args, (tuple, str))
    if isinstance(args, tuple):
        values: Any = args
    else:
        values = (args,)
    next_arg = 0
    pos = 0
    while True:
        found = fmt.find("%", pos)
        if found < 0:
            return size + length - pos
        size += found - pos
        pos = found + 1
        if pos >= length:
            return size  # "incomplete format"
        ch = fmt[pos]
        if ch == "%":
            size += 1
            pos += 1
            continue
        if ch == "(":
            if not is_mapping:
                return size  # "format requires a mapping"
            depth = 1
            start = pos + 1
            pos = start
            while depth and pos < length:
                ch = fmt[pos]
                if ch == "(":
                    depth += 1
                elif ch == ")":
                    depth -= 1
                pos += 1
            if depth:
                return size  # "incomplete format key"
            try:
                values = (args[fmt[start : pos - 1]],)
            except Exception:
                return size  # (Python raises the same lookup error)
            next_arg = 0
            if pos >= length:
                return size
            ch = fmt[pos]
        while ch in _FLAGS:
            pos += 1
            if pos >= length:
                return size
            ch = fmt[pos]
        width = -1
        if ch == "*":
            if next_arg >= len(values):
                return size
            star = values[next_arg]
            next_arg += 1
            if not isinstance(star, int):
                return size  # "* wants int"
            width = abs(star)
            if width > limit:
                raise _too_wide("width", width, limit)
            pos += 1
            if pos >= length:
                return size
            ch = fmt[pos]
        elif "0" <= ch <= "9":
            end = pos
            while end < length and "0" <= fmt[end] <= "9":
                end += 1
            width = _number(fmt, pos, end, "width", limit)
            pos = end
            if pos >= length:
                return size
            ch = fmt[pos]
        precision = -1
        if ch == ".":
            precision = 0
            pos += 1
            if pos >= length:
                return size
            ch = fmt[pos]
            if ch == "*":
                if next_arg >= len(values):
                    return size
                star = values[next_arg]
                next_arg += 1
                if not isinstance(star, int):
                    return size
                precision = max(star, 0)
                if precision > limit:
                    raise _too_wide("precision", precision, limit)
                pos += 1
                if pos >= length:
                    return size
                ch = fmt[pos]
            elif "0" <= ch <= "9":
                end = pos
                while end < length and "0" <= fmt[end] <= "9":
                    end += 1
                precision = _number(fmt, pos, end, "precision", limit)
                pos = end
                if pos >= length:
                    return size
                ch = fmt[pos]
        if ch in "hlL":
            pos += 1
            if pos >= length:
                return size
            ch = fmt[pos]
        pos += 1
        if next_arg >= len(values):
            return size  # "not enough arguments"
        value = values[next_arg]
        next_arg += 1
        if ch == "s":
            made = str_bound(value, limit)
            if escaped:
                made = escaped_bound(value, made)
            if precision >= 0:
                made = min(made, precision)
        elif ch == "r" or ch == "a":
            made = repr_bound(value, limit, ascii_only=ch == "a")
            if escaped:
                made *= 5
            if precision >= 0:
                made = min(made, precision)
        elif ch in "diu":
            made = max(_int_digits(value), precision) + _NUMBER_EXTRA
        elif ch in "oxX":
            made = max(_int_digits(value, 16 if ch != "o" else 8), precision) + _NUMBER_EXTRA
        elif ch in "eEfFgG":
            made = _FLOAT_DIGITS + (6 if precision < 0 else precision)
        elif ch == "c":
            made = 1
        else:
            return size  # "unsupported format character"
        size += max(made, width)
        if size > limit:
            return size


def _number(fmt: str, start: int, end: int, what: str, limit: int) -> int:
    digits = fmt[start:end]
    if len(digits) > 18:
        raise LimitError(f"a format {what} of {len(digits)} digits exceeds max_string ({limit})")
    number = int(digits)
    if number > limit:
        raise _too_wide(what, number, limit)
    return number


_ALIGN = frozenset("<>=^")
_SIGN = frozenset("+- ")


def spec_bound(value: Any, spec: str, limit: int) -> int:
    """An upper bound of `len(format(value, spec))` for the values a template holds,
    counted before it is made; refuses a width or precision above `limit`."""
    if not spec:
        return str_bound(value, limit)
    length = len(spec)
    pos = 0
    if length >= 2 and spec[1] in _ALIGN:
        pos = 2
        fill = True
    else:
        fill = False
        if spec[0] in _ALIGN:
            pos = 1
    if pos < length and spec[pos] in _SIGN:
        pos += 1
    if pos < length and spec[pos] == "z":
        pos += 1
    if pos < length and spec[pos] == "#":
        pos += 1
    if not fill and pos < length and spec[pos] == "0":
        pos += 1
    end = pos
    while end < length and "0" <= spec[end] <= "9":
        end += 1
    width = _number(spec, pos, end, "width", limit) if end > pos else 0
    pos = end
    grouping = pos < length and spec[pos] in ",_"
    while pos < length and spec[pos] in ",_":
        pos += 1
    precision = -1
    if pos < length and spec[pos] == ".":
        end = pos = pos + 1
        while end < length and "0" <= spec[end] <= "9":
            end += 1
        if end > pos:
            precision = _number(spec, pos, end, "precision", limit)
        pos = end
    kind = spec[pos:]
    if isinstance(value, str):
        made = len(value) if precision < 0 else min(len(value), precision)
    elif isinstance(value, (int, float)) or kind:  # (a bool with a spec formats as an int)
        if isinstance(value, float) or kind in ("e", "E", "f", "F", "g", "G", "%", "n"):
            made = _FLOAT_DIGITS + max(precision, 6) + 3
        else:
            made = _int_digits(value, 2 if kind == "b" else 10) + _NUMBER_EXTRA
        if grouping:
            # (zero padding is grouped too: ``format(0, '012,')`` is ``0,000,000,000``)
            made = max(made, width)
            return made + made // 3 + 1
    else:
        made = str_bound(value, limit)
    return max(made, width)
