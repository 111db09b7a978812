"""The built-in filters, called directly, against Jinja2 3.1.6 rendering the same filter call.

Each differential case renders ``{{ v|name(*a, **k) }}`` with Jinja2's ImmutableSandboxedEnvironment
and calls our filter with the same value and arguments through a small fake environment; the
printed results (or the error class and message) must be identical.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import jinja2
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from minijinja_py.builtins import filters as F
from minijinja_py.builtins import methods
from minijinja_py.builtins import tests as T
from minijinja_py.errors import FilterArgumentError, SecurityError, TemplateRuntimeError
from minijinja_py.values.runtime import MISSING, Markup, Undefined, wants_environment


class FakeEnv:
    """The environment surface filters rely on, with the sandbox rules of Jinja2's immutable one."""

    undefined = Undefined
    newline_sequence = "\n"

    def __init__(self) -> None:
        self.filters = F.FILTERS
        self.tests = T.TESTS
        self.policies = {"json.dumps_function": None, "json.dumps_kwargs": {"sort_keys": True}}

    def _unsafe(self, obj: Any, name: str) -> Undefined:
        return Undefined(
            f"access to attribute {name!r} of {type(obj).__name__!r} object is unsafe.",
            obj=obj,
            name=name,
            exc=SecurityError,
        )

    def _attribute(self, obj: Any, name: str) -> Any:
        method = methods.get_method(obj, name, self)
        if method is not MISSING:
            return method
        if name.startswith("_") or methods.is_mutating_method(obj, name):
            return self._unsafe(obj, name) if hasattr(obj, name) else MISSING
        if isinstance(obj, (str, dict, list, tuple, int, float)):
            return self._unsafe(obj, name) if hasattr(obj, name) else MISSING
        return getattr(obj, name, MISSING)

    def getattr(self, obj: Any, name: str) -> Any:
        value = self._attribute(obj, name)
        if value is not MISSING:
            return value
        try:
            return obj[name]
        except (TypeError, LookupError):
            return self.undefined(obj=obj, name=name)

    def getitem(self, obj: Any, key: Any) -> Any:
        try:
            return obj[key]
        except (TypeError, LookupError):
            if isinstance(key, str):
                value = self._attribute(obj, key)
                if value is not MISSING:
                    return value
        return self.undefined(obj=obj, name=key)

    def _call(self, table: dict, kind: str, name: str, value: Any, args: Any, kwargs: Any) -> Any:
        func = table.get(name)
        if func is None:
            raise TemplateRuntimeError(f"No {kind} named {name!r}.")
        if wants_environment(func):
            return func(self, value, *args, **(kwargs or {}))
        return func(value, *args, **(kwargs or {}))

    def call_filter(self, name: str, value: Any, args: Any = (), kwargs: Any = None) -> Any:
        return self._call(self.filters, "filter", name, value, args, kwargs)

    def call_test(self, name: str, value: Any, args: Any = (), kwargs: Any = None) -> Any:
        return self._call(self.tests, "test", name, value, args, kwargs)


ENV = FakeEnv()
JINJA = ImmutableSandboxedEnvironment()

# Jinja2's exception classes and ours have the same names; builtins are shared.
_JINJA_ERRORS = {
    jinja2.exceptions.FilterArgumentError: "FilterArgumentError",
    jinja2.exceptions.UndefinedError: "UndefinedError",
    jinja2.exceptions.SecurityError: "SecurityError",
    jinja2.exceptions.TemplateRuntimeError: "TemplateRuntimeError",
}


def _error(exc: BaseException) -> tuple[str, str]:
    return (_JINJA_ERRORS.get(type(exc), type(exc).__name__), str(exc))


def reference(name: str, value: Any, args: tuple, kwargs: dict, as_list: bool) -> Any:
    """What Jinja2 prints for the filter call, or its error as (class name, message)."""
    call = f"v|{name}(*a, **k)"
    source = f"{{{{ ({call})|list }}}}" if as_list else f"{{{{ {call} }}}}"
    ctx = {"a": args, "k": kwargs}
    if value is not MISSING:
        ctx["v"] = value
    try:
        return JINJA.from_string(source).render(ctx)
    except Exception as exc:
        return _error(exc)


def ours(name: str, value: Any, args: tuple, kwargs: dict, as_list: bool) -> Any:
    """What our filter prints, or its error as (class name, message)."""
    if value is MISSING:
        value = Undefined(name="v")
    try:
        result = ENV.call_filter(name, value, args, dict(kwargs))
        if as_list:
            result = list(result)
        return "" if isinstance(result, Undefined) else str(result)
    except Exception as exc:
        return (type(exc).__name__, str(exc))


def case(name: str, value: Any, *args: Any, as_list: bool = False, **kwargs: Any) -> Any:
    return pytest.param(name, value, args, kwargs, as_list, id=f"{name}-{value!r}-{args}-{kwargs}")


USERS = [
    {"name": "bob", "age": 30, "city": "NY", "tags": ["x"], "email": None},
    {"name": "Alice", "age": 25, "city": "ca", "tags": [], "email": "a@x.org"},
    {"name": "carl", "age": 30, "city": "CA", "tags": ["y", "z"]},
]

DIFFERENTIAL = [
    # strings
    case("upper", "hello é"),
    case("upper", 12),
    case("upper", MISSING),
    case("lower", "HeLLo"),
    case("capitalize", "hello WORLD"),
    case("title", "they're here-and (there) [x] <y> {z}"),
    case("title", "  multiple   spaces\tand\nnewlines"),
    case("title", ""),
    case("center", "x", 5),
    case("center", "ab"),
    case("center", 7, 4),
    case("trim", "  x  "),
    case("trim", "xxaxx", "x"),
    case("trim", "\n\t a \n"),
    case("replace", "aaaaargh", "a", "d'oh, ", 2),
    case("replace", "Hello World", "Hello", "Goodbye"),
    case("replace", 1001, 0, 9),
    case("replace", "abc", "b", "x", "2"),
    case("string", 1.5),
    case("string", None),
    case("wordcount", "a b-c d_e, f"),
    case("wordcount", 123),
    case("format", "%s, %s!", "Hello", "World"),
    case("format", "%(a)s-%(b)d", a="x", b=3),
    case("format", "%s", "x", a=1),
    case("format", "%d", "x"),
    case("format", "%s %s", "x"),
    case("format", "plain"),
    case("indent", "a\nb\n\nc"),
    case("indent", "a\nb\n\nc", 2, True),
    case("indent", "a\nb\n\nc", 2, True, True),
    case("indent", "a\nb\n", ">> ", first=True),
    case("indent", "", 2, True),
    case("indent", "a\r\nb"),
    case("indent", 5),
    case("truncate", "foo bar baz qux", 9),
    case("truncate", "foo bar baz qux", 9, True),
    case("truncate", "foo bar baz qux", 11),
    case("truncate", "foo bar baz qux", 11, False, "...", 0),
    case("truncate", "foo bar baz qux", 2),
    case("truncate", "foo bar baz qux", 5, leeway=-1),
    case("truncate", "x" * 300),
    case("truncate", "foobarbazqux", 8, end="!", leeway=0),
    case("wordwrap", "aaa bbb ccc ddd", 7),
    case("wordwrap", "aaa bbb\nccc ddd eee", 7, wrapstring="|"),
    case("wordwrap", "abcdefghij", 3),
    case("wordwrap", "abcdefghij", 3, False),
    case("wordwrap", "a-b-c-d-e-f", 3, break_on_hyphens=False),
    case("striptags", "<b>a</b>  <!-- c <i> -->&amp; <br/>b\n\tc &lt;"),
    case("striptags", "a < b and <unclosed"),
    case("striptags", "<!-- unclosed comment"),
    case("filesizeformat", 1),
    case("filesizeformat", 300),
    case("filesizeformat", 1500),
    case("filesizeformat", 1024, True),
    case("filesizeformat", 3.5e9),
    case("filesizeformat", 10**30),
    case("filesizeformat", "2000000"),
    case("filesizeformat", "x"),
    case("pprint", {"b": [1, 2], "a": "x" * 30, "c": {"d": list(range(20))}}),
    case("urlencode", "a b/c?d=é&"),
    case("urlencode", {"a": "x y", "b/": "1&2"}),
    case("urlencode", [("k", "v"), ("k2", 3)]),
    case("urlencode", 42),
    case("urlize", "see www.example.com, or http://x.org/a?b=1."),
    case("urlize", "mail me@example.com or mailto:me@example.com (https://a.io/x_(y))"),
    case("urlize", "<http://a.com> &lt;b&gt; @a@b", 10, True, "_blank"),
    case("urlize", "http://127.0.0.1:8080/x and ftp://files and x.org.com"),
    case("urlize", "see ftp://x.y", extra_schemes=["ftp://"]),
    case("urlize", "x", extra_schemes=["bad scheme"]),
    case("urlize", "https://example.com", rel="me"),
    case("xmlattr", {"class": "a", "id": None, "data-x": "<'\">", "n": 3}),
    case("xmlattr", {"class": "a"}, False),
    case("xmlattr", {}),
    case("xmlattr", {"bad key": "x"}),
    case("escape", "<a href='x'>&\"</a>"),
    case("e", 5),
    case("forceescape", "<b>"),
    case("safe", "<b>"),
    case("tojson", {"b": "<a href='x'>&</a>", "a": [1, 2.5, None, True], "é": "ü"}),
    case("tojson", [1, {"x": 2}], 2),
    case("tojson", "\u2028"),
    # numbers
    case("abs", -3),
    case("abs", -2.5),
    case("abs", "x"),
    case("int", "42"),
    case("int", "42.7"),
    case("int", "-3.9"),
    case("int", "x"),
    case("int", "x", 7),
    case("int", "0x1A", base=16),
    case("int", "0b101", 0, 2),
    case("int", "1e3"),
    case("int", "inf"),
    case("int", 3.99),
    case("int", True),
    case("int", None),
    case("int", "  12  "),
    case("int", "1_000"),
    case("float", "1.5"),
    case("float", "x"),
    case("float", "x", 2.5),
    case("float", 3),
    case("float", "nan"),
    case("float", None),
    case("round", 42.55),
    case("round", 42.55, 1),
    case("round", 42.55, 1, "floor"),
    case("round", 42.51, 1, "ceil"),
    case("round", 2.5),
    case("round", 42),
    case("round", 42, 1, "ceil"),
    case("round", 1.5, method="bad"),
    # values and sequences
    case("default", MISSING, "x"),
    case("default", MISSING),
    case("default", "", "x"),
    case("default", "", "x", True),
    case("d", 0, "x", boolean=True),
    case("d", None, "x"),
    case("length", [1, 2]),
    case("length", "abc"),
    case("length", {"a": 1}),
    case("length", MISSING),
    case("length", 5),
    case("count", (1, 2, 3)),
    case("list", "ab"),
    case("list", {"a": 1, "b": 2}),
    case("list", MISSING),
    case("list", 3),
    case("first", [1, 2]),
    case("first", []),
    case("first", "xy"),
    case("first", {"k": 1}),
    case("first", MISSING),
    case("last", [1, 2]),
    case("last", []),
    case("last", "xy"),
    case("last", MISSING),
    case("reverse", "abc"),
    case("reverse", [1, 2, 3], as_list=True),
    case("reverse", (1, 2), as_list=True),
    case("reverse", {"a": 1, "b": 2}, as_list=True),
    case("reverse", 5),
    case("join", [1, 2, 3], "|"),
    case("join", [1, 2, 3]),
    case("join", ["a", None, 2.0], ", "),
    case("join", USERS, ", ", "name"),
    case("join", USERS, ", ", attribute="tags.0"),
    case("join", "abc", "-"),
    case("join", MISSING, "-"),
    case("min", [3, 1, 2]),
    case("min", ["b", "A", "a"]),
    case("min", ["b", "A", "a"], True),
    case("min", []),
    case("min", USERS, attribute="age"),
    case("max", [3, 1, 2]),
    case("max", ["b", "A", "C"]),
    case("max", USERS, attribute="name"),
    case("max", [1, "a"]),
    case("sum", [1, 2, 3]),
    case("sum", [1.5, 2], start=10),
    case("sum", USERS, "age"),
    case("sum", [[1], [2]], start=[]),
    case("sum", ["a"]),
    case("dictsort", {"b": 1, "A": 2, "c": 0}),
    case("dictsort", {"b": 1, "A": 2, "c": 0}, True),
    case("dictsort", {"b": 1, "A": 2, "c": 0}, False, "value"),
    case("dictsort", {"b": 1, "A": 2, "c": 0}, reverse=True),
    case("dictsort", {"b": 1}, by="other"),
    case("sort", [3, 1, 2]),
    case("sort", ["b", "A", "c"]),
    case("sort", ["b", "A", "c"], case_sensitive=True),
    case("sort", ["b", "A", "c"], True),
    case("sort", USERS, attribute="age,name"),
    case("sort", USERS, attribute="city"),
    case("sort", USERS, attribute="tags.0"),
    case("sort", [2, "a"]),
    case("unique", ["a", "b", "A", "a"], as_list=True),
    case("unique", ["a", "b", "A"], True, as_list=True),
    case("unique", USERS, attribute="age", as_list=True),
    case("unique", [[1], [1]], as_list=True),
    case("items", {"a": 1, "b": [2]}, as_list=True),
    case("items", MISSING, as_list=True),
    case("items", [1, 2], as_list=True),
    case("batch", [1, 2, 3, 4, 5], 2, as_list=True),
    case("batch", [1, 2, 3, 4, 5], 2, 0, as_list=True),
    case("batch", [1, 2, 3], 3, "x", as_list=True),
    case("batch", [], 3, as_list=True),
    case("slice", [1, 2, 3, 4, 5, 6, 7], 3, as_list=True),
    case("slice", [1, 2, 3, 4, 5, 6, 7], 3, 0, as_list=True),
    case("slice", [1, 2], 4, as_list=True),
    case("groupby", USERS, "city"),
    case("groupby", USERS, "city", case_sensitive=True),
    case("groupby", USERS, "email", "none@x"),
    case("groupby", USERS, "tags.0", default="-"),
    case("groupby", [("a", 1), ("b", 2), ("a", 3)], 0),
    case("attr", "x", "upper"),
    case("attr", {"a": 1}, "a"),
    case("attr", USERS[0], "items"),
    case("attr", "x", "__class__"),
    case("attr", [1], "append"),
    case("map", ["a", "b"], "upper", as_list=True),
    case("map", [1.6, 2.2], "round", 0, "floor", as_list=True),
    case("map", USERS, attribute="name", as_list=True),
    case("map", USERS, attribute="email", default="-", as_list=True),
    case("map", USERS, attribute="tags.1", as_list=True),
    case("map", USERS, attribute="name", other=1, as_list=True),
    case("map", [1], as_list=True),
    case("map", [], as_list=True),
    case("map", [1], "nope", as_list=True),
    case("map", ["a b", "c d"], "replace", " ", "_", as_list=True),
    case("map", [{"a": {"b": 1}}], attribute="a.b", as_list=True),
    case("select", [0, 1, 2, 3, None, ""], as_list=True),
    case("select", [1, 2, 3, 4], "odd", as_list=True),
    case("select", [1, 2, 3, 4, 9], "divisibleby", 3, as_list=True),
    case("select", [1, 2, 3], "lessthan", 3, as_list=True),
    case("select", ["a", "b"], "equalto", "a", as_list=True),
    case("select", ["a", "b"], "==", "b", as_list=True),
    case("select", [1, "a", 2.0, None], "number", as_list=True),
    case("select", [1], "nope", as_list=True),
    case("reject", [1, 2, 3, 4], "odd", as_list=True),
    case("reject", [0, 1, ""], as_list=True),
    case("selectattr", USERS, "email", as_list=True),
    case("selectattr", USERS, "email", "none", as_list=True),
    case("selectattr", USERS, "age", "gt", 26, as_list=True),
    case("selectattr", USERS, "tags", as_list=True),
    case("selectattr", USERS, as_list=True),
    case("selectattr", USERS, "email", "defined", as_list=True),
    case("rejectattr", USERS, "email", "none", as_list=True),
    case("rejectattr", USERS, "email", "undefined", as_list=True),
    case("rejectattr", USERS, "tags", as_list=True),
]


@pytest.mark.parametrize(("name", "value", "args", "kwargs", "as_list"), DIFFERENTIAL)
def test_same_as_jinja2(name: str, value: Any, args: tuple, kwargs: dict, as_list: bool) -> None:
    assert ours(name, value, args, kwargs, as_list) == reference(name, value, args, kwargs, as_list)


def test_registry_names_match_jinja2() -> None:
    from jinja2.filters import FILTERS as JINJA_FILTERS

    assert set(F.FILTERS) == set(JINJA_FILTERS)


def test_every_filter_has_a_one_line_docstring_with_an_example() -> None:
    for name, func in F.FILTERS.items():
        doc = func.__doc__ or ""
        assert doc.strip() and "\n" not in doc.strip(), name
        assert "`" in doc, name  # an example in back-quotes (Markdown or reST)


def test_lazy_filters_print_like_jinja2_generators() -> None:
    # Jinja2 prints these as ``<generator object NAME at 0x...>``; the names must match.
    expected = {
        "map": ("sync_do_map", ("upper",)),
        "select": ("select_or_reject", ()),
        "reject": ("select_or_reject", ()),
        "selectattr": ("select_or_reject", ("a",)),
        "rejectattr": ("select_or_reject", ("a",)),
        "unique": ("sync_do_unique", ()),
        "slice": ("sync_do_slice", (2,)),
        "batch": ("do_batch", (2,)),
        "items": ("do_items", ()),
    }
    for name, (generator_name, args) in expected.items():
        value = {"a": 1} if name == "items" else [1]
        result = ENV.call_filter(name, value, args)
        assert repr(result).startswith(f"<generator object {generator_name} at 0x"), name
        rendered = JINJA.from_string(f"{{{{ v|{name}(*a) }}}}").render(v=value, a=args)
        assert rendered.startswith(f"<generator object {generator_name} at 0x"), name


def test_lazy_filters_raise_only_when_iterated() -> None:
    generator = ENV.call_filter("map", [1])
    with pytest.raises(FilterArgumentError, match="^map requires a filter argument$"):
        list(generator)
    generator = ENV.call_filter("selectattr", [1])
    with pytest.raises(FilterArgumentError, match="^Missing parameter for attribute name$"):
        list(generator)
    with pytest.raises(TypeError, match=r"^Can only get item pairs from a mapping\.$"):
        list(ENV.call_filter("items", [1]))


def test_empty_value_never_looks_at_the_arguments() -> None:
    assert list(ENV.call_filter("map", [])) == []
    assert list(ENV.call_filter("selectattr", [])) == []


def test_groupby_result_is_a_named_tuple_printed_as_tuple() -> None:
    groups = ENV.call_filter("groupby", USERS, ("city",))
    assert [(g.grouper, [u["name"] for u in g.list]) for g in groups] == [
        ("ca", ["Alice", "carl"]),
        ("NY", ["bob"]),
    ]
    assert (
        repr(groups[1])
        == str(groups[1])
        == ("('NY', [{'name': 'bob', 'age': 30, 'city': 'NY', 'tags': ['x'], 'email': None}])")
    )


def test_first_last_min_on_empty_give_explained_undefined() -> None:
    for name, message in [
        ("first", "No first item, sequence was empty."),
        ("last", "No last item, sequence was empty."),
        ("min", "No aggregated item, sequence was empty."),
        ("max", "No aggregated item, sequence was empty."),
    ]:
        result = ENV.call_filter(name, [])
        assert isinstance(result, Undefined)
        assert result._undefined_message == message


def test_undefined_in_attribute_path_is_replaced_by_default_only() -> None:
    getter = F.make_attrgetter(ENV, "a.b", default="D")
    assert getter({"a": {"b": 0}}) == 0
    assert getter({"a": {}}) == "D"
    assert getter({}) == "D"
    assert F.make_multi_attrgetter(ENV, "a,b.0")({"a": 1, "b": "xy"}) == [1, "x"]


def test_attribute_paths_go_through_the_sandbox() -> None:
    result = list(ENV.call_filter("map", ["x"], (), {"attribute": "__class__"}))
    assert isinstance(result[0], Undefined)
    with pytest.raises(
        SecurityError, match="^access to attribute '__class__' of 'str' object is unsafe.$"
    ):
        str(result[0] + 1)


def test_int_of_undefined_raises_undefined_error() -> None:
    from minijinja_py.errors import UndefinedError

    with pytest.raises(UndefinedError, match="^'v' is undefined$"):
        F.do_int(Undefined(name="v"))
    with pytest.raises(UndefinedError, match="^'v' is undefined$"):
        F.do_float(Undefined(name="v"))


# --- markup inputs (Jinja2 renders Markup from markupsafe; ours is runtime.Markup)


def _jinja(source: str, **ctx: Any) -> str:
    return JINJA.from_string(source).render(**ctx)


@pytest.mark.parametrize(
    ("source", "call"),
    [
        ('{{ ("<a>"|safe|upper)|pprint }}', lambda: F.do_pprint(F.do_upper(Markup("<a>")))),
        ('{{ ["<a>"|safe|trim]|pprint }}', lambda: F.do_pprint([F.do_trim(Markup("<a>"))])),
        ('{{ ["<a>"|safe|center(5)] }}', lambda: str([F.do_center(Markup("<a>"), 5)])),
        ('{{ ["<a>"|safe|reverse] }}', lambda: str([F.do_reverse(Markup("<a>"))])),
        ('{{ ["<a>"|safe|string] }}', lambda: str([F.do_string(Markup("<a>"))])),
        (
            '{{ ["<a>"|safe|replace("a", "b")] }}',
            lambda: str([F.do_replace(ENV, Markup("<a>"), "a", "b")]),
        ),
        (
            '{{ ["<a>\n<b>"|safe|indent(">", true)] }}',
            lambda: str([F.do_indent(Markup("<a>\n<b>"), ">", True)]),
        ),
        (
            '{{ ["a\n<b>"|indent(">"|safe, true)] }}',
            lambda: str([F.do_indent("a\n<b>", Markup(">"), True)]),
        ),
        (
            '{{ ["<a> b c"|safe|truncate(6, true, "<")] }}',
            lambda: str([F.do_truncate(ENV, Markup("<a> b c"), 6, True, "<")]),
        ),
        ('{{ ["%s<"|safe|format("<")] }}', lambda: str([F.do_format(Markup("%s<"), "<")])),
        (
            '{{ "%(a)s"|safe|format(a="<") }}',
            lambda: str(F.do_format(Markup("%(a)s"), a="<")),
        ),
        ('{{ ["<a>"|e|forceescape] }}', lambda: str([F.do_forceescape(F.do_escape("<a>"))])),
        ('{{ ["&lt;b&gt;"|safe|striptags] }}', lambda: str([F.do_striptags(Markup("&lt;b&gt;"))])),
        ('{{ [{"a": 1}|tojson] }}', lambda: str([F.do_tojson(ENV, {"a": 1})])),
        (
            "{{ [none|safe, missing|safe] }}",
            lambda: str([F.do_mark_safe(None), F.do_mark_safe(Undefined())]),
        ),
    ],
)
def test_markup_inputs_keep_markupsafe_semantics(source: str, call: Any) -> None:
    assert call() == _jinja(source)


def test_chat_tojson_is_plain_json_dumps() -> None:
    value = {"b": "é<&'", "a": [1, None]}
    assert F.chat_tojson(value) == '{"b": "é<&\'", "a": [1, null]}'
    assert F.chat_tojson(value, indent=2, sort_keys=True) == json.dumps(
        value, ensure_ascii=False, indent=2, sort_keys=True
    )
    assert F.chat_tojson(value, ensure_ascii=True, separators=(",", ":")) == (
        '{"b":"\\u00e9<&\'","a":[1,null]}'
    )
    assert "tojson" in F.FILTERS and F.FILTERS["tojson"] is not F.chat_tojson


def test_random_picks_an_item_or_explains_emptiness() -> None:
    assert F.do_random(ENV, [7]) == 7
    assert F.do_random(ENV, "ab") in ("a", "b")
    empty = F.do_random(ENV, [])
    assert isinstance(empty, Undefined)
    assert empty._undefined_message == "No random item, sequence was empty."
    assert ours("random", MISSING, (), {}, False) == reference("random", MISSING, (), {}, False)


def test_call_filter_of_unknown_name() -> None:
    with pytest.raises(TemplateRuntimeError, match=r"^No filter named 'nope'\.$"):
        list(ENV.call_filter("map", ["x"], ("nope",)))


def test_huge_widths_are_refused() -> None:
    from minijinja_py.errors import LimitError

    with pytest.raises(LimitError):
        F.do_center("x", 10**9)
    with pytest.raises(LimitError):
        F.do_indent("a\nb", 10**9)


def _signature(func: Any) -> tuple[str, list[tuple[str, str, Any]]]:
    import inspect

    func = getattr(func, "__wrapped__", func)
    params = list(inspect.signature(func).parameters.values())
    if params and params[0].name in ("env", "environment", "eval_ctx", "context"):
        params = params[1:]
    # positional-only names cannot be used by a caller, so they need not match
    return func.__qualname__, [
        ("" if p.kind is p.POSITIONAL_ONLY else p.name, p.kind.name, p.default) for p in params
    ]


def test_signatures_and_names_match_jinja2() -> None:
    # Same parameter names, kinds and defaults: keyword calls work alike, and Python's argument
    # errors name the same function (``sync_do_first() takes 2 positional arguments ...``).
    import builtins

    from jinja2.filters import FILTERS as JINJA_FILTERS

    for name, theirs in JINJA_FILTERS.items():
        if getattr(builtins, getattr(theirs, "__name__", ""), None) is theirs:
            continue  # abs and len are C functions: no comparable signature
        assert _signature(F.FILTERS[name]) == _signature(theirs), name


def test_argument_errors_read_like_jinja2() -> None:
    assert ours("first", [1], (1,), {}, False) == reference("first", [1], (1,), {}, False)
    assert ours("sum", [1], (), {"x": 1}, False) == reference("sum", [1], (), {"x": 1}, False)
    assert ours("groupby", [1], (), {}, False) == reference("groupby", [1], (), {}, False)
    assert ours("e", "x", (1,), {}, False) == reference("e", "x", (1,), {}, False)
    assert ours("upper", "x", (1,), {}, False) == reference("upper", "x", (1,), {}, False)


@pytest.mark.parametrize(
    ("name", "value", "args"),
    [
        ("batch", [1], (10**9, 0)),
        ("slice", [1], (10**9,)),
        ("round", 5, (-(10**9),)),
        ("round", 1.5, (10**9, "ceil")),
        ("format", "%999999999d", (1,)),
        ("format", "%.99999999f", (1.0,)),
        ("format", "%*d", (10**9, 1)),
        ("format", "%0*.*d", (5, 10**9, 1)),  # (a precision behind a width)
    ],
)
def test_huge_sizes_in_arguments_are_refused(name: str, value: Any, args: tuple) -> None:
    from minijinja_py.errors import LimitError

    with pytest.raises(LimitError):
        list(ENV.call_filter(name, value, args))


@pytest.mark.parametrize(
    "text",
    [
        "<!<!-- x -->-- y --> z",
        "<!-<!-- a -->- b -->",
        "a <!--> b --> c <!- - -> <x y='>'> d",
        "<<b>>x<</b>> &lt;&amp;",
        "<!--<!---->-->",
    ],
)
def test_striptags_on_tricky_comments(text: str) -> None:
    assert F.do_striptags(text) == _jinja("{{ v|striptags }}", v=text)


def test_striptags_is_linear() -> None:
    import time

    text = "<b>x</b><!-- c -->" * 20000
    # (CPU time: a busy machine stretches the wall clock, not the work)
    started = time.process_time()
    assert F.do_striptags(text) == "x" * 20000
    assert time.process_time() - started < 2


def _python_function(func: Any) -> Any:
    """The function Python reports on: Jinja2 wraps its sync filters in an async dispatcher."""
    import jinja2.filters as jinja_filters

    return getattr(jinja_filters, f"sync_{func.__name__}", func)


# Filters that are Python's builtins in Jinja2 (abs, length, count) have their messages
# imitated by hand and are tested with the other argument errors.
_BOUND_BY_PYTHON = sorted(
    name
    for name, func in jinja2.filters.FILTERS.items()
    if inspect.isfunction(_python_function(func))
)


@pytest.mark.parametrize("name", _BOUND_BY_PYTHON)
def test_parameters_are_named_as_in_jinja2(name: str) -> None:
    """From Python 3.13 a wrong keyword gets "Did you mean 'env'?" when a parameter is close to
    it, so the parameter names are part of the message, not only the function's name."""
    theirs = _python_function(jinja2.filters.FILTERS[name])
    ours = F.FILTERS[name]
    assert ours.__name__ == theirs.__name__
    assert list(inspect.signature(ours).parameters) == list(inspect.signature(theirs).parameters)


def test_unknown_keyword_reads_as_in_jinja2() -> None:
    assert ours("groupby", None, (), {"end": None}, False) == reference(
        "groupby", None, (), {"end": None}, False
    )


# --- property-based: random filters, values and arguments print the same as in Jinja2

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1000, 1000),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(alphabet="aAbB <>&'\"\n\t-é.,(/@x:0123", max_size=12),
)
_VALUES = st.one_of(
    _SCALARS,
    st.lists(_SCALARS, max_size=5),
    st.dictionaries(st.text("abcAB", max_size=3), _SCALARS, max_size=4),
    st.lists(st.dictionaries(st.sampled_from("abc"), _SCALARS, max_size=3), max_size=4),
    st.just(MISSING),
)
_ARGUMENTS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 12),
    st.text("ab,.x- ", max_size=4),
    st.sampled_from(["a", "b", "a.b", "0", "key", "value", "upper", "odd", "none", "ceil"]),
)
_KEYWORDS = st.dictionaries(
    st.sampled_from(
        "attribute default case_sensitive reverse boolean first blank width killwords end leeway "
        "start by indent base precision method fill_with d autospace binary wrapstring".split()
    ),
    _ARGUMENTS,
    max_size=2,
)
_LAZY = {"map", "select", "reject", "selectattr", "rejectattr", "unique", "items", "batch"}
_LAZY |= {"slice", "reverse"}


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.sampled_from(sorted(set(F.FILTERS) - {"random", "pprint"})),
    _VALUES,
    st.lists(_ARGUMENTS, max_size=3),
    _KEYWORDS,
)
def test_random_calls_same_as_jinja2(name: str, value: Any, args: list, kwargs: dict) -> None:
    as_list = name in _LAZY
    expected = reference(name, value, tuple(args), kwargs, as_list)
    assert ours(name, value, tuple(args), kwargs, as_list) == expected


@pytest.mark.parametrize(
    ("name", "value", "args", "kwargs"),
    [
        ("join", ["a"] * 1000, ("x" * 20_000,), {}),
        ("replace", "a" * 1000, ("", "x" * 20_000), {}),
        ("replace", "ab" * 1000, ("a", "x" * 20_000), {}),
        ("indent", "a\n" * 1000, ("x" * 20_000,), {}),
        ("wordwrap", "ab " * 5000, (3,), {"wrapstring": "x" * 10_000}),
        ("tojson", list(range(1000)), (20_000,), {}),
    ],
)
def test_results_beyond_max_string_are_refused_before_building(
    name: str, value: Any, args: tuple, kwargs: dict
) -> None:
    from minijinja_py.errors import LimitError

    with pytest.raises(LimitError, match=r"^a string of \d+ characters exceeds max_string"):
        ENV.call_filter(name, value, args, kwargs)


def test_size_guards_leave_normal_calls_alone() -> None:
    assert F.do_replace(ENV, "ab" * 3, "a", "xyz", 2) == "xyzbxyzbab"
    assert F.do_join(ENV, ["a", "b"], "x" * 100) == "a" + "x" * 100 + "b"
    assert F.do_tojson(ENV, [1, [2]], 100) == json.dumps([1, [2]], indent=100, sort_keys=True)
    assert F.chat_tojson({"a": [1]}, indent="\t" * 70, separators=("," * 70, ":" * 70)) == (
        json.dumps({"a": [1]}, indent="\t" * 70, separators=("," * 70, ":" * 70))
    )


def test_chat_tojson_refuses_huge_indent() -> None:
    from minijinja_py.errors import LimitError

    with pytest.raises(LimitError):
        F.chat_tojson([[1, 2]] * 100, indent=10**6)
    with pytest.raises(LimitError):
        F.chat_tojson(list(range(100)), separators=("," * 10**6, ":"))


def test_environment_limit_is_used_when_present() -> None:
    from minijinja_py.errors import LimitError

    class Limits:
        max_string = 10

    class SmallEnv(FakeEnv):
        limits = Limits()

    with pytest.raises(LimitError, match=r"^a string of 11 characters exceeds max_string \(10\)$"):
        F.do_join(SmallEnv(), ["a"] * 6, "-")
    assert F.do_join(SmallEnv(), ["a"] * 5, "-") == "a-a-a-a-a"


def test_filters_and_tests_pickle_by_their_jinja2_names() -> None:
    # Environments are pickled for worker pools; functions pickle by qualified name.
    import pickle

    for name, func in [*F.FILTERS.items(), *T.TESTS.items(), ("chat", F.chat_tojson)]:
        assert pickle.loads(pickle.dumps(func)) is func, name
    assert F.chat_tojson.__qualname__ == "tojson"  # as transformers names it
