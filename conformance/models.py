"""Model folders built offline for the parity tests: a small BPE tokenizer plus a chat template.

``AutoTokenizer.from_pretrained`` needs a real tokenizer; one byte-level BPE is trained once per
session with the ``tokenizers`` library on a few sentences, then each folder gets a copy with the
template's own special tokens added, a ``tokenizer_config.json`` naming them and the template as
``chat_template.jinja``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

_TRAINING_TEXT = [
    "The quick brown fox jumps over the lazy dog.",
    "You are a helpful assistant. What is the weather in Paris today?",
    "def get_weather(location: str) -> dict: return {'temperature': 21}",
    "Bonjour, ça va ? 你好 — ünïcödé, emoji \U0001f600 and tabs\tand newlines\n",
]


@cache
def base_tokenizer_json() -> str:
    """The trained BPE as ``tokenizer.json`` text (trained once per process)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=300, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tokenizer.train_from_iterator(_TRAINING_TEXT * 4, trainer=trainer)
    return tokenizer.to_str()


def build_model_folder(
    folder: Path,
    template: str,
    special_tokens: dict[str, str],
    config_extra: dict[str, Any] | None = None,
) -> Path:
    """``folder`` filled as a model repository: tokenizer.json, tokenizer_config.json, template."""
    from tokenizers import AddedToken, Tokenizer

    folder.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer.from_str(base_tokenizer_json())
    tokens = sorted(set(special_tokens.values()))
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in tokens])
    (folder / "tokenizer.json").write_text(tokenizer.to_str(), encoding="utf-8")
    config: dict[str, Any] = {"tokenizer_class": "PreTrainedTokenizerFast", **special_tokens}
    config.update(config_extra or {})
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    (folder / "chat_template.jinja").write_text(template, encoding="utf-8", newline="")
    return folder
