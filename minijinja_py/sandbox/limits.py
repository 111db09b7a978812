"""The bounds of one render: what a template may spend (see `Limits`).

Its own module, at the bottom of the sandbox, so that the compiler's analysis and the chat layer
can name the limits without importing the budget that counts against them.  A plain class
rather than a dataclass: `dataclasses` (and the `inspect` it imports) cost a fifth of the
package's import time, and every field is checked when the limits are made, so that a wrong
value is refused there, naming its field, rather than failing inside a render.
"""

from __future__ import annotations

from math import isfinite


class Limits:
    """Resource bounds of one render; exceeding one raises `LimitError` naming it.

    The defaults let every template of the real chat-template corpus render conversations of
    thousands of messages, and stop each known denial-of-service pattern within about a second
    on a slow machine.  Pass your own `Limits(...)` to `Environment(limits=...)` to change
    them; SECURITY.md explains each one.  Limits are immutable, hashable and compared by
    value; ``limits.replace(max_steps=...)`` (or ``copy.replace`` on Python 3.13) makes a
    copy with some fields changed.  Every bound is an ``int`` (a ``bool`` is refused), at
    least 1, except the two growth rates (at least 0) and ``max_seconds`` (a positive number,
    or ``None`` for no deadline); a wrong value raises ``TypeError`` or ``ValueError`` naming
    the field.

    Examples:
        >>> from minijinja_py import Environment, LimitError
        >>> env = Environment(limits=Limits(max_steps=1_000))
        >>> try:
        ...     env.from_string("{% for i in range(10000) %}{{ i }}{% endfor %}").render()
        ... except LimitError as error:
        ...     print(error.message)
        the render exceeded max_steps (1000)
        >>> Limits(max_range=-5)
        Traceback (most recent call last):
        ...
        ValueError: Limits(max_range=-5): max_range must be at least 1
    """

    __slots__ = (
        "max_steps",
        "max_steps_growth",
        "max_output",
        "max_recursion",
        "max_nesting",
        "max_string",
        "max_items",
        "max_int_bits",
        "max_range",
        "max_seconds",
        "max_memory",
        "max_memory_growth",
        "max_source",
    )

    #: work of one render: every statement (one step plus one per node of its expressions),
    #: loop iteration (also those a ``for ... if`` rejects), macro and function call; every
    #: built-in operation is charged before it runs by the sizes it reads and makes
    max_steps: int
    #: extra steps per squared item of the context: a render whose context holds n items
    #: (the entries of its top-level lists and dicts, such as the messages) may take
    #: ``max_steps + max_steps_growth * n**2`` steps, because real chat templates walk the
    #: messages inside a walk over the messages (2,000 messages: 12.2 million steps)
    max_steps_growth: int
    #: characters of output, the final text and any captured block alike
    max_output: int
    #: nesting of macro calls and recursive loops (counted by the engine, never read off
    #: Python's stack), and of data: every value a template stores, prints, compares, hashes
    #: or sorts
    max_recursion: int
    #: nesting depth of the syntax tree: brackets, operators, filters and blocks
    max_nesting: int
    #: characters of any string a template builds
    max_string: int
    #: items of any list or tuple a template builds
    max_items: int
    #: bits of any integer a template builds
    max_int_bits: int
    #: length of a ``range()``; 100,000 as in Jinja2's sandbox
    max_range: int
    #: wall-clock seconds one render may take, checked with the step count; ``None`` (the
    #: default) for none, since a deadline makes the outcome depend on the machine's load
    max_seconds: float | None
    #: bytes of strings, lists, tuples and dicts one render may create, counted when each is
    #: made (copies, folded constants and error messages too) and never given back; values
    #: under a kilobyte are not counted (their number is bounded by the step budget).  Grows
    #: like the step budget: ``max_memory_growth`` more bytes per squared item of the context
    max_memory: int
    #: extra bytes of max_memory per squared item of the context (see max_steps_growth)
    max_memory_growth: int
    #: characters of a template's source; longer sources are refused before they are parsed
    max_source: int

    def __init__(
        self,
        max_steps: int = 200_000,
        max_steps_growth: int = 3,
        max_output: int = 50_000_000,
        max_recursion: int = 100,
        max_nesting: int = 100,
        max_string: int = 10_000_000,
        max_items: int = 1_000_000,
        max_int_bits: int = 65_536,
        max_range: int = 100_000,
        max_seconds: float | None = None,
        max_memory: int = 256_000_000,
        max_memory_growth: int = 256,
        max_source: int = 500_000,
    ) -> None:
        given = locals()  # the parameters, by the names of the fields
        for name in _FIELDS:
            object.__setattr__(self, name, _checked(name, given[name]))

    def replace(self, **changes: float | None) -> Limits:
        """A copy of these limits with the fields named in `changes` set to new values."""
        unknown = sorted(set(changes) - set(_FIELDS))
        if unknown:
            raise TypeError(f"Limits has no field {unknown[0]!r}")
        # (the fields not changed were checked when these limits were made: the compiler
        # replaces max_steps for each template it folds constants of)
        copy = object.__new__(Limits)
        for name in _FIELDS:
            if name in changes:
                value = _checked(name, changes[name])
            else:
                value = getattr(self, name)
            object.__setattr__(copy, name, value)
        return copy

    __replace__ = replace  # copy.replace (Python 3.13)

    def _values(self) -> tuple[float | None, ...]:
        return tuple(getattr(self, name) for name in _FIELDS)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _FIELDS)
        return f"Limits({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._values())

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}: Limits are immutable")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}: Limits are immutable")

    def __reduce__(self) -> tuple[type[Limits], tuple[float | None, ...]]:
        return Limits, self._values()


_FIELDS = Limits.__slots__
# A rate of growth may be zero (a fixed budget); every other bound must let something run.
_LEAST = {"max_steps_growth": 0, "max_memory_growth": 0}


def _checked(name: str, value: object) -> float | None:
    """`value` if it is a valid `name`; else a TypeError or ValueError naming the field."""
    if name == "max_seconds":
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(
                f"Limits(max_seconds={value!r}): max_seconds must be a number of seconds or"
                f" None (no deadline), not {type(value).__name__}"
            )
        if not (isfinite(value) and value > 0):
            raise ValueError(
                f"Limits(max_seconds={value!r}): max_seconds must be a positive, finite number"
                " of seconds, or None for no deadline"
            )
        return int(value) if isinstance(value, int) else float(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(
            f"Limits({name}={value!r}): {name} must be an int, not {type(value).__name__}"
        )
    least = _LEAST.get(name, 1)
    if value < least:
        raise ValueError(f"Limits({name}={value!r}): {name} must be at least {least}")
    return int(value)  # a subclass of int is kept as the plain int it stands for
