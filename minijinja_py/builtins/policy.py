"""What a template may reach: the attribute policy over values, methods and runtime objects.

Templates see data, not objects.  Attribute access follows Jinja2's sandbox (attribute first,
then item, for `x.y`; item first, then attribute, for `x['y']`) with one difference: instead
of allowing every public attribute of a builtin value, only the allow-listed methods of
`methods` are reachable, so nothing of Python's object model leaks through.
"""

from __future__ import annotations

from typing import Any

from ..errors import LimitError
from ..sandbox.budget import check_length, current_limits
from ..sandbox.measure import check_key
from ..values.runtime import PLAIN_NAMESPACES, Namespace

# The lookups themselves live in access.py, which the compiled build compiles: named here too.
from .access import AttributePolicy, unsafe  # noqa: F401
from .costs import charge_for, charge_method  # noqa: F401


def check_pairs(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """`dict(pairs)` and `namespace(pairs)` hash the first item of each pair: check those
    keys, and charge the walk, before they do.  Returns the arguments to pass on (an iterator
    of pairs, such as `pairs|reverse`, as the list of its pairs, read once)."""
    checked = []
    limits = current_limits()
    for arg in args:
        if type(arg) is not list and hasattr(arg, "__next__"):
            iterator, arg = arg, []
            for pair in iterator:
                arg.append(pair)
                if len(arg) > limits.max_items:
                    raise LimitError(
                        f"an iterable of more than {limits.max_items} items exceeds max_items"
                    )
        checked.append(arg)
        if isinstance(arg, (list, tuple)):
            check_length(len(arg), limits, "dict")
            for pair in arg:
                if isinstance(pair, (tuple, list)) and pair and isinstance(pair[0], tuple):
                    check_key(pair[0])
    return tuple(checked)


class _DictType(type):
    # Prints as the ``dict`` type it stands for, as Jinja2's ``dict`` global prints.
    def __repr__(cls) -> str:
        return "<class 'dict'>"

    def __call__(cls, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*check_pairs(args), **kwargs)


# Refusals name it as Jinja2 names the real one: "... of 'type' object is unsafe."
_DictType.__name__ = _DictType.__qualname__ = "type"


class SandboxedDict(metaclass=_DictType):
    """The `dict` global: `dict(a=1)` and `dict(pairs)` build a plain dict, with the keys
    checked by `check_key`; the type itself exposes nothing (it is a type)."""

    fromkeys: Any
    fromkeys = dict.fromkeys  # present (and refused as unsafe) as on the real type


class SandboxedNamespace(Namespace):
    """The `namespace` global: a Namespace whose initial pairs have their keys checked."""

    __slots__ = ()

    def __init__(self, /, *args: Any, **kwargs: Any) -> None:
        # (keywords only, the usual call, have no pairs to check)
        self._attrs = dict(*check_pairs(args), **kwargs) if args else kwargs


# Python's type errors name it as Jinja2's class ("argument of type 'Namespace' ...").
SandboxedNamespace.__name__ = "Namespace"
PLAIN_NAMESPACES.add(SandboxedNamespace)
