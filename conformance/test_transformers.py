"""The chat layer against transformers' own renderer, on every corpus pair (optional).

Runs only where transformers is installed (it is not a test dependency):
``transformers.utils.chat_template_utils.render_jinja_template`` is the reference, called as
``apply_chat_template`` calls it.  Each pair is compared three ways: a plain render, a render with
``continue_final_message`` and a render with the assistant spans (``{% generation %}``).
Outcomes agree when the texts are identical or both sides fail (with the same message when the
template raised it, or as ValueError for transformers' own checks).
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from .corpus import context, corpus_missing, pairs, template_source

utils = pytest.importorskip("transformers.utils.chat_template_utils")

_PAIRS = pairs()


class _PinnedClock(datetime.datetime):
    """Both engines read the time through ``datetime.now``; a second that ticks between the
    reference's render and ours would make templates printing the time disagree."""

    @classmethod
    def now(cls, tz: Any = None) -> Any:
        return cls(2026, 1, 15, 12, 0, 0, tzinfo=tz)


@pytest.fixture(autouse=True)
def _pinned_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(utils, "datetime", _PinnedClock)  # transformers' module-level import
    monkeypatch.setattr(datetime, "datetime", _PinnedClock)  # ours imports it when called
_RENDER_OPTIONS = ("tools", "documents", "add_generation_prompt")


def _split(pair: Any) -> tuple[list, dict[str, Any], dict[str, Any]]:
    ctx = context(pair)
    messages = ctx.pop("messages")
    options = {key: ctx.pop(key) for key in _RENDER_OPTIONS if key in ctx}
    return messages, options, ctx


def _outcome(call: Any) -> tuple[str, Any]:
    try:
        return ("ok", call())
    except ValueError as error:
        return ("ValueError", str(error))
    except Exception as error:
        message = getattr(error, "message", None)
        return ("error", message if type(error).__name__ == "TemplateError" else None)


def _agree(expected: tuple[str, Any], got: tuple[str, Any]) -> bool:
    if expected[0] == "ok" or got[0] == "ok":
        return expected == got
    if expected[0] == "ValueError" or got[0] == "ValueError":
        return expected == got
    # Both failed in the template: the same message when raise_exception gave one.
    return expected[1] is None or expected[1] == got[1]


_INCOMPATIBLE = (
    "continue_final_message and add_generation_prompt are not compatible. Use"
    " continue_final_message when you want the model to continue the final message, and"
    " add_generation_prompt when you want to add a header that will prompt it to start a new"
    " assistant message instead."
)


def _reference(pair: Any, **extra: Any) -> tuple[str, Any]:
    messages, options, variables = _split(pair)

    def call() -> Any:
        # What apply_chat_template does before it calls render_jinja_template.
        if extra.get("continue_final_message") and options.get("add_generation_prompt"):
            raise ValueError(_INCOMPATIBLE)
        kept = [{k: v for k, v in message.items() if v is not None} for message in messages]
        rendered, indices = utils.render_jinja_template(
            conversations=[kept],
            chat_template=template_source(pair.template),
            **options,
            **variables,
            **extra,
        )
        if extra.get("return_assistant_tokens_mask"):
            return rendered[0], [tuple(span) for span in indices[0]]
        return rendered[0]

    return _outcome(call)


def _ours(pair: Any, spans: bool = False, **extra: Any) -> tuple[str, Any]:
    from minijinja_py import ChatTemplate

    messages, options, variables = _split(pair)
    chat = ChatTemplate.from_string(template_source(pair.template))

    def call() -> Any:
        if spans:
            return chat.render_with_spans(messages, **options, **variables, **extra)
        return chat.render(messages, **options, **variables, **extra)

    return _outcome(call)


@pytest.mark.parametrize("pair", _PAIRS or [None], ids=[p.id for p in _PAIRS] or ["corpus"])
def test_render_matches_transformers(pair):
    if corpus_missing():
        pytest.skip(corpus_missing())
    expected = _reference(pair)
    got = _ours(pair)
    assert _agree(expected, got), (expected, got)
    expected = _reference(pair, continue_final_message=True)
    got = _ours(pair, continue_final_message=True)
    assert _agree(expected, got), (expected, got)
    expected = _reference(pair, return_assistant_tokens_mask=True)
    got = _ours(pair, spans=True)
    assert _agree(expected, got), (expected, got)


def test_both_engines_read_the_pinned_clock():
    if corpus_missing():
        pytest.skip(corpus_missing())
    pair = next(
        p for p in _PAIRS if p.template == "hunyuan-a13b-vllm" and "tools" in p.conversation
    )
    for outcome in (_reference(pair), _ours(pair)):
        assert outcome[0] == "ok"
        assert "当前时间：2026-01-15 12:00:00" in outcome[1]
