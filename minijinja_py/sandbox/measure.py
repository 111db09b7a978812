"""Measuring values before Python walks them in C: the printed size of a value (before it is
printed or serialised) and how deep it nests (before it is hashed, compared, printed or kept),
each walk charged to the running render's budget (budget.py).
"""

from __future__ import annotations

from itertools import chain
from typing import Any, Final

from ..errors import LimitError
from .budget import (
    _DEFAULT_LIMITS,
    CHARS_PER_STEP,
    FILTER_ITEMS_PER_STEP,
    ITEMS_PER_STEP,
    Budget,
    charge_big_int,
    charge_steps,
    current_budget,
)
from .printing import (
    CHUNK,
    VIEW_TYPES,
    AttributeBag,
    json_bound_of_printed,
    json_string_size,
    leaf_repr_size,
    repr_size,
)


def charge_compared_arguments(args: Any, kwargs: dict[str, Any], receiver: Any) -> None:
    """Charge the walk of a method or global that compares or hashes a container it is given
    recursively (`items.count(value)`, `d.get(key)`, `dict.fromkeys(keys)`): once, or
    once per item of the list or tuple `receiver` whose method it is.  (Filters and tests
    measure what they compare themselves, and the others do not walk their arguments.)"""
    times = 0
    for arg in (*args, *kwargs.values()) if kwargs else args:
        if isinstance(arg, NESTED_TYPES):  # (a subclass of one nests as well)
            if not times:
                times = len(receiver) if isinstance(receiver, (list, tuple)) and receiver else 1
            check_compared(arg, times)


def check_printable(value: Any) -> int:
    """Refuse, before printing or serialising it, a structure whose text would exceed
    max_string (`[big] * 1000` prints the same megabyte a thousand times) or that nests
    deeper than max_recursion (Python prints and serialises nested data recursively, in C);
    charge the walk that measures it to the step budget, and the text to the memory budget.

    Returns the printed size as estimated (a string's length for a string)."""
    if isinstance(value, str):
        return len(value)
    budget = current_budget()
    size, nodes, levels, plain = _printed_measure(value, budget)
    if budget is not None:
        # (the step count after the walk's charge, when the walk found nothing but plain
        # containers, strings and scalars: see opaque.shown_str; -1 otherwise)
        budget.printed = (value, size, nodes, levels, budget.steps if plain else -1)
        if size >= CHARS_PER_STEP:
            budget.allocate(size)
    return size


def hand_over(value: Any) -> None:
    """Mark `value`, just measured and charged by a builtin's cost, as the builtin's to print
    without a second measure (see handed_over)."""
    budget = current_budget()
    if budget is not None:
        budget.handed = (value, budget.steps)


def handed_over(value: Any) -> bool:
    """Whether `value` is the structure the running builtin's cost has just measured and
    charged (`hand_over`), with not a step taken since: nothing can have changed it, and
    measuring it again would charge its walk and its text twice.  Answers once."""
    budget = current_budget()
    if budget is None:
        return False
    handed = budget.handed
    if handed is None:
        return False
    budget.handed = None
    return handed[0] is value and handed[1] == budget.steps


def json_within_measure(value: Any, indent: int | None) -> bool:
    """Whether `json.dumps(value, indent=indent, ensure_ascii=False)` is known to fit
    max_string without a walk of its own (and its text is then charged): a string or a small
    scalar, or the structure `check_printable` measured last (see json_bound_of_printed).
    False: the caller bounds the layout exactly, so that nothing Python could print within
    the limit is refused."""
    budget = current_budget()
    limits = budget.limits if budget is not None else _DEFAULT_LIMITS
    kind = type(value)
    if kind is str:
        bound = 6 * len(value) + 2  # (a control character is six: `\u0001`)
        if bound >= CHARS_PER_STEP:  # (else it is too short to charge: no need to know more)
            bound = json_string_size(value, False)
        made = bound
    elif value is None or kind is bool or kind is float:
        return True
    elif kind is int:
        return -(1 << 63) <= value < 1 << 63
    else:
        last = budget.printed if budget is not None else None
        if last is None or last[0] is not value:
            return False
        bound = json_bound_of_printed(last[1], last[2], last[3], indent)
        # (the text itself was charged with the measure, as its printed size: what layout adds)
        made = bound - 2 * last[1]
    if bound > limits.max_string:
        return False
    if made >= CHARS_PER_STEP and budget is not None:
        budget.charge(made // CHARS_PER_STEP)
        budget.allocate(made)
    return True


def printed_size(value: Any) -> int:
    """What `check_printable` checks, without counting the text as made."""
    if isinstance(value, str):
        return len(value)
    return _printed_measure(value, current_budget())[0]


def _printed_measure(value: Any, budget: Budget | None) -> tuple[int, int, int, bool]:
    """(printed size, nodes, levels, plain) of a value that is not a string; the walk is
    charged to `budget` (the running render's).  `plain`: the quick walk measured it, so it
    holds nothing but plain lists, tuples, dicts, strings and scalars."""
    if not isinstance(value, PRINTED_CONTAINERS):
        if isinstance(value, (int, float)) or value is None:
            return leaf_repr_size(value), 1, 0, False
        return 32, 1, 0, False
    limits = budget.limits if budget is not None else _DEFAULT_LIMITS
    limit = limits.max_string
    # Most printed structures (a tool's schema, a message) are small and far from every limit:
    # measure those in one quick pass, which can raise nothing, and charge what the full walk
    # below would charge.  Anything else takes the full walk, whose order decides which limit
    # fires first.
    nodes, size, levels = _measure_small(
        value, min(_SMALL_NODES, limits.max_items), limit, limits.max_recursion
    )
    if nodes:
        if budget is not None and nodes >= FILTER_ITEMS_PER_STEP:
            budget.charge(nodes // FILTER_ITEMS_PER_STEP)
        return size, nodes, levels, True
    deepest = limits.max_recursion
    size = 0
    nodes = 0
    walked = 0
    levels = 0
    stack = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        item, depth = pop()
        nodes += 1
        if isinstance(item, str):
            # (a string in a container prints as its repr, measured a chunk at a time in C:
            # charged as any scan, and no further than the limit it is measured against)
            if budget is not None and len(item) >= CHARS_PER_STEP:
                budget.charge(len(item) // CHARS_PER_STEP)
            size += leaf_repr_size(item, limit - size)
        elif isinstance(item, PRINTED_CONTAINERS):
            if depth > deepest:
                raise LimitError(f"a value nested deeper than max_recursion ({deepest})")
            if depth > levels:
                levels = depth
            depth += 1
            if isinstance(item, AttributeBag):
                size += 14
                item = item._attrs
            if isinstance(item, dict):
                size += 2 + 4 * len(item)
                for key, val in item.items():
                    push((key, depth))
                    push((val, depth))
            else:
                # (``set()``, ``frozenset({...})``, ``dict_items([...])``: 14 more at most)
                size += (2 if type(item) is list or type(item) is tuple else 16) + 2 * len(item)
                for child in item:
                    push((child, depth))
        elif isinstance(item, int):
            size += item.bit_length() // 3 + 5
        elif item is None:
            size += 4
        elif type(item) is float:
            size += 24
        else:
            size += 32
        if size > limit:
            raise LimitError(
                f"printing a structure of more than {limit} characters exceeds max_string ({limit})"
            )
        if nodes >= 4096:
            if budget is not None:
                budget.charge(nodes // FILTER_ITEMS_PER_STEP)
            walked += nodes
            nodes = 0
        if len(stack) > limits.max_items:
            raise LimitError(f"a structure of more than {limits.max_items} items exceeds max_items")
    # (The walk is Python code per node, and so is pprint: one step per two nodes.)
    if budget is not None and nodes >= FILTER_ITEMS_PER_STEP:
        budget.charge(nodes // FILTER_ITEMS_PER_STEP)
    return size, walked + nodes, levels, False


# Below this many nodes the full walk charges only once, at its end (it charges every 4096).
_SMALL_NODES = 4095


PRINTED_NESTED_TYPES: Final = (list, tuple, dict, set, frozenset, AttributeBag)
PRINTED_CONTAINERS: Final[tuple[type[Any], ...]] = (*PRINTED_NESTED_TYPES, *VIEW_TYPES)


# A string this short has its repr made whatever the size so far: the repr of a longer one only
# while the sizes so far leave room for it (a string shared a thousand times is read ten times).
SHORT_REPR: Final = 256


def _measure_small(value: Any, most: int, limit: int, deepest: int) -> tuple[int, int, int]:
    """The node count, printed size and levels of containers of `value` as `check_printable`
    counts them, or (0, 0, 0) when it has more than `most` nodes, its printed size (as the full walk sizes
    it) exceeds `limit`, it nests deeper than `deepest` or holds anything but plain
    containers, strings and scalars.

    Checked per container rather than per node: a string or scalar item is sized in place, and
    only containers are kept for the next level (level by level, so that the depth needs no
    bookkeeping per container)."""
    size = 0
    nodes = 1
    cls = type(value)
    if cls is not list and cls is not tuple and cls is not dict:
        return 0, 0, 0
    level = [value]
    depth = 1
    while level:
        if depth > deepest:
            return 0, 0, 0
        depth += 1
        below: list[Any] = []
        push = below.append
        for item in level:
            count = len(item)
            if type(item) is dict:
                nodes += count + count
                if nodes > most:
                    return 0, 0, 0
                size += 2 + 4 * count
                for key in item:
                    cls = type(key)
                    if cls is str:
                        # (a long one is measured only while within the limit, as an item below)
                        n = len(key)
                        if n <= SHORT_REPR:
                            size += len(repr(key))
                        elif size + n > limit:
                            size += n + 2
                        else:
                            size += len(repr(key)) if n <= CHUNK else repr_size(key)
                    elif cls is tuple:  # (a list or dict is never a key)
                        push(key)
                    elif cls is int or cls is bool:
                        size += key.bit_length() // 3 + 5
                    elif cls is float:
                        size += 24
                    else:
                        return 0, 0, 0
                item = item.values()
            else:
                nodes += count
                if nodes > most:
                    return 0, 0, 0
                size += 2 + 2 * count
            for child in item:
                cls = type(child)
                if cls is str:
                    n = len(child)
                    if n <= SHORT_REPR:  # (repr_size, inlined for the short strings of chat data)
                        size += len(repr(child))
                    elif size + n > limit:
                        size += n + 2
                    else:
                        size += len(repr(child)) if n <= CHUNK else repr_size(child)
                elif cls is dict or cls is list or cls is tuple:
                    push(child)
                elif cls is int or cls is bool:
                    size += child.bit_length() // 3 + 5  # (an int prints a digit per 3.3 bits)
                elif child is None:
                    size += 4
                elif cls is float:
                    size += 24
                elif isinstance(child, str):  # markup, sourced text: sized as the full walk does
                    size += leaf_repr_size(child)
                else:
                    return 0, 0, 0
        level = below
    return (nodes, size, depth - 1) if size <= limit else (0, 0, 0)


# ---------------------------------------------------------------------------------------------
# nesting of data: Python hashes, compares, prints and serialises nested values recursively in
# C, where a deep enough value overflows the C stack whatever the recursion limit.  Whatever
# does so measures its operands first (printing, JSON, comparisons, `in`, sorting, hashing),
# and the values a template can keep are bounded too: whatever it stores (a variable, a
# namespace's attribute) is measured and refused beyond max_recursion levels, and so are the
# arguments of every fourth level of macro calls and recursive loops.  Between two measures a
# value gains at most two levels per node of the expressions that build it (max_nesting of
# them each), so nothing the template holds nests more than a few hundred levels beyond the
# caller's data.  The measure of each container is remembered for the render, so that building
# on a measured value costs only its new level.

# (A namespace is not among them: it hashes and compares by identity, and printing one is
# measured by check_printable.)
NESTED_TYPES: Final = (list, tuple, dict, set, frozenset)

# Macro calls and recursive loops measure their arguments when the level they enter is a
# multiple of four (``not depth & CHECKED_LEVELS``): the usual two or three levels of a chat
# template's macros measure nothing, a recursion every fourth level.
CHECKED_LEVELS: Final = 3


def check_nesting(value: Any) -> Any:
    """Refuse `value` if it nests deeper than max_recursion; return it."""
    _measure(value)
    return value


def nesting_depth(value: Any) -> int:
    """`check_nesting`, returning the depth measured (1 for a flat container)."""
    return _measure(value)[1]


def check_compared(value: Any, times: int = 1) -> Any:
    """`check_nesting`, and charge the walk Python makes to compare, hash or sort
    `value` `times` times: every item of every container it holds, counted each time it
    is reached.  A value can share a container between its items, so that this walk is far
    longer than the value is big: `[a, a]` forty times over holds 80 lists and is walked
    over a trillion times.  Returns `value`."""
    charge_steps(_measure(value)[2] * times // ITEMS_PER_STEP)
    return value


def check_compared_pair(a: Any, b: Any) -> None:
    """`check_nesting` of both operands of a comparison, and charge its walk: Python
    stops at the first difference, so it reaches at most the items of the smaller one (and
    only the first level of a value compared with itself: items that are the same object
    are equal without a look inside)."""
    if a is b:
        _measure(a)
        return
    charge_steps(min(_measure(a)[2], _measure(b)[2]) // ITEMS_PER_STEP)


def _measure(value: Any) -> tuple[Any, int, int]:
    budget = current_budget()
    if budget is None:
        return _nesting(value, _DEFAULT_LIMITS.max_recursion, {}, None)
    memo = budget.depths
    if memo is None:
        memo = budget.depths = {}
    return _nesting(value, budget.limits.max_recursion, memo, budget)


def _nesting(value: Any, limit: int, memo: dict, budget: Budget | None) -> tuple[Any, int, int]:
    # Post-order, without recursion: every container met is remembered as (itself, its depth,
    # the items a recursive walk of it reaches), so that a list grown by one item at a time
    # (``items + [item]``) costs its new items only.
    known = memo.get(id(value))
    if known is not None:
        return known
    # The usual case first: children that are plain values or already measured.
    deepest = 0
    walked = len(value)
    reached = walked
    plain = PLAIN_TYPES
    for child in value.values() if isinstance(value, dict) else value:
        if type(child) in plain:
            continue
        known = memo.get(id(child))
        if known is None:
            kind = type(child)
            # A message dict or a list of strings: flat, measured here (the walk below is
            # for anything deeper, and for a dict with a tuple among its keys).
            if (
                kind is dict
                and all(type(item) in plain for item in child.values())
                and all(type(key) in plain for key in child)
            ) or (
                (kind is list or kind is tuple) and all(type(item) in plain for item in child)
            ):
                size = len(child)
                memo[id(child)] = (child, 1, size)
                walked += size
                reached += size
                if not deepest:
                    deepest = 1
                continue
            if isinstance(child, NESTED_TYPES):
                break
        else:
            reached += known[2]
            if known[1] > deepest:
                deepest = known[1]
    else:
        # (A dict's keys were hashed when it was made: a tuple among them is within bounds.)
        if deepest >= limit:
            raise LimitError(f"a value nested deeper than max_recursion ({limit})")
        if budget is not None and walked >= ITEMS_PER_STEP:
            budget.charge(walked // ITEMS_PER_STEP)
        known = memo[id(value)] = (value, deepest + 1, reached)
        return known
    nodes = walked  # (with the flat children measured above)
    # [container, its children still to look at, deepest child, items reached below it]
    stack = [[value, iter(_children(value)), 0, len(value)]]
    while stack:
        top = stack[-1]
        for child in top[1]:
            if not isinstance(child, NESTED_TYPES):
                continue
            known = memo.get(id(child))
            if known is not None:
                if known[1] > top[2]:
                    top[2] = known[1]
                top[3] += known[2]
                continue
            if len(stack) >= limit:
                raise LimitError(f"a value nested deeper than max_recursion ({limit})")
            nodes += len(child)
            stack.append([child, iter(_children(child)), 0, len(child)])
            break
        else:
            stack.pop()
            depth = top[2] + 1
            if depth > limit:
                raise LimitError(f"a value nested deeper than max_recursion ({limit})")
            memo[id(top[0])] = (top[0], depth, top[3])
            if stack:
                parent = stack[-1]
                if depth > parent[2]:
                    parent[2] = depth
                parent[3] += top[3]
    if budget is not None and nodes >= ITEMS_PER_STEP:
        budget.charge(nodes // ITEMS_PER_STEP)
    return memo[id(value)]


# Values that hold no other value: never measured for nesting.
PLAIN_TYPES: Final = frozenset([str, int, float, bool, type(None)])


def _children(value: Any) -> Any:
    if isinstance(value, dict):
        return chain(value.keys(), value.values()) if value else ()
    return value


def check_key(key: Any) -> Any:
    """Refuse a tuple nested deeper than max_recursion before it is hashed, and charge the
    walk of hashing it.

    Python hashes nested tuples recursively in C, without any depth check and without keeping
    a tuple's hash: hashing a tuple nested a hundred thousand levels deep (which a loop over a
    namespace can build) crashes the process, and one that holds the same tuple twice on each
    of forty levels takes days.  (A groupby result is a tuple too.)
    """
    if isinstance(key, tuple):
        check_compared(key)
    return key


def measure_text(value: Any) -> None:
    """Measure and charge `str(value)` before it is made (anything but a string): a
    container prints its items' reprs, an integer its digits."""
    if type(value) is int:
        charge_big_int(value.bit_length())
    elif not isinstance(value, str):
        check_printable(value)
