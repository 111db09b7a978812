"""Attacks known to get through, until the engine stops them: each is a strict xfail in the
test run (an attack that starts holding fails the run until it is taken off this list), and is
reported as failed by ``python -m tests.attacks``.

Keyed by attack id; the value names the missing work.  Empty: every attack holds.
"""

from __future__ import annotations

PENDING: dict[str, str] = {}
