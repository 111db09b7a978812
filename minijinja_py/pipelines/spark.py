"""Spark DataFrames of conversations in, DataFrames of results out (`mapInArrow`).

`render_dataframe` is the Spark path beside Ray's `render_dataset`: the same row contract (row N
of the output answers row N of the input, a row that fails holds its error record, pass-through
columns such as an `id` copied untouched) and the same columns as `render_arrow`, whose Arrow
batches Spark hands to each task. The result's schema is built from the renderer's options and
the input's own types, so that nobody writes it by hand. `pyspark` (the `spark` extra) is imported
by this module only, and only for the schema's types.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..chat import ChatTemplate
from .arrow import key_order_columns, render_arrow, result_schema, warn_key_order
from .rows import RowRenderer

__all__ = ["render_dataframe", "result_struct"]


def _spark_types() -> Any:
    try:
        from pyspark.sql import types
    except ImportError as error:
        raise ImportError("render_dataframe needs pyspark: install minijinja_py[spark]") from error
    return types


def result_struct(renderer: RowRenderer, input_schema: Any) -> Any:
    """The Spark schema of the renderer's results over a DataFrame of `input_schema`: the
    pass-through columns with the input's own types, then the result columns."""
    from pyspark.sql.pandas.types import from_arrow_type

    types = _spark_types()
    fields = []
    for name in renderer.passthrough:
        if name not in input_schema.names:
            raise ValueError(
                f"pass-through column {name!r} is not in the DataFrame (its columns are "
                f"{input_schema.names})"
            )
        fields.append(input_schema[name])
    for field in result_schema(renderer):
        fields.append(types.StructField(field.name, from_arrow_type(field.type), True))
    return types.StructType(fields)


class _PartitionRenderer:
    """What each Spark task runs: its partition's Arrow batches in, result batches out, in order.

    Pickled with the renderer (the template's sources, its special tokens and tokenizer travel;
    each task compiles the template on its first row), so that executors need nothing that is
    only on the driver's disk.
    """

    def __init__(self, renderer: RowRenderer) -> None:
        self.renderer = renderer

    def __call__(self, batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            # (the driver warned of key order once, from the schema)
            yield render_arrow(self.renderer, batch, warn=False)


def render_dataframe(
    df: Any,
    template: ChatTemplate | RowRenderer,
    *,
    passthrough: Sequence[str] = (),
    tokens: bool = False,
    spans: bool = False,
    tools: Any = None,
    documents: Any = None,
    add_generation_prompt: bool = False,
    continue_final_message: bool | str = False,
    variables: Mapping[str, Any] | None = None,
) -> Any:
    """`df` (a `messages` column of JSON text or nested structs, optional `tools` and
    `documents`, pass-through columns and template variables, as for `render_arrow`) mapped to
    a DataFrame of the pass-through columns, then `text`, `assistant_spans` (with `spans`),
    `input_ids` and `assistant_masks` (with `tokens`: the chat's tokenizer) and `error`.

    Lazy, like every Spark transformation. `template` is a `ChatTemplate` with the options given
    here, or a `RowRenderer` that already holds them (then give no other option). The rows keep
    the input's order within each partition, as `mapInArrow` does.
    """
    if isinstance(template, RowRenderer):
        given = (
            passthrough,
            tokens,
            spans,
            tools,
            documents,
            add_generation_prompt,
            continue_final_message,
            variables,
        )
        if given != ((), False, False, None, None, False, False, None):
            raise ValueError(
                "render_dataframe takes its options from the RowRenderer it is given: "
                "pass a ChatTemplate to give them here"
            )
        renderer = template
    elif isinstance(template, ChatTemplate):
        renderer = RowRenderer(
            template,
            tools=tools,
            documents=documents,
            add_generation_prompt=add_generation_prompt,
            continue_final_message=continue_final_message,
            variables=variables,
            spans=spans,
            tokens=tokens,
            passthrough=list(passthrough),
        )
    else:
        raise TypeError(
            f"template must be a ChatTemplate or a RowRenderer, not {type(template).__name__}"
        )
    schema = result_struct(renderer, df.schema)
    from pyspark.sql.pandas.types import to_arrow_schema

    warn_key_order(key_order_columns(renderer, to_arrow_schema(df.schema)), stacklevel=2)
    return df.mapInArrow(_PartitionRenderer(renderer), schema)
