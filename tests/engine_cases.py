"""Shared helpers of the engine unit tests: both configurations of our engine and of Jinja2 3.1.6.

Each test table holds cases ``(template, context, expected)`` whose expected value was obtained by
running Jinja2 3.1.6 while writing the test and is hard-coded. ``expected`` is either the exact
output text or an :class:`Err` (error class name and exact message). Where the two configurations
differ (``chat`` has ``trim_blocks``/``lstrip_blocks`` on), ``expected`` is a dict keyed by
configuration; a configuration missing from the dict is not checked.

``check`` renders with our engine and asserts the expected value; with
``MINIJINJA_TESTS_REFERENCE=1`` it also renders with Jinja2 and asserts Jinja2 agrees with the
hard-coded value (Jinja2 is a test dependency), so a wrong table entry cannot pass silently.

Configurations:

``plain``
    ``Environment()`` vs ``jinja2.sandbox.ImmutableSandboxedEnvironment()`` (our engine is always
    sandboxed; with no unsafe access in these cases a plain Jinja2 environment renders the same).
``chat``
    ``chat_environment()`` vs Jinja2 configured as transformers does (``trim_blocks``,
    ``lstrip_blocks``, ``loopcontrols``, a ``generation`` tag, json.dumps ``tojson``,
    ``raise_exception``, ``strftime_now``, and transformers 5.23's ``dict``/``namespace``
    replacements).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import jinja2
import jinja2.ext
import jinja2.nodes
import jinja2.utils
from jinja2.sandbox import ImmutableSandboxedEnvironment

import minijinja_py
from conformance.reference import GenerationTag, pinned_strftime_now

CONFIGS = ("plain", "chat")

#: Also render every case with Jinja2 and assert it still gives the hard-coded value. Off by
#: default to keep the suite fast (Jinja2 compiling each template costs more than our whole
#: check); ``MINIJINJA_TESTS_REFERENCE=1 python -m pytest tests`` turns it on.
CHECK_REFERENCE = os.environ.get("MINIJINJA_TESTS_REFERENCE", "0") == "1"


@dataclass(frozen=True)
class Err:
    """An expected failure: our error class name and the exact message."""

    cls: str
    message: str


@dataclass(frozen=True)
class Ours:
    """The expectation of a known, deliberate difference from Jinja2 (the sandbox's allow-list of
    methods): our value is asserted and Jinja2 is not consulted."""

    value: Any


# Jinja2 lets some Python exceptions escape; ours arrive as these TemplateError subclasses.
_PY_TO_OURS = {
    "TypeError": "TemplateRuntimeError",
    "ValueError": "TemplateRuntimeError",
    "ZeroDivisionError": "TemplateRuntimeError",
    "OverflowError": "TemplateRuntimeError",
    "AttributeError": "TemplateRuntimeError",
    "KeyError": "TemplateRuntimeError",
    "IndexError": "TemplateRuntimeError",
    "AssertionError": "TemplateRuntimeError",
    "RuntimeError": "TemplateRuntimeError",
    "TemplateAssertionError": "TemplateSyntaxError",
    "SyntaxError": "TemplateSyntaxError",
}


# Named and shaped exactly as transformers' own helpers (argument errors name the function).
def raise_exception(message: Any) -> None:
    raise jinja2.TemplateError(message)


def tojson(x: Any, ensure_ascii=False, indent=None, separators=None, sort_keys=False) -> str:
    return json.dumps(
        x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


class _RefDict:
    """transformers 5.23's ``dict`` global: builds dicts (``dict(...)``, ``dict.fromkeys(...)``)
    and exposes nothing of the ``dict`` type itself."""

    def __call__(self, *args: Any, **kwargs: Any) -> dict:
        return dict(*args, **kwargs)

    def fromkeys(self, *args: Any, **kwargs: Any) -> dict:
        return dict.fromkeys(*args, **kwargs)


class _RefNamespace(jinja2.utils.Namespace):
    """transformers 5.23's ``namespace``: refuses attribute names starting with ``_``, both when
    built and when assigned (``{% set ns._x = 1 %}``)."""

    def __init__(*args: Any, **kwargs: Any) -> None:  # noqa: N805 - Jinja's signature trick
        self, args = args[0], args[1:]
        attrs = dict(*args, **kwargs)
        for name in attrs:
            _RefNamespace._refuse(name)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name: str, value: Any) -> None:
        _RefNamespace._refuse(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)

    @staticmethod
    def _refuse(name: Any) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise jinja2.exceptions.SecurityError(
                "Chat templates cannot store underscore-prefixed attributes on a namespace, "
                f"but got {name!r}. Please rename the attribute."
            )


_REF_UNDEFINED = {
    minijinja_py.Undefined: jinja2.Undefined,
    minijinja_py.StrictUndefined: jinja2.StrictUndefined,
    minijinja_py.ChainableUndefined: jinja2.ChainableUndefined,
}


def reference(config: str, **options: Any) -> jinja2.Environment:
    """Jinja2 in the given configuration; ``options`` use our Undefined classes."""
    if config == "chat":
        env = ImmutableSandboxedEnvironment(
            trim_blocks=True,
            lstrip_blocks=True,
            extensions=[GenerationTag, jinja2.ext.loopcontrols],
        )
        env.filters["tojson"] = tojson
        env.globals["raise_exception"] = raise_exception
        env.globals["strftime_now"] = pinned_strftime_now
        env.globals["dict"] = _RefDict()
        env.globals["namespace"] = _RefNamespace
        return env
    options = dict(options)
    if "undefined" in options:
        options["undefined"] = _REF_UNDEFINED[options["undefined"]]
    return ImmutableSandboxedEnvironment(**options)


def ours(config: str, **options: Any) -> minijinja_py.Environment:
    if config == "chat":
        env = minijinja_py.chat_environment()
        env.globals["strftime_now"] = pinned_strftime_now
        return env
    return minijinja_py.Environment(**options)


def outcome(env: Any, source: str, context: dict | None) -> str | Err:
    """The text rendered, or an Err; Python exceptions of Jinja2 are mapped to our classes."""
    try:
        return env.from_string(source).render(context or {})
    except Exception as error:  # noqa: BLE001 - classifying failures is the point
        name = type(error).__name__
        name = _PY_TO_OURS.get(name, name)
        if isinstance(error, jinja2.TemplateError):
            return Err(name, error.message)
        if isinstance(error, SyntaxError):  # Python's compiler on Jinja2's generated code
            return Err(name, error.msg)
        return Err(name, str(error))


def ours_outcome(env: minijinja_py.Environment, source: str, context: dict | None) -> str | Err:
    """Like :func:`outcome`, but anything that is not a TemplateError is a failed test."""
    try:
        return env.from_string(source).render(context or {})
    except minijinja_py.TemplateError as error:
        return Err(type(error).__name__, error.message)


def agrees(reference_outcome: Any, want: Any) -> bool:
    """Jinja2's outcome matches the table; where Jinja2 raises a generic runtime error (often a
    Python exception) ours may raise a more specific TemplateRuntimeError subclass (LimitError,
    SecurityError, ...) with the same message."""
    if reference_outcome == want:
        return True
    if not (isinstance(reference_outcome, Err) and isinstance(want, Err)):
        return False
    ours_class = getattr(minijinja_py, want.cls, None)
    return (
        reference_outcome.cls == "TemplateRuntimeError"
        and isinstance(ours_class, type)
        and issubclass(ours_class, minijinja_py.TemplateRuntimeError)
        and reference_outcome.message == want.message
    )


def expected_for(expected: Any, config: str) -> Any:
    if isinstance(expected, dict):
        return expected.get(config, _SKIP)
    return expected


_SKIP = object()


def check(
    configs: str | tuple[str, ...],
    source: str,
    context: dict | None,
    expected: Any,
    check_reference: bool = CHECK_REFERENCE,
    **options: Any,
) -> None:
    """Assert our engine (and Jinja2) give ``expected`` for ``source`` in each configuration."""
    for config in (configs,) if isinstance(configs, str) else configs:
        want = expected_for(expected, config)
        if want is _SKIP:
            continue
        if isinstance(want, Ours):
            want = want.value
        elif check_reference:
            got = outcome(reference(config, **options), source, context)
            assert agrees(got, want), f"Jinja2 ({config}) differs from the table"
        assert ours_outcome(ours(config, **options), source, context) == want, config


def python_message(action: Any) -> str:
    """What the running Python says when ``action()`` fails: the expectation wherever Jinja2
    passes Python's own wording on, which changes between Python versions."""
    try:
        action()
    except Exception as error:  # noqa: BLE001 - the message is the point
        return str(error)
    raise AssertionError("the action did not fail")


def case_id(case: tuple) -> str:
    text = case[0] if isinstance(case[0], str) else repr(case[0])
    return text[:60]


def finding(number: str) -> Any:
    """The strict xfail mark of a disagreement recorded in tests/FINDINGS.md."""
    import pytest

    return pytest.mark.xfail(strict=True, reason=f"{number} in tests/FINDINGS.md")


def params(cases: list[tuple], configs: tuple[str, ...] = CONFIGS) -> list[Any]:
    """pytest params ``(configs, source, context, expected)``, one per case, id the template.

    A case may have a 4th element naming a finding (``"F3"``): a strict xfail. When only some
    configurations disagree it is a dict of findings keyed by configuration, and the case is split
    into one param per configuration so that the others are still checked.
    """
    import pytest

    out = []
    for case in cases:
        source, context, expected = case[:3]
        known = case[3] if len(case) > 3 else None
        wanted = tuple(c for c in configs if expected_for(expected, c) is not _SKIP)
        if isinstance(known, dict):
            for config in wanted:
                marks = (finding(known[config]),) if config in known else ()
                out.append(
                    pytest.param(
                        config, source, context, expected, id=f"{config}-{case_id(case)}",
                        marks=marks,
                    )
                )
            continue
        marks = (finding(known),) if known else ()
        out.append(pytest.param(wanted, source, context, expected, id=case_id(case), marks=marks))
    return out


def suggest(source: str, context: dict | None = None, configs=CONFIGS, **options: Any) -> Any:
    """The expected value Jinja2 gives for a new table row (one value, or a dict per config).

    ``cd tests && python -c "from engine_cases import suggest; print(repr(suggest('{{ 1/2 }}')))"``
    """
    found = {config: outcome(reference(config, **options), source, context) for config in configs}
    values = list(found.values())
    if tuple(configs) == CONFIGS and all(value == values[0] for value in values):
        return values[0]
    return found
