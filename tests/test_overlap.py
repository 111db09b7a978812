"""The header-overlap searches of span inference (chat/overlap.py): the pass used for long
headers answers exactly as trying each length does, on texts built to share many starts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from minijinja_py.chat.spans import overlap
from minijinja_py.chat.spans.overlap import longest_start_before, start_ending


def _by_each_length(function, *args):
    # The short-header path: every length tried with the string search.
    saved = overlap.SHORT_HEADER
    overlap.SHORT_HEADER = 10**9
    try:
        return function(*args)
    finally:
        overlap.SHORT_HEADER = saved


def _one_pass(function, *args):
    saved = overlap.SHORT_HEADER
    overlap.SHORT_HEADER = 0
    try:
        return function(*args)
    finally:
        overlap.SHORT_HEADER = saved


texts = st.text(alphabet="ab<>", max_size=40)


@settings(max_examples=400, deadline=None)
@given(texts, texts, st.integers(0, 40), st.integers(0, 40), st.integers(0, 45))
def test_start_ending_agrees_with_each_length(text, header, low, high, longest):
    low, high = min(low, len(text)), min(max(low, high), len(text))
    args = (text, low, high, header, longest)
    assert _one_pass(start_ending, *args) == _by_each_length(start_ending, *args)


@settings(max_examples=400, deadline=None)
@given(texts, texts, st.lists(st.text(alphabet="ab<>", min_size=1, max_size=3), max_size=3),
       st.integers(0, 40), st.integers(0, 40), st.integers(1, 4))
def test_longest_start_before_agrees_with_each_length(text, header, markers, low, high, shortest):
    low, high = min(low, len(text)), min(max(low, high), len(text))
    args = (text, low, high, header, markers, shortest)
    assert _one_pass(longest_start_before, *args) == _by_each_length(longest_start_before, *args)


def test_examples():
    assert start_ending("xx<|assi", 0, 8, "<|assistant|>", 13) == 6
    assert start_ending("xx<|assi", 0, 7, "<|assistant|>", 13) == 5
    assert start_ending("xx", 0, 2, "<|a", 3) == 0
    text = "a<|Assi<end>b<|Assistant<end>"
    assert longest_start_before(text, 0, len(text), "<|Assistant|>", ["<end>"], 2) == (11, 24)
    assert longest_start_before(text, 0, len(text), "<|Assistant|>", ["<x>"], 2) is None


def test_a_long_header_costs_its_length_not_its_square():
    # a header of 200,000 characters each of whose starts the text almost repeats: trying
    # each length would compare 2 * 10**10 characters; one pass reads each once.
    header = "a" * 200_000 + "b"
    text = "a" * 200_000 + "<end>"
    assert start_ending(text, 0, len(text) - 5, header, len(header)) == 200_000
    assert longest_start_before(text, 0, len(text), header, ["<end>"], 2) == (200_000, 200_000)
