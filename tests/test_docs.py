"""The documentation: every public name is documented with an example, and the examples run.

The site itself is built by ``mkdocs build --strict`` in CI (a broken link or API reference
fails it); these tests check what a build cannot: that the examples print what they say.
"""

import doctest
import importlib
import re
from pathlib import Path

import pytest

import minijinja_py

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.M | re.S)


def code_blocks(kind: str) -> list[tuple[Path, str]]:
    return [
        (page, body)
        for page in PAGES
        for lang, body in FENCE.findall(page.read_text(encoding="utf-8"))
        if lang == kind
    ]


def run_doctest(text: str, name: str, monkeypatch) -> doctest.TestResults:
    monkeypatch.chdir(ROOT)
    test = doctest.DocTestParser().get_doctest(text, {}, name, name, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    return runner.summarize(verbose=False)


@pytest.mark.parametrize("name", minijinja_py.__all__)
def test_every_public_name_has_a_docstring_example_that_runs(name, monkeypatch):
    obj = getattr(minijinja_py, name)
    assert ">>>" in (obj.__doc__ or ""), f"{name} has no example in its docstring"
    globs = {n: getattr(minijinja_py, n) for n in minijinja_py.__all__}
    monkeypatch.chdir(ROOT)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in doctest.DocTestFinder().find(obj, name, globs=globs):
        runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.attempted > 0
    assert results.failed == 0


@pytest.mark.parametrize("name", minijinja_py.__all__)
def test_every_public_name_appears_in_a_docs_example_and_the_reference(name):
    word = re.compile(rf"\b{re.escape(name)}\b")
    examples = code_blocks("pycon") + code_blocks("python")
    assert any(word.search(body) for _, body in examples), f"no docs example uses {name}"
    reference = "".join(p.read_text(encoding="utf-8") for p in (DOCS / "reference").glob("*.md"))
    assert f"::: minijinja_py.{name}\n" in reference, f"{name} is not in the API reference"


@pytest.mark.parametrize("package", ["chat", "pipelines"])
def test_the_public_names_of_the_layers_above_the_engine_are_in_the_reference(package):
    module = importlib.import_module(f"minijinja_py.{package}")
    reference = (DOCS / "reference" / f"{package}.md").read_text(encoding="utf-8")
    missing = [
        name
        for name in module.__all__
        if f"::: minijinja_py.{package}.{name}\n" not in reference
        and f"::: minijinja_py.{name}\n" not in reference
    ]
    assert missing == []


@pytest.mark.parametrize(
    "page", sorted({page for page, _ in code_blocks("pycon")}), ids=lambda p: p.name
)
def test_the_examples_of_each_page_print_what_the_page_says(page, monkeypatch):
    # The blocks of a page run in order in one namespace, as a reader would type them.
    blocks = [body for p, body in code_blocks("pycon") if p == page]
    results = run_doctest("\n".join(blocks), page.name, monkeypatch)
    assert results.attempted > 0
    assert results.failed == 0


def test_every_page_is_in_the_navigation():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = {p.relative_to(DOCS).as_posix() for p in PAGES}
    assert {p for p in pages if f": {p}\n" not in nav} == set()
