"""Static questions about a parsed template."""

from __future__ import annotations

from typing import Any

from ..syntax import nodes as n

_IMPLICIT = frozenset(["loop", "varargs", "kwargs", "caller"])


def undeclared_variables(tree: n.Template) -> set[str]:
    """Names the template may read from its context: read before (or without) being set."""
    found: set[str] = set()
    _walk_body(tree.body, set(), found)
    return found


def _walk_body(body: tuple[n.Node, ...], declared: set[str], found: set[str]) -> None:
    for node in body:
        _walk_statement(node, declared, found)


def _targets(target: n.Node) -> set[str]:
    if isinstance(target, n.TargetName):
        return {target.name}
    if isinstance(target, n.TargetTuple):
        names: set[str] = set()
        for item in target.items:
            names |= _targets(item)
        return names
    return set()


def _walk_statement(node: n.Node, declared: set[str], found: set[str]) -> None:
    if isinstance(node, n.Output):
        _walk_expr(node.expr, declared, found)
    elif isinstance(node, n.If):
        _walk_expr(node.test, declared, found)
        _walk_body(node.body, declared, found)
        _walk_body(node.otherwise, declared, found)
    elif isinstance(node, n.For):
        _walk_expr(node.iter, declared, found)
        inner = declared | _targets(node.target) | {"loop"}
        if node.condition is not None:
            _walk_expr(node.condition, inner, found)
        _walk_body(node.body, set(inner), found)
        _walk_body(node.otherwise, set(declared), found)
    elif isinstance(node, n.Assign):
        _walk_expr(node.value, declared, found)
        if isinstance(node.target, n.TargetAttr):
            _note(node.target.name, declared, found)
        declared |= _targets(node.target)
    elif isinstance(node, n.AssignBlock):
        _walk_body(node.body, set(declared), found)
        _walk_filters(node.filters, declared, found)
        declared |= _targets(node.target)
    elif isinstance(node, (n.Macro, n.CallBlock)):
        if isinstance(node, n.CallBlock):
            _walk_expr(node.call, declared, found)
        params = {p.name for p in node.params}
        inner = declared | params | _IMPLICIT
        for param in node.params:
            if param.default is not None:
                _walk_expr(param.default, inner, found)
        _walk_body(node.body, set(inner), found)
        if isinstance(node, n.Macro):
            declared.add(node.name)
    elif isinstance(node, n.FilterBlock):
        _walk_filters(node.filters, declared, found)
        _walk_body(node.body, set(declared), found)
    elif isinstance(node, n.With):
        inner = set(declared)
        for target, value in node.assignments:
            _walk_expr(value, declared, found)
            inner |= _targets(target)
        _walk_body(node.body, inner, found)
    elif isinstance(node, n.Generation):
        _walk_body(node.body, set(declared), found)


def _walk_filters(filters: tuple[n.Filter, ...], declared: set[str], found: set[str]) -> None:
    for item in filters:
        _walk_expr(item.arguments, declared, found)


def _note(name: str, declared: set[str], found: set[str]) -> None:
    if name not in declared:
        found.add(name)


def _walk_expr(node: Any, declared: set[str], found: set[str]) -> None:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, n.Name):
            _note(item.name, declared, found)
        elif isinstance(item, (tuple, list)):
            stack.extend(item)
        elif isinstance(item, (n.Node, n.Arguments)):
            for slot in type(item).__slots__:
                stack.append(getattr(item, slot))
