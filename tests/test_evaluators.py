"""The specialised evaluators the compiler picks for common shapes give the general path's
results: constant comparisons (also inside ``if``), constant subscripts and attribute lookups
on a variable, ``+`` and ``~`` chains with literal pieces, names read straight from the
context, and macros called with positional arguments only, and chains of ``if``/``elif``
comparing one key with strings, answered by one lookup.

Expected values were obtained from Jinja2 3.1.6 and are hard-coded
(``MINIJINJA_TESTS_REFERENCE=1`` makes ``check`` assert that Jinja2 still agrees).
Each case runs in the plain and the chat configuration (see engine_cases).
"""

from __future__ import annotations

import pytest
from engine_cases import Err, check, params

LONG = "w" * 2000  # past the length below which strings are compared and joined inline

COMPARISONS = [
    ("{% if x == 'a' %}y{% else %}n{% endif %}", None, "n"),
    ("{% if x != 'a' %}y{% endif %}", {"x": LONG}, "y"),
    ("{% if x == 'a' %}y{% else %}n{% endif %}", {"x": ["a"]}, "n"),
    ("{% if x == 1 %}y{% endif %}", {"x": True}, "y"),
    ("{% if x == 1 %}y{% endif %}", {"x": 1.0}, "y"),
    ("{{ x == 'a' }}{{ x != 'a' }}", {"x": "a"}, "TrueFalse"),
    ("{% if x.y.z == 1 %}y{% endif %}", None, Err("UndefinedError", "'x' is undefined")),
    ("{% if x.y == 1 %}y{% endif %}", None, Err("UndefinedError", "'x' is undefined")),
]

LOOKUPS = [
    ("{{ m['missing'] is defined }}{{ m['role'] }}", {"m": {"role": "user"}}, "Falseuser"),
    ("{{ xs[5] is defined }}{{ xs[0] }}{{ xs[-1] }}", {"xs": [1, 2, 3]}, "False13"),
    ("{{ t[0] }}{{ d[1] }}{{ s[0] }}", {"t": (7, 8), "d": {1: "one"}, "s": "str"}, "7ones"),
    ("{{ d['a'] }}", {"d": 5}, ""),
    (
        "{{ m.role }}{{ m.items is defined }}{{ m.missing is defined }}",
        {"m": {"role": "user", "items": 1}},
        "userTrueFalse",
    ),
    ("{{ loop is defined }}{% for i in [1] %}{% endfor %}{{ i is defined }}", None, "FalseFalse"),
    ("{{ f() }}", None, Err("UndefinedError", "'f' is undefined")),
    # a loop's counters and a namespace's attributes, read in the evaluator
    (
        "{% for x in 'ab' %}{{ loop.index0 }}{{ loop.last }}{{ loop.cycle('p', 'q') }}"
        "{{ loop.nope is defined }}{{ [loop][0].first }}{% endfor %}",
        None,
        "0FalsepFalseTrue1TrueqFalseFalse",
    ),
    (
        "{% set ns = namespace(a=1, inner=namespace(x=3)) %}{{ ns.a }}{{ ns.b is defined }}"
        "{% set ns.b = 2 %}{{ ns.b }}{{ ns.inner.x }}{{ ns.inner.y is defined }}",
        None,
        "1False23False",
    ),
]

ADDITION = [
    (
        "{{ 'a' + x + 'b' }}",
        {"x": 1},
        Err("TemplateRuntimeError", 'can only concatenate str (not "int") to str'),
    ),
    ("{{ (s + 'x' + s) | length }}", {"s": LONG}, "4001"),
    ("{{ 'a' + 'b' + x }}", {"x": "c"}, "abc"),
    # text chains (run/texts.py): one to three operands besides string constants, joined at once
    ("{{ '<' + a + '>' }}", {"a": "x"}, "<x>"),
    ("{{ a + '|' + b }}", {"a": "x", "b": "y"}, "x|y"),
    ("{{ '<' + a + '|' + b + '|' + c + '>' + '\n' }}", {"a": "x", "b": "y", "c": "z"}, "<x|y|z>\n"),
    ("{{ a + b + c }}", {"a": 1, "b": 2, "c": 3}, "6"),
    ("{{ a + b + c }}|{{ a + b + c + d }}", {"a": "w", "b": "x", "c": "y", "d": "z"}, "wxy|wxyz"),
    ("{{ 1 + a + 2 }}", {"a": 3}, "6"),
    (
        "{{ '<' + a + '|' + b + '>' }}",
        {"a": "x", "b": 2},
        Err("TemplateRuntimeError", 'can only concatenate str (not "int") to str'),
    ),
    ("{{ '<' + u + '>' }}", None, Err("UndefinedError", "'u' is undefined")),
    # a long text at each place: added (and charged) as AddChain adds it
    ("{{ ('<' + a + '|' + b + '|' + c + '>')|length }}", {"a": LONG, "b": "y", "c": "z"}, "2006"),
    ("{{ ('<' + a + '|' + b + '|' + c + '>')|length }}", {"a": "x", "b": LONG, "c": "z"}, "2006"),
    ("{{ ('<' + a + '|' + b + '|' + c + '>')|length }}", {"a": "x", "b": "y", "c": LONG}, "2006"),
    # markup escapes what is added to it; each operand is read once, in order
    (
        "{% set m = '&'|safe %}{% set c = cycler('a', 'b', 'c') %}"
        "{{ '<' + m + '|' + c.next() + '>' }}{{ c.current }}",
        None,
        "&lt;&|a&gt;b",
    ),
]

CONCATENATION = [
    ("{{ '<' ~ a ~ '>' }}", {"a": 1}, "<1>"),
    ("{{ a ~ b }}", {"a": None, "b": [1]}, "None[1]"),
    ("{{ '<' ~ a ~ '|' ~ b ~ c ~ '>' }}", {"a": "x", "b": 2, "c": True}, "<x|2True>"),
    ("{{ a ~ b ~ c ~ d }}|{{ 1 ~ a }}", {"a": 1, "b": 2, "c": 3, "d": 4}, "1234|11"),
    ("{{ '<' ~ a ~ '>' }}", None, "<>"),
    ("{{ ('<' ~ a ~ b)|length }}", {"a": LONG, "b": LONG}, "4001"),
    ("{{ '<' ~ f() ~ '>' }}", None, Err("UndefinedError", "'f' is undefined")),
]

MACRO_CALLS = [
    (
        "{% macro m(a, b=a ~ '!') %}{{ a }}{{ b }}{% endmacro %}"
        "{{ m('x') }}{{ m('x', 'y') }}{{ m(b='z', a='w') }}",
        None,
        "xx!xywz",
    ),
    (
        "{% macro m(a) %}{{ a }}{% endmacro %}{{ m() }}|{{ m(1, 2) }}",
        None,
        Err("TemplateRuntimeError", "macro 'm' takes not more than 1 argument(s)"),
    ),
    ("{% macro m(a) %}{{ varargs }}{% endmacro %}{{ m(1, 2) }}", None, "(2,)"),
    (
        "{% macro m() %}{{ caller() }}{% endmacro %}{% call m() %}c{% endcall %}{{ m.caller }}",
        None,
        "cTrue",
    ),
]


ROLE_CHAIN = (
    "{% for m in ms %}{% if m['role'] == 'system' %}S{% elif m.role == 'user' %}U{{ m.content }}"
    "{% elif m['role'] == 'user' %}twice{% elif m['role'] == 'assistant' %}A{% else %}?{% endif %}"
    "|{% endfor %}"
)

ROLE_CHAINS = [
    # every branch, the else, and each value the chain itself must answer: a missing key, a
    # long string, a number, None
    (
        ROLE_CHAIN,
        {
            "ms": [
                {"role": "system"},
                {"role": "user", "content": "c"},
                {"role": "assistant"},
                {"role": "tool"},
                {},
                {"role": LONG},
                {"role": 5},
                {"role": None},
            ]
        },
        "S|Uc|A|?|?|?|?|?|",
    ),
    # the value is not a plain string: markup, which equals the text it holds
    (
        "{% set m = {'role': 'user'|safe} %}"
        "{% if m['role'] == 'system' %}S{% elif m['role'] == 'user' %}U{% endif %}",
        None,
        "U",
    ),
    # the variable is not a dict: a namespace's attribute, a list's missing item
    (
        "{% set m = namespace(role='user') %}"
        "{% if m.role == 'system' %}S{% elif m.role == 'user' %}U{% endif %}",
        None,
        "U",
    ),
    (
        "{% for m in [[1]] %}{% if m['role'] == 'a' %}A{% elif m['role'] == 'b' %}B"
        "{% else %}E{% endif %}{% endfor %}",
        None,
        "E",
    ),
    # a variable assigned somewhere but not where the chain runs
    (
        "{% if false %}{% set m = 1 %}{% endif %}"
        "{% if m.role == 'a' %}A{% elif m.role == 'b' %}B{% else %}E{% endif %}",
        None,
        Err("UndefinedError", "'m' is undefined"),
    ),
    # a test of another shape, or of another key, ends the run of tests read at once
    (
        "{% for m in ms %}{% if m.role == 'a' %}A{% elif m.role == 'b' and m.x %}B"
        "{% elif m.role == 'c' %}C{% elif m.type == 'd' %}D{% elif m.role == 'e' %}E"
        "{% else %}-{% endif %}{% endfor %}",
        {
            "ms": [
                {"role": "a"},
                {"role": "b", "x": 1},
                {"role": "b"},
                {"role": "c"},
                {"role": "z", "type": "d"},
                {"role": "e"},
                {"role": "z"},
            ]
        },
        "AB-CDE-",
    ),
    # tests joined by `or`: each constant names its test's branch, the first test naming it wins;
    # a test reading two keys ends the run of tests read at once
    (
        "{% for m in ms %}{% if m.role == 'user' or m['role'] == 'system' %}U"
        "{% elif m.role == 'assistant' or m.role == 'tool' or m.role == 'user' %}A"
        "{% elif m.role == 'x' or m.other == 'y' %}X{% else %}-{% endif %}{% endfor %}",
        {
            "ms": [
                {"role": "user"},
                {"role": "system"},
                {"role": "assistant"},
                {"role": "tool"},
                {"role": "x"},
                {"role": "z", "other": "y"},
                {"role": "z"},
                {"role": LONG},
            ]
        },
        "UUAAXX--",
    ),
    # two runs on two keys, one after the other: each read at once
    (
        "{% for m in ms %}{% if m.role == 'a' %}A{% elif m.role == 'b' %}B{% elif m.kind == 'c' %}C"
        "{% elif m['kind'] == 'd' %}D{% else %}-{% endif %}{% endfor %}",
        {
            "ms": [
                {"role": "a", "kind": "d"},
                {"role": "b"},
                {"role": "z", "kind": "c"},
                {"role": "z", "kind": "d"},
                {"role": "z", "kind": "z"},
                {"kind": "c"},
            ]
        },
        "ABCD-C",
    ),
    # a loop variable that shadows another of the same name
    (
        "{% set m = {'role': 'a'} %}{% for m in ms %}{% if m.role == 'a' %}A{% elif m.role == 'b' %}"
        "B{% endif %}{% endfor %}{% if m.role == 'a' %}a{% elif m.role == 'b' %}b{% endif %}",
        {"ms": [{"role": "b"}]},
        "Ba",
    ),
]


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(COMPARISONS))
def test_constant_comparisons(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(ROLE_CHAINS))
def test_role_chains(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(LOOKUPS))
def test_lookups(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(ADDITION))
def test_addition_chains(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(CONCATENATION))
def test_concatenation(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(MACRO_CALLS))
def test_macro_calls(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(
    ("source", "evaluator"),
    [
        ("{% if x == 'a' %}y{% endif %}", "IfCompareConst"),
        ("{% for m in ms %}{% if m.role == 'a' %}{% elif m['role'] == 'b' %}{% endif %}{% endfor %}", "IfSwitch"),
        ("{% for m in ms %}{% if m.role == 'a' or m.role == 'c' %}{% elif m.role == 'b' %}{% endif %}{% endfor %}", "IfSwitch"),
        ("{{ x != 1 }}", "CompareConst"),
        ("{% for m in ms %}{{ m['role'] }}{% endfor %}", "NameConstItem"),
        ("{% for m in ms %}{{ m.role }}{% endfor %}", "NameKeyOrAttr"),
        ("{{ m['role'] }}", "GetConstItem"),
        ("{{ m.role }}", "GetKeyOrAttr"),
        ("{{ 'a' + x + 'b' }}", "TextChain1"),
        ("{{ a + '|' + b }}", "TextChain2"),
        ("{{ a + b + c }}", "TextChain3"),
        ("{{ a + b + c + d }}", "AddChain"),
        ("{{ 1 + x + 2 }}", "AddChain"),
        ("{{ 'a' ~ x }}", "TextConcat1"),
        ("{{ x ~ y }}", "TextConcat2"),
        ("{{ x ~ '|' ~ y ~ z }}", "TextConcat3"),
        ("{{ w ~ x ~ y ~ z }}", "Concat"),
        ("{{ x is string }}{{ x is mapping }}", "IsInstance"),
        ("{{ x is none }}", "IsNone"),
        ("{{ x }}", "ContextName"),
        ("{% set x = 1 %}{{ x }}", "Name"),
    ],
)
def test_the_compiler_picks_the_specialised_evaluator(source, evaluator):
    """The cases above exercise these evaluators only if the compiler chooses them."""
    import minijinja_py

    root = minijinja_py.Environment().from_string(source)._run
    found = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, (tuple, list)):
            stack.extend(node)
            continue
        found.add(type(node).__name__)
        for cls in type(node).__mro__:
            # (a class compiled by mypyc lists its attributes in __mypyc_attrs__)
            for slot in getattr(cls, "__slots__", ()) or getattr(cls, "__mypyc_attrs__", ()):
                child = getattr(node, slot, None)
                if type(child).__module__.startswith("minijinja_py") or isinstance(child, tuple):
                    stack.append(child)
    assert evaluator in found


FOLDED = [
    # a folded list of tuples: a new list per evaluation, its tuples shared (they cannot change)
    (
        "{% for f, n in [('max', 'Maximum'), ('min', 'Minimum')] %}{{ f }}={{ n }};{% endfor %}",
        None,
        "max=Maximum;min=Minimum;",
    ),
    ("{% for i in [1, 2] %}{% set l = [(1, 2)] %}{{ l[0] is sameas t }}{% endfor %}", None, "FalseFalse"),
    ("{% set a = [[1], {'k': [2]}] %}{{ a }}{{ a[1]['k'] }}", None, "[[1], {'k': [2]}][2]"),
    ("{{ ([1, 2] + [3])|length }}{{ {'a': (1, [2])}['a'] }}", None, "3(1, [2])"),
]


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(FOLDED))
def test_folded_containers(configs, source, context, expected):
    check(configs, source, context, expected)


def test_a_folded_container_is_new_at_each_evaluation_down_to_its_mutable_parts():
    from minijinja_py.run.expressions import FreshConst, fresh

    flat = FreshConst([("a", "b"), "c", 1])
    nested = FreshConst({"k": [1], "t": ("x", [2])})
    assert (flat.shallow, nested.shallow) == (True, False)
    copy = fresh(nested.value)
    assert copy == nested.value
    assert copy["k"] is not nested.value["k"]
    assert copy["t"] is not nested.value["t"] and copy["t"][1] is not nested.value["t"][1]
    assert fresh(flat.value[0]) is flat.value[0]  # a tuple of constants is shared


def test_a_concatenation_with_literal_pieces_is_checked_against_a_small_max_string():
    from minijinja_py import Environment
    from minijinja_py.errors import LimitError
    from minijinja_py.sandbox.limits import Limits

    source = "{{ 'abc' ~ x ~ 1 }}"
    assert Environment(limits=Limits(max_string=6)).from_string(source).render(x="de") == "abcde1"
    with pytest.raises(LimitError) as caught:
        Environment(limits=Limits(max_string=5)).from_string(source).render(x="de")
    assert caught.value.message == "a string of 6 characters exceeds max_string (5)"
