"""How much constant folding may build: a folded constant's weight bounded by the source that
spells it, and only values whose repr is safe to keep (the compiler's _fold and _truth).
"""

from __future__ import annotations

from typing import Any

from ..syntax import nodes as n
from ..values.runtime import Markup

# Filters Jinja gives the render context: its optimizer never folds them.
_CONTEXT_FILTERS = frozenset(["random", "map", "select", "reject", "selectattr", "rejectattr"])


# A folded constant may weigh (items and characters, shared parts counted each time they are
# reached) this many times the source weight of the expression that makes it, plus this slack.
FOLD_FACTOR = 16
FOLD_SLACK = 1024


def _source_weight(node: Any) -> int:
    """The size of the source that spells `node`, as its nodes and literal characters: at
    least one character per node, and a literal's own length."""
    weight = 0
    stack = [node]
    pop, push = stack.pop, stack.append
    while stack:
        item = pop()
        if isinstance(item, tuple):
            for child in item:
                push(child)
            continue
        if not isinstance(item, (n.Node, n.Arguments)):
            continue
        weight += 1
        if isinstance(item, n.Const):
            value = item.value
            if isinstance(value, str):
                weight += len(value)
            elif isinstance(value, int):
                weight += value.bit_length() // 3
            continue
        for name in _slots(type(item)):
            push(getattr(item, name, None))
    return weight


def _slots(cls: type) -> tuple[str, ...]:
    names = _SLOTS.get(cls)
    if names is None:
        names = _SLOTS[cls] = tuple(
            name for klass in cls.__mro__ for name in getattr(klass, "__slots__", ()) if name != "pos"
        )
    return names


_SLOTS: dict[type, tuple[str, ...]] = {}


def _tree_weight(value: Any, most: int) -> int:
    """Items and characters of `value` as a tree (a list held twice counts twice: folding
    and copying walk it so), counted until they exceed `most`."""
    weight = 0
    stack = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        item = pop()
        weight += 1
        if isinstance(item, str):
            weight += len(item)
        elif isinstance(item, dict):
            weight += len(item)
            extend(item.keys())
            extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            weight += len(item)
            extend(item)
        if weight > most:
            break
    return weight


def _has_safe_repr(value: Any) -> bool:
    kind = type(value)
    if value is None or kind in _SAFE_SCALARS:
        return True
    if kind in (tuple, list, set, frozenset):
        return all(_has_safe_repr(item) for item in value)
    if kind is dict:
        return all(_has_safe_repr(k) and _has_safe_repr(v) for k, v in value.items())
    return False


_SAFE_SCALARS = frozenset([bool, int, float, complex, range, str, Markup])
