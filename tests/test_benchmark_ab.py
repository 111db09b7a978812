"""benchmarks.ab imports the engine of a commit beside the working tree's."""

import shutil
import subprocess
from pathlib import Path

import pytest

from benchmarks import ab

ROOT = Path(__file__).resolve().parents[1]


def _has_history() -> bool:
    if shutil.which("git") is None:
        return False
    done = subprocess.run(
        ["git", "rev-parse", "--verify", "HEAD"], cwd=ROOT, capture_output=True, check=False
    )
    return done.returncode == 0


@pytest.mark.skipif(not _has_history(), reason="needs the repository's git history")
def test_the_engine_of_a_commit_is_imported_under_its_own_name(tmp_path):
    module = ab.import_at("HEAD", tmp_path)
    assert module.__name__.startswith("minijinja_py_")
    assert module.__name__ != "minijinja_py"
    engine = ab._EngineAt(module, "then")
    template = engine.compile(engine.new_env(), "{% for m in messages %}{{ m.role }};{% endfor %}")
    assert engine.render(template, {"messages": [{"role": "user"}, {"role": "assistant"}]}) == (
        "user;assistant;"
    )


def test_the_summary_gives_medians_of_ratios_and_counts_templates_behind_jinja2():
    figures = {
        "warm": {
            "a": {"old": 1.0, "now": 1.1, "jinja2": 2.0},
            "b": {"old": 2.0, "now": 1.0, "jinja2": 1.5},
            "c": {"old": 3.0, "now": 3.0, "jinja2": 2.0},
        }
    }
    assert ab.summary(figures, "old", "now").splitlines()[2] == (
        "| warm | 1.000 | 0.850 | 1.333 | 0.667 | 2 / 1 |"
    )
