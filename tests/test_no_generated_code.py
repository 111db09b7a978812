"""The engine is an interpreter over data, in both builds: no module of the package turns text
into code.  The package's syntax trees are read for every way Python offers to run a string:
the builtins `exec`, `eval` and `compile` (called by name, through `builtins`, or looked up by
`getattr`), `__import__`, and code objects or functions made by hand (`types.CodeType`,
`types.FunctionType`).  A template is what a caller renders but does not trust; a rule that
holds for every module holds for everything derived from a template.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "minijinja_py"

RUNNERS = frozenset({"exec", "eval", "compile", "__import__"})
CODE_MAKERS = frozenset({"CodeType", "FunctionType", "LambdaType"})


def code_runners(source: str) -> list[str]:
    """`line: what` for each call in `source` that runs or makes code from data."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = None
        if isinstance(func, ast.Name) and func.id in RUNNERS:
            name = func.id
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            owner = func.value.id
            if owner in ("builtins", "__builtins__") and func.attr in RUNNERS:
                name = f"{owner}.{func.attr}"
            elif owner == "types" and func.attr in CODE_MAKERS:
                name = f"types.{func.attr}"
        elif (
            isinstance(func, ast.Name)
            and func.id == "getattr"
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in RUNNERS
        ):
            name = f"getattr(..., {node.args[1].value!r})"
        if name is not None:
            found.append((node.lineno, name))
    return [f"{line}: {name}" for line, name in sorted(found)]


def test_the_reader_finds_each_form() -> None:
    source = "\n".join(
        [
            "exec(text)",
            "eval(text)",
            "compile(text, 'x', 'exec')",
            "__import__(name)",
            "builtins.eval(text)",
            "getattr(builtins, 'exec')(text)",
            "types.FunctionType(code, {})",
            "re.compile(pattern)",  # (a regular expression is data, not code)
            "self.compiler.compile(tree)",
            "node.eval(frame)",
        ]
    )
    assert code_runners(source) == [
        "1: exec",
        "2: eval",
        "3: compile",
        "4: __import__",
        "5: builtins.eval",
        "6: getattr(..., 'exec')",
        "7: types.FunctionType",
    ]


@pytest.mark.parametrize(
    "path", sorted(PACKAGE.rglob("*.py")), ids=lambda path: str(path.relative_to(PACKAGE))
)
def test_no_module_runs_text_as_code(path: Path) -> None:
    assert code_runners(path.read_text(encoding="utf-8")) == []
