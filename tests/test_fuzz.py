"""Fuzzing: whatever text arrives as a template, and however it renders, only TemplateError
subclasses come out, quickly.  Random bytes, random token soups, and mutations of the real
chat templates (from ../shared/chat-templates or MINIJINJA_PY_CORPUS; skipped when absent)."""

from __future__ import annotations

import signal
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import minijinja_py as mj
from minijinja_py import Limits

# (appended: the compiled build's suite imports minijinja_py from where it is installed)
sys.path.append(str(Path(__file__).resolve().parents[1]))
from conformance.corpus import corpus_dir  # noqa: E402

CORPUS = corpus_dir() / "templates"
# Small limits keep every example fast; the point is the kind of error, not the size.
LIMITS = Limits(max_steps=20_000, max_string=200_000, max_items=20_000, max_output=500_000)
EXAMPLE_SECONDS = 5  # a hang, not a slow example: most take a millisecond

FUZZ = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    derandomize=True,
)

CONTEXT = {
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi <there> & 'you'"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}],
        },
        {"role": "tool", "content": "42"},
        {"role": "user", "content": [{"type": "text", "text": "parts"}]},
    ],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    "add_generation_prompt": True,
    "bos_token": "<s>",
    "eos_token": "</s>",
}


@contextmanager
def no_hang(seconds: int = EXAMPLE_SECONDS):
    def fail(signum, frame):
        raise AssertionError(f"the example ran for more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def only_template_errors(source: str) -> None:
    """Compile and render ``source`` in both presets; anything but a TemplateError fails."""
    for env in (mj.chat_environment(limits=LIMITS), mj.Environment(limits=LIMITS)):
        with no_hang():
            try:
                template = env.from_string(source)
            except mj.TemplateError:
                continue
            try:
                template.render(CONTEXT)
            except mj.TemplateError:
                pass


@FUZZ
@given(st.binary(max_size=300))
def test_random_bytes(data):
    only_template_errors(data.decode("utf-8", errors="replace"))


TOKENS = [
    "{{",
    "}}",
    "{%",
    "%}",
    "{#",
    "#}",
    "{%-",
    "-%}",
    "{{-",
    "-}}",
    "+%}",
    "{%+",
    "if",
    "elif",
    "else",
    "endif",
    "for",
    "in",
    "endfor",
    "recursive",
    "loop",
    "loop.index",
    "set",
    "endset",
    "macro",
    "endmacro",
    "call",
    "endcall",
    "caller",
    "filter",
    "endfilter",
    "with",
    "endwith",
    "break",
    "continue",
    "generation",
    "endgeneration",
    "raw",
    "endraw",
    "not",
    "and",
    "or",
    "is",
    "defined",
    "none",
    "true",
    "false",
    "None",
    "namespace",
    "messages",
    "message",
    "x",
    "ns",
    "ns.x",
    "tools",
    "range",
    "lipsum",
    "dict",
    "cycler",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    ".",
    "|",
    "~",
    "+",
    "-",
    "*",
    "**",
    "/",
    "//",
    "%",
    "==",
    "!=",
    "<",
    ">",
    "<=",
    ">=",
    "=",
    "'a'",
    '"b"',
    "0",
    "1",
    "-1",
    "10**10",
    "2.5",
    "upper",
    "tojson",
    "join",
    "map",
    "select",
    "attr",
    "format",
    "length",
    "list",
    "sort",
    "__class__",
    "_x",
    "append",
    "pop",
    "items",
    "keys",
    "'{0.__class__}'",
    "raise_exception",
    " ",
    "\n",
    "text",
    "<|im_start|>",
]


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=40))
def test_token_soup(tokens):
    only_template_errors(" ".join(tokens))


@FUZZ
@given(st.lists(st.sampled_from(TOKENS), max_size=40))
def test_token_soup_inside_tags(tokens):
    only_template_errors(
        "{{ " + " ".join(tokens) + " }}{% if " + " ".join(reversed(tokens)) + " %}a{% endif %}"
    )


def _corpus_sources() -> list[str]:
    if not CORPUS.is_dir():
        return []
    return [path.read_text(encoding="utf-8") for path in sorted(CORPUS.glob("*.jinja"))]


SOURCES = _corpus_sources()


@st.composite
def mutated_template(draw):
    source = draw(st.sampled_from(SOURCES))
    for _ in range(draw(st.integers(1, 4))):
        if not source:
            break
        start = draw(st.integers(0, len(source) - 1))
        end = min(len(source), start + draw(st.integers(0, 40)))
        action = draw(st.sampled_from(["delete", "duplicate", "insert", "replace", "swap"]))
        if action == "delete":
            source = source[:start] + source[end:]
        elif action == "duplicate":
            source = source[:end] + source[start:end] + source[end:]
        elif action == "insert":
            source = source[:start] + draw(st.sampled_from(TOKENS)) + source[start:]
        elif action == "replace":
            source = source[:start] + draw(st.sampled_from(TOKENS)) + source[end:]
        else:
            other = draw(st.integers(0, len(source) - 1))
            source = source[:other] + source[start:end] + source[other:]
    return source


@pytest.mark.skipif(not SOURCES, reason=f"chat-template corpus not found at {CORPUS}")
@FUZZ
@given(mutated_template())
def test_mutated_corpus_templates(source):
    only_template_errors(source)
