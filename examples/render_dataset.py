"""Render a JSONL file of conversations with Hugging Face datasets on two processes.

    pip install 'minijinja_py[data]'
    python examples/render_dataset.py examples/conversations.jsonl

Run it twice: the second run reads the result from the datasets cache (the map function has the
same fingerprint in every process), so it prints the same rows without rendering again.
"""

import sys
from pathlib import Path

from datasets import load_dataset

from minijinja_py.chat import ChatTemplate
from minijinja_py.pipelines import RowRenderer
from minijinja_py.pipelines.hf_datasets import render_dataset

HERE = Path(__file__).resolve().parent


def main(path: str) -> None:
    rows = load_dataset("json", data_files=path, split="train")
    renderer = RowRenderer(
        ChatTemplate.from_file(HERE / "chatml.jinja"),
        add_generation_prompt=True,
        passthrough=["id"],
    )
    rendered = render_dataset(rows, renderer, num_proc=2, batch_size=1000)
    for row in rendered:
        print(row["id"], repr(row["text"]) if row["error"] is None else row["error"])


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(HERE / "conversations.jsonl"))
