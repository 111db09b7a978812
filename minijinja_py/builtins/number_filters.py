"""The built-in filters on numbers: abs, int, float, round."""

from __future__ import annotations

import math
from typing import Any

from ..errors import FilterArgumentError, LimitError
from ..sandbox.budget import (
    current_limits,
)
from .costs import (
    SCAN,
    Cost,
)

# ---------------------------------------------------------------------------------------------
# numbers


def do_abs(*args: Any, **kwargs: Any) -> Any:
    """`{{ -3|abs }}` -> `3`"""
    # Passing everything through lets the builtin word argument errors as Jinja2's does.
    return abs(*args, **kwargs)


def do_int(value: Any, default: int = 0, base: int = 10) -> int:
    """`{{ "42.5"|int }}` -> `42`; `{{ "0x1A"|int(base=16) }}` -> `26`"""
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
    """`{{ "1.5"|float }}` -> `1.5`; `{{ "x"|float }}` -> `0.0`"""
    try:
        return float(value)
    except (TypeError, ValueError):
        return default


def do_round(value: Any, precision: int = 0, method: str = "common") -> float:
    """`{{ 42.55|round }}` -> `43.0`; `{{ 42.55|round(1, "floor") }}` -> `42.5`"""
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


# The costs of the number filters (see costs.py and the note in filters.py).
NUMBER_FILTER_COSTS: dict[str, Cost] = {
    "abs": SCAN,
    "float": SCAN,
    "int": SCAN,
    "round": SCAN,
}
