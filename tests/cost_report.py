"""Checks every builtin's declared cost against what it really spends.

For each entry of the registry (filters, tests, allow-listed methods, operators, globals; see
minijinja_py/costs.py) and each of its call shapes below, the builtin is called through the
path a template calls it by (the compiler's charge before a filter or test, the method lookup
that charges the receiver, the call that charges the arguments, the operator's own checks), on
inputs whose size grows by powers of ten, in every subclass of str the engine makes (Markup,
the traced string of provenance mode, the Markup that |escape makes: its size is the escaped
size), texts of the characters builtins treat specially (TEXT_FLAVOURS), shared and deep
structures, strings that share a long prefix, and in place of every int argument the floats,
bools, huge and negative numbers a template may pass instead (INT_VARIANTS).  What it was charged (steps, bytes) is read off the budget; what it
spent is the CPU time of the process and tracemalloc's peak.  A call charged more than a
render's default step budget is one the budget refuses: counted as refused, not run.

``python -m tests.cost_report`` prints the worst measured/charged ratio per builtin (the
table in SECURITY.md); tests/test_cost_declarations.py holds every ratio under a bound.
"""

from __future__ import annotations

import gc
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, NamedTuple

from minijinja_py import chat_environment
from minijinja_py.builtins.costs import charge_for, declared
from minijinja_py.builtins.methods import (
    DICT_METHODS,
    LIST_METHODS,
    MARKUP_METHODS,
    NUMBER_ATTRIBUTES,
    SET_METHODS,
    STR_METHODS,
    TUPLE_METHODS,
)
from minijinja_py.builtins.ops import COMPARISONS, make_binops, to_string
from minijinja_py.errors import LimitError
from minijinja_py.provenance import _source
from minijinja_py.sandbox.budget import _CURRENT, Budget, Limits, charge_arguments, costly
from minijinja_py.sandbox.measure import charge_compared_arguments
from minijinja_py.values.runtime import Markup, escape, wants_environment

# What one step may cost: CPU seconds and bytes (a step is a few microseconds of template
# code, or a kilobyte scanned in C), and the constant every call may spend beyond its charge.
STEP_SECONDS = 2e-6
BASE_SECONDS = 2e-4
STEP_BYTES = 4096  # (a kilobyte of characters, of up to four bytes each)
BASE_BYTES = 256 * 1024
# A call charged more than this is refused by a render with the default limits.
ADMITTED_STEPS = Limits().max_steps
# The sizes tried: powers of ten, and 300,000, just within what a render's step budget admits
# of a text walked at a step per two characters (a million is refused before it runs: a walk
# quadratic in a long word is seen at its worst only below the refusal).
SIZES = (10, 1000, 100_000, 300_000, 1_000_000)

TEXT_UNIT = "ab c<b>&#1;&a \n\t😀x"


def _tiled(unit: str) -> Callable[[int], str]:
    return lambda n: (unit * (n // len(unit) + 1))[:n]


# The texts tried, by flavour: each made of the characters some builtin treats specially, where
# a pattern may backtrack, a split may make many parts, or the output may outgrow the input.
TEXT_FLAVOURS: dict[str, Callable[[int], str]] = {
    "mixed": _tiled(TEXT_UNIT),
    # urlize's punctuation, schemes, addresses and brackets
    "url": _tiled("http://a.b/c?d=1, www.x.org; a@b.io! (x) [y] <z> 'q' \"r\" .:;?"),
    # HTML escaping makes each of these four or five characters
    "escapes": _tiled("<>&'\""),
    # whitespace that str.split, wordwrap and wordcount split on, in runs
    "spaces": _tiled("w  \t\t\n\n\u3000\x0b\r\x0c   "),
    # lone surrogates: no UTF-8 encoding (urlencode, tojson)
    "surrogates": _tiled("a\ud800 \udfff"),
    # one long word: wordwrap and truncate cut it, replace and count find it everywhere
    "run": lambda n: "a" * n,
    # words of dots that end otherwise (urlize's trailing-punctuation search)
    "dots": _tiled("." * 4093 + "a. "),
}
_FLAVOUR: ContextVar[str] = ContextVar("flavour", default="mixed")


def text(n: int) -> str:
    """n characters of the flavour being measured (`measure` sets it)."""
    return TEXT_FLAVOURS[_FLAVOUR.get()](n)


def shared(n: int) -> list[Any]:
    """A list holding the same list twice per level: 2**depth leaves in depth+1 lists."""
    value: Any = ["ab"]
    for _ in range(n.bit_length() // 2 + 1):
        value = [value, value]
    return value


def prefixed(n: int) -> list[str]:
    """Sixteen strings of n characters that differ in their last: each comparison of two reads
    all of them, which the item count does not see."""
    prefix = text(n)
    return [prefix + chr(0x41 + (7 * i) % 16) for i in range(16)]


def deep(n: int) -> list[Any]:
    value: Any = []
    for _ in range(min(n, 95)):
        value = [value]
    return value


# The subclasses of str a template meets: plain, Markup (|safe), traced (provenance mode), and
# the Markup |escape makes of the text: up to five times its length, with entities in it.
STRING_KINDS: dict[str, Callable[[str], str]] = {
    "str": lambda s: s,
    "Markup": Markup,
    "traced": lambda s: _source(s, ("messages", 0, "content")),
    "escaped": escape,
}

# Inputs by kind: (name, size) -> value.  "text" is made in every string kind.
INPUTS: dict[str, Callable[[int], Any]] = {
    "text": text,
    "strings": lambda n: [text(3)] * n,
    "ints": lambda n: list(range(n)),
    "floats": lambda n: [i / 3 for i in range(n)],
    "dicts": lambda n: [{"a": i % 7, "b": text(3)} for i in range(n)],
    "dict": lambda n: {f"k{i}": text(3) for i in range(n)},
    "shared": shared,
    "deep": deep,
    "bigtext": lambda n: [text(n)] * 4,
    "int": lambda n: 1 << min(n, 60_000),
    "float": lambda n: n / 7,
    "prefixed": prefixed,
    # what a template may pass where an int is expected (see INT_VARIANTS)
    "negint": lambda n: -(1 << min(n, 60_000)),
    "halfint": lambda n: n + 0.5,
    "bool": lambda n: n % 2 == 0,
}
# The inputs that hold text: each is tried in every flavour.
TEXT_INPUTS = ("text", "strings", "dicts", "dict", "bigtext", "prefixed")
# The inputs tried at a million: a text, a number; containers stop at 100,000 items.
LARGEST = ("text", "bigtext", "int", "negint")

Args = Callable[[int], tuple[Any, ...]]


class Shape(NamedTuple):
    """How a builtin is called: its input kind, its arguments made from the size, and a label
    for a variant (what was put in place of an int)."""

    input: str
    args: Args
    label: str = ""

    @property
    def name(self) -> str:
        return f"{self.input} {self.label}" if self.label else self.input


NO: Args = lambda n: ()  # noqa: E731


def _fixed(*args: Any) -> Args:
    """The same arguments at every size."""
    return lambda n: args


def _shapes(*kinds: str, args: Args = NO) -> list[Shape]:
    return [Shape(kind, args) for kind in kinds]


ANY = ("text", "strings", "shared", "deep", "bigtext", "int")
SEQ = ("text", "strings", "ints", "dicts", "shared", "deep")
COMPARED = ("text", "ints", "strings", "shared", "prefixed")

FILTER_SHAPES: dict[str, list[Shape]] = {
    "abs": _shapes("int", "float"),
    "attr": _shapes("dict", args=lambda n: ("k1",)),
    "batch": _shapes(*SEQ, args=lambda n: (3, "x")) + _shapes("strings", args=lambda n: (2.5,)),
    "capitalize": _shapes(*ANY),
    "center": _shapes("text", args=lambda n: (n + 3,)) + _shapes("text", args=lambda n: (10**12,)),
    "count": _shapes(*ANY),
    "d": _shapes(*ANY),
    "default": _shapes(*ANY),
    "dictsort": _shapes("dict"),
    "e": _shapes(*ANY),
    "escape": _shapes(*ANY),
    "filesizeformat": _shapes("int", "float"),
    "first": _shapes(*SEQ),
    "float": _shapes("text", "int"),
    "forceescape": _shapes(*ANY),
    "format": _shapes("text", args=lambda n: ("x",)) + _shapes("text", args=lambda n: (text(n),)),
    "groupby": _shapes("dicts", args=lambda n: ("a",)),
    "indent": _shapes("text", "strings", args=lambda n: (8, True)),
    "int": _shapes("text", "float", "int") + _shapes("text", args=lambda n: (0, 16)),
    "items": _shapes("dict"),
    "join": _shapes("strings", "ints", "shared", "bigtext", "prefixed", args=lambda n: (", ",)),
    "last": _shapes(*SEQ),
    "length": _shapes(*SEQ),
    "list": _shapes(*SEQ),
    "lower": _shapes(*ANY),
    "map": _shapes("strings", args=lambda n: ("upper",)) + _shapes("dicts", args=lambda n: ()),
    "max": _shapes(*COMPARED),
    "min": _shapes(*COMPARED),
    "pprint": _shapes(*ANY),
    "random": _shapes(*SEQ),
    "reject": _shapes("ints", args=lambda n: ("odd",)),
    "rejectattr": _shapes("dicts", args=lambda n: ("a",)),
    "replace": _shapes("text", args=lambda n: ("a", "xyz"))
    + _shapes("text", args=lambda n: ("", "-")),
    "reverse": _shapes(*SEQ),
    "round": _shapes("float", "int") + _shapes("float", args=lambda n: (2,)),
    "safe": _shapes(*ANY),
    "select": _shapes("ints", args=lambda n: ("odd",)),
    "selectattr": _shapes("dicts", args=lambda n: ("a", "equalto", 3)),
    "slice": _shapes(*SEQ, args=lambda n: (3,)),
    "sort": _shapes(*COMPARED),
    "string": _shapes(*ANY),
    "striptags": _shapes(*ANY),
    "sum": _shapes("ints", "floats"),
    "title": _shapes(*ANY),
    "tojson": _shapes(*ANY) + _shapes("dicts", args=lambda n: (4,)),
    "trim": _shapes(*ANY),
    "truncate": _shapes("text", args=lambda n: (n // 2,))
    + _shapes("text", args=lambda n: (n // 2, True, "...", 5)),
    "unique": _shapes(*COMPARED),
    "upper": _shapes(*ANY),
    "urlencode": _shapes("text", "dict"),
    "urlize": _shapes("text", "strings") + _shapes("text", args=lambda n: (10,)),
    "wordcount": _shapes(*ANY),
    "wordwrap": _shapes("text", args=lambda n: (7,)) + _shapes("text", args=lambda n: (7.5,)),
    "xmlattr": _shapes("dict"),
}

TEST_SHAPES: dict[str, list[Shape]] = {
    **{
        name: _shapes(*ANY)
        for name in """defined undefined none boolean false true integer float number string
        mapping iterable sequence callable escaped lower upper filter test""".split()
    },
    "sameas": _shapes(*ANY, args=lambda n: (None,)),
    "odd": _shapes("int"),
    "even": _shapes("int"),
    "divisibleby": _shapes("int", args=lambda n: (3,)),
    "in": _shapes("text", args=lambda n: (text(n),)) + _shapes("shared", args=lambda n: ([1],)),
    **{
        name: _shapes("text", args=lambda n: (text(n),))
        + _shapes("shared", args=lambda n: (shared(n),))
        + _shapes("prefixed", args=lambda n: (prefixed(n)[::-1],))
        for name in "== eq equalto != ne > gt greaterthan >= ge < lt lessthan <= le".split()
    },
}

_ONE_ARG = {
    "count": ("c",), "endswith": ("x",), "find": ("&a",), "index": ("a",), "rfind": ("q",),
    "rindex": ("a",), "split": (), "rsplit": (), "startswith": ("a",), "strip": (" ab",),
    "lstrip": ("ab ",), "rstrip": ("x",), "partition": ("\t",), "rpartition": ("a",),
    "removeprefix": ("ab",), "removesuffix": ("x",), "splitlines": (True,),
    "format": (), "format_map": ({},), "expandtabs": (8,), "zfill": (20,),
}  # fmt: skip
STR_SHAPES: dict[str, list[Shape]] = {
    name: _shapes("text", args=_fixed(*_ONE_ARG.get(name, ()))) for name in STR_METHODS
}
STR_SHAPES["join"] = _shapes("text", args=lambda n: ([text(3)] * n,))
STR_SHAPES["replace"] = _shapes("text", args=lambda n: ("a", "xyz"))
for _name in ("center", "ljust", "rjust"):
    STR_SHAPES[_name] = _shapes("text", args=lambda n: (2 * n, "*")) + _shapes(
        "text", args=lambda n: (10**12,)
    )
STR_SHAPES["expandtabs"] += _shapes("text", args=lambda n: (10**9,))
for _name in ("split", "rsplit"):
    STR_SHAPES[_name] += _shapes("text", args=lambda n: (" ", n // 2))
for _name in ("find", "rfind", "count", "index", "rindex", "startswith", "endswith"):
    STR_SHAPES[_name] += _shapes("text", args=lambda n: ("a", 1, n))
STR_SHAPES["replace"] += _shapes("text", args=lambda n: ("a", "xyz", n // 2))
STR_SHAPES["format"] = _shapes("text", args=lambda n: ("x" * n,))

METHOD_SHAPES: dict[str, list[Shape]] = {
    **{f"str.{name}": shapes for name, shapes in STR_SHAPES.items()},
    **{f"Markup.{name}": STR_SHAPES.get(name, _shapes("text")) for name in MARKUP_METHODS},
    **{f"Markup.{name}": STR_SHAPES[name] for name in ("split", "rsplit", "splitlines")},
    "Markup.join": _shapes("text", args=lambda n: ([text(3)] * n,)),
    "Markup.escape": _shapes("text", args=lambda n: (text(n),))
    + _shapes("text", args=lambda n: (["<" * 1000] * n,)),
    **{
        f"dict.{name}": _shapes("dict", args=_fixed("k1") if name == "get" else NO)
        for name in DICT_METHODS
    },  # fmt: skip
    "list.index": _shapes("ints", args=lambda n: (n - 1,)),
    "list.count": _shapes("ints", args=lambda n: (1,))
    + _shapes("shared", args=lambda n: (shared(n),)),
    "list.copy": _shapes("ints"),
    "tuple.index": _shapes("ints", args=lambda n: (n - 1,)),
    "tuple.count": _shapes("ints", args=lambda n: (1,)),
    **{
        f"set.{name}": _shapes("ints", args=NO if name == "copy" else _fixed([1, 2]))
        for name in SET_METHODS
    },  # fmt: skip
    **{f"number.{name}": _shapes("int", "float") for name in NUMBER_ATTRIBUTES},
}

OPERATOR_SHAPES: dict[str, list[Shape]] = {
    "+": _shapes("text", args=lambda n: (text(n),))
    + _shapes("ints", args=lambda n: (list(range(n)),)),
    "-": _shapes("int", args=lambda n: (1,)),
    "*": _shapes("text", args=lambda n: (3,))
    + _shapes("text", args=lambda n: (10**9,))
    + _shapes("int", args=lambda n: (1 << 30000,)),
    "/": _shapes("int", args=lambda n: (7,)),
    "//": _shapes("int", args=lambda n: (7,)),
    "%": _shapes("text", args=lambda n: (("x",) * 0,)) + _shapes("int", args=lambda n: (7,)),
    "**": _shapes("int", args=lambda n: (3,)),
    **{
        name: _shapes("text", args=lambda n: (text(n),))
        + _shapes("shared", args=lambda n: (shared(n),))
        + _shapes("prefixed", args=lambda n: (prefixed(n)[::-1],))
        for name in ("==", "!=", "<", "<=", ">", ">=")
    },
    "in": _shapes("text", args=lambda n: (text(n),))
    + _shapes("shared", args=lambda n: ([shared(n)] * 8,)),
    "notin": _shapes("text", args=lambda n: (text(n),)),
    "~": _shapes(*ANY, args=lambda n: (text(n),)),
}

GLOBAL_SHAPES: dict[str, list[Shape]] = {
    "range": _shapes("int", args=lambda n: (min(n, 10**9),))
    + _shapes("int", args=lambda n: (0, min(n, 10**9), 3)),
    "dict": _shapes("dict", args=lambda n: ()),
    "lipsum": _shapes("int", args=lambda n: (min(n, 10**6), False))
    + _shapes("int", args=lambda n: (10, False, min(n, 10**6), min(n, 10**6))),
    "cycler": _shapes("text", args=lambda n: tuple([text(3)] * min(n, 1000))),
    "joiner": _shapes("text", args=lambda n: (text(n),)),
    "namespace": _shapes("dict", args=lambda n: ()),
    "raise_exception": _shapes(*ANY, args=lambda n: ()),
    "strftime_now": _shapes("text", args=lambda n: ()),
}

# What a template may pass where a builtin takes an int: a float (a width of 0.5 wraps at 1,
# where an int's check may not look), a bool (an int to Python), a number beyond any size and a
# negative one.
INT_VARIANTS: dict[str, Callable[[int], Any]] = {
    "float": float,
    "+0.5": lambda x: x + 0.5,
    "0.5": lambda x: 0.5,
    "inf": lambda x: float("inf"),
    "True": lambda x: True,
    "False": lambda x: False,
    "10**30": lambda x: 10**30,
    "-10**30": lambda x: -(10**30),
    "negative": lambda x: -x,
}
# ... and where its input is an int (INPUTS "int"): these inputs instead.
INT_INPUTS = ("negint", "halfint", "bool")


def _replaced(make: Args, index: int, variant: Callable[[int], Any]) -> Args:
    def args(n: int) -> tuple[Any, ...]:
        made = make(n)
        return (*made[:index], variant(made[index]), *made[index + 1 :])

    return args


def with_int_variants(shapes: list[Shape]) -> list[Shape]:
    """`shapes`, and for each int among a shape's arguments (a bool is not one) the shape with
    each of INT_VARIANTS in its place; for an int input, the shape on each of INT_INPUTS."""
    variants = list(shapes)
    for shape in shapes:
        for index, arg in enumerate(shape.args(10)):
            if type(arg) is int and arg.bit_length() < 64:  # (a huge one is its own variant)
                variants += [
                    Shape(shape.input, _replaced(shape.args, index, variant), f"#{index}={label}")
                    for label, variant in INT_VARIANTS.items()
                ]
        if shape.input == "int":
            variants += [shape._replace(input=kind) for kind in INT_INPUTS]
    return variants


SHAPES: dict[str, dict[str, list[Shape]]] = {
    kind: {name: with_int_variants(shapes) for name, shapes in table.items()}
    for kind, table in {
        "filter": FILTER_SHAPES,
        "test": TEST_SHAPES,
        "method": METHOD_SHAPES,
        "operator": OPERATOR_SHAPES,
        "global": GLOBAL_SHAPES,
    }.items()
}


def reachable() -> dict[str, set[str]]:
    """Every builtin a template can reach, by kind (what the registry must declare)."""
    env = chat_environment()
    methods = {f"str.{n}" for n in STR_METHODS} | {f"Markup.{n}" for n in MARKUP_METHODS}
    methods |= {f"dict.{n}" for n in DICT_METHODS} | {f"list.{n}" for n in LIST_METHODS}
    methods |= {f"tuple.{n}" for n in TUPLE_METHODS} | {f"set.{n}" for n in SET_METHODS}
    methods |= {f"number.{n}" for n in NUMBER_ATTRIBUTES}
    return {
        "filter": set(env.filters),
        "test": set(env.tests),
        "method": methods,
        "operator": set(make_binops(Limits())) | set(COMPARISONS) | {"~"},
        "global": set(env.globals),
    }


@dataclass
class Measure:
    kind: str
    name: str
    shape: str
    size: int
    string: str
    steps: int
    charged_bytes: int
    seconds: float
    peak: int
    outcome: str
    flavour: str = "mixed"

    @property
    def case(self) -> str:
        flavour = "" if self.flavour == "mixed" else f" {self.flavour}"
        return f"{self.shape} {self.string}{flavour} {self.size:,}"

    @property
    def time_ratio(self) -> float:
        return self.seconds / (self.steps * STEP_SECONDS + BASE_SECONDS)

    @property
    def memory_ratio(self) -> float:
        return self.peak / (self.charged_bytes + self.steps * STEP_BYTES + BASE_BYTES)


_ENV = None


def environment() -> Any:
    global _ENV
    if _ENV is None:
        _ENV = chat_environment()
    return _ENV


def _caller(kind: str, name: str, value: Any, args: tuple[Any, ...]) -> Callable[[], Any]:
    """The call as a template makes it: charges before, then the builtin."""
    env = environment()
    arguments = list(args)
    if kind in ("filter", "test"):
        func = (env.filters if kind == "filter" else env.tests)[name]
        charge = charge_for(kind, name)
        first = (env,) if wants_environment(func) else ()

        def call() -> Any:
            if arguments:
                charge_arguments(arguments, {})
            if costly(value):
                charge(value, None)
            return func(*first, value, *arguments)

        return call
    if kind == "method":
        method = name.partition(".")[2]
        receiver = _receiver(name, value)

        def call() -> Any:
            bound = env.policy.getattr(receiver, method)
            if arguments:
                charge_arguments(arguments, {})
                charge_compared_arguments(arguments, {}, receiver)
            return bound(*arguments) if callable(bound) else bound

        return call
    if kind == "operator":
        binops = {**make_binops(env.limits), **COMPARISONS}
        if name == "~":

            def call() -> Any:
                return binops["+"](to_string(value), to_string(arguments[0]))

            return call
        op = binops[name]
        return lambda: op(value, *arguments)
    func = env.globals[name]
    if name in ("dict", "namespace"):
        arguments = [value]

    def call() -> Any:
        if arguments:
            charge_arguments(arguments, {})
        return func(*arguments)

    return call


def uses_text(shape: Shape) -> bool:
    """Whether the shape's input or arguments hold text (tried in every flavour)."""
    args = shape.args(10)
    return shape.input in TEXT_INPUTS or any(
        type(a) is str or (type(a) is list and a and type(a[0]) is str) for a in args
    )


def sizes_for(shape: Shape) -> tuple[int, ...]:
    return SIZES if shape.input in LARGEST else tuple(n for n in SIZES if n <= 100_000)


def made(shape: Shape, size: int, string: str, flavour: str = "mixed") -> tuple[Any, tuple]:
    """The input and the arguments of one call: text of the flavour, in the string kind."""
    token = _FLAVOUR.set(flavour)
    try:
        value = INPUTS[shape.input](size)
        args = shape.args(size)
    finally:
        _FLAVOUR.reset(token)
    if shape.input == "text":
        value = STRING_KINDS[string](value)
    if string != "str":
        args = tuple(STRING_KINDS[string](a) if type(a) is str else a for a in args)
    return value, args


def measure(
    kind: str, name: str, shape: Shape, size: int, string: str, flavour: str = "mixed"
) -> Measure:
    """One call of builtin ``name`` on an input of ``size`` made as ``shape`` says."""
    input_kind = shape.name
    value, args = made(shape, size, string, flavour)
    call = _caller(kind, name, value, args)
    limits = Limits(max_steps=10**15, max_memory=10**15, max_steps_growth=0)
    # The charge alone first: a call charged beyond a render's budget is refused, not run.
    budget = Budget(limits)
    token = _CURRENT.set(budget)
    outcome = "ok"
    try:
        try:
            call_charge_only = _charge_only(kind, name, value, args)
            call_charge_only()
        except LimitError:
            return Measure(kind, name, input_kind, size, string, 0, 0, 0.0, 0, "refused", flavour)
        except Exception:
            pass
        if budget.steps > ADMITTED_STEPS:
            steps = budget.steps
            return Measure(
                kind, name, input_kind, size, string, steps, 0, 0.0, 0, "refused", flavour
            )
        # (run under a render's own budget: what the builtin charges as it goes stops it there)
        limits = Limits()
        budget = Budget(limits)
        _CURRENT.set(budget)
        # (the collector's passes cost what the whole process holds, not what the call does:
        # inside a test suite's process they would dwarf a small call; so would a full
        # collection before each call, so only the youngest generation is collected first)
        gc.collect(0)
        gc.disable()
        start = time.process_time()
        try:
            call()
        except LimitError:
            outcome = "refused"
        except Exception as error:  # the builtin's own argument errors: fine
            outcome = type(error).__name__
        finally:
            best = time.process_time() - start
            gc.enable()
        steps, charged = budget.steps, budget.memory
        budget = Budget(limits)
        _CURRENT.set(budget)
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            try:
                call()
            except Exception:
                pass
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
    finally:
        _CURRENT.reset(token)
    return Measure(
        kind, name, input_kind, size, string, steps, charged, best or 0.0, peak, outcome, flavour
    )


def _reference_work() -> None:
    # A fixed piece of interpreter work of the kind builtins do (calls, dict and string
    # operations), about a millisecond on a quiet machine.
    table: dict[str, int] = {}
    for index in range(1500):
        key = f"k{index}"
        table[key] = len(key.upper()) + table.get(key[:-1], 0)
    ",".join(sorted(table))


_FASTEST_REFERENCE: list[float] = []


def host_slowdown() -> float:
    """How many times slower than its fastest moment this process runs right now: the CPU time
    of a fixed piece of work against the least it has taken here.  A busy or oversubscribed
    machine (a virtual one whose CPU is taken away mid-call, page faults of other processes'
    memory) inflates CPU time for everything alike for a while; a builtin that walks more than
    it was charged is slow against this reference too."""
    if not _FASTEST_REFERENCE:
        _FASTEST_REFERENCE.append(min(_timed(_reference_work) for _ in range(5)))
    now = min(_timed(_reference_work) for _ in range(2))
    _FASTEST_REFERENCE[0] = min(_FASTEST_REFERENCE[0], now)
    return max(1.0, now / _FASTEST_REFERENCE[0])


def _timed(work: Callable[[], Any]) -> float:
    gc.disable()
    start = time.process_time()
    try:
        work()
    finally:
        spent = time.process_time() - start
        gc.enable()
    return max(spent, 1e-9)


def _charge_only(kind: str, name: str, value: Any, args: tuple[Any, ...]) -> Callable[[], Any]:
    env = environment()
    arguments = list(args)
    if kind in ("filter", "test"):
        charge = charge_for(kind, name)

        def charge_call() -> None:
            if arguments:
                charge_arguments(arguments, {})
            if costly(value):
                charge(value, None)

        return charge_call
    if kind == "method":
        receiver = _receiver(name, value)
        return lambda: env.policy.getattr(receiver, name.partition(".")[2])
    if kind == "global" and name in ("dict", "namespace"):
        return lambda: charge_arguments([value], {})
    return lambda: charge_arguments(arguments, {}) if kind == "global" and arguments else None


def _receiver(name: str, value: Any) -> Any:
    owner = name.partition(".")[0]
    if owner == "tuple":
        return tuple(value)
    if owner == "set":
        return frozenset(value)
    return value


def cases(kind: str, name: str) -> Iterator[tuple[Shape, int, str, str]]:
    """The report's cases: every shape, size and flavour, each string kind other than str in
    the mixed flavour only (the property test draws from all of it)."""
    for shape in SHAPES[kind][name]:
        strings = list(STRING_KINDS) if shape.input == "text" else ["str"]
        flavours = list(TEXT_FLAVOURS) if uses_text(shape) else ["mixed"]
        for size in sizes_for(shape):
            for string in strings:
                for flavour in flavours if string == "str" else ["mixed"]:
                    yield shape, size, string, flavour


def warm(kind: str, name: str) -> None:
    """One small call of each shape first: a builtin's first call imports what it needs
    (urllib, textwrap, html), once per process."""
    for shape in SHAPES[kind][name]:
        measure(kind, name, shape, 10, "str")


def worst(kind: str, name: str) -> tuple[Measure, Measure]:
    """The worst time and memory measures of one builtin over all its cases."""
    warm(kind, name)
    measures = [measure(kind, name, *case) for case in cases(kind, name)]
    return (
        max(measures, key=lambda m: m.time_ratio),
        max(measures, key=lambda m: m.memory_ratio),
    )


def main() -> None:
    names = sys.argv[1:]
    print("| builtin | shape | worst time ratio (case) | worst memory ratio (case) |")
    print("|---|---|---:|---:|")
    for kind in SHAPES:
        costs = declared(kind)
        for name in sorted(SHAPES[kind]):
            if names and name not in names:
                continue
            t, m = worst(kind, name)
            shape = costs[name].shape if name in costs else "UNDECLARED"
            print(
                f"| {kind} `{name}` | {shape} | {t.time_ratio:.2f} ({t.case})"
                f" | {m.memory_ratio:.2f} ({m.case}) |",
                flush=True,
            )


if __name__ == "__main__":
    main()
