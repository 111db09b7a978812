"""The LALR table of grammar/jinja.lark, as Lark computes it, stored as plain data.

Lark analyses the grammar and builds the LALR(1) table; that analysis takes about a second, so
the table is kept in `_parse_table.json` next to this module together with the text of the
grammar it came from.  When the grammar changes and the stored table no longer matches, the
table is rebuilt with Lark in memory (and `python -m minijinja_py.syntax.table` rewrites the file;
a test fails until it is).  The file is data only: loading it runs no code.

Each rule is stored with what the parse-tree builder must do with its children: drop a
filtered token (`d`), keep a value (`k`) or splice the list of an inlined rule (`s`).
"""

from __future__ import annotations

import json
import os
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
TABLE_PATH = os.path.join(_HERE, "_parse_table.json")


def grammar_path() -> str:
    """The grammar inside an installed wheel (`minijinja_py/syntax/grammar/`), else the one at
    the root of a source checkout (two folders up)."""
    packaged = os.path.join(_HERE, "grammar", "jinja.lark")
    if os.path.isfile(packaged):
        return packaged
    return os.path.join(os.path.dirname(os.path.dirname(_HERE)), "grammar", "jinja.lark")


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def build_table(grammar: str) -> dict[str, Any]:
    """Ask Lark for the LALR table of `grammar` and reduce it to plain data."""
    from lark import Lark
    from lark.lexer import Lexer as LarkLexer

    class NoLexer(LarkLexer):
        """The table is all we need from Lark; tokens come from our own lexer."""

        __future_interface__ = 2

        def __init__(self, lexer_conf: Any) -> None:
            pass

        def lex(self, lexer_state: Any, parser_state: Any) -> Any:  # pragma: no cover
            raise NotImplementedError

    lark = Lark(grammar, parser="lalr", lexer=NoLexer, maybe_placeholders=False)
    parse_table = lark.parser.parser.parser.parse_table
    rules = list(lark.rules)
    rule_index = {id(rule): i for i, rule in enumerate(rules)}
    encoded_rules = []
    for rule in rules:
        codes = []
        for symbol in rule.expansion:
            if symbol.is_term:
                codes.append("d" if symbol.filter_out or symbol.name.startswith("_") else "k")
            else:
                codes.append("s" if symbol.name.startswith("_") else "k")
        origin = str(rule.origin.name)
        encoded_rules.append(
            [
                origin,
                "".join(codes),
                origin.startswith("_"),
                bool(rule.options.expand1) and not rule.alias,
                str(rule.alias or origin),
            ]
        )
    states: list[dict[str, int]] = [{} for _ in range(len(parse_table.states))]
    for state, actions in parse_table.states.items():
        row = states[state]
        for symbol, (action, argument) in actions.items():
            if action.name == "Shift":
                row[str(symbol)] = argument
            else:
                row[str(symbol)] = -1 - rule_index[id(argument)]
    terminals = [[t.name, t.pattern.value, t.pattern.type == "str"] for t in lark.terminals]
    tags = []
    for line in grammar.splitlines():
        if line.startswith("%declare"):
            tags.extend(w[4:].lower() for w in line.split()[1:] if w.startswith("TAG_"))
    return {
        "grammar": grammar,
        "start": parse_table.start_states["start"],
        "end": parse_table.end_states["start"],
        "terminals": terminals,
        "tags": tags,
        "rules": encoded_rules,
        "states": states,
    }


def load_table() -> dict[str, Any]:
    """The stored table when it matches the grammar, else a freshly built one."""
    grammar = _read(grammar_path())
    try:
        stored = json.loads(_read(TABLE_PATH))
    except (OSError, ValueError):
        stored = None
    if stored is not None and stored.get("grammar") == grammar:
        return stored
    return build_table(grammar)


def write_table() -> str:
    table = build_table(_read(grammar_path()))
    with open(TABLE_PATH, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(table, separators=(",", ":")) + "\n")
    return TABLE_PATH


if __name__ == "__main__":
    print(f"wrote {write_table()}")
