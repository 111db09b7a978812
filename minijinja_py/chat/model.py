"""What a model gives the chat layer, held for its stages: its template sources (compiled when
first used), special tokens, tokenizer, limits and clock, and what its calls keep between them.

Every stage (call, render, spans, tokens, the drop-in) takes a `ChatModel` and the data of one
call; none reaches into `ChatTemplate`, the face above them, which is a `ChatModel` with the
public methods that run the stages.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import bounded_repr
from ..sandbox.limits import Limits
from .inputs import to_template_data
from .kept import KeptBetweenCalls, compiled_size
from .render import chat_engine
from .sources import compiled_at_load, named_sources

__all__ = ["ChatModel"]


class ChatModel:
    """A model's chat template (or its named set of templates) with the tokenizer's special
    tokens, the tokenizer itself (loaded when first needed), the limits of each render and the
    instant `strftime_now` formats (None: the clock)."""

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
        files: Mapping[str, str] | None = None,
    ) -> None:
        self._templates, self._single = named_sources(template, name)
        # The file of each source (`files` is by template name), given to the engine as the
        # template's name: every error of the template, compiling or rendering, then names it.
        named = files or {}
        self._file_of_source: dict[str, str] = {
            source: str(named[key]) for key, source in self.sources.items() if key in named
        }
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
        #: transformers' response_template (tokenizer_config.json's), for parse_response; None:
        #: inferred from the chat template when first asked for
        self.response_template = response_template
        #: The model folder read by from_pretrained (its tokenizer_config.json gives the
        #: padding and truncation settings of apply_chat_template), else None.
        self.folder: Path | None = None
        self._compiled: dict[str, Any] = {}  # (the model's own templates)
        self.kept: KeptBetweenCalls = KeptBetweenCalls()
        for source in compiled_at_load(self.sources, name, limits or Limits()):
            self.compiled_source(source)

    # pickling: sources travel, compiled forms are rebuilt on first use ------------------------

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_compiled"] = {}
        state.pop("kept", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        # (pickles of 0.1.0 lack the limits and the clock; older ones what is kept)
        self.__dict__.update(
            {
                "limits": None,
                "now": None,
                "folder": None,
                "_file_of_source": {},
                "response_template": None,
                **state,
            }
        )
        for old in ("_passed", "_probes", "_traced_tools"):
            self.__dict__.pop(old, None)
        self.kept = KeptBetweenCalls()

    # sources -----------------------------------------------------------------------------------

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

    def compiled_source(self, source: str) -> Any:
        """The engine's compiled template of `source`: the model's own are kept, a source
        passed as `chat_template=` while the bytes of chat/kept.py allow."""
        compiled = self._compiled.get(source)
        if compiled is None:
            compiled = self.kept.compiled.get(source)
            if compiled is None:
                compiled = chat_engine(self.limits).from_string(
                    source, name=self._file_of_source.get(source)
                )
                if source == self._single or source in self._templates.values():
                    self._compiled[source] = compiled
                else:
                    self.kept.compiled.put(source, compiled, compiled_size(source))
        return compiled

    def compiled(self, tools: Any = None, chat_template: str | None = None) -> Any:
        """The engine's compiled `Template` for this call."""
        return self.compiled_source(self.select(tools, chat_template))

    def analysis_source(self, chat_template: str | None) -> str:
        """The source the analyses read: the selected one, or the first of a model whose
        named templates have no default."""
        if chat_template is None and self.name is None and self._single is None:
            if "default" not in self._templates:
                return next(iter(self._templates.values()))
        return self.select(None, chat_template)

    # tokenizer ---------------------------------------------------------------------------------

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
