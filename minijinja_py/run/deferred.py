"""A branch of an `if`, or a macro's body, compiled when it first runs rather than with the
template.

A chat template is mostly branches that one conversation never takes: tools, documents, other
roles, thinking, error messages. Two thirds of the corpus's syntax trees sit in bodies that a
template's first render does not run (and a few macros it never calls), and compiling them is
a third of a cold render. The compiler hands such a body over as a `DeferredBody` when nothing
in it could make compiling it fail or change what the whole template is (see
compile/analysis.py, `Analysis.quiet`), so that compiling it later gives exactly what compiling
it now would.

Once compiled, the body takes the deferred one's place in every evaluator that holds it (an
`if`, the dict of an `IfSwitch`, a macro's definition), with its cost, so that later renders
run it directly. A macro compiles its body before a call charges its cost, so that a call is
charged all of it at once, as it would be.
"""

from __future__ import annotations

from typing import Any

from .evaluator import Statement
from .frames import Frame


class DeferredBody(Statement):
    """Costs nothing where it is held (it charges the compiled body's cost itself, where the
    holder would have, just before running it) until it has been compiled and put in its
    place."""

    __slots__ = ("compiler", "nodes", "context", "compiled", "places", "cost")
    compiler: Any  # the template's Compiler
    nodes: Any
    context: Any  # what the compiler knew where the body is (compile_deferred restores it)
    compiled: Statement | None
    places: list[Any]  # (holder, how it holds the body) pairs: see `settle`
    cost: int

    def __init__(self, compiler: Any, nodes: Any, context: Any) -> None:
        self.compiler = compiler
        self.nodes = nodes
        self.context = context
        self.compiled = None
        self.places = []
        self.cost = 0

    def run(self, frame: Frame, out: list[Any]) -> None:
        body = self.ready()
        if body.cost:
            frame.state.steps += body.cost
        body.run(frame, out)

    def held_by(self, holder: Any, how: Any) -> None:
        """`holder` keeps this body (once per holder, however many of its slots hold it) and
        takes the compiled one with `holder.take_compiled(self, body, how)`."""
        if all(place[0] is not holder for place in self.places):
            self.places.append((holder, how))

    def ready(self) -> Statement:
        """The compiled body, compiled now if it was not (and put in its places)."""
        body = self.compiled
        if body is None:
            body = self.compiler.compile_deferred(self)
        return body

    def settle(self, body: Statement) -> None:
        """Keep `body` as this one's compiled form and put it in this one's places (called
        once, under the compiler's lock). A holder that still runs this one (another thread
        between reading its body and running it) finds `compiled` and runs that: nothing is
        compiled twice."""
        self.compiled = body
        for holder, how in self.places:
            holder.take_compiled(self, body, how)
