"""Attacks on the chat layer's caller options (issue 38): sizes given to the drop-in that the
tokenizers library would turn into a multi-gigabyte allocation and a Rust panic (no exception:
the interpreter dies), or into a bare OverflowError/ZeroDivisionError."""

from __future__ import annotations

import importlib.util

from .model import Attack, Ok

SIZES = "dropin-sizes"


def _padded(**options: object) -> str:
    """'<ErrorClass>: <message>' of an apply_chat_template call, or 'ok <tokens>'."""
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers

    from minijinja_py import ChatTemplate

    tok = Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.add_special_tokens([AddedToken("<|end|>", special=True)])
    chat = ChatTemplate.from_string(
        "{% for m in messages %}{{ m.content }}<|end|>{% endfor %}",
        {"pad_token": "<|end|>"},
        tokenizer=tok,
    )
    try:
        got = chat.apply_chat_template([{"role": "user", "content": "a a"}], **options)
    except Exception as error:  # (the outcome names any class: a bare one is the finding)
        return f"{type(error).__name__}: {error}"
    return f"ok {len(got['input_ids'])}"


def pad_to_a_billion() -> str:
    return _padded(padding="max_length", max_length=10**9)


def pad_to_a_multiple_of_a_billion() -> str:
    return _padded(padding=True, tokenizer_kwargs={"pad_to_multiple_of": 10**9})


def pad_to_a_multiple_of_zero() -> str:
    return _padded(padding=True, tokenizer_kwargs={"pad_to_multiple_of": 0})


def pad_to_a_negative_multiple() -> str:
    return _padded(padding="max_length", max_length=8, tokenizer_kwargs={"pad_to_multiple_of": -4})


def truncate_to_a_negative_length() -> str:
    return _padded(truncation=True, max_length=-1)


def truncate_to_a_huge_length() -> str:
    return _padded(truncation=True, max_length=10**30)


def pad_to_true() -> str:
    return _padded(padding="max_length", max_length=True)


def ordinary_sizes_still_pad() -> str:
    return _padded(padding="max_length", max_length=12, tokenizer_kwargs={"pad_to_multiple_of": 8})


def _fn(name: str) -> str:
    return f"{__name__}:{name}"


_LONGEST = "the longest padded sequence allowed (16777216)"
SANDBOX4_CHAT = [
    Attack(
        SIZES,
        "pad-to-a-billion",
        call=_fn("pad_to_a_billion"),
        expect=Ok(
            f"ValueError: max_length (1000000000) with padding='max_length' is more than {_LONGEST}"
        ),
    ),
    Attack(
        SIZES,
        "pad-to-multiple-of-a-billion",
        call=_fn("pad_to_a_multiple_of_a_billion"),
        expect=Ok(f"ValueError: pad_to_multiple_of (1000000000) is more than {_LONGEST}"),
    ),
    Attack(
        SIZES,
        "pad-to-multiple-of-zero",
        call=_fn("pad_to_a_multiple_of_zero"),
        expect=Ok("ValueError: pad_to_multiple_of must be 1 or more, not 0"),
    ),
    Attack(
        SIZES,
        "pad-to-negative-multiple",
        call=_fn("pad_to_a_negative_multiple"),
        expect=Ok("ValueError: pad_to_multiple_of must be 1 or more, not -4"),
    ),
    Attack(
        SIZES,
        "truncate-to-negative-length",
        call=_fn("truncate_to_a_negative_length"),
        expect=Ok("ValueError: max_length must be 0 or more, not -1"),
    ),
    Attack(
        SIZES,
        "truncate-to-huge-length",
        call=_fn("truncate_to_a_huge_length"),
        expect=Ok(f"ValueError: max_length ({10**30}) is more than {1 << 62}"),
    ),
    Attack(
        SIZES,
        "pad-to-true",
        call=_fn("pad_to_true"),
        expect=Ok("ValueError: max_length must be an int, not bool"),
    ),
    Attack(SIZES, "ordinary-sizes", call=_fn("ordinary_sizes_still_pad"), expect=Ok("ok 16")),
]

# Every attack here drives the tokenizers library: without the tokens extra there is nothing
# to attack.
if importlib.util.find_spec("tokenizers") is None:
    SANDBOX4_CHAT = []
