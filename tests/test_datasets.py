"""Hugging Face datasets: Dataset.map(batched=True, num_proc=2) gives the loop's rows, and the map
function's fingerprint is the same in every process, so a second run reads the cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("datasets")

import mixed_rows  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TEMPLATE = (
    "{% for m in messages %}{% if m.content == 'boom' %}{{ raise_exception('boom') }}{% endif %}"
    "<{{ m.role }}>{{ m.content }}{% if m.tool_calls is defined %}[calls]{% endif %}{% endfor %}"
)

# One fresh interpreter: load the JSONL with datasets, print the map function's fingerprint,
# render with num_proc=2 and print the result's cache files and their modification times.
SCRIPT = """
import json, os, sys
from datasets import load_dataset
from datasets.fingerprint import Hasher
from minijinja_py.chat import ChatTemplate
from minijinja_py.pipelines import RowRenderer
from minijinja_py.pipelines.arrow import ColumnRenderer
from minijinja_py.pipelines.hf_datasets import render_dataset

source, cache = sys.argv[1], sys.argv[2]
rows = load_dataset("json", data_files=source, split="train", cache_dir=cache)
renderer = RowRenderer(ChatTemplate.from_string(sys.argv[3]), passthrough=["id"])
rendered = render_dataset(rows, renderer, num_proc=2, batch_size=16)
files = [f["filename"] for f in rendered.cache_files]
print(json.dumps({
    "hash": Hasher.hash(ColumnRenderer(renderer)),
    "files": files,
    "mtimes": [os.stat(f).st_mtime_ns for f in files],
    "rows": rendered.to_list(),
}))
"""


def run_in_fresh_process(source: Path, cache: Path, seed: str) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": seed, "HF_DATASETS_DISABLE_PROGRESS_BARS": "1"}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(source), str(cache), TEMPLATE],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_map_rows_fingerprint_and_cache(tmp_path):
    from minijinja_py.chat import ChatTemplate
    from minijinja_py.pipelines import RowRenderer
    from minijinja_py.pipelines.jsonl import render_lines

    lines = []
    for i in range(60):
        messages = [{"role": "user", "content": "boom" if i % 7 == 3 else f"q{i}"}]
        if i % 3 == 0:  # only some rows have tool calls: Arrow fills the others with nulls
            messages.append({"role": "assistant", "content": "", "tool_calls": [{"id": "c"}]})
        lines.append(json.dumps({"id": i, "messages": messages}))
    source = tmp_path / "in.jsonl"
    source.write_text("\n".join(lines) + "\n")

    first = run_in_fresh_process(source, tmp_path / "cache", "1")
    second = run_in_fresh_process(source, tmp_path / "cache", "2")
    assert first["hash"] == second["hash"]
    assert len(first["files"]) == 2  # one cache file per process of num_proc=2
    assert (second["files"], second["mtimes"]) == (first["files"], first["mtimes"])

    renderer = RowRenderer(ChatTemplate.from_string(TEMPLATE), passthrough=["id"])
    output, rows, errors = render_lines(renderer, [line.encode() for line in lines])
    assert (rows, errors) == (60, 9)
    expected = [json.loads(line) for line in output.decode().splitlines()]
    assert first["rows"] == second["rows"] == without_input_line(expected)
    assert expected[3]["error"] == {
        "kind": "TemplateError",
        "message": "boom",
        "line": 1,
        "column": 55,
        "input_line": 4,
    }
    assert expected[1]["text"] == "<user>q1"
    assert expected[0]["text"] == "<user>q0<assistant>[calls]"


# The way back: parse a column of generated text with num_proc=2, twice, in fresh processes.
PARSE_SCRIPT = """
import json, os, sys
from datasets import Dataset
from datasets.fingerprint import Hasher
import mixed_rows
from minijinja_py.pipelines.hf_datasets import parse_dataset
from minijinja_py.pipelines.response_columns import ColumnParser

cache = sys.argv[1]
rows = Dataset.from_dict(mixed_rows.generations(60)).flatten_indices()
rows = rows.map(lambda row: row, cache_file_name=cache + "/in.arrow")  # (a cached dataset)
parsed = parse_dataset(rows, mixed_rows.parser(), num_proc=2, batch_size=8)
print(json.dumps({
    "hash": Hasher.hash(ColumnParser(mixed_rows.parser())),
    "files": [f["filename"] for f in parsed.cache_files],
    "mtimes": [os.stat(f["filename"]).st_mtime_ns for f in parsed.cache_files],
    "rows": parsed.to_list(),
}))
"""


def test_parse_dataset_gives_the_loops_rows_from_its_cache(tmp_path):
    import mixed_rows as generated

    (tmp_path / "cache").mkdir()
    runs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "HF_DATASETS_DISABLE_PROGRESS_BARS": "1"}
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(ROOT / "tests")])
        done = subprocess.run(
            [sys.executable, "-c", PARSE_SCRIPT, str(tmp_path / "cache")],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        runs.append(json.loads(done.stdout.splitlines()[-1]))
    first, second = runs
    assert first["hash"] == second["hash"]
    assert len(first["files"]) == 2  # one cache file per process of num_proc=2
    # (the second run read the first one's cache: the same files, not written again)
    assert (second["files"], second["mtimes"]) == (first["files"], first["mtimes"])
    expected = generated.parse_loop(generated.generations(60))
    assert first["rows"] == second["rows"] == expected
    assert expected[3]["error"] == {
        "kind": "ValueError",
        "message": "json: the region is not valid JSON (Expecting property name enclosed in "
        "double quotes: line 2 column 2 (char 2)); region: '\\n{not json\\n'",
        "line": None,
        "column": None,
        "input_line": None,
    }


def without_input_line(rows):
    """`rows` with no `input_line` in their error records: the loop over rows knows none."""
    return [
        {**row, "error": {**row["error"], "input_line": None}} if row["error"] else row
        for row in rows
    ]


def load(kind: str, path: Path, tmp_path: Path):
    from datasets import load_dataset

    return load_dataset(kind, data_files=str(path), split="train", cache_dir=str(tmp_path / "c"))


@pytest.mark.filterwarnings("ignore::minijinja_py.pipelines.arrow.KeyOrderWarning")
def test_every_path_gives_the_loops_rows(tmp_path):
    """Mixed rows through the loop, JSON lines, Parquet (JSON text and nested), Arrow and
    ``datasets``: the same rows out; the nulls of Arrow's schema union are absent keys, so only
    the rows that set ``bos_token`` or ``add_generation_prompt`` fail."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from minijinja_py.cli import main
    from minijinja_py.pipelines.arrow import KeyOrderWarning, render_arrow
    from minijinja_py.pipelines.hf_datasets import render_dataset
    from minijinja_py.pipelines.jsonl import render_lines

    items = mixed_rows.rows(12)
    expected = mixed_rows.loop(items)
    assert [row["error"] is None for row in expected] == [True, True, False, False] + [True] * 8
    assert expected[2]["error"]["message"] == (
        "'bos_token' is a special token of the model, not a row's variable"
    )
    assert expected[5]["text"] == '<s><user>s5<assistant>add{"b": 1, "a": 5}'
    render = mixed_rows.renderer()

    source = tmp_path / "in.jsonl"
    source.write_text(mixed_rows.jsonl(items))
    lines, _, _ = render_lines(render, source.read_bytes().splitlines(keepends=True))
    paths = {"jsonl": [json.loads(line) for line in lines.decode().splitlines()]}

    nested = pa.Table.from_struct_array(pa.array(items))  # the union of every row's keys
    assert nested.column("bos_token").to_pylist()[:4] == [None, None, "EVIL", None]
    text = pa.Table.from_pylist(mixed_rows.as_json_text(items))
    pq.write_table(nested, tmp_path / "nested.parquet")
    pq.write_table(text, tmp_path / "text.parquet")
    with pytest.warns(KeyOrderWarning, match="columns 'messages', 'tools' are nested Arrow data"):
        from minijinja_py.pipelines import arrow

        arrow._WARNED.clear()
        paths["arrow nested"] = render_arrow(render, nested).to_pylist()
    paths["arrow text"] = render_arrow(render, text).to_pylist()
    model = mixed_rows.model_folder(tmp_path / "model")
    for name in ("nested", "text"):
        out = tmp_path / f"{name}.out.jsonl"
        argv = ["batch", "--model", str(model), str(tmp_path / f"{name}.parquet"), str(out)]
        assert main(argv + ["--quiet", "--id-column", "id"]) == 0
        paths[f"batch {name} parquet"] = [json.loads(line) for line in out.read_text().splitlines()]

    for kind, path in (("json", source), ("parquet", tmp_path / "nested.parquet")):
        dataset = load(kind, path, tmp_path)
        paths[f"datasets {kind}"] = render_dataset(dataset, render).to_list()
    # (a reader that knows a row's place in its file says it: JSONL lines, Parquet rows)
    failing = [number for number, row in enumerate(expected, 1) if row["error"] is not None]
    for name in ("jsonl", "batch nested parquet", "batch text parquet"):
        numbers = [row["error"]["input_line"] for row in paths[name] if row["error"] is not None]
        assert numbers == failing, name
    for name, got in paths.items():
        assert without_input_line(got) == expected, name


def test_datasets_json_feature_is_decoded_as_written(tmp_path):
    """datasets 5 stores free-form objects (a tool's ``parameters``, messages of mixed shapes) as
    JSON text (its ``Json`` feature): the template sees the objects, keys in their order."""
    from datasets import Json

    from minijinja_py.pipelines.hf_datasets import render_dataset

    items = mixed_rows.rows(6)
    source = tmp_path / "in.jsonl"
    source.write_text(mixed_rows.jsonl(items))
    dataset = load("json", source, tmp_path)
    parameters = dataset.features["tools"].feature["function"]["parameters"]
    assert isinstance(parameters, Json)
    rendered = render_dataset(dataset, mixed_rows.renderer()).to_list()
    assert rendered[1]["text"] == (
        '<s>[[{"type": "function", "function": {"name": "weather", "description": '
        '"The weather in a city", "parameters": {"type": "object", "properties": '
        '{"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}}, "required": ["city"]}}}]]'
        "<user>w1(x1)"
    )
    assert rendered == mixed_rows.loop(items)


def test_render_dataset_warns_of_key_order_once_at_its_caller(tmp_path):
    import warnings

    import pyarrow as pa
    import pyarrow.parquet as pq

    from minijinja_py.pipelines import arrow
    from minijinja_py.pipelines.hf_datasets import render_dataset

    items = mixed_rows.rows(8)
    pq.write_table(pa.Table.from_struct_array(pa.array(items)), tmp_path / "nested.parquet")
    dataset = load("parquet", tmp_path / "nested.parquet", tmp_path)
    arrow._WARNED.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        render_dataset(dataset, mixed_rows.renderer(), batch_size=2)
    key_order = [w for w in caught if issubclass(w.category, arrow.KeyOrderWarning)]
    assert [(str(w.message)[:40], w.filename) for w in key_order] == [
        ("columns 'messages', 'tools' are nested A", __file__)
    ]
