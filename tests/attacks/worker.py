"""The worker side: run one attack and describe what happened as plain data."""

from __future__ import annotations

import copy
import importlib
import time
from typing import Any

from .model import COMPILE_CHARS_PER_STEP, Attack, Make

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


class _Counting:
    """The steps an attack was charged: each render's budget (the state the environment enters
    a render with, read as the render leaves) and each template source compiled, counted by
    characters (see COMPILE_CHARS_PER_STEP).  Installed in the worker's engine once, by
    wrapping the three names environment.py calls (an interpreted module in either build)."""

    def __init__(self) -> None:
        self.running: list[Any] = []  # (the renders under way: none is kept past its end)
        self.rendered = 0
        self.compiled = 0
        self.installed = False

    def install(self) -> None:
        if self.installed:
            return
        self.installed = True
        from minijinja_py import environment

        enter, leave = environment.enter_render, environment.leave_render
        compiling = environment._compiling()

        def recording_enter(state: Any) -> Any:
            self.running.append(state)
            return enter(state)

        def recording_leave(token: Any) -> None:
            state = self.running.pop()
            if state is not None:
                self.rendered += state.steps
            leave(token)

        def counting_parse(source: Any, *options: Any) -> Any:
            if isinstance(source, str):
                self.compiled += len(source)
            return compiling.parse(source, *options)

        counted = compiling._replace(parse=counting_parse)
        environment.enter_render = recording_enter
        environment.leave_render = recording_leave
        environment._compiling = lambda: counted

    def reset(self) -> None:
        self.rendered = self.compiled = 0

    def steps(self) -> int:
        return self.rendered + self.compiled // COMPILE_CHARS_PER_STEP


COUNTING = _Counting()


class AttackRunner:
    """Picklable; ``run`` executes in a worker of an IsolatedRenderer."""

    def run(self, attack: Attack) -> dict[str, Any]:
        COUNTING.install()  # (done by "warm" unless the pool sent two warms to one worker)
        COUNTING.reset()
        self.engine = None
        start = time.process_time()
        try:
            outcome = self._run(attack)
        except BaseException as error:  # what the attack produced, judged by the caller
            outcome = _error_outcome(error)
        cpu = time.process_time() - start
        # "engine": the CPU time of compiling and rendering alone, which the CPU bound judges
        # (building the attack's data and comparing it after are the suite's own work); a
        # Python-level attack is judged whole.
        engine = cpu if self.engine is None else self.engine
        return {"outcome": outcome, "cpu": cpu, "engine": engine, "steps": COUNTING.steps()}

    engine: float | None = None

    def _run(self, attack: Attack) -> tuple:
        if attack.call is not None:
            module, _, function = attack.call.partition(":")
            result = getattr(importlib.import_module(module), function)()
            return ("ok", str(result)[:MAX_TEXT])
        import minijinja_py as mj

        source = build(attack.source)
        context = {key: build(value) for key, value in attack.context.items()}
        before = copy.deepcopy(context)
        start = time.process_time()
        try:
            if attack.env == "chatlayer":
                output = mj.ChatTemplate.from_string(source).render(**context)
            else:
                env = mj.Environment() if attack.env == "plain" else mj.chat_environment()
                output = env.from_string(source).render(context)
        except BaseException as error:
            self.engine = time.process_time() - start
            outcome = _error_outcome(error)
        else:
            self.engine = time.process_time() - start
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

    COUNTING.install()
    return os.getpid()


AttackRunner.warm = _warm  # type: ignore[attr-defined]
