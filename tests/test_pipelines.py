"""Rows of conversations to rows of results: the engine-independent core, Arrow and Parquet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from minijinja_py.chat import ChatTemplate
from minijinja_py.cli import main
from minijinja_py.pipelines import InputError, RowRenderer, error_record, parse_json
from minijinja_py.pipelines.arrow import ColumnRenderer, render_arrow, render_columns

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
# nested message columns are this module's input on purpose; the warning has its own test
pytestmark = pytest.mark.filterwarnings("ignore::minijinja_py.pipelines.arrow.KeyOrderWarning")

CHATML = str(Path(__file__).resolve().parents[1] / "examples" / "chatml.jinja")
SHOW = (
    "{% for m in messages %}{{ m.role }}={{ m.content }}"
    "{% if m.tool_calls is defined %} calls={{ m.tool_calls | length }}{% endif %};"
    "{% endfor %}{% if tools %}tools={{ tools | map(attribute='function.name') | join(',') }};"
    "{% endif %}{{ extra | default('-') }}"
)


def chat():
    return ChatTemplate.from_string(SHOW)


def ok(text):
    return {"text": text, "error": None}


def failed(kind, message, line=None, column=None, input_line=None):
    return {"text": None, "error": error(kind, message, line, column, input_line)}


def error(kind, message, line=None, column=None, input_line=None):
    return {
        "kind": kind,
        "message": message,
        "line": line,
        "column": column,
        "input_line": input_line,
    }


def test_parse_json_refuses_deep_nesting_and_long_integers():
    assert parse_json('{"a": [1, {"b": "[[[["}]}') == {"a": [1, {"b": "[[[["}]}
    assert parse_json("[" * 100 + "]" * 100) is not None
    with pytest.raises(InputError, match=r"^JSON nested deeper than 100 levels$"):
        parse_json("[" * 101 + "]" * 101)
    # brackets inside strings are not nesting
    assert parse_json(json.dumps(["[" * 500])) == ["[" * 500]
    assert parse_json("-" + "9" * 4300) == -int("9" * 4300)
    with pytest.raises(InputError, match=r"^an integer of 4301 digits: at most 4300 are accepted$"):
        parse_json("[" + "9" * 4301 + "]")


def test_error_record_of_each_kind():
    from minijinja_py import Environment, TemplateError

    with pytest.raises(TemplateError) as caught:
        Environment().from_string("line\n  {{ x.y.z }}").render()
    assert error_record(caught.value) == error("UndefinedError", "'x' is undefined", 2, 8)
    with pytest.raises(json.JSONDecodeError) as decode:
        json.loads('{"a" 1}')
    # (a position in the JSON text is no template position: it is said in the message)
    assert error_record(decode.value) == error(
        "JSONDecodeError", "Expecting ':' delimiter: column 6 of the JSON text"
    )
    with pytest.raises(json.JSONDecodeError) as decode:
        json.loads('{"a":\n 1 2}')
    assert error_record(decode.value) == error(
        "JSONDecodeError", "Expecting ',' delimiter: line 2 column 4 of the JSON text"
    )
    assert error_record(KeyError("k")) == error("KeyError", "missing key 'k'")
    assert error_record(ValueError("bad \ud800")) == error("ValueError", "bad \\ud800")


def test_rows_hold_variables_never_options():
    renderer = RowRenderer(
        chat(), variables={"extra": "run"}, tools=[{"type": "function", "function": {"name": "f"}}]
    )
    user = [{"role": "user", "content": "hi"}]
    assert renderer.render_row({"messages": user}) == ok("user=hi;tools=f;run")
    assert renderer.render_row({"messages": user, "extra": "row", "tools": None}) == ok(
        "user=hi;tools=f;row"
    )
    assert renderer.render_value(user) == ok("user=hi;tools=f;run")
    for key in ("chat_template", "add_generation_prompt", "return_dict", "max_length"):
        assert renderer.render_row({"messages": user, key: "x"}) == failed(
            "InputError", f"{key!r} is an option of the run, not a template variable"
        )
    assert renderer.render_row({"messages": user, "bos_token": "x"}) == failed(
        "InputError", "'bos_token' is a special token of the model, not a row's variable"
    )
    assert renderer.render_row({"messages": '[{"role": 1}'}) == failed(
        "InputError",
        "'messages' holds invalid JSON: Expecting ',' delimiter: line 1 column 13 (char 12)",
    )


def test_a_models_own_special_tokens_are_reserved():
    model = ChatTemplate.from_string("{{ bos_token }}", {"bos_token": "<s>", "im_start": "<|"})
    renderer = RowRenderer(model)
    assert renderer.render_row({"messages": [], "im_start": "x"}) == failed(
        "InputError", "'im_start' is a special token of the model, not a row's variable"
    )
    hello = [{"role": "user", "content": "Hi"}]
    assert renderer.render_row({"messages": hello}) == ok("<s>")


MESSAGES = [
    [{"role": "user", "content": "a"}],
    [
        {"role": "user", "content": "b"},
        {
            "role": "assistant",
            "content": "c",
            "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {"x": 1}}}],
        },
    ],
    [{"role": "user", "content": "boom"}],
]
BOOM = "{% if messages[0].content == 'boom' %}{{ raise_exception('boom!') }}{% endif %}{{ 1 }}"


def test_arrow_structs_with_filled_nulls_render_as_written():
    table = pa.table({"id": [10, 11, 12], "messages": MESSAGES, "extra": [None, "x", None]})
    # Arrow gave the first message a null tool_calls field: dropped before rendering, as is
    # the null variable
    assert table.column("messages").to_pylist()[0][0]["tool_calls"] is None
    renderer = RowRenderer(chat(), passthrough=("id",))
    out = render_arrow(renderer, table)
    assert isinstance(out, pa.Table)
    assert out.schema.names == ["id", "text", "error"]
    assert out.schema.field("id").type == pa.int64()
    assert out.to_pylist() == [
        {"id": 10, "text": "user=a;-", "error": None},
        {"id": 11, "text": "user=b;assistant=c calls=1;x", "error": None},
        {"id": 12, "text": "user=boom;-", "error": None},
    ]


def test_arrow_json_and_struct_columns_agree_row_for_row():
    renderer = RowRenderer(chat(), passthrough=["id"], spans=True)
    structs = pa.table({"id": ["a", "b", "c"], "messages": MESSAGES})
    strings = pa.table({"id": ["a", "b", "c"], "messages": [json.dumps(m) for m in MESSAGES]})
    expected = [
        {"id": "a", "text": "user=a;-", "assistant_spans": [], "error": None},
        {"id": "b", "text": "user=b;assistant=c calls=1;-", "assistant_spans": [], "error": None},
        {"id": "c", "text": "user=boom;-", "assistant_spans": [], "error": None},
    ]
    for table in (structs, strings):
        assert render_arrow(renderer, table).to_pylist() == expected
        batch = table.to_batches()[0]
        out = render_arrow(renderer, batch)
        assert isinstance(out, pa.RecordBatch) and out.to_pylist() == expected
    assert render_arrow(renderer, structs).schema == pa.schema(
        [
            ("id", pa.string()),
            ("text", pa.string()),
            ("assistant_spans", pa.list_(pa.list_(pa.int64()))),
            (
                "error",
                pa.struct(
                    [
                        ("kind", pa.string()),
                        ("message", pa.string()),
                        ("line", pa.int64()),
                        ("column", pa.int64()),
                        ("input_line", pa.int64()),
                    ]
                ),
            ),
        ]
    )


def test_dict_of_columns_and_errors_in_their_rows():
    renderer = RowRenderer(ChatTemplate.from_file(CHATML), passthrough=["id"])
    columns = {
        "id": [1, 2, 3],
        "messages": [MESSAGES[0], "not json", [{"role": "user", "content": 5}]],
    }
    assert render_columns(renderer, columns) == {
        "id": [1, 2, 3],
        "text": ["<|im_start|>user\na<|im_end|>\n", None, None],
        "error": [
            None,
            error(
                "InputError",
                "'messages' holds invalid JSON: Expecting value: line 1 column 1 (char 0)",
            ),
            error("TemplateRuntimeError", 'can only concatenate str (not "int") to str', 18, 50),
        ],
    }
    assert ColumnRenderer(renderer)(columns) == render_columns(renderer, columns)


def test_parquet_batch_streams_by_row_group_with_ids_and_errors(tmp_path):
    template = tmp_path / "boom.jinja"
    template.write_text(BOOM)
    rows = 50
    table = pa.table(
        {
            "id": list(range(rows)),
            "messages": [MESSAGES[i % 3] for i in range(rows)],
        }
    )
    source = tmp_path / "in.parquet"
    pq.write_table(table, source, row_group_size=8)
    for workers in ("1", "2"):
        target = tmp_path / f"out{workers}.parquet"
        argv = ["batch", "--template", str(template), str(source), str(target), "--quiet"]
        argv += ["--id-column", "id", "--workers", workers, "--chunk-size", "5"]
        assert main(argv) == 0
        out = pq.read_table(target)
        assert out.column("id").to_pylist() == list(range(rows))
        errors = out.column("error").to_pylist()
        assert [i for i, e in enumerate(errors) if e] == list(range(2, rows, 3))
        assert errors[2] == error("TemplateError", "boom!", 1, 42, input_line=3)
        assert out.column("text").to_pylist()[:3] == ["1", "1", None]
        # the output is written a chunk at a time: one row group per chunk of 5 rows
        assert pq.ParquetFile(target).metadata.num_row_groups == 10
    # JSONL out of Parquet in: the same rows
    target = tmp_path / "out.jsonl"
    argv = [
        "batch",
        "--template",
        str(template),
        str(source),
        str(target),
        "--quiet",
        "--id-column",
        "id",
    ]
    assert main(argv) == 0
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    assert lines == pq.read_table(tmp_path / "out1.parquet").to_pylist()


def test_jsonl_to_parquet(tmp_path):
    template = tmp_path / "boom.jinja"
    template.write_text(BOOM)
    source = tmp_path / "in.jsonl"
    source.write_text(
        "\n".join(json.dumps({"id": f"r{i}", "messages": MESSAGES[i % 3]}) for i in range(7))
        + "\n{bad\n"
    )
    target = tmp_path / "out.parquet"
    argv = [
        "batch",
        "--template",
        str(template),
        str(source),
        str(target),
        "--quiet",
        "--id-column",
        "id",
    ]
    assert main(argv + ["--chunk-size", "3"]) == 0
    out = pq.read_table(target).to_pylist()
    assert [row["id"] for row in out] == [f"r{i}" for i in range(7)] + [None]
    assert out[7]["error"] == error(
        "JSONDecodeError",
        "Expecting property name enclosed in double quotes: column 2 of the JSON text",
        input_line=8,
    )
    assert [row["error"] is None for row in out] == [True, True, False] * 2 + [True, False]


def test_a_null_reserved_key_is_absent_and_a_set_one_fails():
    model = ChatTemplate.from_string(
        "{{ bos_token }}{{ messages[0].content }}", {"bos_token": "<s>"}
    )
    renderer = RowRenderer(model, passthrough=["id"])
    hi = [{"role": "user", "content": "hi"}]
    table = pa.table(
        {
            "id": [1, 2, 3],
            "messages": [json.dumps(hi)] * 3,
            "bos_token": [None, "EVIL", None],
            "add_generation_prompt": [None, None, True],
        }
    )
    assert render_arrow(renderer, table).to_pylist() == [
        {"id": 1, "text": "<s>hi", "error": None},
        {
            "id": 2,
            "text": None,
            "error": error(
                "InputError", "'bos_token' is a special token of the model, not a row's variable"
            ),
        },
        {
            "id": 3,
            "text": None,
            "error": error(
                "InputError",
                "'add_generation_prompt' is an option of the run, not a template variable",
            ),
        },
    ]
    # a JSON line's explicit null is absent too, as transformers drops None-valued keys
    assert renderer.render_row({"messages": hi, "bos_token": None}) == ok("<s>hi")


def test_nested_columns_reorder_keys_with_a_warning_json_text_does_not():
    from minijinja_py.pipelines import arrow

    renderer = RowRenderer(ChatTemplate.from_string("{{ messages[0].args | tojson }}"))
    args = [{"a": 1, "b": 2}, {"b": 3, "a": 4}]
    rows = [{"messages": [{"role": "user", "args": value}]} for value in args]
    nested = pa.Table.from_struct_array(pa.array(rows))
    arrow._WARNED.clear()
    with pytest.warns(arrow.KeyOrderWarning) as caught:
        out = render_arrow(renderer, nested).column("text").to_pylist()
        render_arrow(renderer, nested)  # once per column
    assert [str(w.message) for w in caught] == [
        "column 'messages' is nested Arrow data: its objects' keys reach the template in the "
        "schema's order, not in the order each row wrote them, so tojson may print them in "
        "another order than transformers would; store the column as JSON text for exact output"
    ]
    assert out == ['{"a": 1, "b": 2}', '{"a": 4, "b": 3}']  # the second row's order is lost
    text = pa.table({"messages": [json.dumps(row["messages"]) for row in rows]})
    exact = render_arrow(renderer, text).column("text").to_pylist()
    assert exact == ['{"a": 1, "b": 2}', '{"b": 3, "a": 4}']


def test_input_files_find_the_format_of_folders_and_globs(tmp_path):
    from minijinja_py.pipelines.files import input_files

    parquet = tmp_path / "parquet"
    parquet.mkdir()
    for i in range(3):
        pq.write_table(pa.table({"messages": ["[]"]}), parquet / f"part-{i}.parquet")
    (parquet / "_SUCCESS").write_text("")
    (parquet / ".part-0.parquet.crc").write_text("")
    names = [str(parquet / f"part-{i}.parquet") for i in range(3)]
    assert input_files(str(parquet)) == ("parquet", names)
    assert input_files(str(parquet / "part-*.parquet")) == ("parquet", names)
    assert input_files([parquet / "part-1.parquet"]) == ("parquet", names[1:2])
    (tmp_path / "a.jsonl").write_text("[]\n")
    assert input_files(str(tmp_path / "*.jsonl")) == ("jsonl", [str(tmp_path / "a.jsonl")])
    (parquet / "notes.txt").write_text("")
    with pytest.raises(ValueError) as unknown:
        input_files(str(parquet))
    assert str(unknown.value) == (
        f"cannot tell the format of {str(parquet / 'notes.txt')!r}: inputs are Parquet "
        "(.parquet, .pq) or JSONL (.jsonl, .ndjson, .json) files"
    )
    with pytest.raises(ValueError) as mixed:
        input_files([str(tmp_path / "a.jsonl"), names[0]])
    assert str(mixed.value) == (
        f"the inputs mix Parquet and JSONL files ({names[0]!r} and "
        f"{str(tmp_path / 'a.jsonl')!r}): render each format on its own"
    )
    with pytest.raises(ValueError, match="^no file matches "):
        input_files(str(tmp_path / "*.pq"))
    with pytest.raises(ValueError, match="^no such file or folder: "):
        input_files(str(tmp_path / "missing"))


def test_jsonl_parts_cut_at_line_ends_give_every_line_once(tmp_path):
    from minijinja_py.pipelines.ray_data import _jsonl_parts, _read_jsonl_part

    lines = [b'{"a": 1}', b"", b"x" * 30, b'{"b": "\r"}', b"\xff", b"last"]
    path = tmp_path / "in.jsonl"
    for ending in (b"\n", b""):  # with and without a final line end
        path.write_bytes(b"\n".join(lines) + ending)
        for size in (1, 2, 7, 9, 31, 1000):
            parts = _jsonl_parts([str(path)], size)
            got = [
                line for part in parts for line in _read_jsonl_part(part).column("line").to_pylist()
            ]
            assert got == lines, size


def test_parquet_parts_split_by_row_groups(tmp_path):
    from minijinja_py.pipelines.ray_data import _parquet_parts, _read_parquet_part

    path = tmp_path / "in.parquet"
    pq.write_table(pa.table({"id": list(range(100))}), path, row_group_size=10)
    assert _parquet_parts([str(path)], None) == [{"path": str(path), "start": 0, "end": 10}]
    parts = _parquet_parts([str(path)], 4)
    # at least 4 parts of at most a quarter of the data each
    assert [(part["start"], part["end"]) for part in parts] == [
        (0, 2),
        (2, 4),
        (4, 6),
        (6, 8),
        (8, 10),
    ]
    ids = [i for part in parts for i in _read_parquet_part(part).column("id").to_pylist()]
    assert ids == list(range(100))


def test_an_output_folder_with_anything_in_it_is_refused(tmp_path):
    from minijinja_py.pipelines.files import prepare_output_folder

    out = tmp_path / "rendered"
    prepare_output_folder(out)  # absent: fine
    out.mkdir()
    prepare_output_folder(out)  # empty: fine
    (out / "0_000000.parquet").write_bytes(b"PAR1")
    (out / "_SUCCESS").write_bytes(b"")
    with pytest.raises(FileExistsError) as caught:
        prepare_output_folder(out)
    assert str(caught.value) == (
        f"{out}: the output folder is not empty (2 entries): rendering into it would mix this "
        "run's rows with what is there; choose an empty folder, or pass overwrite=True to "
        "replace a previous run's Parquet files"
    )
    (out / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match=r"also holds 'notes.txt': nothing was deleted$"):
        prepare_output_folder(out, overwrite=True)
    assert sorted(p.name for p in out.iterdir()) == ["0_000000.parquet", "_SUCCESS", "notes.txt"]
    (out / "notes.txt").unlink()
    prepare_output_folder(out, overwrite=True)
    assert list(out.iterdir()) == []
    (out / "in.parquet").write_bytes(b"PAR1")
    with pytest.raises(FileExistsError, match=r"the output folder holds an input"):
        prepare_output_folder(out, [str(out / "in.parquet")], overwrite=True)
    with pytest.raises(FileExistsError, match=r"a file, not a folder"):
        prepare_output_folder(out / "in.parquet")


def test_render_files_refuses_a_used_output_folder_before_any_work(tmp_path):
    pytest.importorskip("ray")
    import ray

    from minijinja_py.pipelines.ray_data import render_files

    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"messages": MESSAGES[0]}) + "\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / "0_000000.parquet").write_bytes(b"PAR1")
    with pytest.raises(FileExistsError, match=r"the output folder is not empty \(1 entry\)"):
        render_files(str(source), out, RowRenderer(chat()))
    assert not ray.is_initialized()  # refused before a cluster was started


def test_key_order_is_warned_once_a_run_and_only_where_it_can_change_the_output(
    tmp_path, capsys
):
    import warnings

    from minijinja_py.pipelines import arrow

    args = [{"a": 1, "b": 2}, {"b": 3, "a": 4}]
    rows = [{"id": i, "messages": [{"role": "user", "content": "x", "args": value}]}
            for i, value in enumerate(args)]
    nested = pa.Table.from_struct_array(pa.array(rows))
    by_name = RowRenderer(ChatTemplate.from_string("{{ messages[0].content }}"))
    arrow._WARNED.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error", arrow.KeyOrderWarning)
        # fields read by name render the same in any key order: no warning
        assert render_arrow(by_name, nested).column("text").to_pylist() == ["x", "x"]
    source = tmp_path / "nested.parquet"
    pq.write_table(nested, source, row_group_size=1)
    template = tmp_path / "t.jinja"
    template.write_text("{{ messages[0].args | tojson }}")
    argv = ["batch", "--template", str(template), str(source), "--id-column", "id", "--quiet"]
    assert main([*argv, str(tmp_path / "out.jsonl"), "--workers", "2", "--chunk-size", "1"]) == 0
    err = capsys.readouterr().err
    assert err == (
        "warning: column 'messages' is nested Arrow data: its objects' keys reach the template "
        "in the schema's order, not in the order each row wrote them, so tojson may print them "
        "in another order than transformers would; store the column as JSON text for exact "
        "output\n"
    )
    argv[2] = str(tmp_path / "t2.jinja")
    (tmp_path / "t2.jinja").write_text("{{ messages[0].args.a }}")
    assert main([*argv, str(tmp_path / "out2.jsonl")]) == 0
    assert capsys.readouterr().err == ""
