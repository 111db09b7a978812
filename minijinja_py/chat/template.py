"""The `ChatTemplate`: a model's chat template(s) rendered as transformers renders them."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast, overload

from ..errors import TemplateError, bounded_repr
from ..sandbox.limits import Limits
from .calls import (
    _Call,
    _cut_at_tag,
    _environment,
    _refuse_tokenizer_options,
    _tag_final_message,
    prepare_call,
)
from .capabilities import ChatCapabilities, probe_capabilities
from .deferred import encode_chat, tracing
from .inputs import normalise_conversations, to_template_data
from .kept import COMPILED_BYTES, PROBES_BYTES, TOOLS_BYTES, KeptBytes, compiled_size
from .loading import (
    load_gguf_files,
    load_pretrained_files,
    pretrained_response_template,
    pretrained_tokenizer_file,
    read_text,
    resolve_model_folder,
)
from .masks import AssistantSpans, ChatEncoding, check_mask_conventions, check_mask_mode
from .sources import compiled_at_load, named_sources
from .types import TokenizedBatch, TokenizedChat

if TYPE_CHECKING:  # (provenance, spans, tokens, drop-in: imported where used; text needs none)
    from .provenance import ChatProvenance

__all__ = ["ChatTemplate"]


class ChatTemplate:
    """A model's chat template (or its named set of templates) with the tokenizer's special tokens.

    >>> chat = ChatTemplate.from_string("{% for m in messages %}[{{ m.role }}] {{ m.content }}\\n{% endfor %}")
    >>> chat.render([{"role": "user", "content": "Hi"}])
    '[user] Hi\\n'
    """

    def __init__(
        self,
        template: str | Mapping[str, str],
        special_tokens: Mapping[str, Any] | None = None,
        *,
        name: str | None = None,
        offer_reasoning: bool = True,
        origin: str | None = None,
        limits: Limits | None = None,
        now: datetime | None = None,
        tokenizer: Any = None,
        response_template: Mapping[str, Any] | None = None,
    ) -> None:
        """`template`: the source, or named sources (`{"default": ..., "tool_use": ...}`).

        `name` fixes which named template renders (a single template is named `"default"`;
        any other name is refused).  `limits` bound each render (see `Limits`);
        `now` pins the instant `strftime_now` formats, for reproducible prompts.
        `tokenizer` (a `tokenizers.Tokenizer`, or the path of a `tokenizer.json` or of its
        folder, read when first needed) is what `tokenize` encodes with.
        """
        self._templates, self._single = named_sources(template, name)
        self.name: str | None = name if self._single is None else None
        self.special_tokens: dict[str, Any] = {
            str(key): to_template_data(value, f"special token {bounded_repr(key)}")
            for key, value in (special_tokens or {}).items()
        }
        self.offer_reasoning = offer_reasoning
        self.origin = origin
        if limits is not None and not isinstance(limits, Limits):
            raise TypeError(f"limits must be a Limits or None, not {type(limits).__name__}")
        self.limits = limits
        if now is not None and not isinstance(now, datetime):
            raise TypeError(f"now must be a datetime.datetime, not {type(now).__name__}")
        self.now = now
        self._tokenizer = tokenizer
        #: transformers' response_template (tokenizer_config.json's), for parse_response
        self.response_template = response_template
        #: The model folder read by from_pretrained (its tokenizer_config.json gives the
        #: padding and truncation settings of apply_chat_template), else None.
        self.folder: Path | None = None
        self._compiled: dict[str, Any] = {}  # (the model's own templates)
        self._kept_caches()
        for source in compiled_at_load(self.sources, name, limits or Limits()):
            self._compile(source)

    # construction ------------------------------------------------------------------------------

    @classmethod
    def from_string(
        cls, source: str, special_tokens: Mapping[str, Any] | None = None, **options: Any
    ) -> ChatTemplate:
        """A chat template from its source text."""
        return cls(source, special_tokens, **options)

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        special_tokens: Mapping[str, Any] | None = None,
        **options: Any,
    ) -> ChatTemplate:
        """A chat template from a `.jinja` file (read as UTF-8 with universal newlines).

        Errors name the file: a syntax error carries it as its `name`, an unreadable file
        raises `ValueError`/`OSError` with the path.
        """
        where = os.fspath(path)
        options.setdefault("origin", where)
        source = read_text(Path(path))
        try:
            return cls(source, special_tokens, **options)
        except TemplateError as error:
            if error.name is None:
                error.name = where
            raise

    @classmethod
    def from_pretrained(
        cls, folder: str | os.PathLike[str], name: str | None = None, **options: Any
    ) -> ChatTemplate:
        """The chat template(s) and special tokens of a model folder (or cached Hub repo id).

        `name` fixes the template among the model's named ones; without it the choice is made at
        each render as transformers makes it.
        """
        root = resolve_model_folder(folder)  # (looked up once for a Hub repo id)
        template, tokens = load_pretrained_files(root)
        options.setdefault("origin", os.fspath(folder))
        if "tokenizer" not in options:
            options["tokenizer"] = pretrained_tokenizer_file(root)
        options.setdefault("response_template", pretrained_response_template(root))
        chat = cls(template, tokens, name=name, **options)
        chat.folder = root
        return chat

    @classmethod
    def from_gguf(
        cls, path: str | os.PathLike[str], name: str | None = None, **options: Any
    ) -> ChatTemplate:
        """The chat template(s) and special tokens stored in a GGUF file's metadata."""
        template, tokens = load_gguf_files(path)
        options.setdefault("origin", os.fspath(path))
        return cls(template, tokens, name=name, **options)

    # pickling: sources travel, compiled forms are rebuilt on first use ------------------------

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_compiled"] = {}
        for name in ("_passed", "_probes", "_traced_tools"):
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        # (pickles of 0.1.0 lack the limits and the clock; older ones the traced tools)
        self.__dict__.update(
            {"limits": None, "now": None, "folder": None, "response_template": None, **state}
        )
        self._kept_caches()

    def _kept_caches(self) -> None:
        # What is kept between calls, bounded in bytes (see chat/kept.py): templates compiled
        # from sources passed as chat_template=, probed turn texts, traced tool lists.
        self._passed = KeptBytes(COMPILED_BYTES)
        self._probes = KeptBytes(PROBES_BYTES)
        self._traced_tools = KeptBytes(TOOLS_BYTES)

    def __repr__(self) -> str:
        names = ", ".join(self.sources)
        origin = f" {self.origin}" if self.origin else ""
        return f"<ChatTemplate{origin} [{names}]>"

    # selection ---------------------------------------------------------------------------------

    @property
    def sources(self) -> dict[str, str]:
        """Template sources by name (a single template is named `"default"`)."""
        if self._single is not None:
            return {"default": self._single}
        return dict(self._templates)

    @property
    def template_names(self) -> list[str]:
        return list(self.sources)

    def select(self, tools: Any = None, chat_template: str | None = None) -> str:
        """The template source transformers would use for this call.

        `chat_template` may name one of the model's templates or be a template's source text.
        """
        if chat_template is None:
            chat_template = self.name
        if self._single is None:
            if chat_template is not None and chat_template in self._templates:
                return self._templates[chat_template]
            if chat_template is None:
                if tools is not None and "tool_use" in self._templates:
                    return self._templates["tool_use"]
                if "default" in self._templates:
                    return self._templates["default"]
                raise ValueError(
                    "This model has multiple chat templates with no default specified! Please "
                    "either pass a chat template or the name of the template you wish to use to the "
                    "`chat_template` argument. Available template names are "
                    f"{sorted(self._templates)}."
                )
            return chat_template
        return self._single if chat_template is None else chat_template

    def _compile(self, source: str) -> Any:
        compiled = self._compiled.get(source)
        if compiled is None:
            compiled = self._passed.get(source)
            if compiled is None:
                compiled = _environment(self.limits).from_string(source)
                if source == self._single or source in self._templates.values():
                    self._compiled[source] = compiled
                else:  # (a source passed as chat_template=: kept while the bytes allow)
                    self._passed.put(source, compiled, compiled_size(source))
        return compiled

    def compiled(self, tools: Any = None, chat_template: str | None = None) -> Any:
        """The engine's compiled `Template` for this call."""
        return self._compile(self.select(tools, chat_template))

    # rendering ---------------------------------------------------------------------------------

    def _conversations(self, messages: Any) -> tuple[list[list[dict[str, Any]]], bool]:
        return normalise_conversations(messages, self.offer_reasoning)

    def _render_chat(
        self, call: _Call, chat: list[dict[str, Any]], spans: bool
    ) -> tuple[str, list[tuple[int, int]]]:
        final_message: Any = None
        if call.continue_final_message:
            final_message = _tag_final_message(chat, call.continue_final_message, call.source)
        context = {**call.context, "messages": chat}
        indices: list[tuple[int, int]] = []
        if spans:
            text, found = call.compiled.render_with_spans(context)
            indices = [(start, end) for start, end in found]
        else:
            text = call.compiled.render(context)
        if call.continue_final_message:
            text = _cut_at_tag(text, final_message)
        return text, indices

    @overload
    def render(
        self,
        messages: Sequence[Sequence[Mapping[str, Any]]],
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        add_generation_prompt: bool = False,
        continue_final_message: bool | str = False,
        *,
        chat_template: str | None = None,
        **kwargs: Any,
    ) -> list[str]: ...

    @overload
    def render(
        self,
        messages: Sequence[Mapping[str, Any]] | Any,
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        add_generation_prompt: bool = False,
        continue_final_message: bool | str = False,
        *,
        chat_template: str | None = None,
        **kwargs: Any,
    ) -> str: ...

    def render(
        self,
        messages: Any,
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        add_generation_prompt: bool = False,
        continue_final_message: bool | str = False,
        *,
        chat_template: str | None = None,
        **kwargs: Any,
    ) -> str | list[str]:
        """The conversation as the model's prompt text (a list of texts for a batch).

        `messages` is one conversation (a list of message dicts) or a batch of them (a list of
        such lists), as for transformers' `apply_chat_template`.  `continue_final_message`
        (`True` for `content`, or the name of another field of the final message) ends the
        text right after that message's text, so the model continues it.  Other keyword
        arguments become template variables (overriding special tokens).  See the module
        `minijinja_py.chat.inputs` for how every value is turned into template data.
        The tokenizer's options (tokenize, return_dict, padding, ...) are refused with a
        TypeError: they belong to apply_chat_template and tokenize.
        """
        _refuse_tokenizer_options("render", kwargs)
        call = prepare_call(
            self,
            tools,
            documents,
            add_generation_prompt,
            continue_final_message,
            False,
            chat_template,
            kwargs,
        )
        conversations, batched = self._conversations(messages)
        texts = [self._render_chat(call, chat, False)[0] for chat in conversations]
        return texts if batched else texts[0]

    def render_many(
        self,
        conversations: Iterable[Any],
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        add_generation_prompt: bool = False,
        continue_final_message: bool | str = False,
        *,
        chat_template: str | None = None,
        **kwargs: Any,
    ) -> list[str]:
        """`render` for each conversation, sharing the tools, documents and options."""
        _refuse_tokenizer_options("render_many", kwargs)
        call = prepare_call(
            self,
            tools,
            documents,
            add_generation_prompt,
            continue_final_message,
            False,
            chat_template,
            kwargs,
        )
        return [self._render_chat(call, self._single_chat(c), False)[0] for c in conversations]

    def _single_chat(self, messages: Any) -> list[dict[str, Any]]:
        conversations, batched = self._conversations(messages)
        if batched:
            raise TypeError("messages must be one conversation here, not a batch of them")
        return conversations[0]

    def render_with_spans(
        self,
        messages: Any,
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        add_generation_prompt: bool = False,
        continue_final_message: bool | str = False,
        *,
        chat_template: str | None = None,
        **kwargs: Any,
    ) -> tuple[str, list[tuple[int, int]]]:
        """The text and the `(start, end)` character spans of its `{% generation %}` blocks.

        The spans equal transformers' generation indices (`return_assistant_tokens_mask`), and,
        as there, `continue_final_message` is refused with a `ValueError`.  One conversation
        per call.
        """
        call = prepare_call(
            self,
            tools,
            documents,
            add_generation_prompt,
            continue_final_message,
            True,
            chat_template,
            kwargs,
        )
        return self._render_chat(call, self._single_chat(messages), True)

    def render_with_provenance(
        self,
        messages: Any,
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        add_generation_prompt: bool = False,
        *,
        chat_template: str | None = None,
        **kwargs: Any,
    ) -> ChatProvenance:
        """The text of `render`, where each character came from, and the assistant spans.

        Sources are named as in `minijinja_py.chat.provenance`; the special tokens are
        template text.  `assistant_spans` are the `{% generation %}` spans when the template
        has such blocks, else inferred by that module's rule.  One conversation per call.
        """
        call = prepare_call(
            self, tools, documents, add_generation_prompt, False, False, chat_template, kwargs
        )
        call.traced_names = ["messages", "tools", "documents", *kwargs]
        return tracing().traced_render(self, call, self._single_chat(messages))

    def assistant_spans(
        self,
        messages: Any,
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        add_generation_prompt: bool = False,
        *,
        mask: str = "auto",
        mask_header: str = "auto",
        mask_final_eos: bool = False,
        chat_template: str | None = None,
        **kwargs: Any,
    ) -> AssistantSpans:
        """The text, its assistant spans and where they came from, without a tokenizer.

        The spans are those tokenize(..., return_assistant_tokens_mask=True) marks.  One
        conversation per call.

        Args:
            messages: One conversation.
            tools: Tools offered to the model.
            documents: Documents for retrieval-augmented templates.
            add_generation_prompt: End with the assistant's header.
            mask: The sources allowed: "generation", "tagged", "inferred" or "auto" (see
                minijinja_py.chat.masks).
            mask_header: The role-header convention of inferred spans.
            mask_final_eos: Whether inferred spans take a final end-of-sequence token.
            chat_template: The name of one of the model's templates, or a template's source.
            **kwargs: Template variables.

        Returns:
            An AssistantSpans: text, spans ((start, end) character offsets) and source.

        Raises:
            ValueError: for mask="tagged" on a template neither tagged nor known, or an
                unknown mode or convention.
        """
        check_mask_mode(mask)
        check_mask_conventions(mask_header, mask_final_eos)
        call = self._prepare_text(
            tools, documents, add_generation_prompt, False, True, chat_template, kwargs
        )
        call.mask_header, call.mask_final_eos = mask_header, mask_final_eos
        text, spans, source, _ = tracing().chat_spans(
            self, call, self._single_chat(messages), mask, False
        )
        return AssistantSpans(text, [(start, end) for start, end in spans], str(source))

    # tokens ------------------------------------------------------------------------------------

    @property
    def tokenizer(self) -> Any:
        """The `tokenizers.Tokenizer` that `tokenize` uses (loaded on first use)."""
        if self._tokenizer is None:
            raise ValueError(
                "this chat template has no tokenizer: load it with from_pretrained() from a folder "
                "holding tokenizer.json, or pass tokenizer="
            )
        if isinstance(self._tokenizer, (str, os.PathLike)):
            from .tokens import load_tokenizer

            self._tokenizer = load_tokenizer(self._tokenizer)
        return self._tokenizer

    @overload
    def tokenize(
        self,
        messages: Sequence[Sequence[Mapping[str, Any]]],
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        add_generation_prompt: bool = False,
        continue_final_message: bool | str = False,
        *,
        return_assistant_tokens_mask: bool = False,
        protect_special_tokens: bool = False,
        return_text: bool = False,
        mask: str = "auto",
        mask_header: str = "auto",
        mask_final_eos: bool = False,
        chat_template: str | None = None,
        **kwargs: Any,
    ) -> TokenizedBatch: ...

    @overload
    def tokenize(
        self,
        messages: Sequence[Mapping[str, Any]] | Any,
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        add_generation_prompt: bool = False,
        continue_final_message: bool | str = False,
        *,
        return_assistant_tokens_mask: bool = False,
        protect_special_tokens: bool = False,
        return_text: bool = False,
        mask: str = "auto",
        mask_header: str = "auto",
        mask_final_eos: bool = False,
        chat_template: str | None = None,
        **kwargs: Any,
    ) -> TokenizedChat: ...

    def tokenize(
        self,
        messages: Any,
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        add_generation_prompt: bool = False,
        continue_final_message: bool | str = False,
        *,
        return_assistant_tokens_mask: bool = False,
        protect_special_tokens: bool = False,
        return_text: bool = False,
        mask: str = "auto",
        mask_header: str = "auto",
        mask_final_eos: bool = False,
        chat_template: str | None = None,
        **kwargs: Any,
    ) -> TokenizedChat | TokenizedBatch:
        """input_ids and attention_mask (and assistant_masks when asked) of the prompt.

        Equal to transformers' apply_chat_template(..., tokenize=True, return_dict=True,
        return_assistant_tokens_mask=...) on the same model folder for a template with
        {% generation %} blocks: one encode of the whole text without added special tokens.
        For a template without them, transformers gives zeros; here `mask` chooses the
        source (see minijinja_py.chat.masks): by default "auto", the template's blocks, else
        a hand-tagged copy of a known template, else the inferred assistant turns.  The result's
        `mask_source` attribute names the source used (a list for a batch).  For transformers'
        whole option set (padding, truncation, tensors), use apply_chat_template.

        Args:
            messages: One conversation (a list of message dicts) or a batch of them.
            tools: Tools offered to the model (JSON schemas or Python functions).
            documents: Documents for retrieval-augmented templates.
            add_generation_prompt: End with the assistant's header.
            continue_final_message: Cut the text after the final message (True for its
                content, or the name of another field), as render does.  Not compatible with
                return_assistant_tokens_mask nor with protect_special_tokens.
            return_assistant_tokens_mask: Add assistant_masks.
            protect_special_tokens: Encode the added tokens found in the caller's data as
                ordinary text (transformers' sanitize_control_tokens); those the template
                writes stay control tokens.
            return_text: Add `text`, the prompt the ids encode (rendered once for both).
            mask: Where assistant_masks come from: "generation", "tagged", "inferred" or
                "auto".
            mask_header: The convention of inferred masks for the role header: "auto" (the
                template's family's), "exclude", "whitespace" or "include" (see
                minijinja_py.chat.masks.adjust_spans).
            mask_final_eos: Whether inferred masks take the end-of-sequence token written
                after the whole conversation into its last assistant turn.
            chat_template: The name of one of the model's templates, or a template's source.
            **kwargs: Template variables.

        Returns:
            A dict of lists (of lists, for a batch), with a `mask_source` attribute.

        Raises:
            ValueError: without a tokenizer, for options that do not go together, or for
                mask="tagged" on a template neither tagged nor known.
        """
        check_mask_mode(mask)
        check_mask_conventions(mask_header, mask_final_eos)
        call = self._prepare_tokens(
            tools,
            documents,
            add_generation_prompt,
            continue_final_message,
            return_assistant_tokens_mask,
            protect_special_tokens,
            chat_template,
            kwargs,
        )
        call.mask_header, call.mask_final_eos = mask_header, mask_final_eos
        conversations, batched = self._conversations(messages)
        masked = mask if return_assistant_tokens_mask else None
        results = [
            self._encode(call, chat, masked, protect_special_tokens, return_text)
            for chat in conversations
        ]
        if not batched:
            return cast(TokenizedChat, results[0])
        merged = ChatEncoding({key: [result[key] for result in results] for key in results[0]})
        merged.mask_source = [result.mask_source for result in results]
        return cast(TokenizedBatch, merged)

    def tokenize_many(
        self,
        conversations: Iterable[Any],
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        add_generation_prompt: bool = False,
        continue_final_message: bool | str = False,
        *,
        return_assistant_tokens_mask: bool = False,
        protect_special_tokens: bool = False,
        return_text: bool = False,
        mask: str = "auto",
        mask_header: str = "auto",
        mask_final_eos: bool = False,
        chat_template: str | None = None,
        **kwargs: Any,
    ) -> list[TokenizedChat]:
        """tokenize for each conversation (one dict each), sharing the tools, documents and
        options, as render_many is render's."""
        check_mask_mode(mask)
        check_mask_conventions(mask_header, mask_final_eos)
        call = self._prepare_tokens(
            tools,
            documents,
            add_generation_prompt,
            continue_final_message,
            return_assistant_tokens_mask,
            protect_special_tokens,
            chat_template,
            kwargs,
        )
        call.mask_header, call.mask_final_eos = mask_header, mask_final_eos
        masked = mask if return_assistant_tokens_mask else None
        return [
            cast(
                TokenizedChat,
                self._encode(
                    call, self._single_chat(chat), masked, protect_special_tokens, return_text
                ),
            )
            for chat in conversations
        ]

    def _prepare_tokens(
        self,
        tools: Any,
        documents: Any,
        add_generation_prompt: Any,
        continue_final_message: bool | str,
        masks: bool,
        protect: bool,
        chat_template: str | None,
        kwargs: Mapping[str, Any],
    ) -> _Call:
        self.tokenizer  # noqa: B018 - without one, say how to get one before anything else
        if continue_final_message and protect:
            raise ValueError(
                "continue_final_message is not compatible with protect_special_tokens."
            )
        return self._prepare_text(
            tools,
            documents,
            add_generation_prompt,
            continue_final_message,
            masks,
            chat_template,
            kwargs,
        )

    def _prepare_text(
        self,
        tools: Any,
        documents: Any,
        add_generation_prompt: Any,
        continue_final_message: bool | str,
        masks: bool,
        chat_template: str | None,
        kwargs: Mapping[str, Any],
    ) -> _Call:
        call = prepare_call(
            self,
            tools,
            documents,
            add_generation_prompt,
            continue_final_message,
            masks,
            chat_template,
            kwargs,
        )
        call.traced_names = ["messages", "tools", "documents", *kwargs]
        call.generation = tracing().has_generation_blocks(call.source)
        return call

    def _encode(
        self,
        call: _Call,
        chat: list[dict[str, Any]],
        mask: str | None,
        protect: bool,
        text_too: bool,
    ) -> ChatEncoding:
        text, spans, source, caller_spans = tracing().chat_spans(self, call, chat, mask, protect)
        masks = mask is not None
        result = ChatEncoding(encode_chat()(self.tokenizer, text, spans, caller_spans, masks))
        if text_too:
            result["text"] = text
        result.mask_source = source
        return result

    def apply_chat_template(
        self,
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
        mask_final_eos: bool = False,
        **kwargs: Any,
    ) -> Any:
        """transformers' tokenizer.apply_chat_template, with its signature, defaults, results
        and errors (see minijinja_py.chat.apply.apply_chat_template for the full description).

        By default the assistant mask is transformers' own: the template's {% generation %}
        blocks, and zeros (with transformers' warning) for a template without them.  `mask`
        ("generation", "tagged", "inferred" or "auto") chooses other sources; the result's
        `mask_source` attribute says which one was used, and is also a key of the result
        when `mask` is given.  mask_header and mask_final_eos choose the conventions of
        inferred masks (see tokenize).
        """
        from .dropin import apply_to_template

        return apply_to_template(
            self,
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

    def find_control_tokens(
        self,
        messages: Any,
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[dict[str, Any]]:
        """The tokenizer's added tokens found in the caller's data: one `{"source", "token",
        "offset"}` per occurrence, sources named as in `minijinja_py.chat.provenance`,
        so that a server can refuse such input instead of protecting it."""
        from .tokens import find_control_tokens

        conversations, _ = self._conversations(messages)
        data: list[tuple[tuple, Any]] = []
        for chat in conversations:
            data += [(("message", index), message) for index, message in enumerate(chat)]
        data += [(("tool", index), tool) for index, tool in enumerate(tools or [])]
        data += [(("document", index), doc) for index, doc in enumerate(documents or [])]
        data += [(("keyword", key), value) for key, value in kwargs.items()]
        return [dict(found) for found in find_control_tokens(self.tokenizer, data)]

    # responses: the model's output back into a message (chat/responses/) --------------------

    def parse_response(
        self, response: Any, schema: Any = None, *, prefix: Any = None, tools: Any = None
    ) -> Any:
        """transformers' tokenizer.parse_response: text or token ids, one or a batch."""
        from .responses import decode_with, parse_responses

        template = self.response_template if schema is None else schema
        decode = decode_with(lambda: self.tokenizer)  # (token ids need the tokenizer)
        return parse_responses(response, template, prefix=prefix, tools=tools, decode=decode)

    def get_response_parser(
        self, response_template: Any = None, *, prefix: Any = None, tools: Any = None
    ) -> Any:
        """transformers' tokenizer.get_response_parser: a ResponseParser already past `prefix`."""
        from .responses import decode_with, response_parser

        template = self.response_template if response_template is None else response_template
        decode = decode_with(lambda: self.tokenizer)
        return response_parser(template, prefix=prefix, tools=tools, decode=decode)

    # analysis ----------------------------------------------------------------------------------

    def undeclared_variables(self, chat_template: str | None = None) -> set[str]:
        """Names the chosen template reads from its context."""
        return set(self._compile(self._analysis_source(chat_template)).undeclared_variables())

    def _analysis_source(self, chat_template: str | None) -> str:
        if chat_template is None and self.name is None and self._single is None:
            if "default" not in self._templates:
                return next(iter(self._templates.values()))
        return self.select(None, chat_template)

    def capabilities(self, chat_template: str | None = None) -> ChatCapabilities:
        """Which inputs the chosen template renders, found by analysis and probe renders."""
        compiled = self._compile(self._analysis_source(chat_template))
        return probe_capabilities(compiled, self.special_tokens)
