"""The package's type completeness as pyright's ``--verifytypes`` measures it.

pyright counts every module of the package as public, the engine's evaluators included, so an
unannotated slot or a bare ``dict`` parameter anywhere lowers the score that users' type
checkers see.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MINIMUM_SCORE = 0.95


def test_type_completeness_is_at_least_95_percent():
    pytest.importorskip("pyright", reason="pyright is not installed (it is in the test extra)")
    # pyright finds the package as in the running virtual environment when that environment is
    # the active one (an explicit --pythonpath makes it take the editable install's partial
    # site-packages folder, which holds only the grammar, for the package).
    venv = Path(sys.executable).parent
    environment = {
        **os.environ,
        "VIRTUAL_ENV": str(venv.parent),
        "PATH": f"{venv}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    result = subprocess.run(
        [sys.executable, "-m", "pyright", "--verifytypes", "minijinja_py", "--ignoreexternal"]
        + ["--outputjson"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"pyright gave no report (exit {result.returncode}): {result.stderr[-2000:]}")
    completeness = report["typeCompleteness"]
    unknown = [
        symbol["name"] for symbol in completeness["symbols"] if not symbol["isTypeKnown"]
    ]
    assert completeness["completenessScore"] >= MINIMUM_SCORE, unknown
