"""Token-level parity: ChatTemplate.tokenize against transformers' apply_chat_template(...,
tokenize=True, return_dict=True, return_assistant_tokens_mask=...) on model folders built offline.

Each folder holds the small BPE of conformance/models.py with the template's own control tokens
(``<|im_start|>``, ``<end_of_turn>``, ``</s>``, ...) and its BOS/EOS added as special tokens.
"""

from __future__ import annotations

import re
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from .assistant_spans import SHIPPED_TAGGED, TAGGED_DIR
from .corpus import _conversation, _meta, conversation_names, template_source
from .models import build_model_folder

_CONTROL = re.compile(r"<\|[^|<>\s]{1,40}\|>|<｜[^｜]{1,40}｜>|<(?:start|end)_of_turn>|</s>|<s>")


def tagged_source(name: str) -> str:
    if name in SHIPPED_TAGGED or not (TAGGED_DIR / f"{name}.jinja").is_file():
        return template_source(name)
    return (TAGGED_DIR / f"{name}.jinja").read_text(encoding="utf-8")


@cache
def _root() -> Path:
    return Path(tempfile.mkdtemp(prefix="minijinja-py-tokens-"))


@cache
def model_folder(name: str, tagged: bool = True) -> Path:
    from tokenizers import AddedToken, Tokenizer

    source = tagged_source(name) if tagged else template_source(name)
    meta = _meta().get(name, {})
    special = {k: meta[k] for k in ("bos_token", "eos_token") if meta.get(k)}
    folder = build_model_folder(_root() / f"{name}-{int(tagged)}", source, special)
    controls = sorted(set(_CONTROL.findall(source)) - set(special.values()))
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in controls])
    (folder / "tokenizer.json").write_text(tokenizer.to_str(), encoding="utf-8")
    return folder


def conversation(name: str, conversation_name: str) -> tuple[list[Any], dict[str, Any]]:
    options = dict(_conversation(conversation_name))
    messages = options.pop("messages")
    options.pop("add_generation_prompt", None)
    options.update(_meta().get(name, {}).get("extra") or {})
    return messages, options


def _outcome(call: Any, *args: Any, **kwargs: Any) -> Any:
    try:
        return {key: list(value) for key, value in call(*args, **kwargs).items()}
    except Exception:  # both must fail (each engine with its own error class)
        return ("error",)


def compare(
    name: str, tagged: bool = True, mask: bool = True, **extra: Any
) -> tuple[int, int, list[str]]:
    """(pairs that render and agree, pairs where both fail, disagreeing conversations);
    ``extra`` options (``continue_final_message=True``) go to both calls."""
    from transformers import AutoTokenizer

    from minijinja_py import ChatTemplate

    from .parity import PINNED, pinned_reference_clock

    folder = model_folder(name, tagged)
    reference = AutoTokenizer.from_pretrained(str(folder))
    ours = ChatTemplate.from_pretrained(folder, now=PINNED)  # a template prints the seconds
    outcomes: dict[str, str] = {}
    with pinned_reference_clock():
        for conversation_name in conversation_names():
            messages, options = conversation(name, conversation_name)
            options.update(extra)
            expected = _outcome(
                reference.apply_chat_template,
                messages,
                tokenize=True,
                return_dict=True,
                return_assistant_tokens_mask=mask,
                **options,
            )
            got = _outcome(ours.tokenize, messages, return_assistant_tokens_mask=mask, **options)
            if expected != got:
                outcomes[conversation_name] = "differs"
            else:
                outcomes[conversation_name] = "failed" if isinstance(got, tuple) else "agreed"
    counts = list(outcomes.values())
    problems = [c for c, outcome in outcomes.items() if outcome == "differs"]
    return counts.count("agreed"), counts.count("failed"), problems
