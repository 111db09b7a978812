"""``python -m tests.attacks [--workers N] [--show-failed] [--only CLASS]``."""

from __future__ import annotations

import argparse
import json
import sys
import time

from .catalog import ATTACKS
from .harness import over_cpu_bound, run_attacks, table, verdicts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.attacks")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--only", help="a class, or a substring of attack ids")
    parser.add_argument("--show-failed", action="store_true", help="list each failed attack")
    parser.add_argument("--json", metavar="FILE", help="write each attack's outcome and verdict")
    args = parser.parse_args(argv)
    attacks = [a for a in ATTACKS if not args.only or args.only == a.cls or args.only in a.id]
    start = time.perf_counter()
    results = run_attacks(attacks, args.workers)
    print(table(attacks, results))
    print(f"{len(attacks)} attacks in {time.perf_counter() - start:.1f} s")
    held = verdicts(attacks, results)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            rows = {a.id: {**results[a.id], "held": held[a.id]} for a in attacks}
            json.dump(rows, handle, indent=1, default=str)
    if args.show_failed:
        for attack in attacks:
            if not held[attack.id]:
                outcome = results[attack.id]["outcome"]
                print(
                    f"FAILED {attack.id}\n  expected: {' | '.join(map(str, attack.expectations()))}"
                    f"\n  got:      {outcome[0]}: {str(outcome[1])[:300]!r}"
                )
                over = over_cpu_bound(results[attack.id])
                if over:
                    print(f"  over the CPU bound: {over}")
    return 0 if all(held.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
