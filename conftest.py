"""The sampled suite: MINIJINJA_CI_SAMPLE=N keeps one in N cases of the heaviest parametrised tests.

CI (.ci/run) runs every case of these on the main Python and on the compiled build, and a sample
on the other Pythons, so that the whole CI fits its time on a two-core machine. Every test
function still runs on every Python; only the cases below are thinned, and they are deselected
(pytest reports "N deselected"), never skipped. Unset, or N <= 1, runs everything.

The sample is fixed: MINIJINJA_CI_SAMPLE_SEED (default 0) picks which one in N, so a red run
replays with the same variables. Seeds 0 to N-1 give disjoint samples; CI gives each sampled
Python its own seed, so together they cover more cases than any one of them.

Cases of one template (an id "template::conversation") are thinned within the template, so every
template of the corpus still renders on every Python; other cases are thinned in their order.

Why these: the attack catalog and the cost model's attacks each start a capped process per case
(their verdict is the engine's accounting, the same on every Python; a version's own recursion
or memory behaviour still meets one in N of them there, and all of them on the main Python);
the corpus and provenance pairs repeat the same templates over 18 conversations.
"""

from __future__ import annotations

import os
import zlib
from collections import defaultdict

SAMPLED = frozenset(
    {
        "tests/attacks/test_attacks.py::test_attack_holds",
        # (the same attacks in the same order: the same one in N, so the run covers both)
        "tests/attacks/test_attacks.py::test_attack_cpu_within_its_steps",
        "tests/test_cost_model.py::test_attack",
        "conformance/test_corpus.py::test_pair",
        "conformance/test_provenance.py::test_provenance_of_pair",
    }
)


def sample_rate() -> int:
    value = os.environ.get("MINIJINJA_CI_SAMPLE", "").strip()
    return int(value) if value else 1


def pytest_report_header(config):
    rate = sample_rate()
    if rate > 1:
        seed = os.environ.get("MINIJINJA_CI_SAMPLE_SEED", "0")
        return f"MINIJINJA_CI_SAMPLE={rate} (seed {seed}): one in {rate} of {sorted(SAMPLED)}"
    return None


def pytest_collection_modifyitems(config, items):
    rate = sample_rate()
    if rate <= 1:
        return
    seed = int(os.environ.get("MINIJINJA_CI_SAMPLE_SEED", "0"))
    seen: dict[tuple[str, str], int] = defaultdict(int)
    kept, dropped = [], []
    for item in items:
        function, _, params = item.nodeid.partition("[")
        if function not in SAMPLED:
            kept.append(item)
            continue
        stratum = params.split("::")[0] if "::" in params else ""
        index = seen[function, stratum]
        seen[function, stratum] += 1
        # The offset varies by template, so that the conversations kept differ between them.
        offset = (seed + zlib.crc32(stratum.encode())) % rate
        (kept if (index + offset) % rate == 0 else dropped).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
