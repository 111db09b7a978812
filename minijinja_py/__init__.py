"""minijinja_py: a pure-Python, sandboxed interpreter for the Jinja of LLM chat templates."""

from typing import TYPE_CHECKING

from .__about__ import __version__ as __version__
from .environment import Environment, Template, chat_environment
from .errors import (
    LimitError,
    SecurityError,
    TemplateError,
    TemplateRuntimeError,
    TemplateSyntaxError,
    UndefinedError,
)
from .runtime import ChainableUndefined, StrictUndefined, Undefined, pass_environment
from .sandbox import Limits

__all__ = [
    "ChainableUndefined",
    "Environment",
    "LimitError",
    "Limits",
    "SecurityError",
    "StrictUndefined",
    "Template",
    "TemplateError",
    "TemplateRuntimeError",
    "TemplateSyntaxError",
    "Undefined",
    "UndefinedError",
    "chat_environment",
    "pass_environment",
]


__all__ += ["ChatTemplate"]

if TYPE_CHECKING:  # for type checkers and the API reference; at run time, imported on first use
    from .chat import ChatTemplate


def __getattr__(name: str) -> object:
    # The chat layer is imported on first use: engine-only users do not pay for it.
    if name == "ChatTemplate":
        from .chat import ChatTemplate

        return ChatTemplate
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
