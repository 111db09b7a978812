"""Golden cases: one small feature per file, with Jinja2 3.1.6's output (format: golden/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .reference import classify_exception, ours_environment

GOLDEN = Path(__file__).resolve().parent / "golden"
FILES = sorted(GOLDEN.glob("*.txt"))

# Jinja2 error classes that ours has under the same name; other Jinja2 failures (bare Python
# exceptions such as TypeError) must be some TemplateError subclass of ours.
SAME_CLASS = {"UndefinedError", "SecurityError", "TemplateSyntaxError", "TemplateRuntimeError"}


def parse(path: Path) -> dict:
    """Split a golden file into its header fields, template and expected outcome."""
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition("\n---\n")
    template, sep, expected = rest.partition("\n===\n")
    assert sep, f"{path.name}: no '===' separator"
    assert expected.endswith("\n"), f"{path.name}: missing final newline"
    fields = dict(line.split(": ", 1) for line in head.splitlines() if line.strip())
    return {
        "config": fields["config"],
        "options": json.loads(fields.get("options", "{}")),
        "context": json.loads(fields.get("context", "{}")),
        "template": template,
        "expected": expected[:-1],
    }


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_golden(path):
    case = parse(path)
    env = ours_environment(case["config"], **case["options"])
    expected = case["expected"]
    try:
        got = env.from_string(case["template"]).render(case["context"])
    except Exception as exc:  # noqa: BLE001 - classified below
        kind, value = classify_exception(exc, ours=True)
        assert kind != "crash", f"bare Python exception from ours: {value}"
        assert expected.startswith("!"), (
            f"ours failed ({type(exc).__name__}: {exc}); Jinja2 renders"
        )
        jinja_class, _, message = expected[1:].partition(": ")
        if jinja_class == "TemplateError":  # raise_exception: same message
            assert (kind, value) == ("raise_exception", message)
        elif jinja_class in SAME_CLASS:
            assert (
                type(exc).__name__ == jinja_class
                or kind == "error"
                and isinstance(exc, _ours_class(jinja_class))
            ), f"Jinja2 raises {jinja_class}, ours {type(exc).__name__}"
        else:
            assert kind == "error"
        return
    assert got == expected


def _ours_class(name: str):
    import minijinja_py

    return getattr(minijinja_py, name)
