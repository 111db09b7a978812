"""Read the chat template and special tokens out of a GGUF file's header.

A GGUF file is a small header of typed key/value metadata, then tensor descriptions, then gigabytes
of tensor data.  Only the metadata is read here, in bounded chunks as the parser advances (never
more than `MAX_HEADER` bytes, never a memory map of the file): fixed-size arrays are skipped
by arithmetic, string arrays (the vocabulary, the BPE merges) are walked by their length prefixes
without building the strings, and the tensor data is never touched.  The vocabulary is only
revisited afterwards to fetch the few tokens whose ids name special tokens.  Counts are capped
(`MAX_KEYS`, `MAX_ITEMS`, `MAX_NESTED`) so that the time spent is linear in
the header and small: a damaged or hostile header raises `GGUFError` naming the file.

Layout (https://github.com/ggml-org/ggml/blob/master/docs/gguf.md): `b"GGUF"`, `uint32
version`, then tensor count and key/value count (`uint64` from version 2, `uint32` in
version 1), then the key/value pairs: a string key, a `uint32` value type, the value.  Strings
are a length (`uint64`, `uint32` in version 1) followed by UTF-8 bytes.  Files written on
big-endian machines use big-endian numbers throughout.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["GGUFError", "GGUFMetadata", "read_gguf_metadata", "SPECIAL_TOKEN_IDS"]

# Value type codes.
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY = range(10)
UINT64, INT64, FLOAT64 = 10, 11, 12

_SCALAR_FORMATS = {
    UINT8: "B",
    INT8: "b",
    UINT16: "H",
    INT16: "h",
    UINT32: "I",
    INT32: "i",
    FLOAT32: "f",
    BOOL: "?",
    UINT64: "Q",
    INT64: "q",
    FLOAT64: "d",
}

# Metadata keys holding special token ids, and the template variable each one becomes.
SPECIAL_TOKEN_IDS = {
    "bos_token": "tokenizer.ggml.bos_token_id",
    "eos_token": "tokenizer.ggml.eos_token_id",
    "unk_token": "tokenizer.ggml.unknown_token_id",
    "sep_token": "tokenizer.ggml.seperator_token_id",  # sic: the key is spelt so in GGUF
    "pad_token": "tokenizer.ggml.padding_token_id",
    "cls_token": "tokenizer.ggml.cls_token_id",
    "mask_token": "tokenizer.ggml.mask_token_id",
}

TEMPLATE_KEY = "tokenizer.chat_template"
TOKENS_KEY = "tokenizer.ggml.tokens"
_MARK_EVERY = 1024
# A string value is materialised only below this size (chat templates are a few KB, the engine
# compiles at most 500,000 characters; a damaged length must not make the reader copy gigabytes
# of tensor data, nor decode megabytes of emoji into four times their size), and only where the
# file holds that many bytes after its length.
MAX_STRING = 4 * 1024 * 1024
#: strings walked over the whole header, every array together (vocabulary and merges of real
#: files hold under two million): 30 million empty strings would take seconds to walk
MAX_STRINGS = 4_000_000
#: bytes of header read at most (real headers, vocabulary and merges included, are a few MB)
MAX_HEADER = 256 * 1024 * 1024
#: key/value pairs (real files have a few dozen)
MAX_KEYS = 65_536
#: items of one array (the largest vocabularies and merge lists have under a million)
MAX_ITEMS = 4_000_000
#: arrays nested inside arrays, counted over a whole value (no real key nests arrays)
MAX_NESTED = 65_536
_CHUNK = 1024 * 1024


class GGUFError(ValueError):
    """The file is not a GGUF file, or its header is damaged."""


@dataclass
class GGUFMetadata:
    """What the chat layer needs from a GGUF header.

    `values` holds every scalar and string value and every small array (up to `small_array`
    items); large arrays are skipped and only their length is recorded in `array_lengths`.
    """

    version: int
    tensor_count: int
    values: dict[str, Any] = field(default_factory=dict)
    array_lengths: dict[str, int] = field(default_factory=dict)
    special_tokens: dict[str, str] = field(default_factory=dict)

    @property
    def chat_templates(self) -> dict[str, str]:
        """Templates by name: `"default"` for `tokenizer.chat_template`, then named ones."""
        templates: dict[str, str] = {}
        default = self.values.get(TEMPLATE_KEY)
        if isinstance(default, str):
            templates["default"] = default
        prefix = TEMPLATE_KEY + "."
        for key, value in self.values.items():
            if key.startswith(prefix) and isinstance(value, str):
                templates[key[len(prefix) :]] = value
        return templates


class _Reader:
    """A cursor over the header, read from the file in chunks as far as the parser needs."""

    __slots__ = (
        "buf",
        "pos",
        "order",
        "len_fmt",
        "len_size",
        "_len",
        "_handle",
        "_eof",
        "size",
        "strings_left",
    )

    def __init__(self, handle: Any, head: bytes, order: str, version: int) -> None:
        self.buf = bytearray(head)
        self.pos = 0
        self.order = order
        self.len_fmt = "I" if version == 1 else "Q"
        self.len_size = struct.calcsize(self.len_fmt)
        self._len = struct.Struct(order + self.len_fmt)
        self._handle = handle
        self._eof = False
        try:
            self.size: int | None = os.fstat(handle.fileno()).st_size
        except (AttributeError, OSError, ValueError):  # (not a file: read until it ends)
            self.size = None
        self.strings_left = MAX_STRINGS

    def _fill(self, end: int) -> None:
        """Make `buf` hold at least `end` bytes, or raise."""
        if end > MAX_HEADER:
            raise GGUFError(f"GGUF header larger than {MAX_HEADER} bytes, refused")
        while len(self.buf) < end and not self._eof:
            chunk = self._handle.read(max(_CHUNK, end - len(self.buf)))
            if not chunk:
                self._eof = True
            self.buf += chunk
        if len(self.buf) < end:
            raise GGUFError(
                f"truncated GGUF header (needed {end - self.pos} bytes at offset {self.pos})"
            )

    def need(self, n: int) -> None:
        if self.pos + n > len(self.buf):
            self._fill(self.pos + n)

    def check_count(self, count: int, limit: int = MAX_ITEMS) -> None:
        if count > limit:
            raise GGUFError(
                f"GGUF array of {count} items at offset {self.pos} is over the limit of {limit}"
            )

    def scalar(self, fmt: str) -> Any:
        st = struct.Struct(self.order + fmt)
        self.need(st.size)
        (value,) = st.unpack_from(self.buf, self.pos)
        self.pos += st.size
        return value

    def length(self) -> int:
        self.need(self.len_size)
        (value,) = self._len.unpack_from(self.buf, self.pos)
        self.pos += self.len_size
        return value

    def string(self, skip_over: int | None = None) -> Any:
        """The next string; with `skip_over`, None for one longer than that (its bytes passed
        over, never decoded, within MAX_HEADER)."""
        n = self.length()
        if skip_over is not None and n > skip_over:
            if self.size is not None and self.pos + n > self.size:
                raise GGUFError(f"truncated GGUF header (needed {n} bytes at offset {self.pos})")
            self.need(n)
            self.pos += n
            return None
        if n > MAX_STRING:
            raise GGUFError(f"GGUF string of {n} bytes at offset {self.pos} is implausibly large")
        if self.size is not None and self.pos + n > self.size:
            raise GGUFError(f"truncated GGUF header (needed {n} bytes at offset {self.pos})")
        self.need(n)
        raw = self.buf[self.pos : self.pos + n]
        self.pos += n
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw.decode("utf-8", errors="replace")

    def skip_strings(self, count: int, marks: list[int] | None = None) -> None:
        """Walk past `count` strings using only their length prefixes.

        With `marks`, the offset of every `_MARK_EVERY`-th string is appended to it, so that a
        later lookup by index walks at most `_MARK_EVERY - 1` strings.
        """
        if count > self.strings_left:
            raise GGUFError(
                f"GGUF string arrays of more than {MAX_STRINGS} strings in all at offset"
                f" {self.pos}, refused"
            )
        self.strings_left -= count
        unpack = self._len.unpack_from
        pos, step, done = self.pos, self.len_size, 0
        try:
            while done < count:
                buf = self.buf
                # Walk as far as the bytes read so far go, then read on.
                stop = len(buf) - step
                if marks is None:
                    while done < count and pos <= stop:
                        pos += step + unpack(buf, pos)[0]
                        done += 1
                else:
                    while done < count and pos <= stop:
                        if done % _MARK_EVERY == 0:
                            marks.append(pos)
                        pos += step + unpack(buf, pos)[0]
                        done += 1
                if done < count:
                    self.pos = pos
                    self.need(step)
        except (struct.error, OverflowError):
            raise GGUFError("truncated GGUF header inside a string array") from None
        if marks is not None and count % _MARK_EVERY == 0:
            marks.append(pos)
        self.pos = pos
        self.need(0)

    def value(self, vtype: int) -> Any:
        if vtype == STRING:
            return self.string()
        fmt = _SCALAR_FORMATS.get(vtype)
        if fmt is None:
            raise GGUFError(f"unknown GGUF value type {vtype} at offset {self.pos - 4}")
        return self.scalar(fmt)


def read_gguf_metadata(
    path: str | os.PathLike[str],
    *,
    small_array: int = 64,
    special_tokens: Iterable[str] = tuple(SPECIAL_TOKEN_IDS),
) -> GGUFMetadata:
    """Read the key/value header of the GGUF file at `path` (tensor data is never read).

    Special tokens named in `special_tokens` whose id key is present are looked up in
    `tokenizer.ggml.tokens` and returned as strings in `GGUFMetadata.special_tokens`.
    A file that is not GGUF, or whose header is damaged or over the limits, raises
    `GGUFError` (a `ValueError`) naming the file.
    """
    name = os.fspath(path)
    with open(path, "rb") as handle:
        try:
            return _parse(handle, small_array, tuple(special_tokens), name)
        except GGUFError as error:
            message = str(error)
            if message.startswith(f"{name}: "):
                raise
            raise GGUFError(f"{name}: {message}") from None


def _parse(handle: Any, small_array: int, wanted: tuple[str, ...], name: str) -> GGUFMetadata:
    head = handle.read(8)
    if len(head) == 0:
        raise GGUFError(f"{name}: empty file, not a GGUF file")
    if len(head) < 8 or head[:4] != b"GGUF":
        raise GGUFError(f"{name}: not a GGUF file (bad magic {bytes(head[:4])!r})")
    (version,) = struct.unpack_from("<I", head, 4)
    order = "<"
    if version & 0xFFFF == 0 and version != 0:  # written big-endian
        order = ">"
        (version,) = struct.unpack_from(">I", head, 4)
    if version not in (1, 2, 3):
        raise GGUFError(f"{name}: unsupported GGUF version {version}")
    reader = _Reader(handle, head, order, version)
    reader.pos = 8
    count_fmt = "I" if version == 1 else "Q"
    tensor_count = reader.scalar(count_fmt)
    kv_count = reader.scalar(count_fmt)
    reader.check_count(kv_count, MAX_KEYS)
    meta = GGUFMetadata(version=version, tensor_count=tensor_count)
    token_marks: list[int] = []  # offsets of tokens 0, _MARK_EVERY, 2 * _MARK_EVERY, ...
    token_count = 0

    for _ in range(kv_count):
        key = reader.string()
        vtype = reader.scalar("I")
        if vtype == STRING and not key.startswith(TEMPLATE_KEY):
            # (another key's long text, a tokenizer.json say, is passed over, not decoded)
            text = reader.string(skip_over=MAX_STRING)
            if text is not None:
                meta.values[key] = text
            continue
        if vtype != ARRAY:
            meta.values[key] = reader.value(vtype)
            continue
        item_type = reader.scalar("I")
        count = reader.length()
        if item_type not in _SCALAR_FORMATS and item_type not in (STRING, ARRAY):
            raise GGUFError(f"{name}: unknown GGUF array item type {item_type} (key {key!r})")
        reader.check_count(count)
        meta.array_lengths[key] = count
        if key == TOKENS_KEY and item_type == STRING:
            token_count = count
            token_marks = []
            saved = reader.pos
            reader.skip_strings(count, token_marks)
            if count <= small_array:
                reader.pos = saved
                meta.values[key] = [reader.string() for _ in range(count)]
        elif count <= small_array and item_type != ARRAY:
            meta.values[key] = [reader.value(item_type) for _ in range(count)]
        elif item_type == STRING:
            reader.skip_strings(count)
        elif item_type in _SCALAR_FORMATS:
            width = struct.calcsize(_SCALAR_FORMATS[item_type])
            reader.need(width * count)
            reader.pos += width * count
        else:
            reader.check_count(count, MAX_NESTED)
            budget = [MAX_NESTED - count]
            for _ in range(count):
                _skip_array(reader, name, key, budget)

    ids: dict[str, int] = {}
    for var in wanted:
        token_id = meta.values.get(SPECIAL_TOKEN_IDS.get(var, ""))
        if isinstance(token_id, int) and not isinstance(token_id, bool) and token_id >= 0:
            ids[var] = token_id
    if ids and token_marks:
        meta.special_tokens = _lookup_tokens(reader, token_marks, token_count, ids)
    return meta


def _skip_array(reader: _Reader, name: str, key: str, budget: list[int], depth: int = 0) -> None:
    """Skip one array value (its item type, count and items), nested arrays included.

    `budget` counts down the nested arrays left for this key, so that empty arrays inside
    arrays cannot make the walk long.
    """
    if depth > 16:
        raise GGUFError(f"{name}: arrays nested too deeply (key {key!r})")
    item_type = reader.scalar("I")
    count = reader.length()
    reader.check_count(count)
    if item_type == STRING:
        reader.skip_strings(count)
    elif item_type == ARRAY:
        budget[0] -= count
        if budget[0] < 0:
            raise GGUFError(f"{name}: more than {MAX_NESTED} nested arrays (key {key!r})")
        for _ in range(count):
            _skip_array(reader, name, key, budget, depth + 1)
    elif item_type in _SCALAR_FORMATS:
        width = struct.calcsize(_SCALAR_FORMATS[item_type])
        reader.need(width * count)
        reader.pos += width * count
    else:
        raise GGUFError(f"{name}: unknown GGUF array item type {item_type} (key {key!r})")


def _lookup_tokens(
    reader: _Reader, marks: list[int], count: int, ids: dict[str, int]
) -> dict[str, str]:
    found: dict[int, str] = {}
    for token_id in set(ids.values()):
        if token_id >= count:
            continue
        block, offset = divmod(token_id, _MARK_EVERY)
        reader.pos = marks[block]
        reader.skip_strings(offset)
        found[token_id] = reader.string()
    return {var: found[token_id] for var, token_id in ids.items() if token_id in found}


# -- writing (used by the tests and by anyone who needs a small GGUF file) -----------------------


def _pack_string(text: str | bytes, order: str, version: int) -> bytes:
    raw = text.encode("utf-8") if isinstance(text, str) else text
    return struct.pack(order + ("I" if version == 1 else "Q"), len(raw)) + raw


def _pack_typed(vtype: int, value: Any, order: str, version: int) -> bytes:
    if vtype == STRING:
        return _pack_string(value, order, version)
    return struct.pack(order + _SCALAR_FORMATS[vtype], value)


def _guess_type(value: Any) -> int:
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return UINT32 if 0 <= value < 2**32 else INT64
    if isinstance(value, float):
        return FLOAT32
    if isinstance(value, (str, bytes)):
        return STRING
    raise TypeError(f"cannot store {type(value).__name__} in GGUF metadata")


def build_gguf_header(
    metadata: dict[str, Any],
    *,
    version: int = 3,
    big_endian: bool = False,
    tensor_count: int = 0,
) -> bytes:
    """Serialise `metadata` as a GGUF header.

    Values are typed by their Python type (bool, int as uint32 or int64, float as float32, str);
    lists become arrays typed by their first item; `(type_code, value)` pairs force a type.
    """
    order = ">" if big_endian else "<"
    count_fmt = order + ("I" if version == 1 else "Q")
    parts = [b"GGUF", struct.pack(order + "I", version)]
    parts.append(struct.pack(count_fmt, tensor_count))
    parts.append(struct.pack(count_fmt, len(metadata)))
    for key, value in metadata.items():
        parts.append(_pack_string(key, order, version))
        forced = isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], int)
        vtype, value = value if forced else (None, value)
        if isinstance(value, list):
            item_type = vtype if vtype is not None else (_guess_type(value[0]) if value else UINT8)
            parts.append(struct.pack(order + "I", ARRAY))
            parts.append(struct.pack(order + "I", item_type))
            parts.append(struct.pack(count_fmt, len(value)))
            parts.extend(_pack_typed(item_type, item, order, version) for item in value)
        else:
            vtype = vtype if vtype is not None else _guess_type(value)
            parts.append(struct.pack(order + "I", vtype))
            parts.append(_pack_typed(vtype, value, order, version))
    return b"".join(parts)
