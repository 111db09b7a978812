"""Render many conversations at once: rows of data in, rows of results out.

This layer sits above the chat layer and below the command line. `rows` turns one row (a
JSON line, a row of an Arrow table, a `datasets` example) into one result row and every failure
into an error record in that row's place; `jsonl` does it for blocks of JSON lines. The
integrations import their optional dependency only inside their own module: `arrow`
(`pyarrow`), `hf_datasets` (Hugging Face `datasets`) and `ray_data` (Ray Data). The way back,
generated text into messages, has its siblings: `responses` (`RowParser`, a row),
`response_columns` (columns and Arrow batches) and `response_files` (`minijinja-py parse`'s
driver).
"""

from .rows import RESERVED_KEYS, InputError, RowRenderer, error_record, parse_json

__all__ = ["RESERVED_KEYS", "InputError", "RowRenderer", "error_record", "parse_json"]
