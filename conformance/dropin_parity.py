"""ChatTemplate.apply_chat_template against transformers' tokenizer.apply_chat_template, call by
call, over a grid of options on model folders built offline (tokens_parity.py's folders, with a
pad token, a padding side and a model_max_length written into their tokenizer_config.json).

Each call's outcome is reduced to comparable data: the result's kind (text, list, dict, numpy
array with its dtype and shape) and values, or the exception's class and message.
"""

from __future__ import annotations

import itertools
import json
import shutil
from functools import cache
from pathlib import Path
from typing import Any

from .tokens_parity import _root, conversation, model_folder

# (folder variant): what tokenizer_config.json gains. "plain" has no pad token, so every padded
# call must fail the same way on both sides.
VARIANTS: dict[str, dict[str, Any]] = {
    "right": {"pad_token": "eos", "padding_side": "right"},
    "left": {"pad_token": "eos", "padding_side": "left", "model_max_length": 48},
    "plain": {},
    # "<think>" and "</think>" as added tokens that are not special (as Qwen 3 ships them), and
    # a conversation whose replies write them: sanitize_control_tokens wraps them before the
    # render, which changes what the template's split('</think>') sees.
    "thinking": {"pad_token": "eos", "padding_side": "right"},
}
# Added tokens, not special, that a variant's tokenizer gains.
ADDED: dict[str, list[str]] = {"thinking": ["<think>", "</think>"]}
# A variant's own conversations (else CONVERSATIONS').
THINKING = [
    {"role": "user", "content": "Is it cold? <think>"},
    {"role": "assistant", "content": "<think>\ncold\n</think>\n\nIt is cold."},
    {"role": "user", "content": "And </think> now?"},
    {"role": "assistant", "content": "<think>\n\n</think>\n\nStill cold."},
]

# The grid: every combination of these.
GRID: dict[str, list[Any]] = {
    "batched": [False, True],
    "tokenize": [True, False],
    "return_dict": [True, False],
    "padding": [False, True, "longest", "max_length"],
    "cut": [(False, None), (True, 12), (True, None), (False, 64)],
    "return_tensors": [None, "np"],
    "turn": ["plain", "generation_prompt", "continue"],
    "return_assistant_tokens_mask": [False, True],
    "sanitize_control_tokens": [False, True],
}

# Calls outside the grid: unknown strategies and tensor types, the tokenizer's own options.
EXTRA_CALLS: list[dict[str, Any]] = [
    {"padding": "bogus"},
    {"truncation": "bogus", "max_length": 8},
    {"return_tensors": "xx"},
    {"return_tensors": "pt"},
    {"return_tensors": "xx", "tokenize": False},
    {"padding": True, "tokenizer_kwargs": {"pad_to_multiple_of": 8}},
    {"padding": "max_length", "max_length": 30, "tokenizer_kwargs": {"padding_side": "left"}},
    {
        "padding": "max_length",
        "truncation": True,
        "max_length": 30,
        "tokenizer_kwargs": {"pad_to_multiple_of": 8},
    },
    {"tokenizer_kwargs": {"return_attention_mask": False}},
    {"tokenizer_kwargs": {"return_token_type_ids": True}, "return_tensors": "np"},
    {"truncation": "only_first", "max_length": 20, "return_assistant_tokens_mask": True},
    {"return_dict": False, "return_assistant_tokens_mask": True},
]

CONVERSATIONS = ("02_system_user_assistant_user", "03_multi_turn_no_gen_prompt")


def grid_calls() -> list[dict[str, Any]]:
    """Every combination of GRID, as the keyword arguments of one call (plus "batched")."""
    calls = []
    for values in itertools.product(*GRID.values()):
        point = dict(zip(GRID, values, strict=True))
        truncation, max_length = point.pop("cut")
        turn = point.pop("turn")
        point.update(
            truncation=truncation,
            max_length=max_length,
            add_generation_prompt=turn == "generation_prompt",
            continue_final_message=turn == "continue",
        )
        calls.append(point)
    return calls


@cache
def variant_folder(name: str, tagged: bool, variant: str) -> Path:
    """tokens_parity's model folder of ``name``, copied with the variant's tokenizer_config."""
    source = model_folder(name, tagged)
    folder = _root() / f"{source.name}-{variant}"
    if folder.exists():
        shutil.rmtree(folder)
    shutil.copytree(source, folder)
    config_path = folder / "tokenizer_config.json"
    config = json.loads(config_path.read_text(encoding="utf-8"))
    extra = dict(VARIANTS[variant])
    if extra.get("pad_token") == "eos":
        extra["pad_token"] = config["eos_token"]
    config.update(extra)
    config_path.write_text(json.dumps(config), encoding="utf-8")
    if variant in ADDED:
        from tokenizers import AddedToken, Tokenizer

        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.add_tokens([AddedToken(t, special=False, normalized=False) for t in ADDED[variant]])
        (folder / "tokenizer.json").write_text(tokenizer.to_str(), encoding="utf-8")
    return folder


def outcome(call: Any, *args: Any, **kwargs: Any) -> Any:
    """What a call gives, as comparable data."""
    try:
        return ("result", _data(call(*args, **kwargs)))
    except Exception as error:
        return ("error", type(error).__name__, str(error))


def _data(value: Any) -> Any:
    import numpy as np

    if isinstance(value, np.ndarray):
        if value.dtype == object:
            return ("ndarray", "object", value.shape, [_data(item) for item in value])
        return ("ndarray", str(value.dtype), value.shape, value.tolist())
    if hasattr(value, "keys") and not isinstance(value, (str, list)):
        return ("dict", {key: _data(value[key]) for key in sorted(value.keys())})
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_data(item) for item in value])
    return (type(value).__name__, value)


def compare(name: str, tagged: bool, variant: str) -> tuple[int, list[tuple[dict, Any, Any]]]:
    """(calls compared, the calls whose outcomes differ with both outcomes)."""
    from transformers import AutoTokenizer

    from minijinja_py import ChatTemplate

    from .parity import PINNED, pinned_reference_clock

    folder = variant_folder(name, tagged, variant)
    reference = AutoTokenizer.from_pretrained(str(folder))
    ours = ChatTemplate.from_pretrained(folder, now=PINNED)
    chats = [conversation(name, c) for c in CONVERSATIONS]
    if variant == "thinking":
        chats = [(THINKING[:2], chats[0][1]), (THINKING, chats[1][1])]
    options = chats[0][1]
    problems = []
    calls = [*grid_calls(), *({"batched": b, **extra} for extra in EXTRA_CALLS for b in (0, 1))]
    with pinned_reference_clock():
        for call in calls:
            kwargs = dict(call)
            batched = kwargs.pop("batched")
            messages = [m for m, _ in chats] if batched else chats[1][0]
            kwargs.update(options)
            expected = outcome(reference.apply_chat_template, messages, **kwargs)
            got = outcome(ours.apply_chat_template, messages, **kwargs)
            if expected != got:
                problems.append((call, expected, got))
    return len(calls), problems
