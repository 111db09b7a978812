"""A structure a builtin's cost has just measured is printed by the builtin without a second
measure (sandbox/measure.py, hand_over and handed_over), and only then."""

from __future__ import annotations

import minijinja_py as mj
from minijinja_py import Limits
from minijinja_py import environment as environment_module
from minijinja_py.errors import TemplateError
from minijinja_py.sandbox import budget as budget_module
from minijinja_py.sandbox.budget import Budget
from minijinja_py.sandbox.measure import check_printable, hand_over, handed_over

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"a": {"type": "int"}}}}]


def _outcome(template, context):
    """(text or error, steps, bytes) of one render, read from its budget as it ends."""
    seen: list[Budget] = []
    leave = environment_module.leave_render

    def leave_render(token):
        seen.append(budget_module.current_budget())
        leave(token)

    environment_module.leave_render = leave_render
    try:
        try:
            text = template.render(**context)
        except TemplateError as error:
            text = f"{type(error).__name__}: {error}"
    finally:
        environment_module.leave_render = leave
    return text, seen[0].steps, seen[0].memory


def test_a_measure_is_handed_over_once_and_only_without_a_step_between():
    value = [{"a": "b"}] * 3
    budget = Budget(Limits())
    token = budget_module.enter_render(budget)
    try:
        check_printable(value)
        hand_over(value)
        assert handed_over([{"a": "b"}] * 3) is False  # (an equal value is not the one measured)
        hand_over(value)
        assert handed_over(value) is True
        assert handed_over(value) is False  # answered once
        hand_over(value)
        budget.step()
        assert handed_over(value) is False  # a step since: the template could have changed it
    finally:
        budget_module.leave_render(token)


def test_string_filter_charges_its_measure_once():
    # `tools|string` pays the measure of the tools once: as much as `tools|length` and the
    # measure of the tools.
    env = mj.chat_environment()
    printed = _outcome(env.from_string("{{ tools | string }}"), {"tools": TOOLS})
    measured = _outcome(env.from_string("{{ tools | length }}"), {"tools": TOOLS})
    assert printed[0] == str(TOOLS)
    once = Budget(Limits())
    token = budget_module.enter_render(once)
    try:
        check_printable(TOOLS)
    finally:
        budget_module.leave_render(token)
    assert printed[-1] == once.memory  # the text's bytes, counted once
    assert printed[-2] == measured[-2] + once.steps
