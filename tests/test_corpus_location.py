"""Every test that reads the real chat-template corpus finds it where conformance.corpus says:
``../shared/chat-templates``, or the folder named by ``MINIJINJA_PY_CORPUS``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import json, sys
sys.path.insert(0, "tests")
import test_fuzz, test_isolation, test_limits
print(json.dumps([str(test_fuzz.CORPUS), str(test_isolation.CORPUS), str(test_limits.CORPUS)]))
"""


def test_the_corpus_tests_follow_minijinja_py_corpus(tmp_path: Path) -> None:
    elsewhere = tmp_path / "corpus"
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "MINIJINJA_PY_CORPUS": str(elsewhere)},
        check=True,
        timeout=120,
    )
    assert json.loads(done.stdout.splitlines()[-1]) == [
        str(elsewhere / "templates"),
        str(elsewhere),
        str(elsewhere / "templates"),
    ]
