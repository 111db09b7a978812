"""The optional compiled build: `MINIJINJA_PY_COMPILE=1 pip install .` compiles the engine's hot
modules with mypyc into C extensions placed beside their sources in the wheel.

Without the variable this hook does nothing and the wheel is the pure-Python one (and needs
neither mypy nor a C compiler). The modules below are those mypyc compiles without a change of
behaviour: the evaluators (run/), the sandbox's accounting (sandbox/), the attribute policy's
lookups (builtins/access.py), a loop's walk and counters (values/loops.py), and of builtins/
the operators, the cost declarations and `tojson`'s indented writer; and of the chat layer, what
`tokenize` runs per conversation besides the render and the tokenizers library: the rebuild of
the caller's data (chat/inputs.py), the encode by pieces and the masks (chat/tokens.py,
pieces.py, bytelevel.py). The evaluators' base classes (run/evaluator.py) type the slots that
hold evaluators, so that compiled evaluators call each other through mypyc's method tables.
The rest stays interpreted, for a reason each: values/runtime.py and builtins/policy.py
subclass str and dict (mypyc cannot make a native subclass of most builtin types), and
`LoopContext` keeps there what a template prints or calls by name (a compiled method prints as
a built-in one); the filter, test and method modules rename their functions so that errors and
printed functions read as Jinja2's do (a compiled function's name is fixed);
sandbox/limits.py is read, not run, by a render: nothing to gain.

What compiling a template runs is compiled too: the lexer and the parser's driver (syntax/) and
the compiler (compile/). The syntax tree's classes (syntax/nodes.py) stay interpreted: they make
their constructors and field lists from their annotations when they are defined, which mypyc's
native classes cannot do.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

ENABLE = "MINIJINJA_PY_COMPILE"

COMPILED_MODULES = (
    "minijinja_py/run/branches.py",
    "minijinja_py/run/calls.py",
    "minijinja_py/run/deferred.py",
    "minijinja_py/run/evaluator.py",
    "minijinja_py/run/expressions.py",
    "minijinja_py/run/frames.py",
    "minijinja_py/run/macros.py",
    "minijinja_py/run/operators.py",
    "minijinja_py/run/statements.py",
    "minijinja_py/run/texts.py",
    "minijinja_py/sandbox/budget.py",
    "minijinja_py/sandbox/callguard.py",
    "minijinja_py/sandbox/format_spec.py",
    "minijinja_py/sandbox/iterators.py",
    "minijinja_py/sandbox/measure.py",
    "minijinja_py/sandbox/printing.py",
    "minijinja_py/values/loops.py",
    "minijinja_py/builtins/access.py",
    "minijinja_py/builtins/costs.py",
    "minijinja_py/builtins/indented_json.py",
    "minijinja_py/builtins/ops.py",
    "minijinja_py/syntax/lexer.py",
    "minijinja_py/syntax/parser.py",
    "minijinja_py/syntax/reducers.py",
    "minijinja_py/compile/analysis.py",
    "minijinja_py/compile/compiler.py",
    "minijinja_py/compile/folding.py",
    "minijinja_py/compile/nesting.py",
    "minijinja_py/chat/bytelevel.py",
    "minijinja_py/chat/inputs.py",
    "minijinja_py/chat/pieces.py",
    "minijinja_py/chat/tokens.py",
)

# The one shared library holding the compiled code (each module's own extension imports it).
GROUP = "minijinja_py"


def enabled() -> bool:
    return os.environ.get(ENABLE, "").strip().lower() in {"1", "true", "yes", "on"}


def compile_modules(root: Path, build_dir: Path) -> dict[Path, str]:
    """Compile COMPILED_MODULES of the tree at `root` in `build_dir`: each extension built,
    mapped to its path inside the wheel."""
    from mypyc.build import mypycify
    from setuptools import Distribution

    sources = [str(root / module) for module in COMPILED_MODULES]
    cwd = os.getcwd()
    os.chdir(root)  # (mypy finds the package of each file from here)
    try:
        extensions = mypycify(
            # Modules that are imported but not compiled are type-checked for the compiled ones'
            # sake only: their own findings do not stop the build.
            ["--follow-imports=silent", *sources],
            opt_level=os.environ.get("MINIJINJA_PY_COMPILE_OPT", "3"),
            group_name=GROUP,
            target_dir=str(build_dir / "c"),
        )
    finally:
        os.chdir(cwd)
    # setuptools' own configuration reading is skipped: the project is built by hatchling.
    distribution = Distribution({"name": "minijinja_py", "ext_modules": extensions})
    command: Any = distribution.get_command_obj("build_ext")
    command.build_lib = str(build_dir / "lib")
    command.build_temp = str(build_dir / "temp")
    command.parallel = os.cpu_count() or 1
    distribution.run_command("build_ext")
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    built = {}
    for library in (build_dir / "lib").rglob(f"*{suffix}"):
        built[library] = library.relative_to(build_dir / "lib").as_posix()
    return built


class CompileHook(BuildHookInterface):  # type: ignore[type-arg]
    """hatchling's custom build hook (pyproject.toml, tool.hatch.build.targets.wheel.hooks)."""

    PLUGIN_NAME = "custom"

    def dependencies(self) -> list[str]:
        # Asked for only by a compiled build: the pure one installs neither.
        return ["mypy>=1.16", "setuptools>=70"] if enabled() else []

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if not enabled():
            return
        if version == "editable":
            # An editable install imports the sources in place: nothing compiled would load.
            print(f"{ENABLE}: an editable install stays pure Python", file=sys.stderr)
            return
        self._build_dir = tempfile.TemporaryDirectory(prefix="minijinja_py-mypyc-")
        built = compile_modules(Path(self.root), Path(self._build_dir.name))
        for library, target in built.items():
            build_data["force_include"][str(library)] = target
        build_data["pure_python"] = False
        build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        build_dir = getattr(self, "_build_dir", None)
        if build_dir is not None:
            build_dir.cleanup()
