"""Input handling of ChatTemplate.render, as transformers 5.23's apply_chat_template handles it."""

from __future__ import annotations

import array
import collections
import datetime
from pathlib import Path

import pytest

from minijinja_py import LimitError, Limits, TemplateSyntaxError
from minijinja_py.chat import ChatTemplate
from minijinja_py.chat.inputs import normalise_conversations

HI = [{"role": "user", "content": "Hi"}]
EACH_MESSAGE = "{% for m in messages %}{{ m | tojson }}\n{% endfor %}"


def test_none_valued_message_keys_are_dropped():
    chat = ChatTemplate.from_string(
        "{% for m in messages %}{{ m.role }}:{{ m.content is defined }}:{{ m.tool_calls is defined }}"
        "={{ m.content }};{% endfor %}"
    )
    rows = [
        {"role": "user", "content": "Hi", "tool_calls": None},
        {"role": "assistant", "content": None, "tool_calls": [{"name": "f", "id": None}]},
    ]
    assert chat.render(rows) == "user:True:False=Hi;assistant:False:True=;"
    assert rows[0]["tool_calls"] is None  # the caller's data is left as it was


def test_reasoning_is_offered_under_each_name_in_transformers_key_order():
    chat = ChatTemplate.from_string(EACH_MESSAGE)
    messages = [
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "4", "reasoning": "2+2"},
        {"role": "assistant", "content": "5", "thinking": "T", "reasoning_content": None},
    ]
    assert chat.render(messages) == (
        '{"role": "user", "content": "Hi"}\n'
        '{"thinking": "2+2", "role": "assistant", "content": "4", "reasoning": "2+2", '
        '"reasoning_content": "2+2"}\n'
        '{"thinking": "T", "role": "assistant", "content": "5", "reasoning_content": "T"}\n'
    )


def test_numpy_values_become_plain_values():
    np = pytest.importorskip("numpy", reason="numpy is in the parity extra")
    chat = ChatTemplate.from_string(
        "{% for m in messages %}{{ m.content | tojson }}|{{ 'yes' if m.flag else 'no' }}|"
        "{{ m.array }}{% endfor %}"
    )
    message = {
        "role": "user",
        "content": [np.int64(3), np.float32(1.5), np.str_("s")],
        "flag": np.bool_(False),
        "array": np.array([1, 2]),
    }
    assert chat.render([message]) == '[3, 1.5, "s"]|no|<ndarray>'


def test_keyword_arguments_become_plain_data():
    chat = ChatTemplate.from_string("{{ p }}|{{ a }}|{{ d.x }}|{{ d | length }}|{{ t }}|{{ s }}")
    counts: collections.defaultdict[str, int] = collections.defaultdict(int, {"y": 1})
    text = chat.render(
        HI, p=Path("/tmp"), a=array.array("i", [1]), d=counts, t=(1, 2), s={1}
    )
    assert text == f"<{type(Path('/tmp')).__name__}>|<array>||1|(1, 2)|<set>"
    assert dict(counts) == {"y": 1}  # reading d.x did not add a key


def test_deep_keyword_argument_is_refused_naming_it():
    chat = ChatTemplate.from_string("{{ x }}")
    deep: list = []
    for _ in range(300):
        deep = [deep]
    with pytest.raises(TypeError) as info:
        chat.render(HI, x=deep)
    assert str(info.value) == (
        "keyword argument 'x' is nested more than 200 levels deep (or contains itself)"
    )


def test_wrong_name_on_a_single_template_is_refused():
    with pytest.raises(ValueError) as info:
        ChatTemplate("{{ messages | length }}", name="tool_use")
    assert str(info.value) == (
        "no chat template named 'tool_use'; available template names are ['default']"
    )
    assert ChatTemplate("{{ messages | length }}", name="default").render(HI) == "1"


def test_chat_template_override_is_a_source_or_a_name():
    chat = ChatTemplate({"default": "D", "tool_use": "T"})
    assert chat.render(HI, chat_template="tool_use") == "T"
    assert chat.render(HI, chat_template="S{{ messages | length }}") == "S1"
    single = ChatTemplate("D")
    assert single.render(HI, chat_template="tool_use") == "tool_use"  # as transformers


def test_limits_apply_to_a_chat_template():
    chat = ChatTemplate("{% for i in range(50) %}{{ i }}{% endfor %}", limits=Limits(max_steps=10))
    with pytest.raises(LimitError):
        chat.render(HI)
    assert ChatTemplate("{{ 1 }}", limits=Limits(max_steps=10)).limits == Limits(max_steps=10)


def test_strftime_now_can_be_pinned():
    now = datetime.datetime(2026, 1, 15, 12, 30)
    chat = ChatTemplate("{{ strftime_now('%Y-%m-%d %H:%M') }}", now=now)
    assert chat.render(HI) == "2026-01-15 12:30"
    own = ChatTemplate("{{ strftime_now }}", now=now)
    assert own.render(HI, strftime_now="caller") == "caller"  # a caller's own variable wins
    with pytest.raises(TypeError) as info:
        ChatTemplate("x", now="2026")  # type: ignore[arg-type]
    assert str(info.value) == "now must be a datetime.datetime, not str"


def test_from_file_errors_name_the_file(tmp_path):
    path = tmp_path / "broken.jinja"
    path.write_text("{% if %}", encoding="utf-8")
    with pytest.raises(TemplateSyntaxError) as info:
        ChatTemplate.from_file(path)
    assert info.value.name == str(path)
    assert str(path) in str(info.value)
    binary = tmp_path / "binary.jinja"
    binary.write_bytes(b"\xff\xfe{{ x }}")
    with pytest.raises(ValueError) as raised:
        ChatTemplate.from_file(binary)
    assert str(raised.value).startswith(f"{binary}: not UTF-8 text")


def test_tools_must_be_schemas_or_functions():
    chat = ChatTemplate("{{ tools | length }}")

    class Callable:
        def __call__(self) -> None:
            """Call."""

    with pytest.raises(ValueError) as info:
        chat.render(HI, tools=[Callable()])
    assert str(info.value) == (
        "Tools should either be a JSON schema, or a callable function with type hints and a "
        "docstring suitable for auto-conversion to a schema."
    )
    with pytest.raises(TypeError) as error:
        chat.render(HI, documents=["text"])
    assert str(error.value) == "Documents should be a list of dicts with 'title' and 'text' keys!"


def test_limits_and_clock_travel_with_a_pickle():
    import pickle

    now = datetime.datetime(2026, 1, 15, 12, 30)
    chat = ChatTemplate("{{ strftime_now('%H:%M') }}", limits=Limits(max_steps=50), now=now)
    copy = pickle.loads(pickle.dumps(chat))
    assert (copy.limits, copy.now, copy.render(HI)) == (Limits(max_steps=50), now, "12:30")


def test_the_engine_does_not_import_the_chat_layer():
    import subprocess
    import sys

    code = (
        "import sys, minijinja_py\n"
        "env = minijinja_py.chat_environment()\n"
        "print(env.from_string('{{ 1 + 1 }}').render())\n"
        "print(sorted(m for m in sys.modules if m.startswith('minijinja_py.chat')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (result.returncode, result.stdout) == (0, "2\n[]\n")


def test_a_data_row_holding_a_batch_is_an_error_row():
    from minijinja_py.pipelines import RowRenderer

    renderer = RowRenderer(ChatTemplate(EACH_MESSAGE))
    assert renderer.render_row({"messages": [HI, HI]}) == {
        "text": None,
        "error": {
            "kind": "TypeError",
            "message": "messages must be one conversation here, not a batch of them",
            "line": None,
            "column": None,
            "input_line": None,
        },
    }


def test_a_refused_message_is_quoted_within_the_message_bound():
    # a caller's value is quoted in an error by its first 2,000 characters, whatever its size
    huge = "x" * 10_000_000
    with pytest.raises(TypeError) as caught:
        normalise_conversations([[huge]])
    assert str(caught.value) == (
        "Chat messages should be dicts, dataclasses or pydantic models, but got '"
        + "x" * 1999
        + "... (cut at 2000 characters)."
    )
