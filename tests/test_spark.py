"""Spark on a real local session (``local[2]``, one for the module): `render_dataframe` over
Parquet files must give the plain loop's rows, row for row, for JSON-text and nested columns,
tools, broken rows, tokens and spans."""

from __future__ import annotations

import json
import os
import shutil
import sys

import pytest

pytest.importorskip("pyspark", reason="needs the 'spark' extra")
pa = pytest.importorskip("pyarrow", reason="needs the 'spark' extra")
if shutil.which("java") is None:
    pytest.skip("Spark needs Java (java is not on PATH)", allow_module_level=True)

import mixed_rows  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from minijinja_py import ChatTemplate  # noqa: E402
from minijinja_py.pipelines import RowRenderer, arrow  # noqa: E402
from minijinja_py.pipelines.arrow import KeyOrderWarning  # noqa: E402
from minijinja_py.pipelines.spark import render_dataframe  # noqa: E402

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession

    # the executors' Python must be this one, which has the package (what docs/datasets.md says
    # to set on a cluster)
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    session = (
        SparkSession.builder.master("local[2]")
        .appName("minijinja_py-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "4")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def collected(df) -> list[dict]:
    return [row.asDict(recursive=True) for row in df.collect()]


def test_json_text_columns_equal_the_loop_row_for_row(spark, tmp_path):
    rows = mixed_rows.rows(14)
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist(mixed_rows.as_json_text(rows)), path)
    df = spark.read.parquet(str(path)).coalesce(2)
    result = render_dataframe(df, mixed_rows.renderer())
    assert result.schema.simpleString() == (
        "struct<id:bigint,text:string,error:struct<kind:string,message:string,line:bigint,"
        "column:bigint,input_line:bigint>>"
    )
    got = collected(result)
    assert got == mixed_rows.loop(rows)
    # the two reserved-key rows failed in their own rows, and the others rendered
    assert [row["id"] for row in got if row["error"]] == [2, 3]


def test_nested_columns_and_options_given_here(spark, tmp_path):
    rows = mixed_rows.rows(12)
    path = tmp_path / "nested.parquet"
    # one schema for every row: the union of their keys, in the order the rows write them
    pq.write_table(pa.Table.from_struct_array(pa.array(rows)), path)
    chat = ChatTemplate.from_string(mixed_rows.TEMPLATE, {"bos_token": "<s>", "eos_token": "</s>"})
    df = spark.read.parquet(str(path))
    # warned once, on the driver, from the schema (the tasks do not warn again)
    arrow._WARNED.clear()  # (once per process: a test before may have warned of these columns)
    with pytest.warns(KeyOrderWarning, match="^columns 'messages', 'tools' are nested Arrow data"):
        result = render_dataframe(df, chat, passthrough=["id"], spans=True)
    assert [field.name for field in result.schema] == ["id", "text", "assistant_spans", "error"]
    loop = RowRenderer(chat, passthrough=["id"], spans=True)
    assert collected(result) == [{"id": row["id"], **loop.render_row(row)} for row in rows]


def test_broken_rows_fail_alone(spark, tmp_path):
    table = pa.table(
        {
            "id": [1, 2, 3, 4],
            "messages": [
                json.dumps([{"role": "user", "content": "a"}]),
                "not json",
                None,
                json.dumps([{"role": "user", "content": "d"}]),
            ],
        }
    )
    path = tmp_path / "broken.parquet"
    pq.write_table(table, path)
    got = collected(render_dataframe(spark.read.parquet(str(path)), mixed_rows.renderer()))
    assert [row["id"] for row in got] == [1, 2, 3, 4]
    assert [row["text"] for row in got] == ["<s><user>a", None, None, "<s><user>d"]
    assert [row["error"]["kind"] if row["error"] else None for row in got] == [
        None,
        "InputError",
        "InputError",
        None,
    ]
    loop = mixed_rows.renderer()
    assert got[1]["error"] == loop.render_row(table.slice(1, 1).to_pylist()[0])["error"]


def test_token_columns_equal_tokenize(spark, tmp_path):
    pytest.importorskip("tokenizers", reason="needs the 'tokens' extra")
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=280, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
    )
    tokenizer.train_from_iterator(["Hello there, how are you today?"] * 4, trainer=trainer)
    tokenizer.add_special_tokens([AddedToken("<|im_end|>", special=True)])
    template = (
        "{% for m in messages %}{{ m.role }}: "
        "{% if m.role == 'assistant' %}{% generation %}{{ m.content }}<|im_end|>"
        "{% endgeneration %}{% else %}{{ m.content }}<|im_end|>{% endif %}{% endfor %}"
    )
    chat = ChatTemplate.from_string(template, tokenizer=tokenizer)
    conversations = [
        [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "there"}],
        [{"role": "user", "content": "how are you"}],
    ]
    path = tmp_path / "tokens.parquet"
    pq.write_table(
        pa.table({"id": [10, 11], "messages": [json.dumps(c) for c in conversations]}), path
    )
    df = spark.read.parquet(str(path))
    result = render_dataframe(df, chat, passthrough=["id"], tokens=True)
    assert [field.name for field in result.schema] == [
        "id",
        "text",
        "input_ids",
        "assistant_masks",
        "error",
    ]
    got = collected(result)
    expected = chat.tokenize(conversations, return_assistant_tokens_mask=True)
    assert [row["input_ids"] for row in got] == expected["input_ids"]
    assert [row["assistant_masks"] for row in got] == expected["assistant_masks"]
    assert [row["text"] for row in got] == [chat.render(c) for c in conversations]


def test_options_are_checked_on_the_driver(spark, tmp_path):
    path = tmp_path / "one.parquet"
    pq.write_table(pa.table({"messages": ['[{"role": "user", "content": "a"}]']}), path)
    df = spark.read.parquet(str(path))
    with pytest.raises(ValueError, match=r"^pass-through column 'id' is not in the DataFrame"):
        render_dataframe(df, mixed_rows.renderer())
    with pytest.raises(
        ValueError, match="^render_dataframe takes its options from the RowRenderer"
    ):
        render_dataframe(df, RowRenderer(ChatTemplate.from_string("x")), spans=True)
    with pytest.raises(
        TypeError, match="^template must be a ChatTemplate or a RowRenderer, not str$"
    ):
        render_dataframe(df, "{{ messages }}")  # type: ignore[arg-type]
