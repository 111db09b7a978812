"""The minijinja-py command line, through main([...]) and as a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from minijinja_py.chat.gguf import build_gguf_header
from minijinja_py.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
CHATML = str(EXAMPLES / "chatml.jinja")
CONVERSATION = str(EXAMPLES / "conversation.json")
CHATML_TEXT = (
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
    "<|im_start|>user\nWhat is the capital of France?<|im_end|>\n"
    "<|im_start|>assistant\nParis.<|im_end|>\n"
    "<|im_start|>user\nAnd of Italy?<|im_end|>\n"
)
GEN = "<|im_start|>assistant\n"


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


# -- render -------------------------------------------------------------------------------------


def test_render_messages(capsys):
    status, out, err = run(capsys, "render", "--template", CHATML, "--messages", CONVERSATION)
    assert (status, out, err) == (0, CHATML_TEXT, "")


def test_render_messages_with_generation_prompt(capsys):
    argv = ["render", "--template", CHATML, "--messages", CONVERSATION, "--add-generation-prompt"]
    assert run(capsys, *argv) == (0, CHATML_TEXT + GEN, "")


def test_render_messages_object_with_options_and_tools(capsys, tmp_path):
    template = write(
        tmp_path / "t.jinja",
        "{{ greeting }} {{ messages | length }} {{ add_generation_prompt }} "
        "{{ tools | map(attribute='function.name') | join(',') }} {{ n + 1 }}",
    )
    messages = write(
        tmp_path / "m.json",
        json.dumps({"messages": [{"role": "user", "content": "x"}], "greeting": "hey", "n": 1}),
    )
    tools = str(EXAMPLES / "tools.json")
    argv = ["render", "--template", template, "--messages", messages, "--tools", tools]
    assert run(capsys, *argv, "--var", "n=41", "--var", "greeting=hello there") == (
        0,
        "hello there 1 False get_weather 42",
        "",
    )


def test_render_continue_final_message(capsys, tmp_path):
    messages = write(
        tmp_path / "m.json",
        json.dumps(
            [
                {"role": "user", "content": "Capital of Italy?"},
                {"role": "assistant", "content": "It is", "draft": "Rome"},
            ]
        ),
    )
    argv = ["render", "--template", CHATML, "--messages", messages, "--continue-final-message"]
    assert run(capsys, *argv) == (
        0,
        "<|im_start|>user\nCapital of Italy?<|im_end|>\n<|im_start|>assistant\nIt is",
        "",
    )
    assert run(capsys, *argv, "draft") == (
        1,
        "",
        'error: continue_final_message is set to "draft" but this is not an accepted field in the '
        "chat_template\n",
    )
    assert run(capsys, *argv, "--add-generation-prompt")[0] == 1
    argv = ["render", "--template", CHATML, "--continue-final-message"]
    assert run(capsys, *argv) == (
        1,
        "",
        "error: --continue-final-message applies to --messages rendering only\n",
    )


def test_render_context_chat_and_plain(capsys, tmp_path):
    template = write(tmp_path / "t.jinja", "Hi {{ name }}! {{ items }} {{ '<b>' | tojson }}\n")
    context = write(tmp_path / "c.json", '{"name": "Bob", "items": [1, 2]}')
    base = ["render", "--template", template, "--context", context]
    assert run(capsys, *base) == (0, 'Hi Bob! [1, 2] "<b>"', "")
    assert run(capsys, *base, "--plain") == (0, 'Hi Bob! [1, 2] "\\u003cb\\u003e"', "")


def test_render_without_context_uses_vars(capsys, tmp_path):
    template = write(tmp_path / "t.jinja", "{{ a }}-{{ b }}-{{ c | length }}")
    argv = [
        "render",
        "--template",
        template,
        "--var",
        "a=true",
        "--var",
        'b="1"',
        "--var",
        "c=[1,2]",
    ]
    assert run(capsys, *argv) == (0, "True-1-2", "")


def test_render_model_folder(capsys, tmp_path):
    (tmp_path / "chat_template.jinja").write_text(
        "{{ bos_token }}{% for m in messages %}{{ m.content }}{{ eos_token }}{% endfor %}"
    )
    (tmp_path / "tokenizer_config.json").write_text(
        json.dumps({"bos_token": "<s>", "eos_token": "</s>"})
    )
    argv = ["render", "--model", str(tmp_path), "--messages", CONVERSATION]
    assert run(capsys, *argv) == (
        0,
        "<s>You are a helpful assistant.</s>What is the capital of France?</s>Paris.</s>"
        "And of Italy?</s>",
        "",
    )
    # --context renders the model's template with its special tokens as defaults
    context = write(tmp_path / "ctx.json", '{"messages": [{"content": "x"}], "eos_token": "|"}')
    assert run(capsys, "render", "--model", str(tmp_path), "--context", context) == (0, "<s>x|", "")


def test_render_gguf(capsys, tmp_path):
    path = tmp_path / "m.gguf"
    path.write_bytes(
        build_gguf_header(
            {
                "tokenizer.ggml.tokens": ["<unk>", "<s>", "</s>"],
                "tokenizer.ggml.bos_token_id": 1,
                "tokenizer.chat_template": "{{ bos_token }}{{ messages[-1].content }}",
                "tokenizer.chat_template.tool_use": "tools:{{ tools | length }}",
            }
        )
    )
    assert run(capsys, "render", "--gguf", str(path), "--messages", CONVERSATION) == (
        0,
        "<s>And of Italy?",
        "",
    )
    argv = ["render", "--gguf", str(path), "--name", "tool_use", "--messages", CONVERSATION]
    assert run(capsys, *argv, "--tools", str(EXAMPLES / "tools.json")) == (0, "tools:1", "")


def test_render_raise_exception(capsys, tmp_path):
    template = write(tmp_path / "t.jinja", "{{ raise_exception('Roles must alternate') }}")
    status, out, err = run(capsys, "render", "--template", template, "--messages", CONVERSATION)
    assert (status, out) == (1, "")
    assert err == (
        f"error: Roles must alternate\n  ({template}, line 1, column 4)\n"
        "{{ raise_exception('Roles must alternate') }}\n   ^\n"
    )


def test_render_errors(capsys, tmp_path):
    assert run(capsys, "render", "--template", str(tmp_path / "nope.jinja")) == (
        1,
        "",
        f"error: [Errno 2] No such file or directory: '{tmp_path / 'nope.jinja'}'\n",
    )
    bad = write(tmp_path / "bad.json", "{not json")
    status, out, err = run(capsys, "render", "--template", CHATML, "--messages", bad)
    assert (status, out) == (1, "")
    assert err == (
        f"error: {bad}: invalid JSON in --messages: Expecting property name enclosed in double "
        "quotes: line 1 column 2 (char 1)\n"
    )
    assert run(capsys, "render", "--template", CHATML, "--var", "novalue") == (
        1,
        "",
        "error: --var expects key=value, got 'novalue'\n",
    )
    assert run(capsys, "render", "--template", CHATML, "--messages", CONVERSATION, "--plain") == (
        1,
        "",
        "error: --plain applies to --context rendering only\n",
    )


def test_usage_error(capsys):
    status, out, err = run(capsys, "render")
    assert (status, out) == (1, "")
    assert err.endswith("error: one of the arguments --template --model --gguf is required\n")
    assert err.startswith("usage: minijinja-py render")


# -- check --------------------------------------------------------------------------------------


def test_check_syntax_error(capsys, tmp_path):
    path = write(tmp_path / "bad.jinja", "{% for m in messages %}\n{{ m.content }\n{% endfor %}")
    status, out, err = run(capsys, "check", path)
    assert (status, out) == (1, "")
    assert (
        err
        == f"error: unexpected '}}'\n  ({path}, line 2, column 14)\n{{{{ m.content }}\n             ^\n"
    )


def test_check_report(capsys):
    status, out, err = run(capsys, "check", CHATML)
    assert (status, err) == (0, "")
    assert out == (
        f"ok: {CHATML}\n"
        "variables: add_generation_prompt, messages, tools\n"
        "capabilities:\n"
        "  supports_system_role: yes\n"
        "  supports_tools: yes\n"
        "  supports_tool_calls: yes\n"
        "  supports_string_arguments: yes\n"
        "  supports_object_arguments: yes\n"
        "  requires_object_arguments: no\n"
        "  supports_parallel_tool_calls: yes\n"
        "  supports_tool_responses: yes\n"
        "  supports_tool_call_id: no\n"
        "  supports_thinking: no\n"
        "  reasoning_field: None\n"
        "  supports_enable_thinking: no\n"
        "  supports_documents: no\n"
        "  supports_typed_content: no\n"
        "  requires_typed_content: no\n"
        "  requires_non_null_content: no\n"
        "  supports_generation_spans: yes\n"
        "  renders: yes\n"
        "  render_error: None\n"
    )


def test_check_json_of_named_templates(capsys, tmp_path):
    (tmp_path / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "chat_template": [
                    {"name": "default", "template": "{{ messages[0].content }}"},
                    {"name": "tool_use", "template": "{{ tools[0].function.name }}"},
                ]
            }
        )
    )
    status, out, err = run(capsys, "check", str(tmp_path), "--json")
    assert (status, err) == (0, "")
    report = json.loads(out)
    assert report["ok"] is True and list(report["templates"]) == ["default", "tool_use"]
    assert report["templates"]["default"]["variables"] == ["messages"]
    assert report["templates"]["tool_use"]["variables"] == ["tools"]
    assert report["templates"]["tool_use"]["supports_tools"] is True
    assert report["templates"]["default"]["supports_tools"] is False


# -- batch --------------------------------------------------------------------------------------

BATCH_LINES = [
    json.dumps([{"role": "user", "content": "Hello!"}]),
    json.dumps({"messages": [{"role": "user", "content": "Hi"}], "add_generation_prompt": True}),
    "{broken",
    json.dumps({"no_messages": []}),
    json.dumps([{"role": "user", "content": 5}]),
    "",
]
BATCH_OUT = [
    {"text": "<|im_start|>user\nHello!<|im_end|>\n"},
    {"text": "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"},
    {
        "error": "invalid JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
    },
    {"error": 'expected a JSON list of messages or an object with "messages"'},
    {
        "error": 'can only concatenate str (not "int") to str\n  (line 18, column 50)\n'
        "        {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}\n"
        "                                                 ^"
    },
    {"error": "invalid JSON: Expecting value: line 1 column 1 (char 0)"},
]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_batch(capsys, tmp_path, workers):
    source = write(tmp_path / "in.jsonl", "\n".join(BATCH_LINES * 20) + "\n")
    target = tmp_path / "out.jsonl"
    argv = ["batch", "--template", CHATML, source, str(target), "--workers", workers]
    status, out, err = run(capsys, *argv, "--chunk-size", "7")
    assert (status, out) == (0, "")
    assert err.startswith("batch: 120 conversations (80 errors) in ")
    lines = target.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""
    assert [json.loads(line) for line in lines[:-1]] == BATCH_OUT * 20


def test_batch_defaults_and_quiet(capsys, tmp_path):
    template = write(
        tmp_path / "t.jinja", "{{ who }}:{{ add_generation_prompt }}:{{ tools | length }}"
    )
    hi = '{"role": "user", "content": "Hi"}'
    source = write(tmp_path / "in.jsonl", f'[{hi}]\n{{"messages": [{hi}], "who": "line"}}\n')
    target = tmp_path / "out.jsonl"
    argv = ["batch", "--template", template, source, str(target), "--quiet", "--var", "who=flag"]
    argv += ["--add-generation-prompt", "--tools", str(EXAMPLES / "tools.json")]
    assert run(capsys, *argv) == (0, "", "")
    assert target.read_text(encoding="utf-8") == (
        '{"text": "flag:True:1"}\n{"text": "line:True:1"}\n'
    )


def test_batch_undecodable_bytes_become_replacement_characters(capsys, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_bytes(b'[{"role": "user", "content": "caf\xe9"}]\n')
    target = tmp_path / "out.jsonl"
    argv = ["batch", "--template", CHATML, str(source), str(target), "--quiet"]
    assert run(capsys, *argv) == (0, "", "")
    assert target.read_text(encoding="utf-8") == (
        '{"text": "<|im_start|>user\\ncaf\ufffd<|im_end|>\\n"}\n'
    )


class _Sink:
    """Records, at each write, how many input lines had been read: the in-flight window."""

    def __init__(self, source):
        self.source = source
        self.lines = 0
        self.ahead = []

    def write(self, text):
        self.lines += text.count("\n")
        self.ahead.append(self.source.read - self.lines)
        return len(text)


class _Source:
    def __init__(self, count):
        self.count = count
        self.read = 0

    def __iter__(self):
        for i in range(self.count):
            self.read += 1
            yield json.dumps([{"role": "user", "content": f"m{i}"}]) + "\n"


@pytest.mark.parametrize(("workers", "most_ahead"), [(1, 0), (2, 30)])
def test_batch_memory_is_bounded(workers, most_ahead):
    from minijinja_py.chat import ChatTemplate
    from minijinja_py.cli import run_batch

    chat = ChatTemplate.from_string("{{ messages[0].content }}")
    source = _Source(500)
    sink = _Sink(source)
    assert run_batch(chat, source, sink, workers=workers, chunk_size=10) == (500, 0)
    assert sink.lines == 500
    # one worker renders chunk by chunk; a pool keeps at most 2 * workers chunks in flight
    assert max(sink.ahead) == most_ahead


def test_batch_bad_workers(capsys, tmp_path):
    argv = ["batch", "--template", CHATML, "in", "out", "--workers", "0"]
    assert run(capsys, *argv) == (1, "", "error: --workers must be at least 1\n")


# -- as a program -------------------------------------------------------------------------------


def program(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-m", "minijinja_py", *argv],
        input=stdin.encode() if stdin is not None else None,
        capture_output=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )


def test_module_render_exact_bytes():
    done = program(
        "render", "--template", CHATML, "--messages", "-", stdin=Path(CONVERSATION).read_text()
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, CHATML_TEXT.encode(), b"")


def test_module_unicode_output(tmp_path):
    template = write(tmp_path / "t.jinja", "{{ messages[0].content }} ✓")
    messages = write(
        tmp_path / "m.json", '[{"role": "user", "content": "h\\u00e9llo \\ud83d\\ude00"}]'
    )
    done = program("render", "--template", template, "--messages", messages)
    assert (done.returncode, done.stdout.decode("utf-8")) == (0, "héllo 😀 ✓")


def test_module_error_has_no_traceback(tmp_path):
    template = write(tmp_path / "t.jinja", "{{ messages | fromjson }}")
    done = program("render", "--template", template, "--messages", CONVERSATION)
    assert done.returncode == 1
    assert done.stdout == b""
    assert done.stderr.decode().startswith("error: ")
    assert b"Traceback" not in done.stderr


def test_module_batch_to_stdout(tmp_path):
    source = write(tmp_path / "in.jsonl", BATCH_LINES[0] + "\n")
    done = program("batch", "--template", CHATML, source, "-", "--quiet")
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        b'{"text": "<|im_start|>user\\nHello!<|im_end|>\\n"}\n',
        b"",
    )
