"""The built-in tests, called directly, against Jinja2 3.1.6 rendering ``{{ v is name(*a) }}``."""

from __future__ import annotations

import operator
from typing import Any

import jinja2
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from minijinja_py.builtins import filters as F
from minijinja_py.builtins import tests as T
from minijinja_py.errors import TemplateRuntimeError, UndefinedError
from minijinja_py.values.runtime import MISSING, Markup, Namespace, Undefined, wants_environment

JINJA = ImmutableSandboxedEnvironment()


class FakeEnv:
    """Only what tests need from an environment: the two registries."""

    def __init__(self) -> None:
        self.filters = F.FILTERS
        self.tests = T.TESTS

    def call_test(self, name: str, value: Any, args: Any = (), kwargs: Any = None) -> Any:
        func = self.tests.get(name)
        if func is None:
            raise TemplateRuntimeError(f"No test named {name!r}.")
        if wants_environment(func):
            return func(self, value, *args, **(kwargs or {}))
        return func(value, *args, **(kwargs or {}))


ENV = FakeEnv()


def reference(name: str, value: Any, args: tuple) -> Any:
    ctx: dict[str, Any] = {"a": args}
    if value is not MISSING:
        ctx["v"] = value
    if name.isidentifier():
        source = f"{{{{ v is {name}(*a) }}}}"
    else:  # operator-named tests are only reachable through select/reject
        source = "{{ ([v]|select(n, *a)|list|length) == 1 }}"
        ctx["n"] = name
    try:
        return JINJA.from_string(source).render(ctx)
    except jinja2.exceptions.UndefinedError as exc:
        return ("UndefinedError", str(exc))
    except Exception as exc:
        return (type(exc).__name__, str(exc))


def ours(name: str, value: Any, args: tuple) -> Any:
    if value is MISSING:
        value = Undefined(name="v")
    try:
        return str(ENV.call_test(name, value, args))
    except Exception as exc:
        return (type(exc).__name__, str(exc))


def case(name: str, value: Any, *args: Any) -> Any:
    return pytest.param(name, value, args, id=f"{name}-{value!r}-{args}")


class Obj:
    def __call__(self) -> None:
        pass


VALUES = [
    0,
    1,
    -3,
    2.0,
    2.5,
    True,
    False,
    None,
    "",
    "abc",
    "ABC",
    "aBc",
    "12",
    [],
    [1],
    (1, 2),
    {},
    {"a": 1},
    {1, 2},
    MISSING,
    Obj(),
    range(3),
]
ONE_ARGUMENT_TESTS = [
    "boolean",
    "callable",
    "defined",
    "undefined",
    "none",
    "false",
    "true",
    "integer",
    "float",
    "number",
    "string",
    "mapping",
    "sequence",
    "iterable",
    "lower",
    "upper",
    "escaped",
    "odd",
    "even",
    "filter",
    "test",
]

CASES = [case(name, value) for name in ONE_ARGUMENT_TESTS for value in VALUES]
CASES += [
    case("divisibleby", 9, 3),
    case("divisibleby", 10, 3),
    case("divisibleby", 9.0, 1.5),
    case("divisibleby", 9, 0),
    case("divisibleby", "x", 2),
    case("divisibleby", MISSING, 2),
    case("in", 1, [1, 2]),
    case("in", "b", "abc"),
    case("in", "a", {"a": 1}),
    case("in", 3, [1, 2]),
    case("in", 1, 5),
    case("in", 1, MISSING),
    case("sameas", None, None),
    case("sameas", 1, 1.0),
    case("sameas", False, False),
    case("filter", "upper"),
    case("filter", "random"),
    case("test", "divisibleby"),
    case("test", "nope"),
    case("odd", 2.0),
    case("odd", 3.0),
    case("odd", "x"),
]
for _name in ["eq", "==", "equalto", "ne", "!=", "lt", "<", "lessthan", "le", "<="]:
    CASES += [case(_name, 1, 2), case(_name, 2, 2), case(_name, "a", "b"), case(_name, [1], [1])]
for _name in ["gt", ">", "greaterthan", "ge", ">="]:
    CASES += [case(_name, 1, 2), case(_name, 2, 2), case(_name, 1.5, 1), case(_name, "b", "a")]
CASES += [case("lt", 1, "a"), case("gt", MISSING, 1), case("eq", MISSING, MISSING)]


@pytest.mark.parametrize(("name", "value", "args"), CASES)
def test_same_as_jinja2(name: str, value: Any, args: tuple) -> None:
    assert ours(name, value, args) == reference(name, value, args)


def test_registry_names_match_jinja2() -> None:
    from jinja2.tests import TESTS as JINJA_TESTS

    assert set(T.TESTS) == set(JINJA_TESTS)


def test_aliases_share_one_function() -> None:
    assert T.TESTS["=="] is T.TESTS["eq"] is T.TESTS["equalto"] is T.test_eq
    assert T.TESTS["!="] is T.TESTS["ne"] is T.test_ne
    assert T.TESTS["<"] is T.TESTS["lt"] is T.TESTS["lessthan"] is T.test_lt
    assert T.TESTS["<="] is T.TESTS["le"] is T.test_le
    assert T.TESTS[">"] is T.TESTS["gt"] is T.TESTS["greaterthan"] is T.test_gt
    assert T.TESTS[">="] is T.TESTS["ge"] is T.test_ge


def test_every_test_has_a_one_line_docstring_with_an_example() -> None:
    for name, func in T.TESTS.items():
        doc = (func.__doc__ or "").strip()
        assert doc and "\n" not in doc and "`" in doc, name  # an example in back-quotes


def test_only_filter_and_test_want_the_environment() -> None:
    wanting = {name for name, func in T.TESTS.items() if wants_environment(func)}
    assert wanting == {"filter", "test"}


def test_markup_and_our_values() -> None:
    assert T.test_escaped(Markup("<a>")) is True
    assert T.test_escaped("<a>") is False
    assert T.test_string(Markup("x")) is True
    assert T.test_defined(Undefined(name="x")) is False
    assert T.test_undefined(Undefined(name="x")) is True
    assert T.test_mapping(Namespace(a=1)) is False
    assert T.test_callable(Obj()) is True


def test_undefined_in_arithmetic_tests_raises() -> None:
    with pytest.raises(UndefinedError, match="^'v' is undefined$"):
        T.test_odd(Undefined(name="v"))


def test_comparison_tests_are_the_operators() -> None:
    for name, op in [("eq", operator.eq), ("lt", operator.lt), ("ge", operator.ge)]:
        assert T.TESTS[name](1, 2) is op(1, 2)
