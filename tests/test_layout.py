"""The package's layout stays true: stages import only downward, no import cycle, small modules.

Every ``import`` of every module counts, those inside functions too (a deferred import may keep
start-up fast, never hide a cycle); only imports under ``if TYPE_CHECKING:`` are left out.
ARCHITECTURE.md explains the layers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = "minijinja_py"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE

# The layers from the bottom up: a module may import its own layer's modules and those of the
# layers below, never one above.  A layer is a folder or a module at the package root ("" is the
# package's __init__).
LAYERS: list[tuple[str, ...]] = [
    ("errors", "__about__", "_mypyc"),
    ("sandbox",),  # limits, budget, call guard
    ("values",),  # Undefined, Markup, Namespace, loops, macros: the runtime values
    ("builtins",),  # filters, tests, methods, formatting, operators, attribute policy
    ("run",),  # frames and the evaluators of expressions, statements and macros
    ("syntax",),  # lexer, parser, parse table, nodes
    ("compile",),  # compiler, analysis, meta
    ("provenance",),  # hooks into the compiler through Compiler(instrument=...)
    ("environment",),  # Environment and Template: the engine's face
    ("isolation",),
    ("chat",),
    ("pipelines",),
    ("cli", "__main__", ""),
]
RANK = {part: rank for rank, parts in enumerate(LAYERS) for part in parts}

MAX_LINES = 800
MAX_ROOT_MODULES = 12


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = [root.name, *path.relative_to(root).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(
    source: str, module: str, is_package: bool, known: set[str], type_checking: bool = False
) -> set[str]:
    """The modules of ``known`` that ``source`` (the text of ``module``) imports anywhere
    (``type_checking``: those under ``if TYPE_CHECKING:`` too)."""
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child.test) and not type_checking:
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - child.level + 1]
                    origin = ".".join([*base, *([child.module] if child.module else [])])
                else:
                    origin = child.module or ""
                for alias in child.names:
                    submodule = f"{origin}.{alias.name}"
                    found.add(submodule if submodule in known else origin)
            visit(child)

    visit(ast.parse(source))
    return {name for name in found if name in known}


def package_graph(root: Path = ROOT, type_checking: bool = False) -> dict[str, set[str]]:
    paths = {module_name(path, root): path for path in root.rglob("*.py")}
    known = set(paths)
    return {
        name: imports_of(
            path.read_text(encoding="utf-8"), name, path.name == "__init__.py", known, type_checking
        )
        - {name}
        for name, path in paths.items()
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` as a list of modules (the first repeated last), or None."""
    state: dict[str, int] = {}  # 1 while on the current path, 2 when done
    path: list[str] = []

    def walk(name: str) -> list[str] | None:
        state[name] = 1
        path.append(name)
        for target in sorted(graph.get(name, ())):
            if state.get(target) == 1:
                return [*path[path.index(target) :], target]
            if target not in state and (cycle := walk(target)) is not None:
                return cycle
        path.pop()
        state[name] = 2
        return None

    for name in sorted(graph):
        if name not in state and (cycle := walk(name)) is not None:
            return cycle
    return None


def layer_of(module: str) -> int:
    parts = module.split(".")[1:]
    key = parts[0] if parts else ""
    if key not in RANK:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS")
    return RANK[key]


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{name} -> {target}"
        for name, targets in graph.items()
        for target in targets
        if layer_of(target) > layer_of(name)
    )


GRAPH = package_graph()

# The chat layer's stages, from the bottom up (ARCHITECTURE.md draws them): a stage takes data
# and returns data, and imports only the stages below it, not even a type from above (these
# checks count the imports under ``if TYPE_CHECKING:``).
CHAT = f"{PACKAGE}.chat"
CHAT_STAGES: list[tuple[str, ...]] = [
    # caller values, tool schemas, files, result shapes, the tokenizers library's encode
    (
        "inputs",
        "schema",
        "loading",
        "gguf",
        "sources",
        "kept",
        "types",
        "tokens",
        "bytelevel",
        "pieces",
        "capabilities",
        "tensors",
        "padding",
        "sanitize",
    ),
    ("render",),
    ("model",),  # what a model gives the stages
    ("call",),
    ("spans", "responses"),
    ("dropin",),
    ("template",),  # ChatTemplate: the face
    ("apply", ""),
]
CHAT_RANK = {part: rank for rank, parts in enumerate(CHAT_STAGES) for part in parts}
# A chat module longer than this is named in ARCHITECTURE.md with the reason it is one module.
CHAT_LONG = 500


def chat_stage_of(module: str) -> int:
    parts = module[len(CHAT) :].lstrip(".").split(".")
    if parts[0] not in CHAT_RANK:
        raise AssertionError(f"{module} is in no stage of the chat layer: add it to CHAT_STAGES")
    return CHAT_RANK[parts[0]]


def chat_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    return {
        name: {target for target in targets if target.startswith(CHAT)}
        for name, targets in graph.items()
        if name.startswith(CHAT)
    }


CHAT_GRAPH = chat_graph(package_graph(type_checking=True))


def test_the_graph_sees_the_package() -> None:
    # (a graph that missed the imports would pass every check below)
    assert "minijinja_py.builtins.filters" in GRAPH["minijinja_py.environment"]
    assert "minijinja_py.sandbox.limits" in GRAPH["minijinja_py.compile.analysis"]
    assert "minijinja_py.builtins.formatting" in GRAPH["minijinja_py.builtins.methods"]
    assert "minijinja_py.syntax.nodes" in GRAPH["minijinja_py.compile.compiler"]


def test_no_import_cycle() -> None:
    assert find_cycle(GRAPH) is None


def test_imports_go_down_only() -> None:
    assert upward_imports(GRAPH) == []


def test_the_chat_layer_has_no_import_cycle_of_any_kind() -> None:
    assert find_cycle(CHAT_GRAPH) is None


def test_chat_stages_import_downward_only() -> None:
    upward = sorted(
        f"{name} -> {target}"
        for name, targets in CHAT_GRAPH.items()
        for target in targets
        if chat_stage_of(target) > chat_stage_of(name)
    )
    assert upward == []


def test_no_chat_stage_imports_the_face() -> None:
    face = f"{CHAT}.template"
    assert sorted(name for name, targets in CHAT_GRAPH.items() if face in targets) == [
        CHAT,
        f"{CHAT}.apply",
    ]


def test_long_chat_modules_are_explained() -> None:
    architecture = (ROOT.parent / "ARCHITECTURE.md").read_text(encoding="utf-8")
    unexplained = sorted(
        path.relative_to(ROOT.parent).as_posix()
        for path in (ROOT / "chat").rglob("*.py")
        if len(path.read_text(encoding="utf-8").splitlines()) > CHAT_LONG
        and f"`{path.relative_to(ROOT.parent).as_posix()}`" not in architecture
    )
    assert unexplained == []


def test_few_modules_at_the_root() -> None:
    root_modules = sorted(path.name for path in ROOT.glob("*.py"))
    assert len(root_modules) <= MAX_ROOT_MODULES, root_modules


def test_modules_are_small() -> None:
    long = {
        path.relative_to(ROOT.parent).as_posix()
        for path in ROOT.rglob("*.py")
        if len(path.read_text(encoding="utf-8").splitlines()) > MAX_LINES
    }
    assert long == set()


# ---------------------------------------------------------------- the checks can fail


def test_a_function_level_import_counts_and_type_checking_does_not() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from ..run import frames\n"
        "def f():\n"
        "    from ..environment import Environment\n"
        "    from . import budget\n"
    )
    known = {
        "minijinja_py.environment",
        "minijinja_py.run.frames",
        "minijinja_py.sandbox.budget",
        "minijinja_py.sandbox",
    }
    found = imports_of(source, "minijinja_py.sandbox.limits", False, known)
    assert found == {"minijinja_py.environment", "minijinja_py.sandbox.budget"}


def test_a_synthetic_cycle_and_an_upward_import_are_found() -> None:
    graph = {
        "minijinja_py.sandbox.budget": {"minijinja_py.values.runtime"},
        "minijinja_py.values.runtime": {"minijinja_py.builtins.methods"},
        "minijinja_py.builtins.methods": {"minijinja_py.sandbox.budget"},
    }
    assert find_cycle(graph) == [
        "minijinja_py.builtins.methods",
        "minijinja_py.sandbox.budget",
        "minijinja_py.values.runtime",
        "minijinja_py.builtins.methods",
    ]
    assert upward_imports(graph) == [
        "minijinja_py.sandbox.budget -> minijinja_py.values.runtime",
        "minijinja_py.values.runtime -> minijinja_py.builtins.methods",
    ]
    graph["minijinja_py.builtins.methods"] = set()
    assert find_cycle(graph) is None


def test_type_checking_imports_count_for_the_chat_layer() -> None:
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .template import X\n"
    known = {f"{CHAT}.template"}
    assert imports_of(source, f"{CHAT}.call", False, known) == set()
    assert imports_of(source, f"{CHAT}.call", False, known, type_checking=True) == known
    assert chat_stage_of(f"{CHAT}.spans.inferred") == CHAT_RANK["spans"]
    with pytest.raises(AssertionError, match="chat.extra is in no stage"):
        chat_stage_of(f"{CHAT}.extra")


def test_a_module_outside_every_layer_is_refused() -> None:
    with pytest.raises(AssertionError, match="minijinja_py.extra is in no layer"):
        layer_of("minijinja_py.extra")


def test_a_cycle_on_disk_is_found(tmp_path: Path) -> None:
    package = tmp_path / PACKAGE
    (package / "run").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "run" / "__init__.py").write_text("")
    (package / "run" / "a.py").write_text("def f():\n    from .b import g\n")
    (package / "run" / "b.py").write_text("from . import a\n")
    graph = package_graph(package)
    assert find_cycle(graph) == ["minijinja_py.run.a", "minijinja_py.run.b", "minijinja_py.run.a"]
