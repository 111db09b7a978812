"""`minijinja-py parse`: a JSON Lines file of generated text back into messages, one result line
per input line (a blank line is no row), the errors in their own lines, by the model's response
template, one given with `--schema`, or the one inferred from the chat template."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .options import CommandError, _add_source, _binary, _load_chat, _load_json

__all__ = ["add_parse"]

# The longest line read: a generated text is far shorter; a longer one is an error row, read no
# further than this (what follows it, up to its newline, is skipped).
MAX_LINE = 64 << 20


def add_parse(commands: Any) -> None:
    """The `parse` command's options."""
    parse = commands.add_parser(
        "parse", help="parse a JSONL file of generated text back into messages"
    )
    _add_source(parse)
    parse.add_argument(
        "input",
        metavar="IN",
        help='JSONL: a JSON string per line, or {"response", "prefix"} (\'-\': stdin)',
    )
    parse.add_argument("output", metavar="OUT", help="JSONL of results ('-': stdout)")
    parse.add_argument("--schema", metavar="FILE", help="a response template (JSON) to read by")
    parse.add_argument(
        "--prefix", default="", metavar="TEXT", help="the prompt before each response"
    )
    parse.add_argument("--tools", metavar="FILE", help="a JSON list of tools: typed arguments")
    parse.add_argument(
        "--id-column",
        action="append",
        metavar="NAME",
        help="copy this key of an object row to its result (repeatable)",
    )
    parse.set_defaults(func=_cmd_parse)


def _cmd_parse(args: argparse.Namespace) -> int:
    from ..pipelines.inputs import open_regular, refuse_same_file
    from ..pipelines.responses import RowParser
    from ..pipelines.rows import InputError, error_record

    try:
        refuse_same_file(args.output, {"input": args.input, "--schema file": args.schema})
    except ValueError as error:
        raise CommandError(str(error)) from None
    chat = _load_chat(args)
    schema = _load_json(args.schema, "--schema") if args.schema else None
    if schema is not None and not isinstance(schema, dict):
        raise CommandError(f"{args.schema}: --schema must hold a JSON object")
    tools = _load_json(args.tools, "--tools") if args.tools else None
    try:
        rows = RowParser(
            chat, schema=schema, prefix=args.prefix, tools=tools, passthrough=args.id_column or ()
        )
    except ValueError as error:  # (a template nothing can be inferred from, a bad schema)
        raise CommandError(str(error)) from None
    source = _binary(sys.stdin, "r") if args.input == "-" else open_regular(args.input)
    sink = _binary(sys.stdout, "w") if args.output == "-" else open(args.output, "wb")
    try:
        number = 0
        while True:
            line = source.readline(MAX_LINE + 1)
            if not line:
                break
            number += 1
            if len(line) > MAX_LINE and not line.endswith(b"\n"):
                while (rest := source.readline(MAX_LINE)) and not rest.endswith(b"\n"):
                    pass
                result = {
                    "message": None,
                    "error": error_record(InputError(f"a line of more than {MAX_LINE} bytes")),
                }
            elif not line.strip():
                continue  # (a blank line is no row; it keeps its place in the numbering)
            else:
                try:
                    value = json.loads(line)
                except (json.JSONDecodeError, UnicodeDecodeError) as error:
                    result = {"message": None, "error": error_record(error)}
                else:
                    result = rows.parse_value(value)
            if result["error"] is not None:
                result["error"]["input_line"] = number
            sink.write(json.dumps(result, ensure_ascii=False).encode("utf-8") + b"\n")
    finally:
        if args.input != "-":
            source.close()
        if args.output != "-":
            sink.close()
        else:
            sink.flush()
    return 0
