"""The real chat-template corpus: 150 templates x 18 conversations (see its README).

The corpus lives outside the repository, at ``../shared/chat-templates`` relative to the
repository root; the environment variable ``MINIJINJA_PY_CORPUS`` points elsewhere.
"""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from .reference import Outcome, ours_chat_environment, outcome, reference_chat_environment

REPO_ROOT = Path(__file__).resolve().parents[1]


def corpus_dir() -> Path:
    env = os.environ.get("MINIJINJA_PY_CORPUS")
    if env:
        return Path(env)
    return REPO_ROOT.parent / "shared" / "chat-templates"


def corpus_missing() -> str | None:
    """``None`` when the corpus is there; else a message saying where it was looked for."""
    root = corpus_dir()
    if not (root / "templates").is_dir() or not (root / "conversations").is_dir():
        return (
            f"chat-template corpus not found at {root} "
            "(set MINIJINJA_PY_CORPUS to the chat-templates directory)"
        )
    return None


@dataclass(frozen=True)
class Pair:
    template: str  # file name without .jinja
    conversation: str  # file name without .json

    @property
    def id(self) -> str:
        return f"{self.template}::{self.conversation}"


@cache
def template_names() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in (corpus_dir() / "templates").glob("*.jinja")))


@cache
def conversation_names() -> tuple[str, ...]:
    return tuple(sorted(p.stem for p in (corpus_dir() / "conversations").glob("*.json")))


def pairs() -> list[Pair]:
    if corpus_missing():
        return []
    return [Pair(t, c) for t in template_names() for c in conversation_names()]


@cache
def template_source(name: str) -> str:
    return (corpus_dir() / "templates" / f"{name}.jinja").read_text(encoding="utf-8")


@cache
def _meta() -> dict[str, Any]:
    return json.loads((corpus_dir() / "template_meta.json").read_text(encoding="utf-8"))


@cache
def _conversation(name: str) -> dict[str, Any]:
    path = corpus_dir() / "conversations" / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def context(pair: Pair) -> dict[str, Any]:
    """The render context of a pair, built as the corpus README says (a fresh deep copy)."""
    ctx: dict[str, Any] = {"tools": None, "documents": None, "add_generation_prompt": False}
    meta = _meta().get(pair.template, {})
    for token in ("bos_token", "eos_token"):
        if meta.get(token) is not None:
            ctx[token] = meta[token]
    ctx.update(meta.get("extra") or {})
    ctx.update(_conversation(pair.conversation))
    return copy.deepcopy(ctx)


# ------------------------------------------------------------------ rendering with caches

_REF_ENV = None
_OURS_ENV = None


@cache
def _reference_template(name: str) -> Any:
    global _REF_ENV
    if _REF_ENV is None:
        _REF_ENV = reference_chat_environment()
    return _REF_ENV.from_string(template_source(name))


@cache
def _ours_template(name: str) -> Any:
    global _OURS_ENV
    if _OURS_ENV is None:
        _OURS_ENV = ours_chat_environment()
    return _OURS_ENV.from_string(template_source(name))


@cache
def reference_outcome(pair: Pair) -> Outcome:
    """Jinja2's outcome for a pair (deterministic, so cached for the session)."""
    return outcome(lambda: _reference_template(pair.template).render(context(pair)))


def ours_outcome(pair: Pair) -> Outcome:
    return outcome(lambda: _ours_template(pair.template).render(context(pair)), ours=True)


# ------------------------------------------------------- real templates, generated conversations

_CONTENT = [
    "Hello!",
    "What is 2+2?",
    "  padded  ",
    "multi\nline\n\ntext",
    "naïve café 日本語 😀",
    "<think>hmm</think>The answer.",
    "quote \" and 'single' and \\ backslash",
    "",
    "{{ not a tag }}",
    "Tool result: 42",
]


def _content(ch) -> Any:
    from .strategies import _pick

    kind = ch.integer(0, 9)
    if kind == 0:
        parts = [{"type": "text", "text": _pick(ch, _CONTENT)}]
        if ch.integer(0, 1):
            parts.append({"type": "image"})
        return parts
    return _pick(ch, _CONTENT)


def _tool_call(ch, i: int) -> dict[str, Any]:
    from .strategies import _pick

    args: Any = {"city": _pick(ch, ["Paris", "東京", "O'Hare"]), "unit": "celsius"}
    if ch.integer(0, 1):
        args = json.dumps(args)
    call: dict[str, Any] = {
        "type": "function",
        "function": {"name": _pick(ch, ["get_weather", "search_web"]), "arguments": args},
    }
    if ch.integer(0, 2):
        call["id"] = f"call_{i}"
    return call


def make_conversation(ch) -> list[dict[str, Any]]:
    """A plausible conversation: optional system, user/assistant turns, tool calls and results;
    now and then a malformed one (templates' raise_exception paths)."""
    from .strategies import make_message

    if ch.integer(0, 9) == 0:
        return [make_message(ch) for _ in range(ch.integer(1, 4))]
    messages: list[dict[str, Any]] = []
    if ch.integer(0, 1):
        messages.append({"role": "system", "content": _content(ch)})
    for turn in range(ch.integer(1, 3)):
        messages.append({"role": "user", "content": _content(ch)})
        if ch.integer(0, 4) == 0 and turn > 0:
            break  # ends on a user message
        reply: dict[str, Any] = {"role": "assistant", "content": _content(ch)}
        if ch.integer(0, 3) == 0:
            reply["reasoning_content"] = "Let me think.\nStep 1."
        if ch.integer(0, 3) == 0:
            calls = [_tool_call(ch, i) for i in range(ch.integer(1, 2))]
            reply["tool_calls"] = calls
            if ch.integer(0, 1):
                reply["content"] = None
            messages.append(reply)
            for call in calls:
                result: dict[str, Any] = {"role": "tool", "content": '{"temp": 21}'}
                if "id" in call:
                    result["tool_call_id"] = call["id"]
                if ch.integer(0, 1):
                    result["name"] = call["function"]["name"]
                messages.append(result)
            messages.append({"role": "assistant", "content": "It is 21 degrees."})
        else:
            messages.append(reply)
    return messages


_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "City name"}},
                "required": ["city"],
            },
        },
    }
]


def build_corpus_case(ch):
    """A corpus template with a generated conversation (chat configuration)."""
    from .strategies import Case, _pick

    name = _pick(ch, template_names())
    ctx: dict[str, Any] = {
        "tools": None,
        "documents": None,
        "add_generation_prompt": bool(ch.integer(0, 1)),
    }
    meta = _meta().get(name, {})
    for token in ("bos_token", "eos_token"):
        if meta.get(token) is not None:
            ctx[token] = meta[token]
    ctx.update(copy.deepcopy(meta.get("extra") or {}))
    ctx["messages"] = make_conversation(ch)
    if ch.integer(0, 2) == 0:
        ctx["tools"] = copy.deepcopy(_TOOLS)
    if ch.integer(0, 4) == 0:
        ctx["documents"] = [{"title": "Doc", "text": "Some text."}]
    if ch.integer(0, 2) == 0:
        ctx["enable_thinking"] = bool(ch.integer(0, 1))
    features = frozenset({"mode:corpus", f"corpus:{meta.get('family', name)}"})
    return Case("chat", {}, template_source(name), ctx, features)


@st.composite
def corpus_cases(draw):
    from .strategies import HypothesisChooser

    return build_corpus_case(HypothesisChooser(draw))
