"""How near the engine is to the floor of any interpreter over a syntax tree in CPython: the
per-message cost of the statement most chat templates print once a message, against the same
statement run by the least a tree-walker can do, and by Jinja2's generated Python code.

    python -m benchmarks.floor            # a few seconds
    python -m benchmarks.floor --rounds 31

The statement is `{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content']
+ '<|im_end|>\\n' }}{% endfor %}` (`benchmarks.constructs`' "concat"). The floor walkers below
run it as objects calling each other's `eval`/`run`, with nothing an engine must add: no
sandbox, no step or size counting, no undefined values, no errors placed, no Markup, no scope
made per iteration; a variable is found by walking the scopes' dicts, as an interpreter whose
scopes are dicts must. `floor, +` adds the pieces one `+` at a time, as Jinja's semantics read;
`floor, join` reads the two fields and joins the text once, as the engine's TextChain does.
Whatever an interpreter of templates adds to these is its own cost; what separates the floor
from Jinja2 is the price of walking a tree instead of running generated code, which the
project does not do (docs/performance.md). Times as `benchmarks.constructs` takes them: a
render of 4 and of 64 messages by each engine in turn, medians of interleaved samples, the
per-message cost being the difference over the 60 messages added.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .constructs import CONSTRUCTS, measure, ours_and_jinja2

STATEMENT = CONSTRUCTS["concat"]


class _Scope:
    __slots__ = ("vars", "parent")

    def __init__(self, variables: dict[str, Any], parent: _Scope | None) -> None:
        self.vars = variables
        self.parent = parent


class _Const:
    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def eval(self, scope: _Scope) -> Any:
        return self.value


class _Name:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def eval(self, scope: _Scope | None) -> Any:
        name = self.name
        while scope is not None:
            if name in scope.vars:
                return scope.vars[name]
            scope = scope.parent
        return None


class _NameItem:
    """`m['role']`: the variable found and its key read in one node."""

    __slots__ = ("name", "key")

    def __init__(self, name: str, key: str) -> None:
        self.name = name
        self.key = key

    def eval(self, scope: _Scope | None) -> Any:
        name = self.name
        while scope is not None:
            if name in scope.vars:
                return scope.vars[name][self.key]
            scope = scope.parent
        return None


class _AddEach:
    __slots__ = ("first", "operands")

    def __init__(self, first: Any, operands: tuple[Any, ...]) -> None:
        self.first = first
        self.operands = operands

    def eval(self, scope: _Scope) -> Any:
        total = self.first.eval(scope)
        for operand in self.operands:
            total = total + operand.eval(scope)
        return total


class _JoinTwo:
    """`p0 + x1 + p1 + x2 + p2`, the constants kept as strings."""

    __slots__ = ("p0", "x1", "p1", "x2", "p2")

    def __init__(self, p0: str, x1: Any, p1: str, x2: Any, p2: str) -> None:
        self.p0, self.x1, self.p1, self.x2, self.p2 = p0, x1, p1, x2, p2

    def eval(self, scope: _Scope) -> Any:
        return "".join((self.p0, self.x1.eval(scope), self.p1, self.x2.eval(scope), self.p2))


class _Output:
    __slots__ = ("expr",)

    def __init__(self, expr: Any) -> None:
        self.expr = expr

    def run(self, scope: _Scope, out: list[str]) -> None:
        value = self.expr.eval(scope)
        out.append(value if type(value) is str else str(value))


class _For:
    __slots__ = ("iterable", "name", "body")

    def __init__(self, iterable: Any, name: str, body: Any) -> None:
        self.iterable = iterable
        self.name = name
        self.body = body

    def run(self, scope: _Scope, out: list[str]) -> None:
        variables: dict[str, Any] = {}
        inner = _Scope(variables, scope)
        name, body = self.name, self.body
        for item in self.iterable.eval(scope):
            variables[name] = item
            body.run(inner, out)


def _statement(joined: bool) -> _For:
    role, content = _NameItem("m", "role"), _NameItem("m", "content")
    if joined:
        printed: Any = _JoinTwo("<|im_start|>", role, "\n", content, "<|im_end|>\n")
    else:
        pieces = (role, _Const("\n"), content, _Const("<|im_end|>\n"))
        printed = _AddEach(_Const("<|im_start|>"), pieces)
    return _For(_Name("messages"), "m", _Output(printed))


class FloorWalker:
    """An engine for `constructs.measure` that runs STATEMENT, and nothing else, as above."""

    available = True

    def __init__(self, key: str, label: str, joined: bool) -> None:
        self.key = key
        self.label = label
        self.joined = joined

    def new_env(self) -> None:
        return None

    def compile(self, env: None, source: str) -> _For:
        if source != STATEMENT:
            raise ValueError("the floor walker runs only the concat statement")
        return _statement(self.joined)

    def render(self, template: _For, context: dict[str, Any]) -> str:
        out: list[str] = []
        template.run(_Scope(context, None), out)
        return "".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.floor")
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args(argv)
    pair = ours_and_jinja2()
    if pair is None:
        return 2
    floors = [FloorWalker("floor_add", "floor, +", False), FloorWalker("floor_join", "floor, join", True)]
    runners = [*pair, *floors]
    costs = measure(runners, {"concat": STATEMENT}, args.rounds)["concat"]
    jinja2 = costs["jinja2"][1]
    print(f"the concat statement, per message: CPU time, medians of {args.rounds} samples\n")
    print("| runs it | per message | / Jinja2 |\n|---|---:|---:|")
    for runner in runners:
        each = costs[runner.key][1]
        print(f"| {runner.label} | {each * 1e6:.2f} µs | {each / jinja2:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
