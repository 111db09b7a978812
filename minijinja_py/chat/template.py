"""`ChatTemplate`, the chat layer's face: it loads a model's template(s), special tokens and
tokenizer (held by `ChatModel`, chat/model.py) and runs the stages for each public method:

    inputs (chat/inputs.py)  ->  call (chat/call.py)  ->  render (chat/render.py)
        ->  spans (chat/spans/)  ->  tokens (chat/tokens.py)  ->  drop-in (chat/dropin.py)

Spans, tokens and the drop-in are imported by the first call that needs them, so that a process
that only renders text imports none of them (tests/test_startup.py).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast, overload

from .call import Call, prepare_call, prepare_traced_call, refuse_tokenizer_options
from .capabilities import ChatCapabilities, probe_capabilities
from .inputs import normalise_conversations
from .loading import (
    load_gguf_files,
    load_pretrained_sources,
    pretrained_response_template,
    pretrained_tokenizer_file,
    read_text,
    resolve_model_folder,
)
from .model import ChatModel
from .render import render_chat
from .spans.modes import AssistantSpans, check_mask_mode, mask_reason
from .types import ChatEncoding, TokenizedBatch, TokenizedChat

if TYPE_CHECKING:  # (imported where used: rendering text needs none of them)
    from .spans.traced import ChatProvenance

__all__ = ["ChatTemplate"]


class ChatTemplate(ChatModel):
    """A model's chat template (or its named set of templates) with the tokenizer's special tokens.

    >>> chat = ChatTemplate.from_string("{% for m in messages %}[{{ m.role }}] {{ m.content }}\\n{% endfor %}")
    >>> chat.render([{"role": "user", "content": "Hi"}])
    '[user] Hi\\n'

    `ChatTemplate(template, special_tokens, *, name, offer_reasoning, origin, limits, now,
    tokenizer, files)`: `template` is the source, or named sources (`{"default": ..., "tool_use":
    ...}`); `name` fixes which named template renders (a single template is named `"default"`;
    any other name is refused); `limits` bound each render (see `Limits`); `now` pins the
    instant `strftime_now` formats, for reproducible prompts; `tokenizer` (a
    `tokenizers.Tokenizer`, or the path of a `tokenizer.json` or of its folder, read when first
    needed) is what `tokenize` encodes with; `files` maps template names to the file each was
    read from, which its errors carry as their `name` (the constructors below fill it in).
    """

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

        Errors name the file: the template's errors (syntax or render) carry it as their
        `name`, an unreadable file raises `ValueError`/`OSError` with the path.
        """
        where = os.fspath(path)
        options.setdefault("origin", where)
        options.setdefault("files", {"default": where})
        return cls(read_text(Path(path)), special_tokens, **options)

    @classmethod
    def from_pretrained(
        cls, folder: str | os.PathLike[str], name: str | None = None, **options: Any
    ) -> ChatTemplate:
        """The chat template(s) and special tokens of a model folder (or cached Hub repo id).

        `name` fixes the template among the model's named ones; without it the choice is made at
        each render as transformers makes it.
        """
        root = resolve_model_folder(folder)  # (looked up once for a Hub repo id)
        template, tokens, files = load_pretrained_sources(root)
        options.setdefault("origin", os.fspath(folder))
        options.setdefault("files", files)
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
        names = template if isinstance(template, dict) else ["default"]
        options.setdefault("files", dict.fromkeys(names, os.fspath(path)))
        return cls(template, tokens, name=name, **options)

    def __repr__(self) -> str:
        names = ", ".join(self.sources)
        origin = f" {self.origin}" if self.origin else ""
        return f"<ChatTemplate{origin} [{names}]>"

    def _one(self, messages: Any) -> list[dict[str, Any]]:
        conversations, batched = normalise_conversations(messages, self.offer_reasoning)
        if batched:
            raise TypeError("messages must be one conversation here, not a batch of them")
        return conversations[0]

    # text --------------------------------------------------------------------------------------

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

        Raises:
            TemplateError: the template fails (its subclasses: a `chat_template=` source that
                does not parse, a render error, the sandbox, a limit); `.name` is its file.
            ValueError: an empty conversation, a tool neither a schema nor a function, several
                named templates and none chosen, a `continue_final_message` that cannot be cut.
            TypeError: messages or documents of the wrong shape, data nested too deep, a
                tokenizer option.
            ToolSchemaError: a function given as a tool lacks type hints or docstring entries
                (transformers' `TypeHintParsingException`, `DocstringParsingException`).
            Exception: whatever the caller's own objects raise (`model_dump`, a tool's type
                hints that do not resolve), unchanged.
        """
        refuse_tokenizer_options("render", kwargs)
        call = prepare_call(
            self, tools, documents, add_generation_prompt, continue_final_message, False,
            chat_template, kwargs,
        )
        conversations, batched = normalise_conversations(messages, self.offer_reasoning)
        texts = [render_chat(call, chat)[0] for chat in conversations]
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
        refuse_tokenizer_options("render_many", kwargs)
        call = prepare_call(
            self, tools, documents, add_generation_prompt, continue_final_message, False,
            chat_template, kwargs,
        )
        return [render_chat(call, self._one(chat))[0] for chat in conversations]

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
            self, tools, documents, add_generation_prompt, continue_final_message, True,
            chat_template, kwargs,
        )
        return render_chat(call, self._one(messages), True)

    # spans -------------------------------------------------------------------------------------

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

        Sources are named as in `minijinja_py.chat.spans.traced`; the special tokens are
        template text.  `assistant_spans` are the `{% generation %}` spans when the template
        has such blocks, else inferred by that module's rule.  One conversation per call.
        """
        from .spans.traced import traced_render

        call = prepare_call(
            self, tools, documents, add_generation_prompt, False, False, chat_template, kwargs,
        )
        call.traced_names = ["messages", "tools", "documents", *kwargs]
        return traced_render(self, call, self._one(messages))

    def assistant_spans(
        self,
        messages: Any,
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        add_generation_prompt: bool = False,
        *,
        mask: str = "auto",
        mask_header: str = "auto",
        mask_final_eos: bool = True,
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
                minijinja_py.chat.spans.modes).
            mask_header: The role-header convention of inferred spans.
            mask_final_eos: Whether inferred spans take a final end-of-sequence token (the
                default).
            chat_template: The name of one of the model's templates, or a template's source.
            **kwargs: Template variables.

        Returns:
            An AssistantSpans: text, spans ((start, end) character offsets) and source.

        Raises:
            ValueError: for mask="tagged" on a template neither tagged nor known, or an
                unknown mode or convention.
        """
        from .spans.choose import chat_spans
        from .spans.conventions import check_mask_conventions

        check_mask_mode(mask)
        check_mask_conventions(mask_header, mask_final_eos)
        call = prepare_traced_call(
            self, tools, documents, add_generation_prompt, False, True, chat_template, kwargs,
            mask_header, mask_final_eos,
        )
        text, spans, source, _ = chat_spans(self, call, self._one(messages), mask, False)
        return AssistantSpans(text, [(start, end) for start, end in spans], str(source))

    # tokens ------------------------------------------------------------------------------------

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
        mask_final_eos: bool = True,
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
        mask_final_eos: bool = True,
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
        mask_final_eos: bool = True,
        chat_template: str | None = None,
        **kwargs: Any,
    ) -> TokenizedChat | TokenizedBatch:
        """input_ids and attention_mask (and assistant_masks when asked) of the prompt.

        Equal to transformers' apply_chat_template(..., tokenize=True, return_dict=True,
        return_assistant_tokens_mask=...) on the same model folder for a template with
        {% generation %} blocks: one encode of the whole text without added special tokens.
        For a template without them, transformers gives zeros; here `mask` chooses the
        source (see minijinja_py.chat.spans.modes): by default "auto", the template's blocks, else
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
                minijinja_py.chat.spans.conventions.adjust_spans).
            mask_final_eos: Whether inferred masks take the end-of-sequence token written
                after the whole conversation into its last assistant turn (the default).
            chat_template: The name of one of the model's templates, or a template's source.
            **kwargs: Template variables.

        Returns:
            A dict of lists (of lists, for a batch), with a `mask_source` attribute.

        Raises:
            ValueError: without a tokenizer, for options that do not go together, or for
                mask="tagged" on a template neither tagged nor known.
        """
        call = self._tokens_call(
            tools, documents, add_generation_prompt, continue_final_message,
            return_assistant_tokens_mask, protect_special_tokens, mask, mask_header,
            mask_final_eos, chat_template, kwargs,
        )
        conversations, batched = normalise_conversations(messages, self.offer_reasoning)
        masked = mask if return_assistant_tokens_mask else None
        results = self._encode(call, conversations, masked, protect_special_tokens, return_text)
        if not batched:
            return cast(TokenizedChat, results[0])
        merged = ChatEncoding({key: [result[key] for result in results] for key in results[0]})
        merged.mask_source = [result.mask_source for result in results]
        merged.mask_reason = [result.mask_reason for result in results]
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
        mask_final_eos: bool = True,
        chat_template: str | None = None,
        **kwargs: Any,
    ) -> list[TokenizedChat]:
        """tokenize for each conversation (one dict each), sharing the tools, documents and
        options, as render_many is render's."""
        call = self._tokens_call(
            tools, documents, add_generation_prompt, continue_final_message,
            return_assistant_tokens_mask, protect_special_tokens, mask, mask_header,
            mask_final_eos, chat_template, kwargs,
        )
        masked = mask if return_assistant_tokens_mask else None
        chats = [self._one(chat) for chat in conversations]
        results = self._encode(call, chats, masked, protect_special_tokens, return_text)
        return [cast(TokenizedChat, result) for result in results]

    def _tokens_call(
        self,
        tools: Any,
        documents: Any,
        add_generation_prompt: Any,
        continue_final_message: bool | str,
        masks: bool,
        protect: bool,
        mask: str,
        mask_header: str,
        mask_final_eos: bool,
        chat_template: str | None,
        kwargs: Mapping[str, Any],
    ) -> Call:
        from .call import prepare_tokens_call
        from .spans.conventions import check_mask_conventions

        check_mask_mode(mask)
        check_mask_conventions(mask_header, mask_final_eos)
        return prepare_tokens_call(
            self, tools, documents, add_generation_prompt, continue_final_message, masks, protect,
            chat_template, kwargs, mask_header, mask_final_eos,
        )

    def _encode(
        self,
        call: Call,
        chats: list[list[dict[str, Any]]],
        mask: str | None,
        protect: bool,
        text: bool,
    ) -> list[ChatEncoding]:
        # The spans stage for every conversation, then the tokens stage: the texts that need
        # no protection in one call of the tokenizers library (a batch on its own threads).
        from .spans.choose import chat_spans
        from .tokens import encode_chat, encode_chats

        rendered = [chat_spans(self, call, chat, mask, protect) for chat in chats]
        masks = mask is not None
        if protect:
            encoded = [
                encode_chat(self.tokenizer, one, spans, caller, masks)
                for one, spans, _, caller in rendered
            ]
        else:
            texts = [one for one, _, _, _ in rendered]
            spans = [r[1] for r in rendered]
            encoded = encode_chats(self.tokenizer, texts, spans, masks, self.kept.pieces)
        results = []
        for (one, _, source, _), tokens in zip(rendered, encoded, strict=True):
            result = ChatEncoding(tokens)
            if text:
                result["text"] = one
            result.mask_source = source
            result.mask_reason = mask_reason(source, call.probes)
            results.append(result)
        return results

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
        mask_final_eos: bool = True,
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
            self, conversation, tools=tools, documents=documents, chat_template=chat_template,
            add_generation_prompt=add_generation_prompt,
            continue_final_message=continue_final_message, tokenize=tokenize,
            sanitize_control_tokens=sanitize_control_tokens, padding=padding,
            truncation=truncation, max_length=max_length, return_tensors=return_tensors,
            return_dict=return_dict, return_assistant_tokens_mask=return_assistant_tokens_mask,
            tokenizer_kwargs=tokenizer_kwargs, mask=mask, mask_header=mask_header,
            mask_final_eos=mask_final_eos, **kwargs,
        )

    def find_control_tokens(
        self,
        messages: Any,
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[dict[str, Any]]:
        """The tokenizer's added tokens found in the caller's data: one `{"source", "token",
        "offset"}` per occurrence, sources named as in `minijinja_py.chat.spans.traced`,
        so that a server can refuse such input instead of protecting it."""
        from .tokens import find_control_tokens

        conversations, _ = normalise_conversations(messages, self.offer_reasoning)
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
        """transformers' tokenizer.parse_response: text or token ids, one or a batch, read by
        `schema`, else the model's `response_template`, else the one inferred from the chat
        template (`inferred_response_template`; `response_template_origin` says which)."""
        from .responses import decode_with, parse_responses

        template = self._response_template() if schema is None else schema
        decode = decode_with(lambda: self.tokenizer)  # (token ids need the tokenizer)
        return parse_responses(response, template, prefix=prefix, tools=tools, decode=decode)

    def get_response_parser(
        self, response_template: Any = None, *, prefix: Any = None, tools: Any = None
    ) -> Any:
        """transformers' tokenizer.get_response_parser: a ResponseParser already past `prefix`,
        with the template `parse_response` would use."""
        from .responses import decode_with, response_parser

        template = self._response_template() if response_template is None else response_template
        decode = decode_with(lambda: self.tokenizer)
        return response_parser(template, prefix=prefix, tools=tools, decode=decode)

    @property
    def response_template_origin(self) -> str:
        """Where `parse_response`'s template comes from: "response_template" (the model's, or
        one set) or "inferred" (from the chat template)."""
        return "inferred" if self.response_template is None else "response_template"

    def inferred_response_template(self, chat_template: str | None = None) -> Any:
        """The response template read off the chat template by probe renders, and what it
        cannot give back (`.template`, `.lost`; see minijinja_py.chat.responses.inferred).

        Raises:
            ValueError: when the assistant's content cannot be found in a turn.
        """
        from .responses.inferred import infer_response_template

        source = self.analysis_source(chat_template)
        found = self.kept.responses.get(source)
        if found is None:
            def render(messages: list[dict[str, Any]], prompt: bool, tools: Any) -> str:
                return cast(
                    str,
                    self.render(
                        messages, tools, add_generation_prompt=prompt, chat_template=source
                    ),
                )

            found = infer_response_template(render)
            # (a source passed as chat_template= may be any text: kept while the bytes allow)
            self.kept.responses.put(source, found, len(source) + len(repr(found.template)) + 1024)
        return found

    def _response_template(self) -> Any:
        if self.response_template is not None:
            return self.response_template
        return self.inferred_response_template().template

    # analysis ----------------------------------------------------------------------------------

    def undeclared_variables(self, chat_template: str | None = None) -> set[str]:
        """Names the chosen template reads from its context."""
        compiled = self.compiled_source(self.analysis_source(chat_template))
        return set(compiled.undeclared_variables())

    def capabilities(self, chat_template: str | None = None) -> ChatCapabilities:
        """Which inputs the chosen template renders, found by analysis and probe renders."""
        compiled = self.compiled_source(self.analysis_source(chat_template))
        return probe_capabilities(compiled, self.special_tokens)
