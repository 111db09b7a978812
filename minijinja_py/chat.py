"""The Hugging Face chat layer: load a model's chat template and render conversations with it.

:class:`ChatTemplate` renders the way ``transformers`` (5.x) ``apply_chat_template(...,
tokenize=False)`` does: the same template choice among a model's named templates, the same
variables (``messages``, ``tools``, ``documents``, ``add_generation_prompt``, the tokenizer's special
tokens, then the caller's keyword arguments, which win), tools given as Python functions described
by :func:`minijinja_py.schema.get_json_schema`, the same ``continue_final_message`` cut and the same
``ValueError``/``TypeError`` messages.

Inputs are rebuilt as plain JSON-like data before a template sees them (see
:func:`to_template_data`), and an assistant message's reasoning is offered under both
``reasoning_content`` and ``thinking`` so that templates written for either field see it.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .schema import tool_to_schema

__all__ = [
    "ChatCapabilities",
    "ChatTemplate",
    "SPECIAL_TOKEN_NAMES",
    "load_pretrained_files",
    "to_template_data",
]

SPECIAL_TOKEN_NAMES = (
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
)
_CONTINUE_TAG = "CONTINUE_FINAL_MESSAGE_TAG "
_REASONING_FIELDS = ("reasoning_content", "thinking")


# -- input data ---------------------------------------------------------------------------------


def to_template_data(value: Any) -> Any:
    """``value`` rebuilt from plain JSON-like data, as a template should see it.

    ``None``/``bool``/``int``/``float``/``str`` stay (subclasses such as enums become the plain
    value), dicts/lists/tuples are rebuilt (tuples as lists), dataclass instances and pydantic
    models become dicts of their fields, and anything else becomes the string ``"<TypeName>"``.
    Input nested too deeply (or containing itself) raises ``ValueError``.
    """
    try:
        return _plain(value)
    except RecursionError:
        raise ValueError("chat input is nested too deeply (or contains itself)") from None


_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any) -> Any:
    cls = type(value)
    if cls in _SCALAR_TYPES:
        return value
    if cls is dict:  # the common case, kept tight: most values are plain scalars
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                key = _key(key)
            out[key] = item if type(item) in _SCALAR_TYPES else _plain(item)
        return out
    if cls is list:
        return [item if type(item) in _SCALAR_TYPES else _plain(item) for item in value]
    return _plain_other(value, cls)


def _plain_other(value: Any, cls: type) -> Any:
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):  # bool cannot be subclassed, so this is an int subclass
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    if isinstance(value, Mapping):
        return {_key(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)  # pydantic 2
    if callable(dump) and not isinstance(value, type):
        return _plain(dump())
    if hasattr(cls, "__fields__") and callable(getattr(value, "dict", None)):  # pydantic 1
        return _plain(value.dict())
    return f"<{cls.__name__}>"


def _key(key: Any) -> Any:
    plain = _plain(key)
    return plain if isinstance(plain, (str, int, float, bool)) or plain is None else str(plain)


def _offer_reasoning(message: Any) -> Any:
    if isinstance(message, dict):
        present = [f for f in _REASONING_FIELDS if f in message]
        if len(present) == 1:
            other = (
                _REASONING_FIELDS[1] if present[0] == _REASONING_FIELDS[0] else _REASONING_FIELDS[0]
            )
            message[other] = message[present[0]]
    return message


def _token_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        return value["content"]
    return None


# -- loading ------------------------------------------------------------------------------------


def _read_text(path: Path) -> str:
    # Universal newlines, as transformers reads template files.
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _read_json(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: invalid JSON: {exc}") from None


def _template_field(value: Any, where: Path) -> str | dict[str, str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        templates: dict[str, str] = {}
        for item in value:
            if not (isinstance(item, Mapping) and "name" in item and "template" in item):
                raise ValueError(
                    f"{where}: chat_template list items must be objects with 'name' and 'template'"
                )
            templates[str(item["name"])] = str(item["template"])
        return templates
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items()}
    raise ValueError(f"{where}: chat_template must be a string or a list of templates")


def _resolve_model_folder(folder: str | os.PathLike[str]) -> Path:
    path = Path(folder)
    if path.is_dir():
        return path
    try:
        from huggingface_hub import snapshot_download  # type: ignore[import-not-found]
    except ImportError:
        raise FileNotFoundError(
            f"{os.fspath(folder)}: no such model folder (install huggingface_hub to look it up "
            "as a Hub repo id in the local cache)"
        ) from None
    try:
        return Path(snapshot_download(repo_id=os.fspath(folder), local_files_only=True))
    except Exception as exc:  # the Hub library's own not-found/validation errors
        raise FileNotFoundError(
            f"{os.fspath(folder)}: no such model folder, and not in the Hugging Face cache "
            f"({type(exc).__name__})"
        ) from None


def load_pretrained_files(
    folder: str | os.PathLike[str],
) -> tuple[str | dict[str, str], dict[str, Any]]:
    """The chat template(s) and special tokens of a local model folder, as transformers reads them.

    Templates: ``chat_template.jinja`` (which replaces any template of ``tokenizer_config.json``)
    and ``additional_chat_templates/<name>.jinja``; else ``tokenizer_config.json``'s
    ``chat_template`` (a string, or a list of ``{"name", "template"}``); else the legacy
    ``chat_template.json``.  Special tokens come from ``tokenizer_config.json``, completed (and,
    for configs without ``added_tokens_decoder``, overridden) by ``special_tokens_map.json``.
    """
    root = _resolve_model_folder(folder)
    config_path = root / "tokenizer_config.json"
    config = _read_json(config_path) if config_path.is_file() else {}
    if not isinstance(config, Mapping):
        raise ValueError(f"{config_path}: expected a JSON object")

    template: str | dict[str, str] | None = _template_field(
        config.get("chat_template"), config_path
    )
    legacy_path = root / "chat_template.json"
    if template is None and legacy_path.is_file():
        legacy = _read_json(legacy_path)
        if isinstance(legacy, Mapping):
            template = _template_field(legacy.get("chat_template"), legacy_path)
    jinja_path = root / "chat_template.jinja"
    if jinja_path.is_file():
        template = _read_text(jinja_path)
    extra_dir = root / "additional_chat_templates"
    extra = sorted(extra_dir.glob("*.jinja")) if extra_dir.is_dir() else []
    if extra:
        templates: dict[str, str] = {}
        if isinstance(template, str):
            templates["default"] = template
        elif isinstance(template, dict):
            templates.update(template)
        for path in extra:
            templates[path.stem] = _read_text(path)
        template = templates
    if template is None or template == {}:
        raise ValueError(
            f"{os.fspath(folder)}: no chat template found (looked for chat_template.jinja, "
            "additional_chat_templates/, tokenizer_config.json and chat_template.json)"
        )

    tokens: dict[str, Any] = {}
    for name in SPECIAL_TOKEN_NAMES:
        text = _token_text(config.get(name))
        if text is not None:
            tokens[name] = text
    map_path = root / "special_tokens_map.json"
    if map_path.is_file():
        special_map = _read_json(map_path)
        override = "added_tokens_decoder" not in config
        if isinstance(special_map, Mapping):
            for name in SPECIAL_TOKEN_NAMES:
                text = _token_text(special_map.get(name))
                if text is not None and (override or name not in tokens):
                    tokens[name] = text
            config = {**special_map, **config} if not override else {**config, **special_map}
    extra_tokens = config.get("additional_special_tokens")
    if isinstance(extra_tokens, list):
        texts = [_token_text(item) for item in extra_tokens]
        tokens["additional_special_tokens"] = [t for t in texts if t is not None]
    return template, tokens


# -- capabilities -------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ChatCapabilities:
    """What a chat template does with each kind of input, found by analysis and probe renders."""

    supports_system_role: bool = False
    supports_tools: bool = False
    supports_tool_calls: bool = False
    supports_string_arguments: bool = False
    supports_object_arguments: bool = False
    requires_object_arguments: bool = False
    supports_parallel_tool_calls: bool = False
    supports_tool_responses: bool = False
    supports_tool_call_id: bool = False
    supports_thinking: bool = False
    reasoning_field: str | None = None
    supports_enable_thinking: bool = False
    supports_documents: bool = False
    supports_typed_content: bool = False
    requires_typed_content: bool = False
    requires_non_null_content: bool = False
    supports_generation_spans: bool = False
    variables: frozenset[str] = frozenset()

    def as_dict(self) -> dict[str, Any]:
        """The flags as a plain dict (``variables`` as a sorted list)."""
        out = dataclasses.asdict(self)
        out["variables"] = sorted(self.variables)
        return out


_USER_NEEDLE = "<User Needle>"
_SYSTEM_NEEDLE = "<System Needle>"
_ARGS_NEEDLE = {"argument_needle": "print('Hello, World!')"}
_PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "some_tool",
        "description": "Some tool.",
        "parameters": {
            "type": "object",
            "properties": {"arg": {"type": "string", "description": "Some argument."}},
            "required": ["arg"],
        },
    },
}


def _tool_call(name: str, arguments: Any, call_id: str = "call_1___") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"arguments": arguments, "name": name}}


def _shows_arguments(text: str) -> bool:
    return '"argument_needle":' in text or "'argument_needle':" in text


# -- the template -------------------------------------------------------------------------------


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
    ) -> None:
        if isinstance(template, str):
            self._templates: dict[str, str] = {}
            self._single: str | None = template
        elif isinstance(template, Mapping) and template:
            self._templates = {str(k): str(v) for k, v in template.items()}
            self._single = None
        else:
            raise ValueError("a chat template must be a string or a non-empty mapping of names")
        if name is not None and self._single is None and name not in self._templates:
            raise ValueError(
                f"no chat template named {name!r}; available template names are "
                f"{sorted(self._templates)}"
            )
        self.name = name
        self.special_tokens: dict[str, Any] = dict(special_tokens or {})
        self.offer_reasoning = offer_reasoning
        self.origin = origin
        self._compiled: dict[str, Any] = {}
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
        """A chat template from a ``.jinja`` file (read as UTF-8 with universal newlines)."""
        options.setdefault("origin", os.fspath(path))
        return cls(_read_text(Path(path)), special_tokens, **options)

    @classmethod
    def from_pretrained(
        cls, folder: str | os.PathLike[str], name: str | None = None, **options: Any
    ) -> ChatTemplate:
        """The chat template(s) and special tokens of a model folder (or cached Hub repo id).

        ``name`` fixes the template among the model's named ones; without it the choice is made at
        each render as transformers makes it.
        """
        template, tokens = load_pretrained_files(folder)
        options.setdefault("origin", os.fspath(folder))
        return cls(template, tokens, name=name, **options)

    @classmethod
    def from_gguf(
        cls, path: str | os.PathLike[str], name: str | None = None, **options: Any
    ) -> ChatTemplate:
        """The chat template(s) and special tokens stored in a GGUF file's metadata."""
        from .gguf import read_gguf_metadata

        meta = read_gguf_metadata(path)
        templates = meta.chat_templates
        if not templates:
            raise ValueError(f"{os.fspath(path)}: no tokenizer.chat_template in the GGUF metadata")
        template: str | dict[str, str] = templates
        if list(templates) == ["default"]:
            template = templates["default"]
        options.setdefault("origin", os.fspath(path))
        return cls(template, meta.special_tokens, name=name, **options)

    # pickling: sources travel, compiled forms are rebuilt on first use ------------------------

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_compiled"] = {}
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

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
            compiled = _environment().from_string(source)
            self._compiled[source] = compiled
        return compiled

    def compiled(self, tools: Any = None, chat_template: str | None = None) -> Any:
        """The engine's compiled :class:`~minijinja_py.Template` for this call."""
        return self._compile(self.select(tools, chat_template))

    # rendering ---------------------------------------------------------------------------------

    def _prepare(
        self,
        tools: Any,
        documents: Any,
        add_generation_prompt: bool,
        continue_final_message: bool | str,
        spans: bool,
        chat_template: str | None,
    ) -> tuple[Any, str, Any, Any]:
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
        source = self.select(tools, chat_template)
        compiled = self._compile(source)
        tool_schemas = None
        if tools is not None:
            tool_schemas = [to_template_data(tool_to_schema(tool)) for tool in tools]
        if documents is not None:
            documents = to_template_data(documents)
            for document in documents:
                if not isinstance(document, dict):
                    raise TypeError(
                        "Documents should be a list of dicts with 'title' and 'text' keys!"
                    )
        return compiled, source, tool_schemas, documents

    def _messages(self, messages: Any) -> list[Any]:
        if hasattr(messages, "messages") and not isinstance(messages, (list, tuple, Mapping)):
            messages = messages.messages
        chat = to_template_data(messages)
        if not isinstance(chat, list):
            raise TypeError(
                f"messages must be a list of message dicts, not {type(messages).__name__}"
            )
        if chat and isinstance(chat[0], list):
            raise TypeError("render() takes one conversation; use render_many() for a batch")
        return chat

    def _render_one(
        self,
        messages: Any,
        tools: Any,
        documents: Any,
        add_generation_prompt: bool,
        continue_final_message: bool | str,
        kwargs: dict[str, Any],
        spans: bool,
        chat_template: str | None,
        prepared: tuple[Any, str, Any, Any] | None = None,
    ) -> tuple[str, list[tuple[int, int]]]:
        compiled, source, tool_schemas, docs = prepared or self._prepare(
            tools, documents, add_generation_prompt, continue_final_message, spans, chat_template
        )
        chat = self._messages(messages)
        final_message: Any = None
        if continue_final_message:
            field = continue_final_message if isinstance(continue_final_message, str) else "content"
            last = chat[-1] if chat else {}
            final_message = last.get(field) if isinstance(last, dict) else None
            if final_message is None:
                raise ValueError(
                    f'continue_final_message is set but the final message has no "{field}" '
                    "to continue!"
                )
            if field not in source:
                raise ValueError(
                    f'continue_final_message is set to "{field}" but this is not an accepted field '
                    "in the chat_template"
                )
            if isinstance(final_message, list):
                for block in reversed(final_message):
                    if "text" in block:
                        final_message = block["text"]
                        block["text"] = block["text"] + _CONTINUE_TAG
                        break
                else:
                    raise ValueError(
                        "continue_final_message is set but we could not find any text to continue "
                        "in the final message!"
                    )
            else:
                last[field] = last[field] + _CONTINUE_TAG
        if self.offer_reasoning:  # after the tag, so that both names carry it
            chat = [_offer_reasoning(message) for message in chat]
        context = {**self.special_tokens, **kwargs}
        context.update(
            messages=chat,
            tools=tool_schemas,
            documents=docs,
            add_generation_prompt=add_generation_prompt,
        )
        indices: list[tuple[int, int]] = []
        if spans:
            text, indices = compiled.render_with_spans(context)
            indices = [tuple(span) for span in indices]
        else:
            text = compiled.render(context)
        if continue_final_message:
            text = _cut_at_tag(text, final_message)
        return text, indices

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
    ) -> str:
        """The conversation as the model's prompt text.

        ``continue_final_message`` (``True`` for ``content``, or the name of another field of the
        final message) ends the text right after that message's text, so the model continues it.
        Other keyword arguments become template variables (overriding special tokens).
        """
        return self._render_one(
            messages,
            tools,
            documents,
            add_generation_prompt,
            continue_final_message,
            kwargs,
            False,
            chat_template,
        )[0]

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
        prepared = self._prepare(
            tools, documents, add_generation_prompt, continue_final_message, False, chat_template
        )
        return [
            self._render_one(
                messages,
                tools,
                documents,
                add_generation_prompt,
                continue_final_message,
                kwargs,
                False,
                chat_template,
                prepared,
            )[0]
            for messages in conversations
        ]

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
        as there, ``continue_final_message`` is refused with a ``ValueError``.
        """
        return self._render_one(
            messages,
            tools,
            documents,
            add_generation_prompt,
            continue_final_message,
            kwargs,
            True,
            chat_template,
        )

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
        """Which inputs the chosen template renders, found by analysis and probe renders.

        Modelled on llama.cpp's template capability detection: each probe renders a tiny
        conversation holding a needle string and looks for the needle in the output (a probe that
        fails to render counts as "not supported").
        """
        compiled = self._compile(self._analysis_source(chat_template))
        variables = frozenset(compiled.undeclared_variables())

        def probe(messages: list[Any], **extra: Any) -> str:
            context = {**self.special_tokens, "tools": None, "documents": None}
            context["add_generation_prompt"] = False
            context.update(extra)
            context["messages"] = messages
            try:
                return compiled.render(context)
            except Exception:
                return ""

        user_str = {"role": "user", "content": _USER_NEEDLE}
        user_typed = {"role": "user", "content": [{"type": "text", "text": _USER_NEEDLE}]}
        shows_str = _USER_NEEDLE in probe([user_str])
        shows_typed = _USER_NEEDLE in probe([user_typed])
        requires_typed = not shows_str and shows_typed
        user = user_typed if requires_typed else user_str

        def text(value: str) -> Any:
            return [{"type": "text", "text": value}] if requires_typed else value

        system = {"role": "system", "content": text(_SYSTEM_NEEDLE)}
        supports_system = _SYSTEM_NEEDLE in probe([system, user])
        supports_tools = "some_tool" in probe([user], tools=[_PROBE_TOOL])

        def calls_message(calls: list[Any]) -> dict[str, Any]:
            return {"role": "assistant", "content": None, "tool_calls": calls}

        def render_calls(calls: list[Any], *rest: Any) -> str:
            out = probe([user, calls_message(calls), *rest])
            if not out:  # some templates need a string content next to tool calls
                message = {**calls_message(calls), "content": ""}
                out = probe([user, message, *rest])
            return out

        args_json = json.dumps(_ARGS_NEEDLE)
        string_args = _shows_arguments(render_calls([_tool_call("ipython", args_json)]))
        # An object may also be spread into the text (``<parameter=argument_needle>``).
        object_args = "argument_needle" in render_calls([_tool_call("ipython", _ARGS_NEEDLE)])
        supports_calls = string_args or object_args
        out_empty = probe([user, {"role": "assistant", "content": ""}])
        out_null = probe([user, {"role": "assistant", "content": None}])
        parallel = responses = call_id = False
        if supports_calls:
            args = _ARGS_NEEDLE if (object_args and not string_args) else args_json
            first, second = _tool_call("test_tool1", args), _tool_call("test_tool2", args)
            out = render_calls([first, second])
            parallel = "test_tool1" in out and "test_tool2" in out
            response = {
                "role": "tool",
                "name": "test_tool1",
                "content": "Some response!",
                "tool_call_id": "call_911_",
            }
            out = render_calls([first], response)
            responses = "Some response!" in out
            call_id = "call_911_" in out

        reasoning_field = None
        for field in _REASONING_FIELDS:
            thought = {"role": "assistant", "content": text("Answer."), field: "<Thought Needle>"}
            if "<Thought Needle>" in probe([user, thought]) or "<Thought Needle>" in probe(
                [user, thought, {"role": "user", "content": text("Next.")}]
            ):
                reasoning_field = field
                break
        enable_thinking = False
        if "enable_thinking" in variables:
            on = probe([user], add_generation_prompt=True, enable_thinking=True)
            off = probe([user], add_generation_prompt=True, enable_thinking=False)
            enable_thinking = on != off
        spans: list[Any] = []
        try:
            context = {**self.special_tokens, "tools": None, "documents": None}
            context.update(
                add_generation_prompt=False,
                messages=[user, {"role": "assistant", "content": text("Answer.")}],
            )
            spans = compiled.render_with_spans(context)[1]
        except Exception:
            pass
        documents = [{"title": "Doc", "text": "<Document Needle>"}]
        supports_documents = "<Document Needle>" in probe([user], documents=documents)

        return ChatCapabilities(
            supports_system_role=supports_system,
            supports_tools=supports_tools,
            supports_tool_calls=supports_calls,
            supports_string_arguments=string_args,
            supports_object_arguments=object_args,
            requires_object_arguments=object_args and not string_args,
            supports_parallel_tool_calls=parallel,
            supports_tool_responses=responses,
            supports_tool_call_id=call_id,
            supports_thinking=reasoning_field is not None,
            reasoning_field=reasoning_field,
            supports_enable_thinking=enable_thinking,
            supports_documents=supports_documents,
            supports_typed_content=shows_typed,
            requires_typed_content=requires_typed,
            requires_non_null_content=_USER_NEEDLE in out_empty and _USER_NEEDLE not in out_null,
            supports_generation_spans=bool(spans),
            variables=variables,
        )


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


_ENVIRONMENT: Any = None


def _environment() -> Any:
    global _ENVIRONMENT
    if _ENVIRONMENT is None:
        from . import chat_environment

        _ENVIRONMENT = chat_environment()
    return _ENVIRONMENT
