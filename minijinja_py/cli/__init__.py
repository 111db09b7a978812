"""The `minijinja-py` command line: render, check and batch-render chat templates.

    minijinja-py render --template chat.jinja --messages conversation.json --add-generation-prompt
    minijinja-py render --model ./Qwen3-0.6B --messages conversation.json
    minijinja-py render --template page.jinja --context vars.json --plain
    minijinja-py check chat.jinja
    minijinja-py batch --model ./Qwen3-0.6B in.jsonl out.jsonl --workers 4
    minijinja-py batch --model ./Qwen3-0.6B in.parquet out.parquet --id-column id --fail-on-error
    minijinja-py completion bash

Every failure prints `error: <message>` on stderr (the message bounded, with the template
position where there is one; never a traceback, whatever was raised) and exits with status 1;
`batch --fail-on-error` exits with status 2 when the run completed but some conversations
failed.  `batch` refuses, before any work and writing nothing, a file whose extension names a
format it cannot read or write (`out.csv`): JSONL is `.jsonl`, `.ndjson`, `.jsonlines`,
`.json`, no extension or `-`; Parquet is `.parquet` or `.pq`.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import IO, Any

from .check import _cmd_check
from .inspection import add_inspect
from .options import (
    JSONL_SUFFIXES,
    LIMIT_OPTIONS,
    CommandError,
    _add_limit_options,
    _add_render_options,
    _add_source,
    _binary,
    _check_extension,
    _describe,
    _limits,
    _load_chat,
    _load_conversation,
    _load_json,
    _now,
    _parse_vars,
    _Parser,
    _pinned_clock,
    _read_template,
    _worker_count,
    _write_stdout,
    usable_cpus,
)
from .parse import add_parse

__all__ = [
    "JSONL_SUFFIXES",
    "LIMIT_OPTIONS",
    "CommandError",
    "build_parser",
    "main",
    "usable_cpus",
]

BATCH_DESCRIPTION = """\
Render one conversation per input row; output row N answers input row N.

A row is a list of messages, or an object with "messages" (a list, or that list as
JSON text), optional "tools" and "documents", and template variables: every other
key. A row never sets the template or an option: keys such as chat_template,
add_generation_prompt and continue_final_message, and the model's special tokens,
make the row fail. Each output row holds the --id-column values, "text",
"assistant_spans" (with --spans), "input_ids" and "assistant_masks" (with --tokens)
and "error": null, or a record of the failure
{"kind", "message", "line", "column", "input_line"} ("line" and "column" in the
template, "input_line" in the input); the other rows go on. A blank line is no row.
"""


# -- render -------------------------------------------------------------------------------------


def _cmd_render(args: argparse.Namespace) -> int:
    variables = _parse_vars(args.var)
    tools = _load_json(args.tools, "--tools") if args.tools else None
    if tools is not None and not isinstance(tools, list):
        raise CommandError(f"{args.tools}: --tools must hold a JSON list")

    if args.messages is not None:
        if args.plain:
            raise CommandError("--plain applies to --context rendering only")
        chat = _load_chat(args)
        data, options = _load_conversation(args.messages)
        if tools is not None:
            options["tools"] = tools
        if args.add_generation_prompt:
            options["add_generation_prompt"] = True
        if args.continue_final_message is not None:
            options["continue_final_message"] = args.continue_final_message
        options.update(variables)
        _write_stdout(chat.render(data, **options))
        return 0

    if args.continue_final_message is not None:
        raise CommandError("--continue-final-message applies to --messages rendering only")
    if args.context is None and not variables:
        raise CommandError(
            "nothing to render: give --messages FILE (a conversation) or --context FILE "
            "(template variables)"
        )
    context: dict[str, Any] = {}
    if args.context is not None:
        context = _load_json(args.context, "--context")
        if not isinstance(context, dict):
            raise CommandError(f"{args.context}: --context must hold a JSON object")
    limits = _limits(args)
    if args.template is not None:
        if args.name is not None:
            raise CommandError("--name applies to --model and --gguf only")
        source = _read_template(args.template, limits)
        defaults: dict[str, Any] = {}
    else:
        chat = _load_chat(args)
        source = chat.select(tools, args.name)
        defaults = dict(chat.special_tokens)
    context = {**defaults, **context}
    now = _now(args)
    if now is not None:
        context["strftime_now"] = _pinned_clock(now)
    if tools is not None:
        context["tools"] = tools
    if args.add_generation_prompt:
        context["add_generation_prompt"] = True
    context.update(variables)
    env = _plain_environment(limits) if args.plain else _chat_environment(limits)
    _write_stdout(env.from_string(source).render(context))
    return 0


def _chat_environment(limits: Any = None) -> Any:
    from .. import chat_environment

    return chat_environment(limits)


def _plain_environment(limits: Any = None) -> Any:
    from .. import Environment

    return Environment(limits=limits)


# -- batch --------------------------------------------------------------------------------------


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}" + ("" if count == 1 else "s")


class _Progress:
    """A live bar with rate and ETA on a terminal; one summary line at the end otherwise."""

    def __init__(self, stream: IO[str] | None, source: Any) -> None:
        self.stream = stream
        self.source = source
        self.live = stream is not None and getattr(stream, "isatty", lambda: False)()
        self.start = time.perf_counter()
        self.last = 0.0
        self.rows = 0
        self.errors = 0
        self.skipped = 0

    def add(self, chunk: Any) -> None:
        self.rows += chunk.rows
        self.errors += chunk.errors
        self.skipped += chunk.skipped
        now = time.perf_counter()
        if self.live and now - self.last >= 0.25:
            self.last = now
            assert self.stream is not None
            self.stream.write("\r" + self._bar(now) + "\x1b[K")
            self.stream.flush()

    def _bar(self, now: float) -> str:
        elapsed = max(now - self.start, 1e-9)
        rate = self.rows / elapsed
        text = f"{_plural(self.rows, 'conversation')}, {self.errors:,} failed, {rate:,.0f}/s"
        total, done = self.source.total, self.source.done
        if not total:
            return f"batch: {text}"
        fraction = min(done / total, 1.0)
        filled = int(fraction * 30)
        eta = elapsed * (1 - fraction) / fraction if fraction > 0 else 0.0
        minutes, seconds = divmod(int(eta), 60)
        bar = "#" * filled + "-" * (30 - filled)
        return f"batch: [{bar}] {fraction:4.0%} {text}, ETA {minutes}:{seconds:02d}"

    def finish(self) -> None:
        if self.stream is None:
            return
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        skipped = f", {_plural(self.skipped, 'blank line')} skipped" if self.skipped else ""
        summary = (
            f"batch: {_plural(self.rows, 'conversation')} ({_plural(self.errors, 'error')}"
            f"{skipped}) in {elapsed:.2f} s, {self.rows / elapsed:.1f}/s"
        )
        self.stream.write(("\r\x1b[K" if self.live else "") + summary + "\n")
        self.stream.flush()


def _cmd_batch(args: argparse.Namespace) -> int:
    from ..pipelines import RowRenderer
    from ..pipelines.files import file_format, open_sink, open_source, render_stream

    _check_extension(args.input, "input", "batch")
    _check_extension(args.output, "output", "batch")
    workers = _worker_count(args.workers)
    if args.chunk_size < 1:
        raise CommandError("--chunk-size must be at least 1")
    from ..pipelines.inputs import refuse_same_file

    inputs = {"input": args.input, "template": args.template, "--tools file": args.tools}
    refuse_same_file(args.output, {**inputs, "GGUF file": args.gguf})
    chat = _load_chat(args)
    if args.tokens:
        _check_tokenizer(chat, args)
    tools = _load_json(args.tools, "--tools") if args.tools else None
    renderer = RowRenderer(
        chat,
        tools=tools,
        add_generation_prompt=args.add_generation_prompt,
        continue_final_message=args.continue_final_message or False,
        variables=_parse_vars(args.var),
        spans=args.spans,
        tokens=args.tokens,
        passthrough=args.id_column or (),
    )
    source = open_source(args.input, _binary(sys.stdin, "r"))
    try:
        _note_key_order(renderer, source)
        sink = open_sink(args.output, _binary(sys.stdout, "w"), overwrite=args.overwrite)
        meter = _Progress(None if args.quiet else sys.stderr, source)
        try:
            render_stream(
                renderer,
                source,
                sink,
                output_format=file_format(args.output),
                workers=workers,
                chunk_size=args.chunk_size,
                on_chunk=meter.add,
            )
        finally:
            sink.close()
        meter.finish()
    finally:
        source.close()
    if args.fail_on_error and meter.errors:
        sys.stderr.write(
            f"error: {meter.errors:,} of {_plural(meter.rows, 'conversation')} failed\n"
        )
        return 2
    return 0


def _note_key_order(renderer: Any, source: Any) -> None:
    """The run's one note on nested Parquet columns, where the template can print key order
    (its workers warn none)."""
    schema = getattr(getattr(source, "file", None), "schema_arrow", None)
    if schema is None:
        return
    from ..pipelines.arrow import key_order_columns, key_order_message

    columns = key_order_columns(renderer, schema)
    if columns:
        sys.stderr.write(f"warning: {key_order_message(columns)}\n")


def _check_tokenizer(chat: Any, args: Any) -> None:
    """`--tokens` without a tokenizer, said in the command line's terms."""
    try:
        chat.tokenizer  # noqa: B018 - loads it, or says why not
    except ValueError:
        where = (
            f"{args.model} holds no tokenizer.json"
            if args.model is not None
            else "--template and --gguf carry none"
        )
        raise CommandError(
            f"--tokens needs the model's tokenizer: give --model FOLDER, a model folder holding "
            f"tokenizer.json ({where})"
        ) from None


# -- completion ---------------------------------------------------------------------------------


def _cmd_completion(args: argparse.Namespace) -> int:
    _write_stdout(bash_completion(build_parser()))
    return 0


def bash_completion(parser: argparse.ArgumentParser) -> str:
    """A bash completion script for `parser`'s commands and options (zsh reads it through
    `bashcompinit`): `eval "$(minijinja-py completion bash)"`."""
    commands = _subcommands(parser)
    top = sorted(o for o in parser._option_string_actions if o.startswith("--"))  # noqa: SLF001
    lines = [
        '# minijinja-py completion for bash: eval "$(minijinja-py completion bash)"',
        "_minijinja_py() {",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" opts',
        "    if [[ $COMP_CWORD -eq 1 ]]; then",
        f'        COMPREPLY=($(compgen -W "{" ".join([*commands, *top])}" -- "$cur"))',
        "        return",
        "    fi",
        '    case "${COMP_WORDS[1]}" in',
    ]
    for name, command in commands.items():
        options = sorted(o for o in command._option_string_actions if o.startswith("--"))  # noqa: SLF001
        lines.append(f'        {name}) opts="{" ".join(options)}" ;;')
    lines += [
        "        *) return ;;",
        "    esac",
        '    if [[ "$cur" == -* ]]; then',
        '        COMPREPLY=($(compgen -W "$opts" -- "$cur"))',
        "    else",
        '        COMPREPLY=($(compgen -f -- "$cur"))',
        "    fi",
        "}",
        "complete -o filenames -F _minijinja_py minijinja-py",
        "",
    ]
    return "\n".join(lines)


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, Any]:
    action = next(
        a
        for a in parser._actions
        if isinstance(a, argparse._SubParsersAction)  # noqa: SLF001
    )
    return dict(action.choices)


# -- entry point --------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = _Parser(
        prog="minijinja-py",
        description="Render and check Jinja chat templates exactly as transformers does.",
    )
    parser.add_argument("--version", action="version", version=f"minijinja-py {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    render = commands.add_parser("render", help="render a template to stdout")
    _add_source(render)
    data = render.add_mutually_exclusive_group()
    data.add_argument(
        "--context", metavar="FILE", help="JSON object of template variables ('-' for stdin)"
    )
    data.add_argument(
        "--messages",
        metavar="FILE",
        help="JSON list of messages, or an object with 'messages' and options ('-' for stdin)",
    )
    _add_render_options(render)
    render.add_argument(
        "--plain", action="store_true", help="with --context: a plain Jinja environment"
    )
    _add_limit_options(render)
    render.set_defaults(func=_cmd_render)

    check = commands.add_parser("check", help="check syntax, list variables and capabilities")
    check.add_argument("file", metavar="FILE", help="a template file, model folder or GGUF file")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    _add_limit_options(check)
    check.set_defaults(func=_cmd_check)

    add_inspect(commands)
    add_parse(commands)

    batch = commands.add_parser(
        "batch",
        help="render a JSONL or Parquet file of conversations",
        description=BATCH_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_source(batch)
    batch.add_argument(
        "input", metavar="IN", help="JSONL (one conversation per line; '-': stdin) or .parquet"
    )
    batch.add_argument(
        "output", metavar="OUT", help="JSONL (one result per line; '-': stdout) or .parquet"
    )
    batch.add_argument(
        "--workers",
        default="1",
        metavar="N",
        help="worker processes, or 'auto' for one per CPU this process may use (default 1)",
    )
    batch.add_argument(
        "--chunk-size",
        type=int,
        default=256,
        metavar="N",
        help="lines (or Parquet rows) per unit of work sent to a worker",
    )
    batch.add_argument(
        "--id-column",
        action="append",
        metavar="NAME",
        help="copy this key/column to the output as it is, not to the template (repeatable)",
    )
    batch.add_argument(
        "--spans", action="store_true", help="add assistant_spans: the generation blocks"
    )
    batch.add_argument(
        "--tokens",
        action="store_true",
        help="add input_ids and assistant_masks, with the tokenizer.json of --model",
    )
    batch.add_argument(
        "--fail-on-error",
        action="store_true",
        help="exit with status 2 when any conversation failed (the output is still complete)",
    )
    batch.add_argument("--quiet", action="store_true", help="no progress or summary on stderr")
    batch.add_argument(
        "--overwrite", action="store_true", help="replace OUT if it exists and is not empty"
    )
    _add_limit_options(batch)
    _add_render_options(batch)
    batch.set_defaults(func=_cmd_batch)

    completion = commands.add_parser("completion", help="print a shell completion script")
    completion.add_argument("shell", choices=["bash"], help="the shell (zsh: with bashcompinit)")
    completion.set_defaults(func=_cmd_completion)
    return parser


def _command_parser(parser: argparse.ArgumentParser, argv: Sequence[str]) -> Any:
    commands = _subcommands(parser)
    return next((commands[token] for token in argv if token in commands), parser)


def _unknown_options(parser: argparse.ArgumentParser, argv: Sequence[str]) -> list[str]:
    """The options in `argv` that neither the program nor its command knows (abbreviations of
    known options are known, as argparse accepts them)."""
    known = set(parser._option_string_actions)  # noqa: SLF001
    known |= set(_command_parser(parser, argv)._option_string_actions)  # noqa: SLF001
    unknown: list[str] = []
    for token in argv:
        if token == "--":
            break
        if not token.startswith("-") or token == "-" or token[1:2].isdigit():
            continue
        name = token.split("=", 1)[0]
        if name not in known and not any(k.startswith(name) for k in known if len(name) > 2):
            unknown.append(name)
    return unknown


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status: 0 on success, 1 on any error, 2 when
    `batch --fail-on-error` had conversations that failed."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    unknown = _unknown_options(parser, argv)
    if unknown:
        _command_parser(parser, argv).print_usage(sys.stderr)
        names = ", ".join(unknown)
        sys.stderr.write(f"error: unknown option{'s' if len(unknown) > 1 else ''}: {names}\n")
        return 1
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    try:
        return args.func(args)
    except KeyboardInterrupt:
        sys.stderr.write("error: interrupted\n")
        return 1
    except BrokenPipeError:
        return 1
    except Exception as exc:  # the command line never shows a traceback
        try:
            sys.stderr.write(f"error: {_message(exc, args)}\n")
            sys.stderr.flush()
        except Exception:  # noqa: BLE001, S110 - stderr itself failed: the status still says it
            pass
        return 1


def _message(exc: BaseException, args: argparse.Namespace) -> str:
    """The text after `error:`: bounded, and never an exception of its own."""
    try:
        return _explain(exc, args)
    except Exception:  # noqa: BLE001 - describing the failure must not fail in its turn
        return f"{type(exc).__name__} (its message could not be shown)"


def _explain(exc: BaseException, args: argparse.Namespace) -> str:
    if isinstance(exc, FileNotFoundError) and exc.filename is not None:
        return f"no such file: {exc.filename}"
    if isinstance(exc, IsADirectoryError) and exc.filename is not None:
        return f"a folder, not a file: {exc.filename}"
    where = next(
        (
            getattr(args, key, None)
            for key in ("template", "model", "gguf", "file")
            if getattr(args, key, None)
        ),
        None,
    )
    from ..errors import TemplateError

    if isinstance(exc, TemplateError):
        if exc.name is None and where:
            exc.name = where  # show which file the position is in
        return str(exc)  # the bounded message, its position and an excerpt of the line
    return _describe(exc)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
