"""What one render may spend, and what it has spent: the limits, the step and memory budget, and
the checks that values a template builds stay within them.

Everything here is about values, never about policy: the operators, filters and methods below
charge their work to the running render through `current_budget`, and the sandbox's
attribute policy (builtins/policy.py) sits on top.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from contextvars import ContextVar, Token
from typing import Any, Final

from ..errors import LimitError
from .limits import Limits
from .printing import escaped_size

# Bulk work is charged to the step budget at one step per this many characters or items: a
# step of template code costs a few microseconds, as does scanning a kilobyte in C or
# comparing sixty-odd list items; a filter spends Python code on each item it walks.
CHARS_PER_STEP: Final = 1024
ITEMS_PER_STEP: Final = 64
FILTER_ITEMS_PER_STEP: Final = 2
# The context size up to which the step budget grows (see Budget.scale_to).
MAX_GROWTH_ITEMS: Final = 5000
# How often (in steps) the wall clock is read: reading it costs more than counting a step.
CLOCK_EVERY: Final = 1024


# Values whose comparison, truth and printing take bounded time whatever they hold.
SCALARS: Final = frozenset([int, float, bool, type(None)])
# Subclasses of str that index, compare and look up names as a plain str does (their items
# are characters, their only extra attribute is no method of STR_METHODS): provenance's
# traced string registers itself, so that the evaluators' fast paths for a plain string
# (`message.role == 'user'`, `x['type']`) take it too, with the same charges, instead of
# the general path through an extra call or a raised TypeError.
PLAIN_TEXT: Final[set[type]] = set()


def register_plain_text(kind: type) -> None:
    """Let the evaluators' fast paths for a plain string take a `kind` (see PLAIN_TEXT)."""
    PLAIN_TEXT.add(kind)


def costly(value: Any) -> bool:
    """Whether a filter's input or output is big enough to be charged (see charge_for)."""
    kind = type(value)
    return not ((kind is str and len(value) < CHARS_PER_STEP) or kind in SCALARS)


class Budget:
    """What one render has spent; shared by every frame of the render.

    `steps`, `size`, `depth` and `nested` are read and written directly by the
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
        "printed",
        "handed",
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
        # The structure check_printable measured last, and its printed size: a serialiser
        # called on it next reads the size instead of measuring again (see chat_tojson).
        self.printed: tuple[Any, int, int, int, int] | None = None
        # The structure a builtin's cost has just measured, and the step count after it was
        # charged: the builtin that runs next prints it without measuring it again (see
        # measure.handed_over).
        self.handed: tuple[Any, int] | None = None
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
        """Grant `max_steps_growth * n**2` more steps (and `max_memory_growth * n**2`
        more bytes) for a context of `n` items."""
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
        """Count `steps` at once (bulk work), then check the budget and the clock."""
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
        """Count `size` bytes the render is about to create (or has just created)."""
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
        """One more level of `what` (macro calls or recursive loops), `weight` levels of
        template code deep; the caller leaves it with `depth -= 1; nested -= weight`."""
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
EVALUATION_DEPTH: Final = 400


# The budget of the render running in this thread (or task), so that filters and operators,
# which are plain functions without a frame, can charge their work to it.
_CURRENT: Final[ContextVar[Budget | None]] = ContextVar("minijinja_py_budget", default=None)


# The context variable's own methods, without a Python frame around each (every render
# enters and leaves once): current_budget() -> Budget | None, enter_render(budget) -> Token,
# leave_render(token).
current_budget: Final[Callable[[], Budget | None]] = _CURRENT.get
enter_render: Callable[[Budget | None], Token] = _CURRENT.set
leave_render: Callable[[Token], None] = _CURRENT.reset


def current_limits() -> Limits:
    budget = current_budget()
    return budget.limits if budget is not None else _DEFAULT_LIMITS


def charge_size(value: Any) -> None:
    """Charge the work of scanning `value` (a big string or container, of any subclass)."""
    if isinstance(value, str):
        units = len(value) // CHARS_PER_STEP
    elif isinstance(value, (list, tuple, dict)):
        units = len(value) // ITEMS_PER_STEP
    else:
        return
    if units:
        budget = current_budget()
        if budget is not None:
            budget.charge(units)


def bytes_of(value: Any) -> int:
    """What `charge_built` counts for `value`: about its own bytes (a string's
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
        budget = current_budget()
        if budget is not None:
            budget.charge(size // CHARS_PER_STEP + 1)
            budget.allocate(size)


def charge_memory(size: int) -> None:
    """Count `size` bytes the render is about to create (and the work of writing them)."""
    if size >= CHARS_PER_STEP:
        budget = current_budget()
        if budget is not None:
            budget.charge(size // CHARS_PER_STEP)
            budget.allocate(size)


def walked_int_bytes(value: range) -> int:
    """Bytes of the integers walking `value` makes: big ones (`range(2**65535, ...)`) take
    a kilobyte per 8,000 bits each, which whatever keeps them (a list) holds at once."""
    bits = max(value.start.bit_length(), value.stop.bit_length())
    return len(value) * (bits // 8 + 32) if bits > 64 else 0


def charge_io(value: Any, result: Any) -> None:
    """Charge a filter's work: walking its input and building its output, when big.

    The compiler calls it twice per filter: with the input (`result` None) before the
    filter runs, so that a filter about to walk too much is stopped before it starts, and
    with the output (`value` None) after, which also counts the output's bytes."""
    # (by isinstance: a Markup or traced string, a list subclass pay as their base type)
    units = 0
    if isinstance(value, str):
        units = len(value) // CHARS_PER_STEP
    elif isinstance(value, _SCANNED):
        units = len(value) // FILTER_ITEMS_PER_STEP
        if isinstance(value, range):
            charge_memory(walked_int_bytes(value))
    if isinstance(result, str):
        units += len(result) // CHARS_PER_STEP
    elif isinstance(result, _SCANNED):
        units += len(result) // FILTER_ITEMS_PER_STEP
    size = bytes_of(result) if result is not None else 0
    if units or size:
        budget = current_budget()
        if budget is not None:
            budget.charge(units)
            if size:
                budget.allocate(size)


_SCANNED = (list, tuple, dict, range)


def charge_arguments(args: Any, kwargs: dict[str, Any]) -> None:
    """Charge a call's walk over its arguments before it runs: a method or global may scan
    each of them whole (`s.startswith(a_tuple)`, `s.strip(chars)`, `''.join(items)`,
    `dict.fromkeys(keys)`)."""
    units = argument_units(args, kwargs)
    if units:
        budget = current_budget()
        if budget is not None:
            budget.charge(units)


def argument_units(args: Any, kwargs: dict[str, Any]) -> int:
    """The steps `charge_arguments` charges for these arguments (zero for short strings,
    small containers and scalars, which is what the compiler checks literal arguments for)."""
    units = 0
    if len(args) > 8:
        # (many arguments come from ``*items``, whose copy was charged: only their number)
        units = len(args) >> 6
        args = args[:8]
    # (the exact types first, the usual case; then any subclass: a Markup or traced string,
    # a caller's list subclass pay as their base type)
    for arg in args:
        cls = type(arg)
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
    """Charge `steps` steps of Python-level work to the running render, if any."""
    if steps:
        budget = current_budget()
        if budget is not None:
            budget.charge(steps)


# Arithmetic on big integers and their decimal text cost more than their size: CPython
# multiplies in about n**1.6 and converts to decimal in n**2.  Above this many bits each
# operation is charged by the square of the size in 512-bit units.
BIG_INT_BITS = 4096


def charge_big_int(bits: int) -> None:
    """Charge an operation making or printing an integer of `bits` bits, before it runs."""
    if bits > BIG_INT_BITS:
        charge_steps((bits >> 9) ** 2 >> 4)


def no_charge(value: Any, result: Any) -> None:
    return None


def charge_work(chars: int = 0, items: int = 0) -> None:
    """Charge work measured in characters and/or items before doing it."""
    units = chars // CHARS_PER_STEP + items // ITEMS_PER_STEP
    if units:
        budget = current_budget()
        if budget is not None:
            budget.charge(units)


def check_string(value: str, limits: Limits) -> str:
    if len(value) > limits.max_string:
        raise LimitError(
            f"a string of {len(value)} characters exceeds max_string ({limits.max_string})"
        )
    return value


def check_length(length: int, limits: Limits, what: str = "string") -> None:
    """Refuse, before building it, a value of `length` characters or items; charge the
    building of a big one to the step budget and its bytes to the memory budget."""
    if what == "string":
        if length > limits.max_string:
            raise LimitError(
                f"a string of {length} characters exceeds max_string ({limits.max_string})"
            )
        if length >= CHARS_PER_STEP:
            budget = current_budget()
            if budget is not None:
                budget.charge(length // CHARS_PER_STEP)
                budget.allocate(length)
    elif length > limits.max_items:
        raise LimitError(f"a {what} of {length} items exceeds max_items ({limits.max_items})")
    elif length >= ITEMS_PER_STEP:
        budget = current_budget()
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


_DEFAULT_LIMITS: Final = Limits()


# ---------------------------------------------------------------- string sizes
# (for the str methods, the filters and the sandboxed str.format alike)

#: The longest string a filter or method may build when no environment (with its
#: ``limits.max_string``) is at hand; the default of ``Limits.max_string``.  Checked *before*
#: building: ``"x".center(10**10)`` would otherwise allocate gigabytes in one call, before any
#: later limit could see the result.
MAX_STRING = 10_000_000
MAX_WIDTH = MAX_STRING


def max_string(env: Any = None) -> int:
    """The longest string the environment lets a template build (without one: the running
    render's environment, whose limits a filter that is not given it must still obey)."""
    limits = getattr(env, "limits", None)
    if limits is None:
        limits = current_limits()
    return getattr(limits, "max_string", MAX_STRING)


def check_size(size: int, env: Any = None) -> None:
    """Refuse, before building it, a string of `size` characters beyond `max_string`;
    count a big one's building and bytes to the running render's budgets."""
    limit = max_string(env)
    if size > limit:
        raise LimitError(f"a string of {size} characters exceeds max_string ({limit})")
    charge_memory(size)


_SPEC_NUMBER_RE = re.compile(r"\d+")


def check_format_spec(spec: str, env: Any) -> None:
    """Refuse a format spec whose width or precision exceeds `max_string`."""
    limit = max_string(env)
    for digits in _SPEC_NUMBER_RE.findall(spec):
        if len(digits) > 18 or int(digits) > limit:
            raise LimitError(f"a format width of {digits} exceeds max_string ({limit})")


def measure_escaped(text: str) -> None:
    """Refuse and charge, before it is made, `text` escaped for HTML (up to five times as
    long: `"` becomes `&#34;`)."""
    check_length(escaped_size(text), current_limits())
