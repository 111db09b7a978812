"""Functions, methods, classes and plain objects print by their names alone, on every path that
turns a value into text: never a memory address or a module path (sandbox/opaque.py).

Jinja2 prints Python's own text (`<built-in method upper of str object at 0x7f...>`,
`<class 'jinja2.utils.Cycler'>`); an untrusted template learns from it where the interpreter's
objects lie and how the host is built.  conformance/reference.py reads Jinja2's text as ours
when it compares the two.
"""

from __future__ import annotations

import functools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minijinja_py import Environment, chat_environment


class _Plain:
    pass


def _caller_function(x):
    return x


CONTEXT = {
    "obj": _Plain(),
    "fn": _caller_function,
    "part": functools.partial(_caller_function, 1),
    "cls": _Plain,
    "builtin": len,
    "classes": {_Plain},
}

# (template, its exact output)
CASES = [
    ('{{ "x".upper }}', "<method upper of str>"),
    ('{{ ("x"|safe).escape }}', "<method escape of Markup>"),
    ("{{ {}.items }}", "<method items of dict>"),
    ("{% for x in [1] %}{{ loop.cycle }}{% endfor %}", "<method cycle of LoopContext>"),
    ("{{ range }}", "<function safe_range>"),
    ("{{ lipsum }}", "<function generate_lorem_ipsum>"),
    ("{{ cycler }}|{{ namespace }}", "<class 'Cycler'>|<class 'Namespace'>"),
    ("{{ joiner() }}|{{ cycler(1) }}", "<Joiner object>|<Cycler object>"),
    ("{{ self.b }}{% block b %}{% endblock %}", "<BlockReference object>"),
    ("{{ [1, 2]|select }}", "<generator object select_or_reject>"),
    ("{{ (1, 2)|reverse }}", "<reversed object>"),
    ("{{ obj }}|{{ fn }}|{{ part }}|{{ cls }}|{{ builtin }}",
     "<_Plain object>|<function _caller_function>|<function _caller_function>|<class '_Plain'>"
     "|<function len>"),
    # every way a value becomes text
    ('{{ "a".upper ~ "!" }}', "<method upper of str>!"),
    ('{{ "a".upper|string }}', "<method upper of str>"),
    ('{{ "a".upper|e }}', "&lt;method upper of str&gt;"),
    ('{{ "a".upper|upper }}', "<METHOD UPPER OF STR>"),
    ('{{ ["a".upper, obj]|join(", ") }}', "<method upper of str>, <_Plain object>"),
    ('{{ "%s|%r" % ("a".upper, ["a".upper]) }}', "<method upper of str>|[<method upper of str>]"),
    ('{{ "%(f)s"|format(f=fn) }}', "<function _caller_function>"),
    ('{{ "{}|{!r}|{:>22}".format(obj, fn, "a".upper) }}',
     "<_Plain object>|<function _caller_function>| <method upper of str>"),
    ('{{ "{a}".format_map({"a": cls}) }}', "<class '_Plain'>"),
    ('{{ ("<%s>"|safe) % "a".upper }}', "<&lt;method upper of str&gt;>"),
    ('{{ ("{}"|safe).format("a".upper) }}', "&lt;method upper of str&gt;"),
    ('{{ "a".upper is string }}|{{ "a".upper is lower }}', "False|True"),
    # containers print as Python prints them, with those items neutral
    ('{{ ["a".upper, {1: fn}, (obj,), classes] }}',
     "[<method upper of str>, {1: <function _caller_function>}, (<_Plain object>,), "
     "{<class '_Plain'>}]"),
    ("{{ {1: range}.items() }}", "dict_items([(1, <function safe_range>)])"),
    ('{{ namespace(a="x".upper) }}', "<Namespace {'a': <method upper of str>}>"),
    ('{{ {"a": "b".upper}|pprint }}', "{'a': <method upper of str>}"),
    ('{{ ["a".upper]|pprint }}', "[<method upper of str>]"),
    # a value that prints its own way keeps it
    ("{% macro m() %}{% endmacro %}{{ m }}", "<Macro 'm'>"),
    ("{% for x in [1] %}{{ loop }}{% endfor %}", "<LoopContext 1/1>"),
    ("{{ [1, 'a', None, 1.5] }}", "[1, 'a', None, 1.5]"),
]


@pytest.mark.parametrize("config", ["plain", "chat"])
@pytest.mark.parametrize(("source", "expected"), CASES, ids=[c[0] for c in CASES])
def test_opaque_values_print_by_name(config, source, expected):
    if config == "chat":
        # transformers' globals: printed by transformers' names
        expected = expected.replace("<class 'Namespace'>", "<class 'TemplateNamespace'>")
    env = Environment() if config == "plain" else chat_environment()
    assert env.from_string(source).render(**CONTEXT) == expected


def test_the_dict_global_prints_by_its_name():
    assert Environment().from_string("{{ dict }}").render() == "<class 'dict'>"
    assert chat_environment().from_string("{{ dict }}").render() == "<TemplateDict object>"


# What a template can reach that Python prints with an address or a module path.
OPAQUE = [
    '"a".upper', "range", "lipsum", "cycler", "joiner", "namespace", "dict", "joiner()",
    "cycler(1)", "{}.get", "[1].index", "obj", "fn", "part", "cls", "builtin",
    "[1]|map('string')", "[1]|reverse", "self.b",
]
SINKS = [
    "{{ @ }}", "{{ (@)|string }}", "{{ '%s' % (@,) }}", "{{ '%r' % [@] }}",
    "{{ [@]|join }}", "{{ '{}{!r}'.format(@, [@]) }}", "{{ [@, {1: @}]|pprint }}",
    "{{ (@)|e }}", "{{ ((@)|string)|urlize }}", "{{ [(@)] }}", "{{ (@) ~ '' }}",
]
_MACHINE = re.compile(r"0x[0-9a-f]{4,}|minijinja_py|markupsafe|jinja2|builtins\.|__main__|tests?\.")


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(OPAQUE), st.sampled_from(SINKS))
def test_no_printing_path_names_the_machine(value, sink):
    source = sink.replace("@", value) + "{% block b %}{% endblock %}"
    rendered = Environment().from_string(source).render(**CONTEXT)
    assert _MACHINE.search(rendered) is None, rendered


def test_only_the_quick_walk_of_plain_data_lets_a_structure_print_without_a_second_look():
    # check_printable's quick walk accepts plain containers, strings and scalars only: what it
    # measured prints as Python prints it (shown_str skips its own walk); anything else is
    # walked for opaque values, however often the same structure is printed.
    from minijinja_py.sandbox.measure import _printed_measure

    assert _printed_measure([{"a": [1, "x", None, 2.5]}], None)[3] is True
    assert _printed_measure([{"a": [len]}], None)[3] is False
    assert _printed_measure({"k": (_Plain(),)}, None)[3] is False
    out = Environment().from_string("{{ d }}|{{ d|string }}|{{ p }}|{{ p|string }}").render(
        d={"a": [1, "x"]}, p={"a": [len]}
    )
    assert out == (
        "{'a': [1, 'x']}|{'a': [1, 'x']}|{'a': [<function len>]}|{'a': [<function len>]}"
    )
