"""The ``minijinja-py`` command line: render, check and batch-render chat templates.

    minijinja-py render --template chat.jinja --messages conversation.json --add-generation-prompt
    minijinja-py render --model ./Qwen3-0.6B --messages conversation.json
    minijinja-py render --template page.jinja --context vars.json --plain
    minijinja-py check chat.jinja
    minijinja-py batch --model ./Qwen3-0.6B in.jsonl out.jsonl --workers 4

Every failure prints ``error: <message>`` on stderr and exits with status 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn

__all__ = ["main", "build_parser"]


class CommandError(Exception):
    """A usage or input problem reported as ``error: <message>``."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(1, f"error: {message}\n")


# -- shared helpers -----------------------------------------------------------------------------


def _describe(exc: BaseException) -> str:
    text = str(exc)
    if isinstance(exc, KeyError) and exc.args:
        text = f"missing key {exc.args[0]!r}"
    return text or type(exc).__name__


def _read_input(path: str) -> str:
    if path == "-":
        buffer = getattr(sys.stdin, "buffer", None)
        return buffer.read().decode("utf-8") if buffer is not None else sys.stdin.read()
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _load_json(path: str, what: str) -> Any:
    try:
        return json.loads(_read_input(path))
    except json.JSONDecodeError as exc:
        raise CommandError(f"{path}: invalid JSON in {what}: {exc}") from None


def _parse_vars(items: Sequence[str] | None) -> dict[str, Any]:
    """``key=value`` pairs; a value that parses as JSON is used as that JSON value."""
    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise CommandError(f"--var expects key=value, got {item!r}")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


def _write_stdout(text: str) -> None:
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    sys.stdout.flush()
    buffer.write(text.encode("utf-8"))
    buffer.flush()


def _load_chat(args: argparse.Namespace) -> Any:
    from .chat import ChatTemplate

    name = getattr(args, "name", None)
    if args.template is not None:
        if name is not None:
            raise CommandError("--name applies to --model and --gguf only")
        return ChatTemplate.from_file(args.template)
    if args.model is not None:
        return ChatTemplate.from_pretrained(args.model, name=name)
    return ChatTemplate.from_gguf(args.gguf, name=name)


def _add_source(parser: argparse.ArgumentParser, gguf: bool = True) -> None:
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--template", metavar="FILE", help="a chat template file (.jinja)")
    group.add_argument(
        "--model", metavar="FOLDER", help="a model folder (or a Hub repo id in the local cache)"
    )
    if gguf:
        group.add_argument("--gguf", metavar="FILE", help="a GGUF model file")
    else:
        parser.set_defaults(gguf=None)
    parser.add_argument(
        "--name", metavar="NAME", help="which of the model's named templates (e.g. tool_use)"
    )


def _add_render_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tools", metavar="FILE", help="a JSON list of tool schemas")
    parser.add_argument(
        "--add-generation-prompt", action="store_true", help="end with the assistant header"
    )
    parser.add_argument(
        "--continue-final-message",
        nargs="?",
        const=True,
        default=None,
        metavar="FIELD",
        help="end the text inside the final message (its 'content', or FIELD) to continue it",
    )
    parser.add_argument(
        "--var",
        action="append",
        metavar="KEY=VALUE",
        help="an extra template variable (VALUE is parsed as JSON when it is valid JSON)",
    )


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
        data = _load_json(args.messages, "--messages")
        options: dict[str, Any] = {}
        if isinstance(data, dict):
            if "messages" not in data:
                raise CommandError(f"{args.messages}: the object has no 'messages' key")
            options = dict(data)
            data = options.pop("messages")
        if not isinstance(data, list):
            raise CommandError(f"{args.messages}: expected a list of messages")
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
    context: dict[str, Any] = {}
    if args.context is not None:
        context = _load_json(args.context, "--context")
        if not isinstance(context, dict):
            raise CommandError(f"{args.context}: --context must hold a JSON object")
    if args.template is not None:
        if args.name is not None:
            raise CommandError("--name applies to --model and --gguf only")
        from .chat.loading import read_text as _read_text

        source = _read_text(Path(args.template))
        defaults: dict[str, Any] = {}
    else:
        chat = _load_chat(args)
        source = chat.select(tools, args.name)
        defaults = dict(chat.special_tokens)
    context = {**defaults, **context}
    if tools is not None:
        context["tools"] = tools
    if args.add_generation_prompt:
        context["add_generation_prompt"] = True
    context.update(variables)
    env = _plain_environment() if args.plain else _chat_environment()
    _write_stdout(env.from_string(source).render(context))
    return 0


def _chat_environment() -> Any:
    from . import chat_environment

    return chat_environment()


def _plain_environment() -> Any:
    from . import Environment

    return Environment()


# -- check --------------------------------------------------------------------------------------


def _cmd_check(args: argparse.Namespace) -> int:
    from . import TemplateSyntaxError
    from .chat import ChatTemplate

    path = args.file
    try:
        if os.path.isdir(path):
            chat = ChatTemplate.from_pretrained(path)
        elif path.lower().endswith(".gguf"):
            chat = ChatTemplate.from_gguf(path)
        else:
            chat = ChatTemplate.from_file(path)
    except TemplateSyntaxError as exc:
        if getattr(exc, "name", None) is None:
            exc.name = path
        raise
    report: dict[str, Any] = {"file": path, "ok": True, "templates": {}}
    for name in chat.template_names:
        caps = chat.capabilities(chat_template=None if len(chat.template_names) == 1 else name)
        report["templates"][name] = caps.as_dict()
    # A template that raises on every probe renders nothing: not "ok".
    report["ok"] = all(caps["renders"] for caps in report["templates"].values())
    status = 0 if report["ok"] else 1
    if args.json:
        _write_stdout(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
        return status
    lines = [f"{'ok' if report['ok'] else 'fails to render'}: {path}"]
    for name, caps in report["templates"].items():
        prefix = "" if len(report["templates"]) == 1 else f"[{name}] "
        variables = ", ".join(caps.pop("variables")) or "(none)"
        lines.append(f"{prefix}variables: {variables}")
        lines.append(f"{prefix}capabilities:")
        for key, value in caps.items():
            shown = ("yes" if value else "no") if isinstance(value, bool) else str(value)
            lines.append(f"  {key}: {shown}")
    _write_stdout("\n".join(lines) + "\n")
    return status


# -- batch --------------------------------------------------------------------------------------

_WORKER: dict[str, Any] = {}


def _init_worker(chat: Any, defaults: dict[str, Any]) -> None:
    _WORKER["chat"] = chat
    _WORKER["defaults"] = defaults


def render_record(chat: Any, defaults: dict[str, Any], line: str) -> str:
    """One JSONL input line (a message list, or an object with ``messages`` and options) to one
    output line ``{"text": ...}`` or ``{"error": ...}`` (without its newline)."""
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        return json.dumps({"error": f"invalid JSON: {exc}"}, ensure_ascii=False)
    options = dict(defaults)
    if isinstance(data, dict) and "messages" in data:
        options.update(data)
        data = options.pop("messages")
    if not isinstance(data, list):
        return json.dumps(
            {"error": 'expected a JSON list of messages or an object with "messages"'},
            ensure_ascii=False,
        )
    try:
        text = chat.render(data, **options)
    except Exception as exc:  # every failure becomes this line's error record
        return json.dumps({"error": _describe(exc)}, ensure_ascii=False)
    return json.dumps({"text": text}, ensure_ascii=False)


def _render_chunk(lines: list[str]) -> list[str]:
    chat, defaults = _WORKER["chat"], _WORKER["defaults"]
    return [render_record(chat, defaults, line) for line in lines]


def _chunks(lines: Iterable[str], size: int) -> Iterator[list[str]]:
    chunk: list[str] = []
    for line in lines:
        chunk.append(line)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


class _Progress:
    def __init__(self, stream: IO[str], enabled: bool) -> None:
        self.stream = stream
        self.enabled = enabled
        self.live = enabled and getattr(stream, "isatty", lambda: False)()
        self.start = time.perf_counter()
        self.last = 0.0
        self.done = 0
        self.errors = 0

    def add(self, records: list[str]) -> None:
        self.done += len(records)
        self.errors += sum(1 for record in records if record.startswith('{"error"'))
        now = time.perf_counter()
        if self.live and now - self.last >= 0.25:
            self.last = now
            self.stream.write("\r" + self._line(now))
            self.stream.flush()

    def _line(self, now: float) -> str:
        elapsed = max(now - self.start, 1e-9)
        return (
            f"batch: {self.done} conversations ({self.errors} errors) in {elapsed:.2f} s, "
            f"{self.done / elapsed:.1f}/s"
        )

    def finish(self) -> None:
        if self.enabled:
            prefix = "\r" if self.live else ""
            self.stream.write(prefix + self._line(time.perf_counter()) + "\n")
            self.stream.flush()


def run_batch(
    chat: Any,
    lines: Iterable[str],
    out: IO[str],
    *,
    workers: int = 1,
    defaults: dict[str, Any] | None = None,
    chunk_size: int = 32,
    progress: IO[str] | None = None,
) -> tuple[int, int]:
    """Render each line of ``lines`` to a line of ``out``, in order, with bounded memory.

    With ``workers > 1`` chunks of lines go to a process pool; at most ``2 * workers`` chunks are
    in flight, so memory stays constant however long the input is.  Returns (lines, errors).
    """
    defaults = dict(defaults or {})
    meter = _Progress(progress or sys.stderr, progress is not None)
    records = (line.rstrip("\r\n") for line in lines)
    if workers <= 1:
        for chunk in _chunks(records, chunk_size):
            done = [render_record(chat, defaults, line) for line in chunk]
            out.write("".join(record + "\n" for record in done))
            meter.add(done)
    else:
        from concurrent.futures import ProcessPoolExecutor

        window: deque[Any] = deque()
        with ProcessPoolExecutor(
            max_workers=workers, initializer=_init_worker, initargs=(chat, defaults)
        ) as pool:
            for chunk in _chunks(records, chunk_size):
                window.append(pool.submit(_render_chunk, chunk))
                if len(window) >= 2 * workers:
                    done = window.popleft().result()
                    out.write("".join(record + "\n" for record in done))
                    meter.add(done)
            while window:
                done = window.popleft().result()
                out.write("".join(record + "\n" for record in done))
                meter.add(done)
    meter.finish()
    return meter.done, meter.errors


def _cmd_batch(args: argparse.Namespace) -> int:
    if args.workers < 1:
        raise CommandError("--workers must be at least 1")
    if args.chunk_size < 1:
        raise CommandError("--chunk-size must be at least 1")
    chat = _load_chat(args)
    defaults: dict[str, Any] = {}
    if args.tools:
        defaults["tools"] = _load_json(args.tools, "--tools")
    if args.add_generation_prompt:
        defaults["add_generation_prompt"] = True
    if args.continue_final_message is not None:
        defaults["continue_final_message"] = args.continue_final_message
    defaults.update(_parse_vars(args.var))
    # Undecodable bytes become U+FFFD so that one bad line cannot stop the batch.
    source = _open_stream(args.input, sys.stdin, "r", errors="replace")
    try:
        sink = _open_stream(args.output, sys.stdout, "w")
        try:
            run_batch(
                chat,
                source,
                sink,
                workers=args.workers,
                defaults=defaults,
                chunk_size=args.chunk_size,
                progress=None if args.quiet else sys.stderr,
            )
        finally:
            sink.close()
    finally:
        source.close()
    return 0


def _open_stream(path: str, std: IO[str], mode: str, errors: str = "strict") -> Any:
    """A UTF-8 text stream on ``path``, or on the standard stream for ``-`` (left open)."""
    if path != "-":
        return open(
            path, mode, encoding="utf-8", errors=errors, newline="\n" if "w" in mode else None
        )
    try:
        fd = std.fileno()
    except (AttributeError, OSError, ValueError):  # a replaced stream (tests, embedding)
        return _Unclosed(std)
    std.flush()
    return open(fd, mode, encoding="utf-8", errors=errors, closefd=False)


class _Unclosed:
    """A standard stream whose ``close`` only flushes."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[str]:
        return iter(self._stream)

    def write(self, text: str) -> int:
        return self._stream.write(text)

    def close(self) -> None:
        self._stream.flush()


# -- entry point --------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="minijinja-py",
        description="Render and check Jinja chat templates exactly as transformers does.",
    )
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
    render.set_defaults(func=_cmd_render)

    check = commands.add_parser("check", help="check syntax, list variables and capabilities")
    check.add_argument("file", metavar="FILE", help="a template file, model folder or GGUF file")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    check.set_defaults(func=_cmd_check)

    batch = commands.add_parser("batch", help="render a JSONL file of conversations")
    _add_source(batch)
    batch.add_argument("input", metavar="IN.jsonl", help="one conversation per line ('-': stdin)")
    batch.add_argument("output", metavar="OUT.jsonl", help="one result per line ('-': stdout)")
    batch.add_argument("--workers", type=int, default=1, metavar="N", help="worker processes")
    batch.add_argument(
        "--chunk-size", type=int, default=32, metavar="N", help="lines per worker task"
    )
    batch.add_argument("--quiet", action="store_true", help="no progress line on stderr")
    _add_render_options(batch)
    batch.set_defaults(func=_cmd_batch)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (0 on success, 1 on any error)."""
    parser = build_parser()
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
        where = next(
            (
                getattr(args, key, None)
                for key in ("template", "model", "gguf", "file")
                if getattr(args, key, None)
            ),
            None,
        )
        if hasattr(exc, "with_position") and getattr(exc, "name", "") is None and where:
            exc.name = where  # TemplateError: show which file the position is in
        sys.stderr.write(f"error: {_describe(exc)}\n")
        sys.stderr.flush()
        return 1


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
