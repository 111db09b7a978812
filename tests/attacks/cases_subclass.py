"""Subclasses of str that skipped the charges.

A size check keyed on ``type(x) is str`` lets every subclass through for free: a ``|safe`` or
escaped string (Markup) and the traced strings of provenance mode.  Each attack repeats one
text operation on a megabyte of such a string 300,000 times: charged by its size (as a plain
string is), the render stops at the step budget within a fraction of a second; free, it runs
for minutes.  The traced attacks render with ``render_with_provenance`` in the worker (one
function per attack, made by this module's ``__getattr__``)."""

from __future__ import annotations

from typing import Any

from .model import Attack, Err, T

SC = "subclass-charges"
STEPS = Err("LimitError", "the render exceeded max_steps (200000)")


def loop(setup: str, expr: str) -> str:
    return (
        f"{setup}{{% for k in range(3) %}}{{% for i in range(100000) %}}"
        f"{{% set r = {expr} %}}{{% endfor %}}{{% endfor %}}done"
    )


# Three ways a template makes Markup of a megabyte: |safe, |e of text with nothing to escape,
# and |forceescape; the second operand of the comparisons differs at its last character.
MARKUP = {
    "safe": "{% set m = ('ab c' * 250000)|safe %}{% set m2 = ('ab c' * 249999 ~ 'ab d')|safe %}",
    "escaped": "{% set m = ('xy z' * 250000)|e %}{% set m2 = ('xy z' * 249999 ~ 'xy w')|e %}",
    "forced": "{% set m = ('kl m' * 250000)|forceescape %}{% set m2 = m %}",
}

MARKUP_OPS = {
    # methods (the receiver is charged when the method is looked up)
    "find": ("safe", "m.find('q')"),
    "rfind": ("escaped", "m.rfind('q')"),
    "startswith-tuple": ("safe", "m.startswith(('q', 'r'), 5)"),
    "endswith": ("forced", "m.endswith('q', 0, 999999)"),
    "upper": ("safe", "m.upper()"),
    "casefold": ("escaped", "m.casefold()"),
    "swapcase": ("forced", "m.swapcase()"),
    "strip-chars": ("safe", "m.strip('q')"),
    "rstrip": ("escaped", "m.rstrip()"),
    "replace": ("safe", "m.replace('a', 'b')"),
    "split": ("escaped", "m.split('z', 3)"),
    "rsplit": ("safe", "m.rsplit(None, 2)"),
    "splitlines": ("forced", "m.splitlines()"),
    "rpartition": ("safe", "m.rpartition('q')"),
    "isalnum": ("escaped", "m.isalnum()"),
    "isspace": ("forced", "m.isspace()"),
    "isprintable": ("safe", "m.isprintable()"),
    "istitle": ("escaped", "m.istitle()"),
    "expandtabs": ("safe", "m.expandtabs(4)"),
    "zfill": ("forced", "m.zfill(3)"),
    "center": ("safe", "m.center(7)"),
    "capitalize-method": ("escaped", "m.capitalize()"),
    "removeprefix": ("safe", "m.removeprefix('ab')"),
    # operators
    "in": ("escaped", "'q' in m"),
    "not-in": ("safe", "'q' not in m"),
    "equal": ("safe", "m == m2"),
    "less": ("escaped", "m < m2"),
    "equal-test": ("safe", "m is eq m2"),
    # filters
    "filter-upper": ("escaped", "m|upper"),
    "filter-lower": ("forced", "m|lower"),
    "filter-capitalize": ("safe", "m|capitalize"),
    "filter-trim": ("escaped", "m|trim('q')"),
    "filter-truncate": ("safe", "m|truncate(999999)"),
    "filter-indent": ("forced", "m|indent(2)"),
    "filter-replace": ("escaped", "m|replace('z', 'y')"),
    "filter-reverse": ("safe", "m|reverse"),
    "filter-center": ("escaped", "m|center(3)"),
    "filter-min": ("safe", "m|min"),
    "filter-list": ("forced", "m|list|length"),
    "filter-string": ("escaped", "m|string"),
    "filter-tojson": ("safe", "m|tojson"),
    "filter-urlencode": ("forced", "m|urlencode"),
    "filter-wordwrap": ("escaped", "m|wordwrap(79)"),
    "filter-sort": ("safe", "m|sort|length"),
    "test-upper": ("forced", "m is upper"),
}

ATTACKS_MARKUP = [
    T(SC, f"markup-{name}", loop(MARKUP[setup], expr), STEPS)
    for name, (setup, expr) in MARKUP_OPS.items()
]

# Traced strings: the caller's content, traced by render_with_provenance, then the operation.
TRACED_OPS = {
    "count": "c.count('q')",
    "find": "c.find('q')",
    "upper": "c.upper()",
    "strip": "c.strip('q')",
    "split": "c.split('q')",
    "replace": "c.replace('q', 'r')",
    "in": "'q' in c",
    "equal": "c == c2",
    "filter-lower": "c|lower",
    "filter-title": "c|title",
    "filter-wordcount": "c|wordcount",
    "filter-trim": "c|trim",
    "filter-unique": "c|unique|length",
    "test-lower": "c is lower",
    "markup-of-traced": "(c|safe).isdigit()",
}


def _traced(expr: str) -> Any:
    def run() -> str:
        import minijinja_py as mj

        template = mj.chat_environment().from_string(loop("", expr))
        context = {"c": "ab c" * 250000, "c2": "ab c" * 249999 + "ab d"}
        return template.render_with_provenance(**context).text

    return run


def __getattr__(name: str) -> Any:
    # ``traced__<op>``: the attack's function, made when the worker looks it up
    if name.startswith("traced__") and name[8:] in TRACED_OPS:
        return _traced(TRACED_OPS[name[8:]])
    raise AttributeError(name)


ATTACKS_TRACED = [
    Attack(SC, f"traced-{name}", call=f"{__name__}:traced__{name}", expect=STEPS)
    for name in TRACED_OPS
]

SUBCLASS = [*ATTACKS_MARKUP, *ATTACKS_TRACED]
