"""A drop-in for transformers' `tokenizer.apply_chat_template`: same signature, defaults,
results and errors, on a model folder's `tokenizer.json` through the `tokenizers` library.

What transformers' tokenizer does around the render is done here the same way: the padding and
truncation strategies (`True`, `"longest"`, `"max_length"`, the model's
`model_max_length` when `max_length` is not given), the pad token and the padding and
truncation sides of the folder's `tokenizer_config.json`, single conversations unbatched,
`return_tensors="np"` (numpy) or `"pt"` (torch) converted as transformers converts them (a
ragged batch as an object array), and the assistant mask mapped from characters to tokens of
the padded, truncated encodings.

The one addition is `mask` (see minijinja_py.chat.spans.modes): left out, the assistant mask is
transformers' (the template's `{% generation %}` blocks, zeros without them); given, it names
the sources to use, and the result carries a `mask_source` key as well as the attribute.

`tokenizers` is imported by minijinja_py.chat.tokens; numpy and torch by minijinja_py.chat.tensors, when asked for.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import bounded_repr
from .bytelevel import byte_level_mapping, byte_level_table
from .call import prepare_traced_call
from .inputs import normalise_conversations
from .model import ChatModel
from .padding import pad_ids
from .sanitize import control_tokens, encode_marked, mark_control_tokens, template_literals
from .spans.blocks import has_generation_blocks
from .spans.choose import chat_spans
from .spans.conventions import check_mask_conventions
from .spans.modes import check_mask_mode
from .tensors import tensor, to_tensors, unbatch
from .tokens import assistant_mask, encoded_ids
from .types import ChatEncoding

__all__ = ["apply_to_template"]

_LOGGER = logging.getLogger("minijinja_py.chat")
_WARNED: set[str] = set()

# transformers' thresholds: a model_max_length above LARGE_INTEGER means "no limit", and
# VERY_LARGE_INTEGER is the model_max_length of a config that names none.
_LARGE_INTEGER = int(1e20)
_VERY_LARGE_INTEGER = int(1e30)

# The longest sequence padding may make: above any model's context (10M tokens at most today),
# below what the tokenizers library allocates without aborting the process (a Rust panic on a
# 4 GB request).  A render's `Limits.max_output` bounds it further when smaller.
MAX_PADDED_LENGTH = 1 << 24
# Truncation allocates nothing by its length, but the tokenizers library takes a usize.
_MAX_TRUNCATION = 1 << 62

_PADDING = ("longest", "max_length", "do_not_pad")
_TRUNCATION = ("only_first", "only_second", "longest_first", "do_not_truncate")
_TOKENIZER_KWARGS = frozenset(
    {
        "pad_to_multiple_of",
        "padding_side",
        "return_attention_mask",
        "return_token_type_ids",
        "return_special_tokens_mask",
        "return_offsets_mapping",
        "return_length",
        "verbose",
    }
)


def apply_to_template(
    chat: ChatModel,
    conversation: Any,
    tools: Sequence[Any] | None = None,
    documents: Sequence[Any] | None = None,
    chat_template: str | None = None,
    add_generation_prompt: bool = False,
    continue_final_message: bool | str = False,
    tokenize: bool = True,
    sanitize_control_tokens: bool = False,
    padding: bool | str = False,
    truncation: bool | str = False,
    max_length: int | None = None,
    return_tensors: str | None = None,
    return_dict: bool = True,
    return_assistant_tokens_mask: bool = False,
    tokenizer_kwargs: dict[str, Any] | None = None,
    *,
    mask: str | None = None,
    mask_header: str = "auto",
    mask_final_eos: bool = True,
    **kwargs: Any,
) -> Any:
    """minijinja_py.chat.apply.apply_chat_template (which documents it) on a model: the
    drop-in's stage, which `ChatTemplate.apply_chat_template` runs with itself."""
    if not tokenize:
        return_dict = False
    if return_assistant_tokens_mask and not (return_dict and tokenize):
        raise ValueError(
            "`return_assistant_tokens_mask=True` requires `return_dict=True` and `tokenize=True`"
        )
    mode = "generation" if mask is None else check_mask_mode(mask)
    check_mask_conventions(mask_header, mask_final_eos)
    options = dict(tokenizer_kwargs or {})
    unknown = sorted(set(options) - _TOKENIZER_KWARGS)
    if unknown:
        raise TypeError(
            f"tokenizer_kwargs {unknown} are not supported by minijinja_py's apply_chat_template "
            f"(it supports {sorted(_TOKENIZER_KWARGS)})"
        )
    chat.select(tools, chat_template)  # (the template choice's errors come first, as there)
    if isinstance(conversation, (list, tuple)) and len(conversation) == 0:
        raise ValueError(
            "Cannot apply chat template to an empty conversation. Provide at least one message."
        )
    conversations, batched = normalise_conversations(conversation, chat.offer_reasoning)
    marked = sanitize_control_tokens and tokenize and not return_assistant_tokens_mask
    if marked:
        # The caller's control tokens are wrapped before the render, as transformers wraps them
        # (chat/sanitize.py): the template sees them wrapped.
        literals = template_literals(chat.compiled(tools, chat_template).tree)
        tokens = control_tokens(chat.tokenizer, literals, _Settings.of(chat).control_tokens)
        conversations = [mark_control_tokens(one, tokens) for one in conversations]
        tools, documents, kwargs = mark_control_tokens([tools, documents, kwargs], tokens)
    call = prepare_traced_call(
        chat,
        tools,
        documents,
        add_generation_prompt,
        continue_final_message,
        return_assistant_tokens_mask,
        chat_template,
        kwargs,
        mask_header,
        mask_final_eos,
    )
    if sanitize_control_tokens and (not tokenize or return_assistant_tokens_mask):
        raise ValueError(
            "`sanitize_control_tokens=True` requires `tokenize=True` and is not compatible with "
            "`return_assistant_tokens_mask=True`."
        )
    if return_assistant_tokens_mask and mask is None and not has_generation_blocks(call.source):
        _warn_once(
            "return_assistant_tokens_mask==True but chat template does not contain "
            "`{% generation %}` keyword."
        )
    if tokenize:
        chat.tokenizer  # noqa: B018 - without one, say how to get one before rendering
    wanted = mode if return_assistant_tokens_mask else None
    rendered = [chat_spans(chat, call, one, wanted, False) for one in conversations]
    texts = [text for text, _, _, _ in rendered]
    if not tokenize:
        return texts if batched else texts[0]
    sources = [source for _, _, source, _ in rendered]
    settings = _Settings.of(chat)
    limits = chat.limits
    most = MAX_PADDED_LENGTH if limits is None else min(MAX_PADDED_LENGTH, limits.max_output)
    strategy = _strategies(settings, padding, truncation, max_length, options, most)
    mappings: list[Any] | None = None
    if sanitize_control_tokens:
        out = _encode_sanitized(chat, rendered, strategy, settings, options)
    else:
        fast = _encode_byte_level(chat, rendered, strategy, settings, options)
        if fast is None:
            out, encodings = _encode(chat, texts, strategy, settings, options)
            mappings = [encoding.char_to_token for encoding in encodings]
        else:
            out, mappings = fast
    if not batched:
        out = unbatch(out)
    if return_tensors is not None:
        to_tensors(out, return_tensors)
    if not return_dict:
        return out["input_ids"]
    result = ChatEncoding(out)
    if return_assistant_tokens_mask:
        assert mappings is not None
        input_ids = out["input_ids"] if batched or return_tensors else [out["input_ids"]]
        masks = []
        for index, (_, spans, _, _) in enumerate(rendered):
            masks.append(assistant_mask(len(input_ids[index]), spans, mappings[index]))
        result["assistant_masks"] = masks if batched or return_tensors else masks[0]
        if return_tensors is not None:
            result["assistant_masks"] = tensor(
                result["assistant_masks"], return_tensors, "assistant_masks"
            )
        result.mask_source = sources if batched else sources[0]
        if mask is not None:
            result["mask_source"] = result.mask_source
    return result


def _warn_once(message: str) -> None:
    if message not in _WARNED:
        _WARNED.add(message)
        _LOGGER.warning(message)


class _Settings:
    """What transformers reads from the folder's tokenizer_config.json for padding,
    truncation and the control tokens that sanitize_control_tokens wraps."""

    def __init__(self, config: dict[str, Any], pad_token: str | None, pad_id: int | None):
        self.padding_side = str(config.get("padding_side") or "right")
        self.truncation_side = str(config.get("truncation_side") or "right")
        limit = config.get("model_max_length")
        self.model_max_length = limit if isinstance(limit, int) else _VERY_LARGE_INTEGER
        self.pad_token = pad_token
        self.pad_id = pad_id
        listed = config.get("chat_control_tokens")
        if listed is not None and not (
            isinstance(listed, (list, tuple)) and all(isinstance(item, str) for item in listed)
        ):
            raise TypeError(
                f"`chat_control_tokens` should be a list of strings, got {bounded_repr(listed)}"
            )
        self.control_tokens: list[str] | None = None if listed is None else list(listed)

    @classmethod
    def of(cls, chat: ChatModel) -> _Settings:
        # Read once per template (a batch of a data set's map is one call among thousands).
        key = (getattr(chat, "folder", None), chat.special_tokens.get("pad_token"), chat.tokenizer)
        found = _SETTINGS.get(chat)
        if found is None or found[0] != key:
            found = (key, cls._read(chat))
            _SETTINGS[chat] = found
        return found[1]

    @classmethod
    def _read(cls, chat: ChatModel) -> _Settings:
        config: dict[str, Any] = {}
        folder = getattr(chat, "folder", None)
        if folder is not None:
            path = Path(folder) / "tokenizer_config.json"
            if path.is_file():
                from .loading import _read_json

                read = _read_json(path)
                if isinstance(read, dict):
                    config = read
        pad = chat.special_tokens.get("pad_token")
        pad_token = pad if isinstance(pad, str) else None
        pad_id = None if pad_token is None else chat.tokenizer.token_to_id(pad_token)
        return cls(config, pad_token, pad_id)


_SETTINGS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


class _Strategy:
    def __init__(self, padding: str, truncation: str, max_length: int | None, multiple: Any):
        self.padding = padding
        self.truncation = truncation
        self.max_length = max_length
        self.multiple = multiple


def _strategies(
    settings: _Settings,
    padding: Any,
    truncation: Any,
    max_length: int | None,
    options: dict[str, Any],
    most: int = MAX_PADDED_LENGTH,
) -> _Strategy:
    """transformers' padding and truncation strategies from the call's arguments; `most` is
    the longest padded sequence allowed."""
    if padding is True:
        pad = "longest"
    elif padding is False or padding is None:
        pad = "do_not_pad"
    else:
        pad = _enum_value(padding, "PaddingStrategy", _PADDING)
    if truncation is True:
        cut = "longest_first"
    elif truncation is False or truncation is None:
        cut = "do_not_truncate"
    else:
        cut = _enum_value(truncation, "TruncationStrategy", _TRUNCATION)
    if max_length is None:
        if pad == "max_length":
            if settings.model_max_length > _LARGE_INTEGER:
                pad = "do_not_pad"
            else:
                max_length = settings.model_max_length
        if cut != "do_not_truncate":
            if settings.model_max_length > _LARGE_INTEGER:
                cut = "do_not_truncate"
            else:
                max_length = settings.model_max_length
    if pad != "do_not_pad" and (settings.pad_token is None or settings.pad_id is None):
        raise ValueError(
            "Asking to pad but the tokenizer does not have a padding token. Please select a token "
            "to use as `pad_token` `(tokenizer.pad_token = tokenizer.eos_token e.g.)` or add a "
            "new pad token via `tokenizer.add_special_tokens({'pad_token': '[PAD]'})`."
        )
    multiple = options.get("pad_to_multiple_of")
    _check_sizes(pad, cut, max_length, multiple, most)
    if (
        cut != "do_not_truncate"
        and pad != "do_not_pad"
        and multiple is not None
        and max_length is not None
        and max_length % multiple != 0
    ):
        raise ValueError(
            "Truncation and padding are both activated but truncation length "
            f"({max_length}) is not a multiple of pad_to_multiple_of ({multiple})."
        )
    return _Strategy(pad, cut, max_length, multiple)


def _check_sizes(pad: str, cut: str, max_length: Any, multiple: Any, most: int) -> None:
    # Checked before the tokenizers library sees them: a huge padded length aborts the
    # interpreter there, a negative or 0 one gives a bare OverflowError/ZeroDivisionError.
    # Values that transformers takes and that allocate nothing stay as they are.
    def size(name: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be an int, not {type(value).__name__}")
        return int(value)

    if max_length is not None:
        length = size("max_length", max_length)
        if length < 0:
            raise ValueError(f"max_length must be 0 or more, not {length}")
        if pad == "max_length" and length > most:
            raise ValueError(
                f"max_length ({length}) with padding='max_length' is more than the longest "
                f"padded sequence allowed ({most})"
            )
        if cut != "do_not_truncate" and length > _MAX_TRUNCATION:
            raise ValueError(f"max_length ({length}) is more than {_MAX_TRUNCATION}")
    if multiple is not None:
        step = size("pad_to_multiple_of", multiple)
        if step < 1:
            raise ValueError(f"pad_to_multiple_of must be 1 or more, not {step}")
        if pad != "do_not_pad" and step > most:
            raise ValueError(
                f"pad_to_multiple_of ({step}) is more than the longest padded sequence allowed "
                f"({most})"
            )


def _enum_value(value: Any, enum_name: str, allowed: tuple[str, ...]) -> str:
    text = getattr(value, "value", value)  # (transformers' enum members are str enums)
    if text not in allowed:
        raise ValueError(
            f"{value} is not a valid {enum_name}, please select one of {list(allowed)}"
        )
    return str(text)


# One copy of each template's tokenizer for padded, truncated batches: enabling padding on the
# template's own tokenizer would change what tokenize() returns.
_BATCH_TOKENIZERS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _batch_tokenizer(chat: ChatModel) -> tuple[Any, threading.Lock]:
    # (with a lock: the copy's padding and truncation are set for each call)
    own = chat.tokenizer
    found = _BATCH_TOKENIZERS.get(chat)
    if found is None or found[0] is not own:
        from tokenizers import Tokenizer

        found = (own, Tokenizer.from_str(own.to_str()), threading.Lock())
        _BATCH_TOKENIZERS[chat] = found
    return found[1], found[2]


def _encode(
    chat: ChatModel,
    texts: list[str],
    strategy: _Strategy,
    settings: _Settings,
    options: dict[str, Any],
) -> tuple[dict[str, Any], list[Any]]:
    tokenizer, lock = _batch_tokenizer(chat)
    with lock:
        tokenizer.no_truncation()
        tokenizer.no_padding()
        if strategy.truncation != "do_not_truncate":
            tokenizer.enable_truncation(
                strategy.max_length,
                stride=0,
                strategy=strategy.truncation,
                direction=settings.truncation_side,
            )
        if strategy.padding != "do_not_pad":
            tokenizer.enable_padding(
                direction=options.get("padding_side") or settings.padding_side,
                pad_id=settings.pad_id,
                pad_type_id=0,
                pad_token=settings.pad_token,
                length=strategy.max_length if strategy.padding == "max_length" else None,
                pad_to_multiple_of=strategy.multiple,
            )
        encodings = tokenizer.encode_batch(texts, add_special_tokens=False)
    out: dict[str, Any] = {"input_ids": [list(e.ids) for e in encodings]}
    if options.get("return_token_type_ids"):
        out["token_type_ids"] = [list(e.type_ids) for e in encodings]
    if options.get("return_attention_mask", True) is not False:
        out["attention_mask"] = [list(e.attention_mask) for e in encodings]
    if options.get("return_special_tokens_mask"):
        out["special_tokens_mask"] = [list(e.special_tokens_mask) for e in encodings]
    if options.get("return_offsets_mapping"):
        out["offset_mapping"] = [list(e.offsets) for e in encodings]
    if options.get("return_length"):
        out["length"] = [len(e.ids) for e in encodings]
    return out, encodings


# What only the library's encodings give (offsets, type ids, the special tokens' mask, lengths
# after padding): asked for, the batch is encoded with them.
_ENCODING_ONLY = (
    "return_token_type_ids",
    "return_special_tokens_mask",
    "return_offsets_mapping",
    "return_length",
)


def _encode_byte_level(
    chat: ChatModel,
    rendered: list[tuple[str, Any, Any, Any]],
    strategy: _Strategy,
    settings: _Settings,
    options: dict[str, Any],
) -> tuple[dict[str, Any], list[Any]] | None:
    """The batch's ids without the library's offsets, padded here, with each conversation's
    char_to_token in the padded sequence, for a byte-level BPE (see tokens.byte_level_mapping);
    None where the library's encodings are needed: truncation, an option only they give, a
    tokenizer or text the byte-level mapping does not hold for.  Offsets cost about a quarter
    of the encode, and the chat's own tokenizer needs no copy set up for padding."""
    if strategy.truncation != "do_not_truncate" or any(options.get(k) for k in _ENCODING_ONLY):
        return None
    tokenizer = chat.tokenizer
    table = byte_level_table(tokenizer, (span for _, spans, _, _ in rendered for span in spans))
    if table is None:
        return None
    texts = [text for text, _, _, _ in rendered]
    sequences = encoded_ids(tokenizer, texts, table, chat.kept.pieces)
    unpadded = []
    for text, ids in zip(texts, sequences, strict=True):
        char_to_token = byte_level_mapping(table, text, ids)
        if char_to_token is None:
            return None
        unpadded.append(char_to_token)
    side = options.get("padding_side") or settings.padding_side
    pad_id = settings.pad_id if settings.pad_id is not None else 0  # (checked when padding)
    input_ids, attention, before = pad_ids(
        sequences, strategy.padding, strategy.max_length, strategy.multiple, side, pad_id
    )
    out: dict[str, Any] = {"input_ids": input_ids}
    if options.get("return_attention_mask", True) is not False:
        out["attention_mask"] = attention
    return out, [_shifted(mapping, pads) for mapping, pads in zip(unpadded, before, strict=True)]


def _shifted(char_to_token: Any, pads: int) -> Any:
    # A character's token in a sequence with `pads` put before it, as the library's padded
    # encoding maps it.
    if not pads:
        return char_to_token

    def shifted(char: int) -> int | None:
        token = char_to_token(char)
        return None if token is None else token + pads

    return shifted


def _encode_sanitized(
    chat: ChatModel,
    rendered: list[tuple[str, Any, Any, Any]],
    strategy: _Strategy,
    settings: _Settings,
    options: dict[str, Any],
) -> dict[str, Any]:
    sequences = []
    for text, _, _, _ in rendered:
        ids = encode_marked(chat.tokenizer, text)
        if strategy.truncation != "do_not_truncate" and strategy.max_length is not None:
            right = settings.truncation_side == "right"
            ids = ids[: strategy.max_length] if right else ids[-strategy.max_length :]
        sequences.append(ids)
    side = options.get("padding_side") or settings.padding_side
    pad_id = settings.pad_id if settings.pad_id is not None else 0  # (checked when padding)
    input_ids, attention, _ = pad_ids(
        sequences, strategy.padding, strategy.max_length, strategy.multiple, side, pad_id
    )
    out: dict[str, Any] = {"input_ids": input_ids}
    if options.get("return_attention_mask", True) is not False:
        out["attention_mask"] = attention
    return out
