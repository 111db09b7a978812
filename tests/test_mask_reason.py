"""Every mask says where it came from and why, in one line (issue 41)."""

from __future__ import annotations

import pytest

from minijinja_py import ChatTemplate
from minijinja_py.chat.spans.modes import mask_reason
from minijinja_py.chat.spans.probes import TurnTexts

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@pytest.mark.parametrize(
    ("source", "texts", "expected"),
    [
        (None, None, None),
        ("generation", None, "generation: the template's {% generation %} blocks"),
        ("tagged", None, "tagged: the hand-tagged copy of this template shipped with minijinja_py"),
        ("none", None, "none: no source gave spans; the mask is zeros"),
        (
            "inferred",
            TurnTexts("<|im_start|>assistant\n", "<|im_end|>"),
            "inferred: from the end of '<|im_start|>assistant\\n' through '<|im_end|>'",
        ),
        (
            "inferred",
            TurnTexts("\nFalcon:"),
            "inferred: from the end of '\\nFalcon:' through the turn's last character",
        ),
    ],
)
def test_mask_reason(source, texts, expected):
    assert mask_reason(source, texts) == expected


def test_tokenize_results_carry_the_reason():
    tokenizers = pytest.importorskip("tokenizers", reason="needs the tokens extra")
    tokenizer = tokenizers.Tokenizer(tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    chat = ChatTemplate.from_string(CHATML, tokenizer=tokenizer)
    conversation = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    one = chat.tokenize(conversation, return_assistant_tokens_mask=True)
    assert (one.mask_source, one.mask_reason) == (
        "inferred",
        "inferred: from the end of '<|im_start|>assistant\\n' through '<|im_end|>'",
    )
    batch = chat.tokenize([conversation], return_assistant_tokens_mask=True)
    assert batch.mask_reason == [one.mask_reason]
    assert chat.tokenize(conversation).mask_reason is None
