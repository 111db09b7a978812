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


def test_continue_final_message_tokenizes_the_cut_text(tokenizer):
    chat = ChatTemplate.from_string(CHATML, tokenizer=tokenizer)
    text = chat.render(MESSAGES, continue_final_message=True)
    assert text.endswith("Hello")  # cut after the final message, without its end of turn
    got = chat.tokenize(MESSAGES, continue_final_message=True)
    assert got["input_ids"] == tokenizer.encode(text, add_special_tokens=False).ids
    with pytest.raises(
        ValueError,
        match="^continue_final_message is not compatible with return_assistant_tokens_mask",
    ):
        chat.tokenize(MESSAGES, continue_final_message=True, return_assistant_tokens_mask=True)
    with pytest.raises(
        ValueError, match="^continue_final_message is not compatible with protect_special_tokens"
    ):
        chat.tokenize(MESSAGES, continue_final_message=True, protect_special_tokens=True)


def test_tokenize_many_and_the_text_they_encode(tokenizer):
    chat = ChatTemplate.from_string(CHATML, tokenizer=tokenizer)
    one = chat.tokenize(MESSAGES, return_assistant_tokens_mask=True, return_text=True)
    assert one["text"] == chat.render(MESSAGES)
    assert chat.tokenize_many(
        [MESSAGES, MESSAGES[:1]], return_assistant_tokens_mask=True, return_text=True
    ) == [one, chat.tokenize(MESSAGES[:1], return_assistant_tokens_mask=True, return_text=True)]
    with pytest.raises(TypeError, match="^messages must be one conversation here, not a batch"):
        chat.tokenize_many([[MESSAGES, MESSAGES]])


def test_without_a_tokenizer_tokenize_says_how_to_get_one():
    with pytest.raises(ValueError, match="has no tokenizer: load it with from_pretrained"):
        ChatTemplate.from_string(CHATML).tokenize(MESSAGES)


# --- token columns of the data pipelines (RowRenderer, Arrow, the batch command)


def test_row_renderer_token_columns_equal_tokenize(tokenizer):
    from minijinja_py.pipelines import RowRenderer

    chat = ChatTemplate.from_string(CHATML, tokenizer=tokenizer)
    renderer = RowRenderer(chat, tokens=True, spans=True, passthrough=["id"])
    assert renderer.columns == ("text", "assistant_spans", "input_ids", "assistant_masks", "error")
    row = renderer.render_row({"id": 7, "messages": MESSAGES})
    expected = chat.tokenize(MESSAGES, return_assistant_tokens_mask=True)
    assert row["text"] == chat.render(MESSAGES)
    assert row["input_ids"] == expected["input_ids"]
    assert row["assistant_masks"] == expected["assistant_masks"]
    assert row["error"] is None
    failed = renderer.render_row({"messages": "not json"})
    assert (failed["input_ids"], failed["assistant_masks"]) == (None, None)
    assert failed["error"]["kind"] == "InputError"


def test_row_renderer_tokens_need_a_tokenizer_and_no_continuation(tokenizer):
    from minijinja_py.pipelines import RowRenderer

    with pytest.raises(ValueError, match="has no tokenizer: load it with from_pretrained"):
        RowRenderer(ChatTemplate.from_string(CHATML), tokens=True)
    chat = ChatTemplate.from_string(CHATML, tokenizer=tokenizer)
    with pytest.raises(
        ValueError, match="^assistant masks are not made for continue_final_message"
    ):
        RowRenderer(chat, tokens=True, continue_final_message=True)


def test_arrow_token_columns_are_typed(tokenizer):
    pa = pytest.importorskip("pyarrow", reason="needs the 'data' extra")
    from minijinja_py.pipelines import RowRenderer
    from minijinja_py.pipelines.arrow import render_arrow

    chat = ChatTemplate.from_string(CHATML, tokenizer=tokenizer)
    table = pa.table({"messages": [MESSAGES, MESSAGES[:1]]})
    result = render_arrow(RowRenderer(chat, tokens=True), table)
    assert result.schema.field("input_ids").type == pa.list_(pa.int64())
    assert result.schema.field("assistant_masks").type == pa.list_(pa.int8())
    expected = chat.tokenize([MESSAGES, MESSAGES[:1]], return_assistant_tokens_mask=True)
    assert result.column("input_ids").to_pylist() == expected["input_ids"]
    assert result.column("assistant_masks").to_pylist() == expected["assistant_masks"]


def test_batch_command_writes_token_columns(tokenizer, tmp_path, capsys):
    import json

    from minijinja_py.cli import main

    model = tmp_path / "model"
    model.mkdir()
    tokenizer.save(str(model / "tokenizer.json"))
    (model / "tokenizer_config.json").write_text(json.dumps({"chat_template": CHATML}))
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"messages": MESSAGES}) + "\n" + "[1]\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["batch", "--model", str(model), "--tokens", "--quiet", str(source), str(out)]) == 0
    first, second = (json.loads(line) for line in out.read_text(encoding="utf-8").splitlines())
    chat = ChatTemplate.from_string(CHATML, tokenizer=tokenizer)
    expected = chat.tokenize(MESSAGES, return_assistant_tokens_mask=True)
    assert first == {
        "text": chat.render(MESSAGES),
        "input_ids": expected["input_ids"],
        "assistant_masks": expected["assistant_masks"],
        "error": None,
    }
    assert second["input_ids"] is None and second["error"]["kind"] == "TypeError"
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "tokenizer_config.json").write_text(json.dumps({"chat_template": CHATML}))
    capsys.readouterr()
    assert main(["batch", "--model", str(bare), "--tokens", str(source), str(out)]) == 1
    assert capsys.readouterr().err == (
        "error: --tokens needs the model's tokenizer: give --model FOLDER, a model folder "
        f"holding tokenizer.json ({bare} holds no tokenizer.json)\n"
    )


# -- where the tokenizer comes from --------------------------------------------------------------


def _hub_snapshot(root, tokenizer):
    """A Hugging Face cache entry: the snapshot's files are links into the repo's blobs."""
    import os

    repo = root / "models--org--tokens"
    (repo / "blobs").mkdir(parents=True)
    snapshot = repo / "snapshots" / "0a1b2c"
    snapshot.mkdir(parents=True)
    for name, text in (
        ("tokenizer_config.json", '{"chat_template": "' + CHATML.replace("\n", "\\n") + '"}'),
        ("tokenizer.json", tokenizer.to_str()),
    ):
        blob = repo / "blobs" / name.replace(".", "_")
        blob.write_text(text, encoding="utf-8")
        (snapshot / name).symlink_to(os.path.relpath(blob, snapshot))
    return snapshot


def test_hub_repo_id_brings_its_tokenizer(tmp_path, tokenizer, monkeypatch):
    import sys
    import types

    snapshot = _hub_snapshot(tmp_path, tokenizer)
    calls = []

    def snapshot_download(repo_id, local_files_only=False):
        calls.append(repo_id)
        return str(snapshot)

    fake = types.ModuleType("huggingface_hub")
    fake.snapshot_download = snapshot_download
    monkeypatch.setitem(sys.modules, "huggingface_hub", fake)
    chat = ChatTemplate.from_pretrained("org/tokens")
    text = chat.render(MESSAGES)
    assert chat.tokenize(MESSAGES)["input_ids"] == tokenizer.encode(text).ids
    assert calls == ["org/tokens"]  # looked up once, for the templates and the tokenizer


def test_tokenizer_file_linked_out_of_the_folder_is_refused(tmp_path, tokenizer):
    outside = tmp_path / "elsewhere.json"
    outside.write_text(tokenizer.to_str(), encoding="utf-8")
    model = tmp_path / "model"
    model.mkdir()
    (model / "chat_template.jinja").write_text(CHATML, encoding="utf-8")
    (model / "tokenizer.json").symlink_to(outside)
    with pytest.raises(ValueError) as info:
        ChatTemplate.from_pretrained(model)
    assert str(info.value) == (
        f"{model / 'tokenizer.json'}: resolves outside the model folder ({outside}), refused"
    )


def test_tokenizer_file_is_size_capped_and_checked(tmp_path, tokenizer, monkeypatch):
    from minijinja_py.chat import loading

    model = tmp_path / "model"
    model.mkdir()
    (model / "chat_template.jinja").write_text(CHATML, encoding="utf-8")
    (model / "tokenizer.json").write_text('{"version": ', encoding="utf-8")
    chat = ChatTemplate.from_pretrained(model)
    with pytest.raises(ValueError) as info:
        chat.tokenize(MESSAGES)
    assert str(info.value).startswith(f"{model / 'tokenizer.json'}: not a tokenizer file (")
    monkeypatch.setattr(loading, "MAX_FILE_BYTES", 8)  # (the template was read already)
    with pytest.raises(ValueError) as info:
        chat.tokenize(MESSAGES)
    assert str(info.value) == f"{model / 'tokenizer.json'}: larger than 8 bytes, refused"


def test_protection_reads_the_callers_added_tokens_as_text_special_or_not(tokenizer):
    from tokenizers import AddedToken, Tokenizer

    tok = Tokenizer.from_str(tokenizer.to_str())
    tok.add_tokens([AddedToken("<tool_call>", special=False)])
    calls = "{% for m in messages %}<tool_call>{{ m.content }}<|im_end|>{% endfor %}"
    chat = ChatTemplate.from_string(calls, tokenizer=tok)
    messages = [{"role": "user", "content": "Hi <tool_call> there <|im_end|>"}]
    call, end = tok.token_to_id("<tool_call>"), tok.token_to_id("<|im_end|>")
    plain = chat.tokenize(messages)["input_ids"]
    assert (plain.count(call), plain.count(end)) == (2, 2)
    protected = chat.tokenize(messages, protect_special_tokens=True)["input_ids"]
    assert (protected.count(call), protected.count(end)) == (1, 1)  # (the template's own)
    assert tok.decode(protected, skip_special_tokens=False) == chat.render(messages)
    assert tok.encode_special_tokens is False  # (the caller's tokenizer is left as it was)
