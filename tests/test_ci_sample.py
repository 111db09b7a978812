"""conftest.py's CI sample: a fixed one in N of the listed cases, disjoint between seeds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _collected(seed: str) -> tuple[list[str], str]:
    env = {**os.environ, "MINIJINJA_CI_SAMPLE": "4", "MINIJINJA_CI_SAMPLE_SEED": seed}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-o", "addopts=",
         "-p", "no:cacheprovider", "tests/test_cost_model.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    return [line for line in lines if "::" in line], lines[-1]


def test_the_sample_keeps_one_in_four_of_the_listed_cases_and_seeds_are_disjoint():
    (first, summary), (second, _) = _collected("0"), _collected("1")
    attacks = [[n for n in kept if "::test_attack[" in n] for kept in (first, second)]
    others = [[n for n in kept if "::test_attack[" not in n] for kept in (first, second)]
    assert len(attacks[0]) >= 2
    # One in four of the cost model's attacks kept: three in four deselected, never skipped.
    assert f"({3 * len(attacks[0])} deselected)" in summary, summary
    assert len(attacks[1]) == len(attacks[0])
    assert not set(attacks[0]) & set(attacks[1])
    assert others[0] == others[1] and others[0]  # every other test runs whatever the seed
