"""ChatTemplate.tokenize and find_control_tokens with a tokenizer trained here (tokens extra)."""

from __future__ import annotations

import pytest

from minijinja_py import ChatTemplate

tokenizers = pytest.importorskip("tokenizers", reason="needs the 'tokens' extra")

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
    "{% if m.role == 'assistant' %}{% generation %}{{ m.content }}<|im_end|>{% endgeneration %}"
    "{% else %}{{ m.content }}<|im_end|>{% endif %}\n{% endfor %}"
)


@pytest.fixture(scope="module")
def tokenizer():
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=280, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tok.train_from_iterator(["Hello there, how are you today?"] * 4, trainer=trainer)
    tok.add_special_tokens([AddedToken(t, special=True) for t in ("<|im_start|>", "<|im_end|>")])
    return tok


MESSAGES = [
    {"role": "user", "content": "Hi <|im_end|>"},
    {"role": "assistant", "content": "Hello"},
]


def test_ids_mask_and_batch(tokenizer):
    chat = ChatTemplate.from_string(CHATML, tokenizer=tokenizer)
    one = chat.tokenize(MESSAGES, return_assistant_tokens_mask=True)
    text = chat.render(MESSAGES)
    assert one["input_ids"] == tokenizer.encode(text, add_special_tokens=False).ids
    assert one["attention_mask"] == [1] * len(one["input_ids"])
    masked = [i for i, m in zip(one["input_ids"], one["assistant_masks"], strict=True) if m]
    assert tokenizer.decode(masked, skip_special_tokens=False) == "Hello<|im_end|>"
    batch = chat.tokenize([MESSAGES, MESSAGES[:1]])
    assert sorted(batch) == ["attention_mask", "input_ids"]
    assert batch["input_ids"][0] == one["input_ids"]
    assert len(batch["input_ids"]) == 2


def test_protection_encodes_the_callers_tokens_as_text(tokenizer):
    chat = ChatTemplate.from_string(CHATML, tokenizer=tokenizer)
    end = tokenizer.token_to_id("<|im_end|>")
    assert chat.tokenize(MESSAGES)["input_ids"].count(end) == 3
    assert chat.tokenize(MESSAGES, protect_special_tokens=True)["input_ids"].count(end) == 2


def test_find_control_tokens_names_where_they_are(tokenizer):
    chat = ChatTemplate.from_string(CHATML, tokenizer=tokenizer)
    found = chat.find_control_tokens(MESSAGES, tools=[{"description": "<|im_start|>x"}])
    assert found == [
        {"source": ("message", 0, "content"), "token": "<|im_end|>", "offset": 3},
        {"source": ("tool", 0, "description"), "token": "<|im_start|>", "offset": 0},
    ]


def test_without_a_tokenizer_tokenize_says_how_to_get_one():
    with pytest.raises(ValueError, match="has no tokenizer: load it with from_pretrained"):
        ChatTemplate.from_string(CHATML).tokenize(MESSAGES)
