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


def _tool_functions() -> list:
    import enum
    from typing import Any, Literal, Optional, Union

    class Unit(enum.Enum):
        C = "celsius"
        F = "fahrenheit"

    class Point:
        pass

    def weather(city: str, unit: Unit, days: Optional[int] = None) -> dict:  # noqa: UP045
        """Get the weather.

        Args:
            city: The city
            unit: The unit
            days: How many days (choices: [1, 2, 3])

        Returns:
            The forecast.
        """

    def containers(items: list, pair: tuple, table: dict, anything: Any) -> Point:
        """Containers.

        Args:
            items: Items
            pair: Pair
            table: Table
            anything: Anything
        """

    def unions(x: Union[int, str], y: list[int] | str, z: Literal["a", 1]) -> None:  # noqa: UP007
        """Unions.

        Args:
            x: X
            y: Y
            z: Z
        """

    def custom(p: Point) -> None:
        """Custom.

        Args:
            p: A point
        """

    return [weather, containers, unions, custom]


def test_tool_schemas_equal_get_json_schema() -> None:
    from transformers.utils import get_json_schema as reference

    from minijinja_py.chat import get_json_schema

    for function in _tool_functions():
        try:
            expected: tuple = ("ok", reference(function))
        except Exception as error:
            expected = (type(error).__name__, str(error))
        try:
            got: tuple = ("ok", get_json_schema(function))
        except Exception as error:
            got = (type(error).__name__, str(error))
        assert got == expected, function.__name__


@pytest.mark.skipif(_MISSING is not None, reason=_MISSING or "")
def test_a_batch_equals_apply_chat_template_on_a_batch() -> None:
    from .corpus import _conversation, conversation_names
    from .parity import agrees, our_template, pinned_reference_clock, reference_tokenizer

    batch = [_conversation(name)["messages"] for name in conversation_names()[:3]]
    same_text = 0
    with pinned_reference_clock():
        for template in _TEMPLATES:
            tokenizer, chat = reference_tokenizer(template), our_template(template)
            outcomes = []
            for render in (
                lambda: tokenizer.apply_chat_template(batch, tokenize=False),  # noqa: B023
                lambda: chat.render(batch),  # noqa: B023
            ):
                try:
                    outcomes.append(("ok", render()))
                except Exception as error:
                    outcomes.append(("raised", type(error).__name__))
            assert agrees(*outcomes), template
            same_text += outcomes[0][0] == "ok"
    assert same_text > len(_TEMPLATES) // 2  # most templates render the batch at all
