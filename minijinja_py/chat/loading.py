"""Reading a model's chat template(s) and special tokens from a folder, the Hub cache or a GGUF file."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "SPECIAL_TOKEN_NAMES",
    "load_gguf_files",
    "load_pretrained_files",
    "load_pretrained_sources",
    "pretrained_response_template",
    "pretrained_tokenizer_file",
    "read_text",
    "resolve_model_folder",
]

SPECIAL_TOKEN_NAMES = (
    "bos_token",
    "eos_token",
    "unk_token",
    "sep_token",
    "pad_token",
    "cls_token",
    "mask_token",
)


def _token_text(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping) and isinstance(value.get("content"), str):
        return value["content"]
    return None


#: the largest file a loader reads (templates, JSON configs): real ones are far smaller
MAX_FILE_BYTES = 64 * 1024 * 1024


def _read_bytes(path: Path) -> bytes:
    with open(path, "rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"{path}: larger than {MAX_FILE_BYTES} bytes, refused")
    return data


def read_text(path: Path) -> str:
    """The UTF-8 text of `path` with universal newlines (as transformers reads templates)."""
    try:
        text = _read_bytes(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


#: Nesting of arrays and objects a loaded JSON file may have (real files have a handful);
#: deeper files are refused before they are parsed (json's parser recurses in C).
MAX_JSON_DEPTH = 100

# What changes the nesting of JSON text: brackets, and the quotes and backslashes that tell
# what is inside a string (a class of single characters: the scan never backtracks).
_JSON_SIGNIFICANT = re.compile(r'[\[\]{}"\\]')


def json_deeper_than(text: str, limit: int) -> bool:
    """Whether `text` (JSON, valid or not) opens more than `limit` arrays and objects
    inside one another, outside its strings.

    One pass over the characters that matter, in order, tracking whether it is inside a string
    and which character a backslash escapes: linear in the text, whatever it holds (an
    unterminated string of escaped quotes included), and with no recursion.
    """
    if text.count("[") + text.count("{") <= limit:
        return False  # (most texts: not even that many brackets)
    depth = 0
    inside = False  # (in a string)
    escaped = -1  # (the position of the character the last backslash escapes)
    for match in _JSON_SIGNIFICANT.finditer(text):
        char = match.group()
        if inside:
            at = match.start()
            if at == escaped:
                continue
            if char == "\\":
                escaped = at + 1
            elif char == '"':
                inside = False
        elif char == '"':
            inside = True
        elif char == "[" or char == "{":
            depth += 1
            if depth > limit:
                return True
        elif char == "]" or char == "}":
            depth -= 1
    return False


def _read_json(path: Path) -> Any:
    text = read_text(path)
    if json_deeper_than(text, MAX_JSON_DEPTH):
        raise ValueError(f"{path}: invalid JSON: nested more than {MAX_JSON_DEPTH} levels deep")
    try:
        return json.loads(text)
    except ValueError as exc:  # JSONDecodeError, and Python's limit on integer digits
        raise ValueError(f"{path}: invalid JSON: {exc}") from None
    except RecursionError:
        raise ValueError(
            f"{path}: invalid JSON: nested more than {MAX_JSON_DEPTH} levels deep"
        ) from None


class _ModelFolder:
    """Files of one model folder; a path that resolves outside it is refused.

    In the Hugging Face cache a snapshot's files are links into the repository's `blobs`
    folder (`models--org--name/snapshots/<rev>/x -> ../../blobs/<hash>`): those are allowed.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        real = Path(os.path.realpath(root))
        self._inside = [real]
        blobs = real.parent.parent / "blobs"
        if real.parent.name == "snapshots" and blobs.is_dir():
            self._inside.append(blobs)

    def file(self, *parts: str) -> Path | None:
        """`root/parts`, or `None` when there is no such regular file."""
        path = self.root.joinpath(*parts)
        if not (path.is_file() or path.is_symlink()):
            return None
        self._check(path)
        return path if path.is_file() else None

    def folder(self, name: str) -> Path | None:
        path = self.root / name
        if not path.is_dir():
            return None
        self._check(path)
        return path

    def _check(self, path: Path) -> None:
        real = Path(os.path.realpath(path))
        if not any(real == base or base in real.parents for base in self._inside):
            raise ValueError(f"{path}: resolves outside the model folder ({real}), refused")


def _template_field(value: Any, where: Path) -> str | dict[str, str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    pairs: list[tuple[Any, Any]] = []
    if isinstance(value, list):
        for item in value:
            if not (isinstance(item, Mapping) and "name" in item and "template" in item):
                raise ValueError(
                    f"{where}: chat_template list items must be objects with 'name' and 'template'"
                )
            pairs.append((item["name"], item["template"]))
    elif isinstance(value, Mapping):
        pairs = list(value.items())
    else:
        raise ValueError(f"{where}: chat_template must be a string or a list of templates")
    for name, source in pairs:
        # Strings only: printing some other value (a deeply nested list) could itself fail.
        if not (isinstance(name, str) and isinstance(source, str)):
            raise ValueError(f"{where}: a named chat template's name and template must be strings")
    return dict(pairs)


def resolve_model_folder(folder: str | os.PathLike[str]) -> Path:
    """`folder` itself, or the local Hugging Face cache's snapshot of the Hub repo id."""
    path = Path(folder)
    if path.is_dir():
        return path
    if path.is_file():  # (else looked up as a repo id, and reported as "no such model folder")
        use = "from_gguf" if path.suffix.lower() == ".gguf" else "from_file"
        raise ValueError(
            f"{os.fspath(folder)}: a file, not a model folder: load it with ChatTemplate.{use}()"
        )
    try:
        from huggingface_hub import snapshot_download  # type: ignore[import-not-found]
    except ImportError:
        raise FileNotFoundError(
            f"{os.fspath(folder)}: no such model folder (install huggingface_hub to look it up "
            "as a Hub repo id in the local cache)"
        ) from None
    try:
        return Path(snapshot_download(repo_id=os.fspath(folder), local_files_only=True))
    except Exception as exc:  # the Hub library's own not-found/validation errors
        raise FileNotFoundError(
            f"{os.fspath(folder)}: no such model folder, and not in the Hugging Face cache "
            f"({type(exc).__name__})"
        ) from None


def pretrained_tokenizer_file(folder: str | os.PathLike[str]) -> Path | None:
    """The `tokenizer.json` of a model folder (or cached Hub repo id), if it has one; a link
    that resolves outside the folder is refused as the templates' are."""
    return _ModelFolder(resolve_model_folder(folder)).file("tokenizer.json")


def pretrained_response_template(folder: str | os.PathLike[str]) -> Any:
    """The `response_template` of a model folder's tokenizer_config.json (transformers 5.23
    reads it there, for parse_response), or None; it is checked when first used."""
    files = _ModelFolder(resolve_model_folder(folder))
    config_path = files.file("tokenizer_config.json")
    config = _read_json(config_path) if config_path is not None else {}
    return config.get("response_template") if isinstance(config, Mapping) else None


def load_pretrained_files(
    folder: str | os.PathLike[str],
) -> tuple[str | dict[str, str], dict[str, Any]]:
    """The chat template(s) and special tokens of a local model folder, as transformers reads them.

    Templates: `chat_template.jinja` (which replaces any template of `tokenizer_config.json`)
    and `additional_chat_templates/<name>.jinja`; else `tokenizer_config.json`'s
    `chat_template` (a string, or a list of `{"name", "template"}`); else the legacy
    `chat_template.json`.  Special tokens come from `tokenizer_config.json`, completed (and,
    for configs without `added_tokens_decoder`, overridden) by `special_tokens_map.json`.
    """
    template, tokens, _ = load_pretrained_sources(folder)
    return template, tokens


def load_pretrained_sources(
    folder: str | os.PathLike[str],
) -> tuple[str | dict[str, str], dict[str, Any], dict[str, str]]:
    """`load_pretrained_files`, and the file each template was read from, by template name
    (a single template is named `"default"`): errors of the template name that file."""
    files = _ModelFolder(resolve_model_folder(folder))
    config_path = files.file("tokenizer_config.json")
    config = _read_json(config_path) if config_path is not None else {}
    if not isinstance(config, Mapping):
        raise ValueError(f"{config_path}: expected a JSON object")

    template: str | dict[str, str] | None = _template_field(
        config.get("chat_template"), config_path or files.root
    )
    read_from = config_path
    legacy_path = files.file("chat_template.json")
    if template is None and legacy_path is not None:
        legacy = _read_json(legacy_path)
        if isinstance(legacy, Mapping):
            template = _template_field(legacy.get("chat_template"), legacy_path)
            read_from = legacy_path
    jinja_path = files.file("chat_template.jinja")
    if jinja_path is not None:
        template = read_text(jinja_path)
        read_from = jinja_path
    names = template if isinstance(template, dict) else ["default"]
    where = {name: os.fspath(read_from) for name in names if read_from is not None}
    extra_dir = files.folder("additional_chat_templates")
    extra = sorted(extra_dir.glob("*.jinja")) if extra_dir is not None else []
    if extra:
        templates: dict[str, str] = {}
        if isinstance(template, str):
            templates["default"] = template
        elif isinstance(template, dict):
            templates.update(template)
        for path in extra:
            checked = files.file("additional_chat_templates", path.name)
            if checked is not None:
                templates[path.stem] = read_text(checked)
                where[path.stem] = os.fspath(checked)
        template = templates
    if template is None or template == {}:
        raise ValueError(
            f"{os.fspath(folder)}: no chat template found (looked for chat_template.jinja, "
            "additional_chat_templates/, tokenizer_config.json and chat_template.json)"
        )

    tokens: dict[str, Any] = {}
    for name in SPECIAL_TOKEN_NAMES:
        text = _token_text(config.get(name))
        if text is not None:
            tokens[name] = text
    map_path = files.file("special_tokens_map.json")
    if map_path is not None:
        special_map = _read_json(map_path)
        override = "added_tokens_decoder" not in config
        if isinstance(special_map, Mapping):
            for name in SPECIAL_TOKEN_NAMES:
                text = _token_text(special_map.get(name))
                if text is not None and (override or name not in tokens):
                    tokens[name] = text
            config = {**special_map, **config} if not override else {**config, **special_map}
    # transformers 5 passes named extra tokens ({"image_token": ...}) to the template, and not the
    # unnamed list (additional_special_tokens / extra_special_tokens as a list).
    named = config.get("extra_special_tokens")
    if isinstance(named, Mapping):
        for name, value in named.items():
            text = _token_text(value)
            if text is not None:
                tokens[str(name)] = text
    return template, tokens, where


def load_gguf_files(path: str | os.PathLike[str]) -> tuple[str | dict[str, str], dict[str, Any]]:
    """The chat template(s) and special tokens stored in a GGUF file's metadata."""
    from .gguf import read_gguf_metadata

    meta = read_gguf_metadata(path)
    templates = meta.chat_templates
    if not templates:
        raise ValueError(f"{os.fspath(path)}: no tokenizer.chat_template in the GGUF metadata")
    template: str | dict[str, str] = templates
    if list(templates) == ["default"]:
        template = templates["default"]
    return template, meta.special_tokens
