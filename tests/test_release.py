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
    assert re.search(rf"^## \[{re.escape(entries[0])}\] - \d{{4}}-\d\d-\d\d$", text, re.M)


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


def test_the_readme_links_files_of_the_source_distribution():
    # The README links the docs as files of this repository (the project has no web host); on
    # PyPI such links are relative to nothing, so each must at least be a file the sdist ships.
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    shipped = re.findall(
        r'^    "([^"]+)",$', pyproject.split("[tool.hatch.build.targets.sdist]")[1], re.M
    )
    relative = [t for t in re.findall(r"\]\(([^)]+)\)", readme) if "://" not in t]
    assert relative
    assert [t for t in relative if t.rstrip("/").split("/")[0] not in shipped] == []


def test_the_readme_names_the_transformers_version_it_matches():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "transformers **5.23**'s `apply_chat_template`" in readme[:1000]
