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

    message = getattr(error, "message", None) if isinstance(error, mj.TemplateError) else None
    if message is None:
        message = str(error)
    elif not isinstance(message, str):
        # raise_exception(x) keeps x itself: never print a value the template built
        message = f"<a message of type {type(message).__name__}, not a string>"
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
        if context != before:
            return ("mutated", f"the caller's data changed; the render gave {outcome!r:.200}")
        return outcome


def _warm(self: AttackRunner) -> int:
    import os

    import minijinja_py  # noqa: F401  (imported before any attack's clock runs)

    return os.getpid()


AttackRunner.warm = _warm  # type: ignore[attr-defined]
