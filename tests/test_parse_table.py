"""The stored LALR table is equivalent to the one Lark builds from grammar/jinja.lark today.

Lark numbers its states in an order that varies between runs, so the tables are compared by
what they do: the same rules, as many states, and the same trees for the same templates.
"""

import json
from pathlib import Path

from minijinja_py.syntax.lexer import Lexer, LexOptions
from minijinja_py.syntax.parser import _Machine, _machinery
from minijinja_py.syntax.table import TABLE_PATH, _read, build_table, grammar_path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SAMPLES = [
    "{% for a, b in x if a recursive %}{{ loop(a) }}{% else %}{{ -b ** 2|abs }}{% endfor %}",
    "{% macro m(a, b=1) %}{{ caller(a) }}{% endmacro %}{% call(x) m(2) %}{{ x[1:] }}{% endcall %}",
    "{% set ns.x | trim %} {{ a if b else c if d }} {% endset %}{{ x is not in [1, (2,)] }}",
    "{% filter upper %}{% with a = {'k': f(*x, **y)} %}{{ a.k.0 }}{% endwith %}{% endfilter %}",
    "{% if a %}{% elif not b and c or d %}{% generation %}{{ 'x' ~ 1 }}{% endgeneration %}{% endif %}",
]


def test_stored_table_belongs_to_this_grammar():
    grammar = _read(grammar_path())
    stored = json.loads(_read(TABLE_PATH))
    assert stored["grammar"] == grammar, (
        "grammar/jinja.lark changed: run `python -m minijinja_py.syntax.table` to rewrite the table"
    )


def test_stored_table_parses_as_a_fresh_one():
    grammar = _read(grammar_path())
    stored = json.loads(_read(TABLE_PATH))
    fresh = json.loads(json.dumps(build_table(grammar)))
    assert stored["rules"] == fresh["rules"]
    assert len(stored["states"]) == len(fresh["states"])
    _, scanner = _machinery()
    sources = SAMPLES + [p.read_text(encoding="utf-8") for p in sorted(EXAMPLES.glob("*.jinja"))]
    for source in sources:
        normalised, tokens = Lexer(scanner, LexOptions()).tokenize(source)
        from_stored = _Machine(stored).run(tokens, len(normalised))
        from_fresh = _Machine(fresh).run(tokens, len(normalised))
        assert from_stored == from_fresh


def test_every_tag_of_the_grammar_is_known_to_the_lexer():
    stored = json.loads(_read(TABLE_PATH))
    assert stored["tags"] == [
        "if", "elif", "else", "endif", "for", "endfor", "set", "endset",
        "macro", "endmacro", "call", "endcall", "filter", "endfilter",
        "with", "endwith", "generation", "endgeneration", "break", "continue",
        "block", "endblock",
    ]  # fmt: skip
