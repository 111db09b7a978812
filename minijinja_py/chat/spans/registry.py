"""The registry of hand-tagged templates: for a known template, the copy of it (in `tagged/`,
beside this module) whose `{% generation %}` blocks mark the assistant's turns as its family's
training tags do, found by the normalised hash of the template's source."""

from __future__ import annotations

import json
from functools import cache, lru_cache

__all__ = ["normalised_hash", "tagged_names", "tagged_source"]


def normalised_hash(source: str) -> str:
    """The key of a template in the hand-tag registry: the SHA-256 of its source with line
    ends made `\\n` and the whitespace around the whole stripped (a model folder's JSON copy
    and its `.jinja` file differ in nothing else)."""
    import hashlib  # (here: OpenSSL's loading is a cost a render without the registry skips)

    text = source.replace("\r\n", "\n").replace("\r", "\n").strip()
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@cache
def _index() -> dict[str, str]:
    return dict(json.loads(_tagged_file("index.json")))


@cache
def _tagged_file(name: str) -> str:
    # (imported here: importlib.resources brings tempfile, shutil and the compressors with it)
    from importlib import resources

    return resources.files(__package__).joinpath("tagged", name).read_text("utf-8")


@lru_cache(maxsize=64)  # (asked once per conversation; a str keeps its hash)
def tagged_source(source: str) -> str | None:
    """The hand-tagged copy of the template `source` (its `{% generation %}` version), or
    `None` when the registry does not know the template."""
    name = _index().get(normalised_hash(source))
    return None if name is None else _tagged_file(name)


def tagged_names() -> list[str]:
    """The file names of the registry's hand-tagged templates."""
    return sorted(_index().values())
