"""The release metadata agrees with itself: one version string, the licence, the changelog."""

import importlib.metadata
import re
from pathlib import Path

import minijinja_py

ROOT = Path(__file__).resolve().parents[1]


def test_the_package_version_is_the_installed_metadata_version():
    assert minijinja_py.__version__ == importlib.metadata.version("minijinja_py")


def test_the_changelog_top_entry_is_the_package_version():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    entries = re.findall(r"^## \[([^\]]+)\]", text, re.M)
    assert entries[0] == minijinja_py.__version__
    assert f"[{entries[0]}]: https://github.com/minijinja-py/minijinja_py/releases/tag/v{entries[0]}" in text


def test_the_version_is_written_in_one_place():
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in pyproject
    assert '[tool.hatch.version]\npath = "minijinja_py/__about__.py"' in pyproject
    assert not re.search(r"^version\s*=", pyproject, re.M)
    writers = [
        path.relative_to(ROOT).as_posix()
        for path in sorted((ROOT / "minijinja_py").rglob("*.py"))
        if re.search(r"^__version__\s*=", path.read_text(encoding="utf-8"), re.M)
    ]
    assert writers == ["minijinja_py/__about__.py"]


def test_the_licence_is_mit_in_the_file_and_the_metadata():
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License\n\nCopyright (c) 2026 The minijinja_py authors\n")
    metadata = importlib.metadata.metadata("minijinja_py")
    assert metadata["License-Expression"] == "MIT"
    assert "Typing :: Typed" in metadata.get_all("Classifier")
    assert (ROOT / "minijinja_py" / "py.typed").is_file()


def test_the_readme_has_no_link_that_breaks_on_pypi():
    # PyPI renders the README away from the repository: relative links and anchors break there.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)]*)\)", readme) + re.findall(r'(?:href|src)="([^"]*)"', readme)
    assert targets
    assert [t for t in targets if not t.startswith("https://")] == []


def test_the_readme_names_the_transformers_version_it_matches():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "transformers **5.23**'s `apply_chat_template`" in readme[:1000]
