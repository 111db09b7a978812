"""Run attacks in a pool of capped worker processes; a crash or a hang is its attack's outcome."""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .model import MEMORY_CAP, SECONDS, Attack, cpu_allowed
from .worker import AttackRunner

RUNNER = AttackRunner()


# The wall-clock backstop, as a multiple of the CPU-time limit: only an attack that waits
# without working (or a machine loaded past all reason) meets it.
BACKSTOP = 10


def seconds() -> float:
    """The CPU-time limit of one attack: CPU time of its worker, which other processes on the
    machine do not stretch (MINIJINJA_ATTACK_SECONDS changes it)."""
    return float(os.environ.get("MINIJINJA_ATTACK_SECONDS", SECONDS))


def run_attacks(
    attacks: list[Attack], workers: int | None = None, quick: frozenset[str] = frozenset()
) -> dict[str, dict[str, Any]]:
    """Each attack's outcome by id: {"outcome": tuple, "cpu": seconds} (cpu None if killed).

    Each attack's worker is killed past ``seconds()`` of its own CPU time (a busy machine
    stretches the wall clock, not that), or past ten times that of wall-clock time, the
    backstop for an attack that blocks.  Attacks in ``quick`` (known to fail until other work
    lands) get a third of the time: a failure is as clear at one second as at three."""
    from minijinja_py import IsolatedRenderer, IsolationError

    workers = workers or max(2, os.cpu_count() or 2)
    results: dict[str, dict[str, Any]] = {}
    lock = threading.Lock()
    with IsolatedRenderer(
        workers=workers,
        max_memory_bytes=MEMORY_CAP,
        timeout=BACKSTOP * seconds(),
        cpu_timeout=seconds(),
    ) as pool:
        # Start every worker before the clock of any attack runs.
        list(ThreadPoolExecutor(workers).map(lambda _: pool.call(RUNNER, "warm"), range(workers)))

        def one(attack: Attack, limit: float | None = None) -> None:
            start = time.perf_counter()
            try:
                if limit is None:
                    limit = seconds() / 3 if attack.id in quick else seconds()
                result = pool.submit(
                    RUNNER, "run", (attack,), timeout=BACKSTOP * limit, cpu_timeout=limit
                )
            except IsolationError as error:
                result = {"outcome": (error.reason, error.message), "cpu": None}
            except BaseException as error:  # e.g. an outcome that would not unpickle
                result = {"outcome": ("harness " + type(error).__name__, str(error)), "cpu": None}
            result["wall"] = time.perf_counter() - start
            with lock:
                results[attack.id] = result

        with ThreadPoolExecutor(workers) as threads:
            list(threads.map(one, attacks))
        # A wall-clock timeout (the backstop) is confirmed by a second run, alone and with
        # twice the time, before it counts; a CPU-time kill needs no second opinion.
        for attack in attacks:
            outcome = results[attack.id]["outcome"]
            wall = outcome[0] == "timeout" and "CPU time" not in outcome[1]
            if wall and attack.id not in quick:
                one(attack, 2 * seconds())
    return results


def over_cpu_bound(result: dict[str, Any]) -> str | None:
    """Why an attack's result breaks the CPU bound (model.cpu_allowed), or None: its engine
    CPU time against the steps it was charged.  A killed worker reports neither: its outcome
    already fails."""
    engine, steps = result.get("engine"), result.get("steps")
    if engine is None or steps is None:
        return None
    allowed = cpu_allowed(steps)
    if engine <= allowed:
        return None
    return f"{engine:.2f} s of CPU for {steps} steps charged (allowed {allowed:.2f} s)"


def verdicts(attacks: list[Attack], results: dict[str, dict[str, Any]]) -> dict[str, bool]:
    return {
        a.id: a.judge(results[a.id]["outcome"]) and over_cpu_bound(results[a.id]) is None
        for a in attacks
    }


def table(attacks: list[Attack], results: dict[str, dict[str, Any]]) -> str:
    held = verdicts(attacks, results)
    total: Counter[str] = Counter()
    good: Counter[str] = Counter()
    for attack in attacks:
        total[attack.cls] += 1
        good[attack.cls] += held[attack.id]
    width = max(len(c) for c in total)
    lines = [f"{'class':<{width}}  held  failed  total"]
    for cls in total:
        lines.append(
            f"{cls:<{width}}  {good[cls]:>4}  {total[cls] - good[cls]:>6}  {total[cls]:>5}"
        )
    all_good, all_total = sum(good.values()), sum(total.values())
    lines.append(f"{'all':<{width}}  {all_good:>4}  {all_total - all_good:>6}  {all_total:>5}")
    return "\n".join(lines)
