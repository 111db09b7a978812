"""The built-in filters that print a value in a format: sizes, pprint, URL and XML
attributes, markup and JSON."""

from __future__ import annotations

import re
from collections import abc
from collections.abc import Callable
from typing import Any

from ..sandbox.budget import (
    charge_work,
    check_size,
)
from ..sandbox.measure import json_within_measure
from ..sandbox.opaque import holds_opaque, shown
from ..sandbox.printing import json_layout, layout_bound
from ..values.runtime import Markup, Undefined, pass_environment
from ..values.runtime import escape as html_escape
from .costs import (
    COMPARE,
    ESCAPE,
    PPRINT,
    PRINT,
    SCAN,
    TEXT,
    Cost,
    guarded,
)
from .filter_support import (
    _jinja_name,
    _policy,
    _text,
)
from .indented_json import indented_json
from .methods import (
    max_string,
)

# ---------------------------------------------------------------------------------------------
# formats


def do_filesizeformat(value: Any, binary: bool = False) -> str:
    """`{{ 1500|filesizeformat }}` -> `1.5 kB`; `{{ 1024|filesizeformat(true) }}` -> `1.0 KiB`"""
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
    """`{{ {"b": 1, "a": 2}|pprint }}` -> `{'a': 2, 'b': 1}`"""
    import pprint

    # Lines of a pprint layout are indented to their bracket's column, and a long string is
    # split into a piece per line or word, each on its own indented line: bounded first.
    size, nodes = layout_bound(value, max_string(), "pprint")
    charge_work(items=nodes)
    check_size(size)
    return pprint.pformat(shown(value) if holds_opaque(value) else value)


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
    """`{{ "a b/c"|urlencode }}` -> `a%20b/c`; `{{ {"a": "x y"}|urlencode }}` -> `a=x+y`"""
    if isinstance(value, str) or not isinstance(value, abc.Iterable):
        return _url_quote(value)
    items = value.items() if isinstance(value, dict) else value
    return "&".join(f"{_url_quote(k, True)}={_url_quote(v, True)}" for k, v in items)


_attr_key_re = re.compile(r"[\s/>=]", flags=re.ASCII)


@pass_environment
def do_xmlattr(eval_ctx: Any, d: Any, autospace: bool = True) -> str:
    """`{{ {"class": "a", "id": none}|xmlattr }}` -> ` class="a"`"""
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
    """`{{ "<a>"|e }}` -> `&lt;a&gt;`"""
    return html_escape(s)


def do_forceescape(value: Any) -> Markup:
    """`{{ "<a>"|safe|forceescape }}` -> `&lt;a&gt;` (escapes even markup)"""
    if hasattr(value, "__html__"):
        value = value.__html__()
    return html_escape(_text(value))


def do_mark_safe(value: Any) -> Markup:
    """`{{ "<a>"|safe }}` -> `<a>`, marked as safe"""
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
    """`{{ {"b": "<", "a": 1}|tojson }}` -> `{"a": 1, "b": "\\u003c"}`"""
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


# json.dumps's compact encoder with chat_tojson's other defaults (an indent is written by
# indented_json, and any other arguments by json.dumps): made once, never one per argument a
# template passes.
_CHAT_ENCODER: list[Callable[[Any], str]] = []


def _chat_encoder() -> Callable[[Any], str]:
    """`json.JSONEncoder(ensure_ascii=False).encode`, as Python's C accelerator writes it, the
    accelerator made once: `encode` makes a new one (and a closure) at every call, and keeps a
    dict of the containers it is inside of, to refuse one that contains itself.  What reaches
    chat_tojson's encoder was measured first (check_printable or layout_bound), which refuses
    such a structure (it nests without end, and its text has no end), so that check is left out."""
    import json
    from json import encoder as json_encoder

    python_encoder = json.JSONEncoder(ensure_ascii=False)
    make = json_encoder.c_make_encoder
    if make is None:  # (a Python without json's accelerator)
        return python_encoder.encode
    write = make(
        None,  # (no circular-reference check: see above)
        python_encoder.default,
        json_encoder.encode_basestring,
        None,  # indent
        python_encoder.key_separator,
        python_encoder.item_separator,
        False,  # sort_keys
        False,  # skipkeys
        True,  # allow_nan
    )

    def encode(value: Any) -> str:
        return "".join(write(value, 0))

    return encode


@_jinja_name("tojson")
def chat_tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    """The chat preset's `tojson`: `{{ {"b": "é", "a": 1}|tojson }}` -> `{"b": "é", "a": 1}`"""
    if (
        ensure_ascii is False
        and separators is None
        and sort_keys is False
        and (indent is None or (type(indent) is int and 0 <= indent <= _JSON_PROBE_WIDTH))
    ):
        # What templates pass: the encoder
        # json.dumps would build for these arguments can be built once and reused.
        if not json_within_measure(value, indent):
            _check_json_bound(value, {"indent": indent, "ensure_ascii": False})
        if indent is not None:
            return indented_json(value, indent)
        if not _CHAT_ENCODER:
            _CHAT_ENCODER.append(_chat_encoder())
        return _CHAT_ENCODER[0](value)
    import json

    kwargs = {
        "ensure_ascii": ensure_ascii,
        "indent": indent,
        "separators": separators,
        "sort_keys": sort_keys,
    }
    _check_json_bound(value, kwargs)
    return json.dumps(value, **kwargs)


# The costs of the formatting filters (see costs.py and the note in filters.py).
SERIAL_FILTER_COSTS: dict[str, Cost] = {
    "e": ESCAPE,
    "escape": ESCAPE,
    "filesizeformat": SCAN,
    "forceescape": ESCAPE,
    "pprint": PPRINT,
    "safe": TEXT,
    "tojson": guarded(PRINT, "indent times lines: within max_string"),
    "urlencode": COMPARE,
    "xmlattr": COMPARE,
}
