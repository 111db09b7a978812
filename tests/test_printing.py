"""Printing: how values become text. ``None``/``True``, floats as Python prints them, containers
as Python ``repr`` (nested, with quotes, unicode and escapes), context values of other Python
types, and Markup (``safe``/``escape``) with its escaping arithmetic.

Expected values were obtained from Jinja2 3.1.6 and are hard-coded
(``MINIJINJA_TESTS_REFERENCE=1`` makes ``check`` assert that Jinja2 still agrees).
Each case runs in the plain and the chat configuration (see engine_cases).
"""

from __future__ import annotations

import re

import pytest
from engine_cases import Err, check, ours, params

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


LAZY = [
    ("{{ range(3) | map('string') }}", "<generator object sync_do_map at 0x@>"),
    ("{{ [1, 2] | select }}", "<generator object select_or_reject at 0x@>"),
    ("{{ [1, 2] | reverse }}", "<list_reverseiterator object at 0x@>"),
    ("{{ {'a': 1} | items }}", "<generator object do_items at 0x@>"),
    ("{{ [1, 2] | batch(1) }}", "<generator object do_batch at 0x@>"),
]


@pytest.mark.parametrize(("source", "expected"), LAZY)
def test_lazy_filter_results_print_like_jinja2s(source, expected):
    # Jinja2 prints the same reprs, with another address
    for config in ("plain", "chat"):
        rendered = ours(config).from_string(source).render()
        assert re.sub("0x[0-9a-f]+", "0x@", rendered) == expected


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(SCALARS))
def test_scalars(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(CONTAINERS))
def test_containers(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(MARKUP))
def test_markup(configs, source, context, expected):
    check(configs, source, context, expected)
