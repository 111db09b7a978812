"""The chat layer: loading templates from model folders and GGUF files, and rendering
conversations with transformers' apply_chat_template semantics."""

from __future__ import annotations

import dataclasses
import enum
import json
import multiprocessing
import pickle
import sys
import types
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from minijinja_py.chat import ChatTemplate, load_pretrained_files, to_template_data
from minijinja_py.chat.gguf import build_gguf_header

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

SIMPLE = (
    "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}</{{ m.role }}>"
    "{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}"
)
HI = [{"role": "user", "content": "Hi"}]


# -- input data ---------------------------------------------------------------------------------


class Color(str, enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


class Ratio(float):
    def __repr__(self) -> str:
        return "Ratio!"


class Name(str):
    pass


class Widget:
    pass


@dataclasses.dataclass
class Call:
    name: str
    arguments: dict
    tags: tuple = ()


def test_to_template_data_plain_values():
    data = {
        "role": Name("user"),
        "color": Color.RED,
        "level": Level.HIGH,
        "ratio": Ratio(0.5),
        "flags": (True, None, 1, 2.5),
        "call": Call("f", {"x": Color.RED}, ("a",)),
        "widget": Widget(),
        "set": {1, 2},
        "bytes": b"raw",
        Level.HIGH: "int key",
    }
    out = to_template_data(data)
    assert out == {
        "role": "user",
        "color": "red",
        "level": 3,
        "ratio": 0.5,
        "flags": (True, None, 1, 2.5),  # tuples stay tuples, as in transformers 5.23
        "call": {"name": "f", "arguments": {"x": "red"}, "tags": ("a",)},
        "widget": "<Widget>",
        "set": "<set>",
        "bytes": "<bytes>",
        3: "int key",
    }
    assert type(out["role"]) is str and type(out["color"]) is str
    assert type(out["level"]) is int and type(out["ratio"]) is float


def test_to_template_data_pydantic():
    pydantic = pytest.importorskip("pydantic")

    class ToolCall(pydantic.BaseModel):
        name: str
        arguments: dict

    class Message(pydantic.BaseModel):
        role: str
        content: str | None = None
        tool_calls: list[ToolCall] = []

    message = Message(role="assistant", tool_calls=[ToolCall(name="f", arguments={"a": 1})])
    assert to_template_data(message) == {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"name": "f", "arguments": {"a": 1}}],
    }


def test_to_template_data_too_deep():
    cyclic: list = []
    cyclic.append(cyclic)
    with pytest.raises(TypeError) as info:
        to_template_data(cyclic, "keyword argument 'x'")
    assert str(info.value) == (
        "keyword argument 'x' is nested more than 200 levels deep (or contains itself)"
    )


# -- rendering ----------------------------------------------------------------------------------


def test_render_basics_and_special_tokens():
    chat = ChatTemplate.from_string(SIMPLE, {"bos_token": "<s>", "eos_token": "</s>"})
    assert chat.render(HI) == "<s><user>Hi</user>"
    assert chat.render(HI, add_generation_prompt=True) == "<s><user>Hi</user><assistant>"
    # keyword arguments become variables and win over special tokens
    assert chat.render(HI, bos_token="[BOS]") == "[BOS]<user>Hi</user>"


def test_render_default_variables():
    chat = ChatTemplate.from_string("{{ tools }}|{{ documents }}|{{ add_generation_prompt }}")
    assert chat.render(HI) == "None|None|False"


def test_rendering_sees_rebuilt_data():
    chat = ChatTemplate.from_string(
        "{% for m in messages %}{{ m.role }}={{ m.content }};{% endfor %}"
    )
    messages = [
        {"role": Name("user"), "content": Color.RED},
        {"role": "assistant", "content": Widget()},
    ]
    assert chat.render(messages) == "user=red;assistant=<Widget>;"


def test_reasoning_offered_under_both_names():
    source = (
        "{% for m in messages %}[{{ m.reasoning_content }}|{{ m.thinking }}]{{ m.content }}"
        "{% endfor %}"
    )
    chat = ChatTemplate.from_string(source)
    messages = [
        {"role": "assistant", "content": "A", "reasoning_content": "r1"},
        {"role": "assistant", "content": "B", "thinking": "t2"},
        {"role": "assistant", "content": "C", "thinking": "t3", "reasoning_content": "r3"},
        {"role": "assistant", "content": "D"},
    ]
    assert chat.render(messages) == "[r1|r1]A[t2|t2]B[r3|t3]C[|]D"
    plain = ChatTemplate.from_string(source, offer_reasoning=False)
    assert plain.render(messages) == "[r1|]A[|t2]B[r3|t3]C[|]D"


def get_weather(city: str, unit: str = "celsius"):
    """Get the weather.

    Args:
        city: The city
        unit: The unit (choices: ["celsius", "fahrenheit"])
    """


def test_tools_from_functions_and_schemas():
    chat = ChatTemplate.from_string("{% for t in tools %}{{ t | tojson }}\n{% endfor %}")
    schema = {"type": "function", "function": {"name": "lookup", "parameters": {}}}
    assert chat.render(HI, tools=[get_weather, schema]) == (
        '{"type": "function", "function": {"name": "get_weather", "description": "Get the weather.",'
        ' "parameters": {"type": "object", "properties": {"city": {"type": "string", "description":'
        ' "The city"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description":'
        ' "The unit"}}, "required": ["city"]}}}\n'
        '{"type": "function", "function": {"name": "lookup", "parameters": {}}}\n'
    )


def test_bad_tool():
    chat = ChatTemplate.from_string(SIMPLE)
    with pytest.raises(ValueError) as info:
        chat.render(HI, tools=["get_weather"])
    assert str(info.value) == (
        "Tools should either be a JSON schema, or a callable function with type hints and a "
        "docstring suitable for auto-conversion to a schema."
    )


def test_documents():
    chat = ChatTemplate.from_string(
        "{% for d in documents %}[{{ d.title }}: {{ d.text }}]{% endfor %}"
    )
    docs = [{"title": "A", "text": "alpha"}, {"title": "B", "text": "beta"}]
    assert chat.render(HI, documents=docs) == "[A: alpha][B: beta]"
    with pytest.raises(TypeError) as info:
        chat.render(HI, documents=["just text"])
    assert str(info.value) == "Documents should be a list of dicts with 'title' and 'text' keys!"


def test_render_many():
    chat = ChatTemplate.from_string(SIMPLE, {"bos_token": "<s>"})
    conversations = [HI, [{"role": "user", "content": "Yo"}]]
    assert chat.render_many(conversations, add_generation_prompt=True) == [
        "<s><user>Hi</user><assistant>",
        "<s><user>Yo</user><assistant>",
    ]


def test_conversation_objects():
    chat = ChatTemplate.from_string(SIMPLE, {"bos_token": ""})
    conversation = types.SimpleNamespace(messages=HI)
    assert chat.render(conversation) == "<user>Hi</user>"


def test_render_takes_a_batch_and_refuses_what_transformers_refuses():
    chat = ChatTemplate.from_string(SIMPLE)
    assert chat.render([HI, HI + HI]) == [chat.render(HI), chat.render(HI + HI)]
    with pytest.raises(TypeError) as info:
        chat.render({"role": "user", "content": "Hi"})
    assert str(info.value) == (
        "messages must be a list of message dicts (or a list of such lists), not dict"
    )
    with pytest.raises(TypeError) as info:
        chat.render([1, 2])
    assert str(info.value) == (
        "Chat messages should be dicts, dataclasses or pydantic models, but got 1."
    )
    with pytest.raises(ValueError) as info:
        chat.render([])
    assert str(info.value) == (
        "Cannot apply chat template to an empty conversation. Provide at least one message."
    )
    with pytest.raises(TypeError) as info:
        chat.render_with_spans([HI])
    assert str(info.value) == "messages must be one conversation here, not a batch of them"


# -- continue_final_message ---------------------------------------------------------------------

PARTIAL = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "The answer is"}]


def test_continue_final_message():
    chat = ChatTemplate.from_string(SIMPLE, {"bos_token": ""})
    assert chat.render(PARTIAL) == "<user>Hi</user><assistant>The answer is</assistant>"
    assert chat.render(PARTIAL, continue_final_message=True) == (
        "<user>Hi</user><assistant>The answer is"
    )


def test_continue_final_message_trimmed_by_template():
    source = (
        "{% for m in messages %}<{{ m.role }}>{{ m.content | trim }}</{{ m.role }}>{% endfor %}"
    )
    chat = ChatTemplate.from_string(source)
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Well, "}]
    assert chat.render(messages, continue_final_message=True) == "<user>Hi</user><assistant>Well,"


def test_continue_final_message_typed_content():
    source = (
        "{% for m in messages %}<{{ m.role }}>{% for p in m.content %}{{ p.text }}{% endfor %}"
        "</{{ m.role }}>{% endfor %}"
    )
    chat = ChatTemplate.from_string(source)
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "Hi"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "One"}, {"type": "image"}]},
    ]
    assert chat.render(messages, continue_final_message=True) == "<user>Hi</user><assistant>One"


def test_continue_final_message_other_field():
    source = "{% for m in messages %}{{ m.content }}|{{ m.draft }}{% endfor %}"
    chat = ChatTemplate.from_string(source)
    messages = [{"role": "assistant", "content": "done", "draft": "Dear"}]
    assert chat.render(messages, continue_final_message="draft") == "done|Dear"


def test_continue_final_message_reasoning():
    # The reasoning is copied under each name and every copy is tagged, so a template reading
    # only "thinking" continues it too (transformers 5.23 renders the same text).
    chat = ChatTemplate.from_string("{% for m in messages %}<think>{{ m.thinking }}{% endfor %}")
    messages = [{"role": "assistant", "content": "", "reasoning_content": "Let me see"}]
    assert chat.render(messages, continue_final_message="reasoning_content") == "<think>Let me see"
    plain = ChatTemplate.from_string("{% for m in messages %}{{ m.content }}{% endfor %}")
    with pytest.raises(ValueError) as info:
        plain.render(messages, continue_final_message="reasoning_content")
    assert str(info.value) == (
        'continue_final_message is set to "reasoning_content" but this is not an accepted field in '
        "the chat_template"
    )
    both = ChatTemplate.from_string(
        "{% for m in messages %}{{ m.reasoning_content is defined }}<think>{{ m.thinking }}"
        "{% endfor %}"
    )
    assert both.render(messages, continue_final_message="reasoning_content") == (
        "True<think>Let me see"
    )


def test_continue_final_message_errors():
    chat = ChatTemplate.from_string(SIMPLE, {"bos_token": ""})
    with pytest.raises(ValueError) as info:
        chat.render(PARTIAL, continue_final_message=True, add_generation_prompt=True)
    assert str(info.value) == (
        "continue_final_message and add_generation_prompt are not compatible. Use "
        "continue_final_message when you want the model to continue the final message, and "
        "add_generation_prompt when you want to add a header that will prompt it to start a new "
        "assistant message instead."
    )
    with pytest.raises(ValueError) as info:
        chat.render(PARTIAL, continue_final_message="draft")
    assert str(info.value) == (
        'continue_final_message is set but the final message has no "draft" to continue!'
    )
    with pytest.raises(ValueError) as info:
        chat.render(PARTIAL + [{"role": "assistant", "draft": "x"}], continue_final_message="draft")
    assert str(info.value) == (
        'continue_final_message is set to "draft" but this is not an accepted field in the '
        "chat_template"
    )
    with pytest.raises(ValueError) as info:
        chat.render(
            [{"role": "assistant", "content": [{"type": "image"}]}], continue_final_message=True
        )
    assert str(info.value) == (
        "continue_final_message is set but we could not find any text to continue in the final "
        "message!"
    )


def test_continue_final_message_dropped_by_template():
    chat = ChatTemplate.from_string(
        "{% for m in messages %}{% if m.role == 'user' %}{{ m.content }}{% endif %}{% endfor %}"
    )
    with pytest.raises(ValueError) as info:
        chat.render(PARTIAL, continue_final_message=True)
    assert str(info.value) == (
        "continue_final_message is set but the final message does not appear in the chat after "
        "applying the chat template! This can happen if the chat template deletes portions of the "
        "final message. Please verify the chat template and final message in your chat to ensure "
        "they are compatible.Final message to continue: The answer is\nRendered chat:\nHi"
    )


# -- template choice ----------------------------------------------------------------------------

NAMED = {"default": "D:{{ messages | length }}", "tool_use": "T:{{ tools | length }}"}


def test_named_templates_choice():
    chat = ChatTemplate(NAMED)
    assert chat.render(HI) == "D:1"
    assert chat.render(HI, tools=[get_weather]) == "T:1"
    assert chat.render(HI, chat_template="tool_use", tools=[]) == "T:0"
    # a chat_template that names none of the templates is itself a template
    assert chat.render(HI, chat_template="X{{ messages[0].content }}") == "XHi"
    fixed = ChatTemplate(NAMED, name="tool_use")
    assert fixed.render(HI, tools=[]) == "T:0"


def test_named_templates_without_default():
    chat = ChatTemplate({"rag": "R", "tool_use": "T"})
    assert chat.render(HI, tools=[]) == "T"
    with pytest.raises(ValueError) as info:
        chat.render(HI)
    assert str(info.value) == (
        "This model has multiple chat templates with no default specified! Please either pass a chat "
        "template or the name of the template you wish to use to the `chat_template` argument. "
        "Available template names are ['rag', 'tool_use']."
    )


def test_unknown_name():
    with pytest.raises(ValueError) as info:
        ChatTemplate(NAMED, name="rag")
    assert str(info.value) == (
        "no chat template named 'rag'; available template names are ['default', 'tool_use']"
    )


# -- model folders ------------------------------------------------------------------------------


def write_json(path: Path, data) -> None:
    path.write_text(json.dumps(data), encoding="utf-8")


def test_folder_with_tokenizer_config(tmp_path):
    write_json(
        tmp_path / "tokenizer_config.json",
        {
            "chat_template": SIMPLE,
            "bos_token": {"__type": "AddedToken", "content": "<s>", "lstrip": False},
            "eos_token": "</s>",
            "pad_token": None,
            "unk_token": "<unk>",
            "added_tokens_decoder": {},
        },
    )
    chat = ChatTemplate.from_pretrained(tmp_path)
    assert chat.special_tokens == {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}
    assert chat.render(HI, add_generation_prompt=True) == "<s><user>Hi</user><assistant>"


def test_folder_with_jinja_files(tmp_path):
    # chat_template.jinja replaces the config's template; additional ones are named by file
    write_json(tmp_path / "tokenizer_config.json", {"chat_template": "OLD", "eos_token": "</s>"})
    write_json(tmp_path / "special_tokens_map.json", {"bos_token": "<|begin|>", "eos_token": "<e>"})
    (tmp_path / "chat_template.jinja").write_text("{{ bos_token }}D{{ eos_token }}\r\n", "utf-8")
    (tmp_path / "additional_chat_templates").mkdir()
    (tmp_path / "additional_chat_templates" / "tool_use.jinja").write_text("T{{ tools | length }}")
    template, tokens = load_pretrained_files(tmp_path)
    assert template == {
        "default": "{{ bos_token }}D{{ eos_token }}\n",
        "tool_use": "T{{ tools | length }}",
    }
    # no added_tokens_decoder in the config: the special tokens map overrides it (legacy format)
    assert tokens == {"eos_token": "<e>", "bos_token": "<|begin|>"}
    chat = ChatTemplate.from_pretrained(tmp_path)
    assert chat.render(HI) == "<|begin|>D<e>"  # a single trailing newline is dropped
    assert chat.render(HI, tools=[get_weather, get_weather]) == "T2"
    assert ChatTemplate.from_pretrained(tmp_path, name="tool_use").render(HI, tools=[]) == "T0"


def test_folder_with_template_list(tmp_path):
    write_json(
        tmp_path / "tokenizer_config.json",
        {
            "chat_template": [
                {"name": "default", "template": "D"},
                {"name": "rag", "template": "R{{ documents | length }}"},
            ],
            "additional_special_tokens": ["<extra>", {"content": "<x2>"}],
        },
    )
    chat = ChatTemplate.from_pretrained(tmp_path)
    assert chat.template_names == ["default", "rag"]
    assert chat.special_tokens == {}  # transformers 5 passes no unnamed extra tokens to templates
    assert chat.render(HI) == "D"
    assert chat.render(HI, chat_template="rag", documents=[{"title": "t", "text": "x"}]) == "R1"


def test_folder_with_legacy_chat_template_json(tmp_path):
    write_json(
        tmp_path / "chat_template.json", {"chat_template": "legacy {{ messages[0].content }}"}
    )
    write_json(tmp_path / "special_tokens_map.json", {"eos_token": {"content": "<end>"}})
    chat = ChatTemplate.from_pretrained(tmp_path)
    assert chat.special_tokens == {"eos_token": "<end>"}
    assert chat.render(HI) == "legacy Hi"


def test_config_tokens_win_when_added_tokens_decoder_present(tmp_path):
    write_json(
        tmp_path / "tokenizer_config.json",
        {"chat_template": "x", "eos_token": "<cfg>", "added_tokens_decoder": {}},
    )
    write_json(tmp_path / "special_tokens_map.json", {"eos_token": "<map>", "pad_token": "<pad>"})
    assert load_pretrained_files(tmp_path)[1] == {"eos_token": "<cfg>", "pad_token": "<pad>"}


def test_folder_without_template(tmp_path):
    write_json(tmp_path / "tokenizer_config.json", {"eos_token": "</s>"})
    with pytest.raises(ValueError) as info:
        ChatTemplate.from_pretrained(tmp_path)
    assert str(info.value) == (
        f"{tmp_path}: no chat template found (looked for chat_template.jinja, "
        "additional_chat_templates/, tokenizer_config.json and chat_template.json)"
    )


def test_missing_folder_without_hub(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)
    with pytest.raises(FileNotFoundError) as info:
        ChatTemplate.from_pretrained("org/model-that-is-not-here")
    assert str(info.value) == (
        "org/model-that-is-not-here: no such model folder (install huggingface_hub to look it up "
        "as a Hub repo id in the local cache)"
    )


def test_hub_repo_id_through_local_cache(tmp_path, monkeypatch):
    snapshot = tmp_path / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    write_json(
        snapshot / "tokenizer_config.json",
        {"chat_template": "hub:{{ eos_token }}", "eos_token": "E"},
    )
    calls = []

    def snapshot_download(repo_id, local_files_only=False):
        calls.append((repo_id, local_files_only))
        if repo_id != "org/cached":
            raise FileNotFoundError(repo_id)
        return str(snapshot)

    fake = types.ModuleType("huggingface_hub")
    fake.snapshot_download = snapshot_download
    monkeypatch.setitem(sys.modules, "huggingface_hub", fake)
    assert ChatTemplate.from_pretrained("org/cached").render(HI) == "hub:E"
    with pytest.raises(FileNotFoundError) as info:
        ChatTemplate.from_pretrained("org/absent")
    assert str(info.value) == (
        "org/absent: no such model folder, and not in the Hugging Face cache (FileNotFoundError)"
    )
    assert calls == [("org/cached", True), ("org/absent", True)]


# -- GGUF ---------------------------------------------------------------------------------------


def write_gguf(path: Path, metadata: dict, version: int = 3) -> Path:
    path.write_bytes(build_gguf_header(metadata, version=version))
    return path


@pytest.mark.parametrize("version", [2, 3])
def test_from_gguf(tmp_path, version):
    path = write_gguf(
        tmp_path / "m.gguf",
        {
            "general.architecture": "llama",
            "tokenizer.ggml.tokens": ["<unk>", "<s>", "</s>"] + [f"t{i}" for i in range(100)],
            "tokenizer.ggml.bos_token_id": 1,
            "tokenizer.ggml.eos_token_id": 2,
            "tokenizer.chat_template": SIMPLE + "{{ eos_token }}",
            "tokenizer.chat_template.tool_use": "tools={{ tools | length }}",
        },
        version,
    )
    chat = ChatTemplate.from_gguf(path)
    assert chat.special_tokens == {"bos_token": "<s>", "eos_token": "</s>"}
    assert chat.render(HI) == "<s><user>Hi</user></s>"
    assert chat.render(HI, tools=[get_weather]) == "tools=1"
    assert ChatTemplate.from_gguf(path, name="tool_use").render(HI, tools=[]) == "tools=0"


def test_from_gguf_without_template(tmp_path):
    path = write_gguf(tmp_path / "m.gguf", {"general.architecture": "llama"})
    with pytest.raises(ValueError) as info:
        ChatTemplate.from_gguf(path)
    assert str(info.value) == f"{path}: no tokenizer.chat_template in the GGUF metadata"


# -- spans, analysis ----------------------------------------------------------------------------

CONVERSATION = json.loads((EXAMPLES / "conversation.json").read_text(encoding="utf-8"))
CHATML_TEXT = (
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
    "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n"
    "<|im_start|>assistant\nParis.<|im_end|>\n"
    "<|im_start|>user\nAnd of Italy?<|im_end|>\n"
)


def test_example_template():
    chat = ChatTemplate.from_file(EXAMPLES / "chatml.jinja")
    assert chat.render(CONVERSATION) == CHATML_TEXT
    assert chat.render(CONVERSATION, add_generation_prompt=True) == (
        CHATML_TEXT + "<|im_start|>assistant\n"
    )


def test_render_with_spans():
    chat = ChatTemplate.from_file(EXAMPLES / "chatml.jinja")
    messages = CONVERSATION + [{"role": "assistant", "content": "Rome."}]
    text, spans = chat.render_with_spans(messages)
    assert [text[start:end] for start, end in spans] == ["Paris.<|im_end|>", "Rome.<|im_end|>"]
    first = CHATML_TEXT.index("Paris.")
    assert spans[0] == (first, first + len("Paris.<|im_end|>"))
    assert text == CHATML_TEXT + "<|im_start|>assistant\nRome.<|im_end|>\n"


def test_spans_refuse_continue_final_message():
    chat = ChatTemplate.from_file(EXAMPLES / "chatml.jinja")
    with pytest.raises(ValueError) as info:
        chat.render_with_spans(CONVERSATION, continue_final_message=True)
    assert str(info.value) == (
        "continue_final_message is not compatible with return_assistant_tokens_mask."
    )


def test_undeclared_variables():
    chat = ChatTemplate.from_string(SIMPLE)
    assert chat.undeclared_variables() == {"bos_token", "messages", "add_generation_prompt"}
    named = ChatTemplate({"rag": "{{ documents }}", "tool_use": "{{ tools }}"})
    assert named.undeclared_variables() == {"documents"}
    assert named.undeclared_variables("tool_use") == {"tools"}


def test_capabilities_of_example():
    caps = ChatTemplate.from_file(EXAMPLES / "chatml.jinja").capabilities()
    assert caps.as_dict() == {
        "supports_system_role": True,
        "supports_tools": True,
        "supports_tool_calls": True,
        "supports_string_arguments": True,
        "supports_object_arguments": True,
        "requires_object_arguments": False,
        "supports_parallel_tool_calls": True,
        "supports_tool_responses": True,
        "supports_tool_call_id": False,
        "supports_thinking": False,
        "reasoning_field": None,
        "supports_enable_thinking": False,
        "supports_documents": False,
        "supports_typed_content": False,
        "requires_typed_content": False,
        "requires_non_null_content": False,
        "supports_generation_spans": True,
        "preserves_prefix": True,
        "prefix_changed_at": None,
        "renders": True,
        "render_error": None,
        "variables": ["add_generation_prompt", "messages", "tools"],
    }


def test_capabilities_of_a_thinking_template():
    source = (
        "{% for m in messages %}{% if m.role == 'system' %}{{ raise_exception('no system') }}"
        "{% endif %}{% if m.content is string %}{{ m.content }}{% else %}"
        "{% for p in m.content %}{{ p.text }}{% endfor %}{% endif %}"
        "{% if m.thinking %}<think>{{ m.thinking }}</think>{% endif %}{% endfor %}"
        "{% for d in documents or [] %}{{ d.text }}{% endfor %}"
        "{% if add_generation_prompt %}{{ '<think>' if enable_thinking else '<nothink>' }}{% endif %}"
    )
    caps = ChatTemplate.from_string(source, offer_reasoning=False).capabilities()
    assert (caps.supports_system_role, caps.supports_tools, caps.supports_tool_calls) == (
        False,
        False,
        False,
    )
    assert caps.supports_thinking and caps.reasoning_field == "thinking"
    assert caps.supports_enable_thinking and caps.supports_documents
    assert caps.supports_typed_content and not caps.requires_typed_content
    assert caps.variables == {
        "messages",
        "documents",
        "add_generation_prompt",
        "enable_thinking",
    }


# -- pickling and worker processes --------------------------------------------------------------


def test_pickle_round_trip():
    chat = ChatTemplate.from_file(EXAMPLES / "chatml.jinja", {"eos_token": "<|im_end|>"})
    chat.render(CONVERSATION)  # compiled forms are not pickled
    clone = pickle.loads(pickle.dumps(chat))
    assert clone.special_tokens == {"eos_token": "<|im_end|>"}
    assert clone.render(CONVERSATION, add_generation_prompt=True) == (
        CHATML_TEXT + "<|im_start|>assistant\n"
    )


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_renders_identically_in_worker_processes(start):
    chat = ChatTemplate.from_file(EXAMPLES / "chatml.jinja")
    conversations = [CONVERSATION, CONVERSATION[:2], CONVERSATION[1:3]]
    expected = [chat.render(c, add_generation_prompt=True) for c in conversations]
    context = multiprocessing.get_context(start)
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as pool:
        futures = [pool.submit(chat.render, c, add_generation_prompt=True) for c in conversations]
        assert [f.result() for f in futures] == expected


# -- against the references ---------------------------------------------------------------------

CORPUS_TEMPLATES = [
    "qwen-3-0.6b",
    "llama-3.1-8b-instruct",
    "gpt-oss-120b",
    "mistral-7b-instruct-v0.3",
    "gemma-3-it",
    "deepseek-r1",
    "cohere-command-r-plus-tool_use",
    "granite-4.0",
    "kimi-k2-instruct",
    "glm-4.6",
    "hermes-2-pro-llama-3-8b-tool_use",
    "functionary-medium-v3.2",
]


def _corpus():
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from conformance import corpus, reference

    missing = corpus.corpus_missing()
    if missing:
        pytest.skip(missing)
    return corpus, reference


@pytest.mark.parametrize("template", CORPUS_TEMPLATES)
def test_corpus_through_chat_template(template, monkeypatch):
    """ChatTemplate.render builds the same context as the corpus reference (Jinja2 3.1.6)."""
    corpus, reference = _corpus()
    import minijinja_py.chat.render as chat_module

    monkeypatch.setattr(chat_module, "_ENVIRONMENTS", {None: reference.ours_chat_environment()})
    meta = corpus._meta().get(template, {})
    tokens = {k: meta[k] for k in ("bos_token", "eos_token") if meta.get(k) is not None}
    tokens.update(meta.get("extra") or {})
    chat = ChatTemplate.from_string(corpus.template_source(template), tokens, offer_reasoning=False)
    for conversation in corpus.conversation_names():
        pair = corpus.Pair(template, conversation)
        expected = corpus.reference_outcome(pair)
        options = dict(corpus._conversation(conversation))
        messages = options.pop("messages")
        if any(value is None for message in messages for value in message.values()):
            continue  # dropped before rendering, as transformers drops them: test_parity covers it
        try:
            got = ("ok", chat.render(messages, **options))
        except Exception as exc:
            got = reference.classify_exception(exc, ours=True)
        if expected[0] == "error":  # error classes differ between engines by design
            assert got[0] == "error", pair.id
        else:
            assert got == expected, pair.id


def test_matches_transformers_when_installed():
    utils = pytest.importorskip("transformers.utils.chat_template_utils")
    source = (EXAMPLES / "chatml.jinja").read_text(encoding="utf-8")
    chat = ChatTemplate.from_string(source, {"eos_token": "<|im_end|>"})
    partial = CONVERSATION + [{"role": "assistant", "content": "Ro"}]
    cases = [
        (CONVERSATION, {"add_generation_prompt": True}),
        (CONVERSATION, {"tools": [get_weather]}),
        (partial, {"continue_final_message": True}),
    ]
    for messages, options in cases:
        rendered, _ = utils.render_jinja_template(
            conversations=[messages], chat_template=source, eos_token="<|im_end|>", **options
        )
        assert chat.render(messages, **options) == rendered[0]
    text, spans = chat.render_with_spans(partial)
    rendered, indices = utils.render_jinja_template(
        conversations=[partial], chat_template=source, return_assistant_tokens_mask=True
    )
    assert (text, spans) == (rendered[0], [tuple(i) for i in indices[0]])


@pytest.mark.parametrize(
    ("call", "kind", "message"),
    [
        (lambda chat: chat.render([]), ValueError,
         "Cannot apply chat template to an empty conversation. Provide at least one message."),
        (lambda chat: chat.render(["hi"]), TypeError,
         "Chat messages should be dicts, dataclasses or pydantic models, but got 'hi'."),
        (lambda chat: chat.render(HI, tools=["get_weather"]), ValueError,
         "Tools should either be a JSON schema, or a callable function with type hints and a "
         "docstring suitable for auto-conversion to a schema."),
        (lambda chat: chat.render(HI, tokenize=True), TypeError,
         "render() renders text and does not take the tokenizer's option 'tokenize'; use "
         "apply_chat_template() (transformers' signature) or tokenize() for token ids"),
    ],
)
def test_render_raises_the_documented_python_exceptions(call, kind, message):
    # Issue 44 item 5: beside TemplateError, render raises these (listed in its docstring).
    chat = ChatTemplate.from_string(SIMPLE)
    with pytest.raises(Exception) as info:
        call(chat)
    assert (type(info.value), str(info.value)) == (kind, message)
    assert "ValueError:" in ChatTemplate.render.__doc__
    assert "TypeError:" in ChatTemplate.render.__doc__
    assert "ToolSchemaError:" in ChatTemplate.render.__doc__
