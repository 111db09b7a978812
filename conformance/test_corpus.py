"""Every template x conversation pair of the real corpus renders exactly as in Jinja2."""

from __future__ import annotations

import pytest
from hypothesis import given, note

from .corpus import corpus_cases, corpus_missing, ours_outcome, pairs, reference_outcome
from .reference import agree, render_ours, render_reference

_PAIRS = pairs()


@pytest.mark.parametrize("pair", _PAIRS or [None], ids=[p.id for p in _PAIRS] or ["corpus"])
def test_pair(pair):
    missing = corpus_missing()
    if missing:
        pytest.skip(missing)
    expected = reference_outcome(pair)
    got = ours_outcome(pair)
    assert got[0] != "crash", f"bare Python exception from ours: {got[1]}"
    if expected[0] == "ok":
        assert got == expected
    elif expected[0] == "raise_exception":
        assert got == expected
    else:
        assert got[0] == "error", f"Jinja2 fails with {expected[1]}, ours gives {got}"
    assert agree(expected, got)


@given(corpus_cases())
def test_corpus_templates_with_generated_conversations(case):
    """Every corpus template, fed generated conversations (tool calls, parts, malformed turns)."""
    note(case.describe())
    expected = render_reference(case.config, case.source, case.context)
    got = render_ours(case.config, case.source, case.context)
    assert got[0] != "crash", f"bare Python exception from ours: {got[1]}"
    if expected[0] == "error":
        assert got[0] == "error", f"Jinja2 fails with {expected[1]}; ours gives {got!r}"
    else:
        assert got == expected


if corpus_missing():  # the property needs the corpus too
    test_corpus_templates_with_generated_conversations = pytest.mark.skip(reason=corpus_missing())(
        test_corpus_templates_with_generated_conversations
    )
