"""indented_json writes what json.dumps(ensure_ascii=False, indent=n) writes, errors included."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minijinja_py import ChatTemplate
from minijinja_py.builtins.indented_json import indented_json
from minijinja_py.errors import TemplateError

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
)
_KEYS = st.text() | st.integers() | st.floats(allow_nan=True) | st.booleans() | st.none()
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4)
    | st.lists(inner, max_size=3).map(tuple)
    | st.dictionaries(_KEYS, inner, max_size=4),
    max_leaves=30,
)


def _reference(value, indent):
    return json.dumps(value, ensure_ascii=False, indent=indent)


@given(_VALUES, st.integers(min_value=0, max_value=8))
def test_the_text_is_json_dumps_text(value, indent):
    assert indented_json(value, indent) == _reference(value, indent)


class _Text(str):
    pass


class _Number(int):
    def __repr__(self):
        return "not used"


def test_subclasses_are_written_as_their_base_types():
    value = {_Text("key"): [_Text("é\u2028"), _Number(7), 2.5]}
    assert indented_json(value, 2) == '{\n  "key": [\n    "é\u2028",\n    7,\n    2.5\n  ]\n}'
    assert indented_json(value, 2) == _reference(value, 2)


def test_what_json_refuses_it_refuses_with_the_same_error():
    with pytest.raises(TypeError, match="^keys must be str, int, float, bool or None, not tuple$"):
        indented_json({(1, 2): 3}, 4)
    with pytest.raises(TypeError, match="^Object of type set is not JSON serializable$"):
        indented_json([1, {2}], 4)
    circular: list = []
    circular.append(circular)
    with pytest.raises(ValueError, match="^Circular reference detected$"):
        indented_json(circular, 4)


def test_a_deep_structure_is_written_as_json_writes_it():
    deep: list = []
    for _ in range(100):
        deep = [deep, {"k": 1}]
    assert indented_json(deep, 1) == _reference(deep, 1)


def test_a_chat_template_prints_tools_as_transformers_does():
    tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Météo <now>",
                "parameters": {"type": "object", "properties": {"n": {"maximum": 1e300}}},
            },
        }
    ]
    chat = ChatTemplate.from_string("{{ tools | tojson(indent=4) }}")
    hello = [{"role": "user", "content": "Hi"}]
    assert chat.render(hello, tools=tools) == json.dumps(tools, ensure_ascii=False, indent=4)
    with pytest.raises(TemplateError, match="^Object of type Undefined is not JSON serializable"):
        ChatTemplate.from_string("{{ [nothing] | tojson(indent=2) }}").render(hello)
