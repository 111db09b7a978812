"""Statements: if/elif/else, for (unpacking, else, inline if, recursive, loop.*), break/continue,
set (names, tuples, namespace attributes, blocks with filters), macros (defaults, varargs, kwargs,
caller), call blocks, filter blocks, with, generation, raw, comments.

Expected values were obtained from Jinja2 3.1.6 and are hard-coded
(``MINIJINJA_TESTS_REFERENCE=1`` makes ``check`` assert that Jinja2 still agrees).
Each case runs in the plain and the chat configuration (see engine_cases);
where they differ (trim_blocks/lstrip_blocks, loop controls) the expectation is per configuration.
"""

from __future__ import annotations

import pytest
from engine_cases import Err, check, ours, params

ITEMS = {'items': ['a', 'b', 'c'], 'pairs': [['x', 1], ['y', 2]], 'd': {'k1': 'v1', 'k2': 'v2'}, 'empty': [], 'n': 3}
TREE = {'tree': [{'name': 'a', 'children': [{'name': 'a1', 'children': []}, {'name': 'a2', 'children': [{'name': 'a2x', 'children': []}]}]}, {'name': 'b', 'children': []}]}
ROLES = {'messages': [{'role': 'system', 'content': 'S'}, {'role': 'user', 'content': 'U1'}, {'role': 'assistant', 'content': 'A1'}, {'role': 'user', 'content': 'U2'}]}
TREE2 = {'tree': [{'n': 'a', 'c': [{'n': 'b', 'c': []}, {'n': 'c', 'c': [{'n': 'd', 'c': []}]}]}, {'n': 'e', 'c': []}]}
CHAT = {'messages': [{'role': 'system', 'content': 'Be brief.'}, {'role': 'user', 'content': '  Hi there  '}, {'role': 'assistant', 'content': 'Hello!', 'tool_calls': [{'function': {'name': 'get', 'arguments': {'q': 'x', 'n': 1}}}]}, {'role': 'tool', 'content': '{"ok": true}'}, {'role': 'user', 'content': [{'type': 'text', 'text': 'Look'}, {'type': 'image'}]}], 'tools': [{'type': 'function', 'function': {'name': 'get', 'description': 'Get <things>', 'parameters': {'type': 'object', 'properties': {'q': {'type': 'string'}}}}}], 'add_generation_prompt': True, 'bos_token': '<s>', 'eos_token': '</s>'}
ABC = {'messages': ['a', 'b', 'c']}


# if / elif / else
IF = [
    ('{% if true %}y{% endif %}', None, 'y'),
    ('{% if false %}y{% endif %}', None, ''),
    ('{% if false %}y{% else %}n{% endif %}', None, 'n'),
    ('{% if 0 %}a{% elif 1 %}b{% else %}c{% endif %}', None, 'b'),
    ("{% if 0 %}a{% elif 0 %}b{% elif '' %}c{% else %}d{% endif %}", None, 'd'),
    ('{% if 0 %}a{% elif 0 %}b{% endif %}', None, ''),
    ('{% if [] %}a{% elif {} %}b{% elif [0] %}c{% endif %}', None, 'c'),
    ('{% if undefined_thing %}y{% else %}n{% endif %}', None, 'n'),
    ('{% if undefined_thing.x %}y{% endif %}', None, Err(cls='UndefinedError', message="'undefined_thing' is undefined")),
    ('{% if none %}y{% else %}n{% endif %}', None, 'n'),
    ('{% if 1 %}{% if 0 %}a{% else %}b{% endif %}{% endif %}', None, 'b'),
    ('{% if x is defined and x > 1 %}a{% else %}b{% endif %}', None, 'b'),
    ('{% if 1 in [1] %}in{% endif %}', None, 'in'),
    ('{% if not items %}empty{% endif %}', None, 'empty'),
    ('{% if n > 2 %}big{% elif n > 1 %}mid{% else %}small{% endif %}', ITEMS, 'big'),
    ('{% if items|length == 3 %}three{% endif %}', ITEMS, 'three'),
    ('{% if true %}\n  a\n{% endif %}\nb', None, {'plain': '\n  a\n\nb', 'chat': '  a\nb'}),
    ('{% if true %}\n  {% if true %}\n    x\n  {% endif %}\n{% endif %}\n', None, {'plain': '\n  \n    x\n  \n', 'chat': '    x\n'}),
    ('{% if false %}\na\n{% elif true %}\nb\n{% else %}\nc\n{% endif %}\n', None, {'plain': '\nb\n', 'chat': 'b\n'}),
    ('{% if true %}a{% else %}b{% else %}c{% endif %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'else'. Jinja was looking for the following tags: 'endif'. The innermost block that needs to be closed is 'if'.")),
    ('{% if true %}a{% elif %}b{% endif %}', None, Err(cls='TemplateSyntaxError', message="Expected an expression, got 'end of statement block'")),
    ('{% if %}a{% endif %}', None, Err(cls='TemplateSyntaxError', message="Expected an expression, got 'end of statement block'")),
    ('{% if true %}a{% endif foo %}', None, Err(cls='TemplateSyntaxError', message="expected token 'end of statement block', got 'foo'")),
]

# for loops: unpacking, else, inline if, iteration over strings and dicts
FOR = [
    ('{% for x in items %}{{ x }}{% endfor %}', ITEMS, 'abc'),
    ('{% for x in items %}{{ x }},{% endfor %}', ITEMS, 'a,b,c,'),
    ('{% for k, v in pairs %}{{ k }}={{ v }};{% endfor %}', ITEMS, 'x=1;y=2;'),
    ('{% for (k, v) in pairs %}{{ k }}{{ v }}{% endfor %}', ITEMS, 'x1y2'),
    ('{% for k, v in d.items() %}{{ k }}:{{ v }} {% endfor %}', ITEMS, 'k1:v1 k2:v2 '),
    ('{% for k in d %}{{ k }}{% endfor %}', ITEMS, 'k1k2'),
    ('{% for x in empty %}{{ x }}{% else %}none{% endfor %}', ITEMS, 'none'),
    ('{% for x in items %}{{ x }}{% else %}none{% endfor %}', ITEMS, 'abc'),
    ('{% for x in undefined_thing %}{{ x }}{% else %}none{% endfor %}', None, 'none'),
    ("{% for x in items if x != 'b' %}{{ x }}{% endfor %}", ITEMS, 'ac'),
    ("{% for x in items if x != 'b' %}{{ loop.index }}{{ x }}{% endfor %}", ITEMS, '1a2c'),
    ('{% for x in items if false %}{{ x }}{% else %}E{% endfor %}', ITEMS, 'E'),
    ("{% for x in items if x == 'c' %}{{ loop.length }}{{ loop.first }}{{ loop.last }}{% endfor %}", ITEMS, '1TrueTrue'),
    ("{% for c in 'abc' %}{{ c }}-{% endfor %}", None, 'a-b-c-'),
    ('{% for i in range(3) %}{{ i }}{% endfor %}', None, '012'),
    ('{% for a, b in [(1, 2), (3, 4)] %}{{ a + b }}{% endfor %}', None, '37'),
    ('{% for a, (b, c) in [(1, (2, 3))] %}{{ a }}{{ b }}{{ c }}{% endfor %}', None, '123'),
    ('{% for a, b in [(1, 2, 3)] %}{{ a }}{% endfor %}', None, Err(cls='TemplateRuntimeError', message='too many values to unpack (expected 2)')),
    ('{% for a, b, c in [(1, 2)] %}{{ a }}{% endfor %}', None, Err(cls='TemplateRuntimeError', message='not enough values to unpack (expected 3, got 2)')),
    ('{% for a, b in [1] %}{{ a }}{% endfor %}', None, Err(cls='TemplateRuntimeError', message='cannot unpack non-iterable int object')),
    ('{% for x in 42 %}{{ x }}{% endfor %}', None, Err(cls='TemplateRuntimeError', message="'int' object is not iterable")),
    ('{% for x in none %}{{ x }}{% endfor %}', None, Err(cls='TemplateRuntimeError', message="'NoneType' object is not iterable")),
    ('{% for x in [1, 2] %}{% for y in [3, 4] %}{{ x }}{{ y }} {% endfor %}{% endfor %}', None, '13 14 23 24 '),
    ('{% for x in [[1, 2], [3]] %}{% for y in x %}{{ y }}{% endfor %}|{% endfor %}', None, '12|3|'),
    ('{% for x in [3, 1, 2] | sort %}{{ x }}{% endfor %}', None, '123'),
    ("{% for x in {'b': 1, 'a': 2} %}{{ x }}{% endfor %}", None, 'ba'),
    ('{% for x in (1, 2) %}{{ x }}{% endfor %}', None, '12'),
    ('{% for x in [1, 2] %}{{ x }}{% endfor %}{{ x }}', None, '12'),
    ('{% for x in items %}\n{{ x }}\n{% endfor %}\n', ITEMS, {'plain': '\na\n\nb\n\nc\n', 'chat': 'a\nb\nc\n'}),
    ('{% for x in items %}\n  {{ x }}\n{% else %}\n  none\n{% endfor %}', ITEMS, {'plain': '\n  a\n\n  b\n\n  c\n', 'chat': '  a\n  b\n  c\n'}),
    ('  {% for x in items %}\n    <{{ x }}>\n  {% endfor %}\n', ITEMS, {'plain': '  \n    <a>\n  \n    <b>\n  \n    <c>\n  ', 'chat': '    <a>\n    <b>\n    <c>\n'}),
    ('{% for %}{% endfor %}', None, Err(cls='TemplateSyntaxError', message="Expected an expression, got 'end of statement block'")),
    ('{% for x %}{% endfor %}', None, Err(cls='TemplateSyntaxError', message="expected token 'in', got 'end of statement block'")),
    ('{% for x in %}{% endfor %}', None, Err(cls='TemplateSyntaxError', message="Expected an expression, got 'end of statement block'")),
    ('{% for 1 in [1] %}{% endfor %}', None, Err(cls='TemplateSyntaxError', message="can't assign to 'const'")),
    ('{% for x.y in [1] %}{% endfor %}', None, Err(cls='TemplateSyntaxError', message="expected token 'in', got '.'")),
]

# the loop object
LOOP = [
    ('{% for x in items %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }} {% endfor %}', ITEMS, '1032 2121 3210 '),
    ('{% for x in items %}{{ loop.first }}-{{ loop.last }} {% endfor %}', ITEMS, 'True-False False-False False-True '),
    ('{% for x in items %}{{ loop.length }}{% endfor %}', ITEMS, '333'),
    ('{% for x in items %}{{ loop.previtem }}/{{ loop.nextitem }} {% endfor %}', ITEMS, '/b a/c b/ '),
    ('{% for x in items %}{{ loop.previtem is defined }}{{ loop.nextitem is defined }} {% endfor %}', ITEMS, 'FalseTrue TrueTrue TrueFalse '),
    ("{% for x in items %}{{ loop.cycle('odd', 'even') }} {% endfor %}", ITEMS, 'odd even odd '),
    ('{% for x in items %}{{ loop.cycle(1, 2, 3, 4) }}{% endfor %}', ITEMS, '123'),
    ('{% for x in items %}{{ loop.depth }}{{ loop.depth0 }}{% endfor %}', ITEMS, '101010'),
    ('{% for x in [1, 1, 2, 2, 1] %}{% if loop.changed(x) %}{{ x }}{% endif %}{% endfor %}', None, '121'),
    ('{% for x in [1, 1, 2] %}{{ loop.changed(x) }} {% endfor %}', None, 'True False True '),
    ('{% for x in [1, 2] %}{{ loop.changed(x, 1) }}{{ loop.changed(x, 1) }} {% endfor %}', None, 'TrueFalse TrueFalse '),
    ('{% for x in [1, 2] %}{{ loop.changed() }}{% endfor %}', None, 'TrueFalse'),
    ('{% for x in [1, 2] %}{% for y in [3] %}{{ loop.index }}{{ loop.depth }}{% endfor %}{{ loop.index }}{% endfor %}', None, '111112'),
    ('{% for x in [1, 2] %}{% set outer = loop %}{% for y in [3, 4] %}{{ outer.index }}{{ loop.index }} {% endfor %}{% endfor %}', None, '11 12 21 22 '),
    ('{% for x in range(5) %}{{ loop.revindex }}{% endfor %}', None, '54321'),
    ('{% for x in range(3) %}{{ loop.length - loop.index }}{% endfor %}', None, '210'),
    ('{% for x in [1] %}{{ loop.first and loop.last }}{% endfor %}', None, 'True'),
    ('{{ loop }}', None, ''),
    ('{% for x in [1] %}{{ loop.nope }}{% endfor %}', None, ''),
    ('{% for x in [1] %}{{ loop.cycle() }}{% endfor %}', None, Err(cls='TemplateRuntimeError', message='no items for cycling given')),
    ('{% for x in [1] %}{{ loop.index + 1 }}{% endfor %}', None, '2'),
    ("{% for x in [1] %}{{ loop['index'] }}{% endfor %}", None, '1'),
    ("{% for x in [1, 2] %}{{ loop.cycle(*['a', 'b']) }}{% endfor %}", None, 'ab'),
    ('{% set items2 = [1, 2, 3] %}{% for x in items2 %}{% if not loop.last %}{{ x }},{% else %}{{ x }}{% endif %}{% endfor %}', None, '1,2,3'),
    ("{% for x in 'ab' %}{{ loop.previtem ~ x }}{% endfor %}", None, 'aab'),
    ("{% for m in messages %}{% if loop.first and m.role == 'system' %}[{{ m.content }}]{% elif m.role == 'user' %}U:{{ m.content }} {% else %}A:{{ m.content }} {% endif %}{% endfor %}", ROLES, '[S]U:U1 A:A1 U:U2 '),
    ("{% for m in messages if m.role != 'system' %}{{ loop.index0 }}{{ m.role[0] }}{% if loop.last %}!{% endif %}{% endfor %}", ROLES, '0u1a2u!'),
    ("{% for m in messages %}{% if (m.role == 'user') != (loop.index0 % 2 == 1) %}X{% endif %}{% endfor %}", ROLES, ''),
]

# more loops: filters in the iterable, unpacking from groupby/batch/items, nested loop objects
LOOP_MORE = [
    ("{% for k, v in {'b': 2, 'a': 1} | dictsort %}{{ k }}{{ v }}{% endfor %}", None, 'a1b2'),
    ('{% for row in [1, 2, 3, 4, 5] | batch(2, 0) %}{{ row }}{% endfor %}', None, '[1, 2][3, 4][5, 0]'),
    ("{% for g in [{'t': 'a', 'v': 1}, {'t': 'b', 'v': 2}, {'t': 'a', 'v': 3}] | groupby('t') %}{{ g.grouper }}={{ g.list | map(attribute='v') | list }};{% endfor %}", None, 'a=[1, 3];b=[2];'),
    ("{% for key, items in [{'t': 'a'}, {'t': 'b'}] | groupby('t') %}{{ key }}{{ items | length }}{% endfor %}", None, 'a1b1'),
    ("{% for a, b in {'x': 1}.items() %}{{ a }}{{ b }}{% endfor %}", None, 'x1'),
    ('{% for x in [1, 2, 3] | reverse %}{{ x }}{{ loop.revindex }}{% endfor %}', None, '332211'),
    ("{% for x in range(3) | map('string') %}{{ x ~ loop.index }}{% endfor %}", None, '011223'),
    ("{% for x in 'abc' | list | slice(2) %}{{ x }}{% endfor %}", None, "['a', 'b']['c']"),
    ("{% for c in 'hello' | unique %}{{ c }}{% endfor %}", None, 'helo'),
    ("{% for x in [1, 2] %}{% for y in ['a', 'b'] %}{{ loop.previtem }}{{ loop.nextitem }}{% endfor %}{{ loop.nextitem }}|{% endfor %}", None, 'ba2|ba|'),
    ("{% for x in [1, 2, 3] %}{{ loop.cycle('a', 'b') }}{% for y in [1, 2, 3] %}{{ loop.cycle('x', 'y') }}{% endfor %} {% endfor %}", None, 'axyx bxyx axyx '),
    ('{% for x in [1, 2, 1] %}{{ loop.changed(x) }}{% for y in [1, 1] %}{{ loop.changed(y) }}{% endfor %} {% endfor %}', None, 'TrueTrueFalse TrueTrueFalse TrueTrueFalse '),
    ('{% for x in [1, 2] %}{{ loop.changed(x, x) }}{{ loop.changed(x, x) }}{% endfor %}', None, 'TrueFalseTrueFalse'),
    ("{% for x in [{'a': 1}, {'a': 1}, {'a': 2}] %}{{ loop.changed(x.a) }}{% endfor %}", None, 'TrueFalseTrue'),
    ('{% for x in [] %}{% else %}{{ loop is defined }}{% endfor %}', None, 'False'),
    ('{% for x in [1] %}{% else %}{% endfor %}{{ loop is defined }}', None, 'False'),
    ('{% for x in [1, 2] if x > 1 %}{{ loop.first }}{{ loop.length }}{% else %}E{% endfor %}', None, 'True1'),
    ('{% for x in items recursive if x %}{{ x }}{% endfor %}', None, Err(cls='TemplateSyntaxError', message="expected token 'end of statement block', got 'if'")),
    ('{% for x in [1, 2, 3] %}{% if loop.index is even %}{{ x }}{% endif %}{% endfor %}', None, '2'),
    ('{% for x in [1, 2, 3] %}{{ loop.length }}{{ loop.revindex0 }}{% endfor %}', None, '323130'),
    ('{% for i in range(2) %}{% for j in range(2) %}{{ i }}{{ j }}{% if not loop.last %},{% endif %}{% endfor %};{% endfor %}', None, '00,01;10,11;'),
    ('{% for x in [1] %}{{ loop.previtem is undefined }}{{ loop.nextitem is undefined }}{% endfor %}', None, 'TrueTrue'),
    ('{% for x in [none, none] %}{{ loop.changed(x) }}{% endfor %}', None, 'TrueFalse'),
]

# more macros and call blocks
MACRO_MORE = [
    ('{% macro m(a, b=1, c=none) %}{{ a }}|{{ b }}|{{ c }}{% endmacro %}{{ m(0, c=3) }}', None, '0|1|3'),
    ('{% macro m(a, b) %}{{ a }}{{ b }}{% endmacro %}{{ m(*[1, 2]) }}', None, '12'),
    ("{% macro m(a, b) %}{{ a }}{{ b }}{% endmacro %}{{ m(**{'b': 2, 'a': 1}) }}", None, '12'),
    ("{% macro m() %}{{ varargs | length }}{{ kwargs | length }}{% endmacro %}{{ m(*[1, 2], **{'k': 3}) }}", None, '21'),
    ("{% macro m(a) %}{{ a }}{% endmacro %}{{ m(a='kw') }}", None, 'kw'),
    ('{% macro m() %}{{ kwargs.x }}{% endmacro %}{{ m(x=5) }}', None, '5'),
    ("{% macro m() %}{% for v in varargs %}{{ v }}{% endfor %}{% endmacro %}{{ m('a', 'b') }}", None, 'ab'),
    ('{% macro m() %}{{ caller(caller is defined) }}{% endmacro %}{% call(flag) m() %}{{ flag }}{% endcall %}', None, 'True'),
    ('{% macro list(items) %}<ul>{% for i in items %}<li>{{ caller(i) }}</li>{% endfor %}</ul>{% endmacro %}{% call(item) list([1, 2]) %}#{{ item }}{% endcall %}', None, '<ul><li>#1</li><li>#2</li></ul>'),
    ('{% macro m(x) %}{{ caller(x * 2) }}{% endmacro %}{% call(y) m(2) %}{% call(z) m(y) %}{{ z }}{% endcall %}{% endcall %}', None, '8'),
    ("{% macro m() %}{{ caller() }}{% endmacro %}{% set c = 'captured' %}{% call m() %}{{ c }}{% endcall %}", None, 'captured'),
    ('{% macro m() %}r{% endmacro %}{% set x = m() %}{{ x }}{{ x | length }}', None, 'r1'),
    ('{% macro m(n) %}{{ n }}{% if n > 0 %}{{ m(n - 1) }}{% endif %}{% endmacro %}{{ m(3) }}', None, '3210'),
    ("{% macro m() %}{{ 1 }}{% endmacro %}{{ m() + '2' }}", None, '12'),
    ('{% macro m() %}{{ 1 }}{% endmacro %}{{ m() ~ 2 }}', None, '12'),
    ('{% macro m() %}x{% endmacro %}{{ [m(), m()] }}', None, "['x', 'x']"),
    ("{% macro m() %}x{% endmacro %}{{ m() == 'x' }}", None, 'True'),
    ('{% macro m() -%}\n  x\n{%- endmacro %}[{{ m() }}]', None, '[x]'),
    ('{% macro m(a) %}{{ a }}{% endmacro %}{{ m(a=1, b=2) }}', None, Err(cls='TemplateRuntimeError', message="macro 'm' takes no keyword argument 'b'")),
    ('{% macro m(a) %}{{ a }}{{ kwargs }}{% endmacro %}{{ m(a=1, b=2) }}', None, "1{'b': 2}"),
    ('{% set m = 1 %}{% macro m() %}macro{% endmacro %}{{ m() }}', None, 'macro'),
    ('{% macro m() %}a{% endmacro %}{% set m = 1 %}{{ m }}', None, '1'),
    ('{% macro m(a=[]) %}{{ a | length }}{% endmacro %}{{ m() }}{{ m([1]) }}', None, '01'),
    ("{% macro m(a={'k': 1}) %}{{ a.k }}{% endmacro %}{{ m() }}", None, '1'),
    ('{% macro m(a=range(2)) %}{{ a | list }}{% endmacro %}{{ m() }}', None, '[0, 1]'),
    ('{% macro m() %}{{ m.name }}{% endmacro %}{{ m() }}', None, 'm'),
]

# caller signatures and the special names caller/varargs/kwargs/loop as parameters; macro attributes
CALLER_AND_SPECIAL_NAMES = [
    ('{% macro m() %}{{ caller() }}{% endmacro %}{% call(a, b=2) m() %}{{ a }}{{ b }}{% endcall %}', None, '2'),
    ('{% macro m() %}{{ caller(1) }}{% endmacro %}{% call(a, b=2) m() %}{{ a }}{{ b }}{% endcall %}', None, '12'),
    ('{% macro m() %}{{ caller(1, 2, 3) }}{% endmacro %}{% call(a) m() %}{{ a }}{{ varargs }}{% endcall %}', None, '1(2, 3)'),
    ('{% macro m() %}{{ caller(k=1) }}{% endmacro %}{% call() m() %}{{ kwargs }}{% endcall %}', None, "{'k': 1}"),
    ('{% macro m() %}{{ caller.name }}{{ caller.arguments }}{% endmacro %}{% call(x, y) m() %}{% endcall %}', None, "None('x', 'y')"),
    ('{% macro m(caller) %}{{ caller }}{% endmacro %}{{ m(5) }}', None, Err(cls='TemplateSyntaxError', message='When defining macros or call blocks the special "caller" argument must be omitted or be given a default.')),
    ('{% macro m() %}{{ varargs }}{{ kwargs }}{{ caller is defined }}{% endmacro %}{% call m(1, k=2) %}{% endcall %}', None, "(1,){'k': 2}True"),
    ('{% macro m(a, caller=none) %}{{ a }}{{ caller is none }}{% endmacro %}{{ m(1) }}', None, '1True'),
    ('{% macro m(a, b) %}{{ a }}{{ b }}{% endmacro %}{{ m(1) }}', None, '1'),
    ('{% macro m(a, b) %}{{ a }}{{ b is defined }}{% endmacro %}{{ m(1) }}', None, '1False'),
    ('{% macro m(varargs) %}{{ varargs }}{% endmacro %}{{ m(1) }}', None, '1'),
    ('{% macro m(kwargs) %}{{ kwargs }}{% endmacro %}{{ m(kwargs=1) }}', None, '1'),
    ('{% macro m(loop) %}{{ loop }}{% endmacro %}{{ m(2) }}', None, '2'),
    ('{% macro m() %}{{ m.arguments }}{{ m.catch_kwargs }}{{ m.caller }}{% endmacro %}{{ m() }}', None, '()FalseFalse'),
    ('{% macro m(a, b=1) %}{% endmacro %}{{ m.arguments }}{{ m.defaults }}', None, "('a', 'b')"),
    ('{% macro m() %}{% endmacro %}{{ m.name }}{{ m.__name__ }}', None, 'm'),
]

# assignment targets of set/for/with: nesting, trailing commas, special names; malformed block headers
TARGETS = [
    ('{% for (a, b), c in [((1, 2), 3)] %}{{ a }}{{ b }}{{ c }}{% endfor %}', None, '123'),
    ('{% set (a, (b, c)) = (1, (2, 3)) %}{{ a }}{{ b }}{{ c }}', None, '123'),
    ('{% set a, = [1] %}{{ a }}', None, Err(cls='TemplateSyntaxError', message="unexpected '='"), 'F44'),
    ('{% set (a,) = [1] %}{{ a }}', None, '1'),
    ('{% set (a, b,) = [1, 2] %}{{ a }}{{ b }}', None, '12'),
    ('{% for (a,) in [[1]] %}{{ a }}{% endfor %}', None, '1'),
    ('{% set (a, (b,)) = [1, [2]] %}{{ a }}{{ b }}', None, '12'),
    ('{% with (a,) = [1] %}{{ a }}{% endwith %}', None, '1'),
    ('{% for a, in [[1]] %}{{ a }}{% endfor %}', None, Err(cls='TemplateSyntaxError', message="expected token 'in', got '['")),
    ('{% set a = b = 1 %}', None, Err(cls='TemplateSyntaxError', message="expected token 'end of statement block', got '='")),
    ('{% set a, b = b, a %}', None, ''),
    ('{% set a = 1, %}{{ a }}', None, '(1,)'),
    ('{% set a = (1) %}{{ a }}', None, '1'),
    ('{% set x = [1, 2] %}{% set x[0] = 5 %}', None, Err(cls='TemplateSyntaxError', message="expected token 'end of statement block', got '['")),
    ('{% set x.y.z = 1 %}', None, Err(cls='TemplateSyntaxError', message="expected token 'end of statement block', got '.'")),
    ('{% set ns = namespace() %}{% set ns.a.b = 1 %}', None, Err(cls='TemplateSyntaxError', message="expected token 'end of statement block', got '.'")),
    ("{% set ns = namespace() %}{% set ns['a'] = 1 %}", None, Err(cls='TemplateSyntaxError', message="expected token 'end of statement block', got '['")),
    ('{% for x in [1] %}{% set loop = 5 %}{{ loop }}{% endfor %}', None, Err(cls='TemplateSyntaxError', message="Can't assign to special loop variable in for-loop target")),
    ('{% for loop in [1] %}{{ loop }}{% endfor %}', None, Err(cls='TemplateSyntaxError', message="Can't assign to special loop variable in for-loop target")),
    ('{% set caller = 1 %}{{ caller }}', None, '1'),
    ('{% set varargs = 1 %}{{ varargs }}', None, '1'),
    ('{% for a, a in [(1, 2)] %}{{ a }}{% endfor %}', None, '2'),
    ('{% set a, a = 1, 2 %}{{ a }}', None, '2'),
    ('{% with a = 1, b = 2, %}{{ a }}{% endwith %}', None, Err(cls='TemplateSyntaxError', message="Expected an expression, got 'end of statement block'")),
    ('{% with (a) = 1 %}{{ a }}{% endwith %}', None, '1'),
    ('{% with a = 1 b = 2 %}{% endwith %}', None, Err(cls='TemplateSyntaxError', message="expected token ',', got 'b'")),
    ('{% for x in [1] if %}{% endfor %}', None, Err(cls='TemplateSyntaxError', message="unexpected 'end of statement block'")),
    ('{% for x in [1] recursive if x %}{% endfor %}', None, Err(cls='TemplateSyntaxError', message="expected token 'end of statement block', got 'if'")),
    ('{% for x in [1] if x recursive %}{{ x }}{% endfor %}', None, '1'),
    ('{% if true %}{% elif %}{% endif %}', None, Err(cls='TemplateSyntaxError', message="Expected an expression, got 'end of statement block'")),
    ('{% if true %}a{% elif true %}b{% elif true %}c{% else %}d{% endif %}', None, 'a'),
    ('{% if 1 %}{% if 2 %}{% else %}{% endif %}{% else %}x{% endif %}ok', None, 'ok'),
    ('{% filter upper(1) %}x{% endfilter %}', None, Err(cls='TemplateRuntimeError', message='do_upper() takes 1 positional argument but 2 were given')),
    ("{% filter default('d') %}{% endfilter %}", None, ''),
    ("{% filter replace('a', 'b') | upper %}aa{% endfilter %}", None, 'BB'),
    ('{% filter (upper) %}x{% endfilter %}', None, Err(cls='TemplateSyntaxError', message="expected token 'name', got '('")),
]

# passing caller explicitly, macros as values, redefinition, macros defined in if/for/with
MACRO_DEFINITIONS = [
    ('{% macro m() %}{{ caller() }}{% endmacro %}{% macro c() %}C{% endmacro %}{{ m(caller=c) }}', None, 'C'),
    ('{% macro m(caller=none) %}{{ caller is none }}{% endmacro %}{{ m() }}', None, 'True'),
    ('{% macro m() %}{{ caller }}{% endmacro %}{{ m(caller=1) }}', None, '1'),
    ('{% macro m(a) %}{{ a() }}{% endmacro %}{% macro c() %}X{% endmacro %}{{ m(c) }}', None, 'X'),
    ('{% macro m() %}{{ kwargs.caller is defined }}{% endmacro %}{{ m(caller=1) }}', None, 'True'),
    ('{% macro m(x) %}{{ x }}{% endmacro %}{{ m(x=m(x=1)) }}', None, '1'),
    ('{% macro m() %}{{ varargs[0] }}{% endmacro %}{{ m(m) }}', None, "<Macro 'm'>"),
    ('{% macro a() %}{{ b() }}{% endmacro %}{{ a() }}{% macro b() %}B{% endmacro %}', None, Err(cls='UndefinedError', message="'b' is undefined")),
    ("{% set m = 'not a macro' %}{% macro m() %}M{% endmacro %}{{ m() }}", None, 'M'),
    ('{% macro m() %}1{% endmacro %}{% macro m() %}2{% endmacro %}{{ m() }}', None, '2'),
    ('{% if true %}{% macro m() %}in if{% endmacro %}{% endif %}{{ m() }}', None, 'in if'),
    ('{% if false %}{% macro m() %}x{% endmacro %}{% endif %}{{ m is defined }}', None, 'False'),
    ('{% for i in [1] %}{% macro m() %}{{ i }}{% endmacro %}{% endfor %}{{ m is defined }}', None, 'False'),
    ('{% with %}{% macro m() %}w{% endmacro %}{% endwith %}{{ m is defined }}', None, 'False'),
]

# what a call block may call: macros with kwargs, plain functions, missing names
CALL_BLOCK_TARGETS = [
    ('{% macro m() %}{{ kwargs }}{% endmacro %}{% call m() %}x{% endcall %}', None, "{'caller': <Macro anonymous>}"),
    ('{% macro m() %}{{ kwargs | length }}{{ caller() }}{% endmacro %}{% call m(a=1) %}x{% endcall %}', None, '1x'),
    ('{% call dict() %}x{% endcall %}', None, Err(cls='TemplateRuntimeError', message='sequence item 0: expected str instance, dict found')),
    ('{% call range(2) %}x{% endcall %}', None, Err(cls='TemplateRuntimeError', message="safe_range() got an unexpected keyword argument 'caller'")),
    ('{% call lipsum(1) %}x{% endcall %}', None, Err(cls='TemplateRuntimeError', message="generate_lorem_ipsum() got an unexpected keyword argument 'caller'")),
    ('{% call nope() %}x{% endcall %}', None, Err(cls='UndefinedError', message="'nope' is undefined")),
    ('{% macro m() %}{{ caller() }}{% endmacro %}{% call m %}x{% endcall %}', None, Err(cls='TemplateSyntaxError', message='expected call')),
    ('{% macro m() %}{{ caller() }}{% endmacro %}{% call(x) m() %}{{ x }}{% endcall %}', None, ''),
    ('{% macro m() %}{{ varargs }}{% endmacro %}{% call m(1, 2) %}{% endcall %}', None, Err(cls='TemplateRuntimeError', message="macro 'm' was invoked with two values for the special caller argument. This is most likely a bug.")),
]

# recursive loops
RECURSIVE = [
    ('{% for n in tree recursive %}{{ n.name }}{% if n.children %}({{ loop(n.children) }}){% endif %}{% endfor %}', TREE, 'a(a1a2(a2x))b'),
    ('{% for n in tree recursive %}{{ loop.depth }}{{ n.name }} {% if n.children %}{{ loop(n.children) }}{% endif %}{% endfor %}', TREE, '1a 2a1 2a2 3a2x 1b '),
    ('{% for n in tree recursive %}[{{ loop.depth0 }}:{{ loop.index }}/{{ loop.length }}]{{ loop(n.children) }}{% endfor %}', TREE, '[0:1/2][1:1/2][1:2/2][2:1/1][0:2/2]'),
    ("{% for n in tree if n.name != 'b' recursive %}{{ n.name }}{{ loop(n.children) }}{% endfor %}", TREE, 'aa1a2a2x'),
    ('{% for n in tree recursive %}{{ n.name }}{% else %}E{% endfor %}', TREE, 'ab'),
    ('{% for x in [[1, [2]], 3] recursive %}{% if x is iterable %}<{{ loop(x) }}>{% else %}{{ x }}{% endif %}{% endfor %}', None, '<1<2>>3'),
    ('{% for x in [1] %}{{ loop([]) }}{% endfor %}', None, Err(cls='TemplateRuntimeError', message="The loop must have the 'recursive' marker to be called recursively.")),
    ('{% for n in tree recursive %}{% set d = loop.depth %}{{ n.name }}{{ d }}{{ loop(n.children) }}{% endfor %}', TREE, 'a1a12a22a2x3b1'),
]

# break / continue (chat environment only; a plain Environment has no such tags)
LOOPCONTROLS = [
    ('{% for x in [1, 2, 3] %}{% if x == 2 %}{% break %}{% endif %}{{ x }}{% endfor %}', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'break'. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'."), 'chat': '1'}),
    ('{% for x in [1, 2, 3] %}{% if x == 2 %}{% continue %}{% endif %}{{ x }}{% endfor %}', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'continue'. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'."), 'chat': '13'}),
    ('{% for x in [1, 2] %}{% for y in [1, 2] %}{% if y == 2 %}{% break %}{% endif %}{{ x }}{{ y }} {% endfor %}{% endfor %}', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'break'. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'."), 'chat': '11 21 '}),
    ('{% for x in range(10) %}{% if x is odd %}{% continue %}{% endif %}{% if x > 6 %}{% break %}{% endif %}{{ x }}{% endfor %}', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'continue'. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'."), 'chat': '0246'}),
    ("{% for x in [1, 2, 3] %}{{ x }}{% if loop.index == 2 %}{% break %}{% endif %}{% endfor %}{{ 'done' }}", None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'break'. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'."), 'chat': '12done'}),
    ('{% for x in [1, 2] %}{{ loop.index }}{% continue %}never{% endfor %}', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'continue'. Jinja was looking for the following tags: 'endfor' or 'else'. The innermost block that needs to be closed is 'for'."), 'chat': '12'}),
    ('{% for x in [1, 2] %}{% if x == 2 %}{% break %}{% endif %}{{ x }}{% else %}E{% endfor %}', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'break'. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'."), 'chat': '1'}),
    ('{% for x in [1] %}{% break %}{% else %}E{% endfor %}', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'break'. Jinja was looking for the following tags: 'endfor' or 'else'. The innermost block that needs to be closed is 'for'."), 'chat': 'E'}),
    ('{% for x in [1, 2] %}{% continue %}{% else %}E{% endfor %}', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'continue'. Jinja was looking for the following tags: 'endfor' or 'else'. The innermost block that needs to be closed is 'for'."), 'chat': 'E'}),
    ('{% for x in [1, 2] %}{% if x == 1 %}{% continue %}{% endif %}{{ x }}{% else %}E{% endfor %}', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'continue'. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'."), 'chat': '2'}),
    ('{% for x in [1, 2, 3] %}\n  {% if x == 2 %}\n    {% break %}\n  {% endif %}\n  {{ x }}\n{% endfor %}\n', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'break'. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'."), 'chat': '  1\n'}),
    ('{% for x in [1, 2] recursive %}{% if x == 2 %}{% break %}{% endif %}{{ x }}{% endfor %}', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'break'. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'."), 'chat': '1'}),
]

# set: names, tuples, namespace attributes, block set with filters
SET = [
    ('{% set x = 1 %}{{ x }}', None, '1'),
    ('{% set x = 1 %}{% set x = x + 1 %}{{ x }}', None, '2'),
    ('{% set a, b = 1, 2 %}{{ a }}{{ b }}', None, '12'),
    ('{% set a, b = [3, 4] %}{{ b }}{{ a }}', None, '43'),
    ("{% set (a, b) = 'xy' %}{{ a }}-{{ b }}", None, 'x-y'),
    ('{% set a, b = 1, 2, 3 %}{{ a }}', None, Err(cls='TemplateRuntimeError', message='too many values to unpack (expected 2)')),
    ('{% set a, b = 1 %}{{ a }}', None, Err(cls='TemplateRuntimeError', message='cannot unpack non-iterable int object')),
    ('{% set x = [1, 2] %}{{ x | length }}', None, '2'),
    ("{% set x = {'a': 1} %}{{ x.a }}", None, '1'),
    ('{% set x = y %}{{ x }}', None, ''),
    ("{% set x = 'a' if true else 'b' %}{{ x }}", None, 'a'),
    ('{% set x = 1, 2 %}{{ x }}', None, '(1, 2)'),
    ('{% set x = 1 %}{% set y = x %}{% set x = 2 %}{{ y }}{{ x }}', None, '12'),
    ('{% set ns = namespace(c=0) %}{% for i in range(3) %}{% set ns.c = ns.c + i %}{% endfor %}{{ ns.c }}', None, '3'),
    ("{% set ns = namespace() %}{% set ns.a = 'x' %}{{ ns.a }}", None, 'x'),
    ('{% set ns = namespace(a=1, b=2) %}{{ ns.a + ns.b }}', None, '3'),
    ("{% set ns = namespace({'a': 5}) %}{{ ns.a }}", None, '5'),
    ('{% set ns = namespace(a=1) %}{{ ns.missing }}', None, ''),
    ('{% set ns = namespace(a=1) %}{{ ns }}', None, "<Namespace {'a': 1}>"),
    ('{% set ns = namespace(found=false) %}{% for x in [1, 2] %}{% if x == 2 %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.found }}', None, 'True'),
    ('{% set d = {} %}{% set d.a = 1 %}{{ d }}', None, Err(cls='TemplateRuntimeError', message='cannot assign attribute on non-namespace object')),
    ('{% set ns.a = 1 %}', None, Err(cls='TemplateRuntimeError', message='cannot assign attribute on non-namespace object')),
    ('{% set ns = namespace(a=1) %}{% set ns.a, b = 1, 2 %}', None, ''),
    ('{% set x %}hello{% endset %}{{ x }}', None, 'hello'),
    ('{% set x %}  a  {% endset %}[{{ x }}]', None, '[  a  ]'),
    ('{% set x | upper %}hello{% endset %}{{ x }}', None, 'HELLO'),
    ('{% set x | trim | upper %}  hi  {% endset %}[{{ x }}]', None, '[HI]'),
    ("{% set x | replace('a', 'b') %}aaa{% endset %}{{ x }}", None, 'bbb'),
    ('{% set x %}{% for i in range(3) %}{{ i }}{% endfor %}{% endset %}{{ x }}{{ x }}', None, '012012'),
    ('{% set x %}a{% endset %}{{ x | length }}', None, '1'),
    ('{% set x %}1{% endset %}{{ x + 1 }}', None, Err(cls='TemplateRuntimeError', message='can only concatenate str (not "int") to str')),
    ('{% set x %}{{ y }}{% endset %}[{{ x }}]', None, '[]'),
    ('{% set ns = namespace() %}{% set ns.x %}block{% endset %}{{ ns.x }}', None, 'block'),
    ('{% set x %}<b>{% endset %}{{ x }}', None, '<b>'),
    ('{% set x | nope %}a{% endset %}', None, Err(cls='TemplateSyntaxError', message="No filter named 'nope'.")),
    ('{% set x %}a', None, Err(cls='TemplateSyntaxError', message="Unexpected end of template. Jinja was looking for the following tags: 'endset'. The innermost block that needs to be closed is 'set'.")),
    ('{% set a, b %}x{% endset %}', None, Err(cls='TemplateRuntimeError', message='not enough values to unpack (expected 2, got 1)')),
    ('{% set x = 1 %}\n{{ x }}\n', None, {'plain': '\n1', 'chat': '1'}),
    ('{% set x %}\nline\n{% endset %}\n[{{ x }}]', None, {'plain': '\n[\nline\n]', 'chat': '[line\n]'}),
    ('{% set 1 = 2 %}', None, Err(cls='TemplateSyntaxError', message="can't assign to 'const'")),
    ('{% set x %}', None, Err(cls='TemplateSyntaxError', message="Unexpected end of template. Jinja was looking for the following tags: 'endset'. The innermost block that needs to be closed is 'set'.")),
    ('{% set x = %}', None, Err(cls='TemplateSyntaxError', message="Expected an expression, got 'end of statement block'")),
    ('{% set loop = 1 %}{{ loop }}', None, '1'),
    ('{% set true = 1 %}{{ true }}', None, Err(cls='TemplateSyntaxError', message="can't assign to 'const'")),
    ('{% set none = 1 %}', None, Err(cls='TemplateSyntaxError', message="can't assign to 'const'")),
]

# macros: defaults, keyword arguments, varargs, kwargs, caller
MACROS = [
    ('{% macro m() %}hi{% endmacro %}{{ m() }}', None, 'hi'),
    ("{% macro m(a) %}[{{ a }}]{% endmacro %}{{ m(1) }}{{ m('x') }}", None, '[1][x]'),
    ('{% macro m(a, b=2) %}{{ a }}{{ b }}{% endmacro %}{{ m(1) }}|{{ m(1, 3) }}|{{ m(b=4, a=5) }}', None, '12|13|54'),
    ("{% macro m(a, b='x' ~ 'y') %}{{ b }}{% endmacro %}{{ m(1) }}", None, 'xy'),
    ('{% macro m(a) %}[{{ a }}]{% endmacro %}{{ m() }}', None, '[]'),
    ('{% macro m(a) %}{{ a is defined }}{% endmacro %}{{ m() }}', None, 'False'),
    ('{% macro m() %}{{ varargs }}{% endmacro %}{{ m(1, 2) }}', None, '(1, 2)'),
    ('{% macro m(a) %}{{ a }}{{ varargs }}{% endmacro %}{{ m(1, 2, 3) }}', None, '1(2, 3)'),
    ('{% macro m() %}{{ kwargs }}{% endmacro %}{{ m(x=1, y=2) }}', None, "{'x': 1, 'y': 2}"),
    ('{% macro m(a) %}{{ a }}{{ kwargs }}{{ varargs }}{% endmacro %}{{ m(1, 2, z=3) }}', None, "1{'z': 3}(2,)"),
    ('{% macro m() %}x{% endmacro %}{{ m(1) }}', None, Err(cls='TemplateRuntimeError', message="macro 'm' takes not more than 0 argument(s)")),
    ('{% macro m() %}x{% endmacro %}{{ m(z=1) }}', None, Err(cls='TemplateRuntimeError', message="macro 'm' takes no keyword argument 'z'")),
    ('{% macro m(a) %}x{% endmacro %}{{ m(1, a=2) }}', None, Err(cls='TemplateRuntimeError', message="macro 'm' takes no keyword argument 'a'")),
    ('{% macro m(a) %}{{ varargs }}{% endmacro %}{{ m(1) }}', None, '()'),
    ('{% macro m() %}{{ kwargs }}{% endmacro %}{{ m() }}', None, '{}'),
    ('{% macro m() %}{{ caller() }}{% endmacro %}{% call m() %}body{% endcall %}', None, 'body'),
    ('{% macro m() %}[{{ caller() }}|{{ caller() }}]{% endmacro %}{% call m() %}b{% endcall %}', None, '[b|b]'),
    ('{% macro m() %}{{ caller(1, 2) }}{% endmacro %}{% call(a, b) m() %}{{ a + b }}{% endcall %}', None, '3'),
    ('{% macro m(x) %}{% for i in range(x) %}{{ caller(i) }}{% endfor %}{% endmacro %}{% call(i) m(3) %}<{{ i }}>{% endcall %}', None, '<0><1><2>'),
    ('{% macro m() %}{{ caller(y=5) }}{% endmacro %}{% call(x=1, y=2) m() %}{{ x }}{{ y }}{% endcall %}', None, '15'),
    ('{% macro m() %}{{ caller() }}{% endmacro %}{{ m() }}', None, Err(cls='UndefinedError', message='No caller defined')),
    ('{% macro m() %}{{ caller is defined }}{% endmacro %}{{ m() }}', None, 'False'),
    ('{% macro m() %}{{ caller() }}{% endmacro %}{% call m() %}{{ caller is defined }}{% endcall %}', None, 'False'),
    ('{% macro outer() %}({{ caller() }}){% endmacro %}{% macro inner() %}[{{ caller() }}]{% endmacro %}{% call outer() %}{% call inner() %}x{% endcall %}{% endcall %}', None, '([x])'),
    ('{% macro m() %}a{% endmacro %}{{ m }}', None, "<Macro 'm'>"),
    ('{% macro m() %}a{% endmacro %}{{ m.name }}', None, 'm'),
    ('{% macro m(a, b) %}{% endmacro %}{{ m.arguments }}', None, "('a', 'b')"),
    ('{% macro m() %}{{ caller() }}{% endmacro %}{{ m.caller }}', None, 'True'),
    ('{% macro m() %}{{ varargs }}{% endmacro %}{{ m.catch_varargs }}{{ m.catch_kwargs }}', None, 'TrueFalse'),
    ('{% macro m() %}a{% endmacro %}{{ m() ~ m() }}', None, 'aa'),
    ('{% macro m() %}a{% endmacro %}{{ m() | upper }}', None, 'A'),
    ('{% macro m() %}<b>{% endmacro %}{{ m() }}', None, '<b>'),
    ('{% macro m() %}a{% endmacro %}{{ m() is string }}', None, 'True'),
    ('{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1) | int }}{% endif %}{% endmacro %}{{ fact(5) }}', None, '120'),
    ("{% macro m(x) %}{{ x }}{% endmacro %}{{ [1, 2] | map('string') | join }}{{ m(3) }}", None, '123'),
    ('{% macro m(a, b=a) %}{{ b }}{% endmacro %}{{ m(7) }}', None, '7'),
    ('{% macro m() %}\n  body\n{% endmacro %}\n[{{ m() }}]', None, {'plain': '\n[\n  body\n]', 'chat': '[  body\n]'}),
    ('{% macro m(a=1, b) %}{% endmacro %}', None, Err(cls='TemplateSyntaxError', message='non-default argument follows default argument')),
    ('{% macro m(1) %}{% endmacro %}', None, Err(cls='TemplateSyntaxError', message="expected token 'name', got 'integer'")),
    ('{% macro %}{% endmacro %}', None, Err(cls='TemplateSyntaxError', message="expected token 'name', got 'end of statement block'")),
    ('{% macro m() %}x', None, Err(cls='TemplateSyntaxError', message="Unexpected end of template. Jinja was looking for the following tags: 'endmacro'. The innermost block that needs to be closed is 'macro'.")),
]

# call blocks, filter blocks, with
CALL_FILTER_WITH = [
    ('{% filter upper %}hello{% endfilter %}', None, 'HELLO'),
    ("{% filter upper | replace('L', 'x') %}hello{% endfilter %}", None, 'HExxO'),
    ("{% filter replace('a', 'b') %}banana{% endfilter %}", None, 'bbnbnb'),
    ('{% filter trim %}  x  {% endfilter %}|', None, 'x|'),
    ('{% filter center(7) %}x{% endfilter %}|', None, '   x   |'),
    ("{% filter upper %}{% for i in 'ab' %}{{ i }}{% endfor %}{% endfilter %}", None, 'AB'),
    ('{% filter length %}abc{% endfilter %}', None, Err(cls='TemplateRuntimeError', message='sequence item 0: expected str instance, int found')),
    ('{% filter nope %}x{% endfilter %}', None, Err(cls='TemplateSyntaxError', message="No filter named 'nope'.")),
    ('{% filter upper %}x', None, Err(cls='TemplateSyntaxError', message="Unexpected end of template. Jinja was looking for the following tags: 'endfilter'. The innermost block that needs to be closed is 'filter'.")),
    ('{% filter %}x{% endfilter %}', None, Err(cls='TemplateSyntaxError', message="expected token 'name', got 'end of statement block'")),
    ('{% with %}x{% endwith %}', None, 'x'),
    ('{% with a = 1 %}{{ a }}{% endwith %}', None, '1'),
    ('{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}', None, '3'),
    ('{% with a = 1 %}{% endwith %}{{ a }}', None, ''),
    ('{% set a = 0 %}{% with a = 1 %}{{ a }}{% endwith %}{{ a }}', None, '10'),
    ('{% with a = 1 %}{% set a = 2 %}{{ a }}{% endwith %}', None, '2'),
    ('{% with a = 1 %}{% with b = a + 1 %}{{ a }}{{ b }}{% endwith %}{% endwith %}', None, '12'),
    ('{% with a = 1, b = a %}{{ b }}{% endwith %}', None, ''),
    ('{% set a = 5 %}{% with a = 1, b = a %}{{ b }}{% endwith %}', None, '5'),
    ('{% with a, b = 1, 2 %}{% endwith %}', None, Err(cls='TemplateSyntaxError', message="can't assign to 'const'")),
    ('{% with a = 1 %}x', None, Err(cls='TemplateSyntaxError', message="Unexpected end of template. Jinja was looking for the following tags: 'endwith'. The innermost block that needs to be closed is 'with'.")),
    ("{% macro m(t) %}<{{ t }}:{{ caller() }}>{% endmacro %}{% call m('p') %}{% filter upper %}x{% endfilter %}{% endcall %}", None, '<p:X>'),
]

# generation blocks (chat only), raw, comments
GENERATION_RAW_COMMENTS = [
    ('{% generation %}gen{% endgeneration %}', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'generation'."), 'chat': 'gen'}),
    ('a{% generation %}{{ 1 + 1 }}{% endgeneration %}b', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'generation'."), 'chat': 'a2b'}),
    ('{% for x in [1, 2] %}{% generation %}{{ x }}{% endgeneration %}{% endfor %}', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'generation'. Jinja was looking for the following tags: 'endfor' or 'else'. The innermost block that needs to be closed is 'for'."), 'chat': '12'}),
    ('{% generation %}x', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'generation'."), 'chat': Err(cls='TemplateSyntaxError', message="Unexpected end of template. Jinja was looking for the following tags: 'endgeneration'. The innermost block that needs to be closed is 'generation'.")}),
    ('{% generation %}{% generation %}i{% endgeneration %}{% endgeneration %}', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'generation'."), 'chat': 'i'}),
    ('{% raw %}{{ x }}{% endraw %}', None, '{{ x }}'),
    ('{% raw %}{% if %}{# c #}{% endraw %}', None, '{% if %}{# c #}'),
    ('{% raw %}a {{ b }} c{% endraw %}d', None, 'a {{ b }} cd'),
    ('{%- raw -%}  {{ x }}  {%- endraw -%}', None, '{{ x }}'),
    ('{% raw %}\n{{ x }}\n{% endraw %}\n', None, '\n{{ x }}\n'),
    ('{% raw %}{% endraw', None, Err(cls='TemplateSyntaxError', message='Missing end of raw directive')),
    ('{% raw %}unclosed', None, Err(cls='TemplateSyntaxError', message='Missing end of raw directive')),
    ('a{# comment #}b', None, 'ab'),
    ('a{# {{ x }} {% if %} #}b', None, 'ab'),
    ('{# multi\nline #}x', None, 'x'),
    ('a {#- c -#} b', None, 'ab'),
    ('{# unclosed', None, Err(cls='TemplateSyntaxError', message='Missing end of comment tag')),
    ('a{# c #}\nb', None, {'plain': 'a\nb', 'chat': 'ab'}),
    ('{# #}{{ 1 }}{# #}', None, '1'),
    ('{#{{ x }}#}y', None, 'y'),
]

# recursive loops with cycle/changed/previtem, else, filters on loop(...), nested loop objects
RECURSIVE_MORE = [
    ("{% for t in tree recursive %}{{ loop.cycle('x', 'y') }}{{ t.n }}{{ loop(t.c) }}{% endfor %}", TREE2, 'xaxbycxdye'),
    ('{% for t in tree recursive %}{{ loop.changed(loop.depth) }}{{ loop(t.c) }}{% endfor %}', TREE2, 'TrueTrueFalseTrueFalse'),
    ('{% for t in tree recursive %}{{ loop.previtem.n if loop.previtem }}{{ loop(t.c) }}{% endfor %}', TREE2, 'ba'),
    ('{% for t in tree recursive %}{% if t.c %}<{{ loop(t.c) }}>{% else %}{{ t.n }}{% endif %}{% else %}E{% endfor %}', TREE2, '<b<d>>e'),
    ('{% for t in tree recursive %}{{ loop.length }}{{ loop(t.c) }}{% endfor %}', TREE2, '22212'),
    ('{% for t in tree recursive %}{{ loop.revindex }}{% if loop.depth < 2 %}{{ loop(t.c) }}{% endif %}{% endfor %}', TREE2, '2211'),
    ('{% for t in tree recursive %}{% set outer = loop %}{% for i in [1] %}{{ outer.depth }}{% endfor %}{{ outer(t.c) }}{% endfor %}', TREE2, '12231'),
    ('{% for t in tree recursive %}{{ loop(t.c) | length }}{% endfor %}', TREE2, '20'),
    ('{% for t in tree recursive %}{{ loop(t.c) | upper }}{{ t.n }}{% endfor %}', TREE2, 'BDCae'),
    ('{% for t in tree recursive %}{% set x = loop(t.c) %}[{{ x }}]{{ t.n }}{% endfor %}', TREE2, '[[]b[[]d]c]a[]e'),
    ('{% macro walk(nodes) %}{% for t in nodes recursive %}{{ t.n }}{{ loop(t.c) }}{% endfor %}{% endmacro %}{{ walk(tree) }}', TREE2, 'abcde'),
]

# idioms of real chat templates, multi-line, in both configurations
CHAT_IDIOMS = [
    ("{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] | string | trim + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token }}{% endif %}{% endfor %}", CHAT, "<s>[INST] Hi there [/INST]Hello!</s>[INST] [{'type': 'text', 'text': 'Look'}, {'type': 'image'}] [/INST]"),
    ("{%- if messages[0]['role'] == 'system' %}\n    {%- set system_message = messages[0]['content'] %}\n    {%- set loop_messages = messages[1:] %}\n{%- else %}\n    {%- set loop_messages = messages %}\n{%- endif %}\n{{- system_message | default('none') }}|{{ loop_messages | length }}", CHAT, 'Be brief.|4'),
    ("{% for message in messages %}\n{% if message.content is string %}\n<|{{ message.role }}|>\n{{ message.content | trim }}\n{% else %}\n{% for part in message.content %}\n{% if part.type == 'text' %}{{ part.text }}{% else %}<{{ part.type }}>{% endif %}\n{% endfor %}\n{% endif %}\n{% endfor %}\n{% if add_generation_prompt %}\n<|assistant|>\n{% endif %}\n", CHAT, {'plain': '\n\n<|system|>\nBe brief.\n\n\n\n<|user|>\nHi there\n\n\n\n<|assistant|>\nHello!\n\n\n\n<|tool|>\n{"ok": true}\n\n\n\n\nLook\n\n<image>\n\n\n\n\n<|assistant|>\n', 'chat': '<|system|>\nBe brief.\n<|user|>\nHi there\n<|assistant|>\nHello!\n<|tool|>\n{"ok": true}\nLook<image><|assistant|>\n'}),
    ('{%- for message in messages %}\n    {%- if message.tool_calls is defined %}\n        {%- for call in message.tool_calls %}\n{{ call.function.name }}({{ call.function.arguments | tojson }})\n        {%- endfor %}\n    {%- endif %}\n{%- endfor %}', CHAT, {'plain': '\nget({"n": 1, "q": "x"})', 'chat': 'get({"q": "x", "n": 1})'}),
    ('{%- if tools %}\n<tools>\n{%- for tool in tools %}\n{{ tool | tojson }}\n{%- endfor %}\n</tools>\n{%- endif %}', CHAT, {'plain': '\n<tools>\n{"function": {"description": "Get \\u003cthings\\u003e", "name": "get", "parameters": {"properties": {"q": {"type": "string"}}, "type": "object"}}, "type": "function"}\n</tools>', 'chat': '<tools>{"type": "function", "function": {"name": "get", "description": "Get <things>", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}</tools>'}),
    ("{% set ns = namespace(last_user=-1) %}{% for m in messages %}{% if m.role == 'user' %}{% set ns.last_user = loop.index0 %}{% endif %}{% endfor %}{{ ns.last_user }}", CHAT, '4'),
    ("{%- for m in messages | selectattr('role', 'equalto', 'user') %}{{ loop.index }}{{ m.content if m.content is string else m.content | map(attribute='type') | join(',') }};{% endfor %}", CHAT, '1  Hi there  ;2text,image;'),
    ("{% for m in messages %}{{ '<|im_start|>' + m.role + '\n' }}{% if m.content is string %}{{ m.content }}{% endif %}{{ '<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}", CHAT, '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n  Hi there  <|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n<|im_start|>tool\n{"ok": true}<|im_end|>\n<|im_start|>user\n<|im_end|>\n<|im_start|>assistant\n'),
    ("{%- for m in messages %}\n  {%- if loop.first and m.role != 'system' %}\n    {{- raise_exception('first must be system') }}\n  {%- endif %}\n  {%- if (m.role == 'user') != (loop.index0 % 2 == 1) and m.role in ['user', 'assistant'] %}\n    {{- 'order?' }}\n  {%- endif %}\n{%- endfor %}done", CHAT, 'order?done'),
    ("{{ messages | map(attribute='role') | join(' > ') }}", CHAT, 'system > user > assistant > tool > user'),
    ("{{ (messages | last).content | map(attribute='type') | list }}", CHAT, "['text', 'image']"),
    ("{{ messages[1].content.strip() }}|{{ messages[1].content | trim | lower }}|{{ messages[0].content.split(' ') }}", CHAT, "Hi there|hi there|['Be', 'brief.']"),
    ('{{ tools[0].function.parameters | tojson(indent=2) }}', CHAT, {'plain': '{\n  "properties": {\n    "q": {\n      "type": "string"\n    }\n  },\n  "type": "object"\n}', 'chat': '{\n  "type": "object",\n  "properties": {\n    "q": {\n      "type": "string"\n    }\n  }\n}'}),
    ('{%- set content = messages[3].content %}{{ content }}', CHAT, '{"ok": true}'),
    ('{% for m in messages[1:3] %}{{ m.role }}{% if not loop.last %}, {% endif %}{% endfor %}', CHAT, 'user, assistant'),
    ("{{ messages | length }} {{ messages | selectattr('tool_calls') | list | length }} {{ messages | rejectattr('content', 'string') | list | length }}", CHAT, '5 1 1'),
    ("{% if messages[-1].role == 'user' and add_generation_prompt %}gen{% endif %}", CHAT, 'gen'),
    ("{{ '%s: %d' | format(messages[0].role, messages | length) }}", CHAT, 'system: 5'),
    ("{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{{ eos_token }}{% endgeneration %}{% endif %}{% endfor %}", CHAT, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'generation'. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'."), 'chat': 'Hello!</s>'}),
]

# whitespace control on block tags of every kind, both configurations
BLOCK_WHITESPACE = [
    ('{%- generation -%}\n  x  \n{%- endgeneration -%}\n', ABC, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'generation'."), 'chat': 'x'}),
    ('  {% generation %}\n  x\n  {% endgeneration %}\n', ABC, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'generation'."), 'chat': '  x\n'}),
    ('{% for i in [1] %}\n  {% raw %}\n  {{ i }}\n  {% endraw %}\n{% endfor %}\n', ABC, {'plain': '\n  \n  {{ i }}\n  \n', 'chat': '\n  {{ i }}\n'}),
    ('{% macro m() -%}\n  {%- generation %}g{% endgeneration -%}\n{%- endmacro %}{{ m() }}', ABC, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'generation'. Jinja was looking for the following tags: 'endmacro'. The innermost block that needs to be closed is 'macro'."), 'chat': 'g'}),
    ('{% set x -%}\n  a\n{%- endset %}[{{ x }}]', ABC, '[a]'),
    ('{% filter upper -%}\n  a\n{%- endfilter %}', ABC, 'A'),
    ('{% with a = 1 -%}\n  {{ a }}\n{%- endwith %}', ABC, '1'),
    ('{% call(x) m() -%} {{ x }} {%- endcall %}', ABC, Err(cls='UndefinedError', message="'m' is undefined")),
    ('{% macro m() %}{{ caller(1) }}{% endmacro %}{% call(x) m() -%}\n {{ x }} \n{%- endcall %}', ABC, '1'),
    ('{%- for m in messages -%}\n{{- m -}}\n{%- if not loop.last -%}, {% endif -%}\n{%- endfor -%}', ABC, 'a, b, c'),
    ("{% for m in messages %}\n    {% if m == 'b' %}\n        {% continue %}\n    {% endif %}\n    {{ m }}\n{% endfor %}", ABC, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'continue'. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'."), 'chat': '    a\n    c\n'}),
    ('{% if true %}{# c #}\n  x{% endif %}', ABC, {'plain': '\n  x', 'chat': '  x'}),
    ('{# c #}\n  {% if true %}\n  y{% endif %}', ABC, {'plain': '\n  \n  y', 'chat': '  y'}),
    ('  {# c #}  \n  z', ABC, {'plain': '    \n  z', 'chat': '  \n  z'}),
    ('{%- if true %}  \n\t  x\n{% endif -%}', ABC, '  \n\t  x\n'),
]


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(LOOP_MORE))
def test_loop_more(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(MACRO_MORE))
def test_macro_more(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(IF))
def test_if(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(FOR))
def test_for(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(LOOP))
def test_loop_object(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(CALLER_AND_SPECIAL_NAMES))
def test_caller_and_special_names(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(TARGETS))
def test_assignment_targets(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(RECURSIVE_MORE))
def test_recursive_more(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(MACRO_DEFINITIONS))
def test_macro_definitions(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(CALL_BLOCK_TARGETS))
def test_call_block_targets(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(RECURSIVE))
def test_recursive_loops(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(LOOPCONTROLS))
def test_loop_controls(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(SET))
def test_set(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(MACROS))
def test_macros(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(CALL_FILTER_WITH))
def test_call_filter_with(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(BLOCK_WHITESPACE))
def test_block_whitespace(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(CHAT_IDIOMS))
def test_chat_idioms(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(GENERATION_RAW_COMMENTS))
def test_generation_raw_comments(configs, source, context, expected):
    check(configs, source, context, expected)


# Loops over one-shot iterators (a filter's lazy result): taken one item at a time, as Jinja does;
# a break leaves the rest, loop.last/nextitem take one item ahead, loop.length the rest; the
# loop variable is itself an iterator of (item, loop) pairs. Chat configuration (break).
LOOPS_OVER_ITERATORS = [
    ("{% set it = [1, 2, 3] | map('string') %}{% for x in it %}{{ x }}{% break %}{% endfor %}|{% for x in it %}{{ x }}{% endfor %}", None, {'chat': '1|23'}),
    ("{% set it = [1, 2, 3, 4] | map('string') %}{% for x in it %}{{ x }}{{ loop.last }}{% break %}{% endfor %}|{% for x in it %}{{ x }}{% endfor %}", None, {'chat': '1False|34'}),
    ("{% set it = [1, 2, 3, 4] | map('string') %}{% for x in it %}{{ x }}{{ loop.nextitem }}{% break %}{% endfor %}|{% for x in it %}{{ x }}{% endfor %}", None, {'chat': '12|34'}),
    ("{% set it = [1, 2, 3, 4] | map('string') %}{% for x in it %}{{ x }}{{ loop.length }}{% break %}{% endfor %}|{% for x in it %}{{ x }}{% endfor %}", None, {'chat': '14|'}),
    ("{% set it = [1, 2, 3, 4, 5] | select('odd') %}{% for x in it %}{{ x }}{{ loop.nextitem }}{{ loop.previtem }}{{ loop.revindex }}{% if loop.index == 2 %}{% break %}{% endif %}{% endfor %}|{% for x in it %}{{ x }}{% endfor %}", None, {'chat': '1333512|'}),
    ("{% set it = [1, 2, 3] | map('string') %}{% for x in it %}{% continue %}{% endfor %}|{% for x in it %}{{ x }}{% else %}empty{% endfor %}", None, {'chat': '|empty'}),
    ("{% set it = [1, 2, 3] | map('string') %}{% for x in it %}{{ loop.first }}{{ loop.last }}{{ loop.index0 }}{{ loop.revindex0 }}{{ loop.previtem }} {% endfor %}", None, {'chat': 'TrueFalse02 FalseFalse111 FalseTrue202 '}),
    ('{% set ns = namespace(n=0) %}{% for x in [1, 2, 3, 4] if x > ns.n %}{% set ns.n = x + 1 %}{{ x }}{% endfor %}', None, {'chat': '13'}),
    ('{% set ns = namespace(n=0) %}{% for x in [1, 2, 3, 4] if x > ns.n %}{{ loop.last }}{% set ns.n = x + 1 %}{{ x }}{% endfor %}', None, {'chat': 'False1False2False3True4'}),
    ("{% for x in [1, 2, 3] | map('string') if x != '2' %}{{ loop.index }}/{{ loop.length }}{{ loop.last }} {% else %}E{% endfor %}", None, {'chat': '1/2False 2/2True '}),
    ("{% for x in [] | map('string') %}{% else %}E{% endfor %}", None, {'chat': 'E'}),
    ('{% for x in [1, 2] if x > 5 %}{% else %}E{% endfor %}', None, {'chat': 'E'}),
    ('{% for x in [1, 2, 3] %}{{ dict(loop) }}|{% endfor %}', None, {'chat': '{2: <LoopContext 3/3>, 3: <LoopContext 3/3>}|'}),
    ('{% for x in [1, 2, 3] %}{{ x }}{{ loop | list }}|{% endfor %}', None, {'chat': '1[(2, <LoopContext 3/3>), (3, <LoopContext 3/3>)]|'}),
    ("{% for x in [1] | map('string') %}{{ dict(loop) }}{{ x }}{% endfor %}", None, {'chat': '{}1'}),
    ("{% for x in [1, 2, 3] | map('string') %}{{ loop.nextitem }}{{ dict(loop) }}{{ x }}{% endfor %}", None, {'chat': "2{'2': <LoopContext 3/3>, '3': <LoopContext 3/3>}1"}),
    ("{% for x in [1, 2, 3] | map('string') %}{{ loop }}{% endfor %}", None, {'chat': '<LoopContext 1/3><LoopContext 2/3><LoopContext 3/3>'}),
    ("{% for x in 'ab' %}{{ loop.length }}{{ loop }}{% endfor %}", None, {'chat': '2<LoopContext 1/2>2<LoopContext 2/2>'}),
    ("{% set ns = namespace({'a': 1}, self=37) %}{{ ns.self }}{{ ns.a }}", None, {'chat': '371'}),
    ('{% set ns = namespace(self=1) %}{% set ns.self = 3 %}{{ ns.self }}', None, {'chat': '3'}),
    ("{% for a in [[1, [2, 3] | map('string')]] recursive %}{% if a is string %}{{ a }}{{ loop.last }}{% elif a is iterable %}{{ loop(a) }}{% else %}{{ a }}{% endif %}{% endfor %}", None, {'chat': '12False3True'}),
]


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(LOOPS_OVER_ITERATORS))
def test_loops_over_iterators(configs, source, context, expected):
    check(configs, source, context, expected)


def test_a_loop_takes_a_context_iterator_one_item_at_a_time():
    # Only the items reached are taken: an endless generator with a break is fine.
    def endless():
        n = 0
        while True:
            n += 1
            yield n

    env = ours("chat")
    source = "{% for x in g %}{{ x }}{{ loop.last }}{% if x == 3 %}{% break %}{% endif %}{% endfor %}"
    assert env.from_string(source).render(g=endless()) == "1False2False3False"
    taken = endless()
    env.from_string("{% for x in g %}{% break %}{% endfor %}").render(g=taken)
    assert next(taken) == 2


# `self`: the template's blocks by name (`self.title()` renders one, other names are undefined);
# required blocks, which only an extending template could fill; `super` inside a block.
SELF_CONTEXT = {'n': 4, 'self': 'S'}  # a context `self` is hidden, as in Jinja
SELF_AND_BLOCKS = [
    ('{{ self }}', SELF_CONTEXT, '<TemplateReference None>'),
    ('{{ self.DEFAULT_SYSTEM_MESSAGE }}|{{ self.DEFAULT_SYSTEM_MESSAGE is defined }}', SELF_CONTEXT, '|False'),
    ('{% if self.DEFAULT_SYSTEM_MESSAGE %}y{% else %}n{% endif %}', SELF_CONTEXT, 'n'),
    ('{% block title %}T{{ n }}{% endblock %}|{{ self.title() }}', SELF_CONTEXT, 'T4|T4'),
    ('{% block a %}{{ self.b() }}{% endblock %}{% block b %}B{% endblock %}', SELF_CONTEXT, 'BB'),
    ("{{ self['title'] }}", SELF_CONTEXT, ''),
    ("{% block t %}x{% endblock %}{{ self['t']() }}", SELF_CONTEXT, 'xx'),
    ('{{ self.x.y }}', SELF_CONTEXT, Err(cls='UndefinedError', message="'jinja2.runtime.TemplateReference object' has no attribute 'x'")),
    ('{% block t %}a{% endblock %}{{ self.t.super }}', SELF_CONTEXT, 'a'),
    ('{% block t %}a{% endblock %}{{ self.t.super() }}', SELF_CONTEXT, Err(cls='UndefinedError', message="there is no parent block called 't'.")),
    ('{% block t %}a{% endblock %}{{ self.t.name }}', SELF_CONTEXT, 'at'),
    ('{% block t scoped %}{{ n }}{% endblock %}{% for n in [1] %}{{ self.t() }}{% endfor %}', SELF_CONTEXT, '44'),
    ('{% set n = 5 %}{% block t %}{{ n }}{% endblock %}{{ self.t() }}', SELF_CONTEXT, '55'),
    ('{% set self = 1 %}{{ self }}', SELF_CONTEXT, '1'),
    ('{% macro f(self) %}{{ self }}{% endmacro %}{{ f(2) }}', SELF_CONTEXT, '2'),
    ('{% block body required %}{% endblock %}', SELF_CONTEXT, Err(cls='TemplateRuntimeError', message="Required block 'body' not found")),
    ('{% block body required %}x{% endblock %}', SELF_CONTEXT, Err(cls='TemplateSyntaxError', message='Required blocks can only contain comments or whitespace')),
    ('{% block body required %} {# c #}\n{% endblock %}', SELF_CONTEXT, Err(cls='TemplateRuntimeError', message="Required block 'body' not found")),
    ('{% block b scoped required %}{% endblock %}', SELF_CONTEXT, Err(cls='TemplateRuntimeError', message="Required block 'b' not found")),
    ('{% block b required scoped %}{% endblock %}', SELF_CONTEXT, Err(cls='TemplateSyntaxError', message="expected token 'end of statement block', got 'scoped'")),
    ('{% block b scoped scoped %}{% endblock %}', SELF_CONTEXT, Err(cls='TemplateSyntaxError', message="expected token 'end of statement block', got 'scoped'")),
    ('{% if false %}{% block b required %}{% endblock %}{% endif %}ok', SELF_CONTEXT, 'ok'),
    ('{% block b required %}{% endblock %}{{ self.b() }}', SELF_CONTEXT, Err(cls='TemplateRuntimeError', message="Required block 'b' not found")),
    ('{% block a %}{{ super() }}{% endblock %}', SELF_CONTEXT, Err(cls='UndefinedError', message="there is no parent block called 'a'.")),
    ('{% block a %}[{{ super }}]{% endblock %}', SELF_CONTEXT, '[]'),
    ('{% block a %}{% set super = 1 %}{{ super }}{% endblock %}', SELF_CONTEXT, '1'),
]


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(SELF_AND_BLOCKS))
def test_self_and_blocks(configs, source, context, expected):
    check(configs, source, context, expected)
