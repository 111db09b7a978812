"""What a template may reach and how much it may spend.

Templates see data, not objects.  Attribute access follows Jinja2's sandbox (attribute first,
then item, for ``x.y``; item first, then attribute, for ``x['y']``) with one difference: instead
of allowing every public attribute of a builtin value, only the allow-listed methods of
:mod:`methods` are reachable, so nothing of Python's object model leaks through.
"""

from __future__ import annotations

import sys
import time
import types
from collections.abc import Callable
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import Any

from .errors import LimitError, SecurityError
from .methods import DICT_METHODS, STR_METHODS, get_method, is_mutating_method
from .runtime import MISSING, Cycler, Joiner, LoopContext, Macro, Namespace, Undefined


@dataclass(frozen=True)
class Limits:
    """Resource bounds of one render; exceeding one raises :class:`LimitError` naming it.

    The defaults let every template of the real chat-template corpus render conversations of
    thousands of messages, and stop each known denial-of-service pattern within about a second
    on a slow machine.  Pass your own ``Limits(...)`` to ``Environment(limits=...)`` to change
    them; SECURITY.md explains each one.

    Examples:
        >>> from minijinja_py import Environment, LimitError
        >>> env = Environment(limits=Limits(max_steps=1_000))
        >>> try:
        ...     env.from_string("{% for i in range(10000) %}{{ i }}{% endfor %}").render()
        ... except LimitError as error:
        ...     print(error.message)
        the render exceeded max_steps (1000)
    """

    #: loop iterations, macro and function calls and printed values, together; bulk work
    #: (building big strings and lists) is charged by its size as well
    max_steps: int = 200_000
    #: extra steps per squared item of the context: a render whose context holds n items
    #: (the entries of its top-level lists and dicts, such as the messages) may take
    #: ``max_steps + max_steps_growth * n**2`` steps, because real chat templates walk the
    #: messages inside a walk over the messages (2,000 messages: 2.2 million steps)
    max_steps_growth: int = 2
    #: characters of output, the final text and any captured block alike
    max_output: int = 50_000_000
    #: nesting of macro calls, recursive loops and data (printed, compared or hashed)
    max_recursion: int = 100
    #: nesting depth of the syntax tree: brackets, operators, filters and blocks
    max_nesting: int = 100
    #: characters of any string a template builds
    max_string: int = 10_000_000
    #: items of any list or tuple a template builds
    max_items: int = 1_000_000
    #: bits of any integer a template builds
    max_int_bits: int = 65_536
    #: length of a ``range()``; 100,000 as in Jinja2's sandbox
    max_range: int = 100_000
    #: wall-clock seconds one render may take, checked with the step count; ``None`` (the
    #: default) for none, since a deadline makes the outcome depend on the machine's load
    max_seconds: float | None = None


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


class Budget:
    """What one render has spent; shared by every frame of the render.

    ``steps``, ``size`` and ``depth`` are read and written directly by the compiled template
    on its hot paths; everything else goes through the methods.
    """

    __slots__ = (
        "steps",
        "size",
        "depth",
        "limits",
        "deadline",
        "next_clock",
        "_budget",
        "_items",
        "_context",
    )

    def __init__(self, limits: Limits) -> None:
        self.steps = 0
        self.size = 0
        self.depth = 0
        self.limits = limits
        self.deadline = (
            time.monotonic() + limits.max_seconds if limits.max_seconds is not None else None
        )
        self._items = 0
        self._budget = budget = limits.max_steps
        self._context: Any = None
        # min(CLOCK_EVERY, budget + 1): once per render, where min() is felt
        self.next_clock = CLOCK_EVERY if budget >= CLOCK_EVERY - 1 else budget + 1

    def scale_to(self, context: Any) -> None:
        """Grant ``max_steps_growth * n**2`` more steps for a context of ``n`` items."""
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
        self._budget = self.limits.max_steps + self.limits.max_steps_growth * n * n

    @property
    def budget(self) -> int:
        """The steps this render may take."""
        if self._context is not None:
            self._scale()
        return self._budget

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

    def grow(self, length: int) -> None:
        self.size += length
        if self.size > self.limits.max_output:
            raise LimitError(f"the output exceeded max_output ({self.limits.max_output})")


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
    """Charge the work of having built or scanned ``value`` (a big string or container)."""
    cls = type(value)
    if cls is str:
        units = len(value) // CHARS_PER_STEP
    elif cls is list or cls is tuple or cls is dict:
        units = len(value) // ITEMS_PER_STEP
    else:
        return
    if units:
        budget = _CURRENT.get()
        if budget is not None:
            budget.charge(units)


def charge_io(value: Any, result: Any) -> None:
    """Charge a filter's work: walking its input and building its output, when big.

    The compiler calls it twice per filter: with the input (``result`` None) before the
    filter runs, so that a filter about to walk too much is stopped before it starts, and
    with the output (``value`` None) after."""
    units = 0
    cls = type(value)
    if cls is str:
        units = len(value) // CHARS_PER_STEP
    elif cls is list or cls is tuple or cls is dict or cls is range:
        units = len(value) // FILTER_ITEMS_PER_STEP
    cls = type(result)
    if cls is str:
        units += len(result) // CHARS_PER_STEP
    elif cls is list or cls is tuple or cls is dict or cls is range:
        units += len(result) // FILTER_ITEMS_PER_STEP
    if units:
        budget = _CURRENT.get()
        if budget is not None:
            budget.charge(units)


def charge_steps(steps: int) -> None:
    """Charge ``steps`` steps of Python-level work to the running render, if any."""
    if steps:
        budget = _CURRENT.get()
        if budget is not None:
            budget.charge(steps)


def _charge_walking(value: Any, result: Any) -> None:
    # Filters that spend Python code on each character or word of a string (sort, map,
    # batch, title, urlize, wordcount, ...) pay for a string as for a list of its characters.
    if type(value) is str and len(value) >= FILTER_ITEMS_PER_STEP:
        budget = _CURRENT.get()
        if budget is not None:
            budget.charge(len(value) // FILTER_ITEMS_PER_STEP)
        return
    charge_io(value, result)


def _charge_serialising(value: Any, result: Any) -> None:
    # tojson, pprint and string build text from the whole structure: measure it first.
    if value is not None:
        check_printable(value)
    if result is not None:
        charge_io(None, result)


def check_printable(value: Any) -> None:
    """Refuse, before printing or serialising it, a structure whose text would exceed
    max_string (``[big] * 1000`` prints the same megabyte a thousand times), charging the
    walk that measures it to the step budget."""
    cls = type(value)
    if cls is not list and cls is not tuple and cls is not dict:
        return
    budget = _CURRENT.get()
    limits = budget.limits if budget is not None else _DEFAULT_LIMITS
    limit = limits.max_string
    # Most printed structures (a tool's schema, a message) are small and far from every limit:
    # measure those in one quick pass, which can raise nothing, and charge what the full walk
    # below would charge.  Anything else takes the full walk, whose order decides which limit
    # fires first.
    nodes = _measure_small(value, min(_SMALL_NODES, limits.max_items), limit)
    if nodes:
        if budget is not None and nodes >= FILTER_ITEMS_PER_STEP:
            budget.charge(nodes // FILTER_ITEMS_PER_STEP)
        return
    size = 0
    nodes = 0
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        item = pop()
        nodes += 1
        cls = type(item)
        if cls is str:
            size += len(item) + 2
        elif cls is list or cls is tuple:
            size += 2 + 2 * len(item)
            stack.extend(item)
        elif cls is dict:
            size += 2 + 4 * len(item)
            for key, val in item.items():
                push(key)
                push(val)
        else:
            size += 4
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


# Below this many nodes the full walk charges only once, at its end (it charges every 4096).
_SMALL_NODES = 4095


def _measure_small(value: Any, most: int, limit: int) -> int:
    """The node count of ``value`` as :func:`check_printable` counts it, or 0 when it has more
    than ``most`` nodes or its printed size (as the full walk sizes it) exceeds ``limit``.

    Checked per container rather than per node: a string or scalar item is sized in place, and
    only containers go through the stack."""
    size = 0
    nodes = 1
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        item = pop()
        count = len(item)
        if type(item) is dict:
            nodes += count + count
            if nodes > most:
                return 0
            size += 2 + 4 * count
            for key in item:
                cls = type(key)
                if cls is str:
                    size += len(key) + 2
                elif cls is tuple:  # (a list or dict is never a key)
                    push(key)
                else:
                    size += 4
            item = item.values()
        else:
            nodes += count
            if nodes > most:
                return 0
            size += 2 + 2 * count
        for child in item:
            cls = type(child)
            if cls is str:
                size += len(child) + 2
            elif cls is dict or cls is list or cls is tuple:
                push(child)
            else:
                size += 4
    return nodes if size <= limit else 0


def _no_charge(value: Any, result: Any) -> None:
    return None


# Filters that look at their input without walking it, and the tests that walk theirs.
_FREE_FILTERS = frozenset(["length", "count", "first", "last", "default", "d", "attr", "safe"])
_WALKING_FILTERS = frozenset(
    """batch slice map select reject selectattr rejectattr unique sort list groupby min max sum
    join title urlize wordcount striptags indent wordwrap dictsort items xmlattr
    urlencode""".split()
)
_SERIALISING_FILTERS = frozenset(["tojson", "pprint", "string"])
_WALKING_TESTS = frozenset(["in", "eq", "equalto", "==", "ne", "!=", "sameas"])


def charge_for(kind: str, name: str) -> Callable[[Any, Any], None]:
    """How the compiler charges a call of filter or test ``name`` (chosen once, at compile)."""
    if kind == "filter":
        if name in _FREE_FILTERS:
            return _no_charge
        if name in _WALKING_FILTERS:
            return _charge_walking
        if name in _SERIALISING_FILTERS:
            return _charge_serialising
        return charge_io
    return charge_io if name in _WALKING_TESTS else _no_charge


def charge_work(chars: int = 0, items: int = 0) -> None:
    """Charge work measured in characters and/or items before doing it."""
    units = chars // CHARS_PER_STEP + items // ITEMS_PER_STEP
    if units:
        budget = _CURRENT.get()
        if budget is not None:
            budget.charge(units)


def unsafe(obj: Any, name: Any) -> Undefined:
    """An undefined value that raises SecurityError when used, as Jinja2's sandbox returns."""
    return Undefined(
        f"access to attribute {name!r} of {type(obj).__name__!r} object is unsafe.",
        obj=obj,
        name=name,
        exc=SecurityError,
    )


_LOOP_ATTRIBUTES = frozenset(
    "index index0 revindex revindex0 first last length previtem nextitem depth depth0 "
    "cycle changed".split()
)
# The str methods get_method hands out unwrapped (the others check sizes or sandbox format).
_PLAIN_STR_METHODS = STR_METHODS - {
    "format",
    "format_map",
    "center",
    "ljust",
    "rjust",
    "zfill",
    "expandtabs",
    "replace",
    "join",
}
_MACRO_ATTRIBUTES = frozenset("name arguments catch_kwargs catch_varargs caller".split())
_CYCLER_ATTRIBUTES = frozenset(["next", "reset", "current", "items"])
_DATA_TYPES = (str, dict, list, tuple, int, float, set, frozenset)
# Values whose attributes would expose the interpreter itself.
_OPAQUE_TYPES = (
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.BuiltinMethodType,
    types.ModuleType,
    types.GeneratorType,
    types.CoroutineType,
    types.AsyncGeneratorType,
    types.FrameType,
    types.CodeType,
    types.TracebackType,
    type,
)
# Values never handed to a template, whoever's attribute they are.
_HIDDEN_VALUES = (
    types.ModuleType,
    types.GeneratorType,
    types.CoroutineType,
    types.AsyncGeneratorType,
    types.FrameType,
    types.CodeType,
    types.TracebackType,
    type,
)


# Methods that hash their arguments: a dict's get, and a set's methods taking other sets.
_HASHING_METHODS = frozenset(
    """get difference intersection isdisjoint issubset issuperset symmetric_difference
    union""".split()
)


class _KeyGuarded:
    """A bound method whose arguments are checked by :func:`check_key` (and its elements',
    for a set's methods) before the method hashes them; prints as the method does."""

    __slots__ = ("_method",)

    def __init__(self, method: Any) -> None:
        self._method = method

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for arg in args:
            if type(arg) is str:  # the usual key: nothing nested to check
                continue
            if type(arg) is tuple:
                check_key(arg)
            elif isinstance(arg, (list, set, frozenset, dict)):
                for item in arg:
                    if type(item) is tuple:
                        check_key(item)
        return self._method(*args, **kwargs)

    def __repr__(self) -> str:
        return repr(self._method)


def _guard_keys(obj: Any, name: str, method: Any) -> Any:
    # The method is looked up to be called, and most of them scan the whole value
    # (``count``, ``find``, ``split``, ``index``): charge that to the step budget here.
    # (A dict's lookups do not scan it; only its copy does.)
    if type(obj) is not dict or name == "copy":
        charge_size(obj)
    if name in _HASHING_METHODS and isinstance(obj, (dict, set, frozenset)):
        return _KeyGuarded(method)
    return method


_NO_ITEM = object()  # a dict's miss (no value a caller passes can be this object)


class AttributePolicy:
    """Sandboxed ``x.y`` and ``x[y]`` for an environment."""

    def __init__(self, environment: Any) -> None:
        self.environment = environment

    def getattr(self, obj: Any, name: str) -> Any:
        # The common cases first, each answered as the general path below would answer it.
        cls = type(obj)
        if type(name) is not str:
            pass
        elif cls is str:
            if name in _PLAIN_STR_METHODS:
                if len(obj) >= CHARS_PER_STEP:
                    charge_size(obj)  # as _guard_keys charges it
                return getattr(obj, name)
        elif cls is LoopContext:
            if name in _LOOP_ATTRIBUTES:
                return getattr(obj, name)
        elif cls is dict:
            if name in DICT_METHODS:
                if name == "get":
                    return _KeyGuarded(obj.get)
                if name == "copy":
                    charge_size(obj)
                return getattr(obj, name)
        elif isinstance(obj, Namespace) and name[:1] != "_":
            value = obj.get(name)
            return self.environment.undefined(obj=obj, name=name) if value is MISSING else value
        environment = self.environment
        if isinstance(obj, _DATA_TYPES):
            method = get_method(obj, name, environment)
            if method is not MISSING:
                return _guard_keys(obj, name, method)
            if isinstance(obj, tuple) and name in getattr(type(obj), "_fields", ()):
                return getattr(obj, name)  # a named tuple's field (groupby's grouper, list)
            if hasattr(obj, name):  # a real attribute; a dict key "_x" is data
                return unsafe(obj, name)
            if isinstance(obj, dict):
                try:
                    return obj[name]
                except (TypeError, LookupError):
                    pass
            return environment.undefined(obj=obj, name=name)
        return self._special_attribute(obj, name)

    def getitem(self, obj: Any, key: Any) -> Any:
        cls = type(key)
        if cls is str:
            # A string never has a string item, and a dict's miss need not raise: both go
            # straight to the attribute fallback below.
            if type(obj) is str:
                if key in STR_METHODS:
                    return self._item_fallback(obj, key)
                # (what _item_fallback answers for a name that is no method of a str)
                if key[:1] == "_" or hasattr(obj, key):
                    return unsafe(obj, key)
                return self.environment.undefined(obj=obj, name=key)
            if type(obj) is dict:
                value = obj.get(key, _NO_ITEM)
                return self._item_fallback(obj, key) if value is _NO_ITEM else value
        elif cls is tuple:
            check_key(key)
        try:
            return obj[key]
        except (TypeError, LookupError):
            pass
        except SecurityError:
            raise
        if isinstance(key, str):
            return self._item_fallback(obj, key)
        return self.environment.undefined(obj=obj, name=key)

    def _item_fallback(self, obj: Any, key: str) -> Any:
        # ``x['y']`` where x has no item y: the attribute, as in Jinja.
        if isinstance(obj, _DATA_TYPES):
            method = get_method(obj, key, self.environment)
            if method is not MISSING:
                return _guard_keys(obj, key, method)
            if key[:1] == "_" or hasattr(obj, key):
                return unsafe(obj, key)
            return self.environment.undefined(obj=obj, name=key)
        return self._special_attribute(obj, key)

    def _special_attribute(self, obj: Any, name: str) -> Any:
        undefined = self.environment.undefined
        if isinstance(obj, Undefined):
            # As in Jinja: a private attribute the value really has (``__class__``) is unsafe;
            # any other private name is looked up as an item, which fails the way the
            # undefined value fails (SecurityError for the sandbox's unsafe ones).
            if name[:1] == "_":
                try:
                    object.__getattribute__(obj, name)
                except AttributeError:
                    return obj[name]
                return unsafe(obj, name)
            return getattr(obj, name)
        if name[:1] == "_":
            return unsafe(obj, name)
        if isinstance(obj, Namespace):
            value = obj.get(name)
            return undefined(obj=obj, name=name) if value is MISSING else value
        if isinstance(obj, LoopContext):
            allowed = _LOOP_ATTRIBUTES
        elif isinstance(obj, Macro):
            allowed = _MACRO_ATTRIBUTES
        elif isinstance(obj, Cycler):
            allowed = _CYCLER_ATTRIBUTES
        elif isinstance(obj, _OPAQUE_TYPES):
            # Functions, types, modules, generators: nothing of them is data.  An attribute
            # that exists is refused as Jinja2 refuses ``dict.mro``, a SecurityError on use.
            if hasattr(obj, name):
                return unsafe(obj, name)
            return undefined(obj=obj, name=name)
        elif isinstance(obj, Joiner):
            allowed = frozenset()
        else:
            # A caller's own object: its public attributes are data it chose to pass.
            value = getattr(obj, name, MISSING)
            if value is not MISSING and not isinstance(value, _HIDDEN_VALUES):
                if is_mutating_method(obj, name):
                    return unsafe(obj, name)
                return value
            try:
                return obj[name]
            except (TypeError, LookupError, AttributeError):
                return undefined(obj=obj, name=name)
        if name in allowed:
            return getattr(obj, name)
        return undefined(obj=obj, name=name)


def check_string(value: str, limits: Limits) -> str:
    if len(value) > limits.max_string:
        raise LimitError(
            f"a string of {len(value)} characters exceeds max_string ({limits.max_string})"
        )
    return value


def check_length(length: int, limits: Limits, what: str = "string") -> None:
    """Refuse, before building it, a value of ``length`` characters or items; charge the
    building of a big one to the step budget."""
    if what == "string":
        if length > limits.max_string:
            raise LimitError(
                f"a string of {length} characters exceeds max_string ({limits.max_string})"
            )
        if length >= CHARS_PER_STEP:
            charge_work(chars=length)
    elif length > limits.max_items:
        raise LimitError(f"a {what} of {length} items exceeds max_items ({limits.max_items})")
    elif length >= ITEMS_PER_STEP:
        charge_work(items=length)


def check_int(value: int, limits: Limits) -> int:
    if value.bit_length() > limits.max_int_bits:
        raise LimitError(
            f"an integer of {value.bit_length()} bits exceeds max_int_bits ({limits.max_int_bits})"
        )
    return value


# ---------------------------------------------------------------------------------------------
# depth: of the Python stack, of data (the syntax tree's depth is checked in analysis.py)


# Frames kept free below Python's recursion limit when a macro or recursive loop goes one
# level deeper: what the deepest statement and expression nesting allowed by max_nesting,
# and a filter such as pprint, may still need on top of it.
STACK_RESERVE = 300


def check_stack(limits: Limits) -> None:
    """Stop a macro call or recursive loop level before Python's own recursion limit would.

    How many Python frames a template level costs depends on the blocks between the
    recursive calls, so counting levels (max_recursion) is not always enough; asking for the
    frame ``STACK_RESERVE`` below the limit costs a microsecond and settles it.
    """
    try:
        sys._getframe(sys.getrecursionlimit() - STACK_RESERVE)
    except ValueError:
        return
    raise LimitError(
        f"calls nest too deeply for Python's stack before reaching max_recursion"
        f" ({limits.max_recursion})"
    )


def recursion_error(limits: Limits | None = None) -> LimitError:
    """The error that replaces a RecursionError that still happened (deeply nested data)."""
    limits = limits or current_limits()
    return LimitError(
        f"maximum recursion depth exceeded: calls or data nest deeper than max_recursion"
        f" ({limits.max_recursion}) allows"
    )


def check_key(key: Any) -> Any:
    """Refuse a tuple nested deeper than max_recursion before it is hashed.

    Python hashes nested tuples recursively in C without any depth check, so hashing a tuple
    nested a hundred thousand levels deep (which a loop over a namespace can build) crashes the
    process.  Everything else that walks nested data (repr, ==, json) raises RecursionError.
    """
    if type(key) is not tuple:
        return key
    limit = current_limits().max_recursion
    stack = [(key, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            raise LimitError(f"a tuple nested deeper than max_recursion ({limit})")
        for item in value:
            if isinstance(item, tuple):
                stack.append((item, depth + 1))
    return key


def check_pairs(args: tuple) -> None:
    """``dict(pairs)`` and ``namespace(pairs)`` hash the first item of each pair."""
    for arg in args:
        if isinstance(arg, (list, tuple)):
            for pair in arg:
                if type(pair) in (tuple, list) and pair and type(pair[0]) is tuple:
                    check_key(pair[0])


class _DictType(type):
    # Prints as the ``dict`` type it stands for, as Jinja2's ``dict`` global prints.
    def __repr__(cls) -> str:
        return "<class 'dict'>"

    def __call__(cls, *args: Any, **kwargs: Any) -> dict:
        check_pairs(args)
        return dict(*args, **kwargs)


# Refusals name it as Jinja2 names the real one: "... of 'type' object is unsafe."
_DictType.__name__ = _DictType.__qualname__ = "type"


class SandboxedDict(metaclass=_DictType):
    """The ``dict`` global: ``dict(a=1)`` and ``dict(pairs)`` build a plain dict, with the keys
    checked by :func:`check_key`; the type itself exposes nothing (it is a type)."""

    fromkeys = dict.fromkeys  # present (and refused as unsafe) as on the real type


class SandboxedNamespace(Namespace):
    """The ``namespace`` global: a Namespace whose initial pairs have their keys checked."""

    __slots__ = ()

    def __init__(self, /, *args: Any, **kwargs: Any) -> None:
        check_pairs(args)
        super().__init__(*args, **kwargs)


# Python's type errors name it as Jinja2's class ("argument of type 'Namespace' ...").
SandboxedNamespace.__name__ = "Namespace"


_DEFAULT_LIMITS = Limits()
