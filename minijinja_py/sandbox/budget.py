"""What one render may spend, and what it has spent: the limits, the step and memory budget, and
the checks that values a template builds stay within them.

Everything here is about values, never about policy: the operators, filters and methods below
charge their work to the running render through :func:`current_budget`, and the sandbox's
attribute policy (builtins/policy.py) sits on top.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from contextvars import ContextVar, Token
from itertools import chain
from typing import Any

from ..errors import LimitError
from .limits import Limits
from .printing import VIEW_TYPES, AttributeBag, escaped_size, leaf_repr_size, repr_size

# Bulk work is charged to the step budget at one step per this many characters or items: a
# step of template code costs a few microseconds, as does scanning a kilobyte in C or
# comparing sixty-odd list items; a filter spends Python code on each item it walks.
CHARS_PER_STEP = 1024
ITEMS_PER_STEP = 64
FILTER_ITEMS_PER_STEP = 2
# The context size up to which the step budget grows (see Budget.scale_to).
MAX_GROWTH_ITEMS = 5000
# How often (in steps) the wall clock is read: reading it costs more than counting a step.
CLOCK_EVERY = 1024


# Values whose comparison, truth and printing take bounded time whatever they hold.
SCALARS = frozenset([int, float, bool, type(None)])


def costly(value: Any) -> bool:
    """Whether a filter's input or output is big enough to be charged (see charge_for)."""
    kind = value.__class__
    return not ((kind is str and len(value) < CHARS_PER_STEP) or kind in SCALARS)


class Budget:
    """What one render has spent; shared by every frame of the render.

    ``steps``, ``size``, ``depth`` and ``nested`` are read and written directly by the
    compiled template on its hot paths; everything else goes through the methods.
    """

    __slots__ = (
        "steps",
        "size",
        "depth",
        "nested",
        "memory",
        "limits",
        "deadline",
        "next_clock",
        "depths",
        "_budget",
        "_memory_budget",
        "_items",
        "_context",
    )
    steps: int
    size: int
    depth: int
    nested: int
    memory: int
    limits: Limits
    deadline: float | None
    next_clock: int

    def __init__(self, limits: Limits) -> None:
        self.steps = 0
        self.size = 0
        # macro calls and recursive loops under way (max_recursion), and the evaluation
        # depth they add up to (see EVALUATION_DEPTH)
        self.depth = 0
        self.nested = 0
        self.memory = 0
        self.limits = limits
        self.deadline = (
            time.monotonic() + limits.max_seconds if limits.max_seconds is not None else None
        )
        self._items = 0
        self._budget = budget = limits.max_steps
        self._memory_budget = limits.max_memory
        self._context: Any = None
        # The containers already measured, by id, with their depth and the items a walk of
        # them reaches (the container is held, so that its id stays its own): see _nesting.
        self.depths: dict[int, tuple[Any, int, int]] | None = None
        # min(CLOCK_EVERY, budget + 1): once per render, where min() is felt
        self.next_clock = CLOCK_EVERY if budget >= CLOCK_EVERY - 1 else budget + 1

    def scale_to(self, context: Any) -> None:
        """Grant ``max_steps_growth * n**2`` more steps (and ``max_memory_growth * n**2``
        more bytes) for a context of ``n`` items."""
        # Counted when first needed: almost every render stays within max_steps, and
        # counting costs as much as a small render's own work.  Until then the check runs
        # against max_steps, never above the scaled budget, so it fires at the same step.
        # (The template cannot change the context's sizes: its containers are immutable.)
        self._context = context

    def _scale(self) -> None:
        context, self._context = self._context, None
        n = 0
        for value in context.values():
            if isinstance(value, (list, tuple, dict)):
                n += len(value)
        # Capped, so that whoever sends the messages cannot buy an unbounded budget with
        # them: 5,000 items give max_steps + 50 million steps at most.
        n = min(n, MAX_GROWTH_ITEMS)
        self._items = n
        limits = self.limits
        self._budget = limits.max_steps + limits.max_steps_growth * n * n
        self._memory_budget = limits.max_memory + limits.max_memory_growth * n * n

    @property
    def budget(self) -> int:
        """The steps this render may take."""
        if self._context is not None:
            self._scale()
        return self._budget

    @property
    def memory_budget(self) -> int:
        """The bytes this render may create."""
        if self._context is not None:
            self._scale()
        return self._memory_budget

    @property
    def items(self) -> int:
        """The context's size the budget was scaled to."""
        if self._context is not None:
            self._scale()
        return self._items

    def step(self) -> None:
        self.steps += 1
        if self.steps >= self.next_clock:
            self.check()

    def charge(self, steps: int) -> None:
        """Count ``steps`` at once (bulk work), then check the budget and the clock."""
        self.steps += steps
        if self.steps >= self.next_clock:
            self.check()

    def check(self) -> None:
        limits = self.limits
        if self.steps > self._budget and self.steps > self.budget:
            if self.items:
                raise LimitError(
                    f"the render exceeded its budget of {self.budget} steps (max_steps"
                    f" ({limits.max_steps}) + max_steps_growth ({limits.max_steps_growth})"
                    f" x {self.items}**2 for a context of {self.items} items)"
                )
            raise LimitError(f"the render exceeded max_steps ({limits.max_steps})")
        self.next_clock = min(self.steps + CLOCK_EVERY, self._budget + 1)
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise LimitError(f"the render took longer than max_seconds ({limits.max_seconds})")

    def allocate(self, size: int) -> None:
        """Count ``size`` bytes the render is about to create (or has just created)."""
        self.memory += size
        if self.memory > self._memory_budget and self.memory > self.memory_budget:
            limits = self.limits
            if self.items:
                raise LimitError(
                    f"the render exceeded its memory budget of {self.memory_budget} bytes"
                    f" (max_memory ({limits.max_memory}) + max_memory_growth"
                    f" ({limits.max_memory_growth}) x {self.items}**2 for a context of"
                    f" {self.items} items)"
                )
            raise LimitError(f"the render exceeded max_memory ({limits.max_memory})")

    def grow(self, length: int) -> None:
        self.size += length
        if self.size > self.limits.max_output:
            raise LimitError(f"the output exceeded max_output ({self.limits.max_output})")

    def enter(self, weight: int, what: str) -> None:
        """One more level of ``what`` (macro calls or recursive loops), ``weight`` levels of
        template code deep; the caller leaves it with ``depth -= 1; nested -= weight``."""
        limits = self.limits
        if self.depth >= limits.max_recursion:
            raise LimitError(f"{what} nest deeper than max_recursion ({limits.max_recursion})")
        if self.nested + weight > EVALUATION_DEPTH:
            raise LimitError(
                f"{what} nest deeper than the engine evaluates ({EVALUATION_DEPTH} levels of"
                f" template code) before reaching max_recursion ({limits.max_recursion})"
            )
        self.depth += 1
        self.nested += weight


# Levels of nested template code (blocks, expressions, calls) that macro calls and recursive
# loops may stack up together, whatever Python's recursion limit or the thread's stack: a level
# costs at most two Python frames, so 400 levels stay within Python's default limit of 1,000
# frames with room for a filter or data walk at the bottom.
EVALUATION_DEPTH = 400


# The budget of the render running in this thread (or task), so that filters and operators,
# which are plain functions without a frame, can charge their work to it.
_CURRENT: ContextVar[Budget | None] = ContextVar("minijinja_py_budget", default=None)


# The context variable's own methods, without a Python frame around each (every render
# enters and leaves once): current_budget() -> Budget | None, enter_render(budget) -> Token,
# leave_render(token).
current_budget: Callable[[], Budget | None] = _CURRENT.get
enter_render: Callable[[Budget], Token] = _CURRENT.set
leave_render: Callable[[Token], None] = _CURRENT.reset


def current_limits() -> Limits:
    budget = _CURRENT.get()
    return budget.limits if budget is not None else _DEFAULT_LIMITS


def charge_size(value: Any) -> None:
    """Charge the work of scanning ``value`` (a big string or container, of any subclass)."""
    if isinstance(value, str):
        units = len(value) // CHARS_PER_STEP
    elif isinstance(value, (list, tuple, dict)):
        units = len(value) // ITEMS_PER_STEP
    else:
        return
    if units:
        budget = _CURRENT.get()
        if budget is not None:
            budget.charge(units)


def bytes_of(value: Any) -> int:
    """What :func:`charge_built` counts for ``value``: about its own bytes (a string's
    characters, eight bytes per item of a list or tuple, 48 per entry of a dict), zero for a
    value under a kilobyte or 64 items, and for anything else."""
    if isinstance(value, str):
        size = len(value)
        return size if size >= CHARS_PER_STEP else 0
    if isinstance(value, (list, tuple)):
        size = len(value)
        return 8 * size if size >= ITEMS_PER_STEP else 0
    if isinstance(value, dict):
        size = len(value)
        return 48 * size if size >= ITEMS_PER_STEP else 0
    return 0


def charge_built(value: Any) -> None:
    """Charge a string or container the render has just made: the work of building it and
    its bytes, to the step and memory budgets."""
    size = bytes_of(value)
    if size:
        budget = _CURRENT.get()
        if budget is not None:
            budget.charge(size // CHARS_PER_STEP + 1)
            budget.allocate(size)


def charge_memory(size: int) -> None:
    """Count ``size`` bytes the render is about to create (and the work of writing them)."""
    if size >= CHARS_PER_STEP:
        budget = _CURRENT.get()
        if budget is not None:
            budget.charge(size // CHARS_PER_STEP)
            budget.allocate(size)


def charge_io(value: Any, result: Any) -> None:
    """Charge a filter's work: walking its input and building its output, when big.

    The compiler calls it twice per filter: with the input (``result`` None) before the
    filter runs, so that a filter about to walk too much is stopped before it starts, and
    with the output (``value`` None) after, which also counts the output's bytes."""
    # (by isinstance: a Markup or traced string, a list subclass pay as their base type)
    units = 0
    if isinstance(value, str):
        units = len(value) // CHARS_PER_STEP
    elif isinstance(value, _SCANNED):
        units = len(value) // FILTER_ITEMS_PER_STEP
        if isinstance(value, range):
            # Walking a range makes its integers: big ones (``range(2**65535, ...)``) take a
            # kilobyte per 8,000 bits each, which whatever keeps them (a list) holds at once.
            bits = max(value.start.bit_length(), value.stop.bit_length())
            if bits > 64 and value:
                charge_memory(len(value) * (bits // 8 + 32))
    if isinstance(result, str):
        units += len(result) // CHARS_PER_STEP
    elif isinstance(result, _SCANNED):
        units += len(result) // FILTER_ITEMS_PER_STEP
    size = bytes_of(result) if result is not None else 0
    if units or size:
        budget = _CURRENT.get()
        if budget is not None:
            budget.charge(units)
            if size:
                budget.allocate(size)


_SCANNED = (list, tuple, dict, range)


def charge_arguments(args: Any, kwargs: dict[str, Any]) -> None:
    """Charge a call's walk over its arguments before it runs: a method or global may scan
    each of them whole (``s.startswith(a_tuple)``, ``s.strip(chars)``, ``''.join(items)``,
    ``dict.fromkeys(keys)``)."""
    units = argument_units(args, kwargs)
    if units:
        budget = _CURRENT.get()
        if budget is not None:
            budget.charge(units)


def charge_compared_arguments(args: Any, kwargs: dict[str, Any], receiver: Any) -> None:
    """Charge the walk of a method or global that compares or hashes a container it is given
    recursively (``items.count(value)``, ``d.get(key)``, ``dict.fromkeys(keys)``): once, or
    once per item of the list or tuple ``receiver`` whose method it is.  (Filters and tests
    measure what they compare themselves, and the others do not walk their arguments.)"""
    times = 0
    for arg in (*args, *kwargs.values()) if kwargs else args:
        if isinstance(arg, NESTED_TYPES):  # (a subclass of one nests as well)
            if not times:
                times = len(receiver) if isinstance(receiver, (list, tuple)) and receiver else 1
            check_compared(arg, times)


def argument_units(args: Any, kwargs: dict[str, Any]) -> int:
    """The steps :func:`charge_arguments` charges for these arguments (zero for short strings,
    small containers and scalars, which is what the compiler checks literal arguments for)."""
    units = 0
    if len(args) > 8:
        # (many arguments come from ``*items``, whose copy was charged: only their number)
        units = len(args) >> 6
        args = args[:8]
    # (the exact types first, the usual case; then any subclass: a Markup or traced string,
    # a caller's list subclass pay as their base type)
    for arg in args:
        cls = arg.__class__
        if cls is str:
            units += len(arg) >> 10  # // CHARS_PER_STEP
        elif cls is list or cls is tuple or cls is dict or cls is set or cls is frozenset:
            units += len(arg) >> 6  # // ITEMS_PER_STEP
        elif isinstance(arg, str):
            units += len(arg) >> 10
        elif isinstance(arg, _ARGUMENT_CONTAINERS):
            units += len(arg) >> 6
    if kwargs:
        units += len(kwargs) >> 6
        for arg in kwargs.values():
            if isinstance(arg, str):
                units += len(arg) >> 10
            elif isinstance(arg, _ARGUMENT_CONTAINERS):
                units += len(arg) >> 6
    return units


_ARGUMENT_CONTAINERS = (list, tuple, dict, set, frozenset)


def charge_steps(steps: int) -> None:
    """Charge ``steps`` steps of Python-level work to the running render, if any."""
    if steps:
        budget = _CURRENT.get()
        if budget is not None:
            budget.charge(steps)


# Arithmetic on big integers and their decimal text cost more than their size: CPython
# multiplies in about n**1.6 and converts to decimal in n**2.  Above this many bits each
# operation is charged by the square of the size in 512-bit units.
BIG_INT_BITS = 4096


def charge_big_int(bits: int) -> None:
    """Charge an operation making or printing an integer of ``bits`` bits, before it runs."""
    if bits > BIG_INT_BITS:
        charge_steps((bits >> 9) ** 2 >> 4)


def check_printable(value: Any) -> int:
    """Refuse, before printing or serialising it, a structure whose text would exceed
    max_string (``[big] * 1000`` prints the same megabyte a thousand times) or that nests
    deeper than max_recursion (Python prints and serialises nested data recursively, in C);
    charge the walk that measures it to the step budget, and the text to the memory budget.

    Returns the printed size as estimated (a string's length for a string)."""
    size = printed_size(value)
    if size >= CHARS_PER_STEP and not isinstance(value, str):
        budget = _CURRENT.get()
        if budget is not None:
            budget.allocate(size)
    return size


def printed_size(value: Any) -> int:
    """What :func:`check_printable` checks, without counting the text as made."""
    if isinstance(value, str):
        return len(value)
    if not isinstance(value, PRINTED_CONTAINERS):
        if isinstance(value, (int, float)) or value is None:
            return leaf_repr_size(value)
        return 32
    budget = _CURRENT.get()
    limits = budget.limits if budget is not None else _DEFAULT_LIMITS
    limit = limits.max_string
    # Most printed structures (a tool's schema, a message) are small and far from every limit:
    # measure those in one quick pass, which can raise nothing, and charge what the full walk
    # below would charge.  Anything else takes the full walk, whose order decides which limit
    # fires first.
    nodes, size = _measure_small(
        value, min(_SMALL_NODES, limits.max_items), limit, limits.max_recursion
    )
    if nodes:
        if budget is not None and nodes >= FILTER_ITEMS_PER_STEP:
            budget.charge(nodes // FILTER_ITEMS_PER_STEP)
        return size
    deepest = limits.max_recursion
    size = 0
    nodes = 0
    stack = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        item, depth = pop()
        nodes += 1
        if isinstance(item, str):
            size += leaf_repr_size(item)  # (a string in a container prints as its repr)
        elif isinstance(item, PRINTED_CONTAINERS):
            if depth > deepest:
                raise LimitError(f"a value nested deeper than max_recursion ({deepest})")
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
            nodes = 0
        if len(stack) > limits.max_items:
            raise LimitError(f"a structure of more than {limits.max_items} items exceeds max_items")
    # (The walk is Python code per node, and so is pprint: one step per two nodes.)
    if budget is not None and nodes >= FILTER_ITEMS_PER_STEP:
        budget.charge(nodes // FILTER_ITEMS_PER_STEP)
    return size


# Below this many nodes the full walk charges only once, at its end (it charges every 4096).
_SMALL_NODES = 4095


PRINTED_NESTED_TYPES = (list, tuple, dict, set, frozenset, AttributeBag)
PRINTED_CONTAINERS = (*PRINTED_NESTED_TYPES, *VIEW_TYPES)


def _measure_small(value: Any, most: int, limit: int, deepest: int) -> tuple[int, int]:
    """The node count and printed size of ``value`` as :func:`check_printable` counts them,
    or (0, 0) when it has more than ``most`` nodes, its printed size (as the full walk sizes
    it) exceeds ``limit``, it nests deeper than ``deepest`` or holds anything but plain
    containers, strings and scalars.

    Checked per container rather than per node: a string or scalar item is sized in place, and
    only containers are kept for the next level (level by level, so that the depth needs no
    bookkeeping per container)."""
    size = 0
    nodes = 1
    cls = type(value)
    if cls is not list and cls is not tuple and cls is not dict:
        return 0, 0
    level = [value]
    depth = 1
    while level:
        if depth > deepest:
            return 0, 0
        depth += 1
        below: list[Any] = []
        push = below.append
        for item in level:
            count = len(item)
            if type(item) is dict:
                nodes += count + count
                if nodes > most:
                    return 0, 0
                size += 2 + 4 * count
                for key in item:
                    cls = type(key)
                    if cls is str:
                        # (a long one is measured only while within the limit: see below)
                        size += repr_size(key) if size + len(key) <= limit else len(key) + 2
                    elif cls is tuple:  # (a list or dict is never a key)
                        push(key)
                    elif cls is int or cls is bool:
                        size += key.bit_length() // 3 + 5
                    elif cls is float:
                        size += 24
                    else:
                        return 0, 0
                item = item.values()
            else:
                nodes += count
                if nodes > most:
                    return 0, 0
                size += 2 + 2 * count
            for child in item:
                cls = type(child)
                if cls is str:
                    # A repr is measured by reading the string: only while the sizes so far
                    # leave room for it (a string shared a thousand times is read ten times)
                    size += repr_size(child) if size + len(child) <= limit else len(child) + 2
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
                    return 0, 0
        level = below
    return (nodes, size) if size <= limit else (0, 0)


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
NESTED_TYPES = (list, tuple, dict, set, frozenset)

# Macro calls and recursive loops measure their arguments when the level they enter is a
# multiple of four (``not depth & CHECKED_LEVELS``): the usual two or three levels of a chat
# template's macros measure nothing, a recursion every fourth level.
CHECKED_LEVELS = 3


def check_nesting(value: Any) -> Any:
    """Refuse ``value`` if it nests deeper than max_recursion; return it."""
    _measure(value)
    return value


def nesting_depth(value: Any) -> int:
    """:func:`check_nesting`, returning the depth measured (1 for a flat container)."""
    return _measure(value)[1]


def check_compared(value: Any, times: int = 1) -> Any:
    """:func:`check_nesting`, and charge the walk Python makes to compare, hash or sort
    ``value`` ``times`` times: every item of every container it holds, counted each time it
    is reached.  A value can share a container between its items, so that this walk is far
    longer than the value is big: ``[a, a]`` forty times over holds 80 lists and is walked
    over a trillion times.  Returns ``value``."""
    charge_steps(_measure(value)[2] * times // ITEMS_PER_STEP)
    return value


def check_compared_pair(a: Any, b: Any) -> None:
    """:func:`check_nesting` of both operands of a comparison, and charge its walk: Python
    stops at the first difference, so it reaches at most the items of the smaller one (and
    only the first level of a value compared with itself: items that are the same object
    are equal without a look inside)."""
    if a is b:
        _measure(a)
        return
    charge_steps(min(_measure(a)[2], _measure(b)[2]) // ITEMS_PER_STEP)


def _measure(value: Any) -> tuple[Any, int, int]:
    budget = _CURRENT.get()
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
        if child.__class__ in plain:
            continue
        known = memo.get(id(child))
        if known is None:
            kind = child.__class__
            # A message dict or a list of strings: flat, measured here (the walk below is
            # for anything deeper, and for a dict with a tuple among its keys).
            if (
                kind is dict
                and all(item.__class__ in plain for item in child.values())
                and all(key.__class__ in plain for key in child)
            ) or (
                (kind is list or kind is tuple) and all(item.__class__ in plain for item in child)
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
PLAIN_TYPES = frozenset([str, int, float, bool, type(None)])


def _children(value: Any) -> Any:
    if isinstance(value, dict):
        return chain(value.keys(), value.values()) if value else ()
    return value


def no_charge(value: Any, result: Any) -> None:
    return None


def charge_work(chars: int = 0, items: int = 0) -> None:
    """Charge work measured in characters and/or items before doing it."""
    units = chars // CHARS_PER_STEP + items // ITEMS_PER_STEP
    if units:
        budget = _CURRENT.get()
        if budget is not None:
            budget.charge(units)


def check_string(value: str, limits: Limits) -> str:
    if len(value) > limits.max_string:
        raise LimitError(
            f"a string of {len(value)} characters exceeds max_string ({limits.max_string})"
        )
    return value


def check_length(length: int, limits: Limits, what: str = "string") -> None:
    """Refuse, before building it, a value of ``length`` characters or items; charge the
    building of a big one to the step budget and its bytes to the memory budget."""
    if what == "string":
        if length > limits.max_string:
            raise LimitError(
                f"a string of {length} characters exceeds max_string ({limits.max_string})"
            )
        if length >= CHARS_PER_STEP:
            budget = _CURRENT.get()
            if budget is not None:
                budget.charge(length // CHARS_PER_STEP)
                budget.allocate(length)
    elif length > limits.max_items:
        raise LimitError(f"a {what} of {length} items exceeds max_items ({limits.max_items})")
    elif length >= ITEMS_PER_STEP:
        budget = _CURRENT.get()
        if budget is not None:
            budget.charge(length // ITEMS_PER_STEP)
            budget.allocate(8 * length)


def check_int(value: int, limits: Limits) -> int:
    bits = value.bit_length()
    if bits > limits.max_int_bits:
        raise LimitError(f"an integer of {bits} bits exceeds max_int_bits ({limits.max_int_bits})")
    charge_big_int(bits)
    return value


def recursion_error(limits: Limits | None = None) -> LimitError:
    """The error that replaces a RecursionError that still happened (deeply nested data)."""
    limits = limits or current_limits()
    return LimitError(
        f"maximum recursion depth exceeded: calls or data nest deeper than max_recursion"
        f" ({limits.max_recursion}) allows"
    )


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


_DEFAULT_LIMITS = Limits()


# ---------------------------------------------------------------- string sizes
# (for the str methods, the filters and the sandboxed str.format alike)

#: The longest string a filter or method may build when no environment (with its
#: ``limits.max_string``) is at hand; the default of ``Limits.max_string``.  Checked *before*
#: building: ``"x".center(10**10)`` would otherwise allocate gigabytes in one call, before any
#: later limit could see the result.
MAX_STRING = 10_000_000
MAX_WIDTH = MAX_STRING


def max_string(env: Any = None) -> int:
    """The longest string the environment lets a template build."""
    return getattr(getattr(env, "limits", None), "max_string", MAX_STRING)


def check_size(size: int, env: Any = None) -> None:
    """Refuse, before building it, a string of ``size`` characters beyond ``max_string``;
    count a big one's building and bytes to the running render's budgets."""
    limit = max_string(env)
    if size > limit:
        raise LimitError(f"a string of {size} characters exceeds max_string ({limit})")
    charge_memory(size)


_SPEC_NUMBER_RE = re.compile(r"\d+")


def check_format_spec(spec: str, env: Any) -> None:
    """Refuse a format spec whose width or precision exceeds ``max_string``."""
    limit = max_string(env)
    for digits in _SPEC_NUMBER_RE.findall(spec):
        if len(digits) > 18 or int(digits) > limit:
            raise LimitError(f"a format width of {digits} exceeds max_string ({limit})")


def measure_text(value: Any) -> None:
    """Measure and charge ``str(value)`` before it is made (anything but a string): a
    container prints its items' reprs, an integer its digits."""
    if type(value) is int:
        charge_big_int(value.bit_length())
    elif not isinstance(value, str):
        check_printable(value)


def measure_escaped(text: str) -> None:
    """Refuse and charge, before it is made, ``text`` escaped for HTML (up to five times as
    long: ``"`` becomes ``&#34;``)."""
    check_length(escaped_size(text), current_limits())
