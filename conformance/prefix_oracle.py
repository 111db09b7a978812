"""A prefix oracle for inferred assistant spans (issue 41).

What the model writes begins where the generation prompt ends.  So wherever
``render(messages[:-1], add_generation_prompt=True)`` is a prefix of ``render(messages)``, the
last message being the assistant's, the inferred span of that last turn starts where the prefix
ends, and covers every non-whitespace character traced to the message.  The family's header
option is left out of the comparison (``mask_header="exclude"``: gpt-oss, DeepSeek and Laguna
take their header, Qwen 2.5 its newline, by convention, not by this rule).

``measure()`` runs the oracle over the corpus templates without ``{% generation %}`` blocks and
the corpus conversations cut after their last assistant message; ``make_oracle_conversation``
draws conversations for the Hypothesis property of test_prefix_oracle.py.  Run ``python -m
conformance.prefix_oracle`` for the templates where the start differs.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import cache
from typing import Any

from .corpus import _conversation, _meta, conversation_names, template_names, template_source

# A verdict: "cover" (a non-whitespace character of the message is outside every span),
# "start" (the last turn's span does not start where the prefix ends), "ok", or None (the template
# refuses the conversation, the prefix is not a prefix, or the turn wrote only whitespace).
Verdict = str | None


@cache
def chat_template(name: str) -> Any:
    from minijinja_py import ChatTemplate

    from .parity import PINNED

    meta = _meta().get(name, {})
    tokens = {k: meta[k] for k in ("bos_token", "eos_token") if meta.get(k)}
    # (the clock pinned: a template that writes the time to the second, hunyuan-a13b, would
    # otherwise write a prompt that is not a prefix of the conversation rendered just after it
    # whenever the two renders fall on either side of a second)
    return ChatTemplate.from_string(template_source(name), tokens, now=PINNED)


@cache
def oracle_names() -> tuple[str, ...]:
    """The corpus templates whose spans are inferred (not given by generation blocks)."""
    from minijinja_py.chat.spans.blocks import has_generation_blocks

    return tuple(name for name in template_names() if not has_generation_blocks(template_source(name)))


def verdict(name: str, messages: list[dict[str, Any]], options: dict[str, Any]) -> Verdict:
    """The oracle on one conversation whose last message is the assistant's."""
    from minijinja_py.chat.spans.conventions import adjust_spans
    from minijinja_py.errors import TemplateError

    chat = chat_template(name)
    try:
        prefix = chat.render(messages[:-1], add_generation_prompt=True, **options)
        full = chat.render_with_provenance(messages, **options)
    except (TemplateError, TypeError, ValueError):
        return None
    text = full.text
    end = len(prefix)
    if not text.startswith(prefix) or not text[end:].strip():
        return None
    spans = adjust_spans(full, header="exclude")
    index = len(messages) - 1
    for segment in full.segments:
        path = segment.path
        if path[0] != "messages" or len(path) < 3 or path[1] != index or path[2] == "role":
            continue
        for at in range(segment.start, segment.end):
            if not text[at].isspace() and not any(s <= at < e for s, e in spans):
                return "cover"
    last = [span for span in spans if span[1] > end]
    if not last or last[0][0] != end:
        return "start"
    return "ok"


def corpus_cases() -> list[tuple[str, str, list[dict[str, Any]], dict[str, Any]]]:
    """(template, conversation, messages through the last assistant one, options)."""
    cases = []
    for name in oracle_names():
        extra = _meta().get(name, {}).get("extra") or {}
        for conversation in conversation_names():
            conv = dict(_conversation(conversation))
            messages = conv.pop("messages")
            conv.pop("add_generation_prompt", None)
            conv.update(extra)
            last = [i for i, m in enumerate(messages) if m.get("role") == "assistant"]
            if last:
                cases.append((name, conversation, messages[: last[-1] + 1], conv))
    return cases


def measure() -> tuple[Counter, dict[str, list[str]]]:
    """(verdicts counted over the corpus cases, the conversations that fail by template)."""
    counted: Counter = Counter()
    failing: dict[str, list[str]] = {}
    for name, conversation, messages, options in corpus_cases():
        found = verdict(name, messages, options)
        counted[found] += 1
        if found in ("start", "cover"):
            failing.setdefault(name, []).append(conversation[:2])
    return counted, failing


_WORDS = ["Hello.", "The answer is 4.", "  padded  ", "two\nlines", "naïve 日本 😀", "ok"]


def make_oracle_conversation(ch) -> list[dict[str, Any]]:
    """A conversation that ends with an assistant reply to a user message: an optional system
    message, earlier exchanges (a reply may call a tool, its result follows), then the user's
    question and the reply (text, now and then reasoning), drawn with a chooser as
    corpus.make_conversation draws."""
    from .strategies import _pick

    messages: list[dict[str, Any]] = []
    if ch.integer(0, 1):
        messages.append({"role": "system", "content": "You are terse."})
    for turn in range(ch.integer(0, 2)):
        messages.append({"role": "user", "content": _pick(ch, _WORDS)})
        reply: dict[str, Any] = {"role": "assistant", "content": _pick(ch, _WORDS)}
        if ch.integer(0, 2) == 0:
            call_id = f"call{turn}abcd"
            reply["tool_calls"] = [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
                }
            ]
            messages.append(reply)
            messages.append({"role": "tool", "tool_call_id": call_id, "content": "21 C"})
            messages.append({"role": "assistant", "content": _pick(ch, _WORDS)})
        else:
            messages.append(reply)
    messages.append({"role": "user", "content": _pick(ch, _WORDS)})
    last: dict[str, Any] = {"role": "assistant", "content": _pick(ch, _WORDS)}
    if ch.integer(0, 3) == 0:
        last["reasoning_content"] = "Let me think."
    messages.append(last)
    return messages


def main() -> None:
    counted, failing = measure()
    for name, conversations in sorted(failing.items()):
        print(f"{name}: {', '.join(conversations)}")
    print(json.dumps({str(key): value for key, value in counted.items()}))


if __name__ == "__main__":
    main()
