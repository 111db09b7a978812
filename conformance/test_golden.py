"""Golden cases: one small feature per file, with Jinja2 3.1.6's output (format: golden/README.md)."""

from __future__ import annotations

import builtins
import json
from pathlib import Path

import pytest

from .reference import classify_exception, ours_environment, reference_environment

GOLDEN = Path(__file__).resolve().parent / "golden"
FILES = sorted(GOLDEN.glob("*.txt"))

# Jinja2's compile-time failures: ours must raise TemplateSyntaxError (message not compared:
# ours words parser errors its own way). Every other failure: the same message, and ours' class of
# the same name where it has one (UndefinedError, SecurityError, TemplateRuntimeError), else a
# TemplateRuntimeError. A header "compare: class" drops the message comparison for one file.
SYNTAX = {"TemplateSyntaxError", "TemplateAssertionError", "SyntaxError"}


def parse(path: Path) -> dict:
    """Split a golden file into its header fields, template and expected outcome."""
    text = path.read_bytes().decode("utf-8")  # bytes: keep \r in templates
    head, _, rest = text.partition("\n---\n")
    template, sep, expected = rest.partition("\n===\n")
    assert sep, f"{path.name}: no '===' separator"
    assert expected.endswith("\n"), f"{path.name}: missing final newline"
    fields = dict(line.split(": ", 1) for line in head.splitlines() if line.strip())
    return {
        "config": fields["config"],
        "options": json.loads(fields.get("options", "{}")),
        "context": json.loads(fields.get("context", "{}")),
        "compare": fields.get("compare", "message"),
        "template": template,
        "expected": expected[:-1],
    }


def _reference_message(case: dict) -> str:
    env = reference_environment(case["config"], **case["options"])
    try:
        env.from_string(case["template"]).render(case["context"])
    except Exception as exc:  # noqa: BLE001 - the message is the point
        return str(exc)
    raise AssertionError("Jinja2 renders this golden case without failing")


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_golden(path):
    import minijinja_py

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
        if jinja_class == "TemplateError":  # raise_exception(message)
            assert (kind, value) == ("raise_exception", message)
        elif jinja_class in SYNTAX:
            assert isinstance(exc, minijinja_py.TemplateSyntaxError), type(exc).__name__
        else:
            if isinstance(getattr(builtins, jinja_class, None), type):
                # Python's own wording, which changes between versions: the file records it
                # for the Python it was made with, Jinja2 on this one says it afresh.
                message = _reference_message(case)
            wanted = getattr(minijinja_py, jinja_class, minijinja_py.TemplateRuntimeError)
            if case["compare"] == "class":
                assert isinstance(exc, minijinja_py.TemplateError) and kind == "error"
            else:
                assert (type(exc).__name__, exc.message) == (wanted.__name__, message)
        return
    assert got == expected
