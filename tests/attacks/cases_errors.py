"""Error objects: whatever a template raises or is made to quote, the error is bounded text.

A message that cannot be printed (an int past Python's digit limit, an object whose ``__str__``
raises), a huge one (a ten-million-character name, a caller object printing 10 MB) or one that
would be printed inside a batch row must end as a ``TemplateError`` whose message is a ``str`` of
at most ``MAX_MESSAGE_TOTAL`` characters, and one hostile row never loses the others.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from .model import Attack, Err, Make, Ok, T

ERR = "error-objects"
CUT = "... (cut at 2000 characters)"


def _fn(name: str) -> str:
    return f"{__name__}:{name}"


# Copies of a caller object compare equal (the harness compares the caller's data after).
_EQUAL = "'__eq__': lambda s, o: type(s) is type(o), '__hash__': lambda s: 0"


def _raised(value: str) -> str:
    return "{{ raise_exception(" + value + ") }}"


ERRORS = [
    T(ERR, "raise-huge-int", _raised("10 ** 5000"), Err("TemplateError", "<int of 5001 digits>")),
    T(
        ERR,
        "raise-huge-negative-int",
        _raised("-(7 ** 9000)"),
        Err("TemplateError", "<negative int of 7606 digits>"),
    ),
    T(
        ERR,
        "raise-int-in-nested-dict",
        _raised("{'k': [none, 2 ** 20000]}"),
        Err("TemplateError", "{'k': [None, <int of 6021 digits>]}"),
    ),
    T(
        ERR,
        "raise-five-million-characters",
        "{% set s = 'ab' * 2500000 %}" + _raised("s"),
        Err("TemplateError", "ab" * 1000 + "... (5000000 characters in all)"),
    ),
    T(
        ERR,
        "raise-long-list",
        _raised("range(100000)|list"),
        Err("TemplateError", str(list(range(100000)))[:2000] + CUT),
    ),
    T(
        ERR,
        "raise-safe-string",
        "{% set s = ('<b>' * 1000000)|safe %}" + _raised("[s]"),
        Err("TemplateError", "[Markup('" + "<b>" * 663 + "<b" + CUT),
    ),
    T(
        ERR,
        "raise-caller-object-str-raises",
        _raised("obj"),
        Err("TemplateError", "<unprintable Bad object>"),
        {"obj": Make(f"type('Bad', (), {{'__str__': lambda self: 1 / 0, {_EQUAL}}})()")},
    ),
    T(
        ERR,
        "raise-caller-object-str-huge",
        _raised("obj"),
        Err("TemplateError", "h" * 2000 + "... (10000000 characters in all)"),
        {"obj": Make(f"type('Huge', (), {{'__str__': lambda self: 'h' * 10**7, {_EQUAL}}})()")},
    ),
    T(  # refused as caller data before it is raised with
        ERR,
        "raise-caller-self-referencing-list",
        _raised("obj"),
        Err("LimitError", "a value nested deeper than max_recursion (100)"),
        {"obj": Make("(lambda l: (l.append(l), l)[1])([1])")},
    ),
    T(
        ERR,
        "undefined-key-ten-million-characters",
        "{{ d[k].attribute }}",
        Err("UndefinedError", "'dict object' has no attribute '" + "n" * 999 + "... (cut at 1000 characters)"),
        {"d": {}, "k": Make("'n' * 10**7")},
    ),
    T(
        ERR,
        "undefined-key-built-in-template",
        "{% set k = 'm' * 9000000 %}{{ ({})[k] + 1 }}",
        Err("UndefinedError", "'dict object' has no attribute '" + "m" * 999 + "... (cut at 1000 characters)"),
    ),
    T(
        ERR,
        "undefined-huge-int-key",
        "{{ ({})[10 ** 6000] - 1 }}",
        Err("UndefinedError", "dict object has no element <int of 6001 digits>"),
    ),
    T(
        ERR,
        "undefined-shared-tuple-key",
        "{{ ({})[k] * 2 }}",
        Err("UndefinedError", "dict object has no element ('" + "t" * 998 + "... (cut at 1000 characters)"),
        {"k": Make("('t' * 10**6,) * 1000")},
    ),
    Attack(ERR, "batch-rows-raise-list-int-huge-int", call=_fn("batch_raising_rows"),
           expect=Ok("exit 0, 5 lines: ok | [1, 2] | 1 | <int of 5001 digits> | ok")),
    Attack(ERR, "render-row-returns-records", call=_fn("render_row_records"),
           expect=Ok("[1, 2] | 1 | <int of 5001 digits> | " + "q" * 2000
                     + "... (1000000 characters in all)")),
    Attack(ERR, "cli-render-huge-int-no-traceback", call=_fn("cli_render_huge_int"),
           expect=Ok("exit 1: error: <int of 5001 digits> (4 lines)")),
    Attack(ERR, "continue-final-message-huge-render", call=_fn("continue_final_message_huge"),
           expect=Ok("ValueError of 2359 characters, ending 'rrrrr... (9000000 characters in all)'")),
]

_RAISING = (
    "{% set c = messages[0].content %}"
    "{% if c == 'big' %}{{ raise_exception(10 ** 5000) }}"
    "{% elif c is string %}{{ c }}{% else %}{{ raise_exception(c) }}{% endif %}"
)


def batch_raising_rows() -> str:
    from minijinja_py import cli

    contents = ["ok", [1, 2], 1, "big", "ok"]
    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "t.jinja"
        template.write_text(_RAISING, encoding="utf-8")
        source, target = Path(tmp) / "in.jsonl", Path(tmp) / "out.jsonl"
        source.write_text(
            "".join(json.dumps([{"role": "user", "content": c}]) + "\n" for c in contents),
            encoding="utf-8",
        )
        code = cli.main(["batch", "--template", str(template), str(source), str(target), "--quiet"])
        lines = target.read_text(encoding="utf-8").splitlines() if target.exists() else []
    shown = []
    for line in lines:
        record = json.loads(line)
        shown.append(record["text"] if record["error"] is None else record["error"]["message"])
    return f"exit {code}, {len(lines)} lines: " + " | ".join(shown)


def render_row_records() -> str:
    from minijinja_py import ChatTemplate
    from minijinja_py.pipelines import RowRenderer

    renderer = RowRenderer(ChatTemplate.from_string("{{ raise_exception(messages[0].content) }}"))
    records = [
        renderer.render_row({"messages": [{"role": "user", "content": c}]})
        for c in ([1, 2], 1, 10**5000, "q" * 10**6)
    ]
    return " | ".join(r["error"]["message"] for r in records)


def cli_render_huge_int() -> str:
    import contextlib
    import io

    from minijinja_py import cli

    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "t.jinja"
        template.write_text("{{ raise_exception(10 ** 5000) }}", encoding="utf-8")
        messages = Path(tmp) / "m.json"
        messages.write_text('[{"role": "user", "content": "x"}]', encoding="utf-8")
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = cli.main(["render", "--template", str(template), "--messages", str(messages)])
    lines = err.getvalue().splitlines()
    return f"exit {code}: {lines[0]} ({len(lines)} lines)"


def continue_final_message_huge() -> str:
    from minijinja_py import ChatTemplate

    chat = ChatTemplate.from_string("{{ 'r' * 9000000 }}{{ messages[-1].content[:0] }}")
    try:
        chat.render([{"role": "assistant", "content": "Hi"}], continue_final_message=True)
    except ValueError as error:
        text = str(error)
        return f"{type(error).__name__} of {len(text)} characters, ending {text[-36:]!r}"
    return "rendered"
