"""How often the inferred assistant spans equal hand-tagged ``{% generation %}`` spans.

Truth: ``minijinja_py/chat/spans/tagged/*.jinja`` (corpus templates tagged by hand in this project, from the
end of the assistant header through the end-of-turn marker and the line end after it; see
conformance/FINDINGS.md for the convention) and the corpus templates that ship
with generation blocks (their tags stripped for the inference).  Inferred: the untagged corpus
template through ``ChatTemplate.render_with_provenance``.  Run ``python -m
conformance.assistant_spans`` for the table by family.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import minijinja_py.chat.spans as _spans

from .corpus import _conversation, _meta, conversation_names, corpus_dir, template_source

# (the package's own copies: those of the installed build when the suite runs against one)
TAGGED_DIR = Path(_spans.__file__).resolve().parent / "tagged"
SHIPPED_TAGGED = ("smollm-3-3b", "lfm-2.5-8b-a1b", "lfm-2.5-vl-450m", "laguna-v8")
_TAG = re.compile(r"\{%-?\s*(end)?generation\s*-?%\}")


def tagged_names() -> list[str]:
    return sorted(p.stem for p in TAGGED_DIR.glob("*.jinja")) + list(SHIPPED_TAGGED)


@cache
def family(name: str) -> str:
    for line in (corpus_dir() / "manifest.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        fields = line.split("\t")
        if fields[0].removesuffix(".jinja") == name:
            return fields[1]
    return "?"


@cache
def _templates(name: str) -> tuple[Any, Any]:
    from minijinja_py import ChatTemplate

    meta = _meta().get(name, {})
    tokens = {k: meta[k] for k in ("bos_token", "eos_token") if meta.get(k)}
    if name in SHIPPED_TAGGED:
        tagged = template_source(name)
        untagged = _TAG.sub("", tagged)
    else:
        tagged = (TAGGED_DIR / f"{name}.jinja").read_text(encoding="utf-8")
        untagged = template_source(name)
    return ChatTemplate.from_string(tagged, tokens), ChatTemplate.from_string(untagged, tokens)


def compare(name: str, conversation: str) -> tuple[str, list, list] | None:
    """(text, tagged spans, inferred spans) for a pair, or None when the template refuses it."""
    from minijinja_py.errors import TemplateError

    truth_template, plain_template = _templates(name)
    conv = dict(_conversation(conversation))
    messages = conv.pop("messages")
    conv.pop("add_generation_prompt", None)
    conv.update(_meta().get(name, {}).get("extra") or {})
    try:
        text, truth = truth_template.render_with_spans(messages, **conv)
        inferred = plain_template.render_with_provenance(messages, **conv)
    except (TemplateError, TypeError, ValueError):
        return None
    if inferred.text != text:
        raise AssertionError(f"{name}: the tagged copy renders a different text")
    return text, mask_spans(truth), mask_spans(inferred.assistant_spans)


def mask_spans(spans: list) -> list[tuple[int, int]]:
    """The spans as the mask they make: empty ones dropped, touching ones joined (a template
    may close and reopen a generation block around nothing or between two writes)."""
    joined: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if start == end:
            continue
        if joined and start <= joined[-1][1]:
            joined[-1] = (joined[-1][0], max(end, joined[-1][1]))
        else:
            joined.append((start, end))
    return joined


def agreement(name: str) -> tuple[int, int]:
    """(spans that agree, spans in either list) over the corpus conversations."""
    agree = total = 0
    for conversation in conversation_names():
        found = compare(name, conversation)
        if found is None:
            continue
        _, truth, inferred = found
        agree += len(set(truth) & set(inferred))
        total += len(set(truth) | set(inferred))
    return agree, total


def main() -> None:
    rows = [(family(name), name, *agreement(name)) for name in tagged_names()]
    print("| family | template | agreeing spans / all spans |")
    print("|---|---|---:|")
    for fam, name, agree, total in rows:
        print(f"| {fam} | {name} | {agree}/{total} |")
    hand = [r for r in rows if r[1] not in SHIPPED_TAGGED]
    print(
        json.dumps(
            {
                "hand_tagged": [sum(r[2] for r in hand), sum(r[3] for r in hand)],
                "all": [sum(r[2] for r in rows), sum(r[3] for r in rows)],
            }
        )
    )


if __name__ == "__main__":
    main()


def conversation_agreement(
    name: str, mask_options: dict[str, Any] | None = None
) -> tuple[int, int, list[str]]:
    """(conversations whose inferred mask equals the tags' mask, conversations rendered, the
    disagreeing ones), the inferred spans under ``mask_options`` (see masks.adjust_spans)."""
    from minijinja_py.chat.spans.conventions import adjust_spans
    from minijinja_py.errors import TemplateError

    truth_template, plain_template = _templates(name)
    options = dict(mask_options or {})
    agree = total = 0
    differ = []
    for conversation in conversation_names():
        conv = dict(_conversation(conversation))
        messages = conv.pop("messages")
        conv.pop("add_generation_prompt", None)
        conv.update(_meta().get(name, {}).get("extra") or {})
        try:
            text, truth = truth_template.render_with_spans(messages, **conv)
            inferred = plain_template.render_with_provenance(messages, **conv)
        except (TemplateError, TypeError, ValueError):
            continue
        total += 1
        if mask_spans(truth) == mask_spans(adjust_spans(inferred, **options)):
            agree += 1
        else:
            differ.append(conversation)
    return agree, total, differ
