"""ChatTemplate.apply_chat_template equals transformers' apply_chat_template call by call, over
the grid of dropin_parity.py (3,072 combinations of tokenize, return_dict, padding, truncation
and max_length, return_tensors, batching, the generation prompt or a continued final message,
assistant masks and sanitize_control_tokens, plus 24 calls outside it) on model folders of real
corpus templates.  Needs the ``parity`` extra."""

from __future__ import annotations

import pytest

from .corpus import corpus_missing

pytest.importorskip("transformers", reason="the drop-in parity tests need the 'parity' extra")
pytest.importorskip("tokenizers", reason="the drop-in parity tests need the 'parity' extra")
pytest.importorskip("numpy", reason="the drop-in parity tests need the 'parity' extra")

_MISSING = corpus_missing()

# (template, with its {% generation %} tags, folder variant): tagged templates for the masks,
# untagged ones for transformers' zeros, each padding side and a folder without a pad token.
CASES = [
    ("chatml-transformers-default", True, "right"),
    ("chatml-transformers-default", True, "left"),
    ("chatml-transformers-default", True, "plain"),
    ("llama-3.1-8b-instruct", True, "left"),
    ("gemma-3-it", True, "right"),
    ("qwen-3-0.6b", False, "left"),
    ("phi-3-mini", True, "left"),
    ("mistral-7b-instruct-v0.3", True, "right"),
    ("deepseek-r1", True, "left"),
    ("qwen-3-0.6b", False, "thinking"),
]


@pytest.mark.skipif(_MISSING is not None, reason=_MISSING or "")
@pytest.mark.parametrize(("name", "tagged", "variant"), CASES)
def test_apply_chat_template_equals_transformers_on_the_grid(name, tagged, variant):
    from .dropin_parity import compare

    calls, problems = compare(name, tagged, variant)
    assert calls == 3096
    assert problems == []
