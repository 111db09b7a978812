"""What reducing one grammar rule does with the values of its symbols, planned once per rule.

The parse table stores, for each rule, what the tree builder does with each child: drop a
filtered token (`d`), keep a value (`k`) or splice the list of an inlined rule (`s`); see
table.py.  The parser calls the function planned here at every reduction, so the common
shapes are written out rather than interpreted from the codes each time.
"""

from __future__ import annotations

import operator
from typing import Any


def reducer(codes: str, inline: bool, expand1: bool, callback: Any) -> Any:
    """What reducing one rule does with its children, decided once per rule: None when the
    children are the value as they come (an inlined rule keeping all of them), else a function
    of the list of children, the rule's builder itself wherever the list needs no reshaping."""
    if not inline and not expand1 and callback is None:  # pragma: no cover - never
        raise AssertionError("grammar rule without a builder")
    if codes == "k" * len(codes):
        if inline:
            return None
        # (with two or more children kept, `?rule` never hands a single child up)
        if not expand1 or len(codes) > 1:
            return callback

        def collect(values: list) -> list:
            return values
    elif "s" not in codes:
        keep = [i for i, code in enumerate(codes) if code == "k"]
        if len(keep) == 1 and (inline or expand1):
            (only,) = keep
            if expand1:
                return lambda values: values[only]
            return lambda values: [values[only]]
        if not inline and (not expand1 or len(keep) > 1):
            if not keep:
                return lambda values: callback([])
            if len(keep) == 1:
                (only,) = keep
                return lambda values: callback([values[only]])
            pick = operator.itemgetter(*keep)  # (a tuple of the kept values)
            return lambda values: callback(list(pick(values)))

        def collect(values: list) -> list:
            return [values[i] for i in keep]
    elif codes in ("s", "ss", "sk", "ks") and not expand1:
        return _splicer(codes, callback if not inline else None)
    elif codes[0] == "s":
        # A left-recursive repetition (`body: _node*` becomes `items: items _node`): the
        # items so far arrive as a list no one else holds, so it grows in place.  Copying
        # it on every reduction would make a body of n statements cost n**2.
        rest = tuple(codes[1:])

        def collect(values: list) -> list:
            children: list = values[0]
            for code, value in zip(rest, values[1:], strict=True):
                if code == "k":
                    children.append(value)
                elif code == "s":
                    children.extend(value)
            return children
    else:
        plan = tuple(codes)

        def collect(values: list) -> list:
            children: list = []
            for code, value in zip(plan, values, strict=True):
                if code == "k":
                    children.append(value)
                elif code == "s":
                    children.extend(value)
            return children

    if inline:
        return collect
    if expand1:

        def reduce_expand(values: list) -> Any:
            children = collect(values)
            if len(children) == 1:
                return children[0]
            return callback(children)

        return reduce_expand

    def reduce(values: list) -> Any:
        return callback(collect(values))

    return reduce


def _splicer(codes: str, callback: Any) -> Any:
    """The commonest rules that splice an inlined list, written out (see _reducer); the list
    on the left of a left-recursive repetition grows in place there too."""
    if codes == "s":
        if callback is None:
            return lambda values: values[0]
        return lambda values: callback(values[0])
    if codes == "ks":

        def head_and_rest(values: list) -> Any:
            children = [values[0]]
            children.extend(values[1])
            return children if callback is None else callback(children)

        return head_and_rest
    if codes == "ss":

        def extend(values: list) -> Any:
            children = values[0]
            children.extend(values[1])
            return children if callback is None else callback(children)

        return extend

    def append(values: list) -> Any:
        children = values[0]
        children.append(values[1])
        return children if callback is None else callback(children)

    return append
