"""The Hugging Face chat layer: load a model's chat template and render conversations with it.

`ChatTemplate` renders the way `transformers` (5.x) `apply_chat_template(...,
tokenize=False)` does: the same template choice among a model's named templates, the same
variables (`messages`, `tools`, `documents`, `add_generation_prompt`, the tokenizer's special
tokens, then the caller's keyword arguments, which win), tools given as Python functions described
by `get_json_schema`, the same `continue_final_message` cut and the same
`ValueError`/`TypeError` messages.

Stages, each a module (or folder) that takes data and returns data:

    inputs -> call -> render -> spans/ -> tokens -> dropin

`inputs` (caller values to plain data, `schema`: tools from Python functions), `call` (one
call's template, context and options), `render` (text, and the continue_final_message cut),
`spans/` (which characters are the assistant's: generation blocks, hand-tagged copies, the
inferred rule over a traced render), `tokens` (token ids and assistant masks), `dropin`
(transformers' apply_chat_template: padding, truncation, tensors; `apply`, its function form).
Beside them: `loading` and `gguf` (model folders, the Hub cache, GGUF files), `model` (what a
model gives the stages), `kept` (what a model keeps between calls), `capabilities` (probe
renders), `types` (result shapes) and `template`, `ChatTemplate`: the face that runs them.
"""

from typing import TYPE_CHECKING

from .apply import apply_chat_template
from .capabilities import ChatCapabilities
from .inputs import to_template_data
from .loading import SPECIAL_TOKEN_NAMES, load_pretrained_files
from .schema import (
    DocstringParsingException,
    ToolSchemaError,
    TypeHintParsingException,
    get_json_schema,
)
from .template import ChatTemplate

if TYPE_CHECKING:  # for type checkers and the API reference; at run time, imported on first use
    from .gguf import GGUFError, GGUFMetadata, read_gguf_metadata
    from .spans.traced import ChatProvenance

__all__ = [
    "SPECIAL_TOKEN_NAMES",
    "apply_chat_template",
    "ChatCapabilities",
    "ChatProvenance",
    "ChatTemplate",
    "DocstringParsingException",
    "GGUFError",
    "GGUFMetadata",
    "get_json_schema",
    "load_pretrained_files",
    "read_gguf_metadata",
    "to_template_data",
    "ToolSchemaError",
    "TypeHintParsingException",
]

_GGUF = ("GGUFError", "GGUFMetadata", "read_gguf_metadata")


def __getattr__(name: str) -> object:
    # Provenance and GGUF reading are imported on first use: rendering text needs neither.
    if name == "ChatProvenance":
        from .spans.traced import ChatProvenance

        return ChatProvenance
    if name in _GGUF:
        from . import gguf

        return getattr(gguf, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
