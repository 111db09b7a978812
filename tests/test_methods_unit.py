"""The allow-listed Python methods, called directly, against Jinja2 3.1.6's sandbox.

Each differential case renders ``{{ [v.name(*a, **k)] }}`` with Jinja2's
ImmutableSandboxedEnvironment (the list shows whether a result is ``Markup``) and calls
``get_method(v, name, env)(*a, **k)`` with a fake environment.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import jinja2
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment, modifies_known_mutable
from markupsafe import Markup as JinjaMarkup

from conformance.reference import normalize
from minijinja_py.builtins import methods as M
from minijinja_py.errors import LimitError, SecurityError, UndefinedError
from minijinja_py.sandbox.budget import MAX_WIDTH
from minijinja_py.values.runtime import MISSING, Markup, Undefined

JINJA = ImmutableSandboxedEnvironment()


class FakeEnv:
    """getattr/getitem with Jinja2's immutable-sandbox rules, over our allow-list."""

    undefined = Undefined

    def _attribute(self, obj: Any, name: str) -> Any:
        value = M.get_method(obj, name, self)
        if value is not MISSING:
            return value
        if hasattr(obj, name) and (name.startswith("_") or isinstance(obj, (str, dict, list))):
            return Undefined(
                f"access to attribute {name!r} of {type(obj).__name__!r} object is unsafe.",
                obj=obj,
                name=name,
                exc=SecurityError,
            )
        return getattr(obj, name, MISSING)

    def getattr(self, obj: Any, name: str) -> Any:
        value = self._attribute(obj, name)
        if value is not MISSING:
            return value
        try:
            return obj[name]
        except (TypeError, LookupError):
            return Undefined(obj=obj, name=name)

    def getitem(self, obj: Any, key: Any) -> Any:
        try:
            return obj[key]
        except (TypeError, LookupError):
            if isinstance(key, str):
                value = self._attribute(obj, key)
                if value is not MISSING:
                    return value
        return Undefined(obj=obj, name=key)


ENV = FakeEnv()

_JINJA_ERRORS = {
    jinja2.exceptions.UndefinedError: "UndefinedError",
    jinja2.exceptions.SecurityError: "SecurityError",
}


def _to_jinja(value: Any) -> Any:
    return JinjaMarkup(str(value)) if isinstance(value, Markup) else value


def reference(value: Any, name: str, args: tuple, kwargs: dict) -> Any:
    ctx = {"v": _to_jinja(value), "a": tuple(map(_to_jinja, args)), "k": kwargs}
    try:
        # (Jinja2 prints a method with its address; ours by its name: read Jinja2's as ours)
        return normalize(JINJA.from_string(f"{{{{ [v.{name}(*a, **k)] }}}}").render(ctx))
    except Exception as exc:
        return (_JINJA_ERRORS.get(type(exc), type(exc).__name__), str(exc))


def ours(value: Any, name: str, args: tuple, kwargs: dict) -> Any:
    try:
        method = M.get_method(value, name, ENV)
        assert method is not MISSING, f"{name} is not allowed"
        return str([method(*args, **kwargs)])
    except Exception as exc:
        return (type(exc).__name__, str(exc))


def case(value: Any, name: str, /, *args: Any, **kwargs: Any) -> Any:
    return pytest.param(value, name, args, kwargs, id=f"{value!r}.{name}{args}{kwargs}")


S = "  Hello, World! they're 42  "
M1 = Markup("<b>Hi</b> & x")

CASES = [
    case(S, "capitalize"),
    case(S, "casefold"),
    case("ß", "casefold"),
    case(S, "center", 40, "*"),
    case(S, "center", 3),
    case(S, "count", "l"),
    case(S, "count", "l", 5, 10),
    case(S, "endswith", "  "),
    case(S, "endswith", ("x", "2  ")),
    case("a\tb", "expandtabs"),
    case("a\tb", "expandtabs", 2),
    case("a\tb", "expandtabs", tabsize=3),
    case(S, "find", "o"),
    case(S, "find", "zz"),
    case(S, "index", "o"),
    case(S, "index", "zz"),
    case("ab1", "isalnum"),
    case("ab", "isalpha"),
    case("é", "isascii"),
    case("12", "isdecimal"),
    case("²", "isdigit"),
    case("x_1", "isidentifier"),
    case("abc", "islower"),
    case("½", "isnumeric"),
    case("a\n", "isprintable"),
    case(" \t", "isspace"),
    case("Ab Cd", "istitle"),
    case("AB", "isupper"),
    case(", ", "join", ["a", "b"]),
    case("", "join", "xyz"),
    case(", ", "join", [1]),
    case("ab", "ljust", 5, "."),
    case("ab", "rjust", 5),
    case(S, "lower"),
    case(S, "upper"),
    case(S, "lstrip"),
    case(S, "rstrip"),
    case(S, "strip"),
    case("xxaxx", "strip", "x"),
    case("xxaxx", "lstrip", "x"),
    case("xxaxx", "rstrip", "x"),
    case("a=b=c", "partition", "="),
    case("a=b=c", "rpartition", "="),
    case("a=b=c", "partition", "?"),
    case("prefix-x", "removeprefix", "prefix-"),
    case("x.txt", "removesuffix", ".txt"),
    case("aaa", "replace", "a", "b"),
    case("aaa", "replace", "a", "b", 2),
    case(S, "rfind", "o"),
    case(S, "rindex", "o"),
    case("a,b,,c", "split", ","),
    case("a b  c", "split"),
    case("a,b,c", "split", ",", 1),
    case("a,b,c", "rsplit", ",", 1),
    case("a,b,c", "split", sep=",", maxsplit=1),
    case("a\nb\r\nc\n", "splitlines"),
    case("a\nb\r\nc\n", "splitlines", True),
    case(S, "startswith", "  H"),
    case(S, "swapcase"),
    case(S, "title"),
    case("42", "zfill", 5),
    case("-42", "zfill", 5),
    case("x", "center"),
    case("x", "split", 1),
    # str.format, sandboxed
    case("{} and {}", "format", 1, "b"),
    case("{0}{1}{0}", "format", "a", "b"),
    case("{name}!", "format", name="x"),
    case("{0[a]} {0[b][0]}", "format", {"a": 1, "b": "xy"}),
    case("{0.upper}", "format", "x"),
    case("{0.__class__}", "format", "x"),
    case("{0.__class__!r}", "format", "x"),
    case("{0.__class__.__name__}", "format", "x"),
    case("{0._private}", "format", "x"),
    case("{0.nope}", "format", {"a": 1}),
    case("{0.nope.deeper}", "format", {"a": 1}),
    case("{0.a}", "format", {"a": 1}),
    case("{_a}", "format", _a=1),
    case("{0:>5}|{1:.2f}|{2!r}", "format", "x", 3.14159, "q"),
    case("{0:{1}}", "format", "x", 4),
    case("{}", "format"),
    case("{0}{}", "format", 1),
    case("{a}", "format_map", {"a": 1}),
    case("{a[0]}", "format_map", {"a": [5]}),
    case("{a}", "format_map", [1]),
    case("{0}", "format_map", [1]),
    case("{a}", "format_map"),
    case("{a}", "format_map", {"a": 1}, {"b": 2}),
    case("{a}", "format_map", a=1),
    # Markup keeps markupsafe's semantics
    case(M1, "upper"),
    case(M1, "lower"),
    case(M1, "capitalize"),
    case(M1, "title"),
    case(M1, "swapcase"),
    case(M1, "casefold"),
    case(M1, "strip", "<>"),
    case(M1, "lstrip"),
    case(M1, "rstrip", "x"),
    case(M1, "replace", "&", "<and>"),
    case(M1, "replace", "x", "<y>", 1),
    case(M1, "center", 20, "<"),
    case(M1, "ljust", 18, "&"),
    case(M1, "rjust", 18),
    case(M1, "zfill", 20),
    case(M1, "split"),
    case(M1, "split", "&"),
    case(M1, "rsplit", " ", 1),
    case(Markup("a\n<b>"), "splitlines"),
    case(M1, "partition", "&"),
    case(M1, "rpartition", " "),
    case(Markup("<br>"), "join", ["<a>", Markup("<b>"), "c"]),
    case(M1, "removeprefix", "<b>"),
    case(M1, "removesuffix", " x"),
    case(Markup("a\tb"), "expandtabs", 2),
    case(M1, "find", "&"),
    case(M1, "count", "<"),
    case(M1, "startswith", "<b>"),
    case(M1, "isupper"),
    case(Markup("<i>{0}</i>{k}"), "format", "<x>", k=Markup("<y>")),
    case(Markup("{0!r}"), "format", "<"),
    case(Markup("{0:>4}"), "format", "<"),
    case(Markup("{0:>4}"), "format", Markup("<")),
    case(Markup("{0.__class__}"), "format", "x"),
    case(Markup("<{a}>"), "format_map", {"a": "&"}),
    case(Markup("&lt;i&gt; &amp;"), "unescape"),
    case(Markup("<i>a</i>  &amp; <!-- c --> b"), "striptags"),
    case(Markup("x"), "escape", "<&"),
    case(Markup("x"), "escape", Markup("<")),
    case(Markup("x"), "escape"),
    case(Markup("x"), "unescape", 1),
    # containers and numbers
    case({"a": 1, "b": 2}, "get", "a"),
    case({"a": 1}, "get", "z"),
    case({"a": 1}, "get", "z", 0),
    case({"a": 1, "b": [2]}, "items"),
    case({"a": 1, "b": 2}, "keys"),
    case({"a": 1, "b": 2}, "values"),
    case({"a": 1}, "copy"),
    case([1, 2, 1], "index", 1),
    case([1, 2, 1], "index", 3),
    case([1, 2, 1], "count", 1),
    case([1, [2]], "copy"),
    case((1, 2), "index", 2),
    case((1, 1), "count", 1),
    case({1, 2}, "union", [3]),
    case({1, 2}, "issubset", [1, 2, 3]),
    case(frozenset([1]), "isdisjoint", [2]),
    case(5, "real"),
    case(5, "imag"),
    case(5, "bit_length"),
    case(5, "conjugate"),
    case(2.5, "real"),
    case(2.5, "imag"),
    case(2.0, "is_integer"),
    case(True, "real"),
]


@pytest.mark.parametrize(("value", "name", "args", "kwargs"), CASES)
def test_same_as_jinja2(value: Any, name: str, args: tuple, kwargs: dict) -> None:
    assert ours(value, name, args, kwargs) == reference(value, name, args, kwargs)


def test_every_allowed_name_exists_on_its_type() -> None:
    for kind, names in M.METHODS.items():
        for name in names:
            if kind in (int, float):  # one list for both; int.is_integer only from Python 3.12
                assert hasattr(int, name) or hasattr(float, name), name
            else:
                assert hasattr(kind, name), (kind, name)


NOT_ALLOWED = [
    ("x", "encode"),
    ("x", "unescape"),
    ("x", "striptags"),
    ("x", "escape"),
    ("x", "translate"),
    ("x", "maketrans"),
    ("x", "__class__"),
    ("x", "__len__"),
    ("x", "_x"),
    ("x", "nope"),
    ({}, "pop"),
    ({}, "update"),
    ({}, "setdefault"),
    ({}, "fromkeys"),
    ({}, "__getitem__"),
    ([], "append"),
    ([], "sort"),
    ([], "__iadd__"),
    ((1,), "copy"),
    ({1}, "add"),
    (deque(), "appendleft"),
    (1, "__class__"),
    (1, "to_bytes"),
    (None, "real"),
    (object(), "upper"),
    (Undefined(name="x"), "upper"),
    ("x", 1),
]


@pytest.mark.parametrize(("value", "name"), NOT_ALLOWED)
def test_not_allowed_is_missing(value: Any, name: Any) -> None:
    assert M.get_method(value, name) is MISSING


MUTATING = [
    ([], "append"),
    ([], "extend"),
    ([], "insert"),
    ([], "pop"),
    ([], "remove"),
    ([], "reverse"),
    ([], "sort"),
    ([], "clear"),
    ({}, "update"),
    ({}, "setdefault"),
    ({}, "popitem"),
    ({}, "pop"),
    ({}, "clear"),
    (set(), "add"),
    (set(), "discard"),
    (set(), "difference_update"),
    (set(), "intersection_update"),
    (set(), "symmetric_difference_update"),
    (bytearray(), "append"),
    (deque(), "appendleft"),
    (deque(), "extendleft"),
    (deque(), "popleft"),
    (deque(), "rotate"),
]


@pytest.mark.parametrize(("value", "name"), MUTATING)
def test_mutating_methods(value: Any, name: str) -> None:
    assert M.is_mutating_method(value, name) is True


@pytest.mark.parametrize(
    ("value", "name"),
    [([], "index"), ({}, "get"), ({}, "keys"), ("x", "upper"), (set(), "union"), (1, "real")],
)
def test_non_mutating_methods(value: Any, name: str) -> None:
    assert M.is_mutating_method(value, name) is False
    assert modifies_known_mutable(value, name) is False


def test_mutating_is_a_superset_of_jinja2s_rule() -> None:
    for value in ([], {}, set(), deque(), bytearray()):
        for name in dir(value):
            if modifies_known_mutable(value, name):
                assert M.is_mutating_method(value, name), (type(value), name)


def test_format_without_environment_applies_the_same_rule() -> None:
    assert M.get_method("{0.__class__}", "format")("x") == ""
    assert M.get_method("{0.nope}", "format")({"a": 1}) == ""
    assert M.get_method("{0.a}|{0[a]}", "format")({"a": 1}) == "1|1"
    with pytest.raises(
        SecurityError, match="^access to attribute '__class__' of 'str' object is unsafe.$"
    ):
        M.get_method("{0.__class__.__name__}", "format")("x")
    with pytest.raises(UndefinedError, match="^'dict object' has no attribute 'nope'$"):
        M.get_method("{0.nope.x}", "format")({})


def test_format_prints_like_jinja2s_wrapper() -> None:
    assert repr(M.get_method("x", "format")).startswith("<function str.format at 0x")
    assert repr(M.get_method(Markup("x"), "format_map")).startswith(
        "<function Markup.format_map at 0x"
    )


def test_markup_methods_print_as_bound_methods() -> None:
    assert (
        repr(M.get_method(Markup("<a>"), "upper")) == "<bound method Markup.upper of Markup('<a>')>"
    )
    assert repr(M.get_method("a", "upper")).startswith("<built-in method upper of str object at 0x")


def test_markup_percent_escapes_arguments() -> None:
    assert M.markup_mod(Markup("<b>%s</b>"), "<") == "<b>&lt;</b>"
    assert M.markup_mod(Markup("%s|%s"), ("<", Markup("<"))) == "&lt;|<"
    assert M.markup_mod(Markup("%(a)s %(a)r"), {"a": "<"}) == "&lt; &#39;&lt;&#39;"
    assert M.markup_mod(Markup("%d%%"), 5) == "5%"
    assert isinstance(M.markup_mod(Markup("%s"), 1), Markup)


@pytest.mark.parametrize(
    ("value", "name", "args"),
    [
        ("x", "center", (10**9,)),
        ("x", "ljust", (10**8, "x")),
        ("x", "rjust", (MAX_WIDTH + 1,)),
        ("x", "zfill", (10**9,)),
        ("\t", "expandtabs", (10**9,)),
        (Markup("x"), "center", (10**9,)),
        ("{0:>1000000000}", "format", (1,)),
        ("{0:.99999999f}", "format", (1.0,)),
        ("{0:{1}}", "format", ("x", 10**9)),
        (Markup("{0:>1000000000}"), "format", (1,)),
    ],
)
def test_huge_widths_are_refused(value: Any, name: str, args: tuple) -> None:
    with pytest.raises(LimitError):
        M.get_method(value, name)(*args)


def test_named_tuple_fields_are_data() -> None:
    from collections import namedtuple

    from minijinja_py.builtins.filters import do_groupby

    group = do_groupby(ENV, [{"a": 1}], "a")[0]
    assert M.get_method(group, "grouper") == 1
    assert M.get_method(group, "list") == [{"a": 1}]
    assert M.get_method(group, "_fields") is MISSING
    assert M.get_method(group, "_asdict") is MISSING
    point = namedtuple("Point", "x y")(1, 2)
    assert (M.get_method(point, "x"), M.get_method(point, "count")(2)) == (1, 1)
    assert reference(point, "count", (2,), {}) == ours(point, "count", (2,), {})


# --- property-based: random str/Markup method calls print the same as in Jinja2

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_TEXT = st.text(alphabet="aA <>&'\"\n\t-é.,{}[]0:!r_x", max_size=10)
_ARGUMENTS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 12),
    _TEXT,
    st.lists(_TEXT, max_size=3),
    st.dictionaries(st.sampled_from(["a", "x", "_b"]), _TEXT, max_size=2),
)


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.one_of(_TEXT, _TEXT.map(Markup)),
    st.sampled_from(sorted(M.STR_METHODS)),
    st.lists(_ARGUMENTS, max_size=3),
)
def test_random_calls_same_as_jinja2(value: Any, name: str, args: list) -> None:
    assert ours(value, name, tuple(args), {}) == reference(value, name, tuple(args), {})


def test_percent_guard_skips_literal_percent_signs() -> None:
    M.check_percent_format("%%9999999999d and %s", ("x",))
    with pytest.raises(LimitError):
        M.check_percent_format("%%%9999999999d", (1,))
    with pytest.raises(LimitError):
        M.check_percent_format("%-*s", (10**9, "x"))


@pytest.mark.parametrize(
    ("value", "name", "args"),
    [
        ("x" * 20_000, "join", (["a"] * 1000,)),
        ("x" * 20_000, "join", (iter(["a"] * 1000),)),
        ("a" * 1000, "replace", ("", "x" * 20_000)),
        (Markup("a" * 1000), "replace", ("a", "<" * 3000)),
        ("\t" * 1000, "expandtabs", (20_000,)),
    ],
)
def test_results_beyond_max_string_are_refused(value: Any, name: str, args: tuple) -> None:
    with pytest.raises(LimitError, match=r"^a string of \d+ characters exceeds max_string"):
        M.get_method(value, name)(*args)


def test_join_takes_any_iterable_once() -> None:
    assert M.get_method("-", "join")(iter(["a", "b"])) == "a-b"
    assert M.get_method("-", "join")(x for x in "ab") == "a-b"
    assert M.get_method(Markup("-"), "join")(x for x in "<b") == "&lt;-b"


def test_markup_escape_is_bound_to_the_class() -> None:
    # printed as every method prints (sandbox/opaque.py): no module named
    assert repr(M.get_method(Markup("x"), "escape")) == "<method escape of Markup>"
    assert M.get_method(Markup("x"), "escape")("<") == "&lt;"


@pytest.mark.parametrize(
    ("ours_value", "source"),
    [
        (lambda: Markup("<b>%s</b>") % "<", "{{ [('<b>%s</b>'|safe) % '<'] }}"),
        (lambda: Markup('"%s"') % {"a": "<"}, "{{ [('\"%s\"'|safe) % {'a': '<'}] }}"),
        (lambda: Markup("%(a)s|%(a)r") % {"a": "<"}, "{{ [('%(a)s|%(a)r'|safe) % {'a': '<'}] }}"),
        (lambda: Markup("%s-%s") % ("<", Markup("<")), "{{ [('%s-%s'|safe) % ('<', '<'|safe)] }}"),
        (lambda: Markup("<ab>")[::-1], "{{ [('<ab>'|safe)[::-1]] }}"),
        (lambda: Markup("<ab>")[1], "{{ [('<ab>'|safe)[1]] }}"),
        (lambda: Markup("<") * 2, "{{ [('<'|safe) * 2] }}"),
        (lambda: 2 * Markup("<"), "{{ [2 * ('<'|safe)] }}"),
    ],
)
def test_markup_operators_follow_markupsafe(ours_value: Any, source: str) -> None:
    assert str([ours_value()]) == JINJA.from_string(source).render()
