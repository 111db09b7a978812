"""ChatTemplate.from_pretrained(folder).render equals AutoTokenizer's apply_chat_template(...,
tokenize=False) on a model folder built per corpus template, over every corpus conversation and
its dataset-shaped variants (see conformance/parity.py).  Needs the ``parity`` extra."""

from __future__ import annotations

import pytest

from .corpus import corpus_missing, template_names

pytest.importorskip("transformers", reason="the parity tests need the 'parity' extra")
pytest.importorskip("tokenizers", reason="the parity tests need the 'parity' extra")
pytest.importorskip("numpy", reason="the parity tests need the 'parity' extra")

_MISSING = corpus_missing()
_TEMPLATES = [] if _MISSING else list(template_names())


@pytest.mark.skipif(_MISSING is not None, reason=_MISSING or "")
@pytest.mark.parametrize("template", _TEMPLATES)
def test_equals_apply_chat_template(template: str) -> None:
    from .parity import VARIANTS, compare_template

    total, agreed, problems = compare_template(template)
    assert sum(total.values()) == len(VARIANTS) * 18
    assert problems == []


def test_parity_sees_the_dataset_shapes() -> None:
    """The variants really carry what they claim (None-filled keys, numpy values, ...)."""
    np = pytest.importorskip("numpy")
    from .parity import VARIANTS

    messages = [
        {"role": "user", "content": "Hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"a": 1}}}],
        },
    ]
    filled = VARIANTS["none_filled"](messages, {})
    assert filled[0] == {"role": "user", "content": "Hi", "tool_calls": None}
    numbers = VARIANTS["numpy"](messages, {})
    assert type(numbers[0]["content"]) is np.str_
    as_json = VARIANTS["arguments_as_json"](messages, {})
    assert as_json[1]["tool_calls"][0]["function"]["arguments"] == '{"a": 1}'
    reasoning = VARIANTS["reasoning"](messages, {})
    assert reasoning[1]["reasoning"] == "Let me think this over."
