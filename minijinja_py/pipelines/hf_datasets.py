"""Render a Hugging Face `datasets.Dataset` of conversations on every core, with its cache.

>>> from datasets import load_dataset
>>> from minijinja_py.chat import ChatTemplate
>>> from minijinja_py.pipelines import RowRenderer
>>> from minijinja_py.pipelines.hf_datasets import render_dataset
>>> rows = load_dataset("json", data_files="conversations.jsonl", split="train")  # doctest: +SKIP
>>> renderer = RowRenderer(ChatTemplate.from_pretrained("Qwen/Qwen3-0.6B"), passthrough=["id"])
>>> texts = render_dataset(rows, renderer, num_proc=8)  # doctest: +SKIP

`parse_dataset` is the way back: a column of generated text into parsed messages, with a
`RowParser` (the map function a `ColumnParser`).

The map function is a `ColumnRenderer`: it pickles as plain
data (the template's source, special tokens and the run's options), so `datasets` gives it the
same fingerprint in every process and a second run with the same template and data is read from
the cache instead of rendered again. `datasets` is imported by the caller, never here.
"""

from __future__ import annotations

from typing import Any

from .arrow import ColumnRenderer, key_order_columns, warn_key_order
from .response_columns import ColumnParser
from .responses import RowParser
from .rows import RowRenderer

__all__ = ["parse_dataset", "render_dataset"]


def render_dataset(
    dataset: Any,
    renderer: RowRenderer,
    *,
    num_proc: int | None = None,
    batch_size: int = 1000,
    **map_options: Any,
) -> Any:
    """`dataset` rendered: its pass-through columns, then `text`, `assistant_spans` (when the
    renderer makes spans) and `error`, row for row.

    The batches travel as Arrow tables, so the result columns keep their types even when the
    first batch holds no error. `map_options` go to `Dataset.map` (`desc`,
    `load_from_cache_file`, `cache_file_name`, ...).
    """
    # Key order is checked here, once, on the dataset's schema: a warning from each batch of
    # each process would repeat it num_proc times, pointing inside this package.
    schema = getattr(getattr(dataset, "features", None), "arrow_schema", None)
    if schema is not None:
        warn_key_order(key_order_columns(renderer, schema), stacklevel=2)
    rendered = dataset.with_format("arrow").map(
        ColumnRenderer(renderer, warn=schema is None),
        batched=True,
        batch_size=batch_size,
        num_proc=num_proc,
        remove_columns=dataset.column_names,
        **map_options,
    )
    return rendered.with_format(dataset.format["type"])


def parse_dataset(
    dataset: Any,
    parser: RowParser,
    *,
    num_proc: int | None = None,
    batch_size: int = 1000,
    **map_options: Any,
) -> Any:
    """`dataset`'s generated text (its `parser.response_key` column, and `parser.prefix_key`
    where it has one) parsed: its pass-through columns, then `message` (JSON text) and `error`,
    row for row, each failure in its own row (`response_columns`).

    As in `render_dataset`, the batches travel as Arrow tables (the `error` column keeps its
    type even when the first batch holds no error) and the map function pickles as plain data,
    so a second run with the same template and data is read from `datasets`' cache.
    """
    parsed = dataset.with_format("arrow").map(
        ColumnParser(parser),
        batched=True,
        batch_size=batch_size,
        num_proc=num_proc,
        remove_columns=dataset.column_names,
        **map_options,
    )
    return parsed.with_format(dataset.format["type"])
