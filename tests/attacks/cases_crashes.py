"""Process crashes: values nested deeper than CPython can hash, compare, print or free, and
recursion that outruns the count.  The only acceptable outcomes are a LimitError or a
harmless output; a crash kills the worker and is attributed to the attack."""

from __future__ import annotations

from .model import Err, Limit, Ok, T

CR = "crashes"
DEEP = Limit("max_recursion", "max_depth", "max_steps", "max_memory")


def chain(open_: str, close: str, depth: int, start: str = "()", per_set: int = 50) -> str:
    """Build a value nested ``depth`` deep through a namespace, 50 levels per assignment, so
    that only a depth limit (not the step budget) can stop the build in time."""
    wrap = open_ * per_set + "ns.x" + close * per_set
    return (
        f"{{% set ns = namespace(x={start}) %}}{{% for i in range({depth // per_set}) %}}"
        f"{{% set ns.x = {wrap} %}}{{% endfor %}}"
    )


TUPLE = chain("(", ",)", 150_000)
LIST = chain("[", "]", 150_000, "[]")
DICT = chain("{'a': ", "}", 150_000, "{}")


def unstored(use: str, levels: int = 60) -> str:
    """Build two values about ``45 * levels`` deep that are never stored: each call of a
    recursive macro passes its arguments on through 45 more ``batch(1)|list``, then ``use``
    meets them.  Only the one that compares, hashes or prints them can measure them."""
    deeper = "|batch(1)|list" * 45
    return (
        f"{{% macro m(x, y, n) %}}{{% if n > 0 %}}{{{{ m(x{deeper}, y{deeper}, n - 1) }}}}"
        f"{{% else %}}{use}{{% endif %}}{{% endmacro %}}{{{{ m([1], [1], {levels}) }}}}"
    )


CRASHES = [
    # values made deep by filters and macro arguments, never stored, then compared
    T(CR, "unstored-eq-test", unstored("{{ x is eq y }}"), DEEP),
    T(CR, "unstored-select-eq", unstored("{{ [x]|select('eq', y)|list|length }}"), DEEP),
    T(CR, "unstored-in-test", unstored("{{ x is in [y] }}"), DEEP),
    T(CR, "unstored-selectattr-ne", unstored("{{ [x]|selectattr(0, 'ne', y[0])|list }}"), DEEP),
    T(CR, "unstored-compare", unstored("{{ x == y }}"), DEEP),
    T(CR, "unstored-sort", unstored("{{ [x, y]|sort|length }}"), DEEP),
    T(CR, "unstored-join", unstored("{{ [x]|join }}"), DEEP),
    # a method whose result is flat, given a literal that holds the value it wraps
    T(
        CR,
        "flat-method-wrapping-argument",
        chain("{}.get('k', [", "])", 150_000, "[]", per_set=20) + "{{ ns.x|length }}",
        DEEP,
    ),
    T(
        CR,
        "flat-method-on-literal",
        chain("[", "].copy()", 150_000, "[]", per_set=20) + "{{ ns.x|length }}",
        DEEP,
    ),
    T(
        CR,
        "macro-argument-literal",
        "{% macro m(x, n) %}{% if n %}{{ m(" + "[" * 90 + "x" + "]" * 90 + ", n - 1) }}"
        "{% else %}{{ x|length }}{% endif %}{% endmacro %}{{ m([1], 60) }}",
        DEEP,
    ),
    T(
        CR,
        "recursive-loop-literal",
        "{% for x in [[1]] recursive %}{% if loop.depth < 60 %}{{ loop(["
        + "[" * 90
        + "x"
        + "]" * 90
        + "]) }}{% else %}{{ x|length }}{% endif %}{% endfor %}",
        DEEP,
    ),
    # the reproducers: hashing a 150,000-deep tuple where no depth check ran
    T(CR, "tuple-is-test", TUPLE + "{{ ns.x is test }}", DEEP),
    T(CR, "tuple-map", TUPLE + "{{ [1]|map(ns.x)|list }}", DEEP),
    T(
        CR,
        "tuple-groupby-key",
        TUPLE + "{% for g in [ns.x, ns.x]|groupby(0) %}{{ {g: 1}|length }}{% endfor %}",
        DEEP,
    ),
    T(CR, "tuple-groupby-unique", TUPLE + "{{ ([[ns.x]]|groupby(0))|unique|list|length }}", DEEP),
    T(
        CR,
        "tuple-dict-pairs-reverse",
        TUPLE + "{{ dict([(1, ns.x)]|map('reverse')|map('list')|list)|length }}",
        DEEP,
    ),
    T(CR, "tuple-dict-from-reversed", TUPLE + "{{ dict([[ns.x, 1]]|map('reverse')|list) }}", DEEP),
    T(CR, "tuple-set-literal", TUPLE + "{{ {ns.x: 1}|length }}", DEEP),
    T(CR, "tuple-unique", TUPLE + "{{ [ns.x]|unique|list|length }}", DEEP),
    T(CR, "tuple-in-tuple-list", TUPLE + "{{ ns.x in [ns.x] }}", DEEP),
    T(CR, "tuple-equal", TUPLE + "{{ ns.x == ns.x }}", DEEP),
    T(CR, "tuple-less", TUPLE + "{{ ns.x < ns.x }}", DEEP),
    T(CR, "tuple-sort", TUPLE + "{{ [ns.x, ns.x]|sort|length }}", DEEP),
    T(CR, "tuple-printed", TUPLE + "{{ ns.x }}", DEEP),
    T(CR, "tuple-tojson", TUPLE + "{{ ns.x|tojson }}", DEEP),
    T(CR, "tuple-string", TUPLE + "{{ ns.x|string|length }}", DEEP),
    T(
        CR,
        "tuple-dictsort",
        TUPLE + "{{ {'a': ns.x, 'b': ns.x}|dictsort(by='value')|length }}",
        DEEP,
    ),
    T(CR, "tuple-max", TUPLE + "{{ [ns.x, ns.x]|max|length }}", DEEP),
    T(CR, "tuple-index", TUPLE + "{{ [ns.x].index(ns.x) }}", DEEP),
    T(CR, "tuple-count", TUPLE + "{{ [ns.x, 1].count(ns.x) }}", DEEP),
    T(CR, "tuple-sameas-dict-get", TUPLE + "{{ {}.get(ns.x, 1) }}", DEEP),
    T(CR, "tuple-format", TUPLE + "{{ '{}'.format(ns.x)|length }}", DEEP),
    T(CR, "tuple-percent", TUPLE + "{{ ('%s' % (ns.x,))|length }}", DEEP),
    T(CR, "tuple-freed", TUPLE + "done", (Ok("done"), DEEP)),
    T(CR, "list-compare", LIST + "{{ ns.x == ns.x }}", DEEP),
    T(CR, "list-printed", LIST + "{{ ns.x }}", DEEP),
    T(CR, "list-pprint", LIST + "{{ ns.x|pprint }}", DEEP),
    T(CR, "list-in", LIST + "{{ [] in [ns.x] }}", DEEP),
    T(CR, "list-sort", LIST + "{{ [ns.x, ns.x]|sort|length }}", DEEP),
    T(CR, "dict-printed", DICT + "{{ ns.x }}", DEEP),
    T(CR, "dict-compare", DICT + "{{ ns.x == ns.x }}", DEEP),
    T(CR, "dict-tojson", DICT + "{{ ns.x|tojson }}", DEEP),
    T(CR, "dict-items-list", DICT + "{{ ns.x.items()|list|length }}", (Ok("1"), DEEP)),
    T(
        CR,
        "namespace-chain-printed",
        chain("namespace(a=", ")", 150_000, "0", per_set=20) + "{{ ns.x }}",
        DEEP,
    ),
    T(
        CR,
        "macro-default-recursion",
        "{% macro m(a=m()) %}{% endmacro %}{{ m() }}",
        Limit("max_recursion"),
    ),
    T(
        CR,
        "macro-default-mutual",
        "{% macro a(x=b()) %}{% endmacro %}{% macro b(y=a()) %}{% endmacro %}{{ a() }}",
        Limit("max_recursion"),
    ),
    T(
        CR,
        "macro-caller-default",
        "{% macro m(c=caller()) %}{{ caller() }}{% endmacro %}{% call m() %}{{ m() }}{% endcall %}",
        (Limit("max_recursion"), Err("UndefinedError", "'caller' is undefined")),
    ),
    T(
        CR,
        "filter-block-recursion",
        "{% macro m() %}{% filter upper %}{{ m() }}{% endfilter %}{% endmacro %}{{ m() }}",
        Limit("max_recursion"),
    ),
    T(
        CR,
        "recursive-loop-in-macro",
        "{% macro m() %}{% for x in [[1]] recursive %}{{ m() }}{{ loop(x) }}{% endfor %}{% endmacro %}{{ m() }}",
        Limit("max_recursion"),
    ),
    T(
        CR,
        "macro-via-map",
        "{% macro m(x) %}{{ [x]|map(m)|list }}{% endmacro %}{{ m(1) }}",
        Err("TemplateRuntimeError", "No filter named <Macro 'm'>."),
    ),
]
