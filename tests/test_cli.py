"""The minijinja-py command line, through main([...]) and as a subprocess."""

from __future__ import annotations

import io
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
    missing = ["render", "--template", str(tmp_path / "nope.jinja"), "--messages", CONVERSATION]
    assert run(capsys, *missing) == (
        1,
        "",
        f"error: no such file: {tmp_path / 'nope.jinja'}\n",
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


def test_version(capsys):
    from minijinja_py import __version__

    assert run(capsys, "--version") == (0, f"minijinja-py {__version__}\n", "")


def test_unknown_options_are_named(capsys):
    status, out, err = run(capsys, "render", "--template", CHATML, "--foo", "--bar=1")
    assert (status, out) == (1, "")
    assert err.startswith("usage: minijinja-py render")
    assert err.endswith("error: unknown options: --foo, --bar\n")
    status, out, err = run(capsys, "--colour", "check", CHATML)
    assert (status, out) == (1, "")
    assert err.startswith("usage: minijinja-py check")
    assert err.endswith("error: unknown option: --colour\n")
    # an abbreviation of a known option is known, as argparse accepts it
    assert run(capsys, "render", "--templ", CHATML, "--mess", CONVERSATION) == (0, CHATML_TEXT, "")


def test_render_says_what_is_missing(capsys):
    assert run(capsys, "render", "--template", CHATML) == (
        1,
        "",
        "error: nothing to render: give --messages FILE (a conversation) or --context FILE "
        "(template variables)\n",
    )


def test_missing_files_are_named(capsys, tmp_path):
    missing = str(tmp_path / "none.json")
    argv = ["render", "--template", CHATML, "--messages", missing]
    assert run(capsys, *argv) == (1, "", f"error: no such file: {missing}\n")
    assert run(capsys, "check", missing) == (1, "", f"error: no such file: {missing}\n")


def test_one_line_template_error_shows_a_window(capsys, tmp_path):
    template = write(tmp_path / "t.jinja", "a" * 500 + "{{ 1 + }}" + "b" * 500)
    assert run(capsys, "check", template) == (
        1,
        "",
        f"error: unexpected 'end of print statement'\n  ({template}, line 1, column 508)\n"
        + "..."
        + "a" * 33
        + "{{ 1 + }}"
        + "b" * 39
        + "...\n"
        + " " * 43
        + "^\n",
    )


# -- check --------------------------------------------------------------------------------------


def test_check_syntax_error(capsys, tmp_path):
    path = write(tmp_path / "bad.jinja", "{% for m in messages %}\n{{ m.content }\n{% endfor %}")
    status, out, err = run(capsys, "check", path)
    assert (status, out) == (1, "")
    assert (
        err
        == f"error: unexpected '}}'\n  ({path}, line 2, column 14)\n{{{{ m.content }}\n             ^\n"
    )


def test_check_json_reports_errors_as_json(capsys, tmp_path):
    path = write(tmp_path / "bad.jinja", "{% for m in messages %}\n{{ m.content }\n{% endfor %}")
    status, out, err = run(capsys, "check", path, "--json")
    assert (status, err) == (1, "")
    assert json.loads(out) == {
        "file": path,
        "ok": False,
        "error": {
            "kind": "TemplateSyntaxError",
            "message": "unexpected '}'",
            "line": 2,
            "column": 14,
            "input_line": None,
        },
    }
    missing = str(tmp_path / "none.jinja")
    status, out, err = run(capsys, "check", missing, "--json")
    assert (status, err) == (1, "")
    assert json.loads(out) == {
        "file": missing,
        "ok": False,
        "error": {
            "kind": "FileNotFoundError",
            "message": f"no such file: {missing}",
            "line": None,
            "column": None,
            "input_line": None,
        },
    }


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
        "  preserves_prefix: yes\n"
        "  prefix_changed_at: None\n"
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


def _error(kind, message, line=None, column=None, input_line=None):
    error = {"kind": kind, "message": message, "line": line, "column": column}
    return {"text": None, "error": {**error, "input_line": input_line}}


def numbered(records, first=1, step=1):
    """`records` with the error records' `input_line` set: first, first + step, ..."""
    out = []
    for index, record in enumerate(records):
        record = json.loads(json.dumps(record))
        if record["error"] is not None:
            record["error"]["input_line"] = first + index * step
        out.append(record)
    return out


def _text(text):
    return {"text": text, "error": None}


BATCH_LINES = [
    json.dumps([{"role": "user", "content": "Hello!"}]),
    json.dumps({"messages": [{"role": "user", "content": "Hi"}], "add_generation_prompt": True}),
    "{broken",
    json.dumps({"no_messages": []}),
    json.dumps([{"role": "user", "content": 5}]),
    "",
]
BATCH_OUT = [
    _text("<|im_start|>user\nHello!<|im_end|>\n"),
    _error(
        "InputError", "'add_generation_prompt' is an option of the run, not a template variable"
    ),
    _error(
        "JSONDecodeError",
        "Expecting property name enclosed in double quotes: column 2 of the JSON text",
    ),
    _error("InputError", 'the row has no "messages"'),
    _error("TemplateRuntimeError", 'can only concatenate str (not "int") to str', 18, 50),
    # (the blank last line of BATCH_LINES is no row)
]


def batch_out(repeats):
    """BATCH_OUT for BATCH_LINES written `repeats` times: its error records name their line."""
    return [
        record
        for block in range(repeats)
        for record in numbered(BATCH_OUT, 1 + block * len(BATCH_LINES))
    ]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_batch(capsys, tmp_path, workers):
    source = write(tmp_path / "in.jsonl", "\n".join(BATCH_LINES * 20) + "\n")
    target = tmp_path / "out.jsonl"
    argv = ["batch", "--template", CHATML, source, str(target), "--workers", workers]
    status, out, err = run(capsys, *argv, "--chunk-size", "7")
    assert (status, out) == (0, "")
    assert err.startswith("batch: 100 conversations (80 errors, 20 blank lines skipped) in ")
    lines = target.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""
    assert [json.loads(line) for line in lines[:-1]] == batch_out(20)


# Each hostile line fails alone, in its own slot; the lines around it render.
HOSTILE = [
    (
        b'[{"role": "user", "content": "\\ud800"}]',
        _error(
            "InputError",
            "the text holds a lone surrogate (U+D800) at index 17, which UTF-8 cannot encode",
        ),
    ),
    (
        b'{"messages": [], "n": ' + b"7" * 5000 + b"}",
        _error("InputError", "an integer of 5000 digits: at most 4300 are accepted"),
    ),
    (b"[" * 100_000 + b"]" * 100_000, _error("InputError", "JSON nested deeper than 100 levels")),
    (b"[" * 100_000, _error("InputError", "JSON nested deeper than 100 levels")),
    (
        b'{"messages": [{"role": "user", "content": "a\rb"}]}',
        _error("JSONDecodeError", "Invalid control character at: column 45 of the JSON text"),
    ),
    (b"not json", _error("JSONDecodeError", "Expecting value: column 1 of the JSON text")),
    (
        b"42",
        _error(
            "InputError",
            'expected a JSON object with "messages" or a JSON list of messages, not a number',
        ),
    ),
    (
        b"null",
        _error(
            "InputError",
            'expected a JSON object with "messages" or a JSON list of messages, not null',
        ),
    ),
    (
        b'"text"',
        _error(
            "InputError",
            'expected a JSON object with "messages" or a JSON list of messages, not a string',
        ),
    ),
    (
        b'{"messages": {"role": "user"}}',
        _error("InputError", '"messages" must be a list of messages, not an object'),
    ),
    (
        b'{"messages": [], "chat_template": "{{ 7 * 6 }}"}',
        _error("InputError", "'chat_template' is an option of the run, not a template variable"),
    ),
    (
        b'{"messages": [], "continue_final_message": true}',
        _error(
            "InputError",
            "'continue_final_message' is an option of the run, not a template variable",
        ),
    ),
    (
        b'{"messages": [], "tokenize": true}',
        _error("InputError", "'tokenize' is an option of the run, not a template variable"),
    ),
    (
        b'{"messages": [], "eos_token": "</s>"}',
        _error("InputError", "'eos_token' is a special token of the model, not a row's variable"),
    ),
]
GOOD_LINE = b'[{"role": "user", "content": "ok"}]'
GOOD_OUT = _text("<|im_start|>user\nok<|im_end|>\n")


@pytest.mark.parametrize("workers", ["1", "2"])
def test_batch_hostile_lines_fail_alone(capsys, tmp_path, workers):
    data = b"".join(GOOD_LINE + b"\n" + line + b"\r\n" for line, _ in HOSTILE) + GOOD_LINE
    source = tmp_path / "in.jsonl"
    source.write_bytes(data)
    target = tmp_path / "out.jsonl"
    argv = ["batch", "--template", CHATML, str(source), str(target), "--workers", workers]
    status, out, err = run(capsys, *argv, "--chunk-size", "3")
    assert (status, out) == (0, "")
    assert err.startswith(f"batch: 29 conversations ({len(HOSTILE)} errors) in ")
    expected = [record for _, want in HOSTILE for record in (GOOD_OUT, want)] + [GOOD_OUT]
    expected = numbered(expected)
    lines = target.read_bytes().split(b"\n")
    assert lines[-1] == b""
    assert [json.loads(line) for line in lines[:-1]] == expected


def test_batch_line_variables_and_run_options(capsys, tmp_path):
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
        '{"text":"flag:True:1","error":null}\n{"text":"line:True:1","error":null}\n'
    )


def test_batch_id_column_spans_and_fail_on_error(capsys, tmp_path):
    source = write(
        tmp_path / "in.jsonl",
        '{"id": "a", "messages": [{"role": "user", "content": "Hi"}, '
        '{"role": "assistant", "content": "Yo"}]}\n'
        '{"messages": [{"role": "user", "content": "x"}]}\n'
        '{"id": 7, "messages": "[{\\"role\\": \\"user\\", \\"content\\": 1}]"}\n',
    )
    target = tmp_path / "out.jsonl"
    argv = ["batch", "--template", CHATML, source, str(target), "--id-column", "id", "--spans"]
    status, out, err = run(capsys, *argv, "--fail-on-error")
    assert (status, out) == (2, "")
    assert err.startswith("batch: 3 conversations (1 error) in ")
    assert err.endswith("/s\nerror: 1 of 3 conversations failed\n")
    assert [json.loads(line) for line in target.read_text().splitlines()] == [
        {
            "id": "a",
            "text": "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nYo<|im_end|>\n",
            "assistant_spans": [[52, 64]],
            "error": None,
        },
        {
            "id": None,
            "text": "<|im_start|>user\nx<|im_end|>\n",
            "assistant_spans": [],
            "error": None,
        },
        {
            "id": 7,
            "text": None,
            "assistant_spans": None,
            "error": {
                "kind": "TemplateRuntimeError",
                "message": 'can only concatenate str (not "int") to str',
                "line": 18,
                "column": 50,
                "input_line": 3,
            },
        },
    ]
    assert run(capsys, *argv[:-1], "--quiet", "--overwrite") == (0, "", "")


def test_batch_singular_summary_and_unreadable_input(capsys, tmp_path):
    source = write(tmp_path / "in.jsonl", GOOD_LINE.decode() + "\n")
    status, out, err = run(capsys, "batch", "--template", CHATML, source, str(tmp_path / "o"))
    assert (status, out) == (0, "")
    assert err.startswith("batch: 1 conversation (0 errors) in ")
    missing = str(tmp_path / "missing.jsonl")
    argv = ["batch", "--template", CHATML, missing, str(tmp_path / "o"), "--fail-on-error"]
    assert run(capsys, *argv) == (1, "", f"error: no such file: {missing}\n")


def test_batch_undecodable_bytes_become_replacement_characters(capsys, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_bytes(b'[{"role": "user", "content": "caf\xe9"}]\n')
    target = tmp_path / "out.jsonl"
    argv = ["batch", "--template", CHATML, str(source), str(target), "--quiet"]
    assert run(capsys, *argv) == (0, "", "")
    assert target.read_text(encoding="utf-8") == (
        '{"text":"<|im_start|>user\\ncaf\ufffd<|im_end|>\\n","error":null}\n'
    )


class _Sink:
    """Records, at each write, how many input lines had been read: the in-flight window."""

    def __init__(self, source):
        self.source = source
        self.lines = 0
        self.ahead = []

    def write(self, data):
        self.lines += data.count(b"\n")
        self.ahead.append(self.source.read - self.lines)


class _Lines:
    def __init__(self, count):
        self.count = count
        self.read = 0

    def __iter__(self):
        for i in range(self.count):
            self.read += 1
            yield json.dumps([{"role": "user", "content": f"m{i}"}]).encode() + b"\n"


@pytest.mark.parametrize(("workers", "most_ahead"), [(1, 0), (2, 30)])
def test_batch_memory_is_bounded(workers, most_ahead):
    from minijinja_py.chat import ChatTemplate
    from minijinja_py.pipelines import RowRenderer
    from minijinja_py.pipelines.files import JsonlSource, render_stream

    renderer = RowRenderer(ChatTemplate.from_string("{{ messages[0].content }}"))
    lines = _Lines(500)
    sink = _Sink(lines)
    source = JsonlSource(lines, close=False)
    done = render_stream(
        renderer, source, sink, output_format="jsonl", workers=workers, chunk_size=10
    )
    assert done == (500, 0)
    assert sink.lines == 500
    # one worker renders chunk by chunk; a pool keeps at most 2 * workers chunks in flight
    assert max(sink.ahead) == most_ahead


def test_a_pool_renders_the_lines_one_process_renders(tmp_path):
    # Lines cross to the workers joined and are cut again at b"\n": a "\r" before it, a raw
    # "\r" inside a line, an empty line and a last line without a newline come out alike.
    import io

    from minijinja_py.chat import ChatTemplate
    from minijinja_py.pipelines import RowRenderer
    from minijinja_py.pipelines.files import JsonlSink, JsonlSource, render_stream

    renderer = RowRenderer(ChatTemplate.from_string("{{ messages[0].content }}"))
    first = json.dumps([{"role": "user", "content": "a"}]).encode()
    raw = first + b"\r\n" + b'[{"role": "user", "content": "b\rc"}]\n' + b"\n" + first
    outputs = []
    for workers in (1, 2):
        out = io.BytesIO()
        done = render_stream(
            renderer,
            JsonlSource(io.BytesIO(raw), close=False),
            JsonlSink(out, close=False),
            output_format="jsonl",
            workers=workers,
            chunk_size=3,
        )
        assert done == (3, 1)  # (a raw "\r" is not valid inside a JSON string; a blank line
        outputs.append(out.getvalue())  # is no row)
    assert outputs[0] == outputs[1]
    texts = [json.loads(line)["text"] for line in outputs[0].splitlines()]
    assert texts == ["a", None, "a"]


def test_batch_bad_workers(capsys, tmp_path):
    argv = ["batch", "--template", CHATML, "in", "out", "--workers", "0"]
    assert run(capsys, *argv) == (1, "", "error: --workers must be at least 1\n")
    argv[-1] = "many"
    assert run(capsys, *argv) == (1, "", "error: --workers must be a number or 'auto', not 'many'\n")


def test_batch_auto_workers_is_one_per_usable_cpu(capsys, tmp_path, monkeypatch):
    import minijinja_py.cli as cli
    from minijinja_py.pipelines import files

    asked: list[int] = []
    real = files.render_stream

    def recording(*args, **kwargs):
        asked.append(kwargs["workers"])
        return real(*args, **kwargs)

    monkeypatch.setattr(files, "render_stream", recording)
    monkeypatch.setattr(cli.options, "usable_cpus", lambda: 2)
    source = write(tmp_path / "in.jsonl", "\n".join(BATCH_LINES * 5) + "\n")
    target = tmp_path / "out.jsonl"
    argv = ["batch", "--template", CHATML, source, str(target), "--quiet", "--chunk-size", "4"]
    assert run(capsys, *argv, "--workers", "auto") == (0, "", "")
    assert asked == [2]
    lines = target.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == batch_out(5)


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="no affinity mask here")
def test_usable_cpus_are_the_affinity_mask():
    from minijinja_py.cli import usable_cpus

    assert usable_cpus() == len(os.sched_getaffinity(0))


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
        b'{"text":"<|im_start|>user\\nHello!<|im_end|>\\n","error":null}\n',
        b"",
    )


def _complete(script: str, *words: str) -> list[str]:
    line = " ".join(words)
    program = (
        f"{script}\nCOMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; _minijinja_py; "
        'printf "%s\\n" "${COMPREPLY[@]}"'
    )
    done = subprocess.run(["bash", "-c", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_bash_completion(capsys):
    status, script, err = run(capsys, "completion", "bash")
    assert (status, err) == (0, "")
    assert script.startswith('# minijinja-py completion for bash: eval "$(minijinja-py ')
    assert _complete(script, "minijinja-py", "c") == ["check", "completion"]
    assert _complete(script, "minijinja-py", "batch", "--fa") == ["--fail-on-error"]
    assert _complete(script, "minijinja-py", "render", "--t") == ["--template", "--tools"]
    assert _complete(script, "minijinja-py", "--v") == ["--version"]


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_batch_progress_bar_on_a_terminal(monkeypatch):
    from types import SimpleNamespace

    from minijinja_py import cli

    clock = iter([100.0, 101.0, 102.0, 104.0])
    monkeypatch.setattr(cli.time, "perf_counter", lambda: next(clock))
    source = SimpleNamespace(total=1000, done=0)
    terminal = _Terminal()
    meter = cli._Progress(terminal, source)
    source.done = 250
    meter.add(SimpleNamespace(rows=300, errors=2, skipped=0))
    source.done = 1000
    meter.add(SimpleNamespace(rows=900, errors=0, skipped=0))
    meter.finish()
    assert terminal.getvalue() == (
        "\rbatch: [#######-----------------------]  25% 300 conversations, 2 failed, 300/s, "
        "ETA 0:03\x1b[K"
        "\rbatch: [##############################] 100% 1,200 conversations, 2 failed, 600/s, "
        "ETA 0:00\x1b[K"
        "\r\x1b[Kbatch: 1,200 conversations (2 errors) in 4.00 s, 300.0/s\n"
    )
    # off a terminal: the summary line only
    clock = iter([0.0, 1.0, 2.0])
    plain = io.StringIO()
    meter = cli._Progress(plain, SimpleNamespace(total=None, done=0))
    meter.add(SimpleNamespace(rows=1, errors=1, skipped=0))
    meter.finish()
    assert plain.getvalue() == "batch: 1 conversation (1 error) in 2.00 s, 0.5/s\n"


def test_module_batch_stdin_splits_on_newline_only():
    lines = '[{"role": "user", "content": "a"}]\n{"messages": "x\r"}\r\n[{"role": "user", "content": "b"}]'
    done = program("batch", "--template", CHATML, "-", "-", "--quiet", stdin=lines)
    assert (done.returncode, done.stderr) == (0, b"")
    assert [json.loads(line) for line in done.stdout.decode().splitlines()] == [
        {"text": "<|im_start|>user\na<|im_end|>\n", "error": None},
        {
            "text": None,
            "error": {
                "kind": "JSONDecodeError",
                "message": "Invalid control character at: column 16 of the JSON text",
                "line": None,
                "column": None,
                "input_line": 2,
            },
        },
        {"text": "<|im_start|>user\nb<|im_end|>\n", "error": None},
    ]


# -- failures are bounded and never lose rows ----------------------------------------------------

RAISING = (
    "{% set c = messages[0].content %}"
    "{% if c == 'big' %}{{ raise_exception(10 ** 5000) }}"
    "{% elif c is string %}{{ c }}{% else %}{{ raise_exception(c) }}{% endif %}"
)


def test_batch_hostile_rows_never_lose_the_other_rows(capsys, tmp_path):
    template = write(tmp_path / "t.jinja", RAISING)
    rows = [[1, 2], "ok", 1, "big"]
    source = write(
        tmp_path / "in.jsonl",
        "".join(json.dumps([{"role": "user", "content": c}]) + "\n" for c in rows),
    )
    target = tmp_path / "out.jsonl"
    argv = ["batch", "--template", template, source, str(target), "--quiet"]
    assert run(capsys, *argv) == (0, "", "")

    def failed(message, number, call="raise_exception(c)"):
        column = RAISING.index(call) + 1
        error = {"kind": "TemplateError", "message": message, "line": 1, "column": column}
        return {"text": None, "error": {**error, "input_line": number}}

    lines = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert lines == [
        failed("[1, 2]", 1),
        {"text": "ok", "error": None},
        failed("1", 3),
        failed("<int of 5001 digits>", 4, "raise_exception(10"),
    ]


def test_render_error_with_a_huge_int_is_one_bounded_error(capsys, tmp_path):
    template = write(tmp_path / "t.jinja", "{{ raise_exception(10 ** 5000) }}")
    assert run(capsys, "render", "--template", template, "--messages", CONVERSATION) == (
        1,
        "",
        f"error: <int of 5001 digits>\n  ({template}, line 1, column 4)\n"
        "{{ raise_exception(10 ** 5000) }}\n   ^\n",
    )
    done = program("render", "--template", template, "--messages", CONVERSATION)
    assert (done.returncode, done.stdout) == (1, b"")
    assert done.stderr.decode() == (
        f"error: <int of 5001 digits>\n  ({template}, line 1, column 4)\n"
        "{{ raise_exception(10 ** 5000) }}\n   ^\n"
    )


class _Unprintable(Exception):
    def __str__(self) -> str:
        raise ValueError(10**5000)


def test_an_exception_that_cannot_be_printed_is_still_one_error_line(capsys, monkeypatch):
    from minijinja_py import cli

    def fails(args):
        raise _Unprintable

    monkeypatch.setattr(cli, "_cmd_render", fails)
    assert run(capsys, "render", "--template", CHATML, "--messages", CONVERSATION) == (
        1,
        "",
        "error: <unprintable _Unprintable object>\n",
    )
    monkeypatch.setattr(cli, "_cmd_render", lambda args: (_ for _ in ()).throw(KeyError(10**5000)))
    assert run(capsys, "render", "--template", CHATML, "--messages", CONVERSATION) == (
        1,
        "",
        "error: missing key <int of 5001 digits>\n",
    )


def test_continue_final_message_error_quotes_the_render_within_bounds(capsys, tmp_path):
    template = write(tmp_path / "t.jinja", "{{ 'x' * 100000 }}{{ messages[-1].content[:0] }}")
    messages = write(tmp_path / "m.json", '[{"role": "assistant", "content": "Hi"}]')
    argv = ["render", "--template", template, "--messages", messages, "--continue-final-message"]
    full = (
        "continue_final_message is set but the final message does not appear in the chat after "
        "applying the chat template! This can happen if the chat template deletes portions of "
        "the final message. Please verify the chat template and final message in your chat to "
        "ensure they are compatible.Final message to continue: Hi\nRendered chat:\n"
        + "x" * 2000 + "... (100000 characters in all)"
    )
    shown = full[:2000] + f"... ({len(full)} characters in all)"
    assert run(capsys, *argv) == (1, "", f"error: {shown}\n")


@pytest.mark.parametrize(
    "input_name, output_name, message",
    [
        ("in.jsonl", "out.csv", "out.csv: batch cannot write .csv files; the output must be"),
        ("in.jsonl", "out.jsonl.gz", "out.jsonl.gz: batch cannot write .gz files; the output must be"),
        ("in.txt", "out.jsonl", "in.txt: batch cannot read .txt files; the input must be"),
        ("in.csv", "out.csv", "in.csv: batch cannot read .csv files; the input must be"),
    ],
)
def test_batch_refuses_extensions_it_cannot_handle_before_any_work(
    capsys, tmp_path, input_name, output_name, message
):
    source = tmp_path / input_name
    source.write_bytes(GOOD_LINE + b"\n")
    target = tmp_path / output_name
    argv = ["batch", "--template", CHATML, str(source), str(target)]
    formats = (
        " JSONL (.jsonl, .ndjson, .jsonlines, .json, no extension, or '-')"
        " or Parquet (.parquet, .pq)"
    )
    assert run(capsys, *argv) == (1, "", f"error: {tmp_path / message}{formats}\n")
    assert not target.exists()


@pytest.mark.parametrize("output_name", ["out.ndjson", "out.json", "out", "OUT.JSONL"])
def test_batch_accepts_the_jsonl_extensions(capsys, tmp_path, output_name):
    source = tmp_path / "in.jsonl"
    source.write_bytes(GOOD_LINE + b"\n")
    target = tmp_path / output_name
    assert run(capsys, "batch", "--template", CHATML, str(source), str(target), "--quiet") == (
        0, "", ""
    )
    assert target.read_text(encoding="utf-8") == (
        '{"text":"<|im_start|>user\\nok<|im_end|>\\n","error":null}\n'
    )
