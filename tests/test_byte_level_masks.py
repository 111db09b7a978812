"""Assistant masks of a byte-level BPE without the library's offsets (chat/tokens.py): the ids
and the token of every character equal what tokenizers' own encode and char_to_token give, for
the configurations the shortcut takes, and the others are left to the library."""

from __future__ import annotations

from functools import cache
from unittest import mock

import pytest

tokenizers = pytest.importorskip("tokenizers")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from tokenizers import (  # noqa: E402
    AddedToken,
    Regex,
    Tokenizer,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

from minijinja_py.chat import bytelevel, pieces  # noqa: E402
from minijinja_py.chat.bytelevel import _byte_table  # noqa: E402
from minijinja_py.chat.kept import KeptBytes  # noqa: E402
from minijinja_py.chat.pieces import encode_by_pieces, encode_one_by_pieces  # noqa: E402
from minijinja_py.chat.tokens import (  # noqa: E402
    _added_pattern,
    _encode_byte_level,
    _plain_ids,
    assistant_mask,
    encode_chat,
    encoded_ids,
)

_TEXT = [
    "You are a helpful assistant. What is the weather in Paris today?",
    "Bonjour, ça va ? 你好 — ünïcödé, emoji \U0001f600 and tabs\tand newlines\n",
    "def get_weather(location: str) -> dict: return {'temperature': 21}",
]
_SPECIAL = ["<|im_start|>", "<|im_end|>", "<s>"]
# Llama 3's split of the text before its byte-level step.
_SPLIT = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"


@cache
def _trained() -> str:
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=400, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tokenizer.train_from_iterator(_TEXT * 4, trainer=trainer)
    return tokenizer.to_str()


def _tokenizer(kind: str) -> Tokenizer:
    tokenizer = Tokenizer.from_str(_trained())
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in _SPECIAL])
    if kind == "split":  # (Llama 3's and Qwen's layout)
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(_SPLIT), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
        tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
        tokenizer.add_tokens(
            [AddedToken("<tool>", normalized=True), AddedToken("</x>", rstrip=True)]
        )
    elif kind == "normalizer":
        tokenizer.normalizer = normalizers.NFKC()
    elif kind == "prefix space":
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    elif kind == "trimmed offsets":
        tokenizer.post_processor = processors.ByteLevel(trim_offsets=True)
    elif kind == "metaspace":
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    return tokenizer


_SHORTCUT = ["byte level", "split"]
_LIBRARY = ["normalizer", "prefix space", "trimmed offsets", "metaspace"]
_PIECES = [
    "a", "b", " ", "  ", "\n", "\t", "\r\n", "é", "ü", "你好", "\U0001f600", "\u0301", "’",
    "The", " weather", "'s", "21", "<|im_start|>", "<|im_end|>", "<s>", "<tool>", "</x>", "</x> ",
]  # fmt: skip
_texts = st.lists(st.sampled_from(_PIECES), max_size=30).map("".join)


def _expected(tokenizer: Tokenizer, text: str, spans: list[tuple[int, int]]) -> dict:
    encoding = tokenizer.encode(text, add_special_tokens=False)
    ids = list(encoding.ids)
    return {
        "input_ids": ids,
        "attention_mask": [1] * len(ids),
        "assistant_masks": assistant_mask(len(ids), spans, encoding.char_to_token),
    }


@pytest.mark.parametrize("kind", _SHORTCUT)
def test_byte_level_tokenizers_take_the_shortcut(kind):
    assert _byte_table(_tokenizer(kind)) is not None


@pytest.mark.parametrize("kind", _LIBRARY)
def test_other_tokenizers_are_left_to_the_library(kind):
    tokenizer = _tokenizer(kind)
    assert _byte_table(tokenizer) is None
    assert _encode_byte_level(tokenizer, "Hello", [(0, 2)]) == ([], None)


@pytest.mark.parametrize("block", [64, 3, 1])
@pytest.mark.parametrize("kind", _SHORTCUT)
@settings(max_examples=100, deadline=None)
@given(text=_texts)
def test_every_character_maps_to_the_token_the_library_gives(kind, block, text):
    # (blocks of 3 and 1 tokens: the search across blocks meets every kind of boundary)
    tokenizer = _tokenizer(kind)
    bytelevel._BLOCK = block
    try:
        _check_every_character(tokenizer, text)
    finally:
        bytelevel._BLOCK = 64


def _check_every_character(tokenizer, text):
    encoding = tokenizer.encode(text, add_special_tokens=False)
    ids, char_to_token = _encode_byte_level(tokenizer, text, [])
    if char_to_token is None:  # (a token that may take the whitespace after it: the library's)
        assert "</x>" in text
        return
    assert ids == encoding.ids
    assert [char_to_token(c) for c in range(len(text) + 2)] == [
        encoding.char_to_token(c) for c in range(len(text) + 2)
    ]


@pytest.mark.parametrize("kind", _SHORTCUT + _LIBRARY)
@settings(max_examples=60, deadline=None)
@given(text=_texts, cuts=st.lists(st.integers(0, 200), max_size=8))
def test_masks_equal_the_library_offsets(kind, text, cuts):
    tokenizer = _tokenizer(kind)
    cuts = sorted(cut % (len(text) + 2) for cut in cuts)
    spans = [(start, end) for start, end in zip(cuts[::2], cuts[1::2], strict=False) if end > 0]
    assert encode_chat(tokenizer, text, spans) == _expected(tokenizer, text, spans)


def test_a_span_before_the_first_character_is_left_to_the_library():
    # (the library refuses a negative character with its own OverflowError)
    assert _encode_byte_level(_tokenizer("byte level"), "ab", [(0, 0)]) == ([], None)
    with pytest.raises(OverflowError):
        encode_chat(_tokenizer("byte level"), "ab", [(0, 0)])


def test_a_changed_tokenizer_gets_a_new_table():
    tokenizer = _tokenizer("byte level")
    text = "<|im_start|>user\nHi<|tool|>x<|im_end|>"
    spans = [(17, len(text))]
    assert encode_chat(tokenizer, text, spans) == _expected(tokenizer, text, spans)
    tokenizer.add_special_tokens([AddedToken("<|tool|>", special=True, normalized=False)])
    assert encode_chat(tokenizer, text, spans) == _expected(tokenizer, text, spans)
    tokenizer.normalizer = normalizers.Lowercase()
    assert _byte_table(tokenizer) is None
    assert encode_chat(tokenizer, text, spans) == _expected(tokenizer, text, spans)


def test_ids_without_masks_are_the_library_ids():
    tokenizer = _tokenizer("metaspace")
    text = "<s>Hello 你好 \U0001f600<|im_end|>"
    result = encode_chat(tokenizer, text, [], masks=False)
    ids = tokenizer.encode(text, add_special_tokens=False).ids
    assert result == {"input_ids": ids, "attention_mask": [1] * len(ids)}


@pytest.mark.parametrize("kind", _SHORTCUT)
def test_a_long_conversation_masks_as_the_library_does(kind):
    tokenizer = _tokenizer(kind)
    turn = "<|im_start|>assistant\nLe temps à Paris: 21° \U0001f600 你好<|im_end|>\n"
    text = "".join(f"<|im_start|>user\nQuestion {n}?<|im_end|>\n{turn}" for n in range(120))
    spans = []
    at = text.find(turn)
    while at >= 0:
        start = at + len("<|im_start|>assistant\n")
        spans.append((start, at + len(turn)))
        at = text.find(turn, at + 1)
    assert len(spans) == 120
    result = encode_chat(tokenizer, text, spans)
    assert result == _expected(tokenizer, text, spans)
    assert sum(result["assistant_masks"]) > len(result["input_ids"]) // 3


@pytest.mark.parametrize("kind", _SHORTCUT)
@settings(max_examples=100, deadline=None)
@given(texts=st.lists(_texts, min_size=2, max_size=4))
def test_ids_by_pieces_equal_the_library_ids(kind, texts):
    # The pieces between added tokens, encoded apart and kept, give the ids of the whole
    # text: twice (the second time from the store), for a tokenizer that allows it ("byte
    # level") and for one whose rstrip token does not (encoded whole).
    tokenizer = _tokenizer(kind)
    expected = [list(tokenizer.encode(text, add_special_tokens=False).ids) for text in texts]
    kept = KeptBytes(1 << 20)
    table = _byte_table(tokenizer)
    for _ in range(2):
        assert encoded_ids(tokenizer, texts, table, kept) == expected
    by_pieces = encode_by_pieces(tokenizer, table, texts, kept, _plain_ids, _added_pattern)
    assert (by_pieces is not None) == (kind == "byte level")


@pytest.mark.parametrize("kind", _SHORTCUT + _LIBRARY)
@settings(max_examples=100, deadline=None)
@given(texts=st.lists(_texts, min_size=1, max_size=4))
def test_one_text_by_its_long_pieces_equals_the_library_ids(kind, texts):
    # One text at a time, its pieces of 4 characters or more cut out and kept (256 and more
    # outside this test): each text three times over, the later ones from the store, and the
    # next text finding the pieces the earlier ones kept.
    tokenizer = _tokenizer(kind)
    kept = KeptBytes(1 << 20)
    table = _byte_table(tokenizer)
    with mock.patch.object(pieces, "LONG_PIECE", 4):
        for text in texts:
            expected = [list(tokenizer.encode(text, add_special_tokens=False).ids)]
            for _ in range(3):
                assert encoded_ids(tokenizer, [text], table, kept) == expected


def test_one_text_keeps_its_long_pieces_from_their_second_call_on():
    tokenizer = _tokenizer("byte level")
    table = _byte_table(tokenizer)
    kept = KeptBytes(1 << 20)
    system = "You are a helpful assistant. " * 9  # (261 characters)
    expected = {}
    for user in ("Hi", "Hello", "Bye"):
        text = f"<|im_start|>system\n{system}<|im_end|><|im_start|>user\n{user}<|im_end|>"
        expected[user] = list(tokenizer.encode(text, add_special_tokens=False).ids)
    calls = []

    def encode(tokenizer, texts):
        calls.append(texts)
        return _plain_ids(tokenizer, texts)

    def one(user):
        text = f"<|im_start|>system\n{system}<|im_end|><|im_start|>user\n{user}<|im_end|>"
        return encode_one_by_pieces(tokenizer, table, text, kept, encode, _added_pattern)

    # Met once: left to the caller, which encodes the text whole; the store notes the piece.
    assert one("Hi") is None and calls == [] and len(kept) == 1
    # Met again: cut out by "<s>" (the text holds the other added tokens), encoded, kept.
    assert one("Hello") == expected["Hello"]
    assert calls == [
        ["<|im_start|><s>system\n" + system + "<s><|im_end|><|im_start|>user\nHello<|im_end|>"]
    ]
    # Then read from the store: the text encoded without it.
    assert one("Bye") == expected["Bye"]
    assert calls[-1] == ["<|im_start|><s><s><|im_end|><|im_start|>user\nBye<|im_end|>"]
    assert len(kept) == 2
    short = "<|im_start|>user\nHi<|im_end|>"
    assert encode_one_by_pieces(tokenizer, table, short, kept, encode, _added_pattern) is None
    # A text that holds every added token that could cut it is encoded whole.
    crowded = f"{system}<s><|im_start|><|im_end|>"
    assert encode_one_by_pieces(tokenizer, table, crowded, kept, encode, _added_pattern) is None
    assert len(calls) == 2


def test_pieces_kept_follow_the_tokenizer_s_configuration():
    # A token added after pieces were kept: the pieces kept before are not read again.
    tokenizer = _tokenizer("byte level")
    kept = KeptBytes(1 << 20)
    text = "Hello <tool>world</tool>"
    first = encoded_ids(tokenizer, [text, text], _byte_table(tokenizer), kept)
    assert len(kept) and first == [list(tokenizer.encode(text, add_special_tokens=False).ids)] * 2
    tokenizer.add_special_tokens([AddedToken("<tool>", special=True, normalized=False)])
    again = encoded_ids(tokenizer, [text, text], _byte_table(tokenizer), kept)
    assert again == [list(tokenizer.encode(text, add_special_tokens=False).ids)] * 2 != first
