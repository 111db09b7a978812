"""Errors: syntax errors naming the innermost unclosed block with Jinja2's exact messages, unknown
filters/tests (compile time, or at run time inside a branch that is never compiled eagerly),
positions (lineno/colno) and the ``str()`` excerpt with a caret, runtime errors' class and
message, and that no bare Python exception ever leaves ``render()``.

Table expectations were obtained from Jinja2 3.1.6 and are hard-coded
(``MINIJINJA_TESTS_REFERENCE=1`` makes ``check`` assert that Jinja2 still agrees).
Where Jinja2 lets a Python exception (TypeError, ZeroDivisionError, ...)
escape, ours raises a TemplateRuntimeError subclass with the same message (engine_cases maps the
class names).
"""

from __future__ import annotations

import pickle
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import jinja2
import pytest
from engine_cases import Err, Ours, check, ours, params, python_message, reference

import minijinja_py
from minijinja_py import (
    IsolatedRenderer,
    SecurityError,
    TemplateError,
    TemplateRuntimeError,
    TemplateSyntaxError,
    UndefinedError,
    chat_environment,
)
from minijinja_py.errors import MAX_MESSAGE, MAX_MESSAGE_TOTAL, bounded_repr, bounded_text
from minijinja_py.pipelines import RowRenderer, error_record
from minijinja_py.pipelines.rows import InputError

ROOT = Path(__file__).resolve().parents[1]
DATA = {'d': {'a': 1}, 'l': [1, 2], 's': 'str', 'n': None, 'i': 3}


# unclosed blocks, stray and mismatched end tags
UNCLOSED = [
    ('{% if true %}', None, Err(cls='TemplateSyntaxError', message="Unexpected end of template. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'.")),
    ('{% if true %}a{% else %}b', None, Err(cls='TemplateSyntaxError', message="Unexpected end of template. Jinja was looking for the following tags: 'endif'. The innermost block that needs to be closed is 'if'.")),
    ('{% if true %}a{% elif false %}b', None, Err(cls='TemplateSyntaxError', message="Unexpected end of template. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'.")),
    ('{% for x in [] %}', None, Err(cls='TemplateSyntaxError', message="Unexpected end of template. Jinja was looking for the following tags: 'endfor' or 'else'. The innermost block that needs to be closed is 'for'.")),
    ('{% for x in [] %}{% else %}', None, Err(cls='TemplateSyntaxError', message="Unexpected end of template. Jinja was looking for the following tags: 'endfor'. The innermost block that needs to be closed is 'for'.")),
    ('{% macro m() %}', None, Err(cls='TemplateSyntaxError', message="Unexpected end of template. Jinja was looking for the following tags: 'endmacro'. The innermost block that needs to be closed is 'macro'.")),
    ('{% call m() %}', None, Err(cls='TemplateSyntaxError', message="Unexpected end of template. Jinja was looking for the following tags: 'endcall'. The innermost block that needs to be closed is 'call'.")),
    ('{% filter upper %}', None, Err(cls='TemplateSyntaxError', message="Unexpected end of template. Jinja was looking for the following tags: 'endfilter'. The innermost block that needs to be closed is 'filter'.")),
    ('{% set x %}', None, Err(cls='TemplateSyntaxError', message="Unexpected end of template. Jinja was looking for the following tags: 'endset'. The innermost block that needs to be closed is 'set'.")),
    ('{% with %}', None, Err(cls='TemplateSyntaxError', message="Unexpected end of template. Jinja was looking for the following tags: 'endwith'. The innermost block that needs to be closed is 'with'.")),
    ('{% raw %}', None, ''),
    ('{% generation %}', None, {'plain': Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'generation'."), 'chat': Err(cls='TemplateSyntaxError', message="Unexpected end of template. Jinja was looking for the following tags: 'endgeneration'. The innermost block that needs to be closed is 'generation'.")}),
    ('{% if true %}{% endfor %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endfor'. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'.")),
    ('{% if true %}{% else %}{% endfor %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endfor'. Jinja was looking for the following tags: 'endif'. The innermost block that needs to be closed is 'if'.")),
    ('{% for x in [] %}{% endif %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endif'. Jinja was looking for the following tags: 'endfor' or 'else'. The innermost block that needs to be closed is 'for'.")),
    ('{% for x in [] %}{% else %}{% endif %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endif'. Jinja was looking for the following tags: 'endfor'. The innermost block that needs to be closed is 'for'.")),
    ('{% macro m() %}{% endif %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endif'. Jinja was looking for the following tags: 'endmacro'. The innermost block that needs to be closed is 'macro'.")),
    ('{% call m() %}{% endmacro %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endmacro'. Jinja was looking for the following tags: 'endcall'. The innermost block that needs to be closed is 'call'.")),
    ('{% filter upper %}{% endset %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endset'. Jinja was looking for the following tags: 'endfilter'. The innermost block that needs to be closed is 'filter'.")),
    ('{% set x %}{% endfilter %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endfilter'. Jinja was looking for the following tags: 'endset'. The innermost block that needs to be closed is 'set'.")),
    ('{% with %}{% endif %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endif'. Jinja was looking for the following tags: 'endwith'. The innermost block that needs to be closed is 'with'.")),
    ('{% for x in [] %}{% if true %}{% endfor %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endfor'. You probably made a nesting mistake. Jinja is expecting this tag, but currently looking for 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'.")),
    ('{% if true %}{% for x in [] %}{% endif %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endif'. You probably made a nesting mistake. Jinja is expecting this tag, but currently looking for 'endfor' or 'else'. The innermost block that needs to be closed is 'for'.")),
    ('{% for x in [] %}{% if true %}', None, Err(cls='TemplateSyntaxError', message="Unexpected end of template. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'.")),
    ('{% if true %}{% for x in [] %}', None, Err(cls='TemplateSyntaxError', message="Unexpected end of template. Jinja was looking for the following tags: 'endfor' or 'else'. The innermost block that needs to be closed is 'for'.")),
    ('{% macro m() %}{% for x in [] %}{% if 1 %}{% endmacro %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endmacro'. You probably made a nesting mistake. Jinja is expecting this tag, but currently looking for 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'.")),
    ('{% endif %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endif'.")),
    ('{% endfor %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endfor'.")),
    ('{% else %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'else'.")),
    ('{% elif true %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'elif'.")),
    ('{% endmacro %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endmacro'.")),
    ('{% endraw %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endraw'.")),
    ('{% endset %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endset'.")),
    ('{% endwith %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endwith'.")),
    ('{% endcall %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endcall'.")),
    ('{% endfilter %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endfilter'.")),
    ('{% endgeneration %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endgeneration'.")),
    ('{% foo %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'foo'.")),
    ('{% if true %}{% foo %}{% endif %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'foo'. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'.")),
    ('{% for x in [] %}{% foo %}{% endfor %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'foo'. Jinja was looking for the following tags: 'endfor' or 'else'. The innermost block that needs to be closed is 'for'.")),
    ('{% for x in [] %}{% else %}{% foo %}{% endfor %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'foo'. Jinja was looking for the following tags: 'endfor'. The innermost block that needs to be closed is 'for'.")),
    ('{% if 1 %}{% else %}{% elif 2 %}{% endif %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'elif'. Jinja was looking for the following tags: 'endif'. The innermost block that needs to be closed is 'if'.")),
    ('{% if 1 %}{% else %}{% else %}{% endif %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'else'. Jinja was looking for the following tags: 'endif'. The innermost block that needs to be closed is 'if'.")),
    ('{% for x in [] %}{% elif 1 %}{% endfor %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'elif'. Jinja was looking for the following tags: 'endfor' or 'else'. The innermost block that needs to be closed is 'for'.")),
    ('{% macro m() %}{% else %}{% endmacro %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'else'. Jinja was looking for the following tags: 'endmacro'. The innermost block that needs to be closed is 'macro'.")),
    ("{% extends 'x' %}", None, Err(cls='TemplateRuntimeError', message='no loader for this environment specified'), 'F15'),
    ("{% include 'x' %}", None, Err(cls='TemplateRuntimeError', message='no loader for this environment specified'), 'F15'),
    ("{% import 'x' as y %}", None, Err(cls='TemplateRuntimeError', message='no loader for this environment specified'), 'F15'),
    ('{% block b %}{% endblock %}', None, ''),
    ('{% block a %}{% endblock %}{% block a %}{% endblock %}', None, Err(cls='TemplateSyntaxError', message="block 'a' defined twice")),
    ('{% block a %}x{% endblock %}', None, 'x'),
    ('{% block a %}{{ self }}{% endblock %}', None, '<TemplateReference None>'),
    ('{% block a scoped %}x{% endblock a %}', None, 'x'),
    ('{% block a required %}{% endblock %}', None, Err(cls='TemplateRuntimeError', message="Required block 'a' not found")),
    ('{{ super() }}', None, Err(cls='UndefinedError', message="'super' is undefined")),
    ('{% block a %}{{ super() }}{% endblock %}', None, Err(cls='UndefinedError', message="there is no parent block called 'a'.")),
    ('{% autoescape true %}{% endautoescape %}', None, '', 'F15'),
    ('{% do 1 %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'do'.")),
    ('{% trans %}{% endtrans %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'trans'.")),
    ('{% %}', None, Err(cls='TemplateSyntaxError', message='tag name expected')),
    ('{%  %}x', None, Err(cls='TemplateSyntaxError', message='tag name expected')),
    ('{% if true %}{% %}{% endif %}', None, Err(cls='TemplateSyntaxError', message='tag name expected')),
    ('{{ }}', None, Err(cls='TemplateSyntaxError', message="Expected an expression, got 'end of print statement'")),
    ('{{ 1 }', None, Err(cls='TemplateSyntaxError', message="unexpected '}'")),
    ('{{ 1 %}', None, Err(cls='TemplateSyntaxError', message="unexpected '}'")),
    ('{% if true }}', None, Err(cls='TemplateSyntaxError', message="unexpected '}'")),
    ('x {{', None, Err(cls='TemplateSyntaxError', message="unexpected 'end of template'")),
    ('x {%', None, Err(cls='TemplateSyntaxError', message='tag name expected')),
    ('x {#', None, 'x '),
    ('{{ 1 }}}}', None, '1}}'),
    ('a }} b', None, 'a }} b'),
    ('a %} b', None, 'a %} b'),
    ('line1\nline2\n{% if true %}\nline4', None, Err(cls='TemplateSyntaxError', message="Unexpected end of template. Jinja was looking for the following tags: 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'.")),
    ('line1\n{% for x in y %}\n{% if x %}\n{% endfor %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endfor'. You probably made a nesting mistake. Jinja is expecting this tag, but currently looking for 'elif' or 'else' or 'endif'. The innermost block that needs to be closed is 'if'.")),
]

# malformed expressions and tags
MALFORMED = [
    ('{{ 1 +* 2 }}', None, Err(cls='TemplateSyntaxError', message="unexpected '*'")),
    ('a\n{{ x\n + }}', None, Err(cls='TemplateSyntaxError', message="unexpected 'end of print statement'")),
    ('{{ x + }}', None, Err(cls='TemplateSyntaxError', message="unexpected 'end of print statement'")),
    ('{{ (1 }}', None, Err(cls='TemplateSyntaxError', message="unexpected '}', expected ')'")),
    ('{{ [1, }}', None, Err(cls='TemplateSyntaxError', message="unexpected '}', expected ']'")),
    ('{{ {1: } }}', None, Err(cls='TemplateSyntaxError', message="unexpected '}'")),
    ('{{ foo( }}', None, Err(cls='TemplateSyntaxError', message="unexpected '}', expected ')'")),
    ('{{ foo(1 2) }}', None, Err(cls='TemplateSyntaxError', message="expected token ',', got 'integer'")),
    ("{{ 'a' 'b' 1 }}", None, Err(cls='TemplateSyntaxError', message="expected token 'end of print statement', got 'integer'")),
    ('{{ x.1a }}', None, Err(cls='TemplateSyntaxError', message="expected token 'end of print statement', got 'a'")),
    ('{{ x[1:2:3:4] }}', None, Err(cls='TemplateSyntaxError', message="expected token ',', got ':'")),
    ('{{ not }}', None, Err(cls='TemplateSyntaxError', message="unexpected 'end of print statement'")),
    ('{{ 1 if }}', None, Err(cls='TemplateSyntaxError', message="unexpected 'end of print statement'")),
    ('{{ x | }}', None, Err(cls='TemplateSyntaxError', message="expected token 'name', got 'end of print statement'")),
    ('{{ x is }}', None, Err(cls='TemplateSyntaxError', message="expected token 'name', got 'end of print statement'")),
    ('{{ 1 and }}', None, Err(cls='TemplateSyntaxError', message="unexpected 'end of print statement'")),
    ('{{ -}}', None, Err(cls='TemplateSyntaxError', message="Expected an expression, got 'end of print statement'")),
    ('{% set %}', None, Err(cls='TemplateSyntaxError', message="Expected an expression, got 'end of statement block'")),
    ('{% set x y %}', None, Err(cls='TemplateSyntaxError', message="expected token 'end of statement block', got 'y'")),
    ('{% for x in y z %}{% endfor %}', None, Err(cls='TemplateSyntaxError', message="expected token 'end of statement block', got 'z'")),
    ('{% if x y %}{% endif %}', None, Err(cls='TemplateSyntaxError', message="expected token 'end of statement block', got 'y'")),
    ('{% macro m(a b) %}{% endmacro %}', None, Err(cls='TemplateSyntaxError', message="expected token ',', got 'b'")),
    ('{% call %}{% endcall %}', None, Err(cls='TemplateSyntaxError', message="unexpected 'end of statement block'")),
    ('{% filter 1 %}{% endfilter %}', None, Err(cls='TemplateSyntaxError', message="expected token 'name', got 'integer'")),
    ('{% with 1 %}{% endwith %}', None, Err(cls='TemplateSyntaxError', message="can't assign to 'const'")),
    ('{% with a %}{% endwith %}', None, Err(cls='TemplateSyntaxError', message="expected token '=', got 'end of statement block'")),
    ('{% endif x %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'endif'.")),
    ('{% if true %}{% endif x %}', None, Err(cls='TemplateSyntaxError', message="expected token 'end of statement block', got 'x'")),
    ('{% for x in y %}{% endfor x %}', None, Err(cls='TemplateSyntaxError', message="expected token 'end of statement block', got 'x'")),
    ('{% raw x %}{% endraw %}', None, Err(cls='TemplateSyntaxError', message="Encountered unknown tag 'raw'.")),
    ('{% raw %}{% endraw x %}', None, Err(cls='TemplateSyntaxError', message='Missing end of raw directive')),
    ('{{ 1 }}{{ }}', None, Err(cls='TemplateSyntaxError', message="Expected an expression, got 'end of print statement'")),
]

# break/continue outside a loop (chat); Jinja2 fails in Python's compiler
LOOPCONTROL_OUTSIDE_LOOP = [
    ('{% break %}', None, {'chat': Err(cls='TemplateSyntaxError', message="'break' outside loop")}),
    ('{% continue %}', None, {'chat': Err(cls='TemplateSyntaxError', message="'continue' not properly in loop")}),
    ('{% if true %}{% break %}{% endif %}', None, {'chat': Err(cls='TemplateSyntaxError', message="'break' outside loop")}),
    ('{% macro m() %}{% break %}{% endmacro %}', None, {'chat': Err(cls='TemplateSyntaxError', message="'break' outside loop")}),
    ('{% for x in [1] %}{% macro m() %}{% continue %}{% endmacro %}{% endfor %}', None, {'chat': Err(cls='TemplateSyntaxError', message="'continue' not properly in loop")}),
    ('{% for x in [1] %}{% endfor %}{% break %}', None, {'chat': Err(cls='TemplateSyntaxError', message="'break' outside loop")}),
    ('{% macro m() %}{{ caller() }}{% endmacro %}{% for x in [1] %}{% call m() %}{% break %}{% endcall %}{% endfor %}', None, {'chat': Err(cls='TemplateSyntaxError', message="'break' outside loop")}),
    ('{% for x in [1] %}{% set y %}{% break %}{% endset %}{% endfor %}', None, {'chat': ''}),
    ('{% for x in [1] %}{% filter upper %}{% continue %}{% endfilter %}{% endfor %}', None, {'chat': ''}),
]

# unknown filters and tests: compile time, or run time inside an if
UNKNOWN_NAMES = [
    ('{{ 1 | nope }}', None, Err(cls='TemplateSyntaxError', message="No filter named 'nope'.")),
    ('{{ 1 is nope }}', None, Err(cls='TemplateSyntaxError', message="No test named 'nope'.")),
    ('{% if false %}{{ 1 | nope }}{% endif %}ok', None, 'ok'),
    ('{% if true %}{{ 1 | nope }}{% endif %}', None, Err(cls='TemplateRuntimeError', message="No filter named 'nope' found.")),
    ('{% if false %}{{ 1 is nope }}{% endif %}ok', None, 'ok'),
    ('{% if true %}{{ 1 is nope }}{% endif %}', None, Err(cls='TemplateRuntimeError', message="No test named 'nope' found.")),
    ('{% if false %}x{% else %}{{ 1 | nope }}{% endif %}', None, Err(cls='TemplateRuntimeError', message="No filter named 'nope' found.")),
    ('{% if true %}x{% elif false %}{{ 1 | nope }}{% endif %}', None, 'x'),
    ('{{ 1 | nope if false }}', None, ''),
    ('{{ (1 | nope) if false else 2 }}', None, '2'),
    ('{% for x in [] %}{{ x | nope }}{% endfor %}ok', None, Err(cls='TemplateSyntaxError', message="No filter named 'nope'.")),
    ('{% macro m() %}{{ 1 | nope }}{% endmacro %}ok', None, Err(cls='TemplateSyntaxError', message="No filter named 'nope'.")),
    ('{% set x = 1 | nope %}', None, Err(cls='TemplateSyntaxError', message="No filter named 'nope'.")),
    ('{% filter nope %}x{% endfilter %}', None, Err(cls='TemplateSyntaxError', message="No filter named 'nope'.")),
    ('{% if false %}{% filter nope %}x{% endfilter %}{% endif %}ok', None, Err(cls='TemplateSyntaxError', message="No filter named 'nope'.")),
    ("{{ [1] | map('nope') | list }}", None, Err(cls='TemplateRuntimeError', message="No filter named 'nope'.")),
    ("{{ [1] | select('nope') | list }}", None, Err(cls='TemplateRuntimeError', message="No test named 'nope'.")),
    ("{{ [1] | map('nope') | list if false }}", None, ''),
    ("{{ 'nope' is filter }}", None, 'False'),
    ("{{ 'nope' is test }}", None, 'False'),
    ('{% if 1 is nope %}{% endif %}', None, Err(cls='TemplateRuntimeError', message="No test named 'nope' found.")),
    ('{% if true %}{% if 1 is nope %}{% endif %}{% endif %}', None, Err(cls='TemplateRuntimeError', message="No test named 'nope' found.")),
]

# runtime errors: class and message
RUNTIME = [
    ('{{ undefined_thing.attr }}', None, Err(cls='UndefinedError', message="'undefined_thing' is undefined")),
    ('{{ undefined_thing[0] }}', None, Err(cls='UndefinedError', message="'undefined_thing' is undefined")),
    ('{{ undefined_thing() }}', None, Err(cls='UndefinedError', message="'undefined_thing' is undefined")),
    ('{{ undefined_thing + 1 }}', None, Err(cls='UndefinedError', message="'undefined_thing' is undefined")),
    ('{{ 1 + undefined_thing }}', None, Err(cls='UndefinedError', message="'undefined_thing' is undefined")),
    ('{{ undefined_thing - 1 }}', None, Err(cls='UndefinedError', message="'undefined_thing' is undefined")),
    ('{{ -undefined_thing }}', None, Err(cls='UndefinedError', message="'undefined_thing' is undefined")),
    ('{{ undefined_thing < 1 }}', None, Err(cls='UndefinedError', message="'undefined_thing' is undefined")),
    ('{{ undefined_thing | int }}', None, Err(cls='UndefinedError', message="'undefined_thing' is undefined")),
    ('{{ undefined_thing | upper }}', None, ''),
    ('{{ undefined_thing | length }}', None, '0'),
    ('{{ undefined_thing | list }}', None, '[]'),
    ('{{ undefined_thing | first }}', None, ''),
    ('{% for x in undefined_thing %}{% endfor %}ok', None, 'ok'),
    ('{{ undefined_thing.a.b }}', None, Err(cls='UndefinedError', message="'undefined_thing' is undefined")),
    ('{{ d.nope.x }}', DATA, Err(cls='UndefinedError', message="'dict object' has no attribute 'nope'")),
    ('{{ d.nope + 1 }}', DATA, Err(cls='UndefinedError', message="'dict object' has no attribute 'nope'")),
    ('{{ l[5].x }}', DATA, Err(cls='UndefinedError', message='list object has no element 5')),
    ('{{ l[5] + 1 }}', DATA, Err(cls='UndefinedError', message='list object has no element 5')),
    ('{{ n.x }}', DATA, ''),
    ('{{ n.x.y }}', DATA, Err(cls='UndefinedError', message="'None' has no attribute 'x'")),
    ('{{ s.nope }}', DATA, ''),
    ('{{ s.nope() }}', DATA, Err(cls='UndefinedError', message="'str object' has no attribute 'nope'")),
    ('{{ d.nope() }}', DATA, Err(cls='UndefinedError', message="'dict object' has no attribute 'nope'")),
    ('{{ i.real }}', DATA, '3'),
    ('{{ i() }}', DATA, Err(cls='TemplateRuntimeError', message="'int' object is not callable")),
    ('{{ 1 / 0 }}', None, Err(cls='TemplateRuntimeError', message='division by zero')),
    ('{{ 1 // 0 }}', None, Err(cls='TemplateRuntimeError', message='integer division or modulo by zero')),
    ('{{ 1 % 0 }}', None, Err(cls='TemplateRuntimeError', message=python_message(lambda: 1 % 0))),
    ('{{ 1.5 / 0 }}', None, Err(cls='TemplateRuntimeError', message='float division by zero')),
    ("{{ 'a' + 1 }}", None, Err(cls='TemplateRuntimeError', message='can only concatenate str (not "int") to str')),
    ("{{ 1 + 'a' }}", None, Err(cls='TemplateRuntimeError', message="unsupported operand type(s) for +: 'int' and 'str'")),
    ('{{ [] + {} }}', None, Err(cls='TemplateRuntimeError', message='can only concatenate list (not "dict") to list')),
    ("{{ 'a' * 'b' }}", None, Err(cls='TemplateRuntimeError', message="can't multiply sequence by non-int of type 'str'")),
    ("{{ 'a' - 1 }}", None, Err(cls='TemplateRuntimeError', message="unsupported operand type(s) for -: 'str' and 'int'")),
    ("{{ 'a' / 1 }}", None, Err(cls='TemplateRuntimeError', message="unsupported operand type(s) for /: 'str' and 'int'")),
    ("{{ 'a' // 1 }}", None, Err(cls='TemplateRuntimeError', message="unsupported operand type(s) for //: 'str' and 'int'")),
    ("{{ 'a' ** 2 }}", None, Err(cls='TemplateRuntimeError', message="unsupported operand type(s) for ** or pow(): 'str' and 'int'")),
    ('{{ [] < 1 }}', None, Err(cls='TemplateRuntimeError', message="'<' not supported between instances of 'list' and 'int'")),
    ('{{ 1 > none }}', None, Err(cls='TemplateRuntimeError', message="'>' not supported between instances of 'int' and 'NoneType'")),
    ("{{ 'a' >= 1 }}", None, Err(cls='TemplateRuntimeError', message="'>=' not supported between instances of 'str' and 'int'")),
    ('{{ 1 in 2 }}', None, Err(cls='TemplateRuntimeError', message="argument of type 'int' is not iterable")),
    ('{{ 1 in none }}', None, Err(cls='TemplateRuntimeError', message="argument of type 'NoneType' is not iterable")),
    ("{{ -'a' }}", None, Err(cls='TemplateRuntimeError', message="bad operand type for unary -: 'str'")),
    ("{{ +'a' }}", None, Err(cls='TemplateRuntimeError', message="bad operand type for unary +: 'str'")),
    ('{{ 10.0 ** 1000 }}', None, Err(cls='TemplateRuntimeError', message="(34, 'Numerical result out of range')")),
    ("{{ 'abc' | int(base=99) }}", None, '0'),
    ("{{ 'x' | float + 'a' }}", None, Err(cls='TemplateRuntimeError', message="unsupported operand type(s) for +: 'float' and 'str'")),
    ("{{ [1, 'a'] | sort }}", None, Err(cls='TemplateRuntimeError', message="'<' not supported between instances of 'str' and 'int'")),
    ("{{ [1, 'a'] | max }}", None, Err(cls='TemplateRuntimeError', message="'>' not supported between instances of 'str' and 'int'")),
    ('{{ 1 | join }}', None, Err(cls='TemplateRuntimeError', message="'int' object is not iterable")),
    ('{{ none | length }}', None, Err(cls='TemplateRuntimeError', message="object of type 'NoneType' has no len()")),
    ('{{ 1 | length }}', None, Err(cls='TemplateRuntimeError', message="object of type 'int' has no len()")),
    ('{{ 1 | first }}', None, Err(cls='TemplateRuntimeError', message="'int' object is not iterable")),
    ('{{ 1 | list }}', None, Err(cls='TemplateRuntimeError', message="'int' object is not iterable")),
    ("{{ 'a' | round }}", None, Err(cls='TemplateRuntimeError', message="type str doesn't define __round__ method")),
    ("{{ 'a' | abs }}", None, Err(cls='TemplateRuntimeError', message="bad operand type for abs(): 'str'")),
    ("{{ 'a' | batch(0) | list }}", None, "[[], ['a']]"),
    ("{{ {} | dictsort(by='nope') }}", None, Err(cls='FilterArgumentError', message='You can only sort by either "key" or "value"')),
    ("{{ 'x' | indent(none) }}", None, Err(cls='TemplateRuntimeError', message="can't multiply sequence by non-int of type 'NoneType'")),
    ("{{ 'x' | truncate(-1) }}", None, Err(cls='TemplateRuntimeError', message='expected length >= 3, got -1')),
    ("{{ 'x' | wordwrap(0) }}", None, Err(cls='TemplateRuntimeError', message='invalid width 0 (must be > 0)')),
    ("{{ [1] | sum(start='a') }}", None, Err(cls='TemplateRuntimeError', message="sum() can't sum strings [use ''.join(seq) instead]")),
    ("{{ [{'a': 1}] | map(attribute='a.b') | list }}", None, '[Undefined]'),
    ("{{ 1 | attr('x') }}", None, ''),
    ("{{ 'a' | replace(1, 2) }}", None, 'a'),
    ("{{ 'a' | center('x') }}", None, Err(cls='TemplateRuntimeError', message="'str' object cannot be interpreted as an integer")),
    ("{{ 'a' | format(1) }}", None, Err(cls='TemplateRuntimeError', message='not all arguments converted during string formatting')),
    ("{{ '%d' | format('a') }}", None, Err(cls='TemplateRuntimeError', message='%d format: a real number is required, not str')),
    ("{{ '%(a)s' | format(1) }}", None, Err(cls='TemplateRuntimeError', message='format requires a mapping')),
    ("{{ 'a'.nope() }}", None, Err(cls='UndefinedError', message="'str object' has no attribute 'nope'")),
    ("{{ 'a'.split(1) }}", None, Err(cls='TemplateRuntimeError', message='must be str or None, not int')),
    ("{{ 'a'.startswith(1) }}", None, Err(cls='TemplateRuntimeError', message='startswith first arg must be str or a tuple of str, not int')),
    ("{{ 'a'.join(1) }}", None, Err(cls='TemplateRuntimeError', message='can only join an iterable')),
    ("{{ 'a'.index('b') }}", None, Err(cls='TemplateRuntimeError', message='substring not found')),
    ('{{ [1].index(2) }}', None, Err(cls='TemplateRuntimeError', message='2 is not in list')),
    ('{{ {}.get() }}', None, Err(cls='TemplateRuntimeError', message='get expected at least 1 argument, got 0')),
    ("{{ 'abc'.upper(1) }}", None, Err(cls='TemplateRuntimeError', message='str.upper() takes no arguments (1 given)')),
    ("{{ 'x'.format(**none) }}", None, Err(cls='TemplateRuntimeError', message='jinja2.sandbox.SandboxedEnvironment.call() argument after ** must be a mapping, not NoneType'), 'F18'),
    ("{{ '{0}'.format() }}", None, Err(cls='TemplateRuntimeError', message='tuple index out of range')),
    ("{{ '{a}'.format() }}", None, Err(cls='TemplateRuntimeError', message="'a'")),
    ("{{ '{'.format() }}", None, Err(cls='TemplateRuntimeError', message="Single '{' encountered in format string")),
    ('{{ [].append(1) }}', None, Err(cls='SecurityError', message="access to attribute 'append' of 'list' object is unsafe.")),
    ('{{ {}.update({}) }}', None, Err(cls='SecurityError', message="access to attribute 'update' of 'dict' object is unsafe.")),
    ("{{ {}.pop('a') }}", None, Err(cls='SecurityError', message="access to attribute 'pop' of 'dict' object is unsafe.")),
    ('{{ [].pop() }}', None, Err(cls='SecurityError', message="access to attribute 'pop' of 'list' object is unsafe.")),
    ('{{ [].clear() }}', None, Err(cls='SecurityError', message="access to attribute 'clear' of 'list' object is unsafe.")),
    ("{{ 'a'.__class__ }}", None, ''),
    ("{{ ''.__class__.__mro__ }}", None, Err(cls='SecurityError', message="access to attribute '__class__' of 'str' object is unsafe.")),
    ('{{ range.__globals__ }}', None, ''),
    ('{{ (1).__class__ }}', None, ''),
    ('{{ {}.__len__() }}', None, Err(cls='SecurityError', message="access to attribute '__len__' of 'dict' object is unsafe.")),
    ('{{ d.__class__ }}', DATA, ''),
    ('{{ undefined_thing.__class__ }}', None, ''),
    ('{{ undefined_thing.__class__.x }}', None, Err(cls='SecurityError', message="access to attribute '__class__' of 'Undefined' object is unsafe.")),
    ('{{ cycler.__init__ }}', None, ''),
    ('{{ lipsum.__globals__ }}', None, ''),
    ('{{ namespace.__dict__ }}', None, ''),
    ("{{ ''.format.__self__ }}", None, ''),
    ('{% set ns = namespace() %}{% set ns.__dict__ = 1 %}', None, {'plain': '', 'chat': Err(cls='SecurityError', message="Chat templates cannot store underscore-prefixed attributes on a namespace, but got '__dict__'. Please rename the attribute.")}),
    ('{{ range(10000000) | length }}', None, Err(cls='LimitError', message='Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).')),
    ('{{ range(1, 2, 0) | list }}', None, Err(cls='TemplateRuntimeError', message='range() arg 3 must not be zero')),
    ("{{ range('a') }}", None, Err(cls='TemplateRuntimeError', message="'str' object cannot be interpreted as an integer")),
    ('{{ dict(1) }}', None, Err(cls='TemplateRuntimeError', message="'int' object is not iterable")),
    ('{{ dict([1]) }}', None, Err(cls='TemplateRuntimeError', message='cannot convert dictionary update sequence element #0 to a sequence')),
    ('{{ namespace(1) }}', None, Err(cls='TemplateRuntimeError', message="'int' object is not iterable")),
    ('{{ cycler().next() }}', None, Err(cls='TemplateRuntimeError', message='at least one item has to be provided')),
    ('{{ joiner()() }}{{ joiner(1)() }}', None, ''),
    ('{% for a, b in [1] %}{% endfor %}', None, Err(cls='TemplateRuntimeError', message='cannot unpack non-iterable int object')),
    ("{% for a, b in ['abc'] %}{% endfor %}", None, Err(cls='TemplateRuntimeError', message='too many values to unpack (expected 2)')),
    ('{% for a, b in [[1]] %}{% endfor %}', None, Err(cls='TemplateRuntimeError', message='not enough values to unpack (expected 2, got 1)')),
    ('{% set a, b = [1, 2, 3] %}', None, Err(cls='TemplateRuntimeError', message='too many values to unpack (expected 2)')),
    ('{% set a, b = none %}', None, Err(cls='TemplateRuntimeError', message='cannot unpack non-iterable NoneType object')),
    ('{% for x in 1 %}{% endfor %}', None, Err(cls='TemplateRuntimeError', message="'int' object is not iterable")),
    ('{% for x in none %}{% endfor %}', None, Err(cls='TemplateRuntimeError', message="'NoneType' object is not iterable")),
    ('{% for x in 1.5 %}{% endfor %}', None, Err(cls='TemplateRuntimeError', message="'float' object is not iterable")),
    ('{% set ns = 1 %}{% set ns.a = 1 %}', None, Err(cls='TemplateRuntimeError', message='cannot assign attribute on non-namespace object')),
    ('{% set ns = {} %}{% set ns.a = 1 %}', None, Err(cls='TemplateRuntimeError', message='cannot assign attribute on non-namespace object')),
    ('{% set ns = undefined_thing %}{% set ns.a = 1 %}', None, Err(cls='TemplateRuntimeError', message='cannot assign attribute on non-namespace object')),
    ('{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}', None, Err(cls='TemplateRuntimeError', message="macro 'm' takes not more than 1 argument(s)")),
    ('{% macro m(a) %}{% endmacro %}{{ m(b=1) }}', None, Err(cls='TemplateRuntimeError', message="macro 'm' takes no keyword argument 'b'")),
    ('{% macro m() %}{% endmacro %}{{ m(1) }}', None, Err(cls='TemplateRuntimeError', message="macro 'm' takes not more than 0 argument(s)")),
    ('{% macro m() %}{{ caller() }}{% endmacro %}{{ m() }}', None, Err(cls='UndefinedError', message='No caller defined')),
    ('{% macro m() %}{% endmacro %}{% call m() %}{% endcall %}ok', None, Err(cls='TemplateRuntimeError', message="macro 'm' was invoked with two values for the special caller argument. This is most likely a bug.")),
    ('{% macro m() %}{{ caller(1) }}{% endmacro %}{% call m() %}{% endcall %}', None, Err(cls='TemplateRuntimeError', message='macro None takes not more than 0 argument(s)')),
    ('{% macro m() %}{{ caller() }}{% endmacro %}{% call(a) m() %}{{ a }}{% endcall %}', None, ''),
    ("{{ raise_exception('boom') }}", None, {'plain': Err(cls='UndefinedError', message="'raise_exception' is undefined"), 'chat': Err(cls='TemplateError', message='boom')}),
    ('{{ raise_exception() }}', None, {'plain': Err(cls='UndefinedError', message="'raise_exception' is undefined"), 'chat': Err(cls='TemplateRuntimeError', message="raise_exception() missing 1 required positional argument: 'message'")}),
    # Jinja2 keeps the int itself as .message; ours is always text, the text str(error) shows.
    ('{{ raise_exception(1) }}', None, {'plain': Err(cls='UndefinedError', message="'raise_exception' is undefined"), 'chat': Ours(Err(cls='TemplateError', message='1'))}),
    ("{% if true %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}", None, {'plain': Err(cls='UndefinedError', message="'raise_exception' is undefined"), 'chat': Err(cls='TemplateError', message='Conversation roles must alternate user/assistant/user/assistant/...')}),
    ("before{{ raise_exception('x') }}after", None, {'plain': Err(cls='UndefinedError', message="'raise_exception' is undefined"), 'chat': Err(cls='TemplateError', message='x')}),
]


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(UNCLOSED))
def test_unclosed_and_unknown_tags(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(UNKNOWN_NAMES))
def test_unknown_filters_and_tests(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(RUNTIME))
def test_runtime_errors(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(("configs", "source", "context", "expected"), params(MALFORMED))
def test_malformed(configs, source, context, expected):
    check(configs, source, context, expected)


@pytest.mark.parametrize(
    ("configs", "source", "context", "expected"), params(LOOPCONTROL_OUTSIDE_LOOP, ("chat",))
)
def test_loop_controls_outside_a_loop(configs, source, context, expected):
    check(configs, source, context, expected)


# -------------------------------------------------------------------------------- positions

# (template, lineno as Jinja2 reports it, our colno). Jinja2 has no column; ours points at the
# offending token (1-based).
SYNTAX_POSITIONS = [
    ("{% if true %}{% endfor %}", 1, 14),
    ("a\n{% for x in y %}\n{% endif %}", 3, 1),
    ("x\n\n   {{ foo( }}", 3, 12),
    ("line1\n  {{ x | nope }}", 2, 10),
    ("{{ x\n|\nnope }}", 3, 1),
    ("a {# x", 1, 3),
    ("\n\n{% raw %}x", 3, 1),
    ("a\n\n{% foo %}", 3, 1),
    ("\t{% foo %}", 1, 2),
    ("{{ 1 }}\n{% endfor %}", 2, 1),
    ("{{ 'unterminated }}", 1, 4),
    ("{% if true %}\nabc\n{{ x }}", 3, 6),
    ("a\nb\n{% if x %}", 3, 9),
    ("a\u2028{% foo %}", 1, 3),  # only \r\n, \r and \n end lines, as in Jinja2's lexer
    ("a\r\n{% foo %}", 2, 1),
    ("a\r{% foo %}", 2, 1),
    ("{{ x }}\n{{ y }}\n{% endif %}", 3, 1),
    # "Unexpected end of template" is reported on the line where the last token starts (Jinja2)
    ("{% if true %}\nabc", 1, 14),
    ("{% for x in y %}\n\n", 1, 17),
    ("{% if true %}\nabc\n{{ x }}\nfoo", 3, 8),
    ("{% set x %}\n\n", 1, 12),
]


@pytest.mark.parametrize(("source", "lineno", "colno"), SYNTAX_POSITIONS)
def test_syntax_error_positions(source, lineno, colno):
    with pytest.raises(TemplateSyntaxError) as info:
        minijinja_py.Environment().from_string(source)
    assert (info.value.lineno, info.value.colno) == (lineno, colno)


# (template, error class, lineno, colno): runtime errors point at the failing operation.
RUNTIME_POSITIONS = [
    ("a\n{{ 1 / 0 }}", TemplateRuntimeError, 2, 6),
    ("x\n  {{ y.z }}", UndefinedError, 2, 8),
    ('{% for a in [1] %}\n{{ a + "s" }}{% endfor %}', TemplateRuntimeError, 2, 6),
    ('{{ raise_exception("nope") }}', TemplateError, 1, 4),
    ("{% set x = [1] %}\n{{ x.append(2) }}", SecurityError, 2, 6),
    ("{% macro m(a) %}\n{{ a.b.c }}\n{% endmacro %}\n{{ m(none) }}", UndefinedError, 2, 8),
    ("abc\r\n{{ 1/0 }}", TemplateRuntimeError, 2, 5),
    ('{{ "%d" | format("x") }}', TemplateRuntimeError, 1, 11),
    ("{% if 1 / 0 %}{% endif %}", TemplateRuntimeError, 1, 9),
    ("{% for x in 1 %}{% endfor %}", TemplateRuntimeError, 1, 1),
]


@pytest.mark.parametrize(("source", "cls", "lineno", "colno"), RUNTIME_POSITIONS)
def test_runtime_error_positions(source, cls, lineno, colno):
    with pytest.raises(TemplateError) as info:
        ours("chat").from_string(source).render()
    assert type(info.value) is cls
    assert (info.value.lineno, info.value.colno) == (lineno, colno)


# -------------------------------------------------------------------------------- str() and caret

STR_CASES = [
    (
        "{% if true %}\nabc\n{{ x }}",
        "Unexpected end of template. Jinja was looking for the following tags: 'elif' or 'else'"
        " or 'endif'. The innermost block that needs to be closed is 'if'.\n"
        "  (line 3, column 6)\n"
        "{{ x }}\n"
        "     ^",
    ),
    (
        "a\n{% for x in y %}\n{% endif %}",
        "Encountered unknown tag 'endif'. Jinja was looking for the following tags: 'endfor' or"
        " 'else'. The innermost block that needs to be closed is 'for'.\n"
        "  (line 3, column 1)\n"
        "{% endif %}\n"
        "^",
    ),
    (
        "line1\n  {{ x | nope }}",
        "No filter named 'nope'.\n  (line 2, column 10)\n  {{ x | nope }}\n         ^",
    ),
    ("\t{% foo %}", "Encountered unknown tag 'foo'.\n  (line 1, column 2)\n\t{% foo %}\n ^"),
    ("a\r\n{% foo %}", "Encountered unknown tag 'foo'.\n  (line 2, column 1)\n{% foo %}\n^"),
    ("a\u2028{% foo %}", "Encountered unknown tag 'foo'.\n  (line 1, column 3)\na\u2028{% foo %}\n  ^"),
    ("a\n{{ 1 / 0 }}", "division by zero\n  (line 2, column 6)\n{{ 1 / 0 }}\n     ^"),
    ("x\n  {{ y.z }}", "'y' is undefined\n  (line 2, column 8)\n  {{ y.z }}\n       ^"),
    (
        '{{ raise_exception("nope") }}',
        'nope\n  (line 1, column 4)\n{{ raise_exception("nope") }}\n   ^',
    ),
    (
        "{% set x = [1] %}\n{{ x.append(2) }}",
        "access to attribute 'append' of 'list' object is unsafe.\n"
        "  (line 2, column 6)\n"
        "{{ x.append(2) }}\n"
        "     ^",
    ),
]


@pytest.mark.parametrize(("source", "text"), STR_CASES)
def test_str_shows_line_and_caret(source, text):
    with pytest.raises(TemplateError) as info:
        ours("chat").from_string(source).render()
    assert str(info.value) == text


def test_str_without_position_is_the_message():
    error = TemplateError("just the message")
    assert (str(error), error.message, error.lineno, error.colno) == (
        "just the message",
        "just the message",
        None,
        None,
    )


def test_errors_pickle_with_message_and_position():
    with pytest.raises(TemplateRuntimeError) as info:
        minijinja_py.Environment().from_string("a\n{{ 1 / 0 }}").render()
    copy = pickle.loads(pickle.dumps(info.value))
    assert type(copy) is TemplateRuntimeError
    assert (copy.message, copy.lineno, copy.colno, str(copy)) == (
        "division by zero",
        2,
        6,
        str(info.value),
    )


def test_error_hierarchy():
    assert issubclass(TemplateSyntaxError, TemplateError)
    assert issubclass(TemplateRuntimeError, TemplateError)
    assert issubclass(UndefinedError, TemplateRuntimeError)
    assert issubclass(SecurityError, TemplateRuntimeError)
    assert issubclass(minijinja_py.LimitError, TemplateRuntimeError)


# -------------------------------------------------------------------------------- no bare exceptions


class Hostile:
    """A context value whose every protocol raises a different Python exception."""

    def __getattr__(self, name):
        raise KeyError(name)

    def __getitem__(self, key):
        raise IndexError("idx")

    def __iter__(self):
        raise ValueError("no iter")

    def __str__(self):
        raise RuntimeError("no str")

    def __bool__(self):
        raise ZeroDivisionError("no bool")

    def __eq__(self, other):
        raise TypeError("no eq")

    def __len__(self):
        raise OverflowError("no len")

    __hash__ = object.__hash__


def _boom(*args, **kwargs):
    raise ValueError("boom")


# (template, Jinja2's escaping exception class, message): ours raises a TemplateRuntimeError with
# the same message. Jinja2 3.1.6 (ImmutableSandboxedEnvironment) lets each of these escape bare.
HOSTILE = [
    ("{{ b.x }}", "KeyError", "'x'"),
    ("{% for x in b %}{% endfor %}", "ValueError", "no iter"),
    ("{{ b }}", "RuntimeError", "no str"),
    ("{% if b %}{% endif %}", "ZeroDivisionError", "no bool"),
    ("{{ b == 1 }}", "TypeError", "no eq"),
    ("{{ b | length }}", "OverflowError", "no len"),
    ("{{ 1 | boom }}", "ValueError", "boom"),
    ("{{ 1 is boom }}", "ValueError", "boom"),
    ("{{ boom() }}", "ValueError", "boom"),
    ("{{ b | list }}", "ValueError", "no iter"),
    ("{{ b ~ 1 }}", "RuntimeError", "no str"),
    ("{{ b | tojson }}", "TypeError", "Object of type Hostile is not JSON serializable"),
    ("{{ b | string }}", "RuntimeError", "no str"),
    ("{{ b in [1] }}", "TypeError", "no eq"),
    ("{{ b | join }}", "ValueError", "no iter"),
    ("{{ b.x is defined }}", "KeyError", "'x'"),
    ("{{ b | default(1) }}", "RuntimeError", "no str"),
    ("{{ b | first }}", "ValueError", "no iter"),
    ("{{ b | sort }}", "ValueError", "no iter"),
    ("{{ b | count }}", "OverflowError", "no len"),
    ("{{ b | upper }}", "RuntimeError", "no str"),
]


def _hostile_env(env):
    env.filters["boom"] = _boom
    env.tests["boom"] = _boom
    env.globals["boom"] = _boom
    return env


@pytest.mark.parametrize(("source", "python_class", "message"), HOSTILE)
def test_no_bare_exception_leaves_render(source, python_class, message):
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    with pytest.raises(Exception) as reference:  # noqa: B017 - Jinja2's bare exception
        _hostile_env(ImmutableSandboxedEnvironment()).from_string(source).render(b=Hostile())
    assert (type(reference.value).__name__, str(reference.value)) == (python_class, message)
    for config in ("plain", "chat"):
        with pytest.raises(TemplateRuntimeError) as info:
            _hostile_env(ours(config)).from_string(source).render(b=Hostile())
        assert info.value.message == message


def test_hostile_values_that_jinja2_tolerates():
    # Jinja2: '' (item lookup falls back to an undefined), '0', '0.0'
    for config in ("plain", "chat"):
        env = ours(config)
        rendered = [
            env.from_string(s).render(b=Hostile())
            for s in ("{{ b[0] }}", "{{ b | int }}", "{{ b | float }}")
        ]
        assert rendered == ["", "0", "0.0"]


# Failures Jinja2 lets escape as Python exceptions (or never reaches): ours are TemplateErrors.
LIMIT_CASES = [
    ("{% macro r() %}{{ r() }}{% endmacro %}{{ r() }}", minijinja_py.LimitError),
    ('{{ "x" * 10 ** 9 }}', minijinja_py.LimitError),
    ("{{ 2 ** 10000000000 > 1 }}", minijinja_py.LimitError),
    ("{{ range(10 ** 9) | length }}", minijinja_py.LimitError),
]


@pytest.mark.parametrize(("source", "cls"), LIMIT_CASES)
def test_resource_failures_are_template_errors(source, cls):
    for config in ("plain", "chat"):
        env = ours(config)
        with pytest.raises(cls) as info:
            env.from_string(source).render()
        assert isinstance(info.value, TemplateRuntimeError)
        assert info.value.message


# A context function that recurses without end.  CPython 3.13.0-3.13.7 do not stop some of these
# (a function taking *args) at the recursion limit: without the engine's guard the process
# grows until memory runs out, so each case runs in a child process capped at 1 GiB.
RUNAWAY_RUNNER = textwrap.dedent(
    """
    import resource, sys
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    sys.path.insert(0, sys.argv[1])
    import minijinja_py

    def star(*args):
        return star()

    def keywords(a=0):
        return keywords(a=0)

    class Thing:
        def method(self, *args):
            return self.method()

    env = minijinja_py.Environment()
    env.globals.update(star=star, keywords=keywords, thing=Thing())
    try:
        env.from_string(sys.argv[2]).render()
    except minijinja_py.TemplateError as error:
        print(type(error).__name__, error.message)
    """
)


@pytest.mark.parametrize("source", ["{{ star() }}", "{{ star(1, 2) }}", "{{ keywords() }}",
                                    "{{ thing.method() }}", "{{ [1] | map('string') | list }}{{ star() }}"])
def test_runaway_python_recursion_is_a_limit_error(source):
    proc = subprocess.run(
        [sys.executable, "-c", RUNAWAY_RUNNER, str(ROOT), source],
        capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-500:]
    assert proc.stdout == (
        "LimitError maximum recursion depth exceeded: calls or data nest deeper than"
        " max_recursion (100) allows\n"
    )


def test_duplicate_macro_argument_is_refused():
    # Jinja2 fails in Python's compiler: "duplicate argument 'l_1_a' in function definition".
    for config in ("plain", "chat"):
        with pytest.raises(TemplateSyntaxError):
            ours(config).from_string("{% macro m(a, a) %}{% endmacro %}")


# -------------------------------------------------------------------------------- undefined hints


class Thing:
    pass


HINT_CONTEXT = {
    "i": 1, "f": 1.5, "n": None, "b": True, "t": (1,), "s": "abc", "o": Thing(), "l": [1], "d": {},
    "r": range(2),
}

# The message an undefined value carries names the object the way Jinja2's object_type_repr does.
HINTS = [
    ("{{ i.x.y }}", "'int object' has no attribute 'x'"),
    ("{{ f.x.y }}", "'float object' has no attribute 'x'"),
    ("{{ n.x.y }}", "'None' has no attribute 'x'"),
    ("{{ b.x.y }}", "'bool object' has no attribute 'x'"),
    ("{{ t[5].y }}", "tuple object has no element 5"),
    ("{{ s[10].y }}", "str object has no element 10"),
    ("{{ o.x.y }}", "'test_errors.Thing object' has no attribute 'x'"),
    ("{{ l[5].y }}", "list object has no element 5"),
    ("{{ d[1].y }}", "dict object has no element 1"),
    ("{{ d[none].y }}", "dict object has no element None"),
    ("{{ d[(1, 2)].y }}", "dict object has no element (1, 2)"),
    ('{{ d["a b"].y }}', "'dict object' has no attribute 'a b'"),
    ("{{ r[5].y }}", "range object has no element 5"),
    ("{{ l.x.y }}", "'list object' has no attribute 'x'"),
    ("{{ d.x[0] }}", "'dict object' has no attribute 'x'"),
    ("{{ (i.x)() }}", "'int object' has no attribute 'x'"),
    ("{{ i.x + 1 }}", "'int object' has no attribute 'x'"),
    ("{{ missing.x }}", "'missing' is undefined"),
    ("{{ missing[0] }}", "'missing' is undefined"),
    ("{{ d.a.b.c }}", "'dict object' has no attribute 'a'"),
    ("{{ l[1:][5].y }}", "list object has no element 5"),
    ("{{ loop.x }}", "'loop' is undefined"),
    ("{{ {}.x.y }}", "'dict object' has no attribute 'x'"),
]


@pytest.mark.parametrize(("source", "message"), HINTS)
def test_undefined_hints(source, message):
    check(("plain", "chat"), source, HINT_CONTEXT, Err("UndefinedError", message))


# ------------------------------------------------------------------------- unfinished templates
# Every prefix of these templates, cut after each token, compiled by Jinja2 and by us: where
# Jinja2 refuses it, ours refuses it with the same message ("unexpected 'end of template'",
# "unexpected end of template, expected ','.", "expected call", ...).

UNFINISHED_SOURCES = [
    "{% for m, n in messages if m.role != 'system' recursive %}{{ loop(m.children) }}"
    "{% else %}{{ none }}{% endfor %}",
    "{%- set ns = namespace(found=false, items=[1, 2.5, 'x'], d={'a': (1,), 'b': x[1:2]}) -%}"
    "{% set ns.found = ns.found or x is divisibleby 3 and not y is none %}",
    "{% macro render(item, indent=2, sep=none) %}{{ caller(item) }}{% endmacro %}"
    "{% call(x) render(value, indent=4) %}{{ x | tojson(indent=2) }}{% endcall %}",
    "{% call object_to_fields(a, *rest, **extra) %}{% endcall %}",
    "{{ '<|im_start|>' + message['role'] ~ '\\n' if message.content is string else -1 * 2 ** 3 }}",
    "{% if a not in b %}{{ a.b.0 | default('', true) | trim }}{% elif c %}{% endif %}",
    "{% filter upper %}{% with a = 1, b = [2] %}{{ a }}{% endwith %}{% endfilter %}",
    "{% block body scoped %}{{ self.body() }}{% endblock body %}",
]
_TOKENS = re.compile(r"\{\{-?|-?\}\}|\{%-?|-?%\}|\w+|'[^']*'|\d+\.\d+|\*\*|//|[=!<>]=|\S")


def _unfinished() -> list[str]:
    cases: list[str] = []
    for source in UNFINISHED_SOURCES:
        for token in _TOKENS.finditer(source):
            prefix = source[: token.end()]
            if prefix not in cases:
                cases.append(prefix)
    return cases


@pytest.mark.parametrize("source", _unfinished())
def test_unfinished_templates_are_refused_as_jinja2_refuses_them(source):
    for config in ("plain", "chat"):
        try:
            reference(config).parse(source)
        except jinja2.TemplateSyntaxError as error:
            with pytest.raises(TemplateSyntaxError) as ours_error:
                ours(config).from_string(source)
            assert ours_error.value.message == error.message, config
        else:
            ours(config).from_string(source)


def test_python_messages_are_capped_and_list_index_quotes_only_short_values():
    from minijinja_py import chat_environment

    env = chat_environment()
    with pytest.raises(TemplateRuntimeError) as info:
        env.from_string("{{ [1, 2].index(3) }}").render()
    assert info.value.message == "3 is not in list"  # Python's words, as Jinja2 shows them
    assert env.from_string("{{ [1, 'x' * 2000].index('x' * 2000) }}").render() == "1"
    with pytest.raises(TemplateRuntimeError) as info:
        env.from_string("{{ [1].index('y' * 2000) }}").render()
    assert info.value.message == "a str that prints long is not in list"
    with pytest.raises(TemplateRuntimeError) as info:
        env.from_string("{{ ('{' ~ 'x' * 3000 ~ '}').format(a=1) }}").render()
    # Python's KeyError quotes the field's repr: printed by our walk, cut without making it all
    assert info.value.message == "'" + "x" * 1999 + "... (cut at 2000 characters)"


# -- errors are bounded data ---------------------------------------------------------------------
# Whatever an error is raised with, its message is a str of at most MAX_MESSAGE_TOTAL
# characters, made when the error is made; str(error), pickling and error records never fail.


class _StrRaises:
    def __str__(self) -> str:
        raise ValueError(10**5000)


class _Both(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no")


def _raised(source: str, **context: object) -> TemplateError:
    with pytest.raises(TemplateError) as info:
        chat_environment().from_string(source).render(context)
    return info.value


@pytest.mark.parametrize(
    "value, message",
    [
        (10**5000, "<int of 5001 digits>"),
        (-(10**5000), "<negative int of 5001 digits>"),
        (10**4299, "1" + "0" * (MAX_MESSAGE - 1) + f"... (cut at {MAX_MESSAGE} characters)"),
        ([1, 2], "[1, 2]"),
        (1, "1"),
        (None, "None"),
        ({"a": (1,), "b": {2}}, "{'a': (1,), 'b': {2}}"),
        ([10**5000, "x"], "[<int of 5001 digits>, 'x']"),
        ("y" * 10**6, "y" * MAX_MESSAGE + "... (1000000 characters in all)"),
        (["z" * 3000] * 3, "['" + "z" * (MAX_MESSAGE - 2) + f"... (cut at {MAX_MESSAGE} characters)"),
        (_StrRaises(), "<unprintable _StrRaises object>"),
    ],
    ids=["huge-int", "huge-negative-int", "4299-digits", "list", "int", "none", "nested",
         "int-in-list", "huge-str", "long-list", "str-raises"],
)
def test_raise_exception_message_is_bounded_text(value, message):
    error = _raised("{{ raise_exception(v) }}", v=value)
    assert type(error) is TemplateError
    assert error.message == message
    assert str(error) == f"{message}\n  (line 1, column 4)\n{{{{ raise_exception(v) }}}}\n   ^"
    assert pickle.loads(pickle.dumps(error)).message == message


def test_a_message_is_never_longer_than_the_cap():
    values = ("q" * (MAX_MESSAGE_TOTAL + 1), list(range(10**5)), {"k": "v" * 10**5})
    for value in (*values, ["z" * 10**6] * 1000):  # (a render refuses to print the last)
        assert len(TemplateError(value).message) <= MAX_MESSAGE_TOTAL
    # up to the cap a text is kept whole: an already bounded message is never cut twice
    assert TemplateError("w" * MAX_MESSAGE_TOTAL).message == "w" * MAX_MESSAGE_TOTAL
    assert TemplateError().message == ""


def test_deep_and_self_referencing_values_print_without_recursion():
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert TemplateError(deep).message == "[" * MAX_MESSAGE + f"... (cut at {MAX_MESSAGE} characters)"
    loop: list = [1]
    loop.append(loop)
    assert TemplateError(loop).message == "[1, [...]]"
    shared: list = [0]
    for _ in range(60):  # 2**60 leaves as a tree
        shared = [shared, shared]
    assert TemplateError(shared).message.endswith(f"... (cut at {MAX_MESSAGE} characters)")


def test_bounded_text_and_repr_agree_with_python_on_small_values():
    from minijinja_py.values.runtime import Markup

    values = [[], (), (1,), set(), frozenset(), frozenset({1}), {1: [None, True, 1.5]},
              "it's", Markup("<b>"), [Markup("x")], ValueError("a", 1), KeyError("k"), b"xy"]
    for value in values:
        assert bounded_text(value) == str(value), value
        assert bounded_repr(value) == repr(value), value


def test_exceptions_are_described_by_their_arguments():
    assert bounded_text(ValueError(10**5000)) == "<int of 5001 digits>"
    assert bounded_repr(ValueError(10**5000)) == "ValueError(<int of 5001 digits>)"
    assert bounded_text(KeyError("k" * 10**6)) == "'" + "k" * (MAX_MESSAGE - 1) + (
        f"... (cut at {MAX_MESSAGE} characters)"
    )
    assert bounded_text(_Both()) == "<unprintable _Both object>"


def test_through_isolated_renderer_the_message_is_bounded_text():
    template = chat_environment().from_string("{{ raise_exception(10**5000) }}")
    with IsolatedRenderer(workers=1, timeout=300, cpu_timeout=30) as iso:
        with pytest.raises(TemplateError) as info:
            iso.render(template)
    assert (info.value.message, info.value.lineno, info.value.colno) == (
        "<int of 5001 digits>", 1, 4
    )
    assert str(info.value).startswith("<int of 5001 digits>\n  (line 1, column 4)")


@pytest.mark.parametrize(
    "key, message",
    [
        ("a" * 10**7, "'dict object' has no attribute '" + "a" * 999 + "... (cut at 1000 characters)"),
        (10**5000, "dict object has no element <int of 5001 digits>"),
        (("b" * 10**6,) * 1000, "dict object has no element ('" + "b" * 998 + "... (cut at 1000 characters)"),
    ],
    ids=["ten-million-character-name", "huge-int-key", "shared-tuple-key"],
)
def test_undefined_messages_quote_names_within_bounds(key, message):
    with pytest.raises(UndefinedError) as info:
        chat_environment().from_string("{{ d[k].y if k is string else d[k] + 1 }}").render(d={}, k=key)
    assert info.value.message == message


# -- error records of batch rows -------------------------------------------------------------------


@pytest.mark.parametrize(
    "content, message",
    [([1, 2], "[1, 2]"), (1, "1"), (10**5000, "<int of 5001 digits>"), ("plain", "plain")],
    ids=["list", "int", "huge-int", "text"],
)
def test_render_row_returns_a_record_whatever_was_raised(content, message):
    from minijinja_py import ChatTemplate

    renderer = RowRenderer(ChatTemplate.from_string("{{ raise_exception(messages[0].content) }}"))
    row = {"messages": [{"role": "user", "content": content}]}
    assert renderer.render_row(row) == {
        "text": None,
        "error": {
            "kind": "TemplateError",
            "message": message,
            "line": 1,
            "column": 4,
            "input_line": None,
        },
    }


@pytest.mark.parametrize(
    "error, record",
    [
        (ValueError(10**5000), ("ValueError", "<int of 5001 digits>")),
        (KeyError(10**5000), ("KeyError", "missing key <int of 5001 digits>")),
        (InputError("\ud800 lone"), ("InputError", "\\ud800 lone")),
        (_Both(), ("_Both", "<unprintable _Both object>")),
        (ValueError(), ("ValueError", "ValueError")),
    ],
    ids=["huge-int", "key-error", "surrogate", "str-raises", "empty"],
)
def test_error_records_are_always_writable(error, record):
    import json

    made = error_record(error)
    assert (made["kind"], made["message"], made["line"], made["column"]) == (*record, None, None)
    json.dumps(made, ensure_ascii=False).encode("utf-8")


def test_an_error_record_that_cannot_be_made_names_the_class(monkeypatch):
    from minijinja_py.pipelines import rows

    def broken(exc: BaseException) -> dict:
        raise MemoryError

    monkeypatch.setattr(rows, "_record", broken)
    assert error_record(ValueError("x")) == {
        "kind": "ValueError",
        "message": "<the error of this row could not be described (ValueError)>",
        "line": None,
        "column": None,
        "input_line": None,
    }


# -- TemplateError.message is typed str ----------------------------------------------------------


def test_message_is_typed_str_for_mypy_strict(tmp_path):
    pytest.importorskip("mypy", reason="mypy is not installed (it is in the test extra)")
    snippet = tmp_path / "user_code.py"
    snippet.write_text(
        "from minijinja_py import Template, TemplateError\n\n\n"
        "def why(source: str) -> str:\n"
        "    try:\n"
        "        return Template(source).render()\n"
        "    except TemplateError as e:\n"
        "        return e.message\n",
        encoding="utf-8",
    )
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--strict", "--no-error-summary",
         "--follow-imports=silent", str(snippet)],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (result.returncode, result.stdout) == (0, "")


# -- literals with invalid escapes: Jinja2's text, without Python's DeprecationWarning --------------

_ESCAPES = [r"\q", r"\d", r"\u00e9", r"\x41", r"\N{BULLET}", r"a\\qb", "\\é", r"\777", r"\101",
            r"\8", r"\t\z\%", r"\\\q", "😀\\q", r"\N{LATIN SMALL LETTER E WITH ACUTE}\w"]


@pytest.mark.parametrize("body", _ESCAPES)
@pytest.mark.parametrize("quote", ["'", '"'])
def test_escapes_decode_as_jinja2_does_without_warnings(body, quote):
    import warnings

    source = "{{ " + quote + body + quote + " }}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Jinja2, the judge, may warn
        expected = jinja2.Environment().from_string(source).render()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert chat_environment().from_string(source).render() == expected


# --- template names (issue 44 item 6) -------------------------------------------------------
# Jinja2 3.1.6, for a template loaded as "chat.jinja": a TemplateSyntaxError has `.name`
# "chat.jinja" and a traceback frame `File "chat.jinja", line 2`; a runtime error is the bare
# Python exception, named only by that traceback frame.  Ours name both with `.name`, and
# `str()` puts the name beside the line and column.


def test_a_named_templates_syntax_error_carries_and_shows_its_name():
    with pytest.raises(TemplateSyntaxError) as info:
        minijinja_py.Environment().from_string("Hi\n{% for x in y %}", name="chat.jinja")
    loader = jinja2.DictLoader({"chat.jinja": "Hi\n{% for x in y %}"})
    with pytest.raises(jinja2.TemplateSyntaxError) as theirs:
        jinja2.Environment(loader=loader).get_template("chat.jinja")
    assert (info.value.name, info.value.lineno) == (theirs.value.name, theirs.value.lineno)
    assert str(info.value) == (
        "Unexpected end of template. Jinja was looking for the following tags: 'endfor' or "
        "'else'. The innermost block that needs to be closed is 'for'.\n"
        "  (chat.jinja, line 2, column 15)\n"
        "{% for x in y %}\n"
        "              ^"
    )


def test_a_named_templates_runtime_errors_carry_its_name():
    template = minijinja_py.Environment().from_string('Hi\n{{ 1 + "a" }}', name="chat.jinja")
    assert template.name == "chat.jinja"
    with pytest.raises(TemplateRuntimeError) as info:
        template.render()
    assert info.value.name == "chat.jinja"
    assert str(info.value) == (
        "unsupported operand type(s) for +: 'int' and 'str'\n"
        "  (chat.jinja, line 2, column 6)\n"
        '{{ 1 + "a" }}\n'
        "     ^"
    )
    with pytest.raises(TemplateRuntimeError) as traced:
        template.render_with_provenance()
    assert traced.value.name == "chat.jinja"
    with pytest.raises(TemplateRuntimeError) as pickled:
        pickle.loads(pickle.dumps(template)).render()
    assert pickled.value.name == "chat.jinja"


def test_a_limit_met_compiling_names_the_template():
    env = minijinja_py.Environment(limits=minijinja_py.Limits(max_source=4))
    with pytest.raises(minijinja_py.LimitError) as info:
        env.from_string("{{ x }}", name="chat.jinja")
    assert (info.value.name, info.value.message) == (
        "chat.jinja",
        "a template source of 7 characters exceeds max_source (4)",
    )


def test_an_unnamed_template_gives_no_name_and_another_templates_error_keeps_its_own():
    env = minijinja_py.Environment()
    with pytest.raises(TemplateRuntimeError) as info:
        env.from_string("{{ 1 + 'a' }}").render()
    assert info.value.name is None
    inner = env.from_string("{{ 1 + 'a' }}")
    # An error raised by another template that a filter renders is not the outer one's.
    env.filters["inner"] = lambda value: inner.render()
    with pytest.raises(TemplateRuntimeError) as nested:
        env.from_string("{{ 1|inner }}", name="outer.jinja").render()
    assert nested.value.name is None
