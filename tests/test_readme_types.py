"""The README's Python examples, and a user's calls of every documented entry point
(tests/typecheck/user_snippet.py), type-check with ``mypy --strict`` against this checkout.

``--follow-imports=silent`` reads the package for its types but reports errors only in the files
checked: what is tested is what a user's type checker says about the user's code.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
SNIPPET = ROOT / "tests" / "typecheck" / "user_snippet.py"


def mypy_strict(files: list[str]) -> tuple[int, str]:
    pytest.importorskip("mypy", reason="mypy is not installed (it is in the test extra)")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--no-incremental",
            "--strict",
            "--follow-imports=silent",
            "--no-error-summary",
            *files,
        ],
        cwd=ROOT,  # this checkout's package, not whichever one is installed
        capture_output=True,
        text=True,
        check=False,
    )
    return result.returncode, result.stdout


def test_readme_examples_pass_mypy(tmp_path):
    files = []
    for number, block in enumerate(BLOCKS):
        if block.lstrip().startswith(">>>"):
            continue  # doctest-shaped blocks are checked by running them
        path = tmp_path / f"readme_example_{number}.py"
        path.write_text(block, encoding="utf-8")
        files.append(str(path))
    assert files, "the README has no Python examples"
    assert mypy_strict(files) == (0, "")


def test_a_users_calls_of_every_documented_entry_point_pass_mypy():
    assert mypy_strict([str(SNIPPET.relative_to(ROOT))]) == (0, "")


def test_mypy_rejects_a_wrong_use_of_the_documented_types(tmp_path):
    # The check can fail: the token ids are ints, a message is a str.
    wrong = tmp_path / "wrong.py"
    wrong.write_text(
        "from minijinja_py import ChatTemplate, TemplateError\n"
        "def ids(chat: ChatTemplate) -> list[str]:\n"
        "    return chat.tokenize([{'role': 'user', 'content': 'x'}])['input_ids']\n"
        "def line(error: TemplateError) -> str:\n"
        "    return error.lineno\n",
        encoding="utf-8",
    )
    status, output = mypy_strict([str(wrong)])
    assert status == 1
    assert [line.split(": error: ")[1] for line in output.splitlines()] == [
        'Incompatible return value type (got "list[int]", expected "list[str]")  [return-value]',
        'Incompatible return value type (got "int | None", expected "str")  [return-value]',
    ]
