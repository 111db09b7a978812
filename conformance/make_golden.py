"""Regenerate ``golden/`` from the case list below, with Jinja2 3.1.6 as the judge.

Run once (``python -m conformance.make_golden``); the files it writes are static data that
``test_golden.py`` checks our engine against. Cases marked for ``both`` configurations are
written twice (``<name>.chat.txt`` and ``<name>.plain.txt``). Existing files are rewritten;
files of cases no longer listed are left alone (regression cases are added by hand).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from .reference import Outcome, render_reference

GOLDEN = Path(__file__).resolve().parent / "golden"

CTX = {
    "s": "Hello World",
    "t": "it's",
    "u": "  pad me  ",
    "e": "<b>&'\"</b>",
    "n": 7,
    "neg": -3,
    "f": 2.5,
    "b": True,
    "z": None,
    "xs": [3, 1, 2],
    "ws": ["b", "A", "c", "a"],
    "d": {"b": 2, "a": 1, "C": 3},
    "nested": {"k": {"v": [1, {"w": "deep"}]}},
    "users": [
        {"name": "ann", "age": 30, "role": "admin"},
        {"name": "bob", "age": 25, "role": "user"},
        {"name": "cid", "age": 35, "role": "user", "email": "c@x"},
    ],
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"type": "function", "function": {"name": "f", "arguments": {"x": 1, "é": "ü"}}}
            ],
        },
        {"role": "tool", "content": "42"},
        {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image"}]},
    ],
    "text": "line one\nline two\n\nline four",
    "uni": "naïve café 日本 😀",
}

# (name, template) evaluated in both configurations with CTX.
BOTH: dict[str, list[tuple[str, str]]] = {
    "literal": [
        ("none", "{{ none }}|{{ None }}"),
        ("bools", "{{ true }}|{{ True }}|{{ false }}|{{ False }}"),
        ("int", "{{ 42 }}|{{ -7 }}|{{ 1_000 }}|{{ 007 }}"),
        ("float", "{{ 1.0 }}|{{ 0.1 + 0.2 }}|{{ 1e3 }}|{{ 1.5e-3 }}|{{ 2.50 }}|{{ 1e16 }}"),
        ("string-quotes", "{{ 'a\"b' }}|{{ \"a'b\" }}|{{ 'it\\'s' }}"),
        ("string-escapes", "{{ 'a\\nb\\tc\\\\d' }}"),
        ("string-unicode-escape", "{{ '\\u00e9\\x41\\U0001F600' }}"),
        ("string-raw-unicode", "{{ 'naïve 日本' }}"),
        ("list", "{{ [1, 'a', none, true, 1.5] }}"),
        ("tuple", "{{ (1, 2) }}|{{ (1,) }}|{{ () }}"),
        ("dict", "{{ {'a': 1, 'b': [2]} }}"),
        ("dict-empty", "{{ {} }}|{{ [] }}"),
        ("nested", "{{ [{'a': (1, 'x')}] }}"),
        ("string-concat-adjacent", "{{ 'a' 'b' }}"),
    ],
    "print": [
        ("context-list", "{{ xs }}"),
        ("context-dict", "{{ d }}"),
        ("context-none", "{{ z }}"),
        ("string-repr-in-list", "{{ ['it\\'s', \"q\\\"\"] }}"),
        ("unicode-in-list", "{{ ['é', '日本'] }}"),
        ("float-repr", "{{ 1/3 }}|{{ 2.0 * 3 }}|{{ 10 / 2 }}"),
        ("undefined", "[{{ missing }}]"),
        ("undefined-attr", "[{{ d.missing }}]|[{{ d['missing'] }}]"),
        ("undefined-item-list", "[{{ xs[10] }}]"),
        ("range", "{{ range(3) }}"),
        ("dict-keys-view", "{{ d.keys() }}"),
        ("dict-items-view", "{{ d.items() }}"),
        ("markup-escape", "{{ e|e }}"),
    ],
    "op": [
        ("add", "{{ 1 + 2 }}|{{ 1.5 + 1 }}|{{ 'a' + 'b' }}|{{ [1] + [2] }}"),
        ("sub", "{{ 5 - 7 }}|{{ 2.5 - 1 }}"),
        ("mul", "{{ 3 * 4 }}|{{ 'ab' * 3 }}|{{ [0] * 2 }}|{{ 2 * 'x' }}"),
        ("truediv", "{{ 1 / 2 }}|{{ 4 / 2 }}|{{ -7 / 2 }}"),
        ("floordiv", "{{ 7 // 2 }}|{{ -7 // 2 }}|{{ 7.5 // 2 }}"),
        ("mod", "{{ 7 % 3 }}|{{ -7 % 3 }}|{{ 7.5 % 2 }}"),
        ("pow", "{{ 2 ** 10 }}|{{ 2 ** -1 }}|{{ 2 ** 3 ** 2 }}"),
        ("unary", "{{ -n }}|{{ +n }}|{{ - -n }}|{{ -f }}"),
        ("precedence", "{{ 1 + 2 * 3 }}|{{ (1 + 2) * 3 }}|{{ 2 * 3 ** 2 }}|{{ -2 ** 2 }}"),
        ("tilde", "{{ 1 ~ 2 }}|{{ 'a' ~ none }}|{{ 'a' ~ true }}|{{ xs ~ '' }}|{{ 1.5 ~ d }}"),
        ("tilde-undefined", "[{{ 'a' ~ missing ~ 'b' }}]"),
        ("tilde-precedence", "{{ 1 + 2 ~ 3 * 2 }}"),
        ("compare", "{{ 1 < 2 }}|{{ 2 <= 2 }}|{{ 3 > 4 }}|{{ 'a' < 'b' }}|{{ [1, 2] < [1, 3] }}"),
        ("compare-eq", "{{ 1 == 1.0 }}|{{ [1, 2] == [1, 2] }}|{{ 'a' != 'b' }}|{{ none == none }}"),
        ("compare-eq-mixed", "{{ 1 == '1' }}|{{ true == 1 }}|{{ {'a': 1} == {'a': 1} }}"),
        ("compare-chained", "{{ 1 < 2 < 3 }}|{{ 1 < 3 < 2 }}|{{ 3 > 2 == 2 }}"),
        ("and-or-values", "{{ 'a' and 'b' }}|{{ '' and 'b' }}|{{ 0 or 'x' }}|{{ 'a' or 'b' }}"),
        ("and-or-precedence", "{{ false or true and false }}|{{ not false and false }}"),
        ("not", "{{ not [] }}|{{ not {} }}|{{ not '' }}|{{ not 0 }}|{{ not 'a' }}|{{ not none }}"),
        ("not-undefined", "{{ not missing }}"),
        ("in", "{{ 1 in xs }}|{{ 'ell' in s }}|{{ 'a' in d }}|{{ 5 not in xs }}|{{ 0 in [0] }}"),
        ("in-undefined", "{{ 1 in missing }}"),
        ("not-in-precedence", "{{ not 1 in xs }}|{{ not (1 in xs) }}"),
        ("cond", "{{ 'y' if b else 'n' }}|{{ 'y' if z else 'n' }}"),
        ("cond-no-else", "[{{ 'y' if false }}]"),
        ("cond-nested", "{{ 1 if false else 2 if true else 3 }}"),
        ("cond-in-filter-arg", "{{ s|replace('o', 'X' if b else 'Y') }}"),
        ("add-type-error", "{{ 'a' + 1 }}"),
        ("add-list-str-error", "{{ [1] + 'a' }}"),
        ("div-zero", "{{ 1 / 0 }}"),
        ("floordiv-zero", "{{ 1 // 0 }}"),
        ("mod-zero", "{{ 1 % 0 }}"),
        ("compare-type-error", "{{ 1 < 'a' }}"),
        ("undefined-arith", "{{ missing + 1 }}"),
        ("none-arith", "{{ none + 1 }}"),
        ("str-mod-format", "{{ '%s and %s' % ('a', 'b') }}|{{ '%d%%' % 5 }}"),
    ],
    "access": [
        ("attr", "{{ nested.k.v[1].w }}"),
        ("item", "{{ nested['k']['v'][0] }}"),
        ("item-negative", "{{ xs[-1] }}|{{ s[-1] }}"),
        ("attr-is-item", "{{ d.a }}|{{ users[0].name }}"),
        ("item-variable-key", "{% set k = 'b' %}{{ d[k] }}"),
        ("slice", "{{ xs[1:] }}|{{ xs[:-1] }}|{{ xs[::2] }}|{{ xs[::-1] }}|{{ s[0:5] }}"),
        ("slice-step", "{{ s[::3] }}|{{ s[1::2] }}|{{ s[-3:] }}|{{ s[10:2:-2] }}"),
        ("slice-empty", "{{ xs[5:] }}|[{{ s[5:2] }}]"),
        ("dict-method-as-attr", "{{ d.items|default('x') is callable }}"),
        ("missing-attr-of-undefined", "{{ missing.attr }}"),
        ("missing-item-of-none", "{{ z.attr }}"),
        ("string-index", "{{ s[0] }}{{ s[4] }}"),
        ("tuple-index", "{{ (1, 2, 3)[1] }}"),
        ("method-ref-undefined", "[{{ s.nosuch }}]"),
    ],
    "filter": [
        ("abs", "{{ -3|abs }}|{{ neg|abs }}|{{ -2.5|abs }}"),
        ("attr", "{{ users[0]|attr('name') }}|[{{ users[0]|attr('nope') }}]"),
        ("batch", "{{ xs|batch(2)|list }}|{{ [1, 2, 3]|batch(2, 'x')|list }}"),
        ("capitalize", "{{ 'hELLO wORLD'|capitalize }}"),
        ("center", "[{{ 'ab'|center(7) }}]|[{{ 'ab'|center(1) }}]|[{{ 'ab'|center }}]"),
        ("count", "{{ xs|count }}|{{ s|count }}"),
        ("default", "{{ missing|default('d') }}|{{ z|default('d') }}|{{ ''|default('d') }}"),
        (
            "default-boolean",
            "{{ ''|default('d', true) }}|{{ z|d('d', boolean=true) }}|{{ 0|d(5, true) }}",
        ),
        (
            "default-undefined-attr",
            "{{ d.nope|default('x') }}|{{ missing.x|default('y') if false else 'z' }}",
        ),
        ("dictsort", "{{ d|dictsort }}"),
        (
            "dictsort-options",
            "{{ d|dictsort(true) }}|{{ d|dictsort(false, 'value') }}|{{ d|dictsort(reverse=true) }}",
        ),
        ("escape", "{{ e|escape }}|{{ e|e|e }}|{{ 5|e }}"),
        (
            "filesizeformat",
            "{{ 1000|filesizeformat }}|{{ 1024|filesizeformat(true) }}|{{ 3000000|filesizeformat }}",
        ),
        ("first-last", "{{ xs|first }}|{{ xs|last }}|{{ s|first }}|[{{ []|first }}]"),
        ("float", "{{ '1.5'|float }}|{{ 'x'|float }}|{{ 'x'|float(9.5) }}|{{ 3|float }}"),
        ("forceescape", "{{ '<a>'|forceescape }}"),
        ("format", "{{ '%s-%05.1f'|format('a', 2.25) }}|{{ '%(x)s'|format(x=1) }}"),
        (
            "groupby",
            "{% for g in users|groupby('role') %}{{ g.grouper }}={{ g.list|map(attribute='name')|join(',') }};{% endfor %}",
        ),
        (
            "groupby-tuple",
            "{% for role, items in users|groupby('role') %}{{ role }}:{{ items|length }};{% endfor %}",
        ),
        (
            "groupby-default",
            "{% for g in users|groupby('email', default='-') %}{{ g.grouper }};{% endfor %}",
        ),
        ("indent", "{{ text|indent }}"),
        ("indent-first-blank", "{{ text|indent(2, true, true) }}"),
        ("indent-string", "{{ text|indent('> ', first=true) }}"),
        (
            "int",
            "{{ '42'|int }}|{{ 'x'|int }}|{{ 'x'|int(-1) }}|{{ 4.9|int }}|{{ '0x1A'|int(0, 16) }}|{{ '3.7'|int }}",
        ),
        ("int-base", "{{ '101'|int(base=2) }}|{{ '0b101'|int(0, 0) }}"),
        ("items", "{{ d|items|list }}|{{ missing|items|list }}"),
        ("join", "{{ ws|join }}|{{ ws|join(', ') }}|{{ xs|join('-') }}"),
        ("join-attribute", "{{ users|join(', ', attribute='name') }}"),
        ("length", "{{ xs|length }}|{{ s|length }}|{{ d|length }}|{{ missing|length }}"),
        ("list", "{{ s[:3]|list }}|{{ d|list }}|{{ (1, 2)|list }}"),
        ("lower-upper", "{{ s|lower }}|{{ s|upper }}|{{ uni|upper }}"),
        ("map-filter", "{{ ws|map('upper')|list }}|{{ xs|map('string')|join }}"),
        ("map-filter-args", "{{ ws|map('replace', 'a', 'X')|list }}"),
        ("map-attribute", "{{ users|map(attribute='name')|list }}"),
        ("map-attribute-default", "{{ users|map(attribute='email', default='-')|list }}"),
        ("max-min", "{{ xs|max }}|{{ xs|min }}|{{ ws|max }}|{{ ws|min(case_sensitive=true) }}"),
        (
            "max-attribute",
            "{{ (users|max(attribute='age')).name }}|{{ (users|min(attribute='age')).name }}",
        ),
        ("pprint", "{{ d|pprint }}|{{ ws|pprint }}|{{ 'a'|pprint }}"),
        ("reject", "{{ xs|reject('odd')|list }}|{{ [0, 1, '', 'a']|reject|list }}"),
        ("rejectattr", "{{ messages|rejectattr('content')|map(attribute='role')|list }}"),
        (
            "replace",
            "{{ s|replace('l', 'L') }}|{{ s|replace('l', 'L', 2) }}|{{ s|replace('', '.') }}",
        ),
        ("reverse", "{{ xs|reverse|list }}|{{ s|reverse }}"),
        ("random-single", "{{ [7]|random }}|{{ 'x'|random }}"),
        ("random-empty", "[{{ []|random }}]"),
        (
            "round",
            "{{ 2.5|round }}|{{ 3.5|round }}|{{ 2.567|round(2) }}|{{ 2.1|round(0, 'ceil') }}|{{ 2.9|round(0, 'floor') }}|{{ 7|round }}",
        ),
        ("safe", "{{ e|safe }}"),
        (
            "select",
            "{{ xs|select('odd')|list }}|{{ [0, 1, '', 'a']|select|list }}|{{ xs|select('gt', 1)|list }}",
        ),
        (
            "selectattr",
            "{{ users|selectattr('role', 'equalto', 'user')|map(attribute='name')|list }}",
        ),
        ("selectattr-truthy", "{{ messages|selectattr('tool_calls')|list|length }}"),
        (
            "selectattr-defined",
            "{{ users|selectattr('email', 'defined')|map(attribute='name')|join }}",
        ),
        ("slice", "{{ [1, 2, 3, 4, 5]|slice(2)|list }}|{{ [1, 2, 3]|slice(2, 0)|list }}"),
        (
            "sort",
            "{{ xs|sort }}|{{ ws|sort }}|{{ ws|sort(case_sensitive=true) }}|{{ xs|sort(reverse=true) }}",
        ),
        (
            "sort-attribute",
            "{{ users|sort(attribute='age')|map(attribute='name')|join }}|{{ users|sort(attribute='role,name', reverse=true)|map(attribute='name')|join }}",
        ),
        ("string", "{{ 1|string }}|{{ none|string }}|{{ xs|string }}|{{ 1.0|string ~ '!' }}"),
        ("striptags", "{{ '<p>a  <b>b</b>\n c</p>'|striptags }}"),
        (
            "sum",
            "{{ xs|sum }}|{{ xs|sum(start=10) }}|{{ users|sum(attribute='age') }}|{{ [0.1, 0.2]|sum }}",
        ),
        ("title", "{{ \"they're bill's\"|title }}|{{ 'hello-world foo_bar'|title }}"),
        ("tojson", "{{ d|tojson }}|{{ 'é<>&\\''|tojson }}|{{ [1, none, true]|tojson }}"),
        ("tojson-indent", "{{ {'b': [1, 2], 'a': 'x'}|tojson(indent=2) }}"),
        ("tojson-unicode", "{{ uni|tojson }}"),
        ("trim", "[{{ u|trim }}]|[{{ 'xxaxx'|trim('x') }}]"),
        (
            "truncate",
            "{{ 'foo bar baz qux'|truncate(9) }}|{{ 'foo bar baz qux'|truncate(9, true) }}|{{ 'foo bar'|truncate(5, leeway=0) }}|{{ 'foo bar baz'|truncate(7, false, '>>', 0) }}",
        ),
        (
            "unique",
            "{{ [1, 2, 1, 3]|unique|list }}|{{ ['a', 'A', 'b']|unique|list }}|{{ ['a', 'A']|unique(case_sensitive=true)|list }}",
        ),
        ("unique-attribute", "{{ users|unique(attribute='role')|map(attribute='name')|list }}"),
        ("urlencode", "{{ 'a b&c/é'|urlencode }}|{{ {'a': 1, 'b': 'x y'}|urlencode }}"),
        ("urlize", "{{ 'see https://example.com now'|urlize }}"),
        ("wordcount", "{{ s|wordcount }}|{{ 'a-b c.d'|wordcount }}"),
        ("wordwrap", "{{ 'the quick brown fox jumps'|wordwrap(10) }}"),
        (
            "wordwrap-options",
            "{{ 'abcdefghij klm'|wordwrap(4, true, '|') }}|{{ 'abcdefghij klm'|wordwrap(4, false) }}",
        ),
        ("xmlattr", "<a{{ {'href': 'x&y', 'n': none, 'c': 1}|xmlattr }}>"),
        ("chain", "{{ s|lower|replace('o', '0')|title|center(15)|trim }}"),
        ("filter-call-parens", "{{ s|upper() }}|{{ xs|join() }}"),
        ("unknown-filter", "{{ s|nosuchfilter }}"),
        ("filter-bad-arg", "{{ s|truncate('x') }}"),
        ("default-alias-d", "{{ missing|d }}|"),
        ("length-of-none", "{{ z|length }}"),
        ("join-none-items", "{{ [1, none, 'a']|join(',') }}"),
        ("map-on-undefined", "{{ missing|map('upper')|list }}"),
        ("string-of-markup", "{{ (e|e)|string|length }}"),
    ],
    "test": [
        ("boolean", "{{ true is boolean }}|{{ 1 is boolean }}"),
        ("callable", "{{ range is callable }}|{{ s.upper is callable }}|{{ s is callable }}"),
        (
            "defined",
            "{{ s is defined }}|{{ missing is defined }}|{{ d.nope is defined }}|{{ z is defined }}",
        ),
        ("undefined", "{{ missing is undefined }}|{{ s is undefined }}"),
        (
            "divisibleby",
            "{{ 9 is divisibleby 3 }}|{{ 9 is divisibleby(2) }}|{{ n is not divisibleby 7 }}",
        ),
        (
            "eq-family",
            "{{ 1 is eq 1 }}|{{ 1 is equalto 2 }}|{{ 1 is ne 2 }}|{{ 1 is sameas 1 }}|{{ none is sameas none }}",
        ),
        (
            "order-family",
            "{{ 2 is gt 1 }}|{{ 2 is ge 2 }}|{{ 1 is lt 2 }}|{{ 1 is le 0 }}|{{ 3 is greaterthan 2 }}|{{ 1 is lessthan 2 }}",
        ),
        ("escaped", "{{ s is escaped }}|{{ (s|e) is escaped }}"),
        ("even-odd", "{{ 2 is even }}|{{ 3 is odd }}|{{ 0 is even }}|{{ -1 is odd }}"),
        ("true-false", "{{ true is true }}|{{ 1 is true }}|{{ false is false }}|{{ 0 is false }}"),
        (
            "filter-test",
            "{{ 'upper' is filter }}|{{ 'nope' is filter }}|{{ 'odd' is test }}|{{ 'upper' is test }}",
        ),
        (
            "float-integer",
            "{{ 1.0 is float }}|{{ 1 is float }}|{{ 1 is integer }}|{{ true is integer }}",
        ),
        ("in", "{{ 1 is in xs }}|{{ 'x' is in 'xyz' }}|{{ 'k' is in d }}"),
        (
            "iterable",
            "{{ xs is iterable }}|{{ s is iterable }}|{{ n is iterable }}|{{ d is iterable }}",
        ),
        ("lower-upper", "{{ 'ab' is lower }}|{{ 'Ab' is lower }}|{{ 'AB' is upper }}"),
        ("mapping", "{{ d is mapping }}|{{ xs is mapping }}"),
        ("none", "{{ none is none }}|{{ z is none }}|{{ 0 is none }}|{{ missing is none }}"),
        (
            "number",
            "{{ 1 is number }}|{{ 1.5 is number }}|{{ '1' is number }}|{{ true is number }}",
        ),
        (
            "sequence",
            "{{ xs is sequence }}|{{ s is sequence }}|{{ d is sequence }}|{{ n is sequence }}",
        ),
        ("string", "{{ s is string }}|{{ 1 is string }}|{{ none is string }}"),
        ("is-not", "{{ s is not string }}|{{ missing is not defined }}"),
        ("test-on-filtered", "{{ xs|length is even }}"),
        ("test-precedence", "{{ not 1 is odd }}|{{ 2 + 1 is odd }}"),
        ("unknown-test", "{{ 1 is nosuchtest }}"),
        (
            "operator-tests-in-select",
            "{{ xs|select('==', 2)|list }}|{{ xs|select('!=', 2)|list }}|{{ xs|select('>', 1)|list }}"
            "|{{ xs|select('>=', 2)|list }}|{{ xs|reject('<', 2)|list }}|{{ xs|select('<=', 2)|list }}",
        ),
        (
            "operator-tests-in-selectattr",
            "{{ users|selectattr('age', '>', 26)|map(attribute='name')|join }}"
            "|{{ users|rejectattr('role', '==', 'user')|map(attribute='name')|join }}",
        ),
        (
            "test-in-select",
            "{{ xs|select('divisibleby', 2)|list }}|{{ ws|select('in', ['a', 'b'])|list }}",
        ),
    ],
    "method": [
        (
            "str-case",
            "{{ s.upper() }}|{{ s.lower() }}|{{ s.title() }}|{{ s.capitalize() }}|{{ s.swapcase() }}|{{ s.casefold() }}",
        ),
        ("str-title-python", '{{ "they\'re".title() }}'),
        (
            "str-strip",
            "[{{ u.strip() }}]|[{{ u.lstrip() }}]|[{{ u.rstrip() }}]|[{{ 'xxaxx'.strip('x') }}]",
        ),
        (
            "str-split",
            "{{ s.split() }}|{{ 'a,b,,c'.split(',') }}|{{ 'a b c'.split(' ', 1) }}|{{ 'a b c'.rsplit(' ', 1) }}",
        ),
        ("str-splitlines", "{{ text.splitlines() }}"),
        (
            "str-startswith",
            "{{ s.startswith('He') }}|{{ s.endswith('x') }}|{{ s.startswith(('x', 'H')) }}",
        ),
        ("str-replace", "{{ s.replace('o', '0') }}|{{ s.replace('o', '0', 1) }}"),
        (
            "str-find",
            "{{ s.find('o') }}|{{ s.rfind('o') }}|{{ s.find('z') }}|{{ s.count('l') }}|{{ s.index('W') }}",
        ),
        ("str-index-missing", "{{ s.index('z') }}"),
        (
            "str-format",
            "{{ '{}-{}'.format(1, 'a') }}|{{ '{x}!'.format(x=2) }}|{{ '{0}{0}'.format('ab') }}",
        ),
        ("str-join", "{{ ', '.join(ws) }}|{{ ''.join(['a', 'b']) }}"),
        (
            "str-predicates",
            "{{ '12'.isdigit() }}|{{ 'ab'.isalpha() }}|{{ ' '.isspace() }}|{{ 'A'.isupper() }}|{{ 'a1'.isalnum() }}|{{ 'a'.islower() }}",
        ),
        (
            "str-pad",
            "[{{ 'ab'.center(6, '*') }}]|[{{ 'ab'.ljust(4) }}]|[{{ 'ab'.rjust(4, '.') }}]|{{ '42'.zfill(5) }}",
        ),
        ("str-partition", "{{ 'a=b=c'.partition('=') }}|{{ 'a=b=c'.rpartition('=') }}"),
        (
            "str-prefix-suffix",
            "{{ 'prefix-x'.removeprefix('prefix-') }}|{{ 'x.txt'.removesuffix('.txt') }}",
        ),
        ("str-expandtabs", "{{ 'a\\tb'.expandtabs(4) }}"),
        ("dict-get", "{{ d.get('a') }}|{{ d.get('nope') }}|{{ d.get('nope', 'dflt') }}"),
        (
            "dict-keys-values-items",
            "{{ d.keys()|list }}|{{ d.values()|list }}|{{ d.items()|list }}",
        ),
        (
            "dict-iteration-order",
            "{% for k in d %}{{ k }}{% endfor %}|{% for k, v in d.items() %}{{ k }}{{ v }}{% endfor %}",
        ),
        ("list-index-count", "{{ xs.index(2) }}|{{ xs.count(1) }}"),
        ("list-copy", "{{ xs.copy() }}"),
        ("str-encode-like", "{{ uni.upper().lower() }}"),
        ("method-on-undefined", "{{ missing.upper() }}"),
        ("method-wrong-args", "{{ s.startswith() }}"),
        ("str-zfill-neg", "{{ '-5'.zfill(4) }}"),
    ],
    "global": [
        (
            "range",
            "{{ range(3)|list }}|{{ range(1, 4)|list }}|{{ range(10, 0, -3)|list }}|{{ range(0)|list }}",
        ),
        ("range-loop", "{% for i in range(3) %}{{ i }}{% endfor %}"),
        ("dict", "{{ dict(a=1, b='x') }}"),
        (
            "cycler",
            "{% set c = cycler('a', 'b') %}{{ c.next() }}{{ c.next() }}{{ c.next() }}|{{ c.current }}",
        ),
        (
            "cycler-reset",
            "{% set c = cycler(1, 2, 3) %}{{ c.next() }}{{ c.next() }}{{ c.reset() }}{{ c.next() }}",
        ),
        ("joiner", "{% set j = joiner('|') %}{% for x in xs %}{{ j() }}{{ x }}{% endfor %}"),
        (
            "namespace",
            "{% set ns = namespace(a=1, b='x') %}{% set ns.a = ns.a + 1 %}{{ ns.a }}{{ ns.b }}",
        ),
        ("namespace-dict-arg", "{% set ns = namespace({'k': 5}) %}{{ ns.k }}"),
        ("namespace-missing-attr", "{% set ns = namespace() %}[{{ ns.nope }}]"),
        ("namespace-repr", "{% set ns = namespace(a=1) %}{{ ns }}"),
        ("unknown-global-call", "{{ nosuch(1) }}"),
        ("call-non-callable", "{{ s() }}"),
    ],
    "if": [
        ("basic", "{% if b %}yes{% endif %}"),
        ("else", "{% if z %}yes{% else %}no{% endif %}"),
        ("elif", "{% if n < 5 %}a{% elif n < 10 %}b{% elif n < 20 %}c{% else %}d{% endif %}"),
        ("nested", "{% if b %}{% if z %}1{% else %}2{% endif %}{% endif %}"),
        (
            "truthiness",
            "{% for v in [0, 1, '', 'a', [], [0], {}, none, 0.0] %}{{ 'T' if v else 'F' }}{% endfor %}",
        ),
        ("undefined-falsy", "{% if missing %}y{% else %}n{% endif %}"),
        ("undefined-attr-of-undefined", "{% if missing.x %}y{% endif %}"),
        ("set-inside-if-leaks", "{% if true %}{% set v = 1 %}{% endif %}{{ v }}"),
        ("elif-chain-first-wins", "{% if true %}1{% elif true %}2{% endif %}"),
    ],
    "for": [
        ("basic", "{% for x in xs %}{{ x }},{% endfor %}"),
        ("else", "{% for x in [] %}{{ x }}{% else %}empty{% endfor %}"),
        ("else-nonempty", "{% for x in xs %}{{ x }}{% else %}empty{% endfor %}"),
        (
            "loop-index",
            "{% for x in ws %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }};{% endfor %}",
        ),
        (
            "loop-first-last-length",
            "{% for x in ws %}{{ loop.first }}{{ loop.last }}{{ loop.length }};{% endfor %}",
        ),
        ("loop-cycle", "{% for x in xs %}{{ loop.cycle('odd', 'even') }},{% endfor %}"),
        (
            "loop-prev-next",
            "{% for x in xs %}[{{ loop.previtem }}|{{ loop.nextitem }}]{% endfor %}",
        ),
        (
            "loop-changed",
            "{% for x in [1, 1, 2, 2, 1] %}{% if loop.changed(x) %}{{ x }}{% endif %}{% endfor %}",
        ),
        (
            "loop-depth",
            "{% for a in [1] %}{% for b in [2] %}{{ loop.depth }}{{ loop.depth0 }}{% endfor %}{{ loop.depth }}{% endfor %}",
        ),
        ("unpack", "{% for k, v in d|dictsort %}{{ k }}={{ v }};{% endfor %}"),
        ("unpack-parens", "{% for (a, b) in [(1, 2), (3, 4)] %}{{ a + b }}{% endfor %}"),
        ("unpack-wrong-count", "{% for a, b in [(1, 2, 3)] %}{{ a }}{% endfor %}"),
        (
            "inline-if",
            "{% for x in xs if x > 1 %}{{ x }}{{ loop.index }}{{ loop.length }};{% endfor %}",
        ),
        ("inline-if-else", "{% for x in xs if x > 5 %}{{ x }}{% else %}none{% endfor %}"),
        (
            "recursive",
            "{% for item in [{'n': 'a', 'c': [{'n': 'b', 'c': []}]}] recursive %}{{ item.n }}{{ loop.depth }}[{{ loop(item.c) }}]{% endfor %}",
        ),
        ("scope-no-leak", "{% set x = 'outer' %}{% for x in xs %}{% endfor %}{{ x }}"),
        (
            "set-in-loop-no-leak",
            "{% set c = 0 %}{% for x in xs %}{% set c = c + x %}{% endfor %}{{ c }}",
        ),
        (
            "namespace-counter",
            "{% set ns = namespace(c=0) %}{% for x in xs %}{% set ns.c = ns.c + x %}{% endfor %}{{ ns.c }}",
        ),
        ("over-string", "{% for ch in 'abc' %}{{ ch }}.{% endfor %}"),
        ("over-dict", "{% for k in d %}{{ k }}{% endfor %}"),
        ("over-none", "{% for x in z %}{{ x }}{% endfor %}"),
        ("over-undefined", "[{% for x in missing %}{{ x }}{% endfor %}]"),
        ("over-int", "{% for x in 5 %}{{ x }}{% endfor %}"),
        (
            "nested-loop-outer",
            "{% for a in [1, 2] %}{% set outer = loop %}{% for b in [3] %}{{ outer.index }}{{ loop.index }}{% endfor %}{% endfor %}",
        ),
        ("loop-outside", "{{ loop }}"),
        ("loop-var-after", "{% for x in xs %}{% endfor %}[{{ x }}]"),
        (
            "messages",
            "{% for m in messages %}{{ m.role }}:{{ m.content if m.content is string else '' }}|{% endfor %}",
        ),
    ],
    "set": [
        ("basic", "{% set a = 1 %}{% set b = a + 1 %}{{ a }}{{ b }}"),
        ("tuple", "{% set a, b = 1, 2 %}{{ a }}{{ b }}"),
        ("tuple-from-list", "{% set a, b = ['x', 'y'] %}{{ b }}{{ a }}"),
        ("tuple-parens", "{% set (a, b) = (3, 4) %}{{ a * b }}"),
        ("tuple-value", "{% set t = 1, 2 %}{{ t }}"),
        ("block", "{% set v %}inner {{ n }}{% endset %}[{{ v }}]"),
        ("block-filter", "{% set v | upper %}abc{% endset %}{{ v }}"),
        (
            "block-filter-chain",
            "{% set v | trim | replace('a', 'b') %}  aaa  {% endset %}[{{ v }}]",
        ),
        ("override-context", "{% set s = 'new' %}{{ s }}"),
        ("namespace-attr", "{% set ns = namespace(x=1) %}{% set ns.x = 'y' %}{{ ns.x }}"),
        ("attr-on-non-namespace", "{% set d.x = 1 %}"),
        ("undefined-then-set", "[{{ later }}]{% set later = 1 %}{{ later }}"),
        ("self-reference", "{% set n = n + 1 %}{{ n }}"),
    ],
    "macro": [
        ("basic", "{% macro hi(name) %}Hi {{ name }}!{% endmacro %}{{ hi('bob') }}"),
        (
            "defaults",
            "{% macro m(a, b='B', c=3) %}{{ a }}{{ b }}{{ c }}{% endmacro %}{{ m(1) }}|{{ m(1, c=9) }}|{{ m(1, 2, 3) }}",
        ),
        ("missing-arg", "{% macro m(a, b) %}[{{ a }}|{{ b }}]{% endmacro %}{{ m(1) }}"),
        ("varargs", "{% macro m(a) %}{{ a }}{{ varargs }}{% endmacro %}{{ m(1, 2, 3) }}"),
        (
            "kwargs",
            "{% macro m(a) %}{{ a }}{{ kwargs|dictsort }}{% endmacro %}{{ m(1, z=2, y=3) }}",
        ),
        ("too-many-args", "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, 2) }}"),
        ("unknown-kwarg", "{% macro m(a) %}{{ a }}{% endmacro %}{{ m(1, b=2) }}"),
        (
            "caller",
            "{% macro wrap() %}<{{ caller() }}>{% endmacro %}{% call wrap() %}body{% endcall %}",
        ),
        (
            "caller-args",
            "{% macro each(items) %}{% for i in items %}{{ caller(i, loop.index) }}{% endfor %}{% endmacro %}{% call(x, i) each(xs) %}{{ i }}:{{ x }};{% endcall %}",
        ),
        (
            "recursion",
            "{% macro fact(k) %}{{ 1 if k <= 1 else k * fact(k - 1)|int }}{% endmacro %}{{ fact(5) }}",
        ),
        ("sees-context", "{% macro m() %}{{ s }}{% endmacro %}{{ m() }}"),
        ("sees-earlier-set", "{% set g = 'G' %}{% macro m() %}{{ g }}{% endmacro %}{{ m() }}"),
        ("returns-string", "{% macro m() %}12{% endmacro %}{{ m() ~ 3 }}|{{ m()|int + 1 }}"),
        ("output-whitespace", "{% macro m() %}\n  x\n{% endmacro %}[{{ m() }}]"),
        ("macro-name-attr", "{% macro m(a, b) %}{% endmacro %}{{ m.name }}|{{ m.arguments }}"),
        ("call-undefined-macro", "{% call nosuch() %}x{% endcall %}"),
        ("filter-on-macro", "{% macro m() %}abc{% endmacro %}{{ m()|upper }}"),
    ],
    "filterblock": [
        ("upper", "{% filter upper %}abc {{ s }}{% endfilter %}"),
        ("chain", "{% filter trim|upper %}  x  {% endfilter %}"),
        ("args", "{% filter replace('a', 'b') %}banana{% endfilter %}"),
        ("indent", "{% filter indent(2, true) %}a\nb{% endfilter %}"),
        (
            "nested",
            "{% filter upper %}{% filter replace('B', 'x') %}abc{% endfilter %}{% endfilter %}",
        ),
        ("non-string-result", "{% filter length %}abc{% endfilter %}"),
        ("unknown", "{% filter nosuch %}x{% endfilter %}"),
    ],
    "raw": [
        ("basic", "{% raw %}{{ x }}{% if %}{# c #}{% endraw %}"),
        ("whitespace", "a {%- raw -%}  {{ x }}  {%- endraw -%} b"),
        ("newline", "{% raw %}\nline\n{% endraw %}\n"),
    ],
    "comment": [
        ("basic", "a{# comment #}b"),
        ("multiline", "a{# multi\nline {{ x }} {% if %} #}b"),
        ("strip", "a  {#- c -#}  b"),
        ("unclosed", "a{# never closed"),
    ],
    "syntax": [
        ("unclosed-if", "{% if true %}x"),
        ("unclosed-for", "{% for x in xs %}x"),
        ("stray-endif", "x{% endif %}"),
        ("unknown-tag", "{% frobnicate %}"),
        ("unclosed-var", "{{ x"),
        ("bad-expr", "{{ 1 + }}"),
        ("empty-var", "{{ }}"),
        ("unclosed-string", "{{ 'abc }}"),
        ("unbalanced-paren", "{{ (1 + 2 }}"),
        ("endfor-mismatch", "{% if true %}{% endfor %}"),
        ("extends", "{% extends 'base.html' %}"),
        ("elif-after-else", "{% if a %}{% else %}{% elif b %}{% endif %}"),
        ("cond-in-if-head", "{% if 1 if true else 2 %}x{% endif %}"),
        ("assign-to-literal", "{% set 1 = 2 %}"),
        ("with-block", "{% with a = 1 %}{{ a }}{% endwith %}"),
        ("include", "{% include 'x.html' %}"),
        ("block-tag", "{% block b %}x{% endblock %}"),
        ("do-tag", "{% do xs.append(1) %}"),
        ("dangling-operator", "{{ 1 2 }}"),
        ("keyword-as-name", "{{ for }}"),
    ],
    "lexer": [
        ("braces-in-strings", "{{ '}}' }}|{{ '%}' }}|{{ '{{' }}|{{ '#}' }}"),
        ("braces-in-set-string", "{% set x = '%}{{' %}{{ x }}"),
        ("lone-brace-text", "a{b}c{ d } {}"),
        ("brace-before-tag", "{{{ 1 }}}"),
        ("percent-brace-text", "50%} and #} and }}"),
        ("comment-with-tags", "{# {{ x }} {% if %} #}ok"),
        ("newline-normalised", "a\r\nb\rc\n"),
        ("unicode-name", "{% set é = 1 %}{{ é }}"),
        ("no-space-tags", "{%if true%}{{n}}{%endif%}"),
        ("spaces-in-tags", "{%   if   true   %}{{    n    }}{%   endif   %}"),
        ("newline-in-tag", "{% if\ntrue\n%}{{\nn\n}}{% endif %}"),
        ("minus-after-string", "{{ 'a' -}}  b"),
        ("minus-number", "{{ 5 -1 }}|{{ 5 - -1 }}|{{ 5-1 }}"),
        ("leading-dot-float", "{{ .5 }}"),
        ("trailing-dot-float", "{{ 1. }}"),
        ("hex-literal", "{{ 0x10 }}"),
        ("escaped-quote-backslash", '{{ \'a\\\\\' }}|{{ "b\\"" }}'),
    ],
    "scope": [
        (
            "macro-default-refers-arg",
            "{% macro m(a, b=a ~ '!') %}{{ b }}{% endmacro %}{{ m('x') }}",
        ),
        (
            "macro-set-no-leak",
            "{% macro m() %}{% set inner = 1 %}{% endmacro %}{{ m() }}[{{ inner }}]",
        ),
        ("nested-unpack", "{% for a, (b, c) in [(1, (2, 3))] %}{{ a }}{{ b }}{{ c }}{% endfor %}"),
        (
            "loop-in-macro-in-loop",
            "{% macro m() %}{% for y in [1] %}{{ loop.index }}{% endfor %}{% endmacro %}{% for x in [1, 2] %}{{ m() }}{% endfor %}",
        ),
        (
            "caller-sees-loop",
            "{% macro m() %}{{ caller() }}{% endmacro %}{% for x in [1, 2] %}{% call m() %}{{ loop.index }}{{ x }}{% endcall %}{% endfor %}",
        ),
        (
            "set-in-filter-block",
            "{% filter upper %}{% set v = 'x' %}{{ v }}{% endfilter %}[{{ v }}]",
        ),
        (
            "set-in-set-block",
            "{% set outer %}{% set v = 'x' %}{{ v }}{% endset %}{{ outer }}[{{ v }}]",
        ),
        (
            "namespace-in-macro",
            "{% macro m() %}{% set ns = namespace(c=0) %}{% for x in [1, 2] %}{% set ns.c = ns.c + x %}{% endfor %}{{ ns.c }}{% endmacro %}{{ m() }}",
        ),
        ("for-var-shadows-context", "{% for s in [1] %}{{ s }}{% endfor %}{{ s }}"),
        ("loop-var-in-else", "{% for x in [] %}{% else %}[{{ x }}]{% endfor %}"),
        ("set-after-use-in-loop", "{% for x in [1, 2] %}{{ v }}{% set v = x %}{{ v }}{% endfor %}"),
        (
            "recursive-loop-depth-vars",
            "{% for n in [[1, [2]], 3] recursive %}{% if n is iterable %}{{ loop(n) }}{% else %}{{ n }}@{{ loop.depth }}{% endif %}{% endfor %}",
        ),
    ],
    "chatidiom": [
        (
            "system-split",
            "{% if messages[0]['role'] == 'system' %}{% set sys = messages[0]['content'] %}{% set rest = messages[1:] %}{% else %}{% set sys = '' %}{% set rest = messages %}{% endif %}[{{ sys }}]{{ rest|length }}",
        ),
        (
            "content-parts",
            "{% for m in messages %}{% if m.content is string %}{{ m.content }}{% elif m.content is iterable %}{% for p in m.content %}{{ p.text if p.type == 'text' else '<' ~ p.type ~ '>' }}{% endfor %}{% endif %};{% endfor %}",
        ),
        (
            "tool-calls",
            "{% for m in messages if m.tool_calls %}{% for tc in m.tool_calls %}{{ tc.function.name }}({{ tc.function.arguments|tojson }}){% endfor %}{% endfor %}",
        ),
        (
            "alternation",
            "{% for m in messages[1:] %}{% if (m.role == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% endfor %}",
        ),
        (
            "content-concat-list",
            "{% for m in messages %}{{ m.role + ': ' + m.content }}{% endfor %}",
        ),
        ("iterate-none", "{% for t in z %}{% endfor %}"),
        ("last-message", "{{ messages[-1].role }}|{{ (messages|last).content|length }}"),
        (
            "loop-last-gen-prompt",
            "{% for m in messages %}{% if loop.last %}<end>{% endif %}{% endfor %}",
        ),
    ],
}

# Chat-only cases (the transformers layer): template -> rendered with CTX.
CHAT_ONLY: dict[str, list[tuple[str, str]]] = {
    "chat": [
        ("tojson-json-dumps", "{{ {'b': 'é<>', 'a': [1, 2.5, none, true]}|tojson }}"),
        ("tojson-indent", "{{ d|tojson(indent=2) }}"),
        ("tojson-indent-string", "{{ [1, [2]]|tojson(indent='\\t') }}"),
        ("tojson-sort-keys", "{{ d|tojson(sort_keys=true) }}"),
        ("tojson-separators", "{{ d|tojson(separators=(',', ':')) }}"),
        ("tojson-ensure-ascii", "{{ uni|tojson(ensure_ascii=true) }}"),
        ("tojson-string", "{{ 'say \"hi\"\\n'|tojson }}"),
        ("tojson-unserializable", "{{ range(2)|tojson }}"),
        ("raise-exception", "a{{ raise_exception('Bad role: ' ~ messages[0].role) }}b"),
        (
            "raise-exception-in-loop",
            "{% for m in messages %}{% if m.role == 'tool' %}{{ raise_exception('no tools') }}{% endif %}{% endfor %}",
        ),
        ("strftime-now", "{{ strftime_now('%Y-%m-%d %H:%M:%S') }}|{{ strftime_now('%d %B %Y') }}"),
        ("generation", "a{% generation %}b{{ n }}{% endgeneration %}c"),
        ("generation-whitespace", "x\n  {% generation %}\n  body\n  {% endgeneration %}\ny"),
        ("break", "{% for x in xs %}{% if x == 1 %}{% break %}{% endif %}{{ x }}{% endfor %}"),
        (
            "continue",
            "{% for x in xs %}{% if x == 1 %}{% continue %}{% endif %}{{ x }}{% endfor %}",
        ),
        ("break-loop-last", "{% for x in xs %}{{ loop.last }}{% break %}{% endfor %}"),
        (
            "continue-inline-if",
            "{% for x in xs if x > 1 %}{% if loop.first %}{% continue %}{% endif %}{{ x }}{% endfor %}",
        ),
        ("break-outside-loop", "{% break %}"),
        (
            "continue-in-macro-in-loop",
            "{% for x in xs %}{% macro m() %}{% continue %}{% endmacro %}{% endfor %}",
        ),
        ("loopctl-else-break-first", "{% for x in [1] %}{% break %}{% else %}E{% endfor %}"),
        ("loopctl-else-continue-all", "{% for x in [1, 2] %}{% continue %}{% else %}E{% endfor %}"),
        (
            "loopctl-else-break-later",
            "{% for x in [1, 2] %}{% if x == 2 %}{% break %}{% endif %}{% else %}E{% endfor %}",
        ),
        ("sandbox-append", "{% set l = [1] %}{{ l.append(2) }}"),
        ("sandbox-pop", "{{ xs.pop() }}"),
        ("sandbox-update", "{% set m = {} %}{{ m.update({'a': 1}) }}"),
        ("sandbox-dict-clear", "{{ d.clear() }}"),
        ("sandbox-private", "{{ ''.__class__ }}"),
        ("sandbox-private-attr", "[{{ s.__class__ }}]"),
        ("sandbox-dunder-item", "[{{ d['__class__'] }}]"),
        ("sandbox-mro", "{{ ().__class__.__mro__ }}"),
        ("sandbox-format-attr", "{{ '{0.__class__}'.format(1) }}"),
        ("sandbox-func-globals", "{{ raise_exception.__globals__ }}"),
        ("dict-global-only-builds", "{{ dict(a=1) }}|{{ dict({'b': 2}) }}|{{ dict([('c', 3)]) }}"),
        ("dict-global-attr", "{{ dict.fromkeys is callable }}|{{ dict.items is defined }}"),
        ("namespace-underscore", "{% set ns = namespace(_x=1) %}{{ ns._x }}"),
        ("namespace-private-read", "{% set ns = namespace(a=1) %}{{ ns._Namespace__attrs }}"),
        ("fromjson-unknown", "{{ '{}'|fromjson }}"),
        ("trim-blocks-preset", "{% if true %}\n  a\n  {% endif %}\nb"),
        ("lstrip-blocks-preset", "  {% for x in xs %}\n    {{ x }}\n  {% endfor %}\n"),
        ("plus-disables-lstrip", "  {%+ if true %}x{% endif %}"),
        ("plus-disables-trim", "{% if true +%}\nx{% endif %}"),
        ("minus-everywhere", "a  \n  {%- if true -%}  \n  b  \n  {%- endif -%}  \n  c"),
        ("comment-lstrip", "a\n    {# c #}\nb"),
        ("variable-not-lstripped", "a\n    {{ n }}\nb"),
        ("keep-trailing-newline-off", "x\n"),
        ("bos-eos", "{{ bos_token }}x{{ eos_token }}"),
        ("undefined-default-printing", "[{{ nope }}]"),
    ],
}

WS_TEMPLATES = [
    ("if-block", "a\n  {% if true %}\n  b\n  {% endif %}\nc\n"),
    ("for-block", "<ul>\n  {% for x in xs %}\n    <li>{{ x }}</li>\n  {% endfor %}\n</ul>\n"),
    ("comment", "a\n  {# c #}\nb\n"),
    ("raw", "a\n  {% raw %}\n  {{ x }}\n  {% endraw %}\nb\n"),
    ("set", "  {% set v = 1 %}\n{{ v }}\n"),
    ("macro", "{% macro m() %}\n  in\n{% endmacro %}\n{{ m() }}\n"),
    ("minus-markers", "a  \n  {%- if true -%}\n  b\n  {%- endif %}  \nc"),
    ("plus-markers", "a\n  {%+ if true +%}\n  b\n  {%+ endif +%}\nc"),
    ("var-minus", "a  {{- n -}}  b\n  {{ n }}  \n"),
    ("comment-markers", "a  {#- c -#}  b\n  {#+ c +#}\nc"),
    ("tabs", "\t{% if true %}\t\n\tx\n\t{% endif %}\t\n"),
    ("crlf", "a\r\n  {% if true %}\r\n  b\r\n  {% endif %}\r\nc\r\n"),
    ("text-before-tag", "ab {% if true %}\nx{% endif %}\n"),
    ("two-trailing-newlines", "x\n\n"),
    ("only-newline", "\n"),
    ("tag-at-eof", "{% if true %}\nx\n{% endif %}"),
    ("lstrip-not-after-text", "x  {% if true %}y{% endif %}"),
    ("else-lines", "{% if false %}\na\n{% else %}\nb\n{% endif %}\n"),
    (
        "nested-loops",
        "{% for a in [1, 2] %}\n  {% for b in [3] %}\n    {{ a }}{{ b }}\n  {% endfor %}\n{% endfor %}\n",
    ),
    ("set-block", "{% set v %}\n  inner\n{% endset %}\n[{{ v }}]\n"),
    ("filter-block", "{% filter upper %}\n  x\n{% endfilter %}\n"),
    (
        "call-block",
        "{% macro m() %}[{{ caller() }}]{% endmacro %}\n{% call m() %}\n  body\n{% endcall %}\n",
    ),
    ("minus-raw", "a\n  {%- raw -%}\n  x\n  {%- endraw -%}\n  b"),
    ("line-with-two-tags", "  {% if true %}{% if true %}\nx\n  {% endif %}{% endif %}\n"),
]

PLAIN_OPTION_SETS = [
    {"trim_blocks": False, "lstrip_blocks": False, "keep_trailing_newline": False},
    {"trim_blocks": True, "lstrip_blocks": False, "keep_trailing_newline": False},
    {"trim_blocks": False, "lstrip_blocks": True, "keep_trailing_newline": False},
    {"trim_blocks": True, "lstrip_blocks": True, "keep_trailing_newline": False},
    {"trim_blocks": False, "lstrip_blocks": False, "keep_trailing_newline": True},
    {"trim_blocks": True, "lstrip_blocks": True, "keep_trailing_newline": True},
]

UNDEFINED_TEMPLATES = [
    ("print", "[{{ missing }}]"),
    ("attr", "[{{ missing.attr }}]"),
    ("default", "{{ missing|default('d') }}"),
    ("defined-test", "{{ missing is defined }}"),
    ("if", "{% if missing %}y{% else %}n{% endif %}"),
    ("iterate", "{% for x in missing %}{{ x }}{% endfor %}."),
    ("concat", "{{ 'a' ~ missing }}"),
    ("eq", "{{ missing == none }}"),
    ("length", "{{ missing|length }}"),
    ("inline-if-no-else", "[{{ 'a' if false }}]"),
    ("not-inline-if", "{{ not ('a' if false) }}"),
    ("dict-attr", "[{{ d.nope }}]"),
    ("chained-attr", "[{{ d.nope.deeper }}]"),
    ("upper", "{{ missing|upper }}"),
]

# Bugs found by the differential tests, pinned: (name, config, options, context, template).
REGRESSIONS: list[tuple[str, str, dict, dict, str]] = [
    (
        "for-else-break-first",
        "chat",
        {},
        {},
        "{% for x in [1] %}{% break %}{% else %}E{% endfor %}",
    ),
    (
        "for-else-continue-all",
        "chat",
        {},
        {},
        "{% for x in [1, 2] %}{% continue %}{% else %}E{% endfor %}",
    ),
    (
        "for-else-break-first-nested",
        "chat",
        {},
        {"ws": ["a"]},
        "{% for x in ws|join(',') %}{% if loop.first %}{% break %}{% endif %}{% else %}{n{% endfor %}",
    ),
    (
        "strict-inline-if-no-else",
        "plain",
        {"undefined": "StrictUndefined"},
        {},
        "[{{ 'a' if false }}]{{ not ('a' if false) }}{% if not ('a' if false) %}y{% endif %}",
    ),
    (
        "strict-inline-if-in-for-filter",
        "plain",
        {"undefined": "StrictUndefined"},
        {},
        "{% for x in [1] if not ('a' if false) %}{{ x }}{% endfor %}",
    ),
    ("block-set-filter", "chat", {}, {}, "{%set v|trim%} x {%endset%}[{{ v }}]"),
    ("is-in-test", "chat", {}, {"t": "a"}, "{{ t is in ['a', 'b'] }}|{{ t is not in ['a'] }}"),
    ("sandbox-attr-of-unsafe", "chat", {}, {}, "{{ ().__class__.__mro__ }}"),
    (
        "groupby-attributes",
        "chat",
        {},
        {"users": CTX["users"]},
        "{% for g in users|groupby('role') %}{{ g.grouper }}={{ g.list|length }};{% endfor %}",
    ),
    ("filter-block-int-result", "chat", {}, {}, "{% filter length %}abc{% endfilter %}"),
    ("cond-expr-in-if-head", "chat", {}, {}, "{% if 1 if true else 2 %}x{% endif %}"),
    ("slice-none", "chat", {}, {"z": None}, "{{ z[:] }}"),
    ("slice-int", "plain", {}, {"n": 3}, "{{ n[1:] }}"),
    ("slice-none-content", "chat", {}, {"m": {"content": None}}, "{{ m.content[:10] }}"),
    ("slice-none-literal-folded", "chat", {}, {}, "[{{ none[1:] }}]"),
    ("slice-folded-arith", "chat", {}, {}, "[{{ (1 + 1)[1:] }}]|[{{ 5[1:] }}]|[{{ true[::-1] }}]"),
    ("slice-folded-and", "plain", {}, {}, "[{{ ((none|float) and 'abc')[1:-1] }}]"),
    ("slice-runtime-or", "chat", {}, {"n": 3}, "{{ (none|float or n)[1:] }}"),
    (
        "slice-folded-whole-output",
        "chat",
        {},
        {"x": "X"},
        "{{ none[1:] ~ 'x' }}|{{ [none[1:]]|length }}|{{ x }}",
    ),
    ("slice-not-folded-in-concat", "chat", {}, {"x": "X"}, "{{ x ~ none[1:] }}"),
    ("slice-not-folded-in-if", "chat", {}, {}, "{% if none[1:] %}y{% endif %}"),
    ("slice-not-folded-in-set", "chat", {}, {}, "{% set v = none[1:] %}[{{ v }}]"),
    ("slice-not-folded-in-and", "chat", {}, {"s": "a b"}, "{{ (s|wordcount) and none[1:] }}"),
    (
        "test-of-parenthesised-test",
        "chat",
        {},
        {"n": 3},
        "{{ (n is odd) is boolean }}|{{ (1 is odd) is sameas true }}",
    ),
    ("test-chained-unparenthesised", "chat", {}, {}, "{{ 1 is odd is boolean }}"),
    ("undefined-dunder-attr", "chat", {}, {}, "[{{ missing.__class__ }}]|[{{ loop.__class__ }}]"),
    ("slice-folded-safe-subexpr-concat", "chat", {}, {"x": "X"}, "{{ x ~ (none[1:] ~ 'a') }}"),
    (
        "slice-folded-safe-subexpr-default",
        "chat",
        {},
        {"x": "X"},
        "{{ (none[1:]|default('d')) ~ x }}",
    ),
    ("slice-folded-safe-subexpr-not", "chat", {}, {"x": "X"}, "{{ (not (9[:])) and x }}"),
    ("slice-folded-safe-subexpr-if", "chat", {}, {}, "{% if not none[1:] %}y{% endif %}"),
    ("slice-folded-safe-subexpr-set", "chat", {}, {}, "{% set v = none[1:] is defined %}{{ v }}"),
    ("slice-folded-safe-subexpr-cond", "chat", {}, {"x": "X"}, "{{ x if (1)[:] else 'n' }}"),
    (
        "slice-folded-safe-subexpr-range",
        "chat",
        {},
        {},
        "{% for i in range((none[1:])|length) %}{{ i }}{% endfor %}.",
    ),
    ("slice-not-folded-unsafe-list", "chat", {}, {"x": "X"}, "{{ [none[1:]] ~ x }}"),
    (
        "fold-cond-filter-on-name-mul",
        "chat",
        {},
        {"ws": [1, 2, 3]},
        "{{ 2 * (ws|length if true else 0) }}",
    ),
    (
        "fold-cond-filter-on-name-concat",
        "chat",
        {},
        {"s": "ab"},
        "{{ 'x' ~ (s|upper if true else 'n') }}",
    ),
    ("fold-cond-filter-on-name-list", "plain", {}, {"s": "ab"}, "{{ [s|upper if true else 'n'] }}"),
    (
        "fold-cond-filter-on-name-if",
        "chat",
        {},
        {"s": "ab"},
        "{% if (s|length if true else 0) > 1 %}y{% endif %}",
    ),
    (
        "fold-cond-filter-on-name-not",
        "chat",
        {},
        {"s": "ab"},
        "{{ not (s|length if true else 0) }}",
    ),
    ("fold-cond-no-else", "chat", {}, {"ws": [1, 2, 3]}, "{{ 2 * (ws|length if true) }}"),
    ("chat-dict-fromkeys", "chat", {}, {}, "{{ dict.fromkeys(['a', 'b'], 0) }}|{{ dict(a=1) }}"),
    (
        "chat-namespace-set-underscore",
        "chat",
        {},
        {},
        "{% set ns = namespace(a=1) %}{% set ns._x = 2 %}{{ ns.a }}",
    ),
    (
        "fold-cond-name-branch-filtered",
        "chat",
        {},
        {"bos_token": "<s>"},
        "{{ ('' if false else bos_token)|pprint }}",
    ),
    (
        "fold-cond-slice-of-name",
        "plain",
        {},
        {"add_generation_prompt": True},
        "{{ (add_generation_prompt[:])|sort if 0.5 else () }}",
    ),
    (
        "fold-cond-namespace-arg",
        "chat",
        {},
        {"ws": [1, 2, 3], "m": 3},
        "{% set ns = namespace(ct=(true|int) * ((ws|length) if true else (m ** 0))) %}{{ ns.ct }}",
    ),
    ("undefined-dunder-attr-then-attr", "chat", {}, {}, "{{ missing.__class__.x }}"),
    (
        "markup-index-slice",
        "chat",
        {},
        {"s": "a b"},
        "{{ [(s|e)[0]] }}|{{ [(s|e)[0:2]] }}|{{ [(s|e)[::-1]] }}|{{ (s|e)[0] is escaped }}",
    ),
    ("markup-tojson-index-plain", "plain", {}, {"d": {"k": 1}}, "{{ ((d|tojson)[0]).split() }}"),
    ("cond-expr-in-elif-head", "chat", {}, {}, "{% if false %}{% elif 1 if true %}x{% endif %}"),
]


def outcome_text(result: Outcome) -> str:
    kind, value = result
    if kind == "ok":
        return value
    if kind == "raise_exception":
        return f"!TemplateError: {value}"
    return f"!{value}"


# Files whose error message is not compared (Jinja2's message is about its loader machinery).
CLASS_ONLY = {"syntax-extends", "syntax-include"}


def write_case(name: str, config: str, options: dict, context: dict, template: str) -> None:
    assert "\n===\n" not in template and not template.startswith("===\n"), name
    result = render_reference(config, template, context, **options)
    kind, value = result
    if kind == "error":
        # Record the reference's message too, for the reader.
        from .reference import reference_environment

        try:
            reference_environment(config, **options).from_string(template).render(context)
        except Exception as exc:  # noqa: BLE001
            message = getattr(exc, "message", None) or str(exc)
            value = f"{type(exc).__name__}: {message}"
        expected = f"!{value}"
    else:
        expected = outcome_text(result)
    header = [f"config: {config}"]
    if options:
        header.append(f"options: {json.dumps(options, sort_keys=True)}")
    header.append(f"context: {json.dumps(context, ensure_ascii=False)}")
    if name.split(".")[0] in CLASS_ONLY:
        header.append("compare: class")
    text = "\n".join(header) + "\n---\n" + template + "\n===\n" + expected + "\n"
    (GOLDEN / f"{name}.txt").write_bytes(text.encode("utf-8"))


def _used(template: str) -> dict:
    """Only the context variables the template names (keeps the files small)."""
    return {k: v for k, v in CTX.items() if re.search(rf"\b{k}\b", template)}


def main() -> None:
    GOLDEN.mkdir(exist_ok=True)
    count = 0
    for section, cases in BOTH.items():
        for name, template in cases:
            ctx = _used(template)
            write_case(f"{section}-{name}.chat", "chat", {}, ctx, template)
            write_case(f"{section}-{name}.plain", "plain", {}, ctx, template)
            count += 2
    for section, cases in CHAT_ONLY.items():
        for name, template in cases:
            ctx = _used(template)
            if "bos_token" in template:
                ctx.update({"bos_token": "<s>", "eos_token": "</s>"})
            write_case(f"{section}-{name}", "chat", {}, ctx, template)
            count += 1
    for name, template in WS_TEMPLATES:
        ctx = _used(template)
        write_case(f"ws-{name}.chat", "chat", {}, ctx, template)
        count += 1
        for opts in PLAIN_OPTION_SETS:
            tag = "".join(k[0] for k, v in opts.items() if v) or "none"
            write_case(f"ws-{name}.plain-{tag}", "plain", opts, ctx, template)
            count += 1
    for name, template in UNDEFINED_TEMPLATES:
        ctx = _used(template)
        for kind in ("Undefined", "ChainableUndefined", "StrictUndefined"):
            write_case(f"undefined-{name}.{kind}", "plain", {"undefined": kind}, ctx, template)
            count += 1
    for name, config, options, context, template in REGRESSIONS:
        write_case(f"regression-{name}", config, options, context, template)
        count += 1
    print(f"wrote {count} golden files to {GOLDEN}")


if __name__ == "__main__":
    main()
