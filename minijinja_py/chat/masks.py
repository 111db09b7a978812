"""Assistant masks with a stated source: which characters of a rendered chat are the assistant's.

A mask comes from one of four sources, and every result says which one it came from:

- ``"generation"``: the template's own ``{% generation %}`` blocks (transformers' only source);
- ``"tagged"``: a hand-tagged copy of a known template, shipped with this package in
  ``tagged/`` and found by the normalised hash of the template's source;
- ``"inferred"``: the rule of :mod:`minijinja_py.chat.provenance` (role header excluded, the
  end-of-turn marker and its line end included);
- ``"none"``: no source was asked for or found, and the mask is zeros (transformers' result for
  a template without generation blocks).

The caller picks the sources with a mode:

- ``"generation"``: the template's blocks, else zeros;
- ``"tagged"``: the template's blocks, else a hand-tagged copy, else a ``ValueError``;
- ``"inferred"``: a hand-tagged copy, else the rule (the template's own blocks are not read);
- ``"auto"``: the template's blocks, else a hand-tagged copy, else the rule.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import resources
from typing import Any, Literal

__all__ = [
    "MASK_MODES",
    "MASK_SOURCES",
    "MaskMode",
    "MaskSource",
    "check_mask_mode",
    "normalised_hash",
    "tagged_source",
]

MaskMode = Literal["generation", "tagged", "inferred", "auto"]
MaskSource = Literal["generation", "tagged", "inferred", "none"]

MASK_MODES: tuple[str, ...] = ("generation", "tagged", "inferred", "auto")
MASK_SOURCES: tuple[str, ...] = ("generation", "tagged", "inferred", "none")


def check_mask_mode(mode: Any) -> str:
    """``mode`` when it is one of ``MASK_MODES``.

    Raises:
        ValueError: for any other value.
    """
    if mode not in MASK_MODES:
        raise ValueError(f"mask must be one of {list(MASK_MODES)}, not {mode!r}")
    return str(mode)


def normalised_hash(source: str) -> str:
    """The key of a template in the hand-tag registry: the SHA-256 of its source with line
    ends made ``\\n`` and the whitespace around the whole stripped (a model folder's JSON copy
    and its ``.jinja`` file differ in nothing else)."""
    text = source.replace("\r\n", "\n").replace("\r", "\n").strip()
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@cache
def _index() -> dict[str, str]:
    text = resources.files(__package__).joinpath("tagged", "index.json").read_text("utf-8")
    return dict(json.loads(text))


@cache
def _tagged_file(name: str) -> str:
    return resources.files(__package__).joinpath("tagged", name).read_text("utf-8")


def tagged_source(source: str) -> str | None:
    """The hand-tagged copy of the template ``source`` (its ``{% generation %}`` version), or
    ``None`` when the registry does not know the template."""
    name = _index().get(normalised_hash(source))
    return None if name is None else _tagged_file(name)


def tagged_names() -> list[str]:
    """The file names of the registry's hand-tagged templates."""
    return sorted(_index().values())


class ChatEncoding(dict[str, Any]):
    """The token lists of a chat (a plain dict, equal to transformers' for the same keys), with
    ``mask_source``: where its assistant_masks came from (one of ``MASK_SOURCES``, a list of
    them for a batch, or None when no mask was asked for).  The attribute does not take part in
    dict equality, nor in a copy made with dict()."""

    mask_source: Any = None
