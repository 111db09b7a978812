"""What the built-in filters share: Jinja2's names for them, policies, coercions to text and
attribute paths."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..sandbox.budget import charge_big_int
from ..sandbox.measure import check_printable, handed_over, measure_text
from ..sandbox.opaque import shown_str
from ..values.runtime import Markup, Undefined

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

    Python names the function in them: `sync_do_first() takes 2 positional arguments ...`.
    The function is also bound to that name in the module defining it: pickle finds functions
    by qualified name, and environments holding these filters must stay picklable.
    """

    def rename(func: Callable[..., Any]) -> Callable[..., Any]:
        func.__name__ = func.__qualname__ = name
        func.__globals__[name] = func
        return func

    return rename


def _generator_name(name: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Name a generator function as Jinja2's, so `{{ x|map(...) }}` prints the same."""

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
    elif not handed_over(value):  # (measured and charged by the filter's cost a moment ago)
        check_printable(value)
    return shown_str(value)


def _text(value: Any) -> str:
    # ``str(value)``, measured before it is made (a container prints its items' reprs).
    if not isinstance(value, str):
        measure_text(value)
    return shown_str(value)


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
    """A function looking up `attribute` (dotted, integer parts as indexes) with `env.getitem`."""
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
    """Like `make_attrgetter` for a comma separated list of paths; returns a list."""
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
