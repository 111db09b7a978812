"""One walk over a syntax tree before it is compiled: the nesting limit, and what the compiler
needs to know about names.

The parser is iterative, but compiling and running the tree recurse once or twice per level, so
`((((...))))`, `- - - x`, `a|f|f|f...` or a thousand nested `if` blocks would otherwise
end in Python's RecursionError; the walk itself uses an explicit stack.  The same walk collects
every name a scope of the template can hold (the compiler reads any other name straight from
the render's context), for each loop, macro and call block, which of the implicit names
(`loop`, `varargs`, `kwargs`, `caller`) its body reads, and where compiling a part of the
template could fail or decide something for the whole template (its risks: see `quiet`).
"""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

from ..errors import TemplateSyntaxError
from ..sandbox.limits import Limits
from ..syntax import nodes as n

# Names a scope receives without an assignment in the template's text.
IMPLICIT_NAMES = frozenset(["loop", "caller", "varargs", "kwargs"])

_OWNERS = (n.For, n.Macro, n.CallBlock)  # the statements whose body may read implicit names
_NAMING = (n.TargetName, n.Param, n.Macro)  # the nodes that put a name into a scope


# How deep a node may sit for a body around it to be compiled when it first runs rather than
# with the template: compiling it then adds its depth to the render's stack (see `quiet`).
DEFERRED_DEPTH = 40


class Analysis:
    __slots__ = ("assigned", "implicit_reads", "names", "sizes", "risks")
    assigned: frozenset[str]
    implicit_reads: dict[int, set[str]]
    #: Every name the template reads anywhere: no other variable of a context can reach it.
    names: frozenset[str]
    #: id of each expression a statement pays for (see _COSTED) -> its number of nodes
    sizes: dict[int, int]
    #: The sorted source offsets of the risks (see `quiet`); None when the whole template is one.
    risks: list[int] | None

    def __init__(
        self,
        assigned: frozenset[str],
        implicit_reads: dict[int, set[str]],
        names: frozenset[str],
        sizes: dict[int, int],
        risks: list[int] | None,
    ) -> None:
        self.assigned = assigned
        self.implicit_reads = implicit_reads
        self.names = names
        self.sizes = sizes
        self.risks = risks

    def quiet(self, start: int | None, end: int) -> bool:
        """Whether the source from `start` to `end` holds no risk: nothing whose compiling
        could fail (a `break` or `continue` outside a loop, an unknown filter or test, a loop
        variable named `loop`, a macro's bad parameters), add to what the whole template
        holds (a block, a read of `self`), or nest deeper than DEFERRED_DEPTH. Only such a
        part may be compiled when it first runs, with nothing to tell apart from compiling it
        with the template. (Break and continue count wherever they are: which loop holds them
        is the compiler's to know.)"""
        risks = self.risks
        if risks is None or start is None:
            return False
        at = bisect_left(risks, start)
        return at == len(risks) or risks[at] >= end

    def expression_size(self, *roots: Any) -> int:
        """`expression_size` of a statement's expressions, counted by the walk."""
        total = 0
        for root in roots:
            if root is not None:
                size = self.sizes.get(id(root))
                if size is None:  # (not a field the walk counted)
                    return expression_size(*roots)
                total += size
        return total

    def reads(self, owner: n.Node) -> set[str]:
        """The implicit names the body of a for, macro or call block node reads."""
        return self.implicit_reads[id(owner)]


def analyse(tree: n.Template, limits: Limits, filters: Any, tests: Any) -> Analysis:
    """Raise TemplateSyntaxError if `tree` nests deeper than `max_nesting`; else what the
    compiler needs (see the module's docstring). `filters` and `tests` are the names known
    (the risks count any other)."""
    limit = limits.max_nesting
    risks: list[int] = []
    # (a node without a position can't be placed: the whole template is then a risk)
    placed = True
    assigned = set(IMPLICIT_NAMES)
    implicit_reads: dict[int, set[str]] = {}
    names: set[str] = set()
    sizes: dict[int, int] = {}
    # (typed Any: the walk reads fields that only some node classes have, `name` among them)
    frozen: Any = n._Frozen
    shapes = _SHAPES
    name_cls, const_cls, no_arguments = n.Name, n.Const, n.NO_ARGUMENTS
    # Entries: (node, depth, the chain of bodies enclosing it as (reads, outer) pairs or None,
    # the id of the costed expression it belongs to or None).
    stack: list[tuple[Any, int, Any, Any]] = [(tree, 1, None, None)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth, owners, root = pop()
        cls = node.__class__
        if (
            cls is tuple
            or cls is list
            or (not isinstance(node, frozen) and isinstance(node, (tuple, list)))
        ):
            leaves = depth <= limit  # (see below)
            for item in node:
                item_cls = item.__class__
                if leaves and item_cls is const_cls:
                    if root is not None:
                        sizes[root] += 1
                elif leaves and item_cls is name_cls:
                    if root is not None:
                        sizes[root] += 1
                    _read_name(item.name, names, owners)
                elif isinstance(item, (frozen, tuple, list)):
                    if item or item_cls is not tuple:
                        push((item, depth, owners, root))
            continue
        if not isinstance(node, frozen):
            continue
        if root is not None:
            sizes[root] += 1
        if depth > limit:
            error = TemplateSyntaxError(f"the template nests deeper than max_nesting ({limit})")
            error.offset = getattr(node, "pos", None)
            raise error
        if cls is name_cls:
            _read_name(node.name, names, owners)
            continue
        shape = shapes.get(cls)
        if shape is None:
            shape = _shape(cls)
        role, fields, costed, risk = shape
        if (risk and _risky(node, risk, filters, tests)) or depth == DEFERRED_DEPTH:
            pos = getattr(node, "pos", None)  # (an argument list or a parameter has none)
            if pos is None:
                placed = False
            else:
                risks.append(pos)
        body_owners = owners
        if role:
            if role == _NAMES:
                assigned.add(node.name)
            elif role == _READS_NAME:  # {% set ns.x = ... %} reads ns
                names.add(node.name)
            else:
                if role == _NAMES_AND_OWNS:
                    assigned.add(node.name)
                reads: set[str] = set()
                implicit_reads[id(node)] = reads
                body_owners = (reads, owners)
        depth += 1
        for field in fields:
            value = getattr(node, field)
            if value is None:
                continue
            within = root
            if costed is not None and field in costed:
                within = id(value)
                sizes[within] = 0
            value_cls = value.__class__
            if depth <= limit:
                # The leaves of expressions (most nodes) are counted here rather than pushed:
                # nested no deeper than the limit, they cannot be the node that fails.
                if value_cls is const_cls:
                    if within is not None:
                        sizes[within] += 1
                    continue
                if value_cls is name_cls:
                    if within is not None:
                        sizes[within] += 1
                    _read_name(value.name, names, body_owners if field == "body" else owners)
                    continue
                if value is no_arguments:
                    if within is not None:
                        sizes[within] += 1
                    continue
            if value_cls is tuple and not value:
                continue  # (an empty body or argument list: nothing to visit)
            push((value, depth, body_owners if field == "body" else owners, within))
    risks.sort()
    if "self" in names:  # (whether `self` is read decides how the template is compiled)
        placed = False
    return Analysis(
        frozenset(assigned), implicit_reads, frozenset(names), sizes, risks if placed else None
    )


def _risky(node: Any, risk: int, filters: Any, tests: Any) -> bool:
    if risk == _ALWAYS:
        return True
    if risk == _FILTER:
        return node.name not in filters
    if risk == _TEST:
        return node.name not in tests
    if risk == _TARGET:
        return node.name == "loop"  # (refused as a loop's variable, or set inside a loop)
    if risk == _PARAMETERS:
        try:
            check_parameters(node.params, node.pos)
        except TemplateSyntaxError:
            return True
    return False


def check_parameters(params: tuple[n.Param, ...], pos: int | None) -> None:
    """Refuse a macro's or call block's parameters as Jinja does when it compiles them."""
    seen: set[str] = set()
    for param in params:
        if param.name in seen:
            error = TemplateSyntaxError(f"duplicate argument {param.name!r} in macro definition")
            error.offset = pos
            raise error
        seen.add(param.name)
        if param.name == "caller" and param.default is None:
            error = TemplateSyntaxError(
                'When defining macros or call blocks the special "caller" argument must be'
                " omitted or be given a default."
            )
            error.offset = pos
            raise error


def _read_name(name: str, names: set[str], owners: Any) -> None:
    names.add(name)
    if name in IMPLICIT_NAMES:
        while owners is not None:
            owners[0].add(name)
            owners = owners[1]


# What the walk does at a node besides visiting its children (see _shape).
_NAMES, _READS_NAME, _OWNS, _NAMES_AND_OWNS = 1, 2, 3, 4
# Which risk (see Analysis.quiet) a node of a class may be: none, always, or by a check.
_ALWAYS, _FILTER, _TEST, _TARGET, _PARAMETERS = 1, 2, 3, 4, 5
_RISKS: dict[type, int] = {
    n.Break: _ALWAYS,
    n.Continue: _ALWAYS,
    n.Block: _ALWAYS,
    n.Filter: _FILTER,
    n.Test: _TEST,
    n.TargetName: _TARGET,
    n.Macro: _PARAMETERS,
    n.CallBlock: _PARAMETERS,
}
_SHAPES: dict[type, tuple[int, tuple[str, ...], frozenset[str] | None, int]] = {}


def _shape(cls: type[n._Frozen]) -> tuple[int, tuple[str, ...], frozenset[str] | None, int]:
    """Per node class: its role (0 or one of the above), the fields walked, the costed ones,
    and its risk."""
    naming = issubclass(cls, _NAMING)
    owning = issubclass(cls, _OWNERS)
    if naming and owning:
        role = _NAMES_AND_OWNS
    elif owning:
        role = _OWNS
    elif naming:
        role = _NAMES
    elif cls is n.TargetAttr:
        role = _READS_NAME
    else:
        role = 0
    shape = (role, cls._children, _COSTED.get(cls), _RISKS.get(cls, 0))
    _SHAPES[cls] = shape
    return shape


# The fields whose expressions a statement pays a step per node for, each time it runs (see
# compiler): their sizes are counted by the walk rather than by walking them again.
_COSTED: dict[type, frozenset[str]] = {
    n.Output: frozenset(["expr"]),
    n.If: frozenset(["test"]),
    n.For: frozenset(["iter", "target", "condition"]),
    n.Assign: frozenset(["value", "target"]),
}


# Statements whose bodies run as functions of their own (a macro's, a caller's): a call inside
# them is not made when the statement runs, but when the function is called.
_FUNCTIONS = (n.Macro, n.CallBlock)
_STATEMENTS = (
    n.If,
    n.For,
    n.Macro,
    n.CallBlock,
    n.FilterBlock,
    n.With,
    n.Generation,
    n.Block,
    n.AssignBlock,
)


_LEAVES = frozenset([n.Name, n.Const])


def expression_size(*roots: Any) -> int:
    """The number of expression nodes in `roots` (nodes, tuples of them or None): what a
    statement costs in steps, besides its body, each time it runs."""
    if len(roots) == 1 and roots[0].__class__ in _LEAVES:
        return 1  # most printed and tested expressions
    count = 0
    stack = list(roots)
    pop, push, extend = stack.pop, stack.append, stack.extend
    frozen = n._Frozen
    while stack:
        node = pop()
        if isinstance(node, frozen):
            count += 1
            for field in node._children:
                push(getattr(node, field))
        elif node.__class__ is tuple or node.__class__ is list:
            extend(node)  # (names and operators among them are passed over when popped)
    return count


def call_depth(*roots: Any) -> int:
    """How deep below `roots` (a body and a function's default arguments) a call or call
    block sits: the levels of template code a macro call or recursive loop level keeps open
    while the next one runs (1 at least).  The bodies of functions defined inside are not
    walked: they are measured when they are called."""
    deepest = 1
    stack: list[tuple[Any, int]] = [(root, 1) for root in roots]
    pop, push = stack.pop, stack.append
    shapes = _CALL_DEPTH_SHAPES
    while stack:
        node, depth = pop()
        shape = shapes.get(node.__class__)
        if shape is None:
            if node.__class__ is tuple or node.__class__ is list:
                for item in node:
                    push((item, depth))  # (anything but a node, tuple or list is passed over)
                continue
            if not isinstance(node, n._Frozen):
                continue
            shape = _call_depth_shape(node.__class__)
        is_call, levels, fields = shape
        if is_call and depth > deepest:
            deepest = depth
        depth += levels
        for field in fields:
            value = getattr(node, field)
            if value is not None:
                push((value, depth))
    return deepest


# Per node class: whether it is a call, the levels of Python code it holds (a statement, as a
# for loop and its iteration: two), and the fields call_depth walks.
_CALL_DEPTH_SHAPES: dict[type, tuple[bool, int, tuple[str, ...]]] = {}


def _call_depth_shape(cls: type[n._Frozen]) -> tuple[bool, int, tuple[str, ...]]:
    skipped = ("body", "params") if issubclass(cls, _FUNCTIONS) else ()
    shape = (
        issubclass(cls, (n.Call, n.CallBlock)),
        2 if issubclass(cls, _STATEMENTS) else 1,
        tuple(field for field in cls._children if field not in skipped),
    )
    _CALL_DEPTH_SHAPES[cls] = shape
    return shape


def _declares(body: tuple[n.Node, ...]) -> bool:
    """Whether statements of `body` write variables into the scope they run in, or capture it
    (a macro or a call block's caller keeps the scope it is defined in).  A loop whose body does
    neither can run every iteration in one scope, its variable rebound each time."""
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, n.Assign):
            if not isinstance(node.target, n.TargetAttr):  # (`ns.x` is the namespace's)
                return True
        elif isinstance(node, (n.AssignBlock, n.Macro, n.CallBlock, n.Block)):
            return True
        elif isinstance(node, n.If):
            stack.extend(node.body)
            stack.extend(node.otherwise)
        elif isinstance(node, (n.FilterBlock, n.Generation)):
            stack.extend(node.body)
        # (a nested loop, `with` and the rest run their bodies in scopes of their own)
    return False
