"""Shared structure: a value that holds the same container twice on each of forty levels is 80
containers big and built in 80 steps, but Python compares, hashes and sorts it as the tree it
stands for, a trillion items.  Measuring its depth is not enough; every operation that walks it
recursively pays for that walk."""

from __future__ import annotations

from .model import Limit, Make, Ok, T

SH = "shared-structure"
STOP = Limit("max_steps")

# Two equal but distinct values (equal values compare item by item: no identity shortcut).
LISTS = (
    "{% set ns = namespace(a=[], b=[]) %}{% for i in range(40) %}"
    "{% set ns.a = [ns.a, ns.a] %}{% set ns.b = [ns.b, ns.b] %}{% endfor %}"
)
TUPLES = (
    "{% set ns = namespace(a=(), b=()) %}{% for i in range(40) %}"
    "{% set ns.a = (ns.a, ns.a) %}{% set ns.b = (ns.b, ns.b) %}{% endfor %}"
)

# The same, built by the caller (each Make is built on its own: two distinct values).
DOUBLED = "(lambda f: f(f, 40))(lambda f, n: [] if n == 0 else (lambda x: [x, x])(f(f, n - 1)))"

COMPARED = {
    "eq": "{{ ns.a == ns.b }}",
    "ne": "{{ ns.a != ns.b }}",
    "lt": "{{ ns.a < ns.b }}",
    "if-eq": "{% if ns.a == ns.b %}same{% endif %}",
    "in-list": "{{ ns.a in [ns.b] }}",
    "test-eq": "{{ ns.a is eq ns.b }}",
    "test-in": "{{ ns.a is in [ns.b] }}",
    "select-equalto": "{{ [ns.a]|select('equalto', ns.b)|list|length }}",
    "selectattr-eq": "{{ [ns.a]|selectattr('0', 'eq', ns.b)|list|length }}",
    "rejectattr-in": "{{ [ns.a]|rejectattr('0', 'in', [ns.b])|list|length }}",
    "sort": "{{ [ns.a, ns.b]|sort|length }}",
    "sort-attribute": "{{ [[ns.a], [ns.b]]|sort(attribute='0')|length }}",
    "max": "{{ [ns.a, ns.b]|max|length }}",
    "min-attribute": "{{ [ns.a, ns.b]|min(attribute='0')|length }}",
    "groupby": "{{ [{'k': ns.a}, {'k': ns.b}]|groupby('k')|list|length }}",
    "list-index": "{{ [ns.a, ns.b].index(ns.b) }}",
    "list-count": "{{ [ns.a, ns.b].count(ns.b) }}",
    "loop-changed": "{% for x in [ns.a, ns.b] %}{{ loop.changed(x) }}{% endfor %}",
    "dict-eq": "{{ {'k': ns.a} == {'k': ns.b} }}",
    "join": "{{ [ns.a, ns.b]|join(',')|length }}",
}
HASHED = {
    "dict-key": "{{ {ns.a: 1}|length }}",
    "dict-keys": "{{ {ns.a: 1, ns.b: 2}|length }}",
    "unique": "{{ (ns.a, ns.b)|unique|list|length }}",
    "in-dict": "{{ ns.a in {} }}",
    "test-in-dict": "{{ ns.a is in {} }}",
    "dict-get": "{{ {}.get(ns.a) }}",
    "dict-fromkeys": "{{ dict.fromkeys([ns.a])|length }}",
    "dict-pairs": "{{ dict([(ns.a, 1)])|length }}",
    "namespace-pairs": "{{ namespace([(ns.a, 1)]) is defined }}",
    "groupby-key": "{{ [(ns.a, 1)]|groupby(0)|list|length }}",
    "tuple-count": "{{ (ns.a, ns.b).count(ns.b) }}",
}

SHARED = (
    [T(SH, f"lists-{name}", LISTS + source, STOP) for name, source in COMPARED.items()]
    + [T(SH, f"tuples-{name}", TUPLES + source, STOP) for name, source in HASHED.items()]
    + [
        # The same value against itself: Python's identity shortcut walks nothing.
        T(
            SH,
            "identical-is-free",
            LISTS + "{{ ns.a == ns.a }} {{ ns.a is sameas ns.a }}",
            Ok("True True"),
        ),  # fmt: skip
        # The caller's data is measured the same way.
        T(SH, "caller-data-eq", "{{ a == b }}", STOP, {"a": Make(DOUBLED), "b": Make(DOUBLED)}),
    ]
)
