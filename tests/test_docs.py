"""The documentation: every public name is documented with an example, and the examples run.

The site itself is built by ``mkdocs build --strict`` in CI (a broken link or API reference
fails it); these tests check what a build cannot: that the examples print what they say.

Every ``python`` and ``pycon`` block of every page and of the README runs alone,
in a fresh namespace, from the repository root. A ``pycon`` block is a doctest; a ``python``
block that prints shows what it prints in a ```` ```text title="Output" ```` block right after
it. A block that cannot run here says so right above it, in the page:
``<!-- docs-test: skip needs a Ray cluster -->`` (skipped with that reason), or
``<!-- docs-test: requires tokenizers -->`` (skipped when that module, from an extra, is
missing). Nothing else is skipped.
"""

import doctest
import importlib
import re
from pathlib import Path, PurePosixPath
from typing import NamedTuple

import pytest

import minijinja_py

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.M | re.S)
# A python or pycon block, the marker comment right above it if any, and the output block right
# after a python block if any (```text title="Output"```, shown as the block's output).
EXAMPLE = re.compile(
    r"(?:^<!-- docs-test: (?P<marker>[^\n]*?) -->\n)?"
    r"^```(?P<lang>python|pycon)[^\n]*\n(?P<body>.*?)^```\n"
    r'(?:\n*^```text title="Output"\n(?P<output>.*?)^```)?',
    re.M | re.S,
)
# Pages that another branch was rewriting when every example began to run alone: their blocks
# (Hub models, S3, Spark, names from other blocks) carry no marker yet. An entry goes once its
# page marks them; a marked block of such a page is judged by its marker already.
UNMARKED_PAGES = {
    "datasets.md": "its blocks need a Hub model, S3, Spark or a Ray cluster (branch data)",
}


class Example(NamedTuple):
    page: str
    line: int
    lang: str
    body: str
    marker: str | None
    output: str | None


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


def examples() -> list[Example]:
    found = []
    for page in [*PAGES, ROOT / "README.md"]:
        text = page.read_text(encoding="utf-8")
        for match in EXAMPLE.finditer(text):
            line = text.count("\n", 0, match.start("lang")) + 1
            found.append(
                Example(
                    page.relative_to(ROOT).as_posix(),
                    line,
                    match["lang"],
                    match["body"],
                    match["marker"],
                    match["output"],
                )
            )
    return found


EXAMPLES = examples()


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: f"{e.page}:{e.line}")
def test_every_example_runs_alone_and_prints_what_the_page_says(example, monkeypatch, capsys):
    # Each block runs in a fresh namespace: a reader may copy any one of them alone.
    name = PurePosixPath(example.page).name
    if name in UNMARKED_PAGES and example.marker is None:
        pytest.skip(f"{example.page} does not mark its examples yet: {UNMARKED_PAGES[name]}")
    if example.marker is not None:
        how, _, what = example.marker.partition(" ")
        if how == "skip":
            pytest.skip(f"{example.page}:{example.line} is marked: {what}")
        pytest.importorskip(what, reason=f"{example.page}:{example.line} needs {what} (an extra)")
    monkeypatch.chdir(ROOT)
    if example.lang == "pycon":
        results = run_doctest(example.body, f"{example.page}:{example.line}", monkeypatch)
        assert results.attempted > 0
        assert results.failed == 0
    else:
        exec(compile(example.body, f"{example.page}:{example.line}", "exec"), {})
        printed = capsys.readouterr().out
        assert printed == (example.output or printed)
        assert printed == "" or example.output is not None, "it prints but shows no output"


def test_the_runner_finds_every_example():
    # A block the pattern missed (a typo in a marker, an odd fence) would go untested silently.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    fences = len(code_blocks("python") + code_blocks("pycon"))
    fences += sum(lang in ("python", "pycon") for lang, _ in FENCE.findall(readme))
    assert len(EXAMPLES) == fences
    markers = "".join(p.read_text(encoding="utf-8") for p in [*PAGES, ROOT / "README.md"])
    assert markers.count("<!-- docs-test:") == sum(e.marker is not None for e in EXAMPLES)


@pytest.mark.parametrize("command", ["render", "batch", "parse"])  # (check: one option, in prose)
def test_the_command_line_page_names_every_option_of_each_command(command, capsys):
    from minijinja_py.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args([command, "--help"])
    options = set(re.findall(r"^  (--[a-z-]+)", capsys.readouterr().out, re.M)) - {"--help"}
    page = (DOCS / "cli.md").read_text(encoding="utf-8")
    section = page.split(f"\n## `{command}`\n")[1].split("\n## ")[0]
    table = "\n".join(line for line in section.splitlines() if line.startswith("| `"))
    assert options
    assert {o for o in options if not re.search(rf"`{o}[ `]", table)} == set()


def test_every_page_is_in_the_navigation():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = {p.relative_to(DOCS).as_posix() for p in PAGES}
    assert {p for p in pages if f": {p}\n" not in nav} == set()
