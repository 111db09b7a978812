"""Scoping: loop bodies get a fresh scope per iteration, ``set`` inside loops and blocks does not
leak, macros see template globals with late binding, ``if`` does not scope, with/filter/set blocks
and call blocks scope their bodies, context variables can be shadowed.

Expected values were obtained from Jinja2 3.1.6 and are hard-coded
(``MINIJINJA_TESTS_REFERENCE=1`` makes ``check`` assert that Jinja2 still agrees).
Each case runs in the plain and the chat configuration (see engine_cases).
"""

from __future__ import annotations

import pytest
from engine_cases import check, params

CTX = {'x': 'ctx', 'items': [1, 2, 3]}
SPECIAL = {'loop': 'L', 'caller': 'C', 'varargs': 'V', 'kwargs': 'K', 'range': 'R', 'raise_exception': 'RE', 'namespace': 'N', 'self': 'S', 'true': 'T', 'none': 'NN', 'undefined': 'U'}


# for bodies: per-iteration scope, no leaking
LOOP_SCOPE = [
    ('{% set x = 0 %}{% for i in [1, 2] %}{% set x = x + i %}{{ x }}{% endfor %}|{{ x }}', None, '12|0'),
    ('{% for i in [1, 2] %}{% set y = i %}{% endfor %}[{{ y }}]', None, '[]'),
    ("{% for i in [1, 2] %}{{ y | default('-') }}{% set y = i %}{{ y }}{% endfor %}", None, '-1-2'),
    ('{% for i in [1, 2] %}{% if i == 2 %}{{ y }}{% endif %}{% set y = i %}{% endfor %}', None, ''),
    ('{% for i in [1] %}{% endfor %}[{{ i }}]', None, '[]'),
    ("{% set i = 'outer' %}{% for i in [1] %}{{ i }}{% endfor %}{{ i }}", None, '1outer'),
    ("{% set loop = 'mine' %}{% for i in [1] %}{{ loop.index }}{% endfor %}{{ loop }}", None, '1mine'),
    ("{% for i in [1, 2] %}{% for j in [1] %}{% set i = 'inner' %}{{ i }}{% endfor %}{{ i }}{% endfor %}", None, 'inner1inner2'),
    ('{% set ns = namespace(t=0) %}{% for i in [1, 2, 3] %}{% set ns.t = ns.t + i %}{% endfor %}{{ ns.t }}', None, '6'),
    ('{% set acc = [] %}{% for i in [1, 2] %}{% set acc = acc + [i] %}{% endfor %}{{ acc }}', None, '[]'),
    ('{% for i in [1, 2] %}{% set x = i %}{% for j in [0] %}{{ x }}{% endfor %}{% endfor %}', None, '12'),
    ('{% for i in [1, 2] %}{% set z = z | default(0) + i %}{{ z }}{% endfor %}', None, '12'),
    ('{% for i in items %}{% set x = i %}{% endfor %}{{ x }}', CTX, 'ctx'),
    ('{% for x in items %}{{ x }}{% endfor %}{{ x }}', CTX, '123ctx'),
    ("{{ x }}{% set x = 'set' %}{{ x }}", CTX, 'ctxset'),
    ("{% for i in items %}{% if loop.first %}{% set x = 'first' %}{% endif %}{{ x }}{% endfor %}", CTX, 'firstctxctx'),
    ('{% for i in [1, 2] %}{% set x %}b{{ i }}{% endset %}{{ x }}{% endfor %}[{{ x }}]', None, 'b1b2[]'),
    ('{% for i in [1, 2] %}{{ x }}{% set x = 5 %}{% endfor %}', None, ''),
    ('{% set x = 1 %}{% for i in [1] %}{{ x }}{% set x = 2 %}{{ x }}{% endfor %}{{ x }}', None, '121'),
    ('{% for i in [1, 2] recursive %}{% set x = i %}{{ x }}{% endfor %}{{ x }}', None, '12'),
    # a body that sets nothing runs in one scope for all iterations; one that does, or that
    # defines a caller, gets a scope per iteration (compiler._declares)
    ('{% macro twice() %}{{ caller() }}{{ caller() }}{% endmacro %}{% for i in [1, 2] %}{% call twice() %}{{ i }}{% endcall %}{% endfor %}', None, '1122'),
    ("{% for i in [1, 2] %}{% filter upper %}{% set y = 'a' ~ i %}{% endfilter %}{{ y }}{% endfor %}", None, ''),
    ("{% for i in [1, 2] %}{% if i == 1 %}{% if true %}{% set y = 'once' %}{% endif %}{% endif %}[{{ y }}]{% endfor %}", None, '[once][]'),
    ("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}{{ v }}{% endfor %}", None, 'a1b2'),
    ("{% for i in [1, 2] %}{% for j in [i] %}{% set i = 'x' %}{% endfor %}{{ i }}{% endfor %}", None, '12'),
]

# if does not scope
IF_SCOPE = [
    ('{% if true %}{% set x = 1 %}{% endif %}{{ x }}', None, '1'),
    ('{% if false %}{% set x = 1 %}{% endif %}[{{ x }}]', None, '[]'),
    ('{% if true %}{% if true %}{% set x = 2 %}{% endif %}{% endif %}{{ x }}', None, '2'),
    ("{% if false %}{% else %}{% set x = 'else' %}{% endif %}{{ x }}", None, 'else'),
    ('{% set x = 1 %}{% if true %}{% set x = x + 1 %}{% endif %}{{ x }}', None, '2'),
    ('{% for i in [1] %}{% if true %}{% set x = 3 %}{% endif %}{{ x }}{% endfor %}[{{ x }}]', None, '3[]'),
]

# with / filter / set blocks / call blocks
BLOCK_SCOPE = [
    ('{% with %}{% set x = 1 %}{% endwith %}[{{ x }}]', None, '[]'),
    ('{% set x = 0 %}{% with %}{% set x = 1 %}{{ x }}{% endwith %}{{ x }}', None, '10'),
    ('{% with a = 1 %}{% for i in [1] %}{{ a }}{% endfor %}{% endwith %}', None, '1'),
    ("{% filter upper %}{% set x = 'f' %}{{ x }}{% endfilter %}[{{ x }}]", None, 'F[]'),
    ("{% set b %}{% set x = 'in' %}{{ x }}{% endset %}{{ b }}[{{ x }}]", None, 'in[]'),
    ("{% set x = 'out' %}{% set b %}{{ x }}{% endset %}{{ b }}", None, 'out'),
    ('{% macro m() %}{{ caller() }}{% endmacro %}{% call m() %}{% set x = 1 %}{{ x }}{% endcall %}[{{ x }}]', None, '1[]'),
    ("{% set x = 'outer' %}{% macro m() %}{{ caller() }}{% endmacro %}{% call m() %}{{ x }}{% endcall %}", None, 'outer'),
    ("{% macro m() %}{% set x = 'macro' %}{{ caller() }}{% endmacro %}{% set x = 'tpl' %}{% call m() %}{{ x }}{% endcall %}", None, 'tpl'),
    ('{% for i in [1, 2] %}{% macro m() %}{{ caller() }}{% endmacro %}{% call m() %}{{ i }}{% endcall %}{% endfor %}', None, '12'),
]

# macros: template globals with late binding, own scope
MACRO_SCOPE = [
    ("{% set g = 'global' %}{% macro m() %}{{ g }}{% endmacro %}{{ m() }}", None, 'global'),
    ("{% macro m() %}{{ g }}{% endmacro %}{% set g = 'late' %}{{ m() }}", None, 'late'),
    ("{% macro m() %}[{{ g }}]{% endmacro %}{{ m() }}{% set g = 'late' %}{{ m() }}", None, '[][late]'),
    ("{% macro m() %}{% set g = 'local' %}{{ g }}{% endmacro %}{% set g = 'global' %}{{ m() }}{{ g }}", None, 'localglobal'),
    ("{% macro m(g) %}{{ g }}{% endmacro %}{% set g = 'global' %}{{ m('arg') }}", None, 'arg'),
    ('{% macro m() %}{{ x }}{% endmacro %}{{ m() }}', CTX, 'ctx'),
    ("{% macro m() %}{{ x }}{% endmacro %}{% set x = 'set' %}{{ m() }}", CTX, 'set'),
    ('{% macro m() %}{{ range(2) | list }}{% endmacro %}{{ m() }}', None, '[0, 1]'),
    ('{% for i in [1, 2] %}{% macro m() %}{{ i }}{% endmacro %}{{ m() }}{% endfor %}', None, '12'),
    ('{% macro a() %}A{{ b() }}{% endmacro %}{% macro b() %}B{% endmacro %}{{ a() }}', None, 'AB'),
    ('{% macro m() %}{% set inner = 1 %}{% endmacro %}{{ m() }}[{{ inner }}]', None, '[]'),
    ('{% set ns = namespace(v=1) %}{% macro bump() %}{% set ns.v = ns.v + 1 %}{% endmacro %}{{ bump() }}{{ bump() }}{{ ns.v }}', None, '3'),
    ('{% macro m() %}{% for i in [1] %}{{ loop.index }}{% endfor %}{% endmacro %}{% for j in [5, 6] %}{{ m() }}{{ loop.index }}{% endfor %}', None, '1112'),
    ("{% for i in [1] %}{% set x = 'loopvar' %}{% macro m() %}{{ x }}{% endmacro %}{{ m() }}{% endfor %}", None, 'loopvar'),
    ('{% macro m() %}{{ loop is defined }}{% endmacro %}{% for i in [1] %}{{ m() }}{% endfor %}', None, 'False'),
    ('{% set x = 1 %}{% macro m() %}{{ x }}{% endmacro %}{% set x = 2 %}{{ m() }}', None, '2'),
    ('{% macro m() %}{{ x }}{% endmacro %}{% for x in [7] %}{{ m() }}{% endfor %}', None, ''),
    ("{% macro m(a) %}{% macro inner() %}{{ a }}{% endmacro %}{{ inner() }}{% endmacro %}{{ m('nested') }}", None, 'nested'),
]

# namespaces across scopes; shadowing context, globals and builtins
NAMESPACE_AND_SHADOWING = [
    ('{% set ns = namespace(items=[]) %}{% for i in [1, 2] %}{% set ns.items = ns.items + [i] %}{% endfor %}{{ ns.items }}', None, '[1, 2]'),
    ('{% set ns = namespace(v=0) %}{% for i in [1, 2] %}{% for j in [1, 2] %}{% set ns.v = ns.v + i * j %}{% endfor %}{% endfor %}{{ ns.v }}', None, '9'),
    ("{% set ns = namespace(v='a') %}{% macro m() %}{{ caller() }}{% endmacro %}{% call m() %}{% set ns.v = 'b' %}{% endcall %}{{ ns.v }}", None, 'b'),
    ('{% set ns = namespace(v=1) %}{% with %}{% set ns.v = 2 %}{% endwith %}{{ ns.v }}', None, '2'),
    ("{% set ns = namespace(v=1) %}{% filter upper %}{% set ns.v = 'f' %}{% endfilter %}{{ ns.v }}", None, 'f'),
    ("{% set ns = namespace(v=1) %}{% set b %}{% set ns.v = 'b' %}{% endset %}{{ ns.v }}", None, 'b'),
    ('{% set ns = namespace(v=1) %}{% for i in [1] %}{% set ns = namespace(v=2) %}{{ ns.v }}{% endfor %}{{ ns.v }}', None, '21'),
    ('{% set a = namespace(v=1) %}{% set b = a %}{% set b.v = 2 %}{{ a.v }}', None, '2'),
    ("{% set range = 'shadowed' %}{{ range }}", None, 'shadowed'),
    ('{% set dict = 1 %}{{ dict }}', None, '1'),
    ('{% for range in [1] %}{{ range }}{% endfor %}{{ range(2) | list }}', None, '1[0, 1]'),
    ('{% macro range() %}mine{% endmacro %}{{ range() }}', None, 'mine'),
    ('{% set namespace = 5 %}{{ namespace }}', None, '5'),
    ('{% set true_ = 1 %}{{ true_ }}', None, '1'),
    ('{% with range = 1 %}{{ range }}{% endwith %}{{ range(1) | list }}', None, '1[0]'),
    ("{% set items = 'shadow' %}{{ items }}", CTX, 'shadow'),
    ("{% for x in items %}{% set items = 'inner' %}{% endfor %}{{ items }}", CTX, '[1, 2, 3]'),
    ("{% macro m(items) %}{{ items }}{% endmacro %}{{ m('arg') }}{{ items }}", CTX, 'arg[1, 2, 3]'),
    ("{% with x = 'with' %}{{ x }}{% endwith %}{{ x }}", CTX, 'withctx'),
    ('{% set x = 1 %}{% set x %}block{% endset %}{{ x }}', None, 'block'),
    ('{% set x, y = 1, 2 %}{% set y, x = x, y %}{{ x }}{{ y }}', None, '21'),
    ('{% for i in [1] %}{% set a, b = i, i + 1 %}{{ a }}{{ b }}{% endfor %}{{ a }}{{ b }}', None, '12'),
    ('{% set a = 1 %}{% for a in [2] %}{% set a = 3 %}{{ a }}{% endfor %}{{ a }}', None, '31'),
]

# context variables named like globals and the special names
CONTEXT_SHADOWING = [
    ('{{ loop }}{{ caller }}{{ varargs }}{{ kwargs }}', SPECIAL, 'LCVK'),
    ('{{ range }}', SPECIAL, 'R'),
    ('{{ raise_exception }}', SPECIAL, 'RE'),
    ('{{ namespace }}', SPECIAL, 'N'),
    ('{{ self }}', SPECIAL, '<TemplateReference None>'),
    ('{{ true }}{{ none }}', SPECIAL, 'TrueNone'),
    ('{{ undefined }}', SPECIAL, 'U'),
    ('{% for x in [1] %}{{ loop.index }}{% endfor %}{{ loop }}', SPECIAL, '1L'),
    ('{% macro m() %}{{ caller }}|{{ varargs }}|{{ kwargs }}|{{ loop }}{% endmacro %}{{ m() }}', SPECIAL, '|()|{}|L'),
    ('{% macro m() %}{{ range }}{% endmacro %}{{ m() }}', SPECIAL, 'R'),
]

TREE = {'tree': [{'n': 'a', 'c': [{'n': 'b', 'c': []}]}, {'n': 'c', 'c': []}]}

# names the compiler resolves once: a name never assigned is read from the context directly,
# and a loop whose body never reads `loop` keeps no loop object
RESOLVED_WHEN_COMPILING = [
    ("{% macro m() %}{{ x }}{% endmacro %}{% set x = 'tpl' %}{{ m() }}", CTX, 'tpl'),
    ('{% macro m() %}{{ items }}{% endmacro %}{% for i in [1] %}{{ m() }}{% endfor %}', CTX, '[1, 2, 3]'),
    ("{% macro m() %}{{ caller() }}{% endmacro %}{% for i in 'ab' %}{% call m() %}{{ loop.index }}{{ i }}{% endcall %}{% endfor %}", None, '1a2b'),
    ('{% for i in [1, 2] %}{% for j in [3] %}{{ loop.index }}{% endfor %}{% endfor %}', None, '11'),
    ('{% for i in [1, 2] %}{% macro m() %}{{ loop.index }}{% endmacro %}{{ m() }}{% endfor %}', None, '12'),
    ('{% for i in [1, 2] %}{{ i }}{% endfor %}{{ loop }}', SPECIAL, '12L'),
    ('{% for i in [1] %}{{ caller }}{{ varargs }}{% endfor %}', SPECIAL, 'CV'),
    ('{% if false %}{% set x = 1 %}{% endif %}{{ x }}', CTX, 'ctx'),
    ('{% for x in tree recursive %}{{ x.n }}{% if x.c %}({{ loop(x.c) }}){% endif %}{% endfor %}', TREE, 'a(b)c'),
    ('{{ range(3) | list }}{{ items | length }}', CTX, '[0, 1, 2]3'),
    ("{% for i in [1, 2] %}{% filter upper %}{{ loop.cycle('a', 'b') }}{% endfilter %}{% endfor %}", None, 'AB'),
    ('{% for i in [1, 2] %}{% set x = i %}{% endfor %}{{ x }}', CTX, 'ctx'),
    ('{% for i in [1, 2] if loop is undefined %}{{ i }}{% endfor %}', None, '12'),
    ('{% for i in [] %}{% else %}{{ loop is defined }}{% endfor %}', None, 'False'),
]


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(RESOLVED_WHEN_COMPILING))
def test_names_resolved_when_compiling(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(LOOP_SCOPE))
def test_loop_scope(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(IF_SCOPE))
def test_if_does_not_scope(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(BLOCK_SCOPE))
def test_block_scope(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(NAMESPACE_AND_SHADOWING))
def test_namespace_and_shadowing(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(CONTEXT_SHADOWING))
def test_context_shadowing(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(MACRO_SCOPE))
def test_macro_scope(configs, source, context, expected):
    check(configs, source, context, expected)
