"""`{% if m['role'] == 'system' %}…{% elif m['role'] == 'user' or m['role'] == 'tool' %}…{% else
%}…{% endif %}`: the chain of tests most chat templates run once per message, answered by one
lookup.

Each test of the chain reads the same key of the same variable and compares it with a string
constant (or with several, joined by `or`). When that key holds a short plain string, as a
message's role does, every test of the chain compares that same string, so the branch they
choose is the first whose constants name it: `IfSwitch` reads the key once and finds the branch
in a dict. It charges exactly the steps the chain would (each test passed over pays for the
next, the branch taken for its body) and, for any other value (a missing key, a mapping other
than a dict, a long or non-string value), runs the chain itself, whose evaluators say what Jinja
does with it.
"""

from __future__ import annotations

from typing import Any

from ..sandbox.budget import CHARS_PER_STEP as SHORT
from ..sandbox.budget import PLAIN_TEXT
from .evaluator import Statement
from .expressions import NameConstItem, NameKeyOrAttr
from .frames import Frame
from .operators import CompareConst, Or
from .statements import If, IfCompareConst


class IfSwitch(Statement):
    __slots__ = ("chain", "name", "key", "branches", "missed", "cost")
    chain: If
    name: str
    key: str
    branches: dict[str, tuple[int, Statement | None]]
    missed: tuple[int, Statement | None]
    cost: int

    def __init__(self, tests: list[tuple[If, tuple[str, ...]]], name: str, key: str) -> None:
        self.chain = tests[0][0]
        self.name = name
        self.key = key
        self.cost = self.chain.cost  # the first test, paid by the body that holds the chain
        # Steps to reach each test: what the tests before it charge for their `otherwise`.
        branches: dict[str, tuple[int, Statement | None]] = {}
        passed = 0
        for test, constants in tests:
            for constant in constants:
                # (a constant tested twice: the first test that names it takes the branch)
                branches.setdefault(constant, (passed + test.body_cost, test.body))
            passed += test.otherwise_cost
        self.branches = branches
        self.missed = (passed, tests[-1][0].otherwise)

    def run(self, frame: Frame, out: list[Any]) -> None:
        name = self.name
        scope: Frame | None = frame
        while scope is not None:
            variables = scope.vars
            if name in variables:
                container = variables[name]
                if type(container) is dict:
                    value: Any = container.get(self.key)
                    kind = type(value)
                    if (kind is str or kind in PLAIN_TEXT) and len(value) <= SHORT:
                        steps, body = self.branches.get(value, self.missed)
                        frame.state.steps += steps
                        if body is not None:
                            body.run(frame, out)
                        return
                break
            scope = scope.parent
        self.chain.run(frame, out)


def switch_or_chain(top: If) -> Statement:
    """An IfSwitch for the chain that starts at `top` when two or more of its tests in a row
    read the same key and compare it with strings, else `top`."""
    tested = _tested(top)
    if tested is None:
        return top
    subject = tested[0]
    tests = [(top, tested[1])]
    node = top.otherwise
    while True:
        if type(node) is IfSwitch:
            node = node.chain  # (a shorter chain already made a switch: its tests follow)
        if not isinstance(node, If):
            break
        tested = _tested(node)
        if tested is None or tested[0] != subject:
            break
        tests.append((node, tested[1]))
        node = node.otherwise
    if len(tests) < 2:
        return top
    return IfSwitch(tests, *subject)


def _tested(test: If) -> tuple[tuple[str, str], tuple[str, ...]] | None:
    """((variable, key), constants) of an `if` whose test is `variable['key'] == 'text'` or
    `variable.key == 'text'` (which read a dict's key alike), or several of them on the same
    key joined by `or`; else None."""
    if type(test) is IfCompareConst:
        compares: list[Any] = [test.test]
    elif type(test) is If and type(test.test) is Or:
        compares = []
        pending: list[Any] = [test.test]
        while pending:
            node = pending.pop()
            if type(node) is Or:
                pending.append(node.right)  # (popped after the left side: the order kept)
                pending.append(node.left)
            else:
                compares.append(node)
    else:
        return None
    subject = None
    constants = []
    for compare in compares:
        if type(compare) is not CompareConst or not compare.equal or type(compare.value) is not str:
            return None
        first = compare.first
        if type(first) is NameConstItem and type(first.key) is str:
            read = (first.name, first.key)
        elif type(first) is NameKeyOrAttr:
            read = (first.name, first.attr)
        else:
            return None
        if subject is None:
            subject = read
        elif read != subject:
            return None
        constants.append(compare.value)
    if subject is None:
        return None
    return subject, tuple(constants)
