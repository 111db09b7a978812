"""`minijinja-py inspect`: a conversation with its assistant mask marked, and the reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from minijinja_py.cli import main
from minijinja_py.cli.inspection import mark_spans

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
TAGGED = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n"
    "{% if m.role == 'assistant' %}{% generation %}{{ m.content }}<|im_end|>{% endgeneration %}"
    "{% else %}{{ m.content }}<|im_end|>{% endif %}{{ '\\n' }}{% endfor %}"
)
MESSAGES = [
    {"role": "user", "content": "Hi <b>"},
    {"role": "assistant", "content": "Hello & welcome."},
]


def run(capsys, tmp_path: Path, template: str, *options: str) -> tuple[int, str, str]:
    source = tmp_path / "t.jinja"
    source.write_text(template, encoding="utf-8")
    messages = tmp_path / "m.json"
    messages.write_text(json.dumps(MESSAGES), encoding="utf-8")
    status = main(["inspect", "--template", str(source), "--messages", str(messages), *options])
    out, err = capsys.readouterr()
    return status, out, err


def test_inferred_spans_are_marked_with_the_reason(capsys, tmp_path):
    status, out, err = run(capsys, tmp_path, CHATML, "--color", "never")
    assert status == 0
    assert out == (
        "<|im_start|>user\nHi <b><|im_end|>\n<|im_start|>assistant\n"
        "\u27e6Hello & welcome.<|im_end|>\n\u27e7"
    )
    assert err == (
        "mask: inferred: from the end of '<|im_start|>assistant\\n' through '<|im_end|>' "
        "(1 span, 27 characters)\n"
    )


def test_generation_blocks_in_reverse_video(capsys, tmp_path):
    status, out, err = run(capsys, tmp_path, TAGGED, "--color", "always")
    assert (status, out, err) == (
        0,
        "<|im_start|>user\nHi <b><|im_end|>\n<|im_start|>assistant\n"
        "\x1b[7mHello & welcome.<|im_end|>\x1b[27m\n",
        "mask: generation: the template's {% generation %} blocks (1 span, 26 characters)\n",
    )


def test_html_escapes_the_text_and_marks_the_spans(capsys, tmp_path):
    status, out, _ = run(capsys, tmp_path, TAGGED, "--html")
    assert status == 0
    assert out.endswith(
        "<p>mask source: generation</p>\n<pre>&lt;|im_start|&gt;user\nHi &lt;b&gt;&lt;|im_end|&gt;\n"
        "&lt;|im_start|&gt;assistant\n<mark>Hello &amp; welcome.&lt;|im_end|&gt;</mark>\n</pre>\n"
    )


def test_a_mask_mode_the_template_cannot_give_is_an_error(capsys, tmp_path):
    status, out, err = run(capsys, tmp_path, CHATML, "--mask", "tagged")
    assert (status, out) == (1, "")
    assert err.startswith("error: mask='tagged': this template has no {% generation %} blocks")


@pytest.mark.parametrize(
    ("spans", "expected"),
    [([], "abcdef"), ([(1, 3)], "a[bc]def"), ([(4, 6), (0, 1)], "[a]bcd[ef]"), ([(2, 2)], "abcdef")],
)
def test_mark_spans(spans, expected):
    assert mark_spans("abcdef", spans, "[", "]") == expected
