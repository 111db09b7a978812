"""The README's Python examples type-check with mypy against the package as installed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BLOCKS = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)


def test_readme_examples_pass_mypy(tmp_path):
    pytest.importorskip("mypy", reason="mypy is not installed (it is in the test extra)")
    files = []
    for number, block in enumerate(BLOCKS):
        if block.lstrip().startswith(">>>"):
            continue  # doctest-shaped blocks are checked by running them
        path = tmp_path / f"readme_example_{number}.py"
        path.write_text(block, encoding="utf-8")
        files.append(str(path))
    assert files, "the README has no Python examples"
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--strict", "--no-error-summary", *files],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (result.returncode, result.stdout) == (0, "")
