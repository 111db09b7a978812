"""Shared setup of the conformance suite: the engine guard and the Hypothesis profiles.

Hypothesis profiles (``HYPOTHESIS_PROFILE`` selects one; ``ci`` is the default):

``ci``
    Bounded so that the whole differential module runs in about a minute on two cores.
``long``
    For local bug hunting: many more examples per property, no deadline, e.g.
    ``HYPOTHESIS_PROFILE=long python -m pytest conformance/test_differential.py``.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

from .reference import engine_available

_SUPPRESS = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile(
    "ci",
    max_examples=150,
    deadline=None,
    suppress_health_check=_SUPPRESS,
    report_multiple_bugs=False,  # shrink one failure, not every distinct one: bounded time
)
settings.register_profile("long", max_examples=5000, deadline=None, suppress_health_check=_SUPPRESS)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# The single import guard: until the engine imports and renders, every conformance test skips.
_ENGINE_MISSING = engine_available()


def pytest_collection_modifyitems(config, items):
    if _ENGINE_MISSING is None:
        return
    skip = pytest.mark.skip(reason=_ENGINE_MISSING)
    here = os.path.dirname(os.path.abspath(__file__))
    for item in items:
        path = str(item.fspath)
        # test_harness.py checks the Jinja2 side only and runs without the engine.
        if path.startswith(here) and not path.endswith("test_harness.py"):
            item.add_marker(skip)
