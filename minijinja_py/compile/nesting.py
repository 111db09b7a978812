"""Which expressions may build a value nesting deeper than the values they read: the compiler
has an assignment of such an expression measure what it stores (check_nesting, in
sandbox/measure.py), and lets the others store theirs unmeasured.
"""

from __future__ import annotations

from ..syntax import nodes as n

# Filters whose result nests no deeper than their input.
_FLAT_FILTERS = frozenset(
    """list first last default d select reject selectattr rejectattr unique reverse sort trim
    string lower upper length count join tojson replace safe e escape int float abs round
    capitalize title striptags indent wordcount truncate center format""".split()
)


# Methods whose result holds nothing deeper than their receiver or arguments (a str or list of
# them, a number, an item of the receiver, an argument, a view of the receiver).
_FLAT_METHODS = frozenset(
    """get copy index count strip lstrip rstrip split rsplit splitlines lower
    upper title capitalize casefold swapcase replace startswith endswith find rfind join format
    partition rpartition center ljust rjust zfill removeprefix removesuffix isdigit isalpha
    isalnum isspace isupper islower istitle isnumeric isdecimal""".split()
)


def _constant_literal(node: n.Node) -> bool:
    # (its depth is the source's: the same on every pass)
    if isinstance(node, n.Const):
        return True
    if isinstance(node, (n.ListLit, n.TupleLit)):
        return all(_constant_literal(item) for item in node.items)
    if isinstance(node, n.DictLit):
        return all(_constant_literal(k) and _constant_literal(v) for k, v in node.pairs)
    return False


def _may_nest(node: n.Node | None) -> bool:
    """Whether `node`'s value may nest deeper than the values it reads (see
    measure.check_nesting): literals that hold what they read, most calls and most filters may."""
    while True:
        if isinstance(node, (n.Name, n.Const, n.Concat, n.Compare, n.Unary, n.Test)):
            return False
        if isinstance(node, (n.ListLit, n.TupleLit, n.DictLit)):
            return not _constant_literal(node)
        if (
            isinstance(node, n.Call)
            and isinstance(node.func, n.GetAttr)
            and node.func.attr in _FLAT_METHODS
            and node.arguments.star is None
            and node.arguments.dstar is None
        ):
            arguments = [*node.arguments.args, *(v for _, v in node.arguments.kwargs)]
            if any(_may_nest(argument) for argument in arguments):
                return True
            node = node.func.obj
            continue
        if isinstance(node, (n.GetAttr, n.GetItem)):
            node = node.obj
        elif isinstance(node, n.Filter) and node.name in _FLAT_FILTERS:
            node = node.value
        elif isinstance(node, (n.And, n.Or)):
            return _may_nest(node.left) or _may_nest(node.right)
        elif isinstance(node, n.CondExpr):
            return _may_nest(node.then) or (
                node.otherwise is not None and _may_nest(node.otherwise)
            )
        else:
            return True
