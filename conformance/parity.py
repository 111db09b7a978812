"""ChatTemplate against transformers' apply_chat_template itself, on model folders built offline.

For every corpus template a model folder is built (:mod:`conformance.models`), loaded once by
``AutoTokenizer.from_pretrained`` and once by ``ChatTemplate.from_pretrained``, and every corpus
conversation is rendered by both, as it is and in dataset-shaped variants (:data:`VARIANTS`).
A pair agrees when both texts are identical or both sides raise.  Both clocks are pinned.

``python -m conformance.parity`` prints the agreement figures per variant.
"""

from __future__ import annotations

import atexit
import copy
import datetime
import json
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from .corpus import _conversation, _meta, conversation_names, template_names, template_source
from .models import build_model_folder

PINNED = datetime.datetime(2026, 1, 15, 12, 0, 0)
_RENDER_OPTIONS = ("tools", "documents", "add_generation_prompt")


# -- dataset-shaped variants of a conversation --------------------------------------------------


def _arrow_fill(rows: list[Any]) -> list[Any]:
    # Arrow and Parquet give every row of a column every field of its struct: a field a row
    # lacks comes back as None, at every level of nesting.
    if not rows or not all(isinstance(row, dict) for row in rows):
        return rows
    keys: dict[str, None] = {}
    for row in rows:
        keys.update(dict.fromkeys(row))
    filled = [{key: row.get(key) for key in keys} for row in rows]
    for key in keys:
        column = [row[key] for row in filled if row[key] is not None]
        if column and all(isinstance(value, dict) for value in column):
            nested = _arrow_fill(column)
            values = iter(nested)
            for row in filled:
                if row[key] is not None:
                    row[key] = next(values)
        elif column and all(isinstance(value, list) for value in column):
            flat = [item for value in column for item in value]
            nested = _arrow_fill(flat)
            values = iter(nested)
            for row in filled:
                if row[key] is not None:
                    row[key] = [next(values) for _ in row[key]]
    return filled


def _as_arrow(messages: list[Any], options: dict[str, Any]) -> list[Any]:
    return _arrow_fill(messages)


def _with_reasoning(messages: list[Any], options: dict[str, Any]) -> list[Any]:
    out = []
    for message in messages:
        message = dict(message)
        if "reasoning_content" in message:
            message["reasoning"] = message.pop("reasoning_content")
        elif message.get("role") == "assistant":
            message["reasoning"] = "Let me think this over."
        out.append(message)
    return out


def _as_numpy(messages: list[Any], options: dict[str, Any]) -> list[Any]:
    import numpy as np

    def convert(value: Any) -> Any:
        if isinstance(value, bool):
            return np.bool_(value)
        if isinstance(value, int):
            return np.int64(value)
        if isinstance(value, float):
            return np.float32(value) if float(np.float32(value)) == value else np.float64(value)
        if isinstance(value, str):
            return np.str_(value)
        if isinstance(value, dict):
            return {key: convert(item) for key, item in value.items()}
        if isinstance(value, list):
            return [convert(item) for item in value]
        return value

    out = [convert(message) for message in messages]
    for message in out:
        if message.get("role") == "user":
            message["pixel_values"] = np.zeros((2, 2), dtype=np.float32)
            message["seen"] = np.bool_(False)
    return out


def _as_parts(messages: list[Any], options: dict[str, Any]) -> list[Any]:
    out = []
    for message in messages:
        message = dict(message)
        if isinstance(message.get("content"), str):
            message["content"] = [{"type": "text", "text": message["content"]}]
        out.append(message)
    return out


def _map_arguments(messages: list[Any], convert: Callable[[Any], Any]) -> list[Any]:
    out = copy.deepcopy(messages)
    for message in out:
        for call in message.get("tool_calls") or []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and "arguments" in function:
                function["arguments"] = convert(function["arguments"])
    return out


def _json_arguments(messages: list[Any], options: dict[str, Any]) -> list[Any]:
    return _map_arguments(messages, lambda a: a if isinstance(a, str) else json.dumps(a))


def _dict_arguments(messages: list[Any], options: dict[str, Any]) -> list[Any]:
    return _map_arguments(messages, lambda a: json.loads(a) if isinstance(a, str) else a)


def _continue_final(messages: list[Any], options: dict[str, Any]) -> list[Any]:
    options["add_generation_prompt"] = False
    options["continue_final_message"] = True
    return messages


def _generation_prompt(messages: list[Any], options: dict[str, Any]) -> list[Any]:
    options["add_generation_prompt"] = not options.get("add_generation_prompt", False)
    return messages


VARIANTS: dict[str, Callable[[list[Any], dict[str, Any]], list[Any]]] = {
    "corpus": lambda messages, options: messages,
    "none_filled": _as_arrow,
    "reasoning": _with_reasoning,
    "numpy": _as_numpy,
    "content_parts": _as_parts,
    "arguments_as_json": _json_arguments,
    "arguments_as_dicts": _dict_arguments,
    "continue_final_message": _continue_final,
    "add_generation_prompt": _generation_prompt,
}


def cases(template: str) -> Iterator[tuple[str, str, list[Any], dict[str, Any]]]:
    """(variant, conversation, messages, options) for every pair of ``template``."""
    extra = _meta().get(template, {}).get("extra") or {}
    for conversation in conversation_names():
        for variant, make in VARIANTS.items():
            data = copy.deepcopy(_conversation(conversation))
            messages = data.pop("messages")
            options = {**copy.deepcopy(extra), **data}
            messages = make(messages, options)
            yield variant, conversation, messages, options


# -- the two sides ------------------------------------------------------------------------------


def special_tokens(template: str) -> dict[str, str]:
    meta = _meta().get(template, {})
    return {k: meta[k] for k in ("bos_token", "eos_token") if meta.get(k) is not None}


@cache
def _folders() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="minijinja-parity-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


@cache
def model_folder(template: str) -> Path:
    return build_model_folder(
        _folders() / template, template_source(template), special_tokens(template)
    )


@cache
def reference_tokenizer(template: str) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(model_folder(template)))


@cache
def our_template(template: str) -> Any:
    from minijinja_py import ChatTemplate

    return ChatTemplate.from_pretrained(model_folder(template), now=PINNED)


Outcome = tuple[str, str]


def _outcome(call: Callable[[], Any]) -> Outcome:
    try:
        return ("ok", call())
    except Exception as error:  # both sides: any failure is "raised"
        return ("raised", type(error).__name__)


class _PinnedClock(datetime.datetime):
    @classmethod
    def now(cls, tz: Any = None) -> Any:
        return cls(PINNED.year, PINNED.month, PINNED.day, PINNED.hour, tzinfo=tz)


@contextmanager
def pinned_reference_clock() -> Iterator[None]:
    from transformers.utils import chat_template_utils

    saved = chat_template_utils.datetime
    chat_template_utils.datetime = _PinnedClock  # transformers' strftime_now reads it
    try:
        yield
    finally:
        chat_template_utils.datetime = saved


def render_pair(template: str, messages: list[Any], options: dict[str, Any]) -> tuple[Outcome, Outcome]:
    """(transformers, ours) for one conversation; ``messages`` is not changed by either side."""
    tokenizer = reference_tokenizer(template)
    chat = our_template(template)
    expected = _outcome(
        lambda: tokenizer.apply_chat_template(copy.deepcopy(messages), tokenize=False, **options)
    )
    got = _outcome(lambda: chat.render(copy.deepcopy(messages), **options))
    return expected, got


def agrees(expected: Outcome, got: Outcome) -> bool:
    if expected[0] == "ok" or got[0] == "ok":
        return expected == got
    return True  # both raised


def compare_template(template: str) -> tuple[Counter[str], Counter[str], list[str]]:
    """Pairs per variant, agreeing pairs per variant, and a line per disagreement."""
    total: Counter[str] = Counter()
    agreed: Counter[str] = Counter()
    problems = []
    with pinned_reference_clock():
        for variant, conversation, messages, options in cases(template):
            expected, got = render_pair(template, messages, options)
            total[variant] += 1
            if agrees(expected, got):
                agreed[variant] += 1
                if expected[0] == "ok":
                    agreed[f"{variant}:text"] += 1
            else:
                problems.append(
                    f"{template}::{conversation}::{variant}: transformers {expected!r:.300} "
                    f"!= ours {got!r:.300}"
                )
    return total, agreed, problems


def main() -> None:
    total: Counter[str] = Counter()
    agreed: Counter[str] = Counter()
    problems: list[str] = []
    for template in template_names():
        t, a, p = compare_template(template)
        total.update(t)
        agreed.update(a)
        problems.extend(p)
    for line in problems:
        print(line)
    print(f"{'variant':24} {'agree':>6} / {'pairs':>6}  (same text; the rest both raise)")
    for variant in VARIANTS:
        print(
            f"{variant:24} {agreed[variant]:6} / {total[variant]:6}  ({agreed[variant + ':text']})"
        )
    all_agreed = sum(agreed[variant] for variant in VARIANTS)
    all_text = sum(agreed[variant + ":text"] for variant in VARIANTS)
    print(f"{'all':24} {all_agreed:6} / {sum(total.values()):6}  ({all_text})")


if __name__ == "__main__":
    main()
