"""transformers' apply_chat_template as a function: its first argument a ChatTemplate, a model
folder or a template's source, made a ChatTemplate here, then that template's
apply_chat_template (minijinja_py.chat.dropin does the work).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from .template import ChatTemplate

__all__ = ["apply_chat_template", "load_chat_template"]


def load_chat_template(folder_or_template: Any) -> ChatTemplate:
    """A ChatTemplate from what apply_chat_template's first argument may be.

    Args:
        folder_or_template: A ChatTemplate; a model folder (or a cached Hub repo id); or a
            template's source text (text with `{{` or `{%`), which has no tokenizer.

    Returns:
        The ChatTemplate.
    """
    if isinstance(folder_or_template, ChatTemplate):
        return folder_or_template
    if isinstance(folder_or_template, str) and (
        "{{" in folder_or_template or "{%" in folder_or_template
    ):
        return ChatTemplate.from_string(folder_or_template)
    if isinstance(folder_or_template, (str, os.PathLike)):
        return ChatTemplate.from_pretrained(folder_or_template)
    raise TypeError(
        "apply_chat_template takes a ChatTemplate, a model folder or a template's source, not "
        f"{type(folder_or_template).__name__}"
    )


def apply_chat_template(
    chat: Any,
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
    """The conversation as transformers' apply_chat_template gives it, call for call.

    A model folder's tokenizer.json makes token ids (the `tokenizers` library); without one,
    tokenize=False gives the text.

    >>> template = "{% for m in messages %}[{{ m.role }}] {{ m.content }}{% endfor %}"
    >>> apply_chat_template(template, [{"role": "user", "content": "Hi"}], tokenize=False)
    '[user] Hi'

    Args:
        chat: A ChatTemplate, a model folder (tokenizer.json, tokenizer_config.json and the
            template) or a template's source text (text only: tokenize=False).
        conversation: One conversation (a list of message dicts) or a batch of them.
        tools: Tools offered to the model (JSON schemas or Python functions).
        documents: Documents for retrieval-augmented templates.
        chat_template: The name of one of the model's templates, or a template's source.
        add_generation_prompt: End with the assistant's header.
        continue_final_message: End right after the final message's text (True for its
            content, or the name of another field), so the model continues it.
        tokenize: Token ids (True) or the text (False).
        sanitize_control_tokens: Encode the added tokens found in the caller's data as ordinary
            text, so that only those the template writes are control tokens.
        padding: False or "do_not_pad", True or "longest", or "max_length".
        truncation: Cut each sequence at max_length (the model's model_max_length without it).
        max_length: The length padding="max_length" and truncation use.
        return_tensors: None (lists), "np" (numpy int64 arrays) or "pt" (torch tensors).
        return_dict: A dict of input_ids, attention_mask (and assistant_masks), or the
            input_ids alone.
        return_assistant_tokens_mask: Add assistant_masks (needs tokenize and return_dict).
        tokenizer_kwargs: Options of the tokenizer's call: pad_to_multiple_of, padding_side,
            return_attention_mask, return_token_type_ids, return_special_tokens_mask,
            return_offsets_mapping, return_length, verbose.
        mask: Left out, transformers' assistant mask: the {% generation %} blocks, and zeros
            with a logged warning for a template without them.  "generation", "tagged",
            "inferred" or "auto" choose the sources (minijinja_py.chat.spans.modes), and the result
            has a mask_source key.
        mask_header: The convention of inferred masks for the assistant's role header:
            "auto" (the default: the template's family's), "exclude", "whitespace" (its
            trailing whitespace is the turn's) or "include" (see
            minijinja_py.chat.spans.conventions.adjust_spans).
        mask_final_eos: Whether inferred masks take an end-of-sequence token written after
            the whole conversation into its last assistant turn (Phi 3's "<|endoftext|>"; the
            default, since the model writes it to stop).
        **kwargs: Template variables.

    Returns:
        The text (a list of texts for a batch) when tokenize is False; else the input_ids
        (return_dict=False) or a ChatEncoding: a dict whose values are lists for one
        conversation, lists of lists for a batch, or arrays with return_tensors (a batch axis
        added for one conversation).  Its mask_source attribute names the mask's source.

    Raises:
        ValueError: as transformers raises it (an empty conversation, options that do not go
            together, padding without a pad token, an unknown strategy or tensor type, tensors
            of a ragged batch), or for a tokenize call without a tokenizer.
        ImportError: return_tensors="pt" without torch ("np" without numpy).
        TypeError: a tokenizer_kwargs option this drop-in does not know.
    """
    return load_chat_template(chat).apply_chat_template(
        conversation,
        tools=tools,
        documents=documents,
        chat_template=chat_template,
        add_generation_prompt=add_generation_prompt,
        continue_final_message=continue_final_message,
        tokenize=tokenize,
        sanitize_control_tokens=sanitize_control_tokens,
        padding=padding,
        truncation=truncation,
        max_length=max_length,
        return_tensors=return_tensors,
        return_dict=return_dict,
        return_assistant_tokens_mask=return_assistant_tokens_mask,
        tokenizer_kwargs=tokenizer_kwargs,
        mask=mask,
        mask_header=mask_header,
        mask_final_eos=mask_final_eos,
        **kwargs,
    )
