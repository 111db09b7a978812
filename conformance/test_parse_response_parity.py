"""ChatTemplate.parse_response / get_response_parser equal transformers 5.23's on the cases of
its own response-parsing tests (conformance/response_cases.py): every response one-shot and
streamed (fixed and random chunkings, every event compared), prefixes, tools with typed
arguments, failing responses and refused templates by error class, and strings, token ids,
numpy arrays and batches through a model folder built offline. Needs the ``parity`` extra."""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("transformers", reason="the response parity tests need the 'parity' extra")
pytest.importorskip("tokenizers", reason="the response parity tests need the 'parity' extra")
np = pytest.importorskip("numpy", reason="the response parity tests need the 'parity' extra")

from minijinja_py.chat import ChatTemplate  # noqa: E402
from minijinja_py.chat.responses import ResponseParser, parse_response  # noqa: E402

from .response_cases import (  # noqa: E402
    BAD_TEMPLATES,
    CASES,
    COHERE,
    COHERE_OUT,
    FAILING,
    QWEN3,
    SET_ALARM_CALL,
    SET_ALARM_TOOLS,
    TEMPLATES,
    TOOLS,
    XML_STRING_ARGS,
)


def _outcome(call: Any) -> Any:
    try:
        return call()
    except Exception as error:  # noqa: BLE001 - both sides must fail alike
        return ("error", type(error).__name__)


def _streamed(
    parser_class: Any, template: Any, text: str, prefix: Any, tools: Any, cuts: list[int]
) -> Any:
    def run() -> Any:
        parser = parser_class(template, prefix=prefix, tools=tools)
        events = list(parser.initial_events)
        last = 0
        for cut in [*cuts, len(text)]:
            events += parser.feed(text[last:cut])
            last = cut
        message, final = parser.finalize()
        return message, events + final

    return _outcome(run)


def _cuttings(text: str, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    cuttings = [list(range(step, len(text), step)) for step in (1, 2, 3, 7, 31)]
    for _ in range(10):
        count = rng.randint(0, max(len(text) - 1, 0))
        cuttings.append(sorted(rng.sample(range(1, len(text)), count)) if len(text) > 1 else [])
    return cuttings


@pytest.mark.parametrize("case", range(len(CASES)))
def test_one_shot_and_streamed_equal_transformers(case):
    from transformers.utils.chat_parsing import ResponseParser as Theirs
    from transformers.utils.chat_parsing import parse_response as theirs

    name, text, prefix, tools = CASES[case]
    template, tool_list = TEMPLATES[name], TOOLS[tools]
    expected = _outcome(lambda: theirs(text, template, prefix=prefix, tools=tool_list))
    assert (
        _outcome(lambda: parse_response(text, template, prefix=prefix, tools=tool_list)) == expected
    )
    for cuts in _cuttings(text, case):
        assert _streamed(ResponseParser, template, text, prefix, tool_list, cuts) == _streamed(
            Theirs, template, text, prefix, tool_list, cuts
        ), cuts


@pytest.mark.parametrize(("name", "text"), FAILING)
def test_failing_responses_fail_alike(name, text):
    from transformers.utils.chat_parsing import parse_response as theirs

    expected = _outcome(lambda: theirs(text, TEMPLATES[name], prefix=""))
    assert expected[0] == "error"
    assert _outcome(lambda: parse_response(text, TEMPLATES[name], prefix="")) == expected


@pytest.mark.parametrize("template", BAD_TEMPLATES, ids=range(len(BAD_TEMPLATES)))
def test_refused_templates_are_refused_alike(template):
    from transformers.utils.chat_parsing import parse_response as theirs

    expected = _outcome(lambda: theirs("", template, prefix=""))
    assert expected == ("error", "ValueError")
    assert _outcome(lambda: parse_response("", template, prefix="")) == expected


_CONTROL = [
    "<|START_THINKING|>",
    "<|END_THINKING|>",
    "<|START_ACTION|>",
    "<|END_ACTION|>",
    "<|END_OF_TURN_TOKEN|>",
    "<|im_start|>",
]


@cache
def _folder(tmp: str) -> Path:
    from tokenizers import AddedToken, Tokenizer

    from .models import build_model_folder

    folder = build_model_folder(
        Path(tmp) / "model",
        "{{ messages[0].content }}",
        {"eos_token": "<|im_end|>"},
        {"response_template": QWEN3},
    )
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in _CONTROL])
    (folder / "tokenizer.json").write_text(tokenizer.to_str(), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    from transformers import AutoTokenizer

    folder = _folder(str(tmp_path_factory.mktemp("responses")))
    return ChatTemplate.from_pretrained(folder), AutoTokenizer.from_pretrained(str(folder))


def test_tokenizer_level_calls_equal_transformers(pair):
    chat, tokenizer = pair
    assert chat.response_template == tokenizer.response_template
    out_b = COHERE_OUT.replace("simple_tool", "other_tool")
    ids = tokenizer(COHERE_OUT).input_ids
    ids_b = tokenizer(out_b).input_ids
    prefix = "<|im_start|>assistant\n<think>\n"
    prefix_ids = tokenizer(prefix).input_ids
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((COHERE_OUT,), {"schema": COHERE, "prefix": ""}),
        ((ids,), {"schema": COHERE, "prefix": ""}),
        ((np.array(ids),), {"schema": COHERE, "prefix": ""}),
        ((np.array([ids]),), {"schema": COHERE, "prefix": ""}),
        (([COHERE_OUT, out_b],), {"schema": COHERE, "prefix": ""}),
        (([ids, ids_b],), {"schema": COHERE, "prefix": []}),
        (([COHERE_OUT],), {"schema": COHERE, "prefix": ""}),
        (([],), {"schema": COHERE, "prefix": ""}),
        (("hi</think>",), {"prefix": prefix}),
        (("hi</think>",), {"prefix": prefix_ids}),
        ((["a</think>", "b</think>"],), {"prefix": prefix}),
        ((["a</think>", "b</think>"],), {"prefix": [prefix, prefix]}),
        ((["a</think>", "b</think>"],), {"prefix": [prefix]}),
        (("a</think>",), {}),
        ((SET_ALARM_CALL,), {"schema": XML_STRING_ARGS, "prefix": "", "tools": SET_ALARM_TOOLS}),
    ]
    for args, kwargs in calls:
        expected = _outcome(lambda: tokenizer.parse_response(*args, **kwargs))  # noqa: B023
        assert _outcome(lambda: chat.parse_response(*args, **kwargs)) == expected, (args, kwargs)  # noqa: B023


def test_get_response_parser_equals_transformers(pair):
    chat, tokenizer = pair
    prefix = "<|im_start|>assistant\n<think>\n"
    for given in (prefix, tokenizer(prefix).input_ids, None):
        ours = _outcome(lambda: chat.get_response_parser(prefix=given))  # noqa: B023
        theirs = _outcome(lambda: tokenizer.get_response_parser(prefix=given))  # noqa: B023
        if isinstance(theirs, tuple):
            assert ours == theirs
            continue
        assert ours.initial_events == theirs.initial_events
        assert ours.feed("body</think>") == theirs.feed("body</think>")
        assert ours.finalize() == theirs.finalize()
    stream = chat.get_response_parser(XML_STRING_ARGS, prefix="", tools=SET_ALARM_TOOLS)
    other = tokenizer.get_response_parser(XML_STRING_ARGS, prefix="", tools=SET_ALARM_TOOLS)
    assert stream.feed(SET_ALARM_CALL) == other.feed(SET_ALARM_CALL)
    assert stream.finalize() == other.finalize()
