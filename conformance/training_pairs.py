"""Inferred assistant masks against another project's hand-tagged training templates.

The other project is TRL (huggingface/trl, Apache-2.0): its ``trl/chat_templates/`` folder holds
``<family>_training.jinja`` copies of model templates with ``{% generation %}`` markers (and a
few templates that ship them, ``lfm2_2_5*.jinja``).  They are not copied into this repository;
``.ci/run`` takes the folder out of trl 1.16.0's wheel (TRL itself is not installed), and
``MINIJINJA_TRAINING_TEMPLATES`` points this module at it::

    pip download --no-deps trl==1.16.0 && unzip trl-1.16.0-*.whl 'trl/chat_templates/*'
    MINIJINJA_TRAINING_TEMPLATES=trl/chat_templates python -m conformance.training_pairs

Each template with tags, its tags stripped, is rendered over the 18 corpus conversations with
provenance; a conversation agrees when the masks made by the inferred spans and by the tags are
the same (compared as assistant_spans.py compares them: empty spans dropped, touching ones
joined).  ``mask_options`` (see minijinja_py.chat.spans.modes) may pick a family's convention.
"""

from __future__ import annotations

import json
import os
import re
import sys
from functools import cache
from pathlib import Path
from typing import Any

from .assistant_spans import mask_spans
from .corpus import _conversation, conversation_names

_TAG = re.compile(r"\{%-?\s*(end)?generation\s*-?%\}")

# The special tokens the templates read (bos_token, eos_token), as their models' tokenizers
# name them.
TOKENS: dict[str, dict[str, str]] = {
    "cohere": {"bos_token": "<BOS_TOKEN>", "eos_token": "<|END_OF_TURN_TOKEN|>"},
    "cohere2": {"bos_token": "<BOS_TOKEN>", "eos_token": "<|END_OF_TURN_TOKEN|>"},
    "deepseekv3": {"bos_token": "<｜begin▁of▁sentence｜>", "eos_token": "<｜end▁of▁sentence｜>"},
    "deepseek_r1_distill": {
        "bos_token": "<｜begin▁of▁sentence｜>",
        "eos_token": "<｜end▁of▁sentence｜>",
    },
    "diffusion_gemma": {"bos_token": "<bos>", "eos_token": "<eos>"},
    "gemma": {"bos_token": "<bos>", "eos_token": "<eos>"},
    "gemma3": {"bos_token": "<bos>", "eos_token": "<eos>"},
    "lfm2": {"bos_token": "<|startoftext|>", "eos_token": "<|im_end|>"},
    "lfm2_2_5": {"bos_token": "<|startoftext|>", "eos_token": "<|im_end|>"},
    "lfm2_2_5_v2": {"bos_token": "<|startoftext|>", "eos_token": "<|im_end|>"},
    "lfm2_2_5_vl": {"bos_token": "<|startoftext|>", "eos_token": "<|im_end|>"},
    "lfm2_v2": {"bos_token": "<|startoftext|>", "eos_token": "<|im_end|>"},
    "llama3": {"bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"},
    "phi3": {"bos_token": "<s>", "eos_token": "<|endoftext|>"},
    "phi3_5": {"bos_token": "<s>", "eos_token": "<|endoftext|>"},
}


def folder() -> Path | None:
    where = os.environ.get("MINIJINJA_TRAINING_TEMPLATES")
    return Path(where) if where and Path(where).is_dir() else None


def pair_names(root: Path) -> list[str]:
    """The templates of `root` that carry generation tags, named without "_training"."""
    return sorted(
        path.stem.removesuffix("_training")
        for path in root.glob("*.jinja")
        if _TAG.search(path.read_text(encoding="utf-8"))
    )


def _tagged_path(root: Path, name: str) -> Path:
    training = root / f"{name}_training.jinja"
    return training if training.is_file() else root / f"{name}.jinja"


@cache
def _templates(root: Path, name: str) -> tuple[Any, Any]:
    from minijinja_py import ChatTemplate

    tagged = _tagged_path(root, name).read_text(encoding="utf-8")
    tokens = TOKENS.get(name, {})
    return ChatTemplate.from_string(tagged, tokens), ChatTemplate.from_string(
        _TAG.sub("", tagged), tokens
    )


def compare(
    root: Path, name: str, conversation: str, mask_options: dict[str, Any] | None = None
) -> bool | None:
    """Whether the inferred mask equals the tags' (None: the template refuses the pair)."""
    from minijinja_py.chat.spans.conventions import adjust_spans
    from minijinja_py.errors import TemplateError

    truth_template, plain_template = _templates(root, name)
    conv = dict(_conversation(conversation))
    messages = conv.pop("messages")
    conv.pop("add_generation_prompt", None)
    try:
        text, truth = truth_template.render_with_spans(messages, **conv)
        inferred = plain_template.render_with_provenance(messages, **conv)
    except (TemplateError, TypeError, ValueError):
        return None
    if inferred.text != text:
        raise AssertionError(f"{name}: the tagged copy renders a different text")
    # (the final EOS convention reads the eos_token the template was made with, TOKENS')
    spans = adjust_spans(inferred, **(mask_options or {}))
    return mask_spans(truth) == mask_spans(spans)


def agreement(
    root: Path, name: str, mask_options: dict[str, Any] | None = None
) -> tuple[int, int, list[str]]:
    """(conversations that agree, conversations rendered, those that disagree)."""
    agree = total = 0
    differ = []
    for conversation in conversation_names():
        found = compare(root, name, conversation, mask_options)
        if found is None:
            continue
        total += 1
        agree += found
        if not found:
            differ.append(conversation)
    return agree, total, differ


def main() -> None:
    root = folder()
    if root is None:
        sys.exit("set MINIJINJA_TRAINING_TEMPLATES to TRL's trl/chat_templates folder")
    options = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    rows = [(name, *agreement(root, name, options.get(name))) for name in pair_names(root)]
    print("| training template | agreeing conversations / rendered | disagreeing |")
    print("|---|---:|---|")
    for name, agree, total, differ in rows:
        print(f"| {name} | {agree}/{total} | {', '.join(c[:2] for c in differ)} |")
    print(json.dumps({"agree": sum(r[1] for r in rows), "rendered": sum(r[2] for r in rows)}))


if __name__ == "__main__":
    main()
