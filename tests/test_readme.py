"""The README is a landing page that tells the truth: small, its quick start commands do what
it shows, its links lead to files of this repository or to real projects, and no file of the
project names a host the project does not have.

Its Python examples run, alone, printing what their Output blocks show: tests/test_docs.py runs
them with every docs page's examples; tests/test_readme_types.py type-checks them.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CONSOLE = re.findall(r"^```console\n(.*?)^```", README, re.M | re.S)

# The external places the project's text may link to: real projects' pages. The project itself
# has no web host (no documentation site, no organisation): its pages are files of this
# repository, linked relatively, and served locally by `mkdocs serve`.
ALLOWED_URLS = (
    "http://127.0.0.1:8000",  # mkdocs serve
    "https://docs.python.org/",
    "https://pypi.org/project/",
    "https://huggingface.co/",
    "https://github.com/pallets/jinja",
    "https://github.com/mitsuhiko/minijinja",
    "https://github.com/huggingface/transformers",
    "https://keepachangelog.com/",
    "https://semver.org/",
)
URL = re.compile(r"""https?://[^\s)<>\]"'`]+""")


def project_text_files() -> list[Path]:
    files = [ROOT / "pyproject.toml", ROOT / "mkdocs.yml", *sorted(ROOT.glob("*.md"))]
    for folder in ("docs", "benchmarks", "conformance", "examples", "tests"):
        files += sorted((ROOT / folder).rglob("*.md"))
    return files


def test_the_readme_is_a_landing_page_of_at_most_12_kb():
    assert len(README.encode("utf-8")) <= 12_000
    sections = re.findall(r"^## (.+)$", README, re.M)
    assert sections == ["Quick start", "Use", "Side by side", "Extras", "Documentation"]


def test_no_file_of_the_project_names_a_host_the_project_does_not_have():
    files = project_text_files()
    assert {"README.md", "pyproject.toml", "mkdocs.yml", "SECURITY.md", "CHANGELOG.md"} <= {
        f.name for f in files
    }
    assert "CONTRIBUTING.md" in {f.name for f in files}
    assert (ROOT / "docs" / "performance.md") in files
    unknown = [
        f"{path.relative_to(ROOT)}: {url}"
        for path in files
        for url in URL.findall(path.read_text(encoding="utf-8"))
        if not url.startswith(ALLOWED_URLS)
    ]
    assert unknown == []


def test_the_url_check_can_fail():
    text = "see https://minijinja-py.github.io/x and [a](https://github.com/minijinja-py/y)."
    assert [u for u in URL.findall(text) if not u.startswith(ALLOWED_URLS)] == [
        "https://minijinja-py.github.io/x",
        "https://github.com/minijinja-py/y",
    ]


def test_every_link_of_the_readme_is_a_file_here_or_an_allowed_page():
    targets = re.findall(r"\]\(([^)]+)\)", README)
    assert len(targets) > 10
    broken = [
        target
        for target in targets
        if not target.startswith(ALLOWED_URLS) and not (ROOT / target.split("#")[0]).exists()
    ]
    assert broken == []


def test_the_readme_links_every_guide_page_of_the_docs():
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} - {
        "index.md",  # the site's home page: the README's own text, as a site
        "changelog.md",  # CHANGELOG.md, included
        "contributing.md",  # CONTRIBUTING.md, included
    }
    assert {p for p in pages if f"](docs/{p})" not in README} == set()


def test_the_first_quick_start_command_prints_what_the_readme_shows():
    command, *shown = CONSOLE[0].splitlines()
    install, run = command.split(" && ")
    assert install == "$ pip install ."
    assert run.startswith("minijinja-py render ")
    result = subprocess.run(
        [sys.executable, "-m", "minijinja_py", *run.split()[1:]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "\n".join(shown) + "\n", "")


def test_the_second_quick_start_command_installs_the_test_extra_and_runs_the_tests():
    assert CONSOLE[1] == "$ pip install -e '.[test]' && python -m pytest\n"
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    extras = pyproject.split("[project.optional-dependencies]\n")[1].split("\n[")[0]
    test_extra = re.search(r"^test = \[(.*)\]$", extras, re.M)
    assert test_extra is not None
    assert '"pytest' in test_extra[1] and '"mypy' in test_extra[1]


def test_the_readme_shows_how_to_serve_the_docs_locally():
    assert "$ pip install -e '.[docs]' && mkdocs serve" in README
    assert re.search(r'^docs = \[.*"mkdocs', (ROOT / "pyproject.toml").read_text(), re.M)
