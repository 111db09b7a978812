"""Loaders read only inside the model folder, only so much, and fail with a ValueError naming
the file; GGUF headers are read in bounded chunks with capped counts."""

from __future__ import annotations

import json
import os
import pickle
import struct

import pytest

from minijinja_py import TemplateRuntimeError, TemplateSyntaxError
from minijinja_py.chat import ChatTemplate, load_pretrained_files, loading
from minijinja_py.chat import gguf as gguf_module
from minijinja_py.chat.gguf import GGUFError, build_gguf_header, read_gguf_metadata

ARRAY, UINT32, STRING = 9, 4, 8


def _key(name: str) -> bytes:
    raw = name.encode()
    return struct.pack("<Q", len(raw)) + raw


def _header(kv_count: int, body: bytes) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, 0, kv_count) + body


def test_template_symlink_out_of_the_folder_is_refused(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=abc", encoding="utf-8")
    model = tmp_path / "model"
    model.mkdir()
    (model / "chat_template.jinja").symlink_to(secret)
    with pytest.raises(ValueError) as info:
        ChatTemplate.from_pretrained(model)
    assert str(info.value) == (
        f"{model / 'chat_template.jinja'}: resolves outside the model folder ({secret}), refused"
    )


def test_hub_cache_snapshot_links_into_blobs_are_followed(tmp_path):
    repo = tmp_path / "models--org--name"
    (repo / "blobs").mkdir(parents=True)
    snapshot = repo / "snapshots" / "0123abc"
    snapshot.mkdir(parents=True)
    blob = repo / "blobs" / "f00d"
    blob.write_text("{{ messages[0].content }}!", encoding="utf-8")
    (snapshot / "chat_template.jinja").symlink_to(os.path.relpath(blob, snapshot))
    chat = ChatTemplate.from_pretrained(snapshot)
    assert chat.render([{"role": "user", "content": "Hi"}]) == "Hi!"


def test_oversized_file_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(loading, "MAX_FILE_BYTES", 16)
    (tmp_path / "chat_template.jinja").write_text("x" * 17, encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_pretrained_files(tmp_path)
    assert str(info.value) == f"{tmp_path / 'chat_template.jinja'}: larger than 16 bytes, refused"


def test_malformed_and_deeply_nested_json_name_the_file(tmp_path):
    config = tmp_path / "tokenizer_config.json"
    config.write_text('{"chat_template": ', encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_pretrained_files(tmp_path)
    assert str(info.value).startswith(f"{config}: invalid JSON: Expecting value")
    config.write_text("[" * 200_000 + "]" * 200_000, encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_pretrained_files(tmp_path)
    assert str(info.value) == f"{config}: invalid JSON: nested more than 100 levels deep"
    config.write_text('{"model_max_length": ' + "7" * 5000 + "}", encoding="utf-8")
    with pytest.raises(ValueError) as info:
        load_pretrained_files(tmp_path)
    assert str(info.value).startswith(f"{config}: invalid JSON: Exceeds the limit (4300")


def test_gguf_errors_name_the_file(tmp_path):
    path = tmp_path / "bad.gguf"
    path.write_bytes(b"GGML" + b"\0" * 20)
    with pytest.raises(ValueError) as info:
        read_gguf_metadata(path)
    assert str(info.value) == f"{path}: not a GGUF file (bad magic b'GGML')"


def test_gguf_nested_empty_arrays_are_capped(tmp_path):
    # Millions of empty arrays inside one array value: refused by count, before any walk.
    count = gguf_module.MAX_NESTED + 1
    body = _key("x") + struct.pack("<IIQ", ARRAY, ARRAY, count)
    body += struct.pack("<IQ", UINT32, 0) * 16
    path = tmp_path / "nested.gguf"
    path.write_bytes(_header(1, body))
    with pytest.raises(GGUFError) as info:
        read_gguf_metadata(path)
    assert str(info.value) == (
        f"{path}: GGUF array of {count} items at offset 49 is over the limit of "
        f"{gguf_module.MAX_NESTED}"
    )


def test_gguf_nested_arrays_share_one_budget(tmp_path, monkeypatch):
    monkeypatch.setattr(gguf_module, "MAX_NESTED", 5)
    inner = struct.pack("<IQ", ARRAY, 3) + struct.pack("<IQ", UINT32, 0) * 3
    body = _key("x") + struct.pack("<IIQ", ARRAY, ARRAY, 2) + inner * 2
    path = tmp_path / "nested.gguf"
    path.write_bytes(_header(1, body))
    with pytest.raises(GGUFError) as info:
        read_gguf_metadata(path, small_array=0)
    assert str(info.value) == f"{path}: more than 5 nested arrays (key 'x')"


def test_gguf_key_count_is_capped(tmp_path):
    path = tmp_path / "keys.gguf"
    path.write_bytes(_header(10**9, b""))
    with pytest.raises(GGUFError) as info:
        read_gguf_metadata(path)
    assert str(info.value) == (
        f"{path}: GGUF array of 1000000000 items at offset 24 is over the limit of 65536"
    )


def test_gguf_reads_only_the_header(tmp_path, monkeypatch):
    # 4 GB of (sparse) tensor data after the header is never read.
    metadata = {"tokenizer.chat_template": "{{ 1 }}", "general.name": "x"}
    path = tmp_path / "model.gguf"
    path.write_bytes(build_gguf_header(metadata))
    with open(path, "r+b") as handle:
        handle.truncate(4 * 1024**3)
    seen: list[int] = []
    real_open = open

    class Counting:
        def __init__(self, handle):
            self.handle = handle

        def read(self, n=-1):
            assert n >= 0  # never "the rest of the file"
            data = self.handle.read(n)
            seen.append(len(data))
            return data

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.handle.close()

    monkeypatch.setattr(gguf_module, "open", lambda p, m: Counting(real_open(p, m)), raising=False)
    meta = read_gguf_metadata(path)
    assert meta.values["general.name"] == "x"
    assert sum(seen) <= 8 + 1024 * 1024 + len(build_gguf_header(metadata))
    chat = ChatTemplate.from_gguf(path)
    assert chat.render([{"role": "user", "content": "Hi"}]) == "1"


def test_gguf_wrong_name_on_a_single_template_is_refused(tmp_path):
    path = tmp_path / "model.gguf"
    path.write_bytes(build_gguf_header({"tokenizer.chat_template": "{{ 1 }}"}))
    with pytest.raises(ValueError) as info:
        ChatTemplate.from_gguf(path, name="tool_use")
    assert str(info.value) == (
        "no chat template named 'tool_use'; available template names are ['default']"
    )


def test_special_tokens_json_from_folder(tmp_path):
    (tmp_path / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "chat_template": "{{ bos_token }}{{ image_token }}",
                "bos_token": "<s>",
                "additional_special_tokens": ["<a>"],
                "extra_special_tokens": {"image_token": "<img>"},
            }
        ),
        encoding="utf-8",
    )
    template, tokens = load_pretrained_files(tmp_path)
    assert tokens == {"bos_token": "<s>", "image_token": "<img>"}


def test_cli_gguf_wrong_name_is_an_error(tmp_path, capsys):
    from minijinja_py.cli import main

    path = tmp_path / "model.gguf"
    path.write_bytes(build_gguf_header({"tokenizer.chat_template": "{{ messages | length }}"}))
    messages = tmp_path / "m.json"
    messages.write_text('[{"role": "user", "content": "Hi"}]', encoding="utf-8")
    argv = ["render", "--gguf", str(path), "--name", "tool_use", "--messages", str(messages)]
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == (
        "",
        "error: no chat template named 'tool_use'; available template names are ['default']\n",
    )


def test_named_templates_must_be_strings(tmp_path):
    config = tmp_path / "tokenizer_config.json"
    nested: list = []
    for _ in range(90):
        nested = [nested]
    config.write_text(
        json.dumps({"chat_template": [{"name": "default", "template": nested}]}), encoding="utf-8"
    )
    with pytest.raises(ValueError) as info:
        load_pretrained_files(tmp_path)
    assert str(info.value) == (
        f"{config}: a named chat template's name and template must be strings"
    )


# --- template names in errors (issue 44 item 6) -----------------------------------------------

BAD_RENDER = 'Hi\n{{ 1 + "a" }}'
HI = [{"role": "user", "content": "Hi"}]


def _runtime_error(chat: ChatTemplate, **options) -> TemplateRuntimeError:
    with pytest.raises(TemplateRuntimeError) as info:
        chat.render(HI, **options)
    return info.value


def test_from_file_names_the_file_in_runtime_errors_too(tmp_path):
    path = tmp_path / "chat.jinja"
    path.write_text(BAD_RENDER, encoding="utf-8")
    error = _runtime_error(ChatTemplate.from_file(path))
    assert error.name == str(path)
    assert str(error) == (
        "unsupported operand type(s) for +: 'int' and 'str'\n"
        f"  ({path}, line 2, column 6)\n"
        '{{ 1 + "a" }}\n'
        "     ^"
    )
    # A pickled chat template (a worker's copy) names it too.
    assert _runtime_error(pickle.loads(pickle.dumps(ChatTemplate.from_file(path)))).name == str(path)


def test_from_pretrained_names_the_file_each_template_came_from(tmp_path):
    (tmp_path / "chat_template.jinja").write_text(BAD_RENDER, encoding="utf-8")
    (tmp_path / "additional_chat_templates").mkdir()
    extra = tmp_path / "additional_chat_templates" / "rag.jinja"
    extra.write_text("ok\n{{ none.x.y }}", encoding="utf-8")
    chat = ChatTemplate.from_pretrained(tmp_path)
    assert _runtime_error(chat).name == str(tmp_path / "chat_template.jinja")
    assert _runtime_error(chat, chat_template="rag").name == str(extra)
    # A source passed as chat_template= was read from no file of the model's.
    assert _runtime_error(chat, chat_template="{{ 1 + 'a' }}").name is None


def test_from_pretrained_names_the_config_for_its_templates(tmp_path):
    config = tmp_path / "tokenizer_config.json"
    config.write_text(
        json.dumps({"chat_template": [{"name": "default", "template": "{% if %}"}]}),
        encoding="utf-8",
    )
    with pytest.raises(TemplateSyntaxError) as info:
        ChatTemplate.from_pretrained(tmp_path)
    assert str(info.value) == (
        "Expected an expression, got 'end of statement block'\n"
        f"  ({config}, line 1, column 7)\n"
        "{% if %}\n"
        "      ^"
    )


def test_from_gguf_names_the_gguf_file(tmp_path):
    path = tmp_path / "m.gguf"
    path.write_bytes(
        gguf_module.build_gguf_header(
            {"general.architecture": "llama", "tokenizer.chat_template": BAD_RENDER}
        )
    )
    assert _runtime_error(ChatTemplate.from_gguf(path)).name == str(path)


@pytest.mark.parametrize(
    ("file", "constructor"), [("chat.jinja", "from_file"), ("model.GGUF", "from_gguf")]
)
def test_from_pretrained_given_a_file_says_which_constructor_reads_it(tmp_path, file, constructor):
    path = tmp_path / file
    path.write_text("{{ 1 }}", encoding="utf-8")
    with pytest.raises(ValueError) as info:
        ChatTemplate.from_pretrained(path)
    assert type(info.value) is ValueError
    assert str(info.value) == (
        f"{path}: a file, not a model folder: load it with ChatTemplate.{constructor}()"
    )
