"""The attack suite as tests: one test per attack, all run once in a pool of capped workers."""

from __future__ import annotations

import pytest

from .catalog import ATTACKS
from .harness import run_attacks


@pytest.fixture(scope="module")
def results():
    return run_attacks(ATTACKS)


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.id for a in ATTACKS])
def test_attack_holds(results, attack):
    outcome = results[attack.id]["outcome"]
    expected = " | ".join(map(str, attack.expectations()))
    assert attack.judge(outcome), f"expected {expected}; got {outcome[0]}: {str(outcome[1])[:500]}"
