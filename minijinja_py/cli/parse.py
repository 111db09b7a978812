"""`minijinja-py parse`: a JSONL or Parquet file of generated text back into messages, by the
model's response template, one given with `--schema`, or the one inferred from the chat
template. The batch contract is `batch`'s: one result row per input row (a blank JSONL line is
no row), each failure in its own row, never an aborted run (`pipelines.response_files`)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .options import (
    CommandError,
    _add_source,
    _binary,
    _check_extension,
    _load_chat,
    _load_json,
    _worker_count,
)

__all__ = ["PARSE_DESCRIPTION", "add_parse"]

PARSE_DESCRIPTION = """\
Parse one generated text per input row; output row N answers input row N.

A JSONL row is a JSON string (the text), or an object with "response" (the text),
optional "prefix" (the prompt the model continued) and the --id-column keys; a
Parquet row is read from its "response" and "prefix" columns and the --id-column
columns (its other columns are not read). --response-column and --prefix-column
choose other names. Each output row holds the --id-column values, "message" (an
object in JSONL, JSON text in Parquet) and "error": null, or the message null and a
record of the failure {"kind", "message", "line", "column", "input_line"}; the other
rows go on. A blank line is no row.
"""


def add_parse(commands: Any) -> None:
    """The `parse` command's options."""
    parse = commands.add_parser(
        "parse",
        help="parse a JSONL or Parquet file of generated text back into messages",
        description=PARSE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_source(parse)
    parse.add_argument(
        "input",
        metavar="IN",
        help='JSONL (a JSON string or {"response", "prefix"} per line; \'-\': stdin) or .parquet',
    )
    parse.add_argument(
        "output", metavar="OUT", help="JSONL (one result per line; '-': stdout) or .parquet"
    )
    parse.add_argument("--schema", metavar="FILE", help="a response template (JSON) to read by")
    parse.add_argument(
        "--prefix", default="", metavar="TEXT", help="the prompt before each response"
    )
    parse.add_argument("--tools", metavar="FILE", help="a JSON list of tools: typed arguments")
    parse.add_argument(
        "--response-column",
        default="response",
        metavar="NAME",
        help="the key/column of the generated text (default: response)",
    )
    parse.add_argument(
        "--prefix-column",
        default="prefix",
        metavar="NAME",
        help="the key/column of a row's own prompt, over --prefix (default: prefix)",
    )
    parse.add_argument(
        "--id-column",
        action="append",
        metavar="NAME",
        help="copy this key/column of a row to its result (repeatable)",
    )
    parse.add_argument(
        "--workers",
        default="1",
        metavar="N",
        help="worker processes, or 'auto' for one per CPU this process may use (default 1)",
    )
    parse.add_argument(
        "--chunk-size",
        type=int,
        default=256,
        metavar="N",
        help="lines (or Parquet rows) per unit of work sent to a worker",
    )
    parse.add_argument(
        "--fail-on-error",
        action="store_true",
        help="exit with status 2 when any row failed (the output is still complete)",
    )
    parse.add_argument(
        "--overwrite", action="store_true", help="replace OUT if it exists and is not empty"
    )
    parse.set_defaults(func=_cmd_parse)


def _cmd_parse(args: argparse.Namespace) -> int:
    from ..pipelines.files import file_format, open_sink, open_source
    from ..pipelines.inputs import refuse_same_file
    from ..pipelines.response_files import parse_stream
    from ..pipelines.responses import RowParser

    _check_extension(args.input, "input", "parse")
    _check_extension(args.output, "output", "parse")
    workers = _worker_count(args.workers)
    if args.chunk_size < 1:
        raise CommandError("--chunk-size must be at least 1")
    try:
        inputs = {"input": args.input, "--schema file": args.schema, "--tools file": args.tools}
        refuse_same_file(args.output, {**inputs, "template": args.template, "GGUF file": args.gguf})
    except ValueError as error:
        raise CommandError(str(error)) from None
    chat = _load_chat(args)
    schema = _load_json(args.schema, "--schema") if args.schema else None
    if schema is not None and not isinstance(schema, dict):
        raise CommandError(f"{args.schema}: --schema must hold a JSON object")
    tools = _load_json(args.tools, "--tools") if args.tools else None
    try:
        parser = RowParser(
            chat,
            schema=schema,
            prefix=args.prefix,
            tools=tools,
            passthrough=args.id_column or (),
            response_key=args.response_column,
            prefix_key=args.prefix_column,
        )
    except ValueError as error:  # (a template nothing can be inferred from, a bad schema)
        raise CommandError(str(error)) from None
    source = open_source(args.input, _binary(sys.stdin, "r"))
    try:
        _check_columns(source, args)
        sink = open_sink(args.output, _binary(sys.stdout, "w"), overwrite=args.overwrite)
        try:
            counts = parse_stream(
                parser,
                source,
                sink,
                output_format=file_format(args.output),
                chunk_size=args.chunk_size,
                workers=workers,
            )
        finally:
            sink.close()
    finally:
        source.close()
    if args.fail_on_error and counts.errors:
        rows = f"{counts.rows:,} row" + ("" if counts.rows == 1 else "s")
        sys.stderr.write(f"error: {counts.errors:,} of {rows} failed\n")
        return 2
    return 0


def _check_columns(source: Any, args: argparse.Namespace) -> None:
    """A Parquet file without the response column is refused before any work: every row
    would fail for the same reason, which one line says better."""
    schema = getattr(getattr(source, "file", None), "schema_arrow", None)
    if schema is not None and args.response_column not in schema.names:
        names = ", ".join(repr(name) for name in schema.names[:20])
        raise CommandError(
            f"{args.input} has no column {args.response_column!r} (its columns: {names}): "
            "name the column of the generated text with --response-column"
        )
