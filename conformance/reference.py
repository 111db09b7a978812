"""The reference (Jinja2 3.1.6, configured like transformers) and the matching setup of our engine.

Two configurations are compared:

``chat``
    What ``transformers`` 5.x uses for ``apply_chat_template``: an
    ``ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)`` with the
    ``loopcontrols`` extension and a ``{% generation %}`` tag that renders its body, ``tojson``
    replaced by ``json.dumps`` (``ensure_ascii=False``), the globals ``raise_exception`` and
    ``strftime_now``, ``dict`` replaced by an object that only builds dicts (``dict(...)``,
    ``dict.fromkeys(...)``) and ``namespace`` by a subclass refusing attribute names starting with
    ``_`` at construction and assignment (as in transformers 5.23's ``chat_template_utils``). Ours: ``chat_environment()``.

``plain``
    A plain ``jinja2.Environment`` with the same options as ours (trim_blocks, lstrip_blocks,
    keep_trailing_newline, undefined). Ours: ``Environment(...)`` with the same options.

``strftime_now`` is pinned to :data:`FIXED_NOW` on both sides so renders are deterministic.
"""

from __future__ import annotations

import functools
import json
import re
import warnings
from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime
from typing import Any

import jinja2
import jinja2.ext
import jinja2.nodes
from jinja2.exceptions import SecurityError as JinjaSecurityError
from jinja2.exceptions import TemplateError as JinjaTemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.utils import Namespace as JinjaNamespace

# Jinja2 compiles templates to Python; constant slices such as ``none[1:]`` make Python warn.
warnings.filterwarnings("ignore", message=r".*perhaps you missed a comma", category=SyntaxWarning)

#: The instant ``strftime_now`` reports, in both engines.
FIXED_NOW = datetime(2026, 1, 15, 12, 34, 56)

PLAIN_OPTIONS = ("trim_blocks", "lstrip_blocks", "keep_trailing_newline")


def pinned_strftime_now(fmt: str) -> str:
    """``strftime_now(fmt)`` at :data:`FIXED_NOW`."""
    return FIXED_NOW.strftime(fmt)


# --------------------------------------------------------------------------- the reference


class GenerationTag(jinja2.ext.Extension):
    """``{% generation %}...{% endgeneration %}`` renders its body (transformers' tracker, idle)."""

    tags = {"generation"}

    def parse(self, parser: Any) -> jinja2.nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        call = self.call_method("_render_body")
        return jinja2.nodes.CallBlock(call, [], [], body).set_lineno(lineno)

    def _render_body(self, caller: Callable[[], str]) -> str:
        return caller()


def _raise_exception(message: Any) -> None:
    raise JinjaTemplateError(message)


def _tojson(x: Any, ensure_ascii=False, indent=None, separators=None, sort_keys=False) -> str:
    return json.dumps(
        x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


class _DictGlobal:
    """transformers 5's ``dict`` global: builds dicts (``dict(...)``, ``dict.fromkeys(...)``) and
    exposes nothing of the ``dict`` type itself."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict:
        return dict.fromkeys(*args, **kwargs)


class _ChatNamespace(JinjaNamespace):
    """transformers 5's ``namespace``: refuses attribute names starting with ``_``, both when
    built and when assigned (``{% set ns._x = 1 %}``)."""

    def __init__(*args: Any, **kwargs: Any) -> None:  # noqa: N805 - Jinja's signature trick
        self, args = args[0], args[1:]
        attrs = dict(*args, **kwargs)
        for name in attrs:
            _ChatNamespace._refuse(name)
        JinjaNamespace.__init__(self, attrs)

    def __setitem__(self, name: str, value: Any) -> None:
        _ChatNamespace._refuse(name)
        JinjaNamespace.__setitem__(self, name, value)

    @staticmethod
    def _refuse(name: Any) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise JinjaSecurityError(
                "Chat templates cannot store underscore-prefixed attributes on a namespace, "
                f"but got {name!r}. Please rename the attribute."
            )


def reference_chat_environment() -> jinja2.Environment:
    """Jinja2 configured as transformers configures it for ``apply_chat_template``."""
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[GenerationTag, jinja2.ext.loopcontrols],
    )
    env.filters["tojson"] = _tojson
    env.globals["raise_exception"] = _raise_exception
    env.globals["strftime_now"] = pinned_strftime_now
    env.globals["dict"] = _DictGlobal()
    env.globals["namespace"] = _ChatNamespace
    _read_opaque_neutrally(env)
    return env


_JINJA_UNDEFINED = {
    "Undefined": jinja2.Undefined,
    "StrictUndefined": jinja2.StrictUndefined,
    "ChainableUndefined": jinja2.ChainableUndefined,
}


def reference_plain_environment(
    trim_blocks: bool = False,
    lstrip_blocks: bool = False,
    keep_trailing_newline: bool = False,
    undefined: str = "Undefined",
) -> jinja2.Environment:
    """A plain ``jinja2.Environment`` with the given options (``undefined`` by class name)."""
    env = jinja2.Environment(
        trim_blocks=trim_blocks,
        lstrip_blocks=lstrip_blocks,
        keep_trailing_newline=keep_trailing_newline,
        undefined=_JINJA_UNDEFINED[undefined],
    )
    _read_opaque_neutrally(env)
    return env


# The filters that read their input as text.  Python's text of a function or an iterator holds
# its address, which `normalize` can take out of a printed result but not out of what a filter
# made of it (`(xs|reverse)|upper|length` counts the address's digits): here they read the
# neutral text that ours reads instead.
_TEXT_FILTERS = (
    "upper", "lower", "capitalize", "title", "trim", "replace", "truncate", "wordwrap",
    "center", "indent", "striptags", "wordcount", "string", "escape", "e", "forceescape",
    "urlize", "urlencode",
)  # fmt: skip


def _read_opaque_neutrally(env: jinja2.Environment) -> None:
    for name in _TEXT_FILTERS:
        env.filters[name] = _neutral_input(env.filters[name])


def _neutral_input(function: Callable[..., Any]) -> Callable[..., Any]:
    # (a filter that takes the environment or a context first takes its input second)
    at = 1 if hasattr(function, "jinja_pass_arg") else 0

    @functools.wraps(function)  # (keeps jinja_pass_arg, which Jinja2 reads)
    def filter_of_neutral_text(*args: Any, **kwargs: Any) -> Any:
        value = args[at] if len(args) > at else None
        if value is not None and not isinstance(value, (str, int, float, jinja2.Undefined)):
            text = str(value)
            neutral = normalize(text)
            if neutral != text:
                args = (*args[:at], neutral, *args[at + 1 :])
        return function(*args, **kwargs)

    return filter_of_neutral_text


def reference_environment(config: str, **options: Any) -> jinja2.Environment:
    """``config`` is ``"chat"`` (options ignored) or ``"plain"``."""
    if config == "chat":
        return reference_chat_environment()
    return reference_plain_environment(**options)


# --------------------------------------------------------------------------- our engine


def ours_chat_environment() -> Any:
    """Our ``chat_environment()`` with ``strftime_now`` pinned like the reference's."""
    import minijinja_py

    env = minijinja_py.chat_environment()
    env.globals["strftime_now"] = pinned_strftime_now
    return env


def ours_plain_environment(
    trim_blocks: bool = False,
    lstrip_blocks: bool = False,
    keep_trailing_newline: bool = False,
    undefined: str = "Undefined",
) -> Any:
    """Our ``Environment`` with the given options (``undefined`` by class name)."""
    import minijinja_py

    return minijinja_py.Environment(
        trim_blocks=trim_blocks,
        lstrip_blocks=lstrip_blocks,
        keep_trailing_newline=keep_trailing_newline,
        undefined=getattr(minijinja_py, undefined),
    )


def ours_environment(config: str, **options: Any) -> Any:
    if config == "chat":
        return ours_chat_environment()
    return ours_plain_environment(**options)


# --------------------------------------------------------------------------- outcomes

Outcome = tuple[str, str]


def outcome(render: Callable[[], str], *, ours: bool = False) -> Outcome:
    """Run ``render`` and classify what happened.

    Returns ``("ok", text)``, ``("raise_exception", message)`` when the template called
    ``raise_exception`` (the exception's class is exactly the engine's ``TemplateError``), or
    ``("error", class name)``. With ``ours=True`` an exception that is not one of our
    ``TemplateError`` family is a bug of ours: ``("crash", "ClassName: message")``.
    """
    try:
        text = render()
    except Exception as exc:  # noqa: BLE001 - classifying every failure is the point
        return classify_exception(exc, ours=ours)
    return ("ok", text)


def classify_exception(exc: BaseException, *, ours: bool = False) -> Outcome:
    if ours:
        import minijinja_py

        if not isinstance(exc, minijinja_py.TemplateError):
            return ("crash", f"{type(exc).__name__}: {exc}")
        if type(exc) is minijinja_py.TemplateError:
            return ("raise_exception", str(exc.message))
        return ("error", type(exc).__name__)
    if type(exc) is JinjaTemplateError:
        return ("raise_exception", str(exc.message))
    return ("error", type(exc).__name__)


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>")
# Python's text of a function, method, class or plain object, as Jinja2 prints it, and the
# neutral text ours prints instead (minijinja_py/sandbox/opaque.py: no addresses, no modules).
_NEUTRAL_FORMS = [
    (re.compile(r"<class '(?:[\w.]+\.)?(\w+)'>"), r"<class '\1'>"),
    (re.compile(r"<(?:[\w.]+\.)?(\w+) object>"), r"<\1 object>"),
    (re.compile(r"<built-in method (\w+) of (\w+) object>"), r"<method \1 of \2>"),
    (re.compile(r"<built-in function (\w+)>"), r"<function \1>"),
    (re.compile(r"<bound method (\w+)\.(\w+) of <[^<>]*>>"), r"<method \2 of \1>"),
    (re.compile(r"<(generator|coroutine|async_generator) object (\w+)>"), r"<\1 object \2>"),
]


def normalize(text: str) -> str:
    """Drop memory addresses (``<... object at 0x7f...>``), which differ run to run, and read
    Python's text of a function, method or class as the neutral text ours prints."""
    text = _ADDRESS.sub(">", text)
    for pattern, neutral in _NEUTRAL_FORMS:
        text = pattern.sub(neutral, text)
    return text


def agree(ref: Outcome, got: Outcome) -> bool:
    """Ours agrees with the reference: same text, or both fail (same message for raise_exception).

    Ours must never crash with a bare Python exception. Memory addresses are not compared.
    """
    if got[0] == "crash":
        return False
    if ref[0] == "ok" and got[0] == "ok":
        return normalize(ref[1]) == normalize(got[1])
    if ref[0] == "ok" or got[0] == "ok":
        return False
    if ref[0] == "raise_exception" or got[0] == "raise_exception":
        return ref == got
    return True


_ENVIRONMENTS: dict[tuple, Any] = {}
_TEMPLATES: OrderedDict[tuple, Any] = OrderedDict()
_TEMPLATE_CACHE_SIZE = 256


def _template(engine: str, config: str, source: str, options: dict[str, Any]) -> Any:
    """A compiled template, cached (LRU) with its environment; compile errors are raised."""
    env_key = (engine, config, tuple(sorted(options.items())))
    key = (*env_key, source)
    template = _TEMPLATES.get(key)
    if template is not None:
        _TEMPLATES.move_to_end(key)
        return template
    env = _ENVIRONMENTS.get(env_key)
    if env is None:
        make = reference_environment if engine == "reference" else ours_environment
        env = _ENVIRONMENTS[env_key] = make(config, **options)
    template = env.from_string(source)
    _TEMPLATES[key] = template
    if len(_TEMPLATES) > _TEMPLATE_CACHE_SIZE:
        _TEMPLATES.popitem(last=False)
    return template


def render_reference(config: str, source: str, context: dict, **options: Any) -> Outcome:
    """Compile (cached) and render with the reference; compile errors count as failures."""
    return outcome(lambda: _template("reference", config, source, options).render(context))


def render_ours(config: str, source: str, context: dict, **options: Any) -> Outcome:
    """Compile (cached) and render with our engine; compile errors count as failures."""
    return outcome(lambda: _template("ours", config, source, options).render(context), ours=True)


def engine_available() -> str | None:
    """``None`` when ``minijinja_py`` imports and renders; else why not (for skip messages)."""
    try:
        import minijinja_py

        minijinja_py.chat_environment().from_string("{{ 1 }}").render()
    except Exception as exc:  # noqa: BLE001
        return f"minijinja_py is not importable yet ({type(exc).__name__}: {exc})"
    return None
