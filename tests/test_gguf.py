"""The GGUF header reader, on small GGUF files written by the tests (versions 1-3, both byte orders)."""

from __future__ import annotations

import struct
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minijinja_py.chat.gguf import (
    BOOL,
    FLOAT32,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    STRING,
    UINT8,
    UINT16,
    UINT32,
    UINT64,
    GGUFError,
    build_gguf_header,
    read_gguf_metadata,
)

TEMPLATE = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"
TOKENS = ["<unk>", "<s>", "</s>", "hello", "world", "<|im_end|>"]


def write(path, metadata, **options):
    path.write_bytes(build_gguf_header(metadata, **options))
    return path


def model_metadata(**extra):
    metadata = {
        "general.architecture": "llama",
        "general.name": "tiny",
        "llama.context_length": 4096,
        "tokenizer.ggml.model": "llama",
        "tokenizer.ggml.tokens": TOKENS,
        "tokenizer.ggml.scores": (FLOAT32, [0.0] * len(TOKENS)),
        "tokenizer.ggml.token_type": (INT32, [1] * len(TOKENS)),
        "tokenizer.ggml.bos_token_id": 1,
        "tokenizer.ggml.eos_token_id": 5,
        "tokenizer.chat_template": TEMPLATE,
    }
    metadata.update(extra)
    return metadata


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("big_endian", [False, True])
def test_reads_template_and_special_tokens(tmp_path, version, big_endian):
    path = write(tmp_path / "m.gguf", model_metadata(), version=version, big_endian=big_endian)
    meta = read_gguf_metadata(path)
    assert meta.version == version
    assert meta.tensor_count == 0
    assert meta.chat_templates == {"default": TEMPLATE}
    assert meta.special_tokens == {"bos_token": "<s>", "eos_token": "<|im_end|>"}
    assert meta.values["general.name"] == "tiny"
    assert meta.values["llama.context_length"] == 4096
    assert meta.values["tokenizer.ggml.tokens"] == TOKENS


def test_named_templates(tmp_path):
    path = write(
        tmp_path / "m.gguf",
        model_metadata(
            **{
                "tokenizer.chat_template.tool_use": "TOOLS {{ tools | length }}",
                "tokenizer.chat_template.rag": "RAG",
                "tokenizer.chat_templates": ["tool_use", "rag"],
            }
        ),
    )
    meta = read_gguf_metadata(path)
    assert meta.chat_templates == {
        "default": TEMPLATE,
        "tool_use": "TOOLS {{ tools | length }}",
        "rag": "RAG",
    }


def test_large_arrays_are_skipped_not_stored(tmp_path):
    tokens = [f"tok{i}" for i in range(5000)]
    metadata = model_metadata(
        **{
            "tokenizer.ggml.tokens": tokens,
            "tokenizer.ggml.merges": [f"a{i} b{i}" for i in range(3000)],
            "tokenizer.ggml.token_type": (INT32, [1] * 5000),
            "tokenizer.ggml.bos_token_id": 0,
            "tokenizer.ggml.eos_token_id": 4097,
            "tokenizer.ggml.padding_token_id": (UINT64, 1024),
            "tokenizer.ggml.unknown_token_id": 99999,  # out of range: ignored
        }
    )
    del metadata["tokenizer.ggml.scores"]
    meta = read_gguf_metadata(write(tmp_path / "m.gguf", metadata))
    assert "tokenizer.ggml.tokens" not in meta.values
    assert "tokenizer.ggml.merges" not in meta.values
    assert meta.array_lengths == {
        "tokenizer.ggml.tokens": 5000,
        "tokenizer.ggml.token_type": 5000,
        "tokenizer.ggml.merges": 3000,
    }
    assert meta.special_tokens == {
        "bos_token": "tok0",
        "eos_token": "tok4097",
        "pad_token": "tok1024",
    }
    assert meta.chat_templates == {"default": TEMPLATE}


def test_tensor_data_is_never_read(tmp_path):
    # A 3 GiB sparse file: reading it would take seconds, the header alone takes milliseconds.
    path = tmp_path / "big.gguf"
    header = build_gguf_header(model_metadata(), tensor_count=1)
    with open(path, "wb") as handle:
        handle.write(header)
        handle.truncate(len(header) + 3 * 1024**3)
    # (CPU time: copying 3 GiB would cost seconds of it; a busy machine's wall clock says nothing)
    start = time.process_time()
    meta = read_gguf_metadata(path)
    elapsed = time.process_time() - start
    assert meta.chat_templates == {"default": TEMPLATE}
    assert meta.tensor_count == 1
    assert elapsed < 0.5


def test_without_template_or_token_ids(tmp_path):
    metadata = {"general.architecture": "llama", "tokenizer.ggml.tokens": TOKENS}
    meta = read_gguf_metadata(write(tmp_path / "m.gguf", metadata))
    assert meta.chat_templates == {}
    assert meta.special_tokens == {}


def test_scalar_types_round_trip(tmp_path):
    metadata = {
        "a.u8": (UINT8, 200),
        "a.i32": (INT32, -5),
        "a.f32": 0.5,
        "a.bool": True,
        "a.u64": (UINT64, 2**40),
        "a.str": "héllo",
        "a.small": [1, 2, 3],
        "a.strs": ["x", "y"],
    }
    meta = read_gguf_metadata(write(tmp_path / "m.gguf", metadata))
    assert meta.values == {
        "a.u8": 200,
        "a.i32": -5,
        "a.f32": 0.5,
        "a.bool": True,
        "a.u64": 2**40,
        "a.str": "héllo",
        "a.small": [1, 2, 3],
        "a.strs": ["x", "y"],
    }


def test_not_a_gguf_file(tmp_path):
    path = tmp_path / "x.gguf"
    path.write_bytes(b"PK\x03\x04 not gguf at all")
    with pytest.raises(GGUFError) as info:
        read_gguf_metadata(path)
    assert str(info.value) == f"{path}: not a GGUF file (bad magic b'PK\\x03\\x04')"


def test_empty_file(tmp_path):
    path = tmp_path / "x.gguf"
    path.write_bytes(b"")
    with pytest.raises(GGUFError) as info:
        read_gguf_metadata(path)
    assert str(info.value) == f"{path}: empty file, not a GGUF file"


def test_unsupported_version(tmp_path):
    path = tmp_path / "x.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<I", 9) + b"\0" * 16)
    with pytest.raises(GGUFError) as info:
        read_gguf_metadata(path)
    assert str(info.value) == f"{path}: unsupported GGUF version 9"


def test_truncated_header(tmp_path):
    data = build_gguf_header(model_metadata())
    path = tmp_path / "x.gguf"
    path.write_bytes(data[:60])
    with pytest.raises(GGUFError) as info:
        read_gguf_metadata(path)
    assert str(info.value).startswith(f"{path}: truncated GGUF header")


def test_truncated_inside_string_array(tmp_path):
    metadata = {"tokenizer.ggml.tokens": [f"t{i}" for i in range(100)]}
    data = build_gguf_header(metadata)
    path = tmp_path / "x.gguf"
    path.write_bytes(data[:-50])
    with pytest.raises(GGUFError) as info:
        read_gguf_metadata(path)
    assert str(info.value).startswith(f"{path}: truncated GGUF header (needed 8 bytes at offset")


def test_unknown_value_type(tmp_path):
    data = bytearray(build_gguf_header({"k": "v"}))
    # key "k": 8-byte length + 1 byte, then the uint32 type code
    offset = 4 + 4 + 8 + 8 + 8 + 1
    assert struct.unpack_from("<I", data, offset)[0] == STRING
    struct.pack_into("<I", data, offset, 77)
    path = tmp_path / "x.gguf"
    path.write_bytes(bytes(data))
    with pytest.raises(GGUFError) as info:
        read_gguf_metadata(path)
    assert str(info.value) == f"{path}: unknown GGUF value type 77 at offset {offset}"


def test_nested_arrays_are_skipped(tmp_path):
    def array_of(item_type: int, payload: list[bytes]) -> bytes:
        return struct.pack("<IQ", item_type, len(payload)) + b"".join(payload)

    def string(text: str) -> bytes:
        return struct.pack("<Q", len(text)) + text.encode()

    inner = [array_of(UINT8, [b"\x01", b"\x02"]), array_of(STRING, [string("a"), string("bc")])]
    nested = string("x.nested") + struct.pack("<I", 9) + array_of(9, inner)
    tail = string("tokenizer.chat_template") + struct.pack("<I", STRING) + string("T")
    data = b"GGUF" + struct.pack("<IQQ", 3, 0, 2) + nested + tail
    path = tmp_path / "n.gguf"
    path.write_bytes(data)
    meta = read_gguf_metadata(path)
    assert meta.array_lengths == {"x.nested": 2}
    assert "x.nested" not in meta.values
    assert meta.chat_templates == {"default": "T"}


def test_unknown_array_item_type(tmp_path):
    body = struct.pack("<Q", 1) + b"k" + struct.pack("<IIQ", 9, 42, 1)
    path = tmp_path / "u.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + body + b"\0" * 8)
    with pytest.raises(GGUFError) as info:
        read_gguf_metadata(path)
    assert str(info.value) == f"{path}: unknown GGUF array item type 42 (key 'k')"


def test_implausible_string_length(tmp_path):
    data = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 2**40)
    path = tmp_path / "huge.gguf"
    path.write_bytes(data + b"\0" * 64)
    with pytest.raises(GGUFError) as info:
        read_gguf_metadata(path)
    assert str(info.value) == (
        f"{path}: GGUF string of 1099511627776 bytes at offset 32 is implausibly large"
    )


_SCALARS = {
    UINT8: st.integers(0, 2**8 - 1),
    INT8: st.integers(-(2**7), 2**7 - 1),
    UINT16: st.integers(0, 2**16 - 1),
    INT16: st.integers(-(2**15), 2**15 - 1),
    UINT32: st.integers(0, 2**32 - 1),
    INT32: st.integers(-(2**31), 2**31 - 1),
    UINT64: st.integers(0, 2**64 - 1),
    INT64: st.integers(-(2**63), 2**63 - 1),
    FLOAT64: st.floats(allow_nan=False),
    BOOL: st.booleans(),
    STRING: st.text(max_size=20),
}
_VALUES = st.sampled_from(sorted(_SCALARS)).flatmap(
    lambda code: st.one_of(
        _SCALARS[code].map(lambda v: (code, v)),
        st.lists(_SCALARS[code], max_size=80).map(lambda v: (code, v)),
    )
)
_METADATA = st.dictionaries(st.text(min_size=1, max_size=12), _VALUES, max_size=8)


@settings(max_examples=60, deadline=None)
@given(metadata=_METADATA, version=st.sampled_from([1, 2, 3]), big_endian=st.booleans())
def test_round_trip(tmp_path_factory, metadata, version, big_endian):
    path = tmp_path_factory.mktemp("rt") / "m.gguf"
    path.write_bytes(build_gguf_header(metadata, version=version, big_endian=big_endian))
    meta = read_gguf_metadata(path)
    for key, (_code, value) in metadata.items():
        if isinstance(value, list):
            assert meta.array_lengths[key] == len(value)
            if len(value) <= 64:
                assert meta.values[key] == value
            else:
                assert key not in meta.values
        else:
            assert meta.values[key] == value


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_damaged_headers_raise_only_gguf_errors(tmp_path_factory, data):
    good = build_gguf_header(
        {
            "tokenizer.ggml.tokens": ["<s>", "</s>"] + [f"t{i}" for i in range(70)],
            "tokenizer.ggml.bos_token_id": 0,
            "tokenizer.chat_template": "{{ messages }}",
            "x.nested": (UINT32, [1, 2, 3]),
        }
    )
    damaged = bytearray(good)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(damaged) - 1))
        damaged[at] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(8, len(damaged)))
    path = tmp_path_factory.mktemp("dm") / "d.gguf"
    path.write_bytes(bytes(damaged[:cut]))
    try:
        read_gguf_metadata(path)
    except GGUFError:
        pass
