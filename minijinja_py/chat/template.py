"""The :class:`ChatTemplate`: a model's chat template(s) rendered as transformers renders them."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, overload

from ..errors import TemplateError
from ..provenance import check_traceable, keep_traced, track_value
from ..sandbox import Limits
from .capabilities import ChatCapabilities, probe_capabilities
from .inputs import REASONING_FIELDS, normalise_conversations, to_template_data
from .kept import COMPILED_BYTES, PROBES_BYTES, TOOLS_BYTES, KeptBytes, compiled_size
from .loading import (
    load_gguf_files,
    load_pretrained_files,
    pretrained_tokenizer_file,
    read_text,
    resolve_model_folder,
)
from .provenance import (
    ChatProvenance,
    TurnTexts,
    chat_provenance,
    has_generation_blocks,
    probe_turn_texts,
)
from .schema import tool_to_schema

__all__ = ["ChatTemplate"]

_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "


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
    ) -> None:
        """``template``: the source, or named sources (``{"default": ..., "tool_use": ...}``).

        ``name`` fixes which named template renders (a single template is named ``"default"``;
        any other name is refused).  ``limits`` bound each render (see :class:`Limits`);
        ``now`` pins the instant ``strftime_now`` formats, for reproducible prompts.
        ``tokenizer`` (a ``tokenizers.Tokenizer``, or the path of a ``tokenizer.json`` or of its
        folder, read when first needed) is what :meth:`tokenize` encodes with.
        """
        if isinstance(template, str):
            self._templates: dict[str, str] = {}
            self._single: str | None = template
        elif isinstance(template, Mapping) and template:
            self._templates = {str(k): str(v) for k, v in template.items()}
            self._single = None
        else:
            raise ValueError("a chat template must be a string or a non-empty mapping of names")
        if name is not None and name not in self.sources:
            raise ValueError(
                f"no chat template named {name!r}; available template names are "
                f"{sorted(self.sources)}"
            )
        self.name: str | None = name if self._single is None else None
        self.special_tokens: dict[str, Any] = {
            str(key): to_template_data(value, f"special token {key!r}")
            for key, value in (special_tokens or {}).items()
        }
        self.offer_reasoning = offer_reasoning
        self.origin = origin
        self.limits = limits
        if now is not None and not isinstance(now, datetime):
            raise TypeError(f"now must be a datetime.datetime, not {type(now).__name__}")
        self.now = now
        self._tokenizer = tokenizer
        self._compiled: dict[str, Any] = {}  # (the model's own templates)
        self._kept_caches()
        for source in self.sources.values():
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
        """A chat template from a ``.jinja`` file (read as UTF-8 with universal newlines).

        Errors name the file: a syntax error carries it as its ``name``, an unreadable file
        raises ``ValueError``/``OSError`` with the path.
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

        ``name`` fixes the template among the model's named ones; without it the choice is made at
        each render as transformers makes it.
        """
        root = resolve_model_folder(folder)  # (looked up once for a Hub repo id)
        template, tokens = load_pretrained_files(root)
        options.setdefault("origin", os.fspath(folder))
        if "tokenizer" not in options:
            options["tokenizer"] = pretrained_tokenizer_file(root)
        return cls(template, tokens, name=name, **options)

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
        self.__dict__.update({"limits": None, "now": None, **state})
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
        """Template sources by name (a single template is named ``"default"``)."""
        if self._single is not None:
            return {"default": self._single}
        return dict(self._templates)

    @property
    def template_names(self) -> list[str]:
        return list(self.sources)

    def select(self, tools: Any = None, chat_template: str | None = None) -> str:
        """The template source transformers would use for this call.

        ``chat_template`` may name one of the model's templates or be a template's source text.
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
        """The engine's compiled :class:`~minijinja_py.Template` for this call."""
        return self._compile(self.select(tools, chat_template))

    # rendering ---------------------------------------------------------------------------------

    def _prepare(
        self,
        tools: Any,
        documents: Any,
        add_generation_prompt: Any,
        continue_final_message: bool | str,
        spans: bool,
        chat_template: str | None,
        kwargs: Mapping[str, Any],
    ) -> _Call:
        source = self.select(tools, chat_template)
        if continue_final_message:
            if add_generation_prompt:
                raise ValueError(
                    "continue_final_message and add_generation_prompt are not compatible. Use "
                    "continue_final_message when you want the model to continue the final message, "
                    "and add_generation_prompt when you want to add a header that will prompt it to "
                    "start a new assistant message instead."
                )
            if spans:
                raise ValueError(
                    "continue_final_message is not compatible with return_assistant_tokens_mask."
                )
        compiled = self._compile(source)
        tool_schemas = None
        if tools is not None:
            tool_schemas = to_template_data([tool_to_schema(tool) for tool in tools], "tools")
        if documents is not None:
            for document in documents:
                if not isinstance(document, dict):
                    raise TypeError(
                        "Documents should be a list of dicts with 'title' and 'text' keys!"
                    )
            documents = to_template_data(documents, "documents")
        context: dict[str, Any] = {}
        if self.now is not None:  # first, so that a caller's own strftime_now still wins
            context["strftime_now"] = _pinned_clock(self.now)
        context.update(self.special_tokens)
        for key, value in kwargs.items():
            context[key] = to_template_data(value, f"keyword argument {key!r}")
        context.update(
            tools=tool_schemas,
            documents=documents,
            add_generation_prompt=to_template_data(add_generation_prompt, "add_generation_prompt"),
        )
        return _Call(compiled, source, context, continue_final_message)

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

        ``messages`` is one conversation (a list of message dicts) or a batch of them (a list of
        such lists), as for transformers' ``apply_chat_template``.  ``continue_final_message``
        (``True`` for ``content``, or the name of another field of the final message) ends the
        text right after that message's text, so the model continues it.  Other keyword
        arguments become template variables (overriding special tokens).  See the module
        :mod:`minijinja_py.chat.inputs` for how every value is turned into template data.
        """
        call = self._prepare(
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
        """:meth:`render` for each conversation, sharing the tools, documents and options."""
        call = self._prepare(
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
        """The text and the ``(start, end)`` character spans of its ``{% generation %}`` blocks.

        The spans equal transformers' generation indices (``return_assistant_tokens_mask``), and,
        as there, ``continue_final_message`` is refused with a ``ValueError``.  One conversation
        per call.
        """
        call = self._prepare(
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
        """The text of :meth:`render`, where each character came from, and the assistant spans.

        Sources are named as in :mod:`minijinja_py.chat.provenance`; the special tokens are
        template text.  ``assistant_spans`` are the ``{% generation %}`` spans when the template
        has such blocks, else inferred by that module's rule.  One conversation per call.
        """
        call = self._prepare(
            tools, documents, add_generation_prompt, False, False, chat_template, kwargs
        )
        call.traced_names = ["messages", "tools", "documents", *kwargs]
        return self._traced(call, self._single_chat(messages))

    def _traced(self, call: _Call, chat: list[dict[str, Any]]) -> ChatProvenance:
        names = call.traced_names or ["messages", "tools", "documents"]
        context = {**call.context, "messages": chat}
        if context.get("tools") is not None and "tools" in names:
            context["tools"] = self._sourced_tools(context["tools"])
            names = [name for name in names if name != "tools"]
        # (the call's data and chat are copies made by this object: traced in place)
        traced = call.compiled.trace(context, names, private=True)
        probes = None
        if not has_generation_blocks(call.source):
            if call.probes is None:
                # The probes read the template's headers and markers, which depend on its
                # options (enable_thinking, ...), not on the tools or documents: kept per options.
                key = (call.source, _option_key(call.context))
                call.probes = self._probes.get(key)
                if call.probes is None:

                    def render(probe: list[dict[str, Any]], prompt: bool) -> str:
                        context = {
                            **call.context,
                            "messages": probe,
                            "add_generation_prompt": prompt,
                        }
                        return call.compiled.render(context)

                    call.probes = probe_turn_texts(render)
                    self._probes.put(key, call.probes, _probes_size(key, call.probes))
            probes = call.probes
        return chat_provenance(traced, chat, probes)

    def _sourced_tools(self, tools: Any) -> Any:
        """``tools`` (this call's template data) with its strings traced, from the last calls'
        when they passed the same tools.

        Tools repeat from call to call (every row of a dataset may offer the same ones), and
        tracing a schema's strings (and placing them in its JSON) is much of what provenance
        costs a call with tools.  The key is the data's ``repr``, which tells apart every value
        template data holds (``1``, ``True``, ``"1"``, a tuple and a list); a template cannot
        change what it is given, so the traced copy is shared."""
        check_traceable(tools, ("tools",))  # (shared lists would make a repr of a huge tree)
        key = repr(tools)
        sourced = self._traced_tools.get(key)
        if sourced is None:
            sourced = track_value(tools, ("tools",), in_place=True)  # (this call's own copy)
            # (the traced copy's bytes, about, as keep_traced counts them, and its key's)
            size = keep_traced(sourced) + _TRACED_BYTES_PER_CHAR * len(key) + _TRACED_BYTES_EACH
            self._traced_tools.put(key, sourced, size)
        return sourced

    # tokens ------------------------------------------------------------------------------------

    @property
    def tokenizer(self) -> Any:
        """The ``tokenizers.Tokenizer`` that :meth:`tokenize` uses (loaded on first use)."""
        if self._tokenizer is None:
            raise ValueError(
                "this chat template has no tokenizer: load it with from_pretrained() from a folder "
                "holding tokenizer.json, or pass tokenizer="
            )
        if isinstance(self._tokenizer, (str, os.PathLike)):
            from .tokens import load_tokenizer

            self._tokenizer = load_tokenizer(self._tokenizer)
        return self._tokenizer

    def tokenize(
        self,
        messages: Any,
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        add_generation_prompt: bool = False,
        *,
        continue_final_message: bool | str = False,
        return_assistant_tokens_mask: bool = False,
        protect_special_tokens: bool = False,
        return_text: bool = False,
        chat_template: str | None = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        """``input_ids`` and ``attention_mask`` (and ``assistant_masks`` when asked) of the prompt.

        Equal to transformers' ``apply_chat_template(..., tokenize=True, return_dict=True,
        return_assistant_tokens_mask=...)`` on the same model folder: one encode of the whole text
        without added special tokens.  The assistant mask covers the tokens of the assistant
        spans of :meth:`render_with_provenance` (the ``{% generation %}`` blocks, or the inferred
        turns of a template without them).  ``protect_special_tokens`` encodes the added tokens
        that occur in the caller's data as ordinary text; those the template writes stay control
        tokens.  A batch of conversations gives a list per key.  ``continue_final_message``
        cuts the text as :meth:`render` does; as in transformers it does not go with
        ``return_assistant_tokens_mask``, nor (here) with ``protect_special_tokens``.
        ``return_text`` adds ``text``, the prompt the ids encode (rendered once for both).
        """
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
        conversations, batched = self._conversations(messages)
        results = [
            self._encode(
                call, chat, return_assistant_tokens_mask, protect_special_tokens, return_text
            )
            for chat in conversations
        ]
        if not batched:
            return results[0]
        return {key: [result[key] for result in results] for key in results[0]}

    def tokenize_many(
        self,
        conversations: Iterable[Any],
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        add_generation_prompt: bool = False,
        *,
        continue_final_message: bool | str = False,
        return_assistant_tokens_mask: bool = False,
        protect_special_tokens: bool = False,
        return_text: bool = False,
        chat_template: str | None = None,
        **kwargs: Any,
    ) -> list[dict[str, Any]]:
        """:meth:`tokenize` for each conversation (one dict each), sharing the tools, documents
        and options, as :meth:`render_many` is :meth:`render`'s."""
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
        return [
            self._encode(
                call,
                self._single_chat(chat),
                return_assistant_tokens_mask,
                protect_special_tokens,
                return_text,
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
        call = self._prepare(
            tools,
            documents,
            add_generation_prompt,
            continue_final_message,
            masks,
            chat_template,
            kwargs,
        )
        call.traced_names = ["messages", "tools", "documents", *kwargs]
        call.generation = masks and has_generation_blocks(call.source)
        return call

    def _encode(
        self, call: _Call, chat: list[dict[str, Any]], masks: bool, protect: bool, text_too: bool
    ) -> dict[str, Any]:
        from .tokens import encode_chat

        caller_spans = None
        spans: list[tuple[int, int]] = []
        if protect or (masks and not call.generation):
            traced = self._traced(call, chat)
            text, spans = traced.text, traced.assistant_spans
            if protect:
                caller_spans = traced.caller_spans()
        elif masks:
            text, spans = self._render_chat(call, chat, True)
        else:
            text = self._render_chat(call, chat, False)[0]
        encoded = encode_chat(self.tokenizer, text, spans, caller_spans)
        if not masks:
            del encoded["assistant_masks"]
        if text_too:
            encoded["text"] = text
        return encoded

    def find_control_tokens(
        self,
        messages: Any,
        tools: Sequence[Any] | None = None,
        documents: Sequence[Any] | None = None,
        **kwargs: Any,
    ) -> list[dict[str, Any]]:
        """The tokenizer's added tokens found in the caller's data: one ``{"source", "token",
        "offset"}`` per occurrence, sources named as in :mod:`minijinja_py.chat.provenance`,
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


@dataclasses.dataclass
class _Call:
    """What one render call shares among its conversations."""

    compiled: Any
    source: str
    context: dict[str, Any]
    continue_final_message: bool | str
    #: The context variables whose strings a render with provenance traces.
    traced_names: list[str] = dataclasses.field(default_factory=list)
    #: The generation prompt and end-of-turn marker, probed once per call.
    probes: TurnTexts | None = None
    #: Whether the template has {% generation %} blocks (asked once per tokenize call).
    generation: bool = False


# What a traced tool list's key (its repr) holds per character, about, and each entry.
_TRACED_BYTES_PER_CHAR = 2
_TRACED_BYTES_EACH = 4096


def _probes_size(key: tuple, probes: TurnTexts) -> int:
    # (the source, the options' names and values, and the texts read: about their characters)
    source, options = key
    size = len(source) + sum(map(len, probes)) + 1024
    for name, value in options:
        size += len(name) + (len(value) if isinstance(value, str) else 32) + 64
    return size


def _option_key(context: dict[str, Any]) -> tuple:
    return tuple(
        (key, value)
        for key, value in context.items()
        if key not in ("tools", "documents") and isinstance(value, (str, int, float, bool))
    )


def _tag_final_message(
    chat: list[dict[str, Any]], continue_final_message: bool | str, source: str
) -> Any:
    # Marks where the final message's text ends, as transformers does, and returns that text.
    if not chat:
        raise ValueError("continue_final_message is set but the conversation is empty!")
    field = continue_final_message if isinstance(continue_final_message, str) else "content"
    last = chat[-1]
    final_message = last.get(field)
    if final_message is None:
        raise ValueError(
            f'continue_final_message is set but the final message has no "{field}" to continue!'
        )
    fields = [field]
    if field in REASONING_FIELDS:  # reasoning is copied under several names: tag each copy
        fields = [name for name in REASONING_FIELDS if last.get(name) == final_message]
    if not any(name in source for name in fields):
        raise ValueError(
            f'continue_final_message is set to "{field}" but this is not an accepted field '
            "in the chat_template"
        )
    if isinstance(final_message, (list, tuple)):
        for block in reversed(final_message):
            if "text" in block:
                final_message = block["text"]
                block["text"] = block["text"] + _CONTINUE_TAG
                return final_message
        raise ValueError(
            "continue_final_message is set but we could not find any text to continue in the "
            "final message!"
        )
    for name in fields:
        last[name] = last[name] + _CONTINUE_TAG
    return final_message


def _cut_at_tag(rendered: str, final_message: Any) -> str:
    final = final_message.strip() if isinstance(final_message, str) else final_message
    tag = _CONTINUE_TAG.strip()
    if final not in rendered or tag not in rendered:
        raise ValueError(
            "continue_final_message is set but the final message does not appear in the chat after "
            "applying the chat template! This can happen if the chat template deletes portions of "
            "the final message. Please verify the chat template and final message in your chat to "
            "ensure they are compatible."
            f"Final message to continue: {final}\nRendered chat:\n{rendered}"
        )
    at = rendered.rindex(tag)
    if rendered[at : at + len(_CONTINUE_TAG)] == _CONTINUE_TAG:
        return rendered[:at]
    return rendered[:at].rstrip()


_ENVIRONMENTS: dict[Limits | None, Any] = {}


def _environment(limits: Limits | None = None) -> Any:
    environment = _ENVIRONMENTS.get(limits)
    if environment is None:
        from ..environment import chat_environment

        if len(_ENVIRONMENTS) >= 16:  # distinct Limits are few; never let the cache grow unbounded
            _ENVIRONMENTS.clear()
        environment = _ENVIRONMENTS[limits] = chat_environment(limits)
    return environment


_MAX_TIME_FORMAT = 1_000


def _pinned_clock(now: datetime) -> Any:
    def strftime_now(format: str) -> str:
        if not isinstance(format, str) or len(format) > _MAX_TIME_FORMAT:
            raise ValueError(
                f"strftime_now takes a format string of at most {_MAX_TIME_FORMAT} characters"
            )
        return now.strftime(format)

    return strftime_now
