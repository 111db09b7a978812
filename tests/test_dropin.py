"""apply_chat_template (transformers' signature) and the sources of assistant masks, with a
tokenizer trained here (tokens extra).  Parity with transformers itself: conformance/
test_apply_chat_template.py."""

from __future__ import annotations

import json
import logging

import pytest

import minijinja_py
from minijinja_py import ChatTemplate
from minijinja_py.chat.spans.registry import normalised_hash, tagged_names, tagged_source

tokenizers = pytest.importorskip("tokenizers", reason="needs the 'tokens' extra")

TAGGED = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
    "{% if m.role == 'assistant' %}{% generation %}{{ m.content }}<|im_end|>{% endgeneration %}"
    "{% else %}{{ m.content }}<|im_end|>{% endif %}\n{% endfor %}"
)
UNTAGGED = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
# transformers' default ChatML template, which the hand-tag registry knows.
KNOWN = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content']"
    " + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}"
    "{{ '<|im_start|>assistant\n' }}{% endif %}"
)
MESSAGES = [
    {"role": "user", "content": "Hi"},
    {"role": "assistant", "content": "Hello there"},
]
OTHER = [{"role": "user", "content": "how are you today?"}]


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


def _masked_text(tokenizer, encoded):
    ids = [i for i, m in zip(encoded["input_ids"], encoded["assistant_masks"], strict=True) if m]
    return tokenizer.decode(ids, skip_special_tokens=False)


# --- render() and tokenize(): the tokenizer's options belong to apply_chat_template


@pytest.mark.parametrize(
    "option",
    [
        "tokenize",
        "return_dict",
        "return_tensors",
        "padding",
        "truncation",
        "max_length",
        "tokenizer_kwargs",
        "return_assistant_tokens_mask",
        "sanitize_control_tokens",
    ],
)
def test_render_refuses_the_tokenizers_options(option):
    chat = ChatTemplate.from_string(UNTAGGED)
    message = (
        f"render() renders text and does not take the tokenizer's option '{option}'; use "
        "apply_chat_template() (transformers' signature) or tokenize() for token ids"
    )
    with pytest.raises(TypeError) as caught:
        chat.render(MESSAGES, **{option: True})
    assert str(caught.value) == message
    with pytest.raises(TypeError, match="^render_many\\(\\) renders text"):
        chat.render_many([MESSAGES], **{option: True})


def test_tokenize_takes_continue_final_message_where_render_does(tokenizer):
    chat = ChatTemplate.from_string(UNTAGGED, tokenizer=tokenizer)
    cut = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello there"
    assert chat.render(MESSAGES, None, None, False, True) == cut
    assert chat.tokenize(MESSAGES, None, None, False, True) == chat.tokenize(
        MESSAGES, continue_final_message=True
    )


# --- the drop-in


def test_defaults_are_transformers_a_dict_of_lists(tokenizer):
    chat = ChatTemplate.from_string(TAGGED, tokenizer=tokenizer)
    got = chat.apply_chat_template(MESSAGES)
    ids = tokenizer.encode(chat.render(MESSAGES), add_special_tokens=False).ids
    assert got == {"input_ids": ids, "attention_mask": [1] * len(ids)}
    assert chat.apply_chat_template(MESSAGES, return_dict=False) == ids
    assert chat.apply_chat_template(MESSAGES, tokenize=False) == chat.render(MESSAGES)
    assert chat.apply_chat_template([MESSAGES, OTHER], tokenize=False) == [
        chat.render(MESSAGES),
        chat.render(OTHER),
    ]
    assert minijinja_py.apply_chat_template(chat, MESSAGES) == got


def test_generation_blocks_make_the_mask_and_say_so(tokenizer):
    chat = ChatTemplate.from_string(TAGGED, tokenizer=tokenizer)
    got = chat.apply_chat_template(MESSAGES, return_assistant_tokens_mask=True)
    assert _masked_text(tokenizer, got) == "Hello there<|im_end|>"
    assert got.mask_source == "generation"
    assert "mask_source" not in got  # (equal to transformers' dict in the default mode)
    asked = chat.apply_chat_template(MESSAGES, return_assistant_tokens_mask=True, mask="auto")
    assert asked["mask_source"] == "generation"
    assert {k: v for k, v in asked.items() if k != "mask_source"} == got


def test_without_generation_blocks_the_default_is_zeros_and_a_warning(tokenizer, caplog):
    chat = ChatTemplate.from_string(UNTAGGED, tokenizer=tokenizer)
    from minijinja_py.chat import dropin

    dropin._WARNED.clear()
    with caplog.at_level(logging.WARNING, logger="minijinja_py.chat"):
        got = chat.apply_chat_template(MESSAGES, return_assistant_tokens_mask=True)
        chat.apply_chat_template(MESSAGES, return_assistant_tokens_mask=True)
    assert got["assistant_masks"] == [0] * len(got["input_ids"])
    assert got.mask_source == "none"
    assert [r.getMessage() for r in caplog.records] == [
        "return_assistant_tokens_mask==True but chat template does not contain "
        "`{% generation %}` keyword."
    ]


def test_mask_modes_on_a_template_the_registry_does_not_know(tokenizer):
    chat = ChatTemplate.from_string(UNTAGGED, tokenizer=tokenizer)
    inferred = chat.apply_chat_template(MESSAGES, return_assistant_tokens_mask=True, mask="auto")
    assert _masked_text(tokenizer, inferred) == "Hello there<|im_end|>\n"
    assert inferred["mask_source"] == "inferred"
    zeros = chat.apply_chat_template(MESSAGES, return_assistant_tokens_mask=True, mask="generation")
    assert (zeros["mask_source"], set(zeros["assistant_masks"])) == ("none", {0})
    with pytest.raises(ValueError) as caught:
        chat.apply_chat_template(MESSAGES, return_assistant_tokens_mask=True, mask="tagged")
    assert str(caught.value) == (
        "mask='tagged': this template has no {% generation %} blocks and no hand-tagged copy of "
        "it is known (see minijinja_py.chat.spans); use mask='inferred' or 'auto'"
    )
    with pytest.raises(ValueError, match="^mask must be one of \\['generation', 'tagged', 'inf"):
        chat.apply_chat_template(MESSAGES, return_assistant_tokens_mask=True, mask="rule")
    batch = chat.tokenize([MESSAGES, OTHER], return_assistant_tokens_mask=True)
    assert batch.mask_source == ["inferred", "inferred"]


def test_a_known_template_takes_its_hand_tags(tokenizer):
    assert tagged_source(KNOWN) is not None
    assert tagged_source(KNOWN + "\n") == tagged_source(KNOWN.replace("\n", "\r\n"))
    assert "chatml-transformers-default.jinja" in tagged_names()
    assert len(normalised_hash(KNOWN)) == 64
    chat = ChatTemplate.from_string(KNOWN, tokenizer=tokenizer)
    tagged = chat.apply_chat_template(MESSAGES, return_assistant_tokens_mask=True, mask="auto")
    assert (tagged["mask_source"], _masked_text(tokenizer, tagged)) == (
        "tagged",
        "Hello there<|im_end|>\n",
    )
    rule = chat.tokenize(MESSAGES, return_assistant_tokens_mask=True, mask="inferred")
    assert rule.mask_source == "inferred"
    assert rule["assistant_masks"] == tagged["assistant_masks"]
    assert chat.tokenize(MESSAGES, return_assistant_tokens_mask=True).mask_source == "tagged"


def test_padding_needs_a_pad_token_and_pads_right_by_default(tokenizer):
    chat = ChatTemplate.from_string(TAGGED, tokenizer=tokenizer)
    with pytest.raises(ValueError, match="^Asking to pad but the tokenizer does not have a pad"):
        chat.apply_chat_template([MESSAGES, OTHER], padding=True)
    padded = ChatTemplate.from_string(TAGGED, {"pad_token": "<|im_end|>"}, tokenizer=tokenizer)
    pad = tokenizer.token_to_id("<|im_end|>")
    short = tokenizer.encode(padded.render(OTHER), add_special_tokens=False).ids
    long = tokenizer.encode(padded.render(MESSAGES), add_special_tokens=False).ids
    got = padded.apply_chat_template([MESSAGES, OTHER], padding=True)
    missing = len(long) - len(short)
    assert got["input_ids"] == [long, short + [pad] * missing]
    assert got["attention_mask"] == [[1] * len(long), [1] * len(short) + [0] * missing]
    cut = padded.apply_chat_template(MESSAGES, truncation=True, max_length=3)
    assert cut["input_ids"] == long[:3]


def test_a_model_folder_gives_the_padding_side(tokenizer, tmp_path):
    (tmp_path / "tokenizer.json").write_text(tokenizer.to_str(), encoding="utf-8")
    config = {"pad_token": "<|im_end|>", "padding_side": "left", "chat_template": TAGGED}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    got = minijinja_py.apply_chat_template(tmp_path, [MESSAGES, OTHER], padding="longest")
    pad = tokenizer.token_to_id("<|im_end|>")
    width = len(got["input_ids"][0])
    short = got["input_ids"][1]
    assert len(short) == width and short[0] == pad and got["attention_mask"][1][0] == 0
    text = minijinja_py.apply_chat_template(TAGGED, MESSAGES, tokenize=False)
    assert text == ChatTemplate.from_string(TAGGED).render(MESSAGES)
    with pytest.raises(ValueError, match="has no tokenizer: load it with from_pretrained"):
        minijinja_py.apply_chat_template(TAGGED, MESSAGES)


def test_tensors_and_unknown_options(tokenizer):
    np = pytest.importorskip("numpy")
    chat = ChatTemplate.from_string(TAGGED, tokenizer=tokenizer)
    got = chat.apply_chat_template(MESSAGES, return_tensors="np", return_assistant_tokens_mask=True)
    ids = tokenizer.encode(chat.render(MESSAGES), add_special_tokens=False).ids
    assert got["input_ids"].dtype == np.int64
    assert got["input_ids"].shape == got["assistant_masks"].shape == (1, len(ids))
    ragged = chat.apply_chat_template([MESSAGES, OTHER], return_tensors="np")
    assert ragged["input_ids"].dtype == object and ragged["input_ids"].shape == (2,)
    with pytest.raises(ValueError, match="^xx is not a valid TensorType, please select one of"):
        chat.apply_chat_template(MESSAGES, return_tensors="xx")
    with pytest.raises(ValueError, match="^bogus is not a valid PaddingStrategy"):
        chat.apply_chat_template(MESSAGES, padding="bogus")
    with pytest.raises(TypeError, match="^tokenizer_kwargs \\['stride'\\] are not supported"):
        chat.apply_chat_template(MESSAGES, tokenizer_kwargs={"stride": 2})
    with pytest.raises(ValueError, match="^`return_assistant_tokens_mask=True` requires"):
        chat.apply_chat_template(MESSAGES, tokenize=False, return_assistant_tokens_mask=True)
    with pytest.raises(ValueError, match="^Cannot apply chat template to an empty conversation"):
        chat.apply_chat_template([])


def test_pt_tensors_need_torch(tokenizer):
    try:
        import torch  # noqa: F401
    except ImportError:
        pass
    else:
        pytest.skip("torch is installed here")
    chat = ChatTemplate.from_string(TAGGED, tokenizer=tokenizer)
    with pytest.raises(ImportError) as caught:
        chat.apply_chat_template(MESSAGES, return_tensors="pt")
    assert str(caught.value) == (
        "Unable to convert output to PyTorch tensors format, PyTorch is not installed."
    )


def test_conventions_of_inferred_masks(tokenizer):
    chat = ChatTemplate.from_string(
        UNTAGGED + "{{ eos_token }}", {"eos_token": "</s>"}, tokenizer=tokenizer
    )

    def masked(**options):
        got = chat.tokenize(MESSAGES, return_assistant_tokens_mask=True, mask="inferred", **options)
        return _masked_text(tokenizer, got)

    # (by default the EOS written after the conversation is the last turn's: the model
    # writes it to stop)
    assert masked() == "Hello there<|im_end|>\n</s>"
    assert masked(mask_header="whitespace") == "\nHello there<|im_end|>\n</s>"
    assert masked(mask_header="include") == "<|im_start|>assistant\nHello there<|im_end|>\n</s>"
    assert masked(mask_final_eos=False) == "Hello there<|im_end|>\n"
    assert masked(mask_header="include", mask_final_eos=False) == (
        "<|im_start|>assistant\nHello there<|im_end|>\n"
    )
    # (the end of the sequence is the last turn's only when that turn is the assistant's)
    after_user = chat.tokenize([*MESSAGES, *OTHER], return_assistant_tokens_mask=True)
    assert _masked_text(tokenizer, after_user) == "Hello there<|im_end|>\n"
    with pytest.raises(
        ValueError, match="^mask_header must be one of \\['auto', 'exclude', 'whitespace'"
    ):
        masked(mask_header="all")
    with pytest.raises(TypeError, match="^mask_final_eos must be a bool, not str"):
        chat.apply_chat_template(MESSAGES, mask_final_eos="yes")


class _FakeTensor(list):
    """What the stand-in torch.tensor makes: the rows it was given, and its dtype."""

    def __init__(self, value, dtype=None):
        super().__init__(value)
        self.dtype = dtype


def test_pt_tensors_are_made_by_torch_tensor(tokenizer, monkeypatch):
    # (torch itself is not a test dependency: a stand-in records what it is given)
    import sys
    import types

    fake = types.ModuleType("torch")
    fake.int64 = "int64"
    fake.tensor = _FakeTensor
    monkeypatch.setitem(sys.modules, "torch", fake)
    chat = ChatTemplate.from_string(TAGGED, tokenizer=tokenizer)
    ids = tokenizer.encode(chat.render(MESSAGES), add_special_tokens=False).ids
    got = chat.apply_chat_template(MESSAGES, return_tensors="pt", return_assistant_tokens_mask=True)
    assert all(isinstance(value, _FakeTensor) for value in got.values())
    assert got["input_ids"] == [ids]
    assert got["attention_mask"] == [[1] * len(ids)]
    assert _masked_text(tokenizer, {k: v[0] for k, v in got.items()}) == "Hello there<|im_end|>"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"padding": "max_length", "max_length": 10**9},
            "max_length (1000000000) with padding='max_length' is more than the longest padded "
            "sequence allowed (16777216)",
        ),
        (
            {"padding": True, "tokenizer_kwargs": {"pad_to_multiple_of": 10**9}},
            "pad_to_multiple_of (1000000000) is more than the longest padded sequence allowed "
            "(16777216)",
        ),
        (
            {"padding": True, "tokenizer_kwargs": {"pad_to_multiple_of": 0}},
            "pad_to_multiple_of must be 1 or more, not 0",
        ),
        ({"truncation": True, "max_length": -1}, "max_length must be 0 or more, not -1"),
        (
            {"truncation": True, "max_length": 10**30},
            f"max_length ({10**30}) is more than {1 << 62}",
        ),
        ({"truncation": True, "max_length": 2.5}, "max_length must be an int, not float"),
    ],
)
def test_sizes_that_would_abort_the_tokenizers_library_are_refused(tokenizer, options, message):
    # (10**9 padded tokens made the library attempt a 4 GB allocation and abort the process)
    chat = ChatTemplate.from_string(TAGGED, {"pad_token": "<|im_end|>"}, tokenizer=tokenizer)
    with pytest.raises(ValueError) as raised:
        chat.apply_chat_template(MESSAGES, **options)
    assert str(raised.value) == message


def test_a_render_limit_bounds_the_padded_length(tokenizer):
    chat = ChatTemplate.from_string(
        TAGGED,
        {"pad_token": "<|im_end|>"},
        tokenizer=tokenizer,
        limits=minijinja_py.Limits(max_output=1000),
    )
    with pytest.raises(ValueError) as raised:
        chat.apply_chat_template(MESSAGES, padding="max_length", max_length=1001)
    assert str(raised.value) == (
        "max_length (1001) with padding='max_length' is more than the longest padded "
        "sequence allowed (1000)"
    )
    got = chat.apply_chat_template(MESSAGES, padding="max_length", max_length=1000)
    assert len(got["input_ids"]) == 1000
