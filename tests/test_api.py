"""The public API: Environment/Template construction and options, render() arguments, user
filters/tests/globals (with pass_environment), the three Undefined classes, the chat preset
(tojson, raise_exception, strftime_now, loop controls, generation), pickling,
undeclared_variables and render_with_spans.

Table expectations were obtained from Jinja2 3.1.6 and are hard-coded
(``MINIJINJA_TESTS_REFERENCE=1`` makes ``check`` assert that Jinja2 still agrees).
Hand-written tests below the tables state Jinja2's value where one exists.
"""

from __future__ import annotations

import json
import pickle
import random
from datetime import datetime

import jinja2
import jinja2.meta
import pytest
from engine_cases import Err, check, params, pinned_strftime_now, python_message, reference

import minijinja_py
from minijinja_py import (
    ChainableUndefined,
    Environment,
    Limits,
    StrictUndefined,
    Template,
    TemplateError,
    TemplateRuntimeError,
    TemplateSyntaxError,
    Undefined,
    UndefinedError,
    chat_environment,
    pass_environment,
)

inf = float("inf")
nan = float("nan")

U = {'d': {'a': 1}, 'n': None}
J = {'nan': nan, 'inf': inf, 'big': 1000000000000000000000000000000, 'nested': {'b': [1, {'z': 1, 'a': 2}], 'a': None}, 'tup': (1, 'x'), 'keys': {1: 'c', None: 'b', 2.5: 'd'}, 'uni': 'é\u2028</script>&\'"'}
MSG = {'messages': [{'role': 'user', 'content': 'hi'}]}


# Undefined (the default)
UNDEFINED_DEFAULT = [
    ('{{ x }}', U, {'plain': ''}),
    ('[{{ x }}]', U, {'plain': '[]'}),
    ('{{ x is defined }}', U, {'plain': 'False'}),
    ('{{ x is undefined }}', U, {'plain': 'True'}),
    ("{{ x | default('dflt') }}", U, {'plain': 'dflt'}),
    ("{{ x | d('dflt', true) }}", U, {'plain': 'dflt'}),
    ('{% if x %}t{% else %}f{% endif %}', U, {'plain': 'f'}),
    ('{% if not x %}t{% endif %}', U, {'plain': 't'}),
    ("{{ x or 'alt' }}", U, {'plain': 'alt'}),
    ("{{ x and 'alt' }}", U, {'plain': ''}),
    ('{% for i in x %}{{ i }}{% else %}empty{% endfor %}', U, {'plain': 'empty'}),
    ('{{ x | length }}', U, {'plain': '0'}),
    ('{{ x | list }}', U, {'plain': '[]'}),
    ("{{ x ~ 'a' }}", U, {'plain': 'a'}),
    ('{{ x + 1 }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x == none }}', U, {'plain': 'False'}),
    ('{{ x != 1 }}', U, {'plain': 'True'}),
    ('{{ x.attr }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ("{{ x['k'] }}", U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x.a.b }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ("{{ x.a | default('d') }}", U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x() }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x | string }}', U, {'plain': ''}),
    ('{{ x | upper }}', U, {'plain': ''}),
    ('{{ x | join }}', U, {'plain': ''}),
    ('{{ x | tojson }}', U, {'plain': Err(cls='TemplateRuntimeError', message='Object of type Undefined is not JSON serializable')}),
    ("{{ 'a' in x }}", U, {'plain': 'False'}),
    ('{{ x is none }}', U, {'plain': 'False'}),
    ('{{ x is string }}', U, {'plain': 'False'}),
    ('{{ x | e }}', U, {'plain': ''}),
    ('{{ [x] }}', U, {'plain': '[Undefined]'}),
    ('{{ x | count }}', U, {'plain': '0'}),
    ('{{ x | first }}', U, {'plain': ''}),
    ('{{ x | int }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x | bool if false }}', U, {'plain': ''}),
    ('{{ d.missing }}', U, {'plain': ''}),
    ('{{ d.missing.deeper }}', U, {'plain': Err(cls='UndefinedError', message="'dict object' has no attribute 'missing'")}),
    ("{{ d.missing | default('d') }}", U, {'plain': 'd'}),
    ('{{ d.missing is defined }}', U, {'plain': 'False'}),
    ('{{ n.attr }}', U, {'plain': ''}),
    ("{{ d['missing'] }}", U, {'plain': ''}),
    ("{{ x if x is defined else 'safe' }}", U, {'plain': 'safe'}),
    ("{{ 'a' if false }}", U, {'plain': ''}),
    ('{% set y = x %}{{ y is defined }}', U, {'plain': 'False'}),
    ('{% macro m(a) %}{{ a }}{% endmacro %}[{{ m() }}]', U, {'plain': '[]'}),
    ('{{ x | select | list }}', U, {'plain': '[]'}),
    ("{{ x | map('upper') | list }}", U, {'plain': '[]'}),
    ('{{ x is divisibleby 2 }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x < 1 }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ -x }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x | trim }}', U, {'plain': ''}),
    ('{{ x | items | list }}', U, {'plain': '[]'}),
    ('{{ x | dictsort }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{% for i in x %}{% endfor %}', U, {'plain': ''}),
    ('{% if x %}{% endif %}', U, {'plain': ''}),
    ('{% set y = x %}ok', U, {'plain': 'ok'}),
    ('{% set y = x %}{{ y }}', U, {'plain': ''}),
    ('{% macro f(a) %}{{ a }}{% endmacro %}{{ f(x) }}', U, {'plain': ''}),
    ('{% macro f(a=x) %}ok{% endmacro %}{{ f() }}', U, {'plain': 'ok'}),
    ('{% with y = x %}ok{% endwith %}', U, {'plain': 'ok'}),
    ('{% filter upper %}{{ x }}{% endfilter %}', U, {'plain': ''}),
    ('{% set ns = namespace(a=x) %}ok', U, {'plain': 'ok'}),
    ('{{ x.y.z | default(1) }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{% for i in x.y %}{% else %}E{% endfor %}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{% if x.y is defined %}d{% else %}u{% endif %}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ [x] | length }}', U, {'plain': '1'}),
    ('{{ x | default(x) }}', U, {'plain': ''}),
    ('{{ {"a": x} }}', U, {'plain': "{'a': Undefined}"}),
    ('{{ (x,) }}', U, {'plain': '(Undefined,)'}),
    ('{% set y %}{{ x }}{% endset %}[{{ y }}]', U, {'plain': '[]'}),
    ('{{ x ~ "" if false }}', U, {'plain': ''}),
    ('{% for a, b in x %}{% endfor %}ok', U, {'plain': 'ok'}),
    ('{{ range(x) }}', U, {'plain': Err(cls='TemplateRuntimeError', message="'Undefined' object cannot be interpreted as an integer")}),
    ('{{ dict(a=x) }}', U, {'plain': "{'a': Undefined}"}),
    ('{{ x.y() }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x[0][1] }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{% if x is undefined %}u{% endif %}', U, {'plain': 'u'}),
    ('{{ x | list | length }}', U, {'plain': '0'}),
]

# StrictUndefined
UNDEFINED_STRICT = [
    ('{{ x }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('[{{ x }}]', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x is defined }}', U, {'plain': 'False'}),
    ('{{ x is undefined }}', U, {'plain': 'True'}),
    ("{{ x | default('dflt') }}", U, {'plain': 'dflt'}),
    ("{{ x | d('dflt', true) }}", U, {'plain': 'dflt'}),
    ('{% if x %}t{% else %}f{% endif %}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{% if not x %}t{% endif %}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ("{{ x or 'alt' }}", U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ("{{ x and 'alt' }}", U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{% for i in x %}{{ i }}{% else %}empty{% endfor %}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x | length }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x | list }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ("{{ x ~ 'a' }}", U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x + 1 }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x == none }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x != 1 }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x.attr }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ("{{ x['k'] }}", U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x.a.b }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ("{{ x.a | default('d') }}", U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x() }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x | string }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x | upper }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x | join }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x | tojson }}', U, {'plain': Err(cls='TemplateRuntimeError', message='Object of type StrictUndefined is not JSON serializable')}),
    ("{{ 'a' in x }}", U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x is none }}', U, {'plain': 'False'}),
    ('{{ x is string }}', U, {'plain': 'False'}),
    ('{{ x | e }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ [x] }}', U, {'plain': '[Undefined]'}),
    ('{{ x | count }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x | first }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x | int }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x | bool if false }}', U, {'plain': ''}),
    ('{{ d.missing }}', U, {'plain': Err(cls='UndefinedError', message="'dict object' has no attribute 'missing'")}),
    ('{{ d.missing.deeper }}', U, {'plain': Err(cls='UndefinedError', message="'dict object' has no attribute 'missing'")}),
    ("{{ d.missing | default('d') }}", U, {'plain': 'd'}),
    ('{{ d.missing is defined }}', U, {'plain': 'False'}),
    ('{{ n.attr }}', U, {'plain': Err(cls='UndefinedError', message="'None' has no attribute 'attr'")}),
    ("{{ d['missing'] }}", U, {'plain': Err(cls='UndefinedError', message="'dict object' has no attribute 'missing'")}),
    ("{{ x if x is defined else 'safe' }}", U, {'plain': 'safe'}),
    ("{{ 'a' if false }}", U, {'plain': ''}),
    ('{% set y = x %}{{ y is defined }}', U, {'plain': 'False'}),
    ('{% macro m(a) %}{{ a }}{% endmacro %}[{{ m() }}]', U, {'plain': Err(cls='UndefinedError', message="parameter 'a' was not provided")}),
    ('{{ x | select | list }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ("{{ x | map('upper') | list }}", U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x is divisibleby 2 }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x < 1 }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ -x }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x | trim }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x | items | list }}', U, {'plain': '[]'}),
    ('{{ x | dictsort }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{% for i in x %}{% endfor %}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{% if x %}{% endif %}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{% set y = x %}ok', U, {'plain': 'ok'}),
    ('{% set y = x %}{{ y }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{% macro f(a) %}{{ a }}{% endmacro %}{{ f(x) }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{% macro f(a=x) %}ok{% endmacro %}{{ f() }}', U, {'plain': 'ok'}),
    ('{% with y = x %}ok{% endwith %}', U, {'plain': 'ok'}),
    ('{% filter upper %}{{ x }}{% endfilter %}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{% set ns = namespace(a=x) %}ok', U, {'plain': 'ok'}),
    ('{{ x.y.z | default(1) }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{% for i in x.y %}{% else %}E{% endfor %}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{% if x.y is defined %}d{% else %}u{% endif %}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ [x] | length }}', U, {'plain': '1'}),
    ('{{ x | default(x) }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ {"a": x} }}', U, {'plain': "{'a': Undefined}"}),
    ('{{ (x,) }}', U, {'plain': '(Undefined,)'}),
    ('{% set y %}{{ x }}{% endset %}[{{ y }}]', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x ~ "" if false }}', U, {'plain': ''}),
    ('{% for a, b in x %}{% endfor %}ok', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ range(x) }}', U, {'plain': Err(cls='TemplateRuntimeError', message="'StrictUndefined' object cannot be interpreted as an integer")}),
    ('{{ dict(a=x) }}', U, {'plain': "{'a': Undefined}"}),
    ('{{ x.y() }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x[0][1] }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{% if x is undefined %}u{% endif %}', U, {'plain': 'u'}),
    ('{{ x | list | length }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
]

# ChainableUndefined
UNDEFINED_CHAINABLE = [
    ('{{ x }}', U, {'plain': ''}),
    ('[{{ x }}]', U, {'plain': '[]'}),
    ('{{ x is defined }}', U, {'plain': 'False'}),
    ('{{ x is undefined }}', U, {'plain': 'True'}),
    ("{{ x | default('dflt') }}", U, {'plain': 'dflt'}),
    ("{{ x | d('dflt', true) }}", U, {'plain': 'dflt'}),
    ('{% if x %}t{% else %}f{% endif %}', U, {'plain': 'f'}),
    ('{% if not x %}t{% endif %}', U, {'plain': 't'}),
    ("{{ x or 'alt' }}", U, {'plain': 'alt'}),
    ("{{ x and 'alt' }}", U, {'plain': ''}),
    ('{% for i in x %}{{ i }}{% else %}empty{% endfor %}', U, {'plain': 'empty'}),
    ('{{ x | length }}', U, {'plain': '0'}),
    ('{{ x | list }}', U, {'plain': '[]'}),
    ("{{ x ~ 'a' }}", U, {'plain': 'a'}),
    ('{{ x + 1 }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x == none }}', U, {'plain': 'False'}),
    ('{{ x != 1 }}', U, {'plain': 'True'}),
    ('{{ x.attr }}', U, {'plain': ''}),
    ("{{ x['k'] }}", U, {'plain': ''}),
    ('{{ x.a.b }}', U, {'plain': ''}),
    ("{{ x.a | default('d') }}", U, {'plain': 'd'}),
    ('{{ x() }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x | string }}', U, {'plain': ''}),
    ('{{ x | upper }}', U, {'plain': ''}),
    ('{{ x | join }}', U, {'plain': ''}),
    ('{{ x | tojson }}', U, {'plain': Err(cls='TemplateRuntimeError', message='Object of type ChainableUndefined is not JSON serializable')}),
    ("{{ 'a' in x }}", U, {'plain': 'False'}),
    ('{{ x is none }}', U, {'plain': 'False'}),
    ('{{ x is string }}', U, {'plain': 'False'}),
    ('{{ x | e }}', U, {'plain': ''}),
    ('{{ [x] }}', U, {'plain': '[Undefined]'}),
    ('{{ x | count }}', U, {'plain': '0'}),
    ('{{ x | first }}', U, {'plain': ''}),
    ('{{ x | int }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x | bool if false }}', U, {'plain': ''}),
    ('{{ d.missing }}', U, {'plain': ''}),
    ('{{ d.missing.deeper }}', U, {'plain': ''}),
    ("{{ d.missing | default('d') }}", U, {'plain': 'd'}),
    ('{{ d.missing is defined }}', U, {'plain': 'False'}),
    ('{{ n.attr }}', U, {'plain': ''}),
    ("{{ d['missing'] }}", U, {'plain': ''}),
    ("{{ x if x is defined else 'safe' }}", U, {'plain': 'safe'}),
    ("{{ 'a' if false }}", U, {'plain': ''}),
    ('{% set y = x %}{{ y is defined }}', U, {'plain': 'False'}),
    ('{% macro m(a) %}{{ a }}{% endmacro %}[{{ m() }}]', U, {'plain': '[]'}),
    ('{{ x | select | list }}', U, {'plain': '[]'}),
    ("{{ x | map('upper') | list }}", U, {'plain': '[]'}),
    ('{{ x is divisibleby 2 }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x < 1 }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ -x }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x | trim }}', U, {'plain': ''}),
    ('{{ x | items | list }}', U, {'plain': '[]'}),
    ('{{ x | dictsort }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{% for i in x %}{% endfor %}', U, {'plain': ''}),
    ('{% if x %}{% endif %}', U, {'plain': ''}),
    ('{% set y = x %}ok', U, {'plain': 'ok'}),
    ('{% set y = x %}{{ y }}', U, {'plain': ''}),
    ('{% macro f(a) %}{{ a }}{% endmacro %}{{ f(x) }}', U, {'plain': ''}),
    ('{% macro f(a=x) %}ok{% endmacro %}{{ f() }}', U, {'plain': 'ok'}),
    ('{% with y = x %}ok{% endwith %}', U, {'plain': 'ok'}),
    ('{% filter upper %}{{ x }}{% endfilter %}', U, {'plain': ''}),
    ('{% set ns = namespace(a=x) %}ok', U, {'plain': 'ok'}),
    ('{{ x.y.z | default(1) }}', U, {'plain': '1'}),
    ('{% for i in x.y %}{% else %}E{% endfor %}', U, {'plain': 'E'}),
    ('{% if x.y is defined %}d{% else %}u{% endif %}', U, {'plain': 'u'}),
    ('{{ [x] | length }}', U, {'plain': '1'}),
    ('{{ x | default(x) }}', U, {'plain': ''}),
    ('{{ {"a": x} }}', U, {'plain': "{'a': Undefined}"}),
    ('{{ (x,) }}', U, {'plain': '(Undefined,)'}),
    ('{% set y %}{{ x }}{% endset %}[{{ y }}]', U, {'plain': '[]'}),
    ('{{ x ~ "" if false }}', U, {'plain': ''}),
    ('{% for a, b in x %}{% endfor %}ok', U, {'plain': 'ok'}),
    ('{{ range(x) }}', U, {'plain': Err(cls='TemplateRuntimeError', message="'ChainableUndefined' object cannot be interpreted as an integer")}),
    ('{{ dict(a=x) }}', U, {'plain': "{'a': Undefined}"}),
    ('{{ x.y() }}', U, {'plain': Err(cls='UndefinedError', message="'x' is undefined")}),
    ('{{ x[0][1] }}', U, {'plain': ''}),
    ('{% if x is undefined %}u{% endif %}', U, {'plain': 'u'}),
    ('{{ x | list | length }}', U, {'plain': '0'}),
]

# the chat preset vs a plain Environment
PRESET = [
    ("{{ {'b': 1, 'a': '<é>'} | tojson }}", None, {'plain': '{"a": "\\u003c\\u00e9\\u003e", "b": 1}', 'chat': '{"b": 1, "a": "<é>"}'}),
    ('{{ [\'é\', \'<&>\', "\'"] | tojson }}', None, {'plain': '["\\u00e9", "\\u003c\\u0026\\u003e", "\\u0027"]', 'chat': '["é", "<&>", "\'"]'}),
    ("{{ {'b': [1, 2], 'a': none} | tojson(indent=2) }}", None, {'plain': '{\n  "a": null,\n  "b": [\n    1,\n    2\n  ]\n}', 'chat': '{\n  "b": [\n    1,\n    2\n  ],\n  "a": null\n}'}),
    ("{{ {'b': 1, 'a': 2} | tojson(sort_keys=true) }}", None, {'plain': Err(cls='TemplateRuntimeError', message="do_tojson() got an unexpected keyword argument 'sort_keys'"), 'chat': '{"a": 2, "b": 1}'}),
    ("{{ [1, 2] | tojson(separators=(',', ':')) }}", None, {'plain': Err(cls='TemplateRuntimeError', message="do_tojson() got an unexpected keyword argument 'separators'"), 'chat': '[1,2]'}),
    ("{{ 'é' | tojson(ensure_ascii=true) }}", None, {'plain': Err(cls='TemplateRuntimeError', message="do_tojson() got an unexpected keyword argument 'ensure_ascii'"), 'chat': '"\\u00e9"'}),
    ('{{ 1.0 | tojson }}', None, '1.0'),
    ('{{ none | tojson }}', None, 'null'),
    ('{{ true | tojson }}', None, 'true'),
    ('{{ (1, 2) | tojson }}', None, '[1, 2]'),
    ('{{ {1: 2} | tojson }}', None, '{"1": 2}'),
    ('{{ \'a\\nb\\t"\' | tojson }}', None, '"a\\nb\\t\\""'),
    ("{{ '</script>' | tojson }}", None, {'plain': '"\\u003c/script\\u003e"', 'chat': '"</script>"'}),
    ('{{ x | tojson }}', None, Err(cls='TemplateRuntimeError', message='Object of type Undefined is not JSON serializable')),
    ("{{ {'a': x} | tojson }}", None, Err(cls='TemplateRuntimeError', message='Object of type Undefined is not JSON serializable')),
    ('{{ [1] | tojson(foo=1) }}', None, {'plain': Err(cls='TemplateRuntimeError', message="do_tojson() got an unexpected keyword argument 'foo'"), 'chat': Err(cls='TemplateRuntimeError', message="tojson() got an unexpected keyword argument 'foo'")}),
    ('{{ [1] | tojson(2) }}', None, {'plain': '[\n  1\n]', 'chat': '[1]'}),
    ("{{ {'z': {'y': 1, 'x': 2}} | tojson }}", None, {'plain': '{"z": {"x": 2, "y": 1}}', 'chat': '{"z": {"y": 1, "x": 2}}'}),
    ("{{ raise_exception('Bad role') }}", None, {'plain': Err(cls='UndefinedError', message="'raise_exception' is undefined"), 'chat': Err(cls='TemplateError', message='Bad role')}),
    ("{{ raise_exception(x ~ 'y') }}", None, {'plain': Err(cls='UndefinedError', message="'raise_exception' is undefined"), 'chat': Err(cls='TemplateError', message='y')}),
    ("{% if true %}ok{{ raise_exception('stop') }}{% endif %}", None, {'plain': Err(cls='UndefinedError', message="'raise_exception' is undefined"), 'chat': Err(cls='TemplateError', message='stop')}),
    ("{{ strftime_now('%Y-%m-%d %H:%M') }}", None, {'plain': Err(cls='UndefinedError', message="'strftime_now' is undefined"), 'chat': '2026-01-15 12:34'}),
    ("{{ strftime_now('%d %b %Y') }}", None, {'plain': Err(cls='UndefinedError', message="'strftime_now' is undefined"), 'chat': '15 Jan 2026'}),
    ('{{ strftime_now() }}', None, {'plain': Err(cls='UndefinedError', message="'strftime_now' is undefined"), 'chat': Err(cls='TemplateRuntimeError', message="pinned_strftime_now() missing 1 required positional argument: 'fmt'")}),
    ('{{ strftime_now is defined }}{{ raise_exception is defined }}', None, {'plain': 'FalseFalse', 'chat': 'TrueTrue'}),
    ('{% set ns = namespace(a=1) %}{% set ns.b = 2 %}{{ ns.a }}{{ ns.b }}', None, '12'),
    ('{% set ns = namespace(_a=1) %}{{ ns._a }}', None, {'plain': '', 'chat': Err(cls='SecurityError', message="Chat templates cannot store underscore-prefixed attributes on a namespace, but got '_a'. Please rename the attribute.")}),
    ('{{ namespace(a=1).a }}', None, '1'),
    ('{{ dict(a=1) }}', None, "{'a': 1}"),
    ('{{ dict(a=1).items() | list }}', None, "[('a', 1)]"),
    ('{% for x in [1, 2, 3] %}{% if x == 2 %}{% break %}{% endif %}{{ x }}{% endfor %}', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'break'. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'."), 'chat': '1'}),
    ('{% for x in [1, 2, 3] %}{% if x == 2 %}{% continue %}{% endif %}{{ x }}{% endfor %}', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'continue'. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'."), 'chat': '13'}),
    ('{% break %}', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'break'."), 'chat': Err(cls='TemplateSyntaxError', message="'break' outside loop")}),
    ('{% generation %}g{% endgeneration %}', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'generation'."), 'chat': 'g'}),
    ('a{% generation %}b{% endgeneration %}c', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'generation'."), 'chat': 'abc'}),
    ('{% if true %}\n  x\n{% endif %}\n', None, {'plain': '\n  x\n', 'chat': '  x\n'}),
    ('  {% for m in [1] %}\n{{ m }}\n  {% endfor %}\n', None, {'plain': '  \n1\n  ', 'chat': '1\n'}),
    ('{{ range(3) | list }}', None, '[0, 1, 2]'),
    ('{{ lipsum is defined }}{{ cycler is defined }}{{ joiner is defined }}', None, 'TrueTrueTrue'),
]

# tojson: json.dumps semantics in chat, Jinja2's html-safe sorted dumps in plain
TOJSON = [
    ('{{ nan | tojson }}', J, 'NaN'),
    ('{{ inf | tojson }}', J, 'Infinity'),
    ('{{ big | tojson }}', J, '1000000000000000000000000000000'),
    ('{{ nested | tojson }}', J, {'plain': '{"a": null, "b": [1, {"a": 2, "z": 1}]}', 'chat': '{"b": [1, {"z": 1, "a": 2}], "a": null}'}),
    ('{{ nested | tojson(indent=2) }}', J, {'plain': '{\n  "a": null,\n  "b": [\n    1,\n    {\n      "a": 2,\n      "z": 1\n    }\n  ]\n}', 'chat': '{\n  "b": [\n    1,\n    {\n      "z": 1,\n      "a": 2\n    }\n  ],\n  "a": null\n}'}),
    ('{{ nested | tojson(indent=0) }}', J, {'plain': '{\n"a": null,\n"b": [\n1,\n{\n"a": 2,\n"z": 1\n}\n]\n}', 'chat': '{\n"b": [\n1,\n{\n"z": 1,\n"a": 2\n}\n],\n"a": null\n}'}),
    ('{{ tup | tojson }}', J, '[1, "x"]'),
    ('{{ keys | tojson }}', J, {'plain': Err(cls='TemplateRuntimeError', message="'<' not supported between instances of 'NoneType' and 'int'"), 'chat': '{"1": "c", "null": "b", "2.5": "d"}'}),
    ('{{ uni | tojson }}', J, {'plain': '"\\u00e9\\u2028\\u003c/script\\u003e\\u0026\\u0027\\""', 'chat': '"é\u2028</script>&\'\\""'}),
    ('{{ uni | tojson(ensure_ascii=true) }}', J, {'plain': Err(cls='TemplateRuntimeError', message="do_tojson() got an unexpected keyword argument 'ensure_ascii'"), 'chat': '"\\u00e9\\u2028</script>&\'\\""'}),
    ("{{ ('<' | safe) | tojson }}", J, {'plain': '"\\u003c"', 'chat': '"<"'}),
    ("{{ {'k': '<' | e} | tojson }}", J, {'plain': '{"k": "\\u0026lt;"}', 'chat': '{"k": "&lt;"}'}),
    ('{{ nested | tojson(sort_keys=false) }}', J, {'plain': Err(cls='TemplateRuntimeError', message="do_tojson() got an unexpected keyword argument 'sort_keys'"), 'chat': '{"b": [1, {"z": 1, "a": 2}], "a": null}'}),
    ("{{ nested | tojson(separators=(',', ':')) }}", J, {'plain': Err(cls='TemplateRuntimeError', message="do_tojson() got an unexpected keyword argument 'separators'"), 'chat': '{"b":[1,{"z":1,"a":2}],"a":null}'}),
    ("{{ nested | tojson(indent='  ') }}", J, {'plain': '{\n  "a": null,\n  "b": [\n    1,\n    {\n      "a": 2,\n      "z": 1\n    }\n  ]\n}', 'chat': '{\n  "b": [\n    1,\n    {\n      "z": 1,\n      "a": 2\n    }\n  ],\n  "a": null\n}'}),
    ('{{ [1, [2, [3]]] | tojson(indent=1) }}', J, '[\n 1,\n [\n  2,\n  [\n   3\n  ]\n ]\n]'),
    ('{{ {} | tojson(indent=2) }}', J, '{}'),
    ('{{ [] | tojson(indent=2) }}', J, '[]'),
    ("{{ {'a': 1} | tojson | safe }}", J, '{"a": 1}'),
    ("{{ ({'a': 1} | tojson) is string }}", J, 'True'),
    ("{{ ({'a': '<'} | tojson) ~ '<' }}", J, {'plain': '{"a": "\\u003c"}<', 'chat': '{"a": "<"}<'}),
    ('{{ range(2) | tojson }}', J, Err(cls='TemplateRuntimeError', message='Object of type range is not JSON serializable')),
    ("{{ 'x' | tojson(2) }}", J, '"x"'),
    ('{{ nested.b | tojson }}', J, {'plain': '[1, {"a": 2, "z": 1}]', 'chat': '[1, {"z": 1, "a": 2}]'}),
]

# the chat helpers inside macros, call blocks and loops (chat only)
CHAT_HELPERS = [
    ('{{ messages[0].missing | tojson }}', MSG, {'chat': Err(cls='TemplateRuntimeError', message='Object of type Undefined is not JSON serializable')}),
    ('{{ messages[0] | tojson }}', MSG, {'chat': '{"role": "user", "content": "hi"}'}),
    ('{{ messages | tojson(indent=2) }}', MSG, {'chat': '[\n  {\n    "role": "user",\n    "content": "hi"\n  }\n]'}),
    ("{% macro m() %}{{ raise_exception('in macro') }}{% endmacro %}{{ m() }}", MSG, {'chat': Err(cls='TemplateError', message='in macro')}),
    ("{% macro m() %}{{ caller() }}{% endmacro %}{% call m() %}{{ raise_exception('in call') }}{% endcall %}", MSG, {'chat': Err(cls='TemplateError', message='in call')}),
    ("{% for m in messages %}{% if m.role != 'system' %}{{ raise_exception('Role ' ~ m.role ~ ' unsupported') }}{% endif %}{% endfor %}", MSG, {'chat': Err(cls='TemplateError', message='Role user unsupported')}),
    ("{{ strftime_now('%A %j %U %p %y') }}", MSG, {'chat': 'Thursday 015 02 PM 26'}),
    ("{{ strftime_now('%%') }}", MSG, {'chat': '%'}),
    ("{{ strftime_now('') }}", MSG, {'chat': ''}),
    ('{{ strftime_now(1) }}', MSG, {'chat': Err(cls='TemplateRuntimeError', message='strftime() argument 1 must be str, not int')}),
    ('{{ messages[0].content | tojson | length }}', MSG, {'chat': '4'}),
    ("{{ {'tools': none} | tojson }}", MSG, {'chat': '{"tools": null}'}),
    ("{{ messages | map(attribute='role') | list | tojson }}", MSG, {'chat': '["user"]'}),
    ("{{ messages | selectattr('role', 'eq', 'user') | map(attribute='content') | first }}", MSG, {'chat': 'hi'}),
    ("{% set ns = namespace(found=false) %}{% for m in messages %}{% if m.role == 'user' %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.found }}", MSG, {'chat': 'True'}),
    ('{{ namespace(__x=1) }}', MSG, {'chat': Err(cls='SecurityError', message="Chat templates cannot store underscore-prefixed attributes on a namespace, but got '__x'. Please rename the attribute.")}),
    ('{{ dict(a=messages) | tojson }}', MSG, {'chat': '{"a": [{"role": "user", "content": "hi"}]}'}),
]

# the globals: cycler, joiner, lipsum, namespace, range, dict
GLOBALS = [
    ("{% set c = cycler('a', 'b') %}{{ c.next() }}{{ c.next() }}{{ c.next() }}{{ c.current }}", None, 'abab'),
    ('{% set c = cycler(1, 2) %}{{ c.next() }}{% set _ = c.reset() %}{{ c.next() }}', None, '11'),
    ("{% set c = cycler('x') %}{% for i in range(3) %}{{ c.next() }}{% endfor %}", None, 'xxx'),
    ('{% set c = cycler(1) %}{{ c.items }}', None, '(1,)'),
    ("{% set j = joiner(', ') %}{% for x in [1, 2, 3] %}{{ j() }}{{ x }}{% endfor %}", None, '1, 2, 3'),
    ('{% set j = joiner() %}{{ j() }}|{{ j() }}|{{ j() }}', None, '|, |, '),
    ("{% set j = joiner('|') %}[{{ j() }}]", None, '[]'),
    ('{{ lipsum(1, false, 5, 5) | wordcount }}', None, Err(cls='TemplateRuntimeError', message=python_message(lambda: random.randrange(5, 5)))),
    ('{{ lipsum(2) | length > 0 }}', None, 'True'),
    ('{{ lipsum(0) }}', None, ''),
    ("{% set ns = namespace(a=1, b='x') %}{{ ns.a }}{{ ns['b'] }}", None, '1x'),
    ('{% set ns = namespace() %}{{ ns.missing is defined }}', None, 'False'),
    ("{% set ns = namespace(a=1) %}{{ ns | attr('a') }}", None, '1'),
    ('{% set ns = namespace(a=1) %}{% set ns.a = ns.a + 1 %}{% set ns.a = ns.a * 10 %}{{ ns.a }}', None, '20'),
    ('{{ namespace(a=1, b=2).b }}', None, '2'),
    ("{{ namespace({'x': 1}, y=2).y }}", None, '2'),
    ('{% set ns = namespace(l=[]) %}{{ ns.l.append(1) }}', None, Err(cls='SecurityError', message="access to attribute 'append' of 'list' object is unsafe.")),
    ('{{ range(5, 0, -1) | list }}', None, '[5, 4, 3, 2, 1]'),
    ('{{ range(0) | list }}', None, '[]'),
    ('{{ range(-3) | list }}', None, '[]'),
    ('{{ range(2, 2) | list }}', None, '[]'),
    ('{{ range(0, 10, 4) | list }}', None, '[0, 4, 8]'),
    ('{{ range(3) | length }}', None, '3'),
    ('{{ range(1, 4) | sum }}', None, '6'),
    ('{{ range(3)[1] }}', None, '1'),
    ('{{ range(10)[::3] | list }}', None, '[0, 3, 6, 9]'),
    ('{{ range(3) | reverse | list }}', None, '[2, 1, 0]'),
    ('{{ 2 in range(3) }}', None, 'True'),
    ('{{ dict(a=1) | dictsort }}', None, "[('a', 1)]"),
    ("{{ dict({'b': 1}, a=2) | dictsort }}", None, "[('a', 2), ('b', 1)]"),
    ('{{ dict(zip) }}', None, Err(cls='UndefinedError', message="'zip' is undefined")),
    ('{{ dict() }}', None, '{}'),
    ('{{ dict(x=[1]) }}', None, "{'x': [1]}"),
    ("{{ dict([['k', 'v']]) }}", None, "{'k': 'v'}"),
]

# the engine's own objects (loop, namespace, macro, cycler) through filters and operators
RUNTIME_OBJECTS = [
    ("{% for x in [1] %}{{ loop | attr('index') }}{% endfor %}", None, '1'),
    ('{% for x in [1, 2] %}{{ loop.length | string }}{% endfor %}', None, '22'),
    ("{% set ns = namespace(a=1) %}{{ [ns] | map(attribute='a') | list }}", None, '[1]'),
    ("{% set ns = namespace(a=1) %}{{ [ns] | selectattr('a') | list | length }}", None, '1'),
    ('{% set ns = namespace(a=1) %}{{ ns | string }}', None, "<Namespace {'a': 1}>"),
    ('{% set ns = namespace(a=1) %}{{ ns.a is defined }}{{ ns.b is defined }}', None, 'TrueFalse'),
    ("{% macro m() %}x{% endmacro %}{{ m | attr('name') }}", None, 'm'),
    ("{% macro m() %}x{% endmacro %}{{ [m] | map('string') | list }}", None, '["<Macro \'m\'>"]'),
    ('{% macro m(a) %}{{ a }}{% endmacro %}{{ [1, 2] | map(m) | list }}', None, Err(cls='TemplateRuntimeError', message="No filter named <Macro 'm'>.")),
    ("{% set c = cycler(1, 2) %}{{ c | attr('current') }}", None, '1'),
    ('{% set ns = namespace(a=1) %}{{ ns | tojson }}', None, {'plain': Err(cls='TemplateRuntimeError', message='Object of type Namespace is not JSON serializable'), 'chat': Err(cls='TemplateRuntimeError', message='Object of type _RefNamespace is not JSON serializable')}, 'F40'),
    ("{% set ns = namespace(a={'b': 2}) %}{{ ns.a.b }}{{ ns['a']['b'] }}", None, '22'),
    ('{% set ns = namespace(a=1) %}{{ ns.items }}', None, ''),
    ('{% set ns = namespace(a=1) %}{{ ns._Namespace__attrs }}', None, ''),
    ('{% set ns = namespace(a=1) %}{{ ns.__attrs }}', None, ''),
    ('{% for x in [1] %}{{ loop.__class__ }}{% endfor %}', None, ''),
    ('{% for x in [1] %}{{ loop._iterator }}{% endfor %}', None, ''),
    ('{% for x in [1] %}{{ loop | tojson }}{% endfor %}', None, Err(cls='TemplateRuntimeError', message='Object of type LoopContext is not JSON serializable')),
    ('{% set ns = namespace(a=1) %}{% set ns.a.b = 1 %}', None, Err(cls='TemplateSyntaxError', message="expected token 'end of statement block', got '.'")),
    ('{% set ns = namespace(a=none) %}{{ ns.a }}', None, 'None'),
    ('{% set ns = namespace(a=1) %}{{ ns == ns }}', None, 'True'),
    ('{% set ns = namespace(a=1) %}{{ ns is mapping }}', None, 'False'),
    ("{% set ns = namespace(a=1) %}{{ 'a' in ns }}", None, {'plain': Err(cls='TemplateRuntimeError', message="argument of type 'Namespace' is not iterable"), 'chat': Err(cls='TemplateRuntimeError', message="argument of type '_RefNamespace' is not iterable")}, 'F40'),
    ("{% set ns = namespace(a=1) %}{{ ns | attr('b') }}", None, ''),
    ("{{ {'a': 1} | attr('a') }}", None, ''),
    ("{{ [1] | attr('0') }}", None, ''),
]


UNDEFINED_TABLES = [
    (Undefined, UNDEFINED_DEFAULT),
    (StrictUndefined, UNDEFINED_STRICT),
    (ChainableUndefined, UNDEFINED_CHAINABLE),
]


def _undefined_params():
    out = []
    for cls, table in UNDEFINED_TABLES:
        for param in params(table, configs=("plain",)):
            out.append(
                pytest.param(cls, *param.values, id=f"{cls.__name__}-{param.id}", marks=param.marks)
            )
    return out


@pytest.mark.parametrize(("undefined", "configs", "source", "context", "expected"), _undefined_params())
def test_undefined_classes(undefined, configs, source, context, expected):
    check(configs, source, context, expected, undefined=undefined)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(TOJSON))
def test_tojson(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(CHAT_HELPERS, ("chat",)))
def test_chat_helpers(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(GLOBALS))
def test_globals(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(RUNTIME_OBJECTS))
def test_runtime_objects(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(PRESET))
def test_chat_preset_vs_plain(configs, source, context, expected):
    check(configs, source, context, expected)


# -------------------------------------------------------------------------------- construction


def test_environment_defaults():
    env = Environment()
    assert (env.trim_blocks, env.lstrip_blocks, env.keep_trailing_newline) == (False, False, False)
    assert env.undefined is Undefined
    assert {"upper", "tojson", "default", "map"} <= set(env.filters)
    assert {"odd", "defined", "divisibleby", "in"} <= set(env.tests)
    assert {"range", "dict", "namespace", "cycler", "joiner", "lipsum"} <= set(env.globals)
    assert "raise_exception" not in env.globals and "strftime_now" not in env.globals


def test_chat_environment_preset():
    env = chat_environment()
    assert (env.trim_blocks, env.lstrip_blocks, env.keep_trailing_newline) == (True, True, False)
    assert env.undefined is Undefined
    assert {"raise_exception", "strftime_now", "range", "namespace", "dict"} <= set(env.globals)
    assert env.from_string("{% for x in [1, 2] %}{{ x }}{% break %}{% endfor %}").render() == "1"


def test_environments_do_not_share_registries():
    first, second = Environment(), Environment()
    first.filters["shout"] = lambda s: s.upper() + "!"
    first.globals["g"] = "G"
    assert first.from_string("{{ 'a' | shout }}{{ g }}").render() == "A!G"
    assert "shout" not in second.filters and "g" not in second.globals
    assert "shout" not in Environment().filters
    assert "raise_exception" not in Environment().globals  # chat_environment() did not leak


def test_unknown_extension_is_refused():
    with pytest.raises(ValueError, match="unknown extension 'nope'"):
        Environment(extensions=("nope",))


@pytest.mark.parametrize(
    ("extensions", "source", "expected"),
    [
        (("loopcontrols",), "{% for x in [1, 2, 3] %}{% if x == 2 %}{% break %}{% endif %}{{ x }}{% endfor %}", "1"),
        (("jinja2.ext.loopcontrols",), "{% for x in [1, 2] %}{% continue %}{{ x }}{% endfor %}.", "."),
        (("generation",), "a{% generation %}b{% endgeneration %}c", "abc"),
        (("loopcontrols", "generation"), "{% for x in [1, 2] %}{% generation %}{{ x }}{% endgeneration %}{% break %}{% endfor %}", "1"),
    ],
)
def test_optional_tags_by_extension(extensions, source, expected):
    assert Environment(extensions=extensions).from_string(source).render() == expected


@pytest.mark.parametrize(
    ("source", "tag"),
    [("{% break %}", "break"), ("{% continue %}", "continue"), ("{% generation %}x{% endgeneration %}", "generation")],
)
def test_plain_environment_has_no_optional_tags(source, tag):
    # jinja2.Environment().from_string(source) raises the same
    with pytest.raises(TemplateSyntaxError) as info:
        Environment().from_string(source)
    assert info.value.message == f"Encountered unknown tag {tag!r}."
    with pytest.raises(jinja2.TemplateSyntaxError) as reference_info:
        jinja2.Environment().from_string(source)
    assert reference_info.value.message == info.value.message


def test_template_constructor_takes_environment_options():
    assert Template("{{ x }}").render(x=1) == "1"
    assert Template("{% if true %}\n  a\n{% endif %}\n", trim_blocks=True).render() == "  a\n"
    assert Template("  {% if true %}a{% endif %}", lstrip_blocks=True).render() == "a"
    assert Template("a\n", keep_trailing_newline=True).render() == "a\n"
    assert Template("{% for x in [1, 2] %}{% break %}{% endfor %}.", extensions=("loopcontrols",)).render() == "."
    with pytest.raises(UndefinedError, match="'x' is undefined"):
        Template("{{ x }}", undefined=StrictUndefined).render()
    # the same as jinja2.Template(...)
    assert jinja2.Template("{% if true %}\n  a\n{% endif %}\n", trim_blocks=True).render() == "  a\n"


def test_template_syntax_error_at_construction():
    with pytest.raises(TemplateSyntaxError):
        Template("{% if %}")


# -------------------------------------------------------------------------------- render arguments


@pytest.mark.parametrize("factory", [Environment, chat_environment])
def test_render_arguments(factory):
    template = factory().from_string("{{ a }}-{{ b }}")
    assert template.render({"a": 1, "b": 2}) == "1-2"
    assert template.render(a=1, b=2) == "1-2"
    assert template.render({"a": 1, "b": 2}, b=3) == "1-3"  # keywords win, as in Jinja2
    assert template.render() == "-"
    assert template.render(dict(a="x"), **{"b": "y"}) == "x-y"
    from types import MappingProxyType

    assert template.render(MappingProxyType({"a": 5, "b": 6})) == "5-6"
    assert jinja2.Template("{{ a }}-{{ b }}").render({"a": 1, "b": 2}, b=3) == "1-3"


def test_render_is_repeatable_and_does_not_mutate_context():
    template = chat_environment().from_string(
        "{% set ns = namespace(n=0) %}{% for m in msgs %}{% set ns.n = ns.n + 1 %}{% endfor %}"
        "{{ ns.n }}{% set msgs = [] %}{{ msgs }}"
    )
    context = {"msgs": [1, 2]}
    assert template.render(context) == "2[]"
    assert template.render(context) == "2[]"
    assert context == {"msgs": [1, 2]}


def test_from_string_globals():
    env = Environment()
    template = env.from_string("{{ g }}{{ h }}", globals={"g": "template-global"})
    assert template.render(h="!") == "template-global!"
    assert template.render(g="context wins") == "context wins"
    assert env.from_string("{{ g }}").render() == ""


def test_environment_globals_are_seen_by_templates_and_macros():
    env = Environment()
    env.globals["site"] = "S"
    source = "{% macro m() %}{{ site }}{% endmacro %}{{ site }}{{ m() }}"
    assert env.from_string(source).render() == "SS"
    assert env.from_string(source).render(site="ctx") == "ctxctx"


# -------------------------------------------------------------------------------- user callables


@pytest.mark.parametrize("factory", [Environment, chat_environment])
def test_user_filters_tests_and_globals(factory):
    env = factory()
    env.filters["double"] = lambda value, times=2: value * times
    env.filters["upper"] = lambda value: "overridden"
    env.tests["short"] = lambda value, limit=3: len(value) <= limit
    env.globals["add"] = lambda a, b=10: a + b
    env.globals["VERSION"] = "1.0"
    source = (
        "{{ 'ab' | double }} {{ 'ab' | double(3) }} {{ 2 | double(times=4) }} {{ 'x' | upper }} "
        "{{ 'abc' is short }} {{ 'abcd' is short }} {{ 'abcd' is short(5) }} "
        "{{ add(1) }} {{ add(1, b=2) }} {{ VERSION }} "
        "{{ ['a', 'bb'] | map('double') | join(',') }} {{ ['a', 'bbbb'] | select('short') | list }}"
    )
    expected = "abab ababab 8 overridden True False True 11 3 1.0 aa,bbbb ['a']"
    assert env.from_string(source).render() == expected
    reference_env = jinja2.Environment()
    reference_env.filters.update(double=env.filters["double"], upper=env.filters["upper"])
    reference_env.tests["short"] = env.tests["short"]
    reference_env.globals.update(add=env.globals["add"], VERSION="1.0")
    assert reference_env.from_string(source).render() == expected


def test_pass_environment_global():
    env = Environment()
    env.globals["mark"] = "M"
    env.globals["g"] = pass_environment(lambda environment, value: value + environment.globals["mark"])
    assert env.from_string("{{ g('x') }}").render() == "xM"
    reference_env = jinja2.Environment()
    reference_env.globals["mark"] = "M"
    reference_env.globals["g"] = jinja2.pass_environment(lambda environment, value: value + environment.globals["mark"])
    assert reference_env.from_string("{{ g('x') }}").render() == "xM"


def test_pass_environment():
    env = Environment()
    seen = []

    @pass_environment
    def env_filter(environment, value, suffix="!"):
        seen.append(environment)
        return f"{value}{suffix}{environment.globals['mark']}"

    @pass_environment
    def env_test(environment, value):
        seen.append(environment)
        return value == environment.globals["mark"]

    env.globals["mark"] = "M"
    env.filters["f"], env.tests["t"] = env_filter, env_test
    assert env.from_string("{{ 'a' | f }} {{ 'a' | f('?') }} {{ 'M' is t }}").render() == "a!M a?M True"
    assert seen and all(item is env for item in seen)


def test_jinja2_pass_environment_marker_is_honoured():
    env = Environment()
    env.filters["envname"] = jinja2.pass_environment(lambda environment, value: type(environment).__name__)
    assert env.from_string("{{ 1 | envname }}").render() == "Environment"


def test_user_filter_sees_undefined_values():
    for cls in (Undefined, StrictUndefined, ChainableUndefined):
        env = Environment(undefined=cls)
        env.filters["kind"] = lambda value: type(value).__name__
        assert env.from_string("{{ missing | kind }}").render() == cls.__name__


def test_user_filter_error_is_a_template_error():
    env = Environment()

    def broken(value):
        raise ValueError("bad value")

    env.filters["broken"] = broken
    with pytest.raises(TemplateRuntimeError) as info:
        env.from_string("{{ 1 | broken }}").render()
    assert info.value.message == "bad value"


# -------------------------------------------------------------------------------- chat preset


def test_raise_exception_raises_exactly_template_error():
    with pytest.raises(TemplateError) as info:
        chat_environment().from_string(
            "{% if messages[0].role != 'user' %}{{ raise_exception('Conversation must start with a user message') }}{% endif %}"
        ).render(messages=[{"role": "system"}])
    assert type(info.value) is TemplateError
    assert info.value.message == "Conversation must start with a user message"


@pytest.mark.parametrize("value, text", [(42, "42"), (None, "None"), ([1], "[1]")])
def test_raise_exception_keeps_non_string_messages_as_their_text(value, text):
    # .message is always bounded text: what str() of Jinja2's error shows for the value
    with pytest.raises(TemplateError) as info:
        chat_environment().from_string("{{ raise_exception(v) }}").render(v=value)
    assert type(info.value) is TemplateError and info.value.message == text


def test_strftime_now_defaults_to_local_time():
    rendered = chat_environment().from_string("{{ strftime_now('%Y-%m-%d') }}").render()
    assert rendered in {datetime.now().strftime("%Y-%m-%d")}


def test_strftime_now_can_be_overridden():
    env = chat_environment()
    env.globals["strftime_now"] = pinned_strftime_now
    assert env.from_string("{{ strftime_now('%d %B %Y %H:%M:%S') }}").render() == "15 January 2026 12:34:56"
    env.globals["strftime_now"] = lambda fmt: "FIXED " + fmt
    assert env.from_string("{{ strftime_now('%Y') }}").render() == "FIXED %Y"
    assert chat_environment().from_string("{{ strftime_now('%Y') }}").render() == str(datetime.now().year)


def test_tojson_is_json_dumps_in_chat_and_html_safe_sorted_in_plain():
    value = {"b": "<é & 'x'>", "a": [1, None, True, 1.5]}
    chat = chat_environment().from_string("{{ v | tojson }}").render(v=value)
    plain = Environment().from_string("{{ v | tojson }}").render(v=value)
    assert chat == json.dumps(value, ensure_ascii=False)
    assert plain == jinja2.Environment().from_string("{{ v | tojson }}").render(v=value)
    assert plain == '{"a": [1, null, true, 1.5], "b": "\\u003c\\u00e9 \\u0026 \\u0027x\\u0027\\u003e"}'
    indented = chat_environment().from_string("{{ v | tojson(indent=2) }}").render(v=value)
    assert indented == json.dumps(value, ensure_ascii=False, indent=2)


# -------------------------------------------------------------------------------- pickling


@pytest.mark.parametrize("factory", [Environment, chat_environment])
def test_pickle_template_round_trip(factory):
    env = factory()
    template = env.from_string("{% for m in messages %}{{ m.role | upper }}:{{ m.content }};{% endfor %}")
    copy = pickle.loads(pickle.dumps(template))
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    assert copy.render(messages=messages) == template.render(messages=messages) == "USER:hi;ASSISTANT:yo;"
    assert copy.environment.trim_blocks == env.trim_blocks


def test_pickle_keeps_chat_globals():
    copy = pickle.loads(pickle.dumps(chat_environment().from_string("{{ raise_exception('x') }}")))
    with pytest.raises(TemplateError) as info:
        copy.render()
    assert type(info.value) is TemplateError and info.value.message == "x"


# -------------------------------------------------------------------------------- undeclared_variables

UNDECLARED = [
    "{{ x }}",
    "{{ x.y }}{{ z['k'] }}",
    "{% set y = 1 %}{{ y }}{{ x }}",
    "{{ y }}{% set y = 1 %}",
    "{% for i in items %}{{ i }}{{ loop.index }}{% endfor %}",
    "{% for k, v in d.items() %}{{ k }}{{ v }}{{ other }}{% endfor %}",
    "{% macro m(a, b=c) %}{{ a }}{{ b }}{{ q }}{% endmacro %}{{ m(1) }}",
    "{% if cond %}{{ a }}{% elif other %}{{ b }}{% else %}{{ c }}{% endif %}",
    "{{ range(3) }}{{ namespace() }}{{ dict() }}",
    "{% set ns = namespace() %}{% set ns.a = v %}",
    "{% with a = b %}{{ a }}{{ c }}{% endwith %}",
    "{% filter upper %}{{ f }}{% endfilter %}",
    "{% call(x) m() %}{{ x }}{{ y }}{% endcall %}",
    "{% set block %}{{ inside }}{% endset %}{{ block }}",
    "{{ messages | selectattr('role', 'equalto', role) | list }}",
    "{{ a if b else c }}{{ [d, e] }}{{ {'k': f} }}",
    "{% for x in xs if x > limit %}{{ x }}{% else %}{{ empty }}{% endfor %}",
    "no variables",
]


@pytest.mark.parametrize("source", UNDECLARED)
def test_undeclared_variables_match_jinja2_meta_without_globals(source):
    env = Environment()
    reference_env = jinja2.Environment()
    expected = jinja2.meta.find_undeclared_variables(reference_env.parse(source)) - set(reference_env.globals)
    assert env.from_string(source).undeclared_variables() == expected


def test_undeclared_variables_excludes_chat_globals():
    source = "{{ raise_exception('x') }}{{ strftime_now('%Y') }}{{ bos_token }}{% for m in messages %}{% endfor %}"
    assert chat_environment().from_string(source).undeclared_variables() == {"bos_token", "messages"}


# -------------------------------------------------------------------------------- render_with_spans


class _TrackedGeneration(jinja2.ext.Extension):
    """transformers' AssistantTracker: each generation block records (start, end) of its text in
    the output assembled so far from ``Template.generate()``."""

    tags = {"generation"}

    def __init__(self, environment):
        super().__init__(environment)
        self.rendered = None
        self.spans = None

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_track"), [], [], body).set_lineno(lineno)

    def _track(self, caller):
        text = caller()
        start = len("".join(self.rendered))
        self.spans.append((start, start + len(text)))
        return text


def _reference_spans(source, context):
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[_TrackedGeneration, "jinja2.ext.loopcontrols"]
    )
    tracker = next(e for e in env.extensions.values() if isinstance(e, _TrackedGeneration))
    tracker.rendered, tracker.spans = [], []
    for chunk in env.from_string(source).generate(**context):
        tracker.rendered.append(chunk)
    return "".join(tracker.rendered), tracker.spans


SPANS = [
    ("none here", {}),
    ("a{% generation %}xy{% endgeneration %}b", {}),
    ("{% generation %}{% endgeneration %}", {}),
    ("é{% generation %}日本{% endgeneration %}", {}),
    (
        "{% for m in messages %}<{{ m.role }}>{% if m.role == 'assistant' %}{% generation %}"
        "{{ m.content }}</s>{% endgeneration %}{% else %}{{ m.content }}{% endif %}\n{% endfor %}",
        {"messages": [
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello"},
            {"role": "user", "content": "Again"},
            {"role": "assistant", "content": "Sure"},
        ]},
    ),
    ("{% for i in [1, 2] %}{% generation %}<{{ i }}>{% endgeneration %}{% endfor %}", {}),
    ("{% generation %}a{% generation %}b{% endgeneration %}c{% endgeneration %}", {}),
    ("{% macro m() %}{% generation %}q{% endgeneration %}{% endmacro %}x{{ m() }}{{ m() }}", {}),
    ("{% set s %}{% generation %}q{% endgeneration %}{% endset %}ab{{ s }}", {}),
    ("{% for i in [1, 2, 3] %}{% generation %}{{ i }}{% endgeneration %}{% if i == 2 %}{% break %}{% endif %}{% endfor %}", {}),
]


@pytest.mark.parametrize(("source", "context"), SPANS)
def test_render_with_spans_matches_transformers_tracking(source, context):
    expected = _reference_spans(source, context)
    got = chat_environment().from_string(source).render_with_spans(context)
    assert got == expected
    assert got[0] == chat_environment().from_string(source).render(context)


def test_render_with_spans_slices_are_the_generated_text():
    text, spans = chat_environment().from_string(
        "<u>{{ q }}</u><a>{% generation %}{{ a }}{% endgeneration %}</a>"
    ).render_with_spans(q="question", a="answer")
    assert [text[start:end] for start, end in spans] == ["answer"]


# -------------------------------------------------------------------------------- limits


def test_limits_are_configurable():
    env = Environment(limits=Limits(max_range=10))
    assert env.from_string("{{ range(10) | list | length }}").render() == "10"
    with pytest.raises(minijinja_py.LimitError) as info:
        env.from_string("{{ range(11) | list }}").render()
    assert info.value.message == "Range too big. The sandbox blocks ranges larger than MAX_RANGE (10)."
    with pytest.raises(minijinja_py.LimitError, match="max_output"):
        Environment(limits=Limits(max_output=10)).from_string("{{ 'x' * 11 }}").render()
    with pytest.raises(minijinja_py.LimitError, match="max_steps"):
        Environment(limits=Limits(max_steps=50)).from_string("{% for i in range(100) %}{{ i }}{% endfor %}").render()
    with pytest.raises(minijinja_py.LimitError, match="max_recursion"):
        Environment(limits=Limits(max_recursion=5)).from_string(
            "{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}"
        ).render()


def test_default_range_limit_is_jinja2s():
    message = "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000)."
    for env in (Environment(), chat_environment()):
        with pytest.raises(minijinja_py.LimitError) as info:
            env.from_string("{{ range(100001) | length }}").render()
        assert info.value.message == message
    with pytest.raises(OverflowError, match=r"MAX_RANGE \(100000\)"):
        reference("chat").from_string("{{ range(100001) | length }}").render()


def test_break_inside_a_generation_block_is_refused():
    # Jinja2 (transformers' tag is a call block): SyntaxError "'break' outside loop"
    with pytest.raises(TemplateSyntaxError):
        chat_environment().from_string(
            "{% for i in [1, 2] %}{% generation %}{{ i }}{% break %}{% endgeneration %}{% endfor %}"
        )


class _Obj:
    attr = 5
    _private = 1

    def method(self, x=1):
        return x * 2


def _install_callables(env, markup):
    env.filters["nothing"] = lambda value: None
    env.filters["wrap"] = lambda value, left="[", right="]": left + str(value) + right
    env.filters["html"] = lambda value: markup("<b>") + value
    env.tests["longer"] = lambda value, n=1: len(value) > n
    env.globals["gen"] = lambda n: (i * i for i in range(n))
    env.globals["obj"] = _Obj()
    env.globals["Klass"] = dict
    return env


def test_user_callables_through_map_select_and_objects():
    import markupsafe
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    source = (
        "{{ 1 | nothing }}|{{ 'a' | wrap }}|{{ ['a', 'b'] | map('wrap', '(', right=')') | join }}|"
        "{{ ['a', 'bbb'] | select('longer', 2) | list }}|{{ ['a', 'bb'] | reject('longer') | list }}|"
        "{{ '<i>' | html }}|{{ gen(3) | list }}|{{ gen(3) | sum }}|{{ obj.attr }}|{{ obj.method() }}|"
        "{{ obj.method(x=4) }}|{{ obj._private }}|{{ obj.nope }}|{{ Klass(a=1) }}|{{ 'x' | wrap(right='>') }}"
    )
    expected = "None|[a]|(a)(b)|['bbb']|['a']|<b>&lt;i&gt;|[0, 1, 4]|5|5|2|8|||{'a': 1}|[x>"
    reference_env = _install_callables(ImmutableSandboxedEnvironment(), markupsafe.Markup)
    assert reference_env.from_string(source).render() == expected
    for factory in (Environment, chat_environment):
        env = _install_callables(factory(), minijinja_py.values.runtime.Markup)
        assert env.from_string(source).render() == expected


def test_public_names():
    expected = {
        "Environment", "Template", "chat_environment", "Undefined", "StrictUndefined",
        "ChainableUndefined", "TemplateError", "TemplateSyntaxError", "TemplateRuntimeError",
        "UndefinedError", "SecurityError", "LimitError", "Limits", "pass_environment",
    }
    assert expected <= set(minijinja_py.__all__)
    assert all(hasattr(minijinja_py, name) for name in expected)


def test_dir_lists_the_names_imported_on_first_use():
    import minijinja_py

    listed = dir(minijinja_py)
    assert set(minijinja_py.__all__) <= set(listed)
    assert "ChatTemplate" in listed and "IsolatedRenderer" in listed
    assert listed == sorted(listed)
