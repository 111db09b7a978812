"""The built-in filters on values and sequences: defaults, lists, sorting, grouping, map and
select (with the environment's own filters and tests)."""

from __future__ import annotations

from collections import abc
from collections.abc import Callable, Iterator
from itertools import chain, groupby
from typing import Any, NamedTuple

from ..errors import FilterArgumentError
from ..sandbox.budget import (
    charge_work,
    check_length,
    check_size,
    costly,
    current_limits,
    no_charge,
)
from ..sandbox.format_spec import join_bound
from ..sandbox.measure import PLAIN_TYPES, check_key
from ..sandbox.opaque import shown_str
from ..values.runtime import Undefined, pass_environment, wants_environment
from .costs import (
    COMPARE,
    FREE,
    SCAN,
    SORT,
    WALK,
    Cost,
    charge_for,
    guarded,
)
from .filter_support import (
    _generator_name,
    _ignore_case,
    _jinja_name,
    _like,
    _text,
    make_attrgetter,
    make_multi_attrgetter,
)
from .methods import (
    max_string,
)
from .tests import test_eq, test_ne

# ---------------------------------------------------------------------------------------------
# values and sequences


def do_default(value: Any, default_value: Any = "", boolean: bool = False) -> Any:
    """`{{ missing|default("x") }}` -> `x`; `{{ ""|d("x", true) }}` -> `x`"""
    if isinstance(value, Undefined) or (boolean and not value):
        return default_value
    return value


def do_length(*args: Any, **kwargs: Any) -> int:
    """`{{ [1, 2]|length }}` -> `2`"""
    return len(*args, **kwargs)


@_jinja_name("sync_do_list")
def do_list(value: Any) -> list[Any]:
    """`{{ "ab"|list }}` -> `['a', 'b']`"""
    return list(value)


@_jinja_name("sync_do_first")
@pass_environment
def do_first(environment: Any, seq: Any) -> Any:
    """`{{ [1, 2]|first }}` -> `1`"""
    try:
        return next(iter(seq))
    except StopIteration:
        return environment.undefined("No first item, sequence was empty.")


@pass_environment
def do_last(environment: Any, seq: Any) -> Any:
    """`{{ [1, 2]|last }}` -> `2` (not for generators: `|list|last`)"""
    try:
        return next(iter(reversed(seq)))
    except StopIteration:
        return environment.undefined("No last item, sequence was empty.")


@pass_environment
def do_random(context: Any, seq: Any) -> Any:
    """`{{ [1, 2, 3]|random }}` -> one of the items, chosen at random"""
    import random

    try:
        return random.choice(seq)
    except IndexError:
        return context.undefined("No random item, sequence was empty.")


def do_reverse(value: Any) -> Any:
    """`{{ "abc"|reverse }}` -> `cba`; `{{ [1, 2]|reverse|list }}` -> `[2, 1]`"""
    if isinstance(value, str):
        return _like(value, str.__getitem__(value, slice(None, None, -1)))
    try:
        return reversed(value)
    except TypeError:
        try:
            rv = list(value)
        except TypeError as exc:
            raise FilterArgumentError("argument must be iterable") from exc
        rv.reverse()
        return rv


@_jinja_name("sync_do_join")
@pass_environment
def do_join(eval_ctx: Any, value: Any, d: Any = "", attribute: Any = None) -> str:
    """`{{ [1, 2, 3]|join("|") }}` -> `1|2|3`"""
    if attribute is not None:
        value = map(make_attrgetter(eval_ctx, attribute), value)
    # Each item's text is measured before any is made: ``[big_list] * 1000`` prints the list
    # a thousand times.
    separator, items = _text(d), list(value)
    check_size(join_bound(separator, items, max_string(eval_ctx)), eval_ctx)
    items = [item if type(item) is str else shown_str(item) for item in items]
    return separator.join(items)


def _min_or_max(
    env: Any, value: Any, func: Callable[..., Any], case_sensitive: bool, attribute: Any
) -> Any:
    it = iter(value)
    try:
        first = next(it)
    except StopIteration:
        return env.undefined("No aggregated item, sequence was empty.")
    key = make_attrgetter(env, attribute, postprocess=None if case_sensitive else _ignore_case)
    return func(chain([first], it), key=key)


@pass_environment
def do_min(
    environment: Any, value: Any, case_sensitive: bool = False, attribute: Any = None
) -> Any:
    """`{{ [3, 1, 2]|min }}` -> `1`; `{{ ["b", "A"]|min }}` -> `A`"""
    return _min_or_max(environment, value, min, case_sensitive, attribute)


@pass_environment
def do_max(
    environment: Any, value: Any, case_sensitive: bool = False, attribute: Any = None
) -> Any:
    """`{{ [3, 1, 2]|max }}` -> `3`"""
    return _min_or_max(environment, value, max, case_sensitive, attribute)


@_jinja_name("sync_do_sum")
@pass_environment
def do_sum(environment: Any, iterable: Any, attribute: Any = None, start: Any = 0) -> Any:
    """`{{ [1, 2, 3]|sum }}` -> `6`; `{{ items|sum(attribute="price") }}`"""
    if attribute is not None:
        iterable = map(make_attrgetter(environment, attribute), iterable)
    if not isinstance(start, (list, tuple)):
        return sum(iterable, start)
    # Summing lists or strings copies the total at each item: the work grows with the
    # square of the result, so each addition goes through the checked operator.
    from .ops import make_add

    add = make_add(current_limits())
    total = start
    for item in iterable:
        total = add(total, item)
        charge_work(items=len(total) if hasattr(total, "__len__") else 0)
    return total


def do_dictsort(
    value: Any, case_sensitive: bool = False, by: str = "key", reverse: bool = False
) -> list[tuple[Any, Any]]:
    """`{{ {"b": 1, "A": 2}|dictsort }}` -> `[('A', 2), ('b', 1)]`"""
    if by == "key":
        pos = 0
    elif by == "value":
        pos = 1
    else:
        raise FilterArgumentError('You can only sort by either "key" or "value"')

    def sort_key(item: tuple[Any, Any]) -> Any:
        return item[pos] if case_sensitive else _ignore_case(item[pos])

    return sorted(value.items(), key=sort_key, reverse=reverse)


@pass_environment
def do_sort(
    environment: Any,
    value: Any,
    reverse: bool = False,
    case_sensitive: bool = False,
    attribute: Any = None,
) -> list[Any]:
    """`{{ [3, 1, 2]|sort }}` -> `[1, 2, 3]`; `users|sort(attribute="age,name")`"""
    key = make_multi_attrgetter(
        environment, attribute, postprocess=None if case_sensitive else _ignore_case
    )
    return sorted(value, key=key, reverse=reverse)


@_generator_name("sync_do_unique")
def _unique_items(
    env: Any, value: Any, case_sensitive: bool = False, attribute: Any = None
) -> Iterator[Any]:
    getter = make_attrgetter(env, attribute, postprocess=None if case_sensitive else _ignore_case)
    seen = set()
    for item in value:
        key = getter(item)
        if type(key) is tuple:
            check_key(key)  # hashing a deep tuple crashes CPython; see sandbox.check_key
        if key not in seen:
            seen.add(key)
            yield item


@_jinja_name("sync_do_unique")
@pass_environment
def do_unique(
    environment: Any, value: Any, case_sensitive: bool = False, attribute: Any = None
) -> Iterator[Any]:
    """`{{ ["a", "b", "A"]|unique|list }}` -> `['a', 'b']`"""
    return _unique_items(environment, value, case_sensitive, attribute)


def do_items(value: Any) -> Iterator[tuple[Any, Any]]:
    """`{{ {"a": 1}|items|list }}` -> `[('a', 1)]`; undefined gives nothing"""
    if isinstance(value, Undefined):
        return
    if not isinstance(value, abc.Mapping):
        raise TypeError("Can only get item pairs from a mapping.")
    yield from value.items()


def do_batch(value: Any, linecount: int, fill_with: Any = None) -> Iterator[list[Any]]:
    """`{{ [1, 2, 3]|batch(2, 0)|list }}` -> `[[1, 2], [3, 0]]`"""
    tmp: list[Any] = []
    for item in value:
        if len(tmp) == linecount:
            yield tmp
            tmp = []
        tmp.append(item)
    if tmp:
        if fill_with is not None and len(tmp) < linecount:
            check_length(linecount, current_limits(), "list")
            tmp += [fill_with] * (linecount - len(tmp))
        yield tmp


@_generator_name("sync_do_slice")
def _slice_items(value: Any, slices: int, fill_with: Any = None) -> Iterator[list[Any]]:
    seq = list(value)
    # One list per slice, made whatever the input's length: counted before they are made.
    if isinstance(slices, int):
        check_length(slices, current_limits(), "list")
    length = len(seq)
    per_slice = length // slices
    with_extra = length % slices
    offset = 0
    for number in range(slices):
        start = offset + number * per_slice
        if number < with_extra:
            offset += 1
        end = offset + (number + 1) * per_slice
        part = seq[start:end]
        if fill_with is not None and number >= with_extra:
            part.append(fill_with)
        yield part


@_jinja_name("sync_do_slice")
def do_slice(value: Any, slices: int, fill_with: Any = None) -> Iterator[list[Any]]:
    """`{{ [1, 2, 3]|slice(2)|list }}` -> `[[1, 2], [3]]`"""
    return _slice_items(value, slices, fill_with)


class _GroupTuple(NamedTuple):
    grouper: Any
    list: list[Any]

    # Printed like a plain tuple, as in Jinja2 (tuple's own methods: sandbox/opaque.py prints
    # one holding a method as it prints a tuple)
    __repr__ = tuple.__repr__
    __str__ = tuple.__str__


@_jinja_name("sync_do_groupby")
@pass_environment
def do_groupby(
    environment: Any, value: Any, attribute: Any, default: Any = None, case_sensitive: bool = False
) -> list[_GroupTuple]:
    """`{% for city, users in users|groupby("city") %}`: sorted groups of `(grouper, list)`"""
    key = make_attrgetter(
        environment,
        attribute,
        postprocess=None if case_sensitive else _ignore_case,
        default=default,
    )
    groups = [_GroupTuple(k, list(items)) for k, items in groupby(sorted(value, key=key), key)]
    if not case_sensitive:
        # The group shows the key as its first item spells it, not lowercased.
        real_key = make_attrgetter(environment, attribute, default=default)
        groups = [_GroupTuple(real_key(items[0]), items) for _, items in groups]
    return groups


@pass_environment
def do_attr(environment: Any, obj: Any, name: str) -> Any:
    """`{{ foo|attr("bar") }}` is `foo.bar` without falling back to `foo["bar"]`"""
    from inspect import getattr_static

    # getattr_static sees attributes without running descriptors; hasattr then catches the
    # dynamic ones.  Only an existing attribute goes to environment.getattr, which would otherwise
    # fall back to item lookup.
    try:
        getattr_static(obj, name)
    except AttributeError:
        if not hasattr(obj, name):
            return environment.undefined(obj=obj, name=name)
    return environment.getattr(obj, name)


def _registered(env: Any, kind: str, name: Any, args: tuple, kwargs: dict) -> Callable[[Any], Any]:
    """`item -> env.call_filter(name, item, args, kwargs)` (or `call_test`) with the filter
    or test looked up once rather than for each item, and each call charged as a filter or
    test the template called itself; an unknown name still fails only when the first item is
    given to it."""
    func = _lookup_registered(env, kind, name, args, kwargs)
    if kind == "test" and len(args) == 1 and not kwargs and args[0].__class__ in PLAIN_TYPES:
        # selectattr('role', 'equalto', 'user'): comparing with a string or a number takes at
        # most the time of reading that argument (charged as the filter's), and nests nothing;
        # made in place, without the test's own frame.
        test = _own_function(env, kind, name)
        other = args[0]
        if test is test_eq:
            return lambda item: item == other
        if test is test_ne:
            return lambda item: item != other
    charge = charge_for(kind, name if isinstance(name, str) else "")
    if charge is no_charge:
        return func

    def charged(item: Any) -> Any:
        # (``map('upper')`` over a thousand big strings pays for each; short strings and
        # scalars cost nothing, as when the template calls the filter itself)
        if costly(item):
            charge(item, None)
        result = func(item)
        if costly(result):
            charge(None, result)
        return result

    return charged


def _own_function(env: Any, kind: str, name: Any) -> Any:
    """The filter or test `name` as the environment holds it, when the environment calls
    it as ours does; else None (a caller's own environment, an unknown or unhashable name)."""
    method = "call_filter" if kind == "filter" else "call_test"
    environment = _environment_class()
    if (
        environment is None
        or getattr(type(env), method, None) is not getattr(environment, method)
        or getattr(type(env), "_call_registered", None) is not environment._call_registered
    ):
        return None
    try:
        return (env.filters if kind == "filter" else env.tests).get(check_key(name))
    except TypeError:
        return None


def _lookup_registered(
    env: Any, kind: str, name: Any, args: tuple, kwargs: dict
) -> Callable[[Any], Any]:
    func = _own_function(env, kind, name)
    if func is None:
        # The environment's own call: a caller's environment, or a name that fails ("No test
        # named ...", unhashable) only when the first item meets it.
        call = getattr(env, "call_filter" if kind == "filter" else "call_test")
        return lambda item: call(name, item, args, kwargs)
    if wants_environment(func):
        return lambda item: func(env, item, *args, **kwargs)
    if not args and not kwargs:
        return func
    return lambda item: func(item, *args, **kwargs)


def _environment_class() -> type | None:
    # The Environment class, registered by environment.py (which sits above this module) when
    # it builds its first environment: None before, when no environment of ours exists.
    return _ENVIRONMENT


def use_environment(environment: type) -> None:
    """Let map, select and their kin call the filters and tests of `environment`'s
    instances directly when their class calls them as `environment` does."""
    global _ENVIRONMENT
    _ENVIRONMENT = environment


_ENVIRONMENT: type | None = None


@_generator_name("sync_do_map")
def _map_items(env: Any, value: Any, args: tuple, kwargs: dict) -> Iterator[Any]:
    if not value:
        return
    if not args and "attribute" in kwargs:
        attribute = kwargs.pop("attribute")
        default = kwargs.pop("default", None)
        if kwargs:
            raise FilterArgumentError(f"Unexpected keyword argument {next(iter(kwargs))!r}")
        func = make_attrgetter(env, attribute, default=default)
    else:
        if not args:
            raise FilterArgumentError("map requires a filter argument")
        name, args = args[0], args[1:]
        func = _registered(env, "filter", name, args, kwargs)

    for item in value:
        yield func(item)


@_jinja_name("sync_do_map")
@pass_environment
def do_map(context: Any, value: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
    """`{{ ["a", "b"]|map("upper")|join }}` -> `AB`; `users|map(attribute="name")`"""
    return _map_items(context, value, args, kwargs)


def select_or_reject(
    env: Any,
    value: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    select: bool,
    lookup_attr: bool,
) -> Iterator[Any]:
    if not value:
        return
    if lookup_attr:
        if not args:
            raise FilterArgumentError("Missing parameter for attribute name")
        transform = make_attrgetter(env, args[0])
        args = args[1:]
    else:

        def transform(item: Any) -> Any:
            return item

    if args:
        name, args = args[0], args[1:]
        check = _registered(env, "test", name, args, kwargs)
    else:
        check = bool

    for item in value:
        if bool(check(transform(item))) is select:
            yield item


@_jinja_name("sync_do_select")
@pass_environment
def do_select(context: Any, value: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
    """`{{ [1, 2, 3]|select("odd")|list }}` -> `[1, 3]`"""
    return select_or_reject(context, value, args, kwargs, True, False)


@_jinja_name("sync_do_reject")
@pass_environment
def do_reject(context: Any, value: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
    """`{{ [1, 2, 3]|reject("odd")|list }}` -> `[2]`"""
    return select_or_reject(context, value, args, kwargs, False, False)


@_jinja_name("sync_do_selectattr")
@pass_environment
def do_selectattr(context: Any, value: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
    """`{{ users|selectattr("email", "none")|list }}`: users whose email is none"""
    return select_or_reject(context, value, args, kwargs, True, True)


@_jinja_name("sync_do_rejectattr")
@pass_environment
def do_rejectattr(context: Any, value: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
    """`{{ users|rejectattr("is_active")|list }}`: users that are not active"""
    return select_or_reject(context, value, args, kwargs, False, True)


# The costs of the value and sequence filters (see costs.py and the note in filters.py).
SEQUENCE_FILTER_COSTS: dict[str, Cost] = {
    "attr": FREE,
    "batch": guarded(WALK, "linecount: the number of rows, within max_items"),
    "count": FREE,
    "d": FREE,
    "default": FREE,
    "dictsort": SORT,
    "first": FREE,
    "groupby": SORT,
    "items": WALK,
    "join": guarded(COMPARE, "separator times items plus items: within max_string"),
    "last": FREE,
    "length": FREE,
    "list": WALK,
    "map": WALK,
    "max": COMPARE,
    "min": COMPARE,
    "random": SCAN,
    "reject": WALK,
    "rejectattr": WALK,
    "reverse": SCAN,
    "select": WALK,
    "selectattr": WALK,
    "slice": guarded(WALK, "slices: within max_items"),
    "sort": SORT,
    "sum": WALK,
    "unique": COMPARE,
}
