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
from .sandbox import budget as _budget
from .sandbox.limits import Limits
from .values.runtime import ChainableUndefined, StrictUndefined, Undefined, pass_environment

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

#: True when the engine runs as the optional compiled build (`MINIJINJA_PY_COMPILE=1 pip install .`:
#: its hot modules are C extensions made by mypyc), False for the pure-Python one.  (A flag, not
#: in __all__, whose names are the API.)
COMPILED: bool = not _budget.__file__.endswith(".py")

__all__ += [
    "ChatTemplate",
    "IsolatedRenderer",
    "IsolatedTemplate",
    "IsolationError",
    "apply_chat_template",
]
_ISOLATION = ("IsolatedRenderer", "IsolatedTemplate", "IsolationError")

if TYPE_CHECKING:  # for type checkers and the API reference; at run time, imported on first use
    from .chat import ChatTemplate, apply_chat_template
    from .isolation import IsolatedRenderer, IsolatedTemplate, IsolationError


def __getattr__(name: str) -> object:
    # The chat layer is imported on first use: engine-only users do not pay for it.
    if name == "ChatTemplate":
        from .chat import ChatTemplate

        return ChatTemplate
    if name == "apply_chat_template":
        from .chat import apply_chat_template

        return apply_chat_template
    if name in _ISOLATION:
        # Worker pools start processes: imported only by those who ask for one.
        from . import isolation

        return getattr(isolation, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    # (the names imported on first use are listed too, as the module's own are)
    return sorted({*globals(), *__all__})
