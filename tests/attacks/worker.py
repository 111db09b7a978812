"""The worker side: run one attack and describe what happened as plain data."""

from __future__ import annotations

import copy
import importlib
import time
from typing import Any

from .model import Attack, Make

# Keep messages and outputs comparable but small across the pipe.
MAX_TEXT = 4000


def build(value: Any) -> Any:
    if isinstance(value, Make):
        return eval(value.expression, {"__builtins__": __builtins__})  # noqa: S307 - test data
    if isinstance(value, dict):
        return {key: build(item) for key, item in value.items()}
    if isinstance(value, list):
        return [build(item) for item in value]
    return value


def _error_outcome(error: BaseException) -> tuple:
    import minijinja_py as mj
    from minijinja_py.errors import bounded_text

    if isinstance(error, mj.TemplateError):
        message = error.message
        if not isinstance(message, str):  # what the engine promises never happens
            return "bare non-text message", f"a message of type {type(message).__name__}"
    else:
        message = bounded_text(error, MAX_TEXT)  # str() of it may itself raise, or be huge
    kind = type(error).__name__
    if not isinstance(error, (mj.TemplateError, ValueError, TypeError)):
        kind = "bare " + kind
    return kind, message[:MAX_TEXT]


class AttackRunner:
    """Picklable; ``run`` executes in a worker of an IsolatedRenderer."""

    def run(self, attack: Attack) -> dict[str, Any]:
        start = time.process_time()
        try:
            outcome = self._run(attack)
        except BaseException as error:  # what the attack produced, judged by the caller
            outcome = _error_outcome(error)
        return {"outcome": outcome, "cpu": time.process_time() - start}

    def _run(self, attack: Attack) -> tuple:
        if attack.call is not None:
            module, _, function = attack.call.partition(":")
            result = getattr(importlib.import_module(module), function)()
            return ("ok", str(result)[:MAX_TEXT])
        import minijinja_py as mj

        source = build(attack.source)
        context = {key: build(value) for key, value in attack.context.items()}
        before = copy.deepcopy(context)
        try:
            if attack.env == "chatlayer":
                output = mj.ChatTemplate.from_string(source).render(**context)
            else:
                env = mj.Environment() if attack.env == "plain" else mj.chat_environment()
                output = env.from_string(source).render(context)
        except BaseException as error:
            outcome = _error_outcome(error)
        else:
            outcome = (
                "ok",
                output[:MAX_TEXT] if len(output) <= MAX_TEXT else f"<{len(output)} characters>",
            )
        if not _unchanged(context, before):
            return ("mutated", f"the caller's data changed; the render gave {outcome!r:.200}")
        return outcome


def _unchanged(now: object, before: object) -> bool:
    """``now == before`` for the caller's data and its deep copy, walked as the graph it is:
    a pair of containers met again is not compared again, so that a value sharing its
    containers (a trillion items as a tree, eighty lists as built) compares in eighty steps."""
    seen: set[tuple[int, int]] = set()
    stack = [(now, before)]
    while stack:
        a, b = stack.pop()
        if (id(a), id(b)) in seen:
            continue
        seen.add((id(a), id(b)))
        if type(a) is not type(b):
            return False
        if isinstance(a, dict):
            if len(a) != len(b):
                return False
            for (key_a, value_a), (key_b, value_b) in zip(a.items(), b.items(), strict=True):
                stack += ((key_a, key_b), (value_a, value_b))
        elif isinstance(a, (list, tuple)):
            if len(a) != len(b):
                return False
            stack.extend(zip(a, b, strict=True))
        elif a != b:
            return False
    return True


def _warm(self: AttackRunner) -> int:
    import os

    import minijinja_py  # noqa: F401  (imported before any attack's clock runs)

    return os.getpid()


AttackRunner.warm = _warm  # type: ignore[attr-defined]
