"""The engines under comparison, behind one small interface.

Each engine offers ``new_env()`` (a fresh environment configured as transformers configures
Jinja2 for ``apply_chat_template``), ``compile(env, source)`` and ``render(template, ctx)``.
An engine that cannot be imported or configured is reported as unavailable with a reason, so
the harness keeps working while our own engine is still being written.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from .corpus import REPO_ROOT, strftime_now

# Our engine is run from the working tree, installed or not.
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


def tojson(x: Any, ensure_ascii=False, indent=None, separators=None, sort_keys=False) -> str:
    """transformers' replacement for Jinja2's tojson (json.dumps, unicode kept)."""
    return json.dumps(
        x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


class Engine:
    key = ""  # short id used in tables and options
    label = ""
    available = False
    reason = ""  # why unavailable
    version = ""

    def new_env(self) -> Any:
        raise NotImplementedError

    def compile(self, env: Any, source: str) -> Any:
        raise NotImplementedError

    def render(self, template: Any, ctx: dict[str, Any]) -> str:
        raise NotImplementedError


class Jinja2Engine(Engine):
    key = "jinja2"
    label = "Jinja2"

    def __init__(self) -> None:
        try:
            import jinja2
            import jinja2.ext
            import jinja2.sandbox
            from jinja2 import nodes
        except ImportError as exc:  # pragma: no cover - jinja2 is a test dependency
            self.reason = f"jinja2 not importable ({exc})"
            return
        self.available = True
        self.version = jinja2.__version__
        self._jinja2 = jinja2

        # transformers' AssistantTracker, reduced to what rendering needs: the body is
        # rendered and returned (the tracking of generation indices does not alter the text).
        class GenerationTag(jinja2.ext.Extension):
            tags = {"generation"}

            def parse(self, parser):
                lineno = next(parser.stream).lineno
                body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
                call = self.call_method("_generation_support")
                return nodes.CallBlock(call, [], [], body).set_lineno(lineno)

            @jinja2.pass_eval_context
            def _generation_support(self, context, caller):
                return caller()

        self._generation = GenerationTag

    @staticmethod
    def raise_exception(message):
        import jinja2.exceptions

        raise jinja2.exceptions.TemplateError(message)

    def new_env(self) -> Any:
        j = self._jinja2
        env = j.sandbox.ImmutableSandboxedEnvironment(
            trim_blocks=True,
            lstrip_blocks=True,
            extensions=[self._generation, j.ext.loopcontrols],
        )
        env.filters["tojson"] = tojson
        env.globals["raise_exception"] = self.raise_exception
        env.globals["strftime_now"] = strftime_now
        return env

    def compile(self, env: Any, source: str) -> Any:
        return env.from_string(source)

    def render(self, template: Any, ctx: dict[str, Any]) -> str:
        return template.render(**ctx)


class OursEngine(Engine):
    key = "ours"
    label = "minijinja_py"

    def __init__(self, probe: bool = True) -> None:
        # probe=False leaves the parser unbuilt, for timing the first template of a process.
        try:
            import minijinja_py

            self._mod = minijinja_py
            if probe:
                got = self.render(self.compile(self.new_env(), "{{ 1 }}"), {})
                if got != "1":
                    raise RuntimeError(f"probe rendered {got!r}")
        except Exception as exc:  # any failure: the engine is still being written
            self.reason = f"minijinja_py not usable yet ({type(exc).__name__}: {exc})"
            return
        self.available = True
        self.version = getattr(minijinja_py, "__version__", "")

    def new_env(self) -> Any:
        env = self._mod.chat_environment()
        _pin_clock(env)
        return env

    def compile(self, env: Any, source: str) -> Any:
        return env.from_string(source)

    def render(self, template: Any, ctx: dict[str, Any]) -> str:
        return template.render(**ctx)


def _pin_clock(env: Any) -> None:
    """Replace the engine's strftime_now with the pinned one, whatever shape globals take."""
    globals_ = getattr(env, "globals", None)
    if isinstance(globals_, dict):
        globals_["strftime_now"] = strftime_now
    elif hasattr(env, "add_global"):
        env.add_global("strftime_now", strftime_now)


class MiniJinjaRustEngine(Engine):
    key = "minijinja"
    label = "minijinja (Rust)"

    def __init__(self) -> None:
        try:
            import minijinja
        except ImportError:
            self.reason = "minijinja (Rust binding) not installed: pip install minijinja"
            return
        self._mod = minijinja
        self.available = True
        try:
            from importlib.metadata import version

            self.version = version("minijinja")
        except Exception:  # metadata is only informative
            self.version = "?"
        self._counter = 0

    @staticmethod
    def raise_exception(message):
        raise RuntimeError(message)

    def new_env(self) -> Any:
        # minijinja has no extension mechanism, so {% generation %} stays unknown and the
        # templates that use it are reported as not supported by this engine.
        env = self._mod.Environment(trim_blocks=True, lstrip_blocks=True, pycompat=True)
        env.add_filter("tojson", tojson)
        env.add_function("raise_exception", self.raise_exception)
        env.add_function("strftime_now", strftime_now)
        return env

    def compile(self, env: Any, source: str) -> Any:
        # minijinja compiles on add_template; templates are looked up by name at render time.
        self._counter += 1
        name = f"t{self._counter}"
        env.add_template(name, source)
        return (env, name)

    def render(self, template: Any, ctx: dict[str, Any]) -> str:
        env, name = template
        return env.render_template(name, **ctx)


def all_engines() -> list[Engine]:
    return [OursEngine(), Jinja2Engine(), MiniJinjaRustEngine()]
