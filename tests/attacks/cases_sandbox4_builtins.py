"""Builtins whose real work escaped their declared cost (issue 38): urlize on words built to
make its patterns backtrack, and on text that escaping makes four or five times longer; sorting,
deduplicating and grouping long strings that share a prefix (each comparison reads the prefix)."""

from __future__ import annotations

from .model import Attack, Limit, Ok, T

B4 = "sandbox4-builtins"
STOP = Limit("max_steps", "max_string", "max_memory")
LONG = "{% set s = 'a' * 100000 %}{% set l = [s ~ 1, s ~ 2, s ~ 3] * 700 %}"
ROWS = "{% set s = 'a' * 100000 %}{% set l = [{'k': s ~ 1}, {'k': s ~ 2}] * 1000 %}"


def _fn(name: str) -> str:
    return f"{__name__}:{name}"


ENDLESS_SOURCES = [
    ("list", "{{ it|list|length }}"),
    ("sum", "{{ it|sum }}"),
    ("max", "{{ it|max }}"),
    ("sort", "{{ it|sort }}"),
    ("unique", "{{ it|unique|list }}"),
    ("join", "{{ it|join }}"),
    ("select", "{{ it|select|list }}"),
    ("reverse", "{{ it|reverse|first }}"),
    ("in", "{{ -1 in it }}"),
    ("slice", "{{ it|slice(3)|list }}"),
    ("returned", "{{ f()|list }}"),
    ("first", "{{ it|first }} {{ it|batch(2)|first }}"),
]


def endless_iterators() -> str:
    import itertools

    import minijinja_py as mj

    env = mj.Environment(limits=mj.Limits(max_items=100_000))
    outcomes = []
    for name, source in ENDLESS_SOURCES:
        try:
            text = env.from_string(source).render(it=itertools.count(), f=itertools.count)
        except mj.LimitError as error:
            expected = "an iterator of more than 100000 items exceeds max_items (100000)"
            text = "LimitError" if error.message == expected else repr(error.message)
        outcomes.append(f"{name}: {text}")
    return "; ".join(outcomes)


def _twenty(expression: str) -> str:
    return f"{{% for i in range(20) %}}{{{{ {expression} }}}}{{% endfor %}}"


def _words(word: str, times: int) -> str:
    return f"{{% set w = {word} %}}{{{{ ((w ~ ' ') * {times})|urlize|length }}}}"


SANDBOX4_BUILTINS = [
    # a word of dots that ends otherwise: the trailing-punctuation search was tried from each dot
    T(B4, "urlize-dots-then-letter", _words("'.' * 4093 ~ 'a.'", 97), Ok("397312")),
    T(B4, "urlize-dots-long-word", _words("'.' * 200000 ~ 'a.'", 2), STOP),
    # escaping makes each '>' the four characters '&gt;': charged as escaped
    T(B4, "urlize-escaped-closers", _words("'>' * 4093 ~ 'a.'", 97), STOP),
    T(B4, "urlize-escaped-openers", _words("'<' * 50000 ~ 'a'", 4), STOP),
    T(B4, "urlize-entity-runs", _words("'&lt;' * 20000 ~ 'x' ~ '&gt;' * 20000", 5), STOP),
    # the address patterns on long words with many candidate split points
    T(B4, "urlize-many-ats", _words("'a@' * 20000 ~ '!'", 5), Ok("200010")),
    T(B4, "urlize-dotted-domain", _words("'a@a' ~ '.a' * 20000 ~ '.!'", 5), Ok("200030")),
    T(B4, "urlize-www-hyphens", _words("'www.' ~ 'a-' * 20000 ~ '.!'", 5), Ok("200035")),
    T(B4, "urlize-brackets", _words("'http://' ~ '(' * 20000 ~ ')' * 20000", 5), Ok("200040")),
    T(B4, "urlize-ipv6-colons", _words("'http://[' ~ ':' * 20000 ~ '!'", 5), Ok("100050")),
    # 6 s of CPU within the step budget before: the comparisons read the shared prefix
    T(B4, "sort-shared-prefix", LONG + _twenty("l|sort|length"), STOP),
    T(B4, "sort-folded-shared-prefix", LONG + _twenty("l|sort(case_sensitive=false)|length"), STOP),
    T(B4, "unique-shared-prefix", LONG + _twenty("l|unique|list|length"), STOP),
    T(B4, "max-shared-prefix", LONG + _twenty("l|max|length"), STOP),
    T(B4, "groupby-shared-prefix", ROWS + _twenty("l|groupby('k')|length"), STOP),
    T(B4, "sort-short-strings", "{{ (['b', 'a', 'c'] * 1000)|sort|join|length }}", Ok("3000")),
    # a caller's iterator without end, walked by filters and operators in C (rendered by a
    # function: walking a caller's iterator consumes it, which the data check would flag)
    Attack(
        B4,
        "endless-iterators",
        call=_fn("endless_iterators"),
        expect=Ok(
            "; ".join(
                [f"{name}: LimitError" for name, _ in ENDLESS_SOURCES[:-1]] + ["first: 0 [1, 2]"]
            )
        ),
    ),
]
