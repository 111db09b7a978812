"""The cost model of the builtins: one size measure, the shapes a builtin's cost can take, and
the table of declarations that the builtins' modules fill in.

Every filter, test, method, operator and global is declared once, beside its code, as a
`Cost` (the model is cel-go's: a cost per overload, charged from the sizes of the
arguments before the overload runs, then tracked on what it returns).  A declaration names its
shape (for the report and the property test, tests/test_cost_declarations.py) and carries the
function that charges it.  The sizes come from `size_of` alone, which measures every
subclass of `str`, `list`, `tuple`, `dict` and `int` as its base type: a `|safe`
string or a traced string of provenance mode pays exactly what a plain string pays.

Charging protocol (the evaluators' and the method path's): `cost.charge(value, None)` before
the builtin runs, with its input (the filtered or tested value, the method's receiver);
`charge_arguments` for its other arguments; `charge(None, result)` after it ran, for what it
returned (the runtime tracking: its bytes count to the memory budget).  What depends on an
argument's value rather than its size (a padding width, a repeat count, a format's widths) is
checked by the builtin before it builds anything, and refused above `max_string`; such a
declaration says so in its `guard`.

This module is the bottom layer's: it imports the budget only.  The modules of the builtins
register their tables with `declare`; the compiler reads them with `charge_for`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..sandbox.budget import (
    CHARS_PER_STEP,
    FILTER_ITEMS_PER_STEP,
    ITEMS_PER_STEP,
    bytes_of,
    current_budget,
    no_charge,
    walked_int_bytes,
)
from ..sandbox.measure import (
    NESTED_TYPES,
    check_compared,
    check_printable,
    hand_over,
    nesting_depth,
)
from ..sandbox.printing import escaped_size
from ..values.runtime import Markup

Charge = Callable[[Any, Any], None]

# The types whose size is their length: every subclass of them too.
SIZED = (str, list, tuple, dict, set, frozenset, range)


def size_of(value: Any) -> int:
    """The engine's one size measure: characters of a string, items of a list, tuple, dict, set
    or range, 64-bit words of an int (any subclass of each: Markup and traced strings are
    strings); 0 for anything else (a scalar, an object of the caller's)."""
    if isinstance(value, SIZED):
        try:
            return len(value)
        except OverflowError:  # (a range longer than sys.maxsize)
            return 1 << 62
    if isinstance(value, int):
        return value.bit_length() >> 6
    return 0


def units_of(value: Any, chars: int, items: int) -> int:
    """Steps to charge for reading `value` at `chars` characters or `items` items per
    step (by `size_of`, so for every subclass alike)."""
    kind = type(value)
    if kind is str:
        return len(value) // chars
    if kind is list or kind is dict or kind is tuple:
        return len(value) // items
    if isinstance(value, str):  # (a subclass pays as its base type)
        return len(value) // chars
    if isinstance(value, SIZED):
        return size_of(value) // items
    return 0


class Cost:
    """One builtin's declared cost.  (A slotted class, not a NamedTuple: a NamedTuple class
    is built by `exec` when its module is imported, a sixth of a millisecond of every start.)"""

    __slots__ = ("shape", "charge", "guard")
    #: the cost's shape, as the report prints it: free, scan, walk, compare, sort, print,
    #: entities, inline
    shape: str
    #: charges it: ``charge(value, None)`` before the call, ``charge(None, result)`` after
    charge: Charge
    #: what the builtin checks itself before it builds, from its arguments' values (a width,
    #: a count, a format's widths), refusing above a limit; empty when nothing
    guard: str

    def __init__(self, shape: str, charge: Charge, guard: str = "") -> None:
        self.shape = shape
        self.charge = charge
        self.guard = guard

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Cost) and (self.shape, self.charge, self.guard) == (
            other.shape,
            other.charge,
            other.guard,
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.charge, self.guard))

    def __repr__(self) -> str:
        return f"Cost({self.shape!r}, {self.charge.__name__}, {self.guard!r})"


def _charge(units: int, size: int = 0) -> None:
    if units or size:
        budget = current_budget()
        if budget is not None:
            budget.charge(units)
            if size:
                budget.allocate(size)


def charge_scan(value: Any, result: Any) -> None:
    """Work at C speed: a step per kilobyte of text, per two items of a container (a filter's
    code handles each item), for the input before and the output after; the output's bytes
    count to the memory budget."""
    units = units_of(value, CHARS_PER_STEP, FILTER_ITEMS_PER_STEP) if value is not None else 0
    size = 0
    if value.__class__ is range:  # (its integers are made as it is walked: big ones count)
        size = walked_int_bytes(value)
        units += size // CHARS_PER_STEP
    if result is not None:
        units += units_of(result, CHARS_PER_STEP, FILTER_ITEMS_PER_STEP)
        size += bytes_of(result)
    _charge(units, size)


def charge_walk(value: Any, result: Any) -> None:
    """Python code per character or item (a string is walked as the list of its characters:
    sort, map, batch, title, urlize, wordcount, ...)."""
    if value is not None and isinstance(value, str):
        _charge(len(value) // FILTER_ITEMS_PER_STEP)
        return
    charge_scan(value, result)


def compared_text(value: Any) -> int:
    """The characters of the strings that comparing `value`'s items reads: its strings, and
    those of its lists, tuples and dicts one level down (sort and groupby by an attribute, a
    dict's items).  Two strings that share a long prefix cost that prefix to compare, a
    string is hashed whole, and a case-insensitive sort copies each one folded: the item count
    alone does not see any of it."""
    total = 0
    items = value.values() if isinstance(value, dict) else value
    for item in items:
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, (list, tuple)):
            total += sum(len(x) for x in item if isinstance(x, str))
        elif isinstance(item, dict):
            total += sum(len(x) for x in item.values() if isinstance(x, str))
            total += sum(len(x) for x in item if isinstance(x, str))
    if isinstance(value, dict):
        total += sum(len(x) for x in value if isinstance(x, str))
    return total


def charge_compare(value: Any, result: Any) -> None:
    """A walk that also compares, hashes or prints the items, recursively in C: their nesting
    is measured and the recursive walk charged (`[x, x]` forty levels deep is a trillion
    items to compare, not eighty), and the text the comparisons read, a kilobyte a step."""
    if value is not None and not isinstance(value, str) and isinstance(value, NESTED_TYPES):
        check_compared(value)
        _charge(compared_text(value) // CHARS_PER_STEP)
    charge_walk(value, result)


def charge_sort(value: Any, result: Any) -> None:
    """Sorting: each item compared with about log2(n) others, reading their text each time."""
    if value is not None and not isinstance(value, str) and isinstance(value, NESTED_TYPES):
        times = len(value).bit_length()
        check_compared(value, times)
        _charge(compared_text(value) * times // CHARS_PER_STEP)
    charge_walk(value, result)


def charge_print(value: Any, result: Any) -> None:
    """Text made from a whole structure (tojson, string): the structure is measured first
    (printed size within max_string, nesting within max_recursion) and its text counted."""
    if value is not None:
        # (the text is made in C from the printed size: a kilobyte a step, a string too)
        _charge(check_printable(value) // CHARS_PER_STEP)
        hand_over(value)
    if result is not None:
        charge_scan(None, result)


def charge_pprint(value: Any, result: Any) -> None:
    """pprint: the structure measured as for `charge_print`, and Python work wrapping
    its long strings into lines (a step per 64 characters of the printed text)."""
    if value is not None:
        size = check_printable(value)
        if isinstance(value, NESTED_TYPES):
            # (each level is printed again to see whether it fits the width: the size times
            # the depth)
            size *= nesting_depth(value)
        _charge(size // 64)
    if result is not None:
        charge_scan(None, result)


def text_cost(passes: int) -> Charge:
    """The text of the value read `passes` times at C speed (`str(x).islower()` once,
    escaping's five replacements and their copies eight times): a string's characters, or the
    printed size of anything else, measured first (`[big] * 1000` prints a thousand bigs)."""
    chars = CHARS_PER_STEP // passes

    def charge_text(value: Any, result: Any) -> None:
        if value is not None:
            if isinstance(value, str):
                _charge(len(value) // chars)
            else:
                _charge(check_printable(value) // chars)
                hand_over(value)
        if result is not None:
            charge_scan(None, result)

    return charge_text


def charge_words(value: Any, result: Any) -> None:
    """The text of the value walked by Python code per word or match (title, urlize,
    wordwrap, striptags' entities): a step per two characters of a string, or of the printed
    size of anything else, measured first."""
    if value is not None:
        if isinstance(value, str):
            _charge(len(value) // FILTER_ITEMS_PER_STEP)
        else:
            if isinstance(value, NESTED_TYPES):
                check_compared(value)
            _charge(check_printable(value) // FILTER_ITEMS_PER_STEP)
    if result is not None:
        charge_scan(None, result)


def charge_escaped_words(value: Any, result: Any) -> None:
    """`charge_words` on the text as escaped for HTML, which is what urlize walks: a `>`
    is the four characters `&gt;` there (a Markup, escaped already, pays as the plain text
    would: a subclass never pays less; anything else is charged at five times its printed
    size, the most escaping makes of it)."""
    if value is not None:
        if isinstance(value, str):
            _charge(escaped_size(value) // FILTER_ITEMS_PER_STEP)
        else:
            if isinstance(value, NESTED_TYPES):
                check_compared(value)
            _charge(5 * check_printable(value) // FILTER_ITEMS_PER_STEP)
    if result is not None:
        charge_scan(None, result)


def charge_receiver(value: Any, result: Any) -> None:
    """A method of a string, list, tuple or set that may read its receiver whole (`count`,
    `find`, `split`, `index`): a step per kilobyte or per 64 items."""
    if value is not None:
        _charge(units_of(value, CHARS_PER_STEP, ITEMS_PER_STEP))


# The shapes, as declarations use them.
FREE = Cost("free", no_charge)
SCAN = Cost("scan", charge_scan)
WALK = Cost("walk", charge_walk)
COMPARE = Cost("compare", charge_compare)
SORT = Cost("sort", charge_sort)
PRINT = Cost("print", charge_print)
PPRINT = Cost("pprint", charge_pprint)
TEXT = Cost("text", text_cost(1))
ESCAPE = Cost("text x8", text_cost(8))
WORDS = Cost("words", charge_words)
ESCAPED_WORDS = Cost("escaped words", charge_escaped_words)
RECEIVER = Cost("receiver", charge_receiver)


def guarded(cost: Cost, guard: str) -> Cost:
    """`cost`, with the check the builtin makes from its arguments' values before it builds
    (a width, a count): refused above a limit."""
    return Cost(cost.shape, cost.charge, guard)


def inline(guard: str) -> Cost:
    """An operator or global whose function charges itself before the work (`a * n` checks
    the length it would make, `range` its length): nothing to charge around the call."""
    return Cost("inline", no_charge, guard)


# kind ("filter", "test", "method", "operator", "global") -> name -> declared cost
_DECLARED: dict[str, dict[str, Cost]] = {}


def declare(kind: str, costs: Mapping[str, Cost]) -> None:
    """Register the costs of a module's builtins of `kind` (called once, at its bottom)."""
    _DECLARED.setdefault(kind, {}).update(costs)


def declared(kind: str) -> Mapping[str, Cost]:
    """The costs declared for `kind` so far."""
    return _DECLARED.get(kind, {})


def cost_of(kind: str, name: str) -> Cost:
    """The declared cost of builtin `name` of `kind`; a function the caller added to an
    environment (`env.filters['mine'] = ...`) has none and pays as a scan of its input and
    output."""
    return _DECLARED.get(kind, {}).get(name, SCAN)


def charge_for(kind: str, name: str) -> Charge:
    """How the compiler charges a call of filter or test `name` (chosen once, at compile).
    (Every environment imports the filters and tests, which declare their costs, before it
    compiles anything.)"""
    return cost_of(kind, name).charge


def method_cost(obj: Any, name: str) -> Cost:
    """The declared cost of the allow-listed method `name` of `obj`, by the type whose
    method it is (a Markup's own methods before a string's)."""
    table = _DECLARED.get("method", {})
    for prefix in _method_prefixes(obj):
        cost = table.get(f"{prefix}.{name}")
        if cost is not None:
            return cost
    return RECEIVER


def _method_prefixes(obj: Any) -> tuple[str, ...]:
    if isinstance(obj, str):
        return ("Markup", "str") if isinstance(obj, Markup) else ("str",)
    if isinstance(obj, dict):
        return ("dict",)
    if isinstance(obj, list):
        return ("list",)
    if isinstance(obj, tuple):
        return ("tuple",)
    if isinstance(obj, (set, frozenset)):
        return ("set",)
    if isinstance(obj, (int, float)):
        return ("number",)
    return ()


def charge_method(obj: Any, name: str) -> None:
    """Charge the declared cost of method `name` on its receiver `obj`, when the method
    is looked up to be called (its arguments are charged by the call)."""
    method_cost(obj, name).charge(obj, None)
