"""`{% if m['role'] == 'system' %}…{% elif m['role'] == 'user' %}…{% else %}…{% endif %}`: the
chain of tests most chat templates run once per message, answered by one lookup.

Each `IfCompareConst` of the chain reads the same key of the same variable and compares it with
a string constant. When that key holds a short plain string, as a message's role does, every
test of the chain compares that same string, so the branch they choose is the one its constant
names: `IfSwitch` reads the key once and finds the branch in a dict. It charges exactly the
steps the chain would (each test passed over pays for the next, the branch taken for its body)
and, for any other value (a missing key, a mapping other than a dict, a long or non-string
value), runs the chain itself, whose evaluators say what Jinja does with it.
"""

from __future__ import annotations

from typing import Any

from ..sandbox.budget import CHARS_PER_STEP as SHORT
from ..sandbox.budget import PLAIN_TEXT
from .evaluator import Statement
from .expressions import NameConstItem, NameKeyOrAttr
from .frames import Frame
from .statements import IfCompareConst


class IfSwitch(Statement):
    __slots__ = ("chain", "name", "key", "branches", "missed", "cost")
    chain: IfCompareConst
    name: str
    key: str
    branches: dict[str, tuple[int, Statement | None]]
    missed: tuple[int, Statement | None]
    cost: int

    def __init__(self, tests: list[IfCompareConst], name: str, key: str) -> None:
        self.chain = tests[0]
        self.name = name
        self.key = key
        self.cost = tests[0].cost  # the first test, paid by the body that holds the chain
        # Steps to reach each test: what the tests before it charge for their `otherwise`.
        branches: dict[str, tuple[int, Statement | None]] = {}
        passed = 0
        for test in tests:
            # (a constant tested twice: the first test that names it takes the branch)
            branches.setdefault(test.value, (passed + test.body_cost, test.body))
            passed += test.otherwise_cost
        self.branches = branches
        self.missed = (passed, tests[-1].otherwise)

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


def switch_or_chain(top: IfCompareConst) -> Statement:
    """An IfSwitch for the chain that starts at `top` when two or more of its tests read the
    same key and compare it with a string, else `top`."""
    subject = _subject(top)
    if subject is None:
        return top
    tests = [top]
    node = top.otherwise
    while True:
        if type(node) is IfSwitch:
            node = node.chain  # (a shorter chain already made a switch: its tests follow)
        if type(node) is not IfCompareConst or _subject(node) != subject:
            break
        tests.append(node)
        node = node.otherwise
    if len(tests) < 2:
        return top
    return IfSwitch(tests, *subject)


def _subject(test: IfCompareConst) -> tuple[str, str] | None:
    """(variable, key) of a test `variable['key'] == 'text'` or `variable.key == 'text'`
    (which read a dict's key alike), else None."""
    if not test.equal or type(test.value) is not str:
        return None
    first = test.first
    if type(first) is NameConstItem and type(first.key) is str:
        return first.name, first.key
    if type(first) is NameKeyOrAttr:
        return first.name, first.attr
    return None
