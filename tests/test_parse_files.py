"""`minijinja-py parse` on Parquet (in and out) and `ColumnParser`, the columns sibling of
RowParser: one result row per input row, each failure in its own row, never an aborted run."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from minijinja_py import ChatTemplate
from minijinja_py.cli import main
from minijinja_py.pipelines.response_columns import ColumnParser, parse_columns
from minijinja_py.pipelines.responses import RowParser

pa = pytest.importorskip("pyarrow", reason="Parquet needs the 'arrow' extra (pyarrow)")
pq = pytest.importorskip("pyarrow.parquet", reason="Parquet needs the 'arrow' extra (pyarrow)")

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
    "{% if m.reasoning_content %}<think>\n{{ m.reasoning_content }}\n</think>\n\n{% endif %}"
    "{{ m.content }}"
    "{% for c in m.tool_calls or [] %}<tool_call>\n{{ c.function | tojson }}\n</tool_call>"
    "{% endfor %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
CALL = '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call><|im_end|>'
HI = '{"role": "assistant", "content": "Hi"}'
CALLED = (
    '{"role": "assistant", "tool_calls": [{"type": "function", '
    '"function": {"name": "f", "arguments": {"a": 1}}}]}'
)
NO_RESPONSE = {
    "kind": "InputError",
    "message": 'the row has no "generated"',
    "line": None,
    "column": None,
    "input_line": 2,
}


@pytest.fixture
def template(tmp_path: Path) -> Path:
    path = tmp_path / "t.jinja"
    path.write_text(CHATML, encoding="utf-8")
    return path


def _generations(tmp_path: Path) -> Path:
    """Three rows: a text, a null (no response), a call with its own prefix; and a column the
    parser does not read."""
    path = tmp_path / "gen.parquet"
    table = pa.table(
        {
            "id": pa.array([7, 8, 9], pa.int32()),
            "prompt": ["p0", "p1", "p2"],
            "generated": ["Hi<|im_end|>", None, CALL],
            "prefix": [None, None, "<|im_start|>assistant\n"],
        }
    )
    pq.write_table(table, path)
    return path


def test_parquet_in_jsonl_out(capsys, template: Path, tmp_path: Path):
    source = _generations(tmp_path)
    argv = ["parse", "--template", str(template), "--response-column", "generated"]
    status = main([*argv, "--id-column", "id", str(source), "-"])
    out, err = capsys.readouterr()
    assert (status, err) == (0, "")
    assert [json.loads(line) for line in out.splitlines()] == [
        {"id": 7, "message": json.loads(HI), "error": None},
        {"id": 8, "message": None, "error": NO_RESPONSE},
        {"id": 9, "message": json.loads(CALLED), "error": None},
    ]


def test_parquet_in_parquet_out_keeps_the_id_type(capsys, template: Path, tmp_path: Path):
    source, target = _generations(tmp_path), tmp_path / "out.parquet"
    argv = ["parse", "--template", str(template), "--response-column", "generated"]
    status = main([*argv, "--id-column", "id", "--chunk-size", "2", str(source), str(target)])
    assert (status, capsys.readouterr().err) == (0, "")
    table = pq.read_table(target)
    assert table.schema.field("id").type == pa.int32()
    assert table.schema.field("message").type == pa.string()
    assert table.to_pylist() == [
        {"id": 7, "message": HI, "error": None},
        {"id": 8, "message": None, "error": NO_RESPONSE},
        {"id": 9, "message": CALLED, "error": None},
    ]


def test_jsonl_in_parquet_out_one_row_per_line(capsys, template: Path, tmp_path: Path):
    source, target = tmp_path / "in.jsonl", tmp_path / "out.pq"
    lines = [json.dumps({"id": "a", "response": "Hi<|im_end|>"}), "", "not json"]
    lines.append(json.dumps({"id": 4, "response": "\ud800!"}))
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    status = main(
        ["parse", "--template", str(template), "--id-column", "id", str(source), str(target)]
    )
    assert (status, capsys.readouterr().err) == (0, "")
    assert pq.read_table(target).to_pylist() == [
        {"id": '"a"', "message": HI, "error": None},
        {
            "id": None,
            "message": None,
            "error": {
                "kind": "JSONDecodeError",
                "message": "Expecting value: column 1 of the JSON text",
                "line": None,
                "column": None,
                "input_line": 3,
            },
        },
        # (a lone surrogate, as JSON can write it: kept, escaped where UTF-8 cannot hold it;
        # ids of two types, which one Arrow column cannot hold: each as its JSON text)
        {"id": "4", "message": '{"role": "assistant", "content": "\\ud800!"}', "error": None},
    ]


def test_a_lone_surrogate_is_written_escaped_to_jsonl(capsys, template: Path, tmp_path: Path):
    source = tmp_path / "in.jsonl"
    source.write_text('"\\ud800!<|im_end|>"\n"Hi<|im_end|>"\n', encoding="utf-8")
    status = main(["parse", "--template", str(template), str(source), "-"])
    out, err = capsys.readouterr()
    assert (status, err) == (0, "")
    assert out == (
        '{"message": {"role": "assistant", "content": "\\ud800!"}, "error": null}\n'
        '{"message": {"role": "assistant", "content": "Hi"}, "error": null}\n'
    )


def test_a_parquet_file_without_the_response_column_is_refused(capsys, template, tmp_path):
    source = _generations(tmp_path)
    status = main(["parse", "--template", str(template), str(source), "-"])
    assert (status, capsys.readouterr()) == (
        1,
        (
            "",
            f"error: {source} has no column 'response' (its columns: 'id', 'prompt', "
            "'generated', 'prefix'): name the column of the generated text with "
            "--response-column\n",
        ),
    )


def test_fail_on_error_overwrite_and_formats(capsys, template: Path, tmp_path: Path):
    source, target = _generations(tmp_path), tmp_path / "out.jsonl"
    argv = ["parse", "--template", str(template), "--response-column", "generated"]
    assert main([*argv, "--fail-on-error", str(source), str(target)]) == 2
    assert capsys.readouterr().err == "error: 1 of 3 rows failed\n"
    assert len(target.read_text(encoding="utf-8").splitlines()) == 3
    assert main([*argv, str(source), str(target)]) == 1
    assert capsys.readouterr().err == (
        f"error: {target}: the output exists and is not empty: choose another path, or "
        "replace it (--overwrite, overwrite=True)\n"
    )
    assert main([*argv, "--overwrite", str(source), str(target)]) == 0
    assert main([*argv, str(source), str(tmp_path / "out.csv")]) == 1
    assert capsys.readouterr().err == (
        f"error: {tmp_path / 'out.csv'}: parse cannot write .csv files; the output must be "
        "JSONL (.jsonl, .ndjson, .jsonlines, .json, no extension, or '-') or Parquet "
        "(.parquet, .pq)\n"
    )


def test_column_parser_maps_dicts_and_tables_and_pickles():
    parser = RowParser(ChatTemplate.from_string(CHATML), passthrough=["id"])
    function = pickle.loads(pickle.dumps(ColumnParser(parser)))
    columns = {"id": [1, 2], "response": ["Hi<|im_end|>", 5], "other": ["x", "y"]}
    assert function(columns) == {
        "id": [1, 2],
        "message": [HI, None],
        "error": [
            None,
            {
                "kind": "InputError",
                "message": 'expected a JSON string or an object with a "response" string, not int',
                "line": None,
                "column": None,
                "input_line": None,
            },
        ],
    }
    table = function(pa.table({"id": [3], "response": [CALL]}))
    assert table.to_pylist() == [{"id": 3, "message": CALLED, "error": None}]
    assert parse_columns(parser, {"response": ["Hi<|im_end|>"]}, first_line=10) == {
        "id": [None],
        "message": [HI],
        "error": [None],
    }


def test_the_response_and_the_prefix_need_two_keys():
    with pytest.raises(ValueError) as caught:
        RowParser(ChatTemplate.from_string(CHATML), response_key="text", prefix_key="text")
    assert str(caught.value) == "the response and the prefix are both read from 'text'"


# -- the batch contract on any input: one row per non-blank line, whatever the line holds --------

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
_KEYS = st.sampled_from(["response", "prefix", "id", "other"]) | st.text(max_size=4)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=12,
)
_GOOD = {b'"Hi<|im_end|>"': HI, json.dumps({"id": 1, "response": CALL}).encode(): CALLED}
_LINES = st.lists(
    st.sampled_from(sorted(_GOOD))
    | _VALUES.map(lambda value: json.dumps(value).encode())
    | st.binary(max_size=40).map(lambda raw: raw.replace(b"\n", b" ")),
    max_size=10,
)


_PARSER = RowParser(ChatTemplate.from_string(CHATML), passthrough=["id"])


@given(lines=_LINES)
# (U+0085, U+2028 and U+2029 are written as they are, inside a JSON string: a row ends at
# "\n" alone, where str.splitlines would also end it)
@example(lines=[b'"0\\u00850"', b'"\\u2028\\u2029"'])
@settings(max_examples=150, deadline=None)
def test_any_lines_give_one_result_row_each(lines):
    import io

    from minijinja_py.pipelines.files import JsonlSink, JsonlSource
    from minijinja_py.pipelines.response_files import parse_stream

    parser = _PARSER
    sink = io.BytesIO()
    source = JsonlSource(io.BytesIO(b"".join(line + b"\n" for line in lines)))
    counts = parse_stream(parser, source, JsonlSink(sink, close=False), output_format="jsonl")
    rows = [json.loads(line) for line in sink.getvalue().split(b"\n")[:-1]]
    numbers = [n for n, line in enumerate(lines, 1) if line.strip(b" \t\r\n")]
    assert (counts.rows, counts.skipped, len(rows)) == (
        len(numbers),
        len(lines) - len(numbers),
        len(numbers),
    )
    for number, row in zip(numbers, rows, strict=True):
        assert list(row) == ["id", "message", "error"]
        line = lines[number - 1]
        if line in _GOOD:
            assert (row["message"], row["error"]) == (json.loads(_GOOD[line]), None)
        elif row["error"] is not None:
            assert row["message"] is None
            assert row["error"]["input_line"] == number
            assert isinstance(row["error"]["kind"], str) and row["error"]["message"]
    assert counts.errors == sum(1 for row in rows if row["error"] is not None)


# -- worker processes ----------------------------------------------------------------------------


def test_workers_give_the_one_process_rows_in_order(capsys, template: Path, tmp_path: Path):
    lines = [
        json.dumps({"id": i, "response": [CALL, "Hi<|im_end|>", "<tool_call>{x"][i % 3]})
        for i in range(40)
    ]
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(lines[:20]) + "\n\n" + "\n".join(lines[20:]) + "\n")
    outputs = []
    for workers in ("1", "2"):
        target = tmp_path / f"out{workers}.jsonl"
        argv = ["parse", "--template", str(template), "--id-column", "id", "--chunk-size", "3"]
        assert main([*argv, "--workers", workers, str(source), str(target)]) == 0
        outputs.append(target.read_text(encoding="utf-8"))
    assert capsys.readouterr().err == ""
    assert outputs[0] == outputs[1]
    rows = [json.loads(line) for line in outputs[0].splitlines()]
    assert [row["id"] for row in rows] == list(range(40))
    assert [row["error"]["input_line"] for row in rows if row["error"]] == [
        n + 1 + (n >= 20) for n in range(2, 40, 3)
    ]


def test_workers_on_parquet_give_the_one_process_table(capsys, template: Path, tmp_path: Path):
    source = tmp_path / "in.parquet"
    pq.write_table(
        pa.table({"id": list(range(30)), "response": ["Hi<|im_end|>", None, CALL] * 10}), source
    )
    tables = []
    for workers in ("1", "2"):
        target = tmp_path / f"out{workers}.parquet"
        argv = ["parse", "--template", str(template), "--id-column", "id", "--chunk-size", "4"]
        assert main([*argv, "--workers", workers, str(source), str(target)]) == 0
        tables.append(pq.read_table(target))
    assert capsys.readouterr().err == ""
    assert tables[0].equals(tables[1])
    assert tables[0].column("message").to_pylist() == [HI, None, CALLED] * 10


class DyingParser(RowParser):
    """A parser whose worker process dies on the row "die" (a row that runs it out of memory)."""

    def parse_value(self, value):
        if value == "die":
            os._exit(3)
        return super().parse_value(value)


def test_a_row_that_kills_its_worker_costs_no_other_row(tmp_path: Path):
    import io

    from minijinja_py.pipelines.files import JsonlSink, JsonlSource
    from minijinja_py.pipelines.response_files import parse_stream

    parser = DyingParser(ChatTemplate.from_string(CHATML))
    data = b'"Hi<|im_end|>"\n"die"\n"Hi<|im_end|>"\n\n"Hi<|im_end|>"\n'
    sink = io.BytesIO()
    counts = parse_stream(
        parser,
        JsonlSource(io.BytesIO(data)),
        JsonlSink(sink, close=False),
        output_format="jsonl",
        chunk_size=2,
        workers=2,
    )
    assert (counts.rows, counts.errors, counts.skipped) == (4, 1, 1)
    hi = '{"message": {"role": "assistant", "content": "Hi"}, "error": null}\n'
    assert sink.getvalue().decode() == (
        hi + '{"message": null, "error": {"kind": "WorkerError", "message": "the worker process '
        "parsing this row died or failed, twice (BrokenProcessPool: A process in the process "
        'pool was terminated abruptly while the future was running or pending.)", "line": null, '
        '"column": null, "input_line": 2}}\n' + hi + hi
    )


def test_a_response_over_max_string_fails_its_row_alone(capsys, template: Path, tmp_path: Path):
    source = tmp_path / "in.parquet"
    pq.write_table(pa.table({"response": ["x" * 10_000_001, "Hi<|im_end|>"]}), source)
    assert main(["parse", "--template", str(template), str(source), "-"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert [json.loads(line) for line in out.splitlines()] == [
        {
            "message": None,
            "error": {
                "kind": "ValueError",
                "message": "the response (with its prefix) is longer than max_string "
                "(10000000 characters)",
                "line": None,
                "column": None,
                "input_line": 1,
            },
        },
        {"message": json.loads(HI), "error": None},
    ]
