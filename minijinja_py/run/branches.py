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
from .deferred import DeferredBody
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
        for _, body in (*branches.values(), self.missed):
            if type(body) is DeferredBody:
                body.held_by(self, None)

    def take_compiled(self, deferred: Statement, body: Statement, _: None) -> None:
        """`deferred`, a branch of this chain, has been compiled into `body`: its cost is now
        charged with the steps that reach it (see `If.take_compiled`)."""
        for constant, (steps, branch) in list(self.branches.items()):
            if branch is deferred:
                self.branches[constant] = (steps + body.cost, body)
        steps, branch = self.missed
        if branch is deferred:
            self.missed = (steps + body.cost, body)

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
                        # (not get(value, self.missed): the compiled build would box it)
                        found = self.branches.get(value)
                        steps, body = self.missed if found is None else found
                        frame.state.steps += steps
                        if body is not None:
                            body.run(frame, out)
                        return
                break
            scope = scope.parent
        self.chain.run(frame, out)


def switch_runs(top: If) -> Statement:
    """The chain of tests that starts at `top` (each next test the `otherwise` of the one
    before), every run of two or more tests in a row reading the same key and comparing it with
    strings made an IfSwitch; `top`, or the switch that stands for it.

    The chain is walked once: the runs are found in one pass and made from the last to the
    first, each put in the place of its first test (a switch costs what that test costs, so the
    test before it is charged the same for reaching it)."""
    chain: list[If] = []
    node: Any = top
    while isinstance(node, If):
        chain.append(node)
        node = node.otherwise
    tested = [_tested(test) for test in chain]
    subjects = [found[0] if found is not None else None for found in tested]
    result: Statement = top
    end = len(chain)
    while end > 0:
        # (the run that ends at `end`: the tests before it that read the same key)
        subject = subjects[end - 1]
        start = end - 1
        while subject is not None and start > 0 and subjects[start - 1] == subject:
            start -= 1
        if subject is not None and end - start >= 2:
            run = [(chain[i], found[1]) for i in range(start, end) if (found := tested[i])]
            switch = IfSwitch(run, *subject)
            if start > 0:
                chain[start - 1].otherwise = switch
            else:
                result = switch
        end = start
    return result


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
