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
    assert first["rows"] == second["rows"] == expected
    assert expected[3]["error"] == {
        "kind": "TemplateError",
        "message": "boom",
        "line": 1,
        "column": 55,
    }
    assert expected[1]["text"] == "<user>q1"
    assert expected[0]["text"] == "<user>q0<assistant>[calls]"
