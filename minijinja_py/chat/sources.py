"""A chat template's sources: the one or named templates a caller passes, and which of them
are compiled when the chat template is made."""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import bounded_repr
from ..sandbox.limits import Limits

__all__ = ["compiled_at_load", "named_sources"]


def named_sources(
    template: str | Mapping[str, str], name: str | None
) -> tuple[dict[str, str], str | None]:
    """The named sources and the single source of `template` (one of them is empty), with
    `name` checked against them."""
    if isinstance(template, str):
        templates: dict[str, str] = {}
        single: str | None = template
    elif isinstance(template, Mapping) and template:
        templates = {str(k): str(v) for k, v in template.items()}
        single = None
    else:
        raise ValueError("a chat template must be a string or a non-empty mapping of names")
    if name is not None and name not in (templates if single is None else ("default",)):
        names = sorted(templates) if single is None else ["default"]
        raise ValueError(f"no chat template named {bounded_repr(name)}; available template names are {names}")
    return templates, single


def compiled_at_load(sources: Mapping[str, str], chosen: str | None, limits: Limits) -> list[str]:
    """The sources to compile when the chat template is made, the chosen one first.

    Compiling at load shows a mistake where the template is made; but a thousand named sources
    are not all compiled then: only up to max_source characters in all, the rest when chosen.
    """
    room = limits.max_source
    ordered = sorted(sources.items(), key=lambda item: item[0] != chosen)
    kept = []
    for _, source in ordered:
        if (room := room - len(source)) < 0:
            break
        kept.append(source)
    return kept
