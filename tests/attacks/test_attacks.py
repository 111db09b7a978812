"""The attack suite as tests: one test per attack, all run once in a pool of capped workers."""

from __future__ import annotations

import pytest

from .catalog import ATTACKS
from .harness import over_cpu_bound, run_attacks
from .pending import PENDING


@pytest.fixture(scope="module")
def results(request):
    # Only the attacks this session runs: a -k selection, or CI's sample (conftest.py).
    chosen = {
        item.callspec.params["attack"].id
        for item in request.session.items
        if getattr(item, "originalname", None)
        in ("test_attack_holds", "test_attack_cpu_within_its_steps")
    }
    return run_attacks([a for a in ATTACKS if a.id in chosen], quick=frozenset(PENDING))


def _marked(attack):
    if attack.id in PENDING:
        return pytest.param(
            attack, id=attack.id, marks=pytest.mark.xfail(strict=True, reason=PENDING[attack.id])
        )
    return pytest.param(attack, id=attack.id)


def test_pending_names_real_attacks():
    assert set(PENDING) <= {a.id for a in ATTACKS}


@pytest.mark.parametrize("attack", [_marked(a) for a in ATTACKS])
def test_attack_holds(results, attack):
    outcome = results[attack.id]["outcome"]
    expected = " | ".join(map(str, attack.expectations()))
    assert attack.judge(outcome), f"expected {expected}; got {outcome[0]}: {str(outcome[1])[:500]}"


@pytest.mark.parametrize("attack", [pytest.param(a, id=a.id) for a in ATTACKS])
def test_attack_cpu_within_its_steps(results, attack):
    # SECURITY.md, "The CPU bound": compiling and rendering take at most CPU_PER_STEP per
    # step charged (plus the floor and the start-up allowance), whatever the outcome.
    assert over_cpu_bound(results[attack.id]) is None, over_cpu_bound(results[attack.id])
