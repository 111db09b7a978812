"""Amplifiers (a small value that a builtin turns into a huge one), compile-time work, and
memory the budget did not count: our own variants of the third list's classes.

Each is refused with its exact message before the big value is made, or renders exactly what
Jinja2 renders (where the value stays within the limits)."""

from __future__ import annotations

from .model import Err, Make, Ok, T

AM = "amplifiers"
CT = "compile-time-folding"
MU = "memory-uncounted"


def too_long(n: int) -> Err:
    return Err("LimitError", f"a string of {n} characters exceeds max_string (10000000)")


def wide(what: str, n: int) -> Err:
    return Err("LimitError", f"a format {what} of {n} exceeds max_string (10000000)")


PRINTED = Err(
    "LimitError",
    "printing a structure of more than 10000000 characters exceeds max_string (10000000)",
)
STEPS = Err("LimitError", "the render exceeded max_steps (200000)")
# a million characters whose repr is ten each: 1 MB as text, 10 MB + 2 as a repr
TAG = "{% set t = '\\U000E0041' * 1000000 %}"
# a list that prints as 64 MB: one 64 KB string held a thousand times
SHARED = "{% set u = 'y' * 65536 %}{% set many = [u] * 1000 %}"

AMPLIFIERS = [
    # widths and precisions wherever Python reads them
    T(
        AM,
        "percent-key-deep-parens",
        "{{ '%(k(((x))))900000000d' % {'k(((x)))': 7} }}",
        wide("width", 900000000),
    ),
    T(
        AM,
        "percent-key-parens-filter",
        "{{ '%(a)s%(b(c)).900000000s'|format(a=1, **{'b(c)': 'z'}) }}",
        wide("precision", 900000000),
    ),
    T(
        AM,
        "percent-key-parens-markup",
        "{{ ('<%(q(r))-90000000s>'|safe) % {'q(r)': 1} }}",
        wide("width", 90000000),
    ),
    T(
        AM,
        "percent-hidden-precision-e",
        "{{ '%-+#.700000000e' % 3.5 }}",
        wide("precision", 700000000),
    ),
    T(AM, "percent-star-negative", "{{ '%*c' % (-700000000, 65) }}", wide("width", 700000000)),
    T(
        AM,
        "percent-star-precision-int",
        "{{ '%.*x' % (700000000, 255) }}",
        wide("precision", 700000000),
    ),
    T(
        AM,
        "percent-widths-add-up",
        "{{ '%(a)6000000s%(a)6000000s' % {'a': 'v'} }}",
        too_long(12000000),
    ),
    T(AM, "percent-key-parens-ok", "{{ '[%(a(b))5s]' % {'a(b)': 'x'} }}", Ok("[    x]")),
    T(
        AM,
        "format-nested-spec",
        "{{ '{0:>{1}}'.format('x', 700000000) }}",
        wide("width", 700000000),
    ),
    T(
        AM,
        "format-map-precision",
        "{{ '{v:.{p}f}'.format_map({'v': 2.5, 'p': 700000000}) }}",
        wide("precision", 700000000),
    ),
    T(AM, "format-grouped-zero-pad", "{{ '{:0900000000,}'.format(1) }}", wide("width", 900000000)),
    T(AM, "format-fill-escaped", "{{ ('{:<<3000000}'|safe).format('x') }}", too_long(15000008)),
    # repr ten times the text
    T(
        AM,
        "percent-r-tag-chars",
        TAG + "{{ '%r%r' % (t[:500000], t[:500000]) }}",
        too_long(10000004),
    ),
    T(AM, "format-a-tag-chars", TAG + "{{ '{!a}'.format(t) }}", too_long(10000002)),
    T(AM, "string-filter-tag-list", TAG + "{{ [t, t]|string }}", PRINTED),
    T(AM, "format-list-tag", TAG + "{{ '{}|{}'.format([t], 1) }}", PRINTED),
    T(AM, "pprint-tag-list", TAG + "{{ [t, 'x']|pprint }}", PRINTED),
    T(AM, "tojson-controls", "{{ ('\\x02' * 1700000)|tojson }}", too_long(10200002)),
    T(
        AM,
        "tojson-ascii-emoji",
        "{{ ('😀' * 850000)|tojson(ensure_ascii=true) }}",
        too_long(10200002),
    ),
    T(
        AM,
        "dict-values-printed",
        SHARED + "{{ dict.fromkeys(range(200)|map('string'), many).values() }}",
        PRINTED,
    ),
    # str() of a container inside text filters
    T(AM, "escape-shared-list", SHARED + "{{ many|e }}", PRINTED),
    T(AM, "safe-shared-list", SHARED + "{{ many|safe }}", PRINTED),
    T(AM, "striptags-shared-list", SHARED + "{{ many|striptags }}", PRINTED),
    T(AM, "xmlattr-shared-list", SHARED + "{{ {'data-x': many}|xmlattr }}", PRINTED),
    T(AM, "urlencode-shared-list", SHARED + "{{ {'q': many}|urlencode }}", PRINTED),
    T(AM, "replace-shared-list", SHARED + "{{ 'a'|replace('a', many) }}", PRINTED),
    T(AM, "markup-join-shared-lists", SHARED + "{{ ('-'|safe).join([many, many]) }}", PRINTED),
    T(AM, "join-lists-of-shared", SHARED + "{{ [many, many]|join }}", PRINTED),
    T(AM, "test-lower-shared-list", SHARED + "{{ many is lower }}", PRINTED),
    # indentation times depth
    T(
        AM,
        "tojson-indent-deep",
        "{% set ns = namespace(v=0) %}{% for i in range(90) %}{% set ns.v = [ns.v, ns.v] %}"
        "{% endfor %}{{ ns.v|tojson(indent=40) }}",
        STEPS,
    ),
    T(
        AM,
        "tojson-indent-string-deep",
        "{% set ns = namespace(v=0) %}{% for i in range(80) %}{% set ns.v = {'k': ns.v, 'j': 1} %}"
        "{% endfor %}{{ ns.v|tojson(indent=' ' * 2000) }}",
        too_long(10267214),
    ),
    T(
        AM,
        "pprint-long-key-wide-dict",
        "{% set d = dict.fromkeys(range(3000)|map('string'), 'w ' * 100) %}"
        "{{ {'K' * 3000: d}|pprint }}",
        too_long(10257517),
    ),
    T(
        AM,
        "pprint-lines-at-depth",
        "{{ [[[[{'x' * 2000: 'a\\n' * 3000000}]]]]|pprint }}",
        # (pprint's declared cost, its printed size times its depth, is charged before the
        # layout bound is measured: the step budget refuses it first)
        STEPS,
    ),
    # escaping after the charge
    T(
        AM,
        "markup-plus-quotes",
        "{{ (('q'|safe) + ('\\'' * 2500000))|length }}",
        too_long(12500000),
    ),
    T(
        AM,
        "markup-radd-ampersands",
        "{{ (('&' * 2500000) + ('q'|safe))|length }}",
        too_long(12500000),
    ),
    T(AM, "escape-quotes", "{{ ('\"' * 2500000)|e|length }}", too_long(12500000)),
    # per-character objects
    T(AM, "join-emoji-separator", "{{ ', '.join('🙂' * 4000000)|length }}", too_long(11999998)),
    T(AM, "join-emoji-empty", "{{ ''.join('🙂' * 9000000)|length }}", Ok("9000000")),
    T(AM, "markup-join-chars", "{{ ('<'|safe).join('x' * 3000000)|length }}", STEPS),
    T(AM, "fromkeys-emoji", "{{ dict.fromkeys('🙂' * 9000000)|length }}", Ok("1")),
    T(AM, "urlencode-emoji", "{{ ('🙂' * 900000)|urlencode|length }}", STEPS),
]

COMPILE_FOLDING = [
    T(CT, "square-of-lists", "{% set x = [[1] * 20000] * 20000 %}{{ x|length }}", Ok("20000")),
    T(
        CT,
        "doubling-nest-set",
        "{% set x = " + "[" * 40 + "0" + "]*2" * 40 + " %}{{ x|length }}",
        Ok("2"),
    ),
    T(CT, "doubling-nest-printed", "{{ " + "[" * 40 + "'a'" + "]*2" * 40 + " }}", STEPS),
    T(
        CT,
        "doubling-nest-many",
        Make(
            "'{% if false %}' + '{{ ' + '[' * 30 + '0' + ']*2' * 30 + ' }}' * 2000 + '{% endif %}'"
        ),
        Ok(""),
    ),
    T(CT, "big-string-constant", "{{ ('z' * 9000000)[:3] }}", Ok("zzz")),
    T(CT, "constant-test-builds", "{{ 'y' if [[0] * 30000] * 30000 else 'n' }}", Ok("y")),
    T(
        CT,
        "constant-dict-of-squares",
        "{{ {'a': [[0] * 20000] * 20000, 'b': 1}|length }}",
        Ok("2"),
    ),
]

MEMORY_UNCOUNTED = [
    T(MU, "range-big-ints-list", "{{ range(2**65000, 2**65000 + 100000)|list|length }}", STEPS),
    T(
        MU,
        "range-big-ints-batch",
        "{{ range(2**60000, 2**60000 + 90000)|batch(3)|list|length }}",
        STEPS,
    ),
    T(MU, "range-big-ints-small", "{{ range(2**65000, 2**65000 + 500)|list|length }}", Ok("500")),
    T(
        MU,
        "test-upper-repeated",
        "{% set s = 'x' * 4000000 %}{% set l = [s, s] %}{% for i in range(1000) %}"
        "{% if l is upper %}{% endif %}{% endfor %}",
        Err("LimitError", "the render exceeded max_memory (256000000)"),
    ),
    T(
        MU,
        "test-lower-shared",
        "{% set l = [w.big] * 1000 %}{{ l is lower }}",
        PRINTED,
        {"w": {"big": Make("'x' * 40_000_000")}},
    ),
    T(
        MU,
        "markup-escape-printed",
        "{{ ('x'|safe).escape }}",
        Ok("<method escape of Markup>"),
    ),
    T(
        MU,
        "markup-escape-in-list",
        "{{ [('x'|safe).escape]|length }}{{ ('a'|safe).escape('<') }}",
        Ok("1&lt;"),
    ),
]
