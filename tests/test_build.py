"""`minijinja_py.COMPILED` says which build runs: the pure-Python one, or the optional one whose
engine modules mypyc compiled (`MINIJINJA_PY_COMPILE=1 pip install .`, see hatch_build.py)."""

from __future__ import annotations

import importlib
import os
from importlib.machinery import EXTENSION_SUFFIXES

import minijinja_py

# Modules every compiled build compiles: the evaluators and the sandbox's accounting, and the
# chat layer's per-conversation work around the tokenizers library.
ENGINE_MODULES = (
    "minijinja_py.run.calls",
    "minijinja_py.run.evaluator",
    "minijinja_py.run.expressions",
    "minijinja_py.run.frames",
    "minijinja_py.run.macros",
    "minijinja_py.run.operators",
    "minijinja_py.run.statements",
    "minijinja_py.run.texts",
    "minijinja_py.sandbox.budget",
    "minijinja_py.sandbox.iterators",
    "minijinja_py.sandbox.measure",
    "minijinja_py.sandbox.printing",
    "minijinja_py.builtins.ops",
    "minijinja_py.chat.bytelevel",
    "minijinja_py.chat.inputs",
    "minijinja_py.chat.pieces",
    "minijinja_py.chat.tokens",
)


def _is_extension(name: str) -> bool:
    path = importlib.import_module(name).__file__ or ""
    return path.endswith(tuple(EXTENSION_SUFFIXES))


def test_compiled_is_a_bool_that_says_whether_the_engine_modules_are_extensions():
    assert type(minijinja_py.COMPILED) is bool
    assert {name: _is_extension(name) for name in ENGINE_MODULES} == dict.fromkeys(
        ENGINE_MODULES, minijinja_py.COMPILED
    )


def test_compiled_is_the_build_the_environment_expects():
    # CI sets MINIJINJA_PY_EXPECT_COMPILED=1 where it installed the compiled build and 0 where
    # it installed the pure one: a compiled install that silently fell back to pure Python (or
    # a checkout's sources shadowing the installed package) fails here.
    expected = os.environ.get("MINIJINJA_PY_EXPECT_COMPILED")
    if expected is None:
        expected = "1" if _is_extension("minijinja_py.run.frames") else "0"
    assert expected in {"0", "1"}
    assert minijinja_py.COMPILED is (expected == "1")


def test_compiled_is_importable_from_the_package():
    from minijinja_py import COMPILED

    assert COMPILED is minijinja_py.COMPILED
