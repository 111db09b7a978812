"""The bounds of one render: what a template may spend (see `Limits`).

Its own module, at the bottom of the sandbox, so that the compiler's analysis and the chat layer
can name the limits without importing the budget that counts against them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Resource bounds of one render; exceeding one raises `LimitError` naming it.

    The defaults let every template of the real chat-template corpus render conversations of
    thousands of messages, and stop each known denial-of-service pattern within about a second
    on a slow machine.  Pass your own `Limits(...)` to `Environment(limits=...)` to change
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

    #: work of one render: every statement (one step plus one per node of its expressions),
    #: loop iteration (also those a ``for ... if`` rejects), macro and function call; every
    #: built-in operation is charged before it runs by the sizes it reads and makes
    max_steps: int = 200_000
    #: extra steps per squared item of the context: a render whose context holds n items
    #: (the entries of its top-level lists and dicts, such as the messages) may take
    #: ``max_steps + max_steps_growth * n**2`` steps, because real chat templates walk the
    #: messages inside a walk over the messages (2,000 messages: 12.2 million steps)
    max_steps_growth: int = 3
    #: characters of output, the final text and any captured block alike
    max_output: int = 50_000_000
    #: nesting of macro calls and recursive loops (counted by the engine, never read off
    #: Python's stack), and of data: every value a template stores, prints, compares, hashes
    #: or sorts
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
    #: bytes of strings, lists, tuples and dicts one render may create, counted when each is
    #: made (copies, folded constants and error messages too) and never given back; values
    #: under a kilobyte are not counted (their number is bounded by the step budget).  Grows
    #: like the step budget: ``max_memory_growth`` more bytes per squared item of the context
    max_memory: int = 256_000_000
    #: extra bytes of max_memory per squared item of the context (see max_steps_growth)
    max_memory_growth: int = 256
    #: characters of a template's source; longer sources are refused before they are parsed
    max_source: int = 500_000
