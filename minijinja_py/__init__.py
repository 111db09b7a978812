"""minijinja_py: a pure-Python, sandboxed interpreter for the Jinja of LLM chat templates."""

from typing import TYPE_CHECKING

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

__version__ = "0.1.0"

__all__ += ["ChatTemplate"]

if TYPE_CHECKING:  # the chat layer sits above the engine: imported on first use, seen by checkers
    from .chat import ChatTemplate


def __getattr__(name: str) -> object:
    # The chat layer is imported on first use: engine-only users do not pay for it.
    if name == "ChatTemplate":
        from .chat import ChatTemplate

        return ChatTemplate
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
