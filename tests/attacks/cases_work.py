"""Uncounted work, memory totals and compile time.

Work attacks repeat one operation on big operands inside a loop of 100,000 iterations: charged
in proportion to its sizes, the render stops at the step (or memory) budget within a fraction
of a second; charged as one step, it runs for minutes and the worker is killed."""

from __future__ import annotations

import re

from .model import Err, Limit, Make, Ok, T

WK = "uncounted-work"
MT = "memory-totals"
CT = "compile-time"
STOP = Limit("max_steps", "max_memory")


def loop(setup: str, expr: str, times: int = 100_000) -> str:
    # 300,000 iterations: more than the step budget at one step each, whatever else is charged
    return (
        f"{setup}{{% for k in range(3) %}}{{% for i in range({times}) %}}"
        f"{{% set r = {expr} %}}{{% endfor %}}{{% endfor %}}done"
    )


S = "{% set s = 'ab c' * 250000 %}"  # 1 MB
S2 = S + "{% set s2 = 'ab c' * 249999 ~ 'ab d' %}"
L = "{% set l = range(100000)|list %}"
L2 = L + "{% set l2 = range(100000)|list %}"
SL = "{% set sl = range(100000)|map('string')|list %}"
D = SL + "{% set bd = dict(sl|batch(2)|list) %}"


def setup_for(expr: str) -> str:
    """Only the operands an expression reads are built: setting up is work too."""
    setup = ""
    if re.search(r"\bs2?\b", expr):
        setup += S2
    if re.search(r"\bl2?\b", expr):
        setup += L2
    if re.search(r"\bbd\b", expr):
        setup += D
    elif re.search(r"\bsl\b", expr):
        setup += SL
    return setup


STRING_OPS = {
    "str-upper": "s.upper()",
    "str-lower": "s.lower()",
    "str-title": "s.title()",
    "str-capitalize": "s.capitalize()",
    "str-swapcase": "s.swapcase()",
    "str-casefold": "s.casefold()",
    "str-count": "s.count('c')",
    "str-find": "s.find('z')",
    "str-rfind": "s.rfind('z')",
    "str-replace": "s.replace('a', 'b')",
    "str-split": "s.split()",
    "str-rsplit": "s.rsplit(' ')",
    "str-splitlines": "s.splitlines()",
    "str-strip": "s.strip('z')",
    "str-lstrip": "s.lstrip('z')",
    "str-rstrip": "s.rstrip('z')",
    "str-strip-big-chars": "'a'.strip(s)",
    "str-startswith": "s.startswith('z', 0)",
    "str-endswith-big": "'a'.endswith(s)",
    "str-partition": "s.partition('z')",
    "str-rpartition": "s.rpartition('z')",
    "str-expandtabs": "s.expandtabs()",
    "str-isalnum": "s.isalnum()",
    "str-isspace": "(s ~ '').isspace()",
    "str-isprintable": "s.isprintable()",
    "str-isidentifier": "s.isidentifier()",
    "str-istitle": "s.istitle()",
    "str-islower": "s.islower()",
    "str-isupper": "s.isupper()",
    "str-isascii": "s.isascii()",
    "str-isdecimal": "s.isdecimal()",
    "str-ljust": "s.ljust(1000001)",
    "str-zfill": "s.zfill(1000001)",
    "str-center": "s.center(1000001)",
    "str-removeprefix": "s.removeprefix('x')",
    "str-join-big": "''.join(sl)",
    "str-format": "'{}'.format(s)",
    "str-format-map": "'{a}'.format_map({'a': s})",
    "str-percent": "'%s' % s",
    "str-percent-r": "'%r' % s",
    "str-concat": "s ~ ''",
    "str-plus": "s + ''",
    "str-in": "'z' in s",
    "str-not-in": "'z' not in s",
    "str-equal": "s == s2",
    "str-less": "s < s2",
    "str-slice": "s[1:]",
    "str-reverse-slice": "s[::-1]",
    "str-times-one": "s * 1",
    "str-index-neg": "s[-1]",
    "filter-upper": "s|upper",
    "filter-lower": "s|lower",
    "filter-title": "s|title",
    "filter-capitalize": "s|capitalize",
    "filter-trim": "s|trim",
    "filter-striptags": "s|striptags",
    "filter-wordcount": "s|wordcount",
    "filter-truncate": "s|truncate(999999)",
    "filter-center": "s|center(1000001)",
    "filter-indent": "s|indent(1)",
    "filter-replace": "s|replace('a', 'b')",
    "filter-reverse": "s|reverse",
    "filter-escape": "s|escape",
    "filter-forceescape": "s|forceescape",
    "filter-urlencode": "s|urlencode",
    "filter-string": "s|string",
    "filter-tojson": "s|tojson",
    "filter-pprint": "s|pprint",
    "filter-int": "s|int",
    "filter-float": "s|float",
    "filter-format": "s|format",
    "filter-safe-escape": "(s|safe)|escape",
    "filter-list-str": "s|list|length",
    "filter-unique-str": "s|unique|list|length",
    "filter-sort-str": "s|sort|length",
    "filter-min-str": "s|min",
    "filter-max-str": "s|max",
    "filter-first-wordwrap": "s|wordwrap(79)|first",
    "test-upper": "s is upper",
    "test-lower": "s is lower",
    "test-in": "'z' is in s",
    "test-eq": "s is eq s2",
    "test-ne": "s is ne s2",
    "test-string": "(s ~ 'x') is string",
}

LIST_OPS = {
    "list-plus": "l + []",
    "list-equal": "l == l2",
    "list-less": "l < l2",
    "list-in": "-1 in l",
    "list-in-list": "l in [l2]",
    "list-slice": "l[1:]",
    "list-reverse-slice": "l[::-1]",
    "list-times-one": "l * 1",
    "list-index": "l.index(99999)",
    "list-count": "l.count(-1)",
    "list-copy": "l.copy()",
    "filter-sum": "l|sum",
    "filter-min": "l|min",
    "filter-max": "l|max",
    "filter-sort": "l|sort",
    "filter-unique": "l|unique|list",
    "filter-reverse-list": "l|reverse|list",
    "filter-join": "l|join",
    "filter-map-string": "l|map('string')|list",
    "filter-select": "l|select('odd')|list",
    "filter-reject": "l|reject('odd')|list",
    "filter-selectattr": "l|selectattr('real')|list",
    "filter-rejectattr": "l|rejectattr('real')|list",
    "filter-batch": "l|batch(2)|list",
    "filter-slice": "l|slice(2)|list",
    "filter-groupby": "l|groupby('real')",
    "filter-tojson-list": "l|tojson",
    "filter-string-list": "l|string",
    "filter-pprint-list": "l|pprint",
    "filter-list": "l|list",
    "filter-map-abs": "l|map('abs')|list",
    "filter-dictsort": "bd|dictsort",
    "filter-items": "bd|items|list",
    "dict-items": "bd.items()|list",
    "dict-keys": "bd.keys()|list",
    "dict-values": "bd.values()|list",
    "dict-copy": "bd.copy()",
    "dict-global": "dict(bd)",
    "dict-kwargs-global": "dict(**bd)",
    "dict-equal": "bd == bd.copy()",
    "dict-in": "'zz' in bd.values()|list",
    "filter-sum-start-list": "sl|batch(1)|sum(start=[])",
    "filter-xmlattr": "bd|xmlattr",
    "filter-urlencode-dict": "bd|urlencode",
    "filter-map-attr": "l|map(attribute='real')|list",
    "test-in-list": "-1 is in l",
    "test-eq-list": "l is eq l2",
    "test-sameas": "l is sameas l2",
    "filter-count": "l|count",
    "filter-length-set": "l|unique|list|length",
    "namespace-pairs": "namespace(sl|batch(2)|list)",
    "namespace-kwargs": "namespace(**bd)",
    "cycler-star": "cycler(*l)",
    "loop-cycle-star": "loop.cycle(*l)",
    "dict-fromkeys": "dict.fromkeys(l)",
    "tojson-indent": "bd|tojson(indent=2)",
}

WORK = (
    [T(WK, name, loop(setup_for(expr), expr), STOP) for name, expr in STRING_OPS.items()]
    + [T(WK, name, loop(setup_for(expr), expr), STOP) for name, expr in LIST_OPS.items()]
    + [
        T(
            WK,
            "tuple-startswith",
            loop("", "'a'.startswith(w.t)"),
            STOP,
            {"w": {"t": Make("tuple(str(i) for i in range(10**6))")}},
        ),
        T(
            WK,
            "macro-kwargs",
            loop(D + "{% macro m() %}{{ kwargs|length }}{% endmacro %}", "m(**bd)"),
            STOP,
        ),
        T(
            WK,
            "macro-varargs",
            loop(L + "{% macro m() %}{{ varargs|length }}{% endmacro %}", "m(*l)"),
            STOP,
        ),
        T(
            WK,
            "set-is-free",
            "{% for i in range(100000) %}" + "{% set a = 1 %}" * 500 + "{% endfor %}",
            STOP,
        ),
        T(
            WK,
            "if-is-free",
            "{% for i in range(100000) %}" + "{% if false %}{% endif %}" * 500 + "{% endfor %}",
            STOP,
        ),
        T(
            WK,
            "with-is-free",
            "{% for i in range(100000) %}" + "{% with %}{% endwith %}" * 300 + "{% endfor %}",
            STOP,
        ),
        T(
            WK,
            "comment-and-raw",
            "{% for i in range(100000) %}" + "{# c #}{% raw %}{% endraw %}" * 300 + "{% endfor %}",
            (Ok(""), STOP),
        ),
        T(
            WK,
            "for-if-rejects",
            L + "{% for i in range(100000) %}{% for j in l if false %}{% endfor %}{% endfor %}",
            STOP,
        ),
        T(
            WK,
            "for-else-empty",
            "{% for i in range(100000) %}"
            + "{% for j in [] %}{% else %}{% endfor %}" * 5
            + "{% endfor %}",
            STOP,
        ),
        T(
            WK,
            "generation-in-loop",
            "{% for i in range(100000) %}{% generation %}x{% endgeneration %}{% endfor %}",
            (STOP, Limit("max_output")),
        ),
        T(
            WK,
            "slice-huge-count",
            "{{ []|slice(10000000)|list|length }}",
            Limit("max_items", "max_steps", "max_memory"),
        ),
        T(
            WK,
            "batch-huge-fill",
            "{% for i in range(100000) %}{{ [i]|batch(10000000, 0)|list|length }}{% endfor %}",
            Limit("max_items", "max_steps", "max_memory"),
        ),
        T(
            WK,
            "urlize-backtrack-dots",
            "{{ ('.' * 40000)|urlize|length }}",
            (
                Ok("40000"),
                STOP,
            ),
        ),
        T(
            WK,
            "urlize-backtrack-at",
            "{{ ('a@' * 20000)|urlize|length }}",
            (
                Ok("40000"),
                STOP,
            ),
        ),
        T(
            WK,
            "urlize-backtrack-www",
            "{{ ('www.' * 10000)|urlize|length }}",
            (
                Ok("80037"),
                STOP,
            ),
        ),
        T(
            WK,
            "urlize-in-loop",
            "{% set u = 'see http://a.com/' ~ ('x' * 100000) %}{% for i in range(100000) %}{% set r = u|urlize %}{% endfor %}",
            (STOP,),
        ),
        T(
            WK,
            "round-huge-negative",
            "{{ 1|round(-10000000) }}",
            (Ok("0.0"), Limit("max_int_bits", "max_steps")),
        ),
        T(
            WK,
            "round-huge-positive",
            "{{ 1.5|round(10000000) }}",
            (Ok("2.0"), Ok("1.5"), Limit("max_int_bits", "max_steps")),
        ),
        T(
            WK,
            "int-base16-long",
            "{{ ('f' * 2000000)|int(base=16) }}",
            (Limit("max_int_bits", "max_steps"),),
        ),
        T(
            WK,
            "int-base10-long",
            "{{ ('9' * 2000000)|int }}",
            (Ok("0"), Limit("max_int_bits", "max_steps")),
        ),
        T(
            WK,
            "int-base8-long-in-loop",
            "{% set o = '7' * 20000 %}{% for i in range(100000) %}{% set r = o|int(base=8) %}{% endfor %}",
            STOP,
        ),
        T(
            WK,
            "strftime-long-format",
            "{{ strftime_now('%c' * 5000000)|length }}",
            Limit("max_string", "max_steps", "max_memory"),
        ),
        T(
            WK,
            "strftime-in-loop",
            "{% set f = '%c' * 100000 %}{% for i in range(100000) %}{% set r = strftime_now(f) %}{% endfor %}",
            STOP,
        ),
        T(
            WK,
            "folded-constant-copied",
            "{% for i in range(100000) %}{% set r = [[0] * 1000] * 1000 %}{% endfor %}done",
            STOP,
        ),
        T(
            WK,
            "folded-constant-string",
            "{% for i in range(100000) %}{% set r = ('x' * 5000000)|upper %}{% endfor %}done",
            (Ok("done"), STOP),
        ),
        T(
            WK,
            "lipsum-in-loop",
            "{% for i in range(100000) %}{% set r = lipsum(100, false, 20, 100) %}{% endfor %}",
            STOP,
        ),
        T(
            WK,
            "format-width-in-loop",
            "{% for i in range(100000) %}{% set r = '{:5000000}'.format(i) %}{% endfor %}",
            STOP,
        ),
        T(
            WK,
            "percent-width-in-loop",
            "{% for i in range(100000) %}{% set r = '%5000000d' % i %}{% endfor %}",
            STOP,
        ),
        T(
            WK,
            "int-pow-in-loop",
            "{% for i in range(100000) %}{% set r = 7 ** (20000 + i % 2) %}{% endfor %}",
            STOP,
        ),
        T(
            WK,
            "int-to-string-in-loop",
            "{% set n = 7 ** 4700 %}{% for i in range(100000) %}{% set r = n|string %}{% endfor %}",
            STOP,
        ),
        T(
            WK,
            "int-mul-in-loop",
            "{% set n = 7 ** 10000 %}{% for i in range(100000) %}{% set r = n * n %}{% endfor %}",
            STOP,
        ),
        T(
            WK,
            "int-divmod-in-loop",
            "{% set n = 7 ** 22000 %}{% for i in range(100000) %}{% set r = n // 3 %}{% endfor %}",
            STOP,
        ),
        T(
            WK,
            "filesizeformat-huge",
            "{% set n = 10 ** 19000 %}{% for i in range(100000) %}{% set r = n|filesizeformat %}{% endfor %}",
            (Err("TemplateRuntimeError", "int too large to convert to float"), STOP),
        ),
        T(
            WK,
            "recursive-loop-wide",
            "{% set l = range(1000)|list %}{% for x in [l] * 1000 recursive %}{% if x is iterable %}{{ loop(x) }}{% endif %}{% endfor %}",
            STOP,
        ),
        T(
            WK,
            "caller-in-loop",
            "{% macro m() %}{% for i in range(100000) %}{{ caller() }}{% endfor %}{% endmacro %}{% call m() %}{% for j in range(100000) %}{% endfor %}{% endcall %}",
            STOP,
        ),
    ]
)

BIG = {"w": {"big": Make("'x' * 40_000_000")}}
LST = "{% set lst = [w.big] * 1000 %}"
TOTAL = Limit("max_memory", "max_string", "max_items", "max_output", "max_steps")

MEMORY = [
    T(MT, "list-upper", LST + "{{ (lst|upper)|length }}", TOTAL, BIG),
    T(MT, "percent-list", LST + "{{ ('%s' % (lst,))|length }}", TOTAL, BIG),
    T(MT, "format-list", LST + "{{ '{}'.format(lst)|length }}", TOTAL, BIG),
    T(
        MT,
        "namespace-list",
        LST + "{% set n = namespace(a=lst) %}{{ n|string|length }}",
        TOTAL,
        BIG,
    ),
    T(MT, "raise-exception-list", LST + "{{ raise_exception(lst) }}", TOTAL, BIG),
    T(MT, "string-filter-list", LST + "{{ lst|string|length }}", TOTAL, BIG),
    T(MT, "join-list", LST + "{{ lst|join|length }}", TOTAL, BIG),
    T(MT, "tojson-list", LST + "{{ lst|tojson|length }}", TOTAL, BIG),
    T(MT, "pprint-list", LST + "{{ lst|pprint|length }}", TOTAL, BIG),
    T(MT, "tilde-list", LST + "{{ (lst ~ '')|length }}", TOTAL, BIG),
    T(MT, "map-upper-list", LST + "{{ lst|map('upper')|list|length }}", TOTAL, BIG),
    T(MT, "map-center", "{{ range(1000)|map('center', 10000000)|list|length }}", TOTAL),
    T(MT, "map-string-big", LST + "{{ lst|map('string')|map('upper')|list|length }}", TOTAL, BIG),
    T(MT, "summed-format-widths", "{{ ('{:9000000}' * 200).format(*range(200))|length }}", TOTAL),
    T(MT, "summed-percent-widths", "{{ (('%9000000d' * 200) % ((1,) * 200))|length }}", TOTAL),
    T(
        MT,
        "many-distinct-strings",
        "{% set a = 'x' * 9000000 %}{% set ns = namespace(l=[]) %}{% for i in range(200) %}{% set ns.l = ns.l + [a ~ i] %}{% endfor %}{{ ns.l|length }}",
        TOTAL,
    ),
    T(
        MT,
        "many-distinct-lists",
        "{% set ns = namespace(l=[]) %}{% for i in range(200) %}{% set ns.l = ns.l + [range(100000)|list] %}{% endfor %}{{ ns.l|length }}",
        TOTAL,
    ),
    T(
        MT,
        "dict-of-big-values",
        "{% set a = 'y' * 9000000 %}{% set ns = namespace(d={}) %}{% for i in range(200) %}{% set ns.d = dict(ns.d, **{i|string: a ~ i}) %}{% endfor %}{{ ns.d|length }}",
        TOTAL,
    ),
    T(
        MT,
        "set-block-captures",
        "{% set a = 'z' * 9000000 %}{% set ns = namespace(l=[]) %}{% for i in range(200) %}{% set c %}{{ a }}{{ i }}{% endset %}{% set ns.l = ns.l + [c] %}{% endfor %}{{ ns.l|length }}",
        TOTAL,
    ),
    T(
        MT,
        "macro-results-kept",
        "{% macro m(i) %}{{ 'q' * 9000000 }}{{ i }}{% endmacro %}{% set ns = namespace(l=[]) %}{% for i in range(200) %}{% set ns.l = ns.l + [m(i)] %}{% endfor %}{{ ns.l|length }}",
        TOTAL,
    ),
    T(
        MT,
        "batch-copies",
        "{% set a = 'x' * 9000000 %}{% set ns = namespace(l=[]) %}{% for i in range(200) %}{% set ns.l = ns.l + [(a ~ i)|batch(1000000)|list] %}{% endfor %}{{ ns.l|length }}",
        TOTAL,
    ),
    T(
        MT,
        "nested-list-growth",
        "{% set ns = namespace(l=[0]) %}{% for i in range(100) %}{% set ns.l = [ns.l] * 1000 %}{% endfor %}{{ ns.l|length }}",
        (Ok("1000"), TOTAL, Limit("max_recursion", "max_depth")),
    ),
    T(
        MT,
        "error-message-big",
        "{% set a = 'x' * 9000000 %}{{ raise_exception(a ~ a ~ a ~ a ~ a ~ a ~ a ~ a ~ a ~ a ~ a ~ a ~ a) }}",
        TOTAL,
    ),
    T(
        MT,
        "output-capture-filter",
        "{% filter upper %}{% for i in range(100) %}{{ 'x' * 9000000 }}{% endfor %}{% endfilter %}",
        TOTAL,
    ),
    T(MT, "output-flood", "{% for i in range(100000) %}{{ 'x' * 9000 }}{% endfor %}", TOTAL),
    # Python's own error messages quote values: list.index the value it did not find (a
    # thousand copies of a megabyte), str.format the missing field's whole name.
    T(
        MT,
        "list-index-error-quotes-the-value",
        "{% set big = 'x' * 1000000 %}{{ [1].index((big,) * 1000) }}",
        Err("TemplateRuntimeError", "a tuple that prints long is not in list"),
    ),
    T(
        MT,
        "format-error-quotes-the-field",
        "{{ ('{' ~ 'x' * 5000000 ~ '}').format(a=1) }}",
        Err("TemplateRuntimeError", "'" + "x" * 1999 + "... (cut at 2000 characters)"),
    ),
]

COMPILE = [
    T(
        CT,
        "many-set-tags",
        Make("'{% set a = 1 %}' * 80000"),
        (Ok(""), Limit("max_source", "max_steps", kinds=("LimitError", "TemplateSyntaxError"))),
    ),
    T(
        CT,
        "many-print-tags",
        Make("'{{ a }}' * 150000"),
        (Ok(""), Limit("max_source", "max_steps", kinds=("LimitError", "TemplateSyntaxError"))),
    ),
    T(
        CT,
        "many-if-blocks",
        Make("'{% if a %}x{% endif %}' * 50000"),
        (Ok(""), Limit("max_source", "max_steps", kinds=("LimitError", "TemplateSyntaxError"))),
    ),
    T(
        CT,
        "many-macros",
        Make("''.join('{%% macro m%d() %%}{%% endmacro %%}' % i for i in range(15000))"),
        (Ok(""), Limit("max_source", "max_steps", kinds=("LimitError", "TemplateSyntaxError"))),
    ),
    T(
        CT,
        "long-elif-flat",
        Make(
            "'{% if a %}' + '{% elif a %}' * 99 + '{% endif %}' + '{% if b %}{% endif %}' * 40000"
        ),
        (
            Ok(""),
            Limit(
                "max_source",
                "max_steps",
                "max_nesting",
                kinds=("LimitError", "TemplateSyntaxError"),
            ),
        ),
    ),
    T(
        CT,
        "huge-source",
        Make("'x' * 20_000_000"),  # (40 times max_source)
        Limit("max_source", kinds=("LimitError", "TemplateSyntaxError")),
    ),
    T(
        CT,
        "huge-string-literal",
        Make("'{{ \"' + 'a' * 50_000_000 + '\"|length }}'"),
        (
            Ok("50000000"),
            Limit("max_source", "max_string", kinds=("LimitError", "TemplateSyntaxError")),
        ),
    ),
    T(
        CT,
        "many-comments",
        Make("'{# c #}' * 200000"),
        (Ok(""), Limit("max_source", kinds=("LimitError", "TemplateSyntaxError"))),
    ),
    T(
        CT,
        "deep-raw-blocks",
        Make("'{% raw %}' + '{{ x }}' * 300000 + '{% endraw %}'"),
        (
            Ok("<2100000 characters>"),
            Limit("max_source", kinds=("LimitError", "TemplateSyntaxError")),
        ),
    ),
    T(
        CT,
        "fold-expensive-filters",
        Make("'{% if false %}' + \"{{ ('x' * 9000000)|wordcount }}\" * 2000 + '{% endif %}'"),
        (
            Ok(""),
            Limit(
                "max_steps", "max_source", "max_memory", kinds=("LimitError", "TemplateSyntaxError")
            ),
        ),
    ),
    T(
        CT,
        "fold-sort-constant",
        Make(
            "'{% if false %}' + '{{ (range(100000)|list)|sort|sort|sort|sort }}' * 2000 + '{% endif %}'"
        ),
        (
            Ok(""),
            Limit(
                "max_steps", "max_source", "max_memory", kinds=("LimitError", "TemplateSyntaxError")
            ),
        ),
    ),
    T(
        CT,
        "fold-pow-constant",
        Make("'{% if false %}' + '{{ 7 ** 60000 }}' * 3000 + '{% endif %}'"),
        (
            Ok(""),
            Limit(
                "max_steps",
                "max_source",
                "max_int_bits",
                kinds=("LimitError", "TemplateSyntaxError"),
            ),
        ),
    ),
    T(
        CT,
        "many-string-tokens",
        Make("('{{ ' + ' ~ '.join(['\"a\"'] * 90) + ' }}') * 1000"),
        (
            Ok("<90000 characters>"),
            Limit("max_source", "max_nesting", kinds=("LimitError", "TemplateSyntaxError")),
        ),
    ),
]
