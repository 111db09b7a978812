"""Printing: how values become text. ``None``/``True``, floats as Python prints them, containers
as Python ``repr`` (nested, with quotes, unicode and escapes), context values of other Python
types, and Markup (``safe``/``escape``) with its escaping arithmetic.

Expected values were obtained from Jinja2 3.1.6 and are hard-coded
(``MINIJINJA_TESTS_REFERENCE=1`` makes ``check`` assert that Jinja2 still agrees).
Each case runs in the plain and the chat configuration (see engine_cases).
"""

from __future__ import annotations

from collections import Counter, OrderedDict, defaultdict, namedtuple
from types import MappingProxyType

import pytest
from engine_cases import (
    CHECK_REFERENCE,
    Err,
    Ours,
    agrees,
    check,
    expected_for,
    ours,
    outcome,
    params,
    reference,
)

inf = float("inf")
nan = float("nan")

V = {'none': None, 't': True, 'f': False, 'i': 42, 'big': 1000000000000000000000000000000, 'neg': -7, 'fl': 1.5, 'third': 0.3333333333333333, 'tenth': 0.1, 'whole': 2.0, 'tiny': 1e-07, 'huge': 1e+22, 'inf': inf, 'nan': nan, 'negzero': -0.0, 's': 'text', 'q': 'it\'s "quoted"', 'nl': 'a\nb', 'uni': 'é日本', 'emptys': '', 'l': [1, 'a', None, True, 1.0], 't2': (1, 'b'), 't1': (1,), 'd': {'k': 'v', 'n': [1, {'x': None}]}, 'nested': [[[]], {}, ()], 'strs': ["it's", 'say "hi"', 'a\nb', 'é', '\\', '\x00'], 'st': {3}, 'fs': frozenset({1}), 'by': b'bytes', 'emptyl': [], 'emptyd': {}, 'ints': [100000000000000000000, -1], 'floats': [0.1, 1e+100, inf], 'cx': (1+2j), 'rng': range(0, 3)}


# None, booleans, numbers, strings
SCALARS = [
    ('{{ none }}', V, 'None'),
    ('{{ t }}{{ f }}', V, 'TrueFalse'),
    ('{{ i }}', V, '42'),
    ('{{ big }}', V, '1000000000000000000000000000000'),
    ('{{ neg }}', V, '-7'),
    ('{{ fl }}', V, '1.5'),
    ('{{ third }}', V, '0.3333333333333333'),
    ('{{ tenth }}', V, '0.1'),
    ('{{ whole }}', V, '2.0'),
    ('{{ tiny }}', V, '1e-07'),
    ('{{ huge }}', V, '1e+22'),
    ('{{ inf }}', V, 'inf'),
    ('{{ -inf }}', V, '-inf'),
    ('{{ nan }}', V, 'nan'),
    ('{{ negzero }}', V, '-0.0'),
    ('{{ s }}', V, 'text'),
    ('{{ q }}', V, 'it\'s "quoted"'),
    ('{{ nl }}', V, 'a\nb'),
    ('{{ uni }}', V, 'é日本'),
    ('[{{ emptys }}]', V, '[]'),
    ('{{ by }}', V, "b'bytes'"),
    ('{{ cx }}', V, '(1+2j)'),
    ('{{ rng }}', V, 'range(0, 3)'),
    ('{{ 1.0 * 3 }}', V, '3.0'),
    ('{{ 2 / 3 }}', V, '0.6666666666666666'),
    ('{{ 1e15 + 0.3 }}', V, '1000000000000000.2'),
    ('{{ 100.0 }}', V, '100.0'),
    ('{{ 1e16 }}', V, '1e+16'),
    ('{{ 12345678912345678.0 }}', V, '1.2345678912345678e+16'),
    ('{{ 0.000123 }}', V, '0.000123'),
    ('{{ 1 / 3 * 3 }}', V, '1.0'),
    ('{{ 3 * 0.1 }}', V, '0.30000000000000004'),
    ('{{ 7 // 2 * 1.0 }}', V, '3.0'),
    ('{{ -1.0 * 0 }}', V, '-0.0'),
    ('{{ 2 ** 64 }}', V, '18446744073709551616'),
    ('{{ 2.0 ** 64 }}', V, '1.8446744073709552e+19'),
]

# lists, tuples, dicts, sets: Python repr
CONTAINERS = [
    ('{{ l }}', V, "[1, 'a', None, True, 1.0]"),
    ('{{ t2 }}', V, "(1, 'b')"),
    ('{{ t1 }}', V, '(1,)'),
    ('{{ d }}', V, "{'k': 'v', 'n': [1, {'x': None}]}"),
    ('{{ nested }}', V, '[[[]], {}, ()]'),
    ('{{ strs }}', V, '["it\'s", \'say "hi"\', \'a\\nb\', \'é\', \'\\\\\', \'\\x00\']'),
    ('{{ st }}', V, '{3}'),
    ('{{ fs }}', V, 'frozenset({1})'),
    ('{{ emptyl }}{{ emptyd }}', V, '[]{}'),
    ('{{ ints }}', V, '[100000000000000000000, -1]'),
    ('{{ floats }}', V, '[0.1, 1e+100, inf]'),
    ('{{ [none, true, false] }}', V, '[None, True, False]'),
    ("{{ ['é', '日'] }}", V, "['é', '日']"),
    ('{{ ["it\'s"] }}', V, '["it\'s"]'),
    ("{{ ['a\\nb'] }}", V, "['a\\nb']"),
    ("{{ {'a': 'b'} }}", V, "{'a': 'b'}"),
    ('{{ [1.0, 0.5, 1/3] }}', V, '[1.0, 0.5, 0.3333333333333333]'),
    ('{{ [[1, 2], (3, 4)] }}', V, '[[1, 2], (3, 4)]'),
    ('{{ (none,) }}', V, '(None,)'),
    ("{{ {'t': (1, [2])} }}", V, "{'t': (1, [2])}"),
    ('{{ [d] }}', V, "[{'k': 'v', 'n': [1, {'x': None}]}]"),
    ('{{ d.items() | list }}', V, "[('k', 'v'), ('n', [1, {'x': None}])]"),
    ('{{ d.keys() | list }}', V, "['k', 'n']"),
    ('{{ d.values() | list }}', V, "['v', [1, {'x': None}]]"),
    ('{{ d.items() }}', V, "dict_items([('k', 'v'), ('n', [1, {'x': None}])])"),
    ('{{ range(3) | list }}', V, '[0, 1, 2]'),
    ("{{ 'ab' | list }}", V, "['a', 'b']"),
    ("{{ [1, 2] | map('string') | list }}", V, "['1', '2']"),
    ("{{ l | join(',') }}", V, '1,a,None,True,1.0'),
    ("{{ l ~ '' }}", V, "[1, 'a', None, True, 1.0]"),
    ('{{ l | string }}', V, "[1, 'a', None, True, 1.0]"),
    ('{{ d | string }}', V, "{'k': 'v', 'n': [1, {'x': None}]}"),
    ('{{ [cx] }}', V, '[(1+2j)]'),
    ('{{ [by] }}', V, "[b'bytes']"),
    ('{{ namespace(a=1) }}', V, "<Namespace {'a': 1}>"),
]

# Markup: safe, escape and the escaping arithmetic
MARKUP = [
    ("{{ '<b>' | safe }}", V, '<b>'),
    ("{{ '<b>' | e }}", V, '&lt;b&gt;'),
    ("{{ '<b>' | escape }}", V, '&lt;b&gt;'),
    ('{{ \'&"\\\'\' | e }}', V, '&amp;&#34;&#39;'),
    ("{{ ('<a>' | e) ~ '<b>' }}", V, '&lt;a&gt;<b>'),
    ("{{ '<b>' ~ ('<a>' | e) }}", V, '<b>&lt;a&gt;'),
    ("{{ ('<a>' | e) + '<b>' }}", V, '&lt;a&gt;&lt;b&gt;'),
    ("{{ '<b>' + ('<a>' | e) }}", V, '&lt;b&gt;&lt;a&gt;'),
    ("{{ ['<a>' | e] }}", V, "[Markup('&lt;a&gt;')]"),
    ("{{ ['<a>' | safe] }}", V, "[Markup('<a>')]"),
    ("{{ ('<' | safe) | e }}", V, '<'),
    ("{{ ('<' | e) | e }}", V, '&lt;'),
    ("{{ ('<b>%s</b>' | safe) % '<' }}", V, '<b>&lt;</b>'),
    ("{{ ('<b>%s</b>' | safe) % ('<' | safe) }}", V, '<b><</b>'),
    ("{{ ('%s' | safe) | format('<') }}", V, '&lt;'),
    ("{{ '%s' | format('<' | e) }}", V, '&lt;'),
    ("{{ 'x' | safe | upper }}", V, 'X'),
    ("{{ '<a>' | e | length }}", V, '9'),
    ("{{ '<a>' | e | string }}", V, '&lt;a&gt;'),
    ("{{ ('<a>' | e) * 2 }}", V, '&lt;a&gt;&lt;a&gt;'),
    ("{{ '<a>' | e | replace('&', 'X') }}", V, 'Xlt;aXgt;'),
    ("{{ ('<a>' | safe) | replace('a', '<') }}", V, '<<>'),
    ("{{ ('<i>x</i>' | safe) | striptags }}", V, 'x'),
    ("{{ ('a<b' | e) is string }}", V, 'True'),
    ("{{ ('a' | safe) == 'a' }}", V, 'True'),
    ("{{ '<a>' | e | upper }}", V, '&LT;A&GT;'),
    ("{{ '<a>' | e | lower | title }}", V, '&lt;a&gt;'),
    ("{{ ['<'] | join('<' | safe) }}", V, '<'),
    ("{{ ['<' | e, '>'] | join }}", V, '&lt;>'),
    ("{{ ['<', '>'] | join('&' | e) }}", V, '<&amp;>'),
    ("{{ 'a' | e | list }}", V, "['a']"),
    ("{{ ('<' | e)[0] }}", V, '&'),
    ("{{ ('<a>' | safe)[1:] }}", V, 'a>'),
    ("{{ '<a>' | forceescape }}", V, '&lt;a&gt;'),
    ("{{ ('<a>' | safe) | forceescape }}", V, '&lt;a&gt;'),
    ("{{ '<a>' | e | tojson }}", V, {'plain': '"\\u0026lt;a\\u0026gt;"', 'chat': '"&lt;a&gt;"'}),
    ("{{ {'a': '<' | safe} | tojson }}", V, {'plain': '{"a": "\\u003c"}', 'chat': '{"a": "<"}'}),
    ('{{ none | e }}', V, 'None'),
    ('{{ 1 | e }}', V, '1'),
    ('{{ [1] | e }}', V, '[1]'),
    ("{{ '<a>' | urlencode }}", V, '%3Ca%3E'),
    ("{{ ('<' | e).unescape() }}", V, '<'),
    ("{{ ('<i>a</i>' | safe).striptags() }}", V, 'a'),
    ('{% set x %}<b>{% endset %}{{ x }}{{ x | e }}', V, '<b>&lt;b&gt;'),
    ('{% macro m() %}<b>{% endmacro %}{{ m() | e }}', V, '&lt;b&gt;'),
    ("{{ ('<' | e).nope }}", V, ''),
    ("{{ ('<' | e).nope.x }}", V, Err(cls='UndefinedError', message="'markupsafe.Markup object' has no attribute 'nope'")),
    ("{{ ('<' | e).__class__ }}", V, ''),
]


Point = namedtuple("Point", "x y")


def python_values():
    """Context values of other Python types; built afresh for every render (iterators)."""
    return {
        "od": OrderedDict([("b", 1), ("a", 2)]),
        "dd": defaultdict(int, {"k": 1}),
        "mp": MappingProxyType({"m": 1}),
        "nt": Point(1, 2),
        "nts": [Point(1, 2), Point(3, 4)],
        "g": (i for i in range(3)),
        "st": {3, 1, 2},
        "fz": frozenset([5]),
        "cnt": Counter("aab"),
        "it": iter([1, 2]),
        "rng": range(3),
        "bs": b"ab",
        "ba": bytearray(b"x"),
    }


PYTHON_VALUES = [
    ('{% for k in od %}{{ k }}{% endfor %}', 'ba'),
    ('{{ od }}', repr(OrderedDict([("b", 1), ("a", 2)]))),  # Python 3.12 prints it as a dict
    ('{{ od.b }}', '1'),
    ('{{ od | dictsort }}', "[('a', 2), ('b', 1)]"),
    # a read never changes the caller's data: Jinja2 prints 0 and adds the key to the defaultdict
    ('{{ dd.k }}{{ dd.missing }}{{ dd|length }}', Ours('11')),
    ("{{ dd['k'] }}{{ dd['missing'] }}{{ dd|length }}", Ours('11')),
    ('{{ dd }}', "defaultdict(<class 'int'>, {'k': 1})"),
    ('{{ mp.m }}{{ mp | length }}', '11'),
    ('{{ mp }}', "{'m': 1}"),
    ('{{ nt.x }}{{ nt[1] }}{{ nt }}', '12Point(x=1, y=2)'),
    ('{% for a, b in nts %}{{ a }}{{ b }}{% endfor %}', '1234'),
    ('{{ nts | map(attribute="y") | list }}', '[2, 4]'),
    ('{{ nts | sort(attribute="y", reverse=true) | first }}', 'Point(x=3, y=4)'),
    ('{% for x in g %}{{ loop.length }}{{ x }}{% endfor %}', '303132'),
    ('{% for x in g %}{{ x }}{% endfor %}|{% for x in g %}{{ x }}{% endfor %}', '012|'),
    ('{% for x in g %}{{ loop.last }}{% endfor %}', 'FalseFalseTrue'),
    ('{% for x in g %}{{ loop.nextitem }}{% endfor %}', '12'),
    ('{{ g | list }}{{ g | list }}', '[0, 1, 2][]'),
    ('{% for x in st %}{{ x }}{% endfor %}', '123'),
    ('{{ st }}', '{1, 2, 3}'),
    ('{{ st | sort }}', '[1, 2, 3]'),
    ('{{ fz }}', 'frozenset({5})'),
    ('{{ cnt }}', "Counter({'a': 2, 'b': 1})"),
    ('{{ cnt.a }}', '2'),
    ('{{ it | list }}', '[1, 2]'),
    ('{% for x in it %}{{ loop.revindex }}{% endfor %}', '21'),
    ('{{ rng }}', 'range(0, 3)'),
    ('{{ rng | list }}', '[0, 1, 2]'),
    ('{{ bs }}', "b'ab'"),
    ('{{ bs | length }}', '2'),
    ('{% for b in bs %}{{ b }}{% endfor %}', '9798'),
    ('{{ ba }}', "bytearray(b'x')"),
    ('{{ nt | tojson }}', '[1, 2]'),
    ('{{ od | tojson }}', {'plain': '{"a": 2, "b": 1}', 'chat': '{"b": 1, "a": 2}'}),
    ('{{ st | length }}', '3'),
    ('{{ 3 in st }}', 'True'),
    ('{{ od.keys() | list }}', "['b', 'a']"),
    ('{{ dd.items() | list }}', "[('k', 1)]"),
    ('{{ nt._asdict() }}', Err(cls='SecurityError', message="access to attribute '_asdict' of 'Point' object is unsafe.")),
    ('{{ nt._fields }}', ''),
    ('{{ nt.count(1) }}', '1'),
    ('{{ nt.index(2) }}', '1'),
    # the sandbox's allow-list: Jinja2 lets templates call Counter.most_common
    ("{{ cnt.most_common(1) }}", Ours(Err("SecurityError", "access to attribute 'most_common' of 'Counter' object is unsafe."))),
]


@pytest.mark.parametrize(("source", "expected"), PYTHON_VALUES)
def test_python_values_from_the_context(source, expected):
    for config in ("plain", "chat"):
        want = expected_for(expected, config)
        if CHECK_REFERENCE and not isinstance(want, Ours):
            assert agrees(outcome(reference(config), source, python_values()), want)
        check(config, source, python_values(), expected, check_reference=False)


LAZY = [
    ("{{ range(3) | map('string') }}", "<generator object sync_do_map>"),
    ("{{ [1, 2] | select }}", "<generator object select_or_reject>"),
    ("{{ [1, 2] | reverse }}", "<list_reverseiterator object>"),
    ("{{ {'a': 1} | items }}", "<generator object do_items>"),
    ("{{ [1, 2] | batch(1) }}", "<generator object do_batch>"),
]


@pytest.mark.parametrize(("source", "expected"), LAZY)
def test_lazy_filter_results_print_without_an_address(source, expected):
    # Jinja2 prints the same text with " at 0x7f..." (sandbox/opaque.py): no address here
    for config in ("plain", "chat"):
        assert ours(config).from_string(source).render() == expected


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(SCALARS))
def test_scalars(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(CONTAINERS))
def test_containers(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(MARKUP))
def test_markup(configs, source, context, expected):
    check(configs, source, context, expected)
