"""Opening the files a run reads and writes: regular files only, read within a size bound, and
never an output that is one of its own inputs.

A FIFO opened for reading waits for a writer for ever, `/dev/zero` never ends and a 2 GB
context would be read whole before anything looked at it: each is refused before it is read (a
file is opened without blocking and checked on its descriptor, so a path swapped for a FIFO in
between is caught too). Standard input (`-`) is the streaming channel, read with the same bounds.
"""

from __future__ import annotations

import os
import stat
from typing import IO, Any

__all__ = [
    "MAX_JSON_FILE_BYTES",
    "MAX_LINE_BYTES",
    "check_model_folder",
    "open_regular",
    "read_bounded",
    "refuse_same_file",
]

#: Bytes of a JSON file the command line reads whole (`--context`, `--messages`, `--tools`).
MAX_JSON_FILE_BYTES = 64 * 1024 * 1024
#: Bytes of one input line (one row) of a JSONL batch; a longer line is an error row.
MAX_LINE_BYTES = 64 * 1024 * 1024


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular(path: str | os.PathLike[str]) -> IO[bytes]:
    """`path` opened for reading in binary, refused with `ValueError` unless it is a regular
    file (`FileNotFoundError` where there is none)."""
    where = os.fspath(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(where, flags)
    except IsADirectoryError:
        raise ValueError(f"{where}: a folder, not a file") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ValueError(
                f"{where}: {_kind(mode)}, not a regular file: refused (read standard input "
                "with '-')"
            )
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bounded(source: str | IO[bytes], limit: int, what: str, stdin: Any = None) -> bytes:
    """At most `limit` bytes of `source` (a path, or `-` for `stdin`), whole; more is refused
    with `ValueError` naming `what` and the bound."""
    if source == "-":
        stream = stdin
        name = "standard input"
        data = stream.read(limit + 1)
    else:
        name = os.fspath(source)  # type: ignore[arg-type]
        with open_regular(name) as stream:
            data = stream.read(limit + 1)
    if isinstance(data, str):  # (a replaced stdin in text mode)
        data = data.encode("utf-8", "surrogateescape")
    if len(data) > limit:
        raise ValueError(f"{name}: {what} larger than {limit:,} bytes: refused")
    return data


def refuse_same_file(output: str, inputs: dict[str, str | None]) -> None:
    """`ValueError` when `output` is one of `inputs` (a role: a path), which opening it for
    writing would truncate before it was read; checked on the files themselves (links and
    other names of one file included)."""
    if output == "-" or not os.path.exists(output):
        return
    for role, path in inputs.items():
        if path is None or path == "-" or not os.path.exists(path):
            continue
        if os.path.samefile(path, output):
            raise ValueError(
                f"{output}: the output is the same file as the {role} ({path}); writing it "
                "would destroy the input: choose another output"
            )


def check_model_folder(folder: str | os.PathLike[str]) -> None:
    """Refuse with `ValueError` a model folder where a file a loader reads (`*.json`,
    `*.jinja`, in it or in `additional_chat_templates/`) is a FIFO, a device or a socket: reading
    it would wait for ever or never end."""
    root = os.fspath(folder)
    for where in (root, os.path.join(root, "additional_chat_templates")):
        try:
            names = os.listdir(where)
        except OSError:
            continue
        for name in names:
            if not name.endswith((".json", ".jinja")):
                continue
            path = os.path.join(where, name)
            try:
                mode = os.stat(path).st_mode
            except OSError:
                continue
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise ValueError(f"{path}: {_kind(mode)}, not a regular file: refused")
