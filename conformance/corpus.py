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
