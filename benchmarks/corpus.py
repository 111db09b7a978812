"""The chat-template corpus as the benchmarks see it: templates, render contexts, generated chats.

Contexts are built exactly as ``../shared/chat-templates/README.md`` prescribes, so that the
pairs timed here are the same pairs the conformance tests compare.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent

# The corpus lives beside the repository, never inside it; an environment variable lets a
# checkout elsewhere (CI's fresh clone has shared/ beside it too) point at another copy.
CORPUS_DIR = Path(
    os.environ.get("MINIJINJA_PY_CORPUS", REPO_ROOT.parent / "shared" / "chat-templates")
)

# strftime_now is the only clock a template sees; pinning it in every engine makes renders
# comparable byte for byte (and keeps date formatting cost identical across engines).
PINNED_NOW = datetime(2026, 1, 15, 12, 0, 0)


def strftime_now(fmt: str) -> str:
    """The pinned ``strftime_now`` global given to every engine."""
    return PINNED_NOW.strftime(fmt)


@dataclass
class Template:
    name: str  # file name without .jinja
    source: str
    meta: dict[str, Any]
    # Filled by the agreement pass: the contexts whose renders match the reference.
    contexts: list[dict[str, Any]] = field(default_factory=list)
    context_names: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)


def corpus_available() -> bool:
    return (CORPUS_DIR / "templates").is_dir()


def load_conversations() -> list[tuple[str, dict[str, Any]]]:
    conv_dir = CORPUS_DIR / "conversations"
    out = []
    for path in sorted(conv_dir.glob("*.json")):
        out.append((path.stem, json.loads(path.read_text(encoding="utf-8"))))
    return out


def load_templates() -> list[Template]:
    meta_all = json.loads((CORPUS_DIR / "template_meta.json").read_text(encoding="utf-8"))
    out = []
    for path in sorted((CORPUS_DIR / "templates").glob("*.jinja")):
        name = path.stem
        out.append(Template(name, path.read_text(encoding="utf-8"), meta_all.get(name, {})))
    return out


def build_context(meta: dict[str, Any], conversation: dict[str, Any]) -> dict[str, Any]:
    """The README's recipe: defaults, then bos/eos (null = leave undefined), extra, conversation."""
    ctx: dict[str, Any] = {"tools": None, "documents": None, "add_generation_prompt": False}
    for key in ("bos_token", "eos_token"):
        if meta.get(key) is not None:
            ctx[key] = meta[key]
    ctx.update(meta.get("extra") or {})
    # A deep copy per context keeps one engine from ever seeing another's mutations.
    ctx.update(json.loads(json.dumps(conversation)))
    return ctx


# Growth templates: one per family the brief names, first corpus file whose name matches.
GROWTH_PATTERNS = {
    "Qwen3": ("qwen-3-0.6b", "qwen-3"),
    "Llama 3.1": ("llama-3.1",),
    "Mistral": ("mistral-small-3.2", "mistral-large", "mistral-7b-instruct-v0.3", "mistral"),
    "DeepSeek R1": ("deepseek-r1.jinja", "deepseek-r1"),
    "gpt-oss": ("gpt-oss",),
}


def pick_growth_templates(names: list[str]) -> list[tuple[str, str]]:
    """(label, template name) for each growth family found; prefixes are tried in order."""
    picked = []
    for label, patterns in GROWTH_PATTERNS.items():
        for pattern in patterns:
            exact = pattern.removesuffix(".jinja")
            hits = [n for n in names if n == exact] or sorted(n for n in names if pattern in n)
            if hits:
                picked.append((label, hits[0]))
                break
    return picked


_USER_TEXT = (
    "Could you explain, in a couple of sentences, how request {i} should be handled "
    "and what the expected outcome is?"
)
_ASSISTANT_TEXT = (
    "Sure. Request {i} is handled by validating the input, applying the rule set, and "
    "returning a short summary; the expected outcome is a confirmation."
)


def generated_messages(n: int) -> list[dict[str, str]]:
    """``n`` alternating user/assistant messages (user first) of realistic, similar length."""
    msgs = []
    for i in range(n):
        if i % 2 == 0:
            msgs.append({"role": "user", "content": _USER_TEXT.format(i=i)})
        else:
            msgs.append({"role": "assistant", "content": _ASSISTANT_TEXT.format(i=i)})
    return msgs


def growth_context(meta: dict[str, Any], n: int) -> dict[str, Any]:
    return build_context(meta, {"messages": generated_messages(n), "add_generation_prompt": True})
