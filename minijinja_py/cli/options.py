"""The command line's shared parts: its errors, reading its input files within bounds, the
template and its run options (limits, a pinned clock), and writing to standard output."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

from ..errors import bounded_repr


class CommandError(Exception):
    """A usage or input problem reported as `error: <message>`."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(1, f"error: {message}\n")


# -- shared helpers -----------------------------------------------------------------------------


def _describe(exc: BaseException) -> str:
    from ..errors import bounded_repr, bounded_text

    # str() of what was raised may itself raise (an int past the digit limit) or be a 45 MB
    # render: the text is bounded, made by the engine's own walk.
    if isinstance(exc, KeyError) and len(exc.args) == 1:
        return f"missing key {bounded_repr(exc.args[0])}"
    return bounded_text(exc) or type(exc).__name__


def _read_input(path: str, what: str) -> str:
    """A JSON file (or `-`), read whole within `MAX_JSON_FILE_BYTES`: a regular file only."""
    from ..pipelines.inputs import MAX_JSON_FILE_BYTES, read_bounded

    stdin = _binary(sys.stdin, "r")
    data = read_bounded(path, MAX_JSON_FILE_BYTES, f"the {what} file is", stdin)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CommandError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def _load_json(path: str, what: str) -> Any:
    try:
        return json.loads(_read_input(path, what))
    except json.JSONDecodeError as exc:
        raise CommandError(f"{path}: invalid JSON in {what}: {exc}") from None


def _read_template(path: str, limits: Any) -> str:
    """A template file's text as transformers reads it (UTF-8, universal newlines), read within
    what `max_source` allows (four bytes a character): a regular file only."""
    from ..pipelines.inputs import read_bounded
    from ..sandbox.limits import Limits

    max_source = (limits or Limits()).max_source
    data = read_bounded(path, 4 * max_source, "the template is", None)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CommandError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _parse_vars(items: Sequence[str] | None) -> dict[str, Any]:
    """`key=value` pairs; a value that parses as JSON is used as that JSON value."""
    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise CommandError(f"--var expects key=value, got {bounded_repr(item)}")
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


def _load_conversation(path: str) -> tuple[list[Any], dict[str, Any]]:
    """The messages of a `--messages` file (a list of messages, or an object with "messages"
    and options) and its options."""
    data = _load_json(path, "--messages")
    options: dict[str, Any] = {}
    if isinstance(data, dict):
        if "messages" not in data:
            raise CommandError(f"{path}: the object has no 'messages' key")
        options = dict(data)
        data = options.pop("messages")
    if not isinstance(data, list):
        raise CommandError(f"{path}: expected a list of messages")
    return data, options


def _load_chat(args: argparse.Namespace) -> Any:
    from ..chat import ChatTemplate
    from ..errors import TemplateError

    name = getattr(args, "name", None)
    options = {"limits": _limits(args), "now": _now(args)}
    if args.template is not None:
        if name is not None:
            raise CommandError("--name applies to --model and --gguf only")
        source = _read_template(args.template, options["limits"])
        try:
            return ChatTemplate(source, origin=args.template, **options)
        except TemplateError as error:
            if error.name is None:
                error.name = args.template
            raise
    if args.model is not None:
        from ..pipelines.inputs import check_model_folder

        check_model_folder(args.model)
        return ChatTemplate.from_pretrained(args.model, name=name, **options)
    from ..pipelines.inputs import open_regular

    open_regular(args.gguf).close()  # (a FIFO or a device is refused before the reader waits)
    return ChatTemplate.from_gguf(args.gguf, name=name, **options)


#: `Limits` fields the command line sets, with their option and type.
LIMIT_OPTIONS = {
    "max_steps": ("--max-steps", int, "N", "work of one render, in steps"),
    "max_seconds": ("--max-seconds", float, "S", "wall-clock seconds of one render"),
    "max_output": ("--max-output", int, "N", "characters of a render's output"),
    "max_memory": ("--max-memory", int, "BYTES", "bytes a render may create"),
    "max_source": ("--max-source", int, "N", "characters of the template's source"),
}


def _limits(args: argparse.Namespace) -> Any:
    """The `Limits` of the run: the defaults with each limit option given; `None` if none."""
    given = {
        field: getattr(args, field)
        for field in LIMIT_OPTIONS
        if getattr(args, field, None) is not None
    }
    if not given:
        return None
    for field, value in given.items():
        if not value > 0 or value != value or value == float("inf"):
            raise CommandError(f"{LIMIT_OPTIONS[field][0]} must be a positive number")
    from ..sandbox.limits import Limits

    try:
        return Limits(**given)
    except (TypeError, ValueError) as exc:
        raise CommandError(f"invalid limit: {_describe(exc)}") from None


def _now(args: argparse.Namespace) -> Any:
    """`--now` as a `datetime` (ISO 8601), or `None`."""
    text = getattr(args, "now", None)
    if text is None:
        return None
    from datetime import datetime

    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise CommandError(
            f"--now expects an ISO 8601 date and time (2026-01-15T12:00:00), not {bounded_repr(text)}"
        ) from None


def _pinned_clock(now: Any) -> Any:
    # (the chat layer pins the clock of a ChatTemplate; a --context render has none)
    def strftime_now(format: str) -> str:
        if not isinstance(format, str) or len(format) > 1_000:
            raise ValueError("strftime_now takes a format string of at most 1000 characters")
        return str(now.strftime(format))

    return strftime_now


def _add_limit_options(parser: argparse.ArgumentParser) -> None:
    for option, kind, metavar, text in LIMIT_OPTIONS.values():
        parser.add_argument(option, type=kind, metavar=metavar, help=f"the limit on {text}")
    parser.add_argument(
        "--now",
        metavar="DATETIME",
        help="the date and time strftime_now formats (ISO 8601), for reproducible output",
    )


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


def _binary(stream: Any, mode: str) -> Any:
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        if mode == "w":
            stream.flush()  # text already written goes out before the bytes
        return buffer
    return _TextAsBinary(stream)


class _TextAsBinary:
    """A replaced standard stream (tests, embedding) seen as bytes."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        return (line.encode("utf-8", "surrogateescape") for line in self._stream)

    def readline(self, limit: int = -1) -> bytes:
        return str(self._stream.readline(limit)).encode("utf-8", "surrogateescape")

    def read(self, limit: int = -1) -> bytes:
        return str(self._stream.read(limit)).encode("utf-8", "surrogateescape")

    def write(self, data: bytes) -> int:
        return self._stream.write(data.decode("utf-8"))

    def flush(self) -> None:
        self._stream.flush()

    def fileno(self) -> int:
        raise OSError("no file descriptor")


#: File extensions ``batch`` and ``parse`` read and write as JSONL (a path without one is
#: JSONL too).
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".jsonlines", ".json")


def _check_extension(path: str, role: str, command: str) -> None:
    """Refuse, before any work, a path whose extension names a format `command` cannot
    handle (`out.csv` would otherwise receive JSONL)."""
    from ..pipelines.files import PARQUET_SUFFIXES

    if path == "-":
        return
    suffix = Path(path).suffix.lower()
    if not suffix or suffix in JSONL_SUFFIXES or suffix in PARQUET_SUFFIXES:
        return
    verb = "read" if role == "input" else "write"
    raise CommandError(
        f"{path}: {command} cannot {verb} {suffix} files; the {role} must be JSONL "
        "(.jsonl, .ndjson, .jsonlines, .json, no extension, or '-') or Parquet (.parquet, .pq)"
    )


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity mask where the system keeps one (a
    container's or `taskset`'s cpuset), else every CPU; at least 1."""
    count: int | None
    if hasattr(os, "process_cpu_count"):  # (Python 3.13: the same question, answered there)
        count = os.process_cpu_count()
    elif hasattr(os, "sched_getaffinity"):
        count = len(os.sched_getaffinity(0))
    else:
        count = os.cpu_count()
    return max(1, count or 1)


def _worker_count(text: str) -> int:
    """`--workers`: a number of processes, or `auto` for one per usable CPU."""
    if text == "auto":
        return usable_cpus()
    try:
        workers = int(text)
    except ValueError:
        raise CommandError(
            f"--workers must be a number or 'auto', not {bounded_repr(text)}"
        ) from None
    if workers < 1:
        raise CommandError("--workers must be at least 1")
    return workers
