"""What an attack is and what it must end in."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# The CPU-time kill of one attack, and the address-space cap of its worker. The attacks that
# hold by running into max_steps took up to 3.5 s of CPU on a 2-core AMD EPYC host whose speed
# moved by half from one second to the next (27 November 2026; 3 s killed some of them there):
# twice the slowest.
SECONDS = 7.0
MEMORY_CAP = 1 << 30
# The CPU bound every attack is held to (SECURITY.md, "The CPU bound"): the CPU time of its
# compiling and rendering is at most CPU_PER_STEP x max(steps, STEP_FLOOR) + STARTUP_CPU, where
# steps are those its renders were charged plus one per COMPILE_CHARS_PER_STEP characters of
# each source it compiled (compiling is charged to no render: its time is linear in the
# source, which max_source bounds).  STARTUP_CPU is what a first use imports (the chat layer,
# provenance, a tokenizer) in a worker that has imported only the package, and the work of a
# Python-level attack outside any render (reading a GGUF file: 1.0 s at most, measured).
# Measured on 28 November 2026 on a 2-core machine shared by seven busy processes: the worst
# attack charged over 50,000 steps spent 12.7 us per step (CPU_PER_STEP is twice that).
CPU_PER_STEP = 25e-6
STEP_FLOOR = 10_000
STARTUP_CPU = 1.5
COMPILE_CHARS_PER_STEP = 1


def cpu_allowed(steps: int) -> float:
    """The CPU seconds an attack charged ``steps`` steps may take."""
    return CPU_PER_STEP * max(steps, STEP_FLOOR) + STARTUP_CPU


@dataclass(frozen=True)
class Make:
    """A value built in the worker from a Python expression (big data never crosses a pipe)."""

    expression: str


@dataclass(frozen=True)
class Ok:
    """Renders exactly ``output``."""

    output: str

    def matches(self, outcome: tuple) -> bool:
        return outcome == ("ok", self.output)

    def __str__(self) -> str:
        return f"ok {self.output[:80]!r}"


@dataclass(frozen=True)
class Err:
    """Raises exactly this error class with exactly this message."""

    kind: str
    message: str

    def matches(self, outcome: tuple) -> bool:
        return outcome == (self.kind, self.message)

    def __str__(self) -> str:
        return f"{self.kind}: {self.message[:100]}"


@dataclass(frozen=True)
class Limit:
    """Raises LimitError naming one of these limits ("the render exceeded max_steps (200000)").

    Used where the limit exists but which of a few limits fires first is the engine's choice
    (a loop that builds big strings may run out of steps or of memory first)."""

    names: tuple[str, ...]
    kinds: tuple[str, ...] = ("LimitError",)

    def __init__(self, *names: str, kinds: tuple[str, ...] = ("LimitError",)) -> None:
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "kinds", kinds)

    def matches(self, outcome: tuple) -> bool:
        return (
            outcome[0] in self.kinds
            and isinstance(outcome[1], str)
            and any(re.search(rf"\b{name}\b", outcome[1]) for name in self.names)
        )

    def __str__(self) -> str:
        return "/".join(self.kinds) + " naming " + " or ".join(self.names)


@dataclass(frozen=True)
class Attack:
    """One attack: a template (rendered in ``env``) or a Python-level function ``call``.

    ``env``: "chat" (chat_environment), "plain" (Environment), "chatlayer"
    (ChatTemplate.from_string(source).render(**context)).  ``source`` and the context's values
    may be :class:`Make`.  ``expect``: one outcome, or a tuple of outcomes each acceptable.
    """

    cls: str
    name: str
    source: Any = ""
    context: dict[str, Any] = field(default_factory=dict)
    expect: Any = None
    env: str = "chat"
    call: str | None = None  # "module:function" run in the worker, returning its outcome
    note: str = ""

    @property
    def id(self) -> str:
        return f"{self.cls}/{self.name}"

    def expectations(self) -> tuple:
        return self.expect if isinstance(self.expect, tuple) else (self.expect,)

    def judge(self, outcome: tuple) -> bool:
        return any(e.matches(outcome) for e in self.expectations())


def T(cls: str, name: str, source: Any, expect: Any, context: dict | None = None, **kw: Any):
    """A template attack, compactly."""
    return Attack(cls, name, source, dict(context or {}), expect, **kw)


def python_says(operation: Callable[[], object]) -> str:
    """The running Python's message for the error ``operation`` raises: Python words some of its
    errors differently from one version to the next (3.10: "Exceeds the limit (4300) ...")."""
    try:
        operation()
    except Exception as error:  # the message is what is wanted, whatever the class
        return str(error)
    raise AssertionError("the operation raised nothing")
