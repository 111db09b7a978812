"""Reading a model's chat template(s) and special tokens from a folder, the Hub cache or a GGUF file."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["SPECIAL_TOKEN_NAMES", "load_gguf_files", "load_pretrained_files", "read_text"]

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


def read_text(path: Path) -> str:
    # Universal newlines, as transformers reads template files.
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _read_json(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: invalid JSON: {exc}") from None


def _template_field(value: Any, where: Path) -> str | dict[str, str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        templates: dict[str, str] = {}
        for item in value:
            if not (isinstance(item, Mapping) and "name" in item and "template" in item):
                raise ValueError(
                    f"{where}: chat_template list items must be objects with 'name' and 'template'"
                )
            templates[str(item["name"])] = str(item["template"])
        return templates
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items()}
    raise ValueError(f"{where}: chat_template must be a string or a list of templates")


def _resolve_model_folder(folder: str | os.PathLike[str]) -> Path:
    path = Path(folder)
    if path.is_dir():
        return path
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


def load_pretrained_files(
    folder: str | os.PathLike[str],
) -> tuple[str | dict[str, str], dict[str, Any]]:
    """The chat template(s) and special tokens of a local model folder, as transformers reads them.

    Templates: ``chat_template.jinja`` (which replaces any template of ``tokenizer_config.json``)
    and ``additional_chat_templates/<name>.jinja``; else ``tokenizer_config.json``'s
    ``chat_template`` (a string, or a list of ``{"name", "template"}``); else the legacy
    ``chat_template.json``.  Special tokens come from ``tokenizer_config.json``, completed (and,
    for configs without ``added_tokens_decoder``, overridden) by ``special_tokens_map.json``.
    """
    root = _resolve_model_folder(folder)
    config_path = root / "tokenizer_config.json"
    config = _read_json(config_path) if config_path.is_file() else {}
    if not isinstance(config, Mapping):
        raise ValueError(f"{config_path}: expected a JSON object")

    template: str | dict[str, str] | None = _template_field(
        config.get("chat_template"), config_path
    )
    legacy_path = root / "chat_template.json"
    if template is None and legacy_path.is_file():
        legacy = _read_json(legacy_path)
        if isinstance(legacy, Mapping):
            template = _template_field(legacy.get("chat_template"), legacy_path)
    jinja_path = root / "chat_template.jinja"
    if jinja_path.is_file():
        template = read_text(jinja_path)
    extra_dir = root / "additional_chat_templates"
    extra = sorted(extra_dir.glob("*.jinja")) if extra_dir.is_dir() else []
    if extra:
        templates: dict[str, str] = {}
        if isinstance(template, str):
            templates["default"] = template
        elif isinstance(template, dict):
            templates.update(template)
        for path in extra:
            templates[path.stem] = read_text(path)
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
    map_path = root / "special_tokens_map.json"
    if map_path.is_file():
        special_map = _read_json(map_path)
        override = "added_tokens_decoder" not in config
        if isinstance(special_map, Mapping):
            for name in SPECIAL_TOKEN_NAMES:
                text = _token_text(special_map.get(name))
                if text is not None and (override or name not in tokens):
                    tokens[name] = text
            config = {**special_map, **config} if not override else {**config, **special_map}
    extra_tokens = config.get("additional_special_tokens")
    if isinstance(extra_tokens, list):
        texts = [_token_text(item) for item in extra_tokens]
        tokens["additional_special_tokens"] = [t for t in texts if t is not None]
    return template, tokens


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
