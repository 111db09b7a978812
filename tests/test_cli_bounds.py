"""The command line's bounds: what it reads (regular files, within a size), what it writes (never
an input, never over a previous output), the limits it renders under, and `batch`'s one output
row per input row whatever a row does to its worker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from minijinja_py.chat import ChatTemplate
from minijinja_py.cli import main
from minijinja_py.pipelines import RowRenderer

ROOT = Path(__file__).resolve().parents[1]
CHATML = str(ROOT / "examples" / "chatml.jinja")
CONVERSATION = str(ROOT / "examples" / "conversation.json")
HI = json.dumps([{"role": "user", "content": "hi"}])


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)


def program(*argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-m", "minijinja_py", *argv],
        capture_output=True,
        env=env,
        cwd=ROOT,
        timeout=120,  # (a FIFO opened for reading would wait here for ever)
        stdin=subprocess.DEVNULL,
    )


# -- what the command line reads ----------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_not_waited_on(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    refused = f"error: {fifo}: a FIFO, not a regular file: refused (read standard input with '-')\n"
    for argv in (
        ["render", "--template", str(fifo), "--messages", CONVERSATION],
        ["render", "--template", CHATML, "--context", str(fifo)],
        ["render", "--template", CHATML, "--messages", str(fifo)],
        ["check", str(fifo)],
        ["batch", "--template", CHATML, str(fifo), str(tmp_path / "out.jsonl")],
    ):
        done = program(*argv)
        assert (done.returncode, done.stdout, done.stderr.decode()) == (1, b"", refused), argv


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero here")
def test_a_device_is_refused_not_read(capsys):
    start = time.process_time()
    status, out, err = run(capsys, "render", "--template", CHATML, "--context", "/dev/zero")
    assert (status, out, err) == (
        1,
        "",
        "error: /dev/zero: a character device, not a regular file: refused (read standard input "
        "with '-')\n",
    )
    assert time.process_time() - start < 1.0  # (reading it would never end)


def test_json_files_and_templates_are_read_within_a_bound(capsys, tmp_path, monkeypatch):
    from minijinja_py.pipelines import inputs

    monkeypatch.setattr(inputs, "MAX_JSON_FILE_BYTES", 100)
    context = write(tmp_path / "big.json", json.dumps({"x": "y" * 200}))
    assert run(capsys, "render", "--template", CHATML, "--context", context) == (
        1,
        "",
        f"error: {context}: the --context file is larger than 100 bytes: refused\n",
    )
    # a template: four bytes a character of max_source, then the engine's own check
    template = write(tmp_path / "t.jinja", "{{ 1 }}" * 10)
    argv = ["render", "--template", template, "--messages", CONVERSATION]
    assert run(capsys, *argv, "--max-source", "5") == (
        1,
        "",
        f"error: {template}: the template is larger than 20 bytes: refused\n",
    )
    monkeypatch.undo()
    assert run(capsys, *argv, "--max-source", "5000") == (0, "1" * 10, "")


def test_batch_never_writes_over_its_own_input(capsys, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text(HI + "\n")
    link = tmp_path / "link.jsonl"
    link.symlink_to(source)
    for target in (source, link):
        argv = ["batch", "--template", CHATML, str(source), str(target), "--overwrite"]
        assert run(capsys, *argv) == (
            1,
            "",
            f"error: {target}: the output is the same file as the input ({source}); writing it "
            "would destroy the input: choose another output\n",
        )
    template = tmp_path / "t.json"  # (a name batch would write JSONL to)
    template.write_text("{{ 1 }}")
    argv = ["batch", "--template", str(template), str(source), str(template), "--overwrite"]
    assert run(capsys, *argv)[2] == (
        f"error: {template}: the output is the same file as the template ({template}); writing "
        "it would destroy the input: choose another output\n"
    )
    assert source.read_text() == HI + "\n" and template.read_text() == "{{ 1 }}"


def test_batch_replaces_an_existing_output_only_when_asked(capsys, tmp_path):
    source = write(tmp_path / "in.jsonl", HI + "\n")
    target = tmp_path / "out.jsonl"
    target.write_text("a previous run\n")
    argv = ["batch", "--template", CHATML, source, str(target), "--quiet"]
    assert run(capsys, *argv) == (
        1,
        "",
        f"error: {target}: the output exists and is not empty: choose another path, or replace "
        "it (--overwrite, overwrite=True)\n",
    )
    assert target.read_text() == "a previous run\n"
    assert run(capsys, *argv, "--overwrite") == (0, "", "")
    assert target.read_text() == '{"text":"<|im_start|>user\\nhi<|im_end|>\\n","error":null}\n'
    target.write_text("")  # an empty file is no previous output
    assert run(capsys, *argv) == (0, "", "")


# -- limits and the clock -------------------------------------------------------------------------


def test_render_takes_limits_and_a_pinned_clock(capsys, tmp_path):
    loop = write(tmp_path / "loop.jinja", "{% for i in range(1000) %}{% endfor %}done")
    argv = ["render", "--template", loop, "--messages", CONVERSATION]
    assert run(capsys, *argv) == (0, "done", "")
    status, out, err = run(capsys, *argv, "--max-steps", "100")
    assert (status, out) == (1, "")
    assert err.startswith("error: the render exceeded its budget of ")
    assert run(capsys, *argv, "--max-seconds", "30", "--max-output", "10") == (0, "done", "")
    status, out, err = run(capsys, *argv, "--max-output", "3")
    assert (status, err.splitlines()[0]) == (1, "error: the output exceeded max_output (3)")
    clock = write(tmp_path / "clock.jinja", "{{ strftime_now('%Y-%m-%d %H:%M') }}")
    pinned = ["--now", "2026-01-15T12:30:00"]
    assert run(capsys, "render", "--template", clock, "--messages", CONVERSATION, *pinned) == (
        0,
        "2026-01-15 12:30",
        "",
    )
    assert run(capsys, "render", "--template", clock, "--var", "x=1", *pinned) == (
        0,
        "2026-01-15 12:30",
        "",
    )
    assert run(capsys, "render", "--template", clock, "--var", "x=1", "--now", "noon") == (
        1,
        "",
        "error: --now expects an ISO 8601 date and time (2026-01-15T12:00:00), not 'noon'\n",
    )
    assert run(capsys, *argv, "--max-steps", "0") == (
        1,
        "",
        "error: --max-steps must be a positive number\n",
    )


def test_batch_renders_under_the_limits_and_clock(capsys, tmp_path):
    template = write(
        tmp_path / "t.jinja",
        "{% for i in range(messages[0].content | int) %}{% endfor %}{{ strftime_now('%d %b %Y') }}",
    )
    source = write(
        tmp_path / "in.jsonl",
        "".join(json.dumps([{"role": "user", "content": n}]) + "\n" for n in ("1", "5000")),
    )
    target = tmp_path / "out.jsonl"
    argv = ["batch", "--template", template, source, str(target), "--quiet"]
    assert run(capsys, *argv, "--max-steps", "1000", "--now", "2026-07-26T00:00") == (0, "", "")
    rows = [json.loads(line) for line in target.read_text().splitlines()]
    assert rows[0] == {"text": "26 Jul 2026", "error": None}
    assert rows[1]["error"]["kind"] == "LimitError"
    assert rows[1]["error"]["message"].startswith("the render exceeded its budget of ")


HOSTILE = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"


def test_check_is_bounded_and_claims_nothing_it_could_not_establish(capsys, tmp_path):
    path = write(tmp_path / "hostile.jinja", HOSTILE + "{{ messages }}")
    start = time.process_time()
    status, out, err = run(capsys, "check", path)
    # one probe runs into max_steps, the others stop there (each ran to the limit before)
    assert time.process_time() - start < 1.5
    assert (status, err) == (1, "")
    lines = out.splitlines()
    assert lines[:3] == [f"stopped by a limit: {path}", "variables: messages", "capabilities:"]
    assert "  preserves_prefix: unknown" in lines
    assert "  supports_system_role: unknown" in lines
    assert "  renders: unknown" in lines
    assert not [line for line in lines if line.endswith((": yes", ": no"))]
    status, out, _ = run(capsys, "check", path, "--json", "--max-steps", "500")
    report = json.loads(out)["templates"]["default"]
    assert (status, report["preserves_prefix"], report["renders"]) == (1, None, None)
    assert report["render_error"].startswith("the render exceeded its budget of ")
    # every probe raising: renders is "no", and the rest unknown
    raising = write(tmp_path / "raises.jinja", "{{ raise_exception('no') }}")
    status, out, _ = run(capsys, "check", raising)
    assert (status, "  renders: no" in out, "  preserves_prefix: unknown" in out) == (1, True, True)


# -- batch: one output row per input row, always ----------------------------------------------------


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines()


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().split(b"\n")[:-1]]


def test_blank_lines_are_no_rows_and_fail_nothing(capsys, tmp_path):
    source = write(tmp_path / "in.jsonl", f"{HI}\n\n  \t\r\n{HI}\n\n")
    target = tmp_path / "out.jsonl"
    argv = ["batch", "--template", CHATML, source, str(target), "--fail-on-error"]
    status, out, err = run(capsys, *argv)
    assert (status, out) == (0, "")
    assert err.startswith("batch: 2 conversations (0 errors, 3 blank lines skipped) in ")
    assert [row["error"] for row in _rows(target)] == [None, None]


def test_an_over_long_line_is_an_error_row_in_its_place(tmp_path, monkeypatch):
    from minijinja_py.pipelines import files

    monkeypatch.setattr(files, "MAX_LINE_BYTES", 64)
    long = json.dumps([{"role": "user", "content": "x" * 200}])
    source = tmp_path / "in.jsonl"
    source.write_text(f"{HI}\n{long}\n\n{HI}\n{long}")
    target = tmp_path / "out.jsonl"
    assert main(["batch", "--template", CHATML, str(source), str(target), "--quiet"]) == 0
    message = "the line is {} bytes, longer than the 64 bytes of a row: not read"
    too_long = {
        "kind": "RowSizeError",
        "message": message.format(len(long) + 1),  # (its line end counted)
        "line": None,
        "column": None,
    }
    assert [row["error"] for row in _rows(target)] == [
        None,
        {**too_long, "input_line": 2},
        None,
        {**too_long, "message": message.format(len(long)), "input_line": 5},
    ]


def test_a_row_over_the_output_bound_is_an_error_row(tmp_path, monkeypatch):
    from minijinja_py.pipelines import files

    monkeypatch.setattr(files, "MAX_ROW_BYTES", 1000)
    template = write(tmp_path / "t.jinja", "{{ 'x' * (messages[0].content | int) }}")
    source = tmp_path / "in.jsonl"
    source.write_text(
        "".join(
            json.dumps({"id": n, "messages": [{"role": "user", "content": n}]}) + "\n"
            for n in ("10", "5000", "20")
        )
    )
    inputs = [source]
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        pass
    else:
        inputs.append(tmp_path / "in.parquet")
        pq.write_table(
            pa.Table.from_pylist([json.loads(line) for line in _lines(source)]), inputs[-1]
        )
    cases = [(i, suffix) for i in inputs for suffix in ("jsonl", "parquet")]
    for number, (given, suffix) in enumerate(cases):
        if suffix == "parquet":
            pytest.importorskip("pyarrow")
        target = tmp_path / f"out{number}.{suffix}"
        argv = ["batch", "--template", template, str(given), str(target), "--quiet"]
        assert main([*argv, "--id-column", "id"]) == 0, (given, suffix)
        if suffix == "jsonl":
            rows = _rows(target)
            size = 5000 + len('{"id":"5000","text":"","error":null}')
        else:
            import pyarrow.parquet as pq

            rows = pq.read_table(target).to_pylist()
            size = 5000
        assert [row["id"] for row in rows] == ["10", "5000", "20"]
        assert [row["text"] for row in rows] == ["x" * 10, None, "x" * 20]
        assert rows[1]["error"] == {
            "kind": "RowSizeError",
            "message": f"the output row is {size:,} bytes, over the 1,000 bytes of a row: not "
            "written",
            "line": None,
            "column": None,
            "input_line": 2,
        }


class _Sizes:
    def __init__(self):
        self.chunks = []

    def __call__(self, chunk):
        self.chunks.append(chunk.rows)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_chunk_stops_taking_rows_once_its_output_passes_the_budget(workers):
    import io

    from minijinja_py.pipelines.files import JsonlSink, JsonlSource, render_stream

    renderer = RowRenderer(ChatTemplate.from_string("{{ 'x' * 1000 }}{{ messages[0].content }}"))
    raw = b"".join(
        json.dumps([{"role": "user", "content": str(i)}]).encode() + b"\n" for i in range(30)
    )
    out = io.BytesIO()
    sizes = _Sizes()
    done = render_stream(
        renderer,
        JsonlSource(io.BytesIO(raw), close=False),
        JsonlSink(out, close=False),
        output_format="jsonl",
        workers=workers,
        chunk_size=256,
        on_chunk=sizes,
        budget=4000,
    )
    # 30 rows of about 1 kB under a budget of 4 kB: chunks of four rows, in order
    assert done == (30, 0)
    assert sizes.chunks == [4] * 7 + [2]
    texts = [json.loads(line)["text"] for line in out.getvalue().splitlines()]
    assert texts == ["x" * 1000 + str(i) for i in range(30)]


class _Deadly(RowRenderer):
    """Kills its worker process on the row whose message says "die"."""

    def render_value(self, value):
        if value[0]["content"] == "die":
            os._exit(3)
        return super().render_value(value)


def test_a_worker_that_dies_costs_only_its_row(tmp_path):
    import io

    from minijinja_py.pipelines.files import JsonlSink, JsonlSource, render_stream

    contents = ["a", "b", "die", "c", "d", "e", "f", "g", "h"]
    raw = b"".join(json.dumps([{"role": "user", "content": c}]).encode() + b"\n" for c in contents)
    out = io.BytesIO()
    done = render_stream(
        _Deadly(ChatTemplate.from_string("{{ messages[0].content }}")),
        JsonlSource(io.BytesIO(raw), close=False),
        JsonlSink(out, close=False),
        output_format="jsonl",
        workers=2,
        chunk_size=2,
    )
    assert done == (9, 1)
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [row["text"] for row in rows] == ["a", "b", None, "c", "d", "e", "f", "g", "h"]
    error = rows[2]["error"]
    assert (error["kind"], error["input_line"]) == ("WorkerError", 3)
    assert error["message"].startswith(
        "the worker process rendering this row died or failed, twice (BrokenProcessPool: "
    )


def test_a_chunk_that_fails_in_process_is_rendered_a_row_at_a_time(monkeypatch):
    import io

    from minijinja_py.pipelines import files
    from minijinja_py.pipelines.files import JsonlSink, JsonlSource, render_stream

    real = files.encode_record

    def encode(record):  # a failure outside the per-row handling: memory, while encoding
        if record["text"] == "boom":
            raise MemoryError
        return real(record)

    monkeypatch.setattr(files, "encode_record", encode)
    lines = [json.dumps([{"role": "user", "content": c}]) for c in ("a", "boom", "b")]
    out = io.BytesIO()
    done = render_stream(
        RowRenderer(ChatTemplate.from_string("{{ messages[0].content }}")),
        JsonlSource(io.BytesIO("\n".join(lines).encode()), close=False),
        JsonlSink(out, close=False),
        output_format="jsonl",
        chunk_size=10,
    )
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert done == (3, 1)
    assert [row["text"] for row in rows] == ["a", None, "b"]
    assert rows[1]["error"] == {
        "kind": "WorkerError",
        "message": "the worker process rendering this row died or failed, twice (MemoryError: "
        "MemoryError)",
        "line": None,
        "column": None,
        "input_line": 2,
    }


# -- missing extras, said in the command line's terms -------------------------------------------


def test_tokens_without_a_tokenizer_names_the_option_to_give(capsys, tmp_path):
    source = write(tmp_path / "in.jsonl", HI + "\n")
    argv = ["batch", "--template", CHATML, source, str(tmp_path / "out.jsonl"), "--tokens"]
    assert run(capsys, *argv) == (
        1,
        "",
        "error: --tokens needs the model's tokenizer: give --model FOLDER, a model folder "
        "holding tokenizer.json (--template and --gguf carry none)\n",
    )
    model = tmp_path / "model"
    model.mkdir()
    (model / "chat_template.jinja").write_text("{{ messages[0].content }}")
    argv = ["batch", "--model", str(model), source, str(tmp_path / "out.jsonl"), "--tokens"]
    assert run(capsys, *argv)[2] == (
        "error: --tokens needs the model's tokenizer: give --model FOLDER, a model folder "
        f"holding tokenizer.json ({model} holds no tokenizer.json)\n"
    )


def test_parquet_without_pyarrow_names_the_extra(capsys, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # (an import of it fails)
    source = write(tmp_path / "in.jsonl", HI + "\n")
    message = "error: reading or writing Parquet needs pyarrow: pip install 'minijinja_py[arrow]'\n"
    argv = ["batch", "--template", CHATML, source, str(tmp_path / "out.parquet")]
    assert run(capsys, *argv) == (1, "", message)
    parquet = tmp_path / "in.parquet"
    parquet.write_bytes(b"PAR1")
    argv = ["batch", "--template", CHATML, str(parquet), str(tmp_path / "out.jsonl")]
    assert run(capsys, *argv) == (1, "", message)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_model_folder_holding_a_fifo_is_refused(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    os.mkfifo(model / "chat_template.jinja")
    done = program("render", "--model", str(model), "--messages", CONVERSATION)
    assert (done.returncode, done.stderr.decode()) == (
        1,
        f"error: {model / 'chat_template.jinja'}: a FIFO, not a regular file: refused\n",
    )
