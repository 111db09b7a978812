"""The shortcuts taken for speed answer exactly as the general code they bypass: same values,
same errors, same steps charged to the budget."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minijinja_py as mj
from minijinja_py import Limits
from minijinja_py.builtins.ops import COMPARISONS, make_add
from minijinja_py.builtins.policy import AttributePolicy
from minijinja_py.errors import LimitError, SecurityError, UndefinedError
from minijinja_py.sandbox import budget as budget_module
from minijinja_py.sandbox import measure as measure_module
from minijinja_py.sandbox.budget import Budget
from minijinja_py.sandbox.measure import check_printable
from minijinja_py.values.runtime import LoopContext, Markup, Namespace, Undefined, escape

# ---------------------------------------------------------------------------------------------
# check_printable: the quick measure of small structures against the full walk

leaves = st.one_of(
    st.text(max_size=12),
    st.integers(),
    st.none(),
    st.booleans(),
    st.text(max_size=4).map(Markup),
)
keys = st.one_of(st.text(max_size=6), st.integers(), st.tuples(st.text(max_size=3)))
structures = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=6),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(keys, inner, max_size=5),
    ),
    max_leaves=40,
).filter(lambda v: type(v) in (list, tuple, dict))


def _outcome(value, limits: Limits, full_walk: bool, monkeypatch) -> tuple:
    if full_walk:
        monkeypatch.setattr(measure_module, "_SMALL_NODES", 0)
    budget = Budget(limits)
    token = budget_module.enter_render(budget)
    try:
        check_printable(value)
        result: tuple = ("ok", budget.steps)
    except LimitError as error:
        result = ("error", str(error), budget.steps)
    finally:
        budget_module.leave_render(token)
        monkeypatch.undo()
    return result


@settings(max_examples=300, deadline=None)
@given(
    value=structures,
    max_string=st.integers(1, 400),
    max_items=st.integers(1, 40),
    max_steps=st.integers(1, 60),
)
def test_quick_measure_is_the_full_walk(value, max_string, max_items, max_steps):
    limits = Limits(max_string=max_string, max_items=max_items, max_steps=max_steps)
    with pytest.MonkeyPatch.context() as monkeypatch:
        quick = _outcome(value, limits, False, monkeypatch)
        full = _outcome(value, limits, True, monkeypatch)
    assert quick == full


@pytest.mark.parametrize("count", [2000, 2047, 2048, 4095, 5000, 10_000])
def test_charges_around_the_quick_measure_bound(count, monkeypatch):
    # A dict of n str items is 2n + 1 nodes: both sides of the 4095-node bound.
    value = {str(i): "x" for i in range(count)}
    limits = Limits()
    assert _outcome(value, limits, False, monkeypatch) == _outcome(value, limits, True, monkeypatch)


# ---------------------------------------------------------------------------------------------
# the budget, scaled to the context when first needed


def test_scaled_budget_read_before_and_after_steps():
    budget = Budget(Limits(max_steps=10, max_steps_growth=1))
    budget.scale_to({"messages": [{}] * 3, "name": "x"})
    assert (budget.budget, budget.items) == (19, 3)
    budget.charge(19)
    with pytest.raises(LimitError, match=r"budget of 19 steps .* x 3\*\*2 for a context of 3"):
        budget.charge(1)


def test_scaled_budget_fires_at_the_same_step():
    env = mj.Environment(limits=Limits(max_steps=1000, max_steps_growth=1))
    template = env.from_string("{% for i in range(n) %}.{% endfor %}")
    items = list(range(40))  # 1000 + 40**2 = 2600 steps
    # (the loop pays for its range: 2,500 items and their copy, 39 steps, and its start)
    assert len(template.render(n=2500, items=items)) == 2500
    with pytest.raises(LimitError, match="budget of 2600 steps"):
        template.render(n=2700, items=items)
    with pytest.raises(LimitError, match=r"exceeded max_steps \(1000\)"):
        template.render(n=1200)


# ---------------------------------------------------------------------------------------------
# attribute and item lookups


@pytest.fixture
def policy():
    return AttributePolicy(mj.Environment())


def _general_getattr(policy, obj, name):
    # The general path, reached by a name of a str subclass (not a str): same answers.
    class Name(str):
        __slots__ = ()

    return policy.getattr(obj, Name(name))


def _same(a, b) -> bool:
    if isinstance(a, Undefined) or isinstance(b, Undefined):
        return (
            type(a) is type(b)
            and a._undefined_message == b._undefined_message
            and a._undefined_exception is b._undefined_exception
        )
    if callable(a):
        # (a wrapper made per lookup, such as str.format's, is another object each time)
        wrapped = getattr(a, "__wrapped__", None)
        return type(a) is type(b) and (
            repr(a) == repr(b) or (wrapped is not None and wrapped == b.__wrapped__)
        )
    return a == b


@pytest.mark.parametrize(
    "obj",
    ["text", "x" * 3000, {"get": 1, "role": "user"}, {}, LoopContext([1, 2], 0, None)],
)
@pytest.mark.parametrize(
    "name",
    ["strip", "upper", "format", "join", "encode", "get", "items", "copy", "keys", "role",
     "index0", "last", "length", "cycle", "_items", "mro", "nope"],
)  # fmt: skip
def test_getattr_shortcuts(policy, obj, name):
    assert _same(policy.getattr(obj, name), _general_getattr(policy, obj, name))


def test_getattr_namespace(policy):
    ns = mj.environment.ChatNamespace(a=1)
    assert policy.getattr(ns, "a") == 1
    assert isinstance(policy.getattr(ns, "b"), Undefined)
    with pytest.raises(SecurityError):
        policy.getattr(ns, "_attrs") + 1


def test_getattr_charges_a_long_string_as_before():
    budget = Budget(Limits())
    token = budget_module.enter_render(budget)
    try:
        AttributePolicy(mj.Environment()).getattr("x" * 5000, "strip")
    finally:
        budget_module.leave_render(token)
    assert budget.steps == 4


@pytest.mark.parametrize(
    "obj, key",
    [
        ("text", "type"),
        ("text", "upper"),
        ("text", "encode"),
        ("text", "_x"),
        ("text", "format"),
        ({"a": 1}, "a"),
        ({"a": 1}, "b"),
        ({"a": 1}, "items"),
        ({"a": 1}, "_b"),
        ({"a": 1}, "mro"),
    ],
)
def test_getitem_shortcuts(policy, obj, key):
    class Key(str):
        __slots__ = ()

    assert _same(policy.getitem(obj, key), policy.getitem(obj, Key(key)))


@pytest.mark.parametrize(
    "key", ["role", "tool_calls", "items", "get", "_b", "__class__", "fromkeys", "pop", "upper"]
)
@pytest.mark.parametrize("undefined", [mj.Undefined, mj.StrictUndefined, mj.ChainableUndefined])
def test_constant_key_of_a_dict_answers_as_the_policy(key, undefined):
    # `m['tool_calls']` on a message without them makes the environment's undefined itself
    # (run/expressions.py GetConstItem.missed), for a key that is no dict method or attribute
    # name; every other key still asks the policy: the answers must be the policy's.
    from minijinja_py.sandbox.budget import enter_render, leave_render

    environment = mj.Environment(undefined=undefined)
    found = {}
    for message in ({"role": "user"}, {}):
        compiled = environment.from_string(f"{{{{ f(m[{key!r}], {{'m': m}}['m'][{key!r}]) }}}}")
        compiled.render(m=message, f=lambda a, b: found.setdefault(len(found), (a, b)) and "")
        budget = Budget(Limits())
        token = enter_render(budget)
        try:
            expected = AttributePolicy(environment).getitem(message, key)
        finally:
            leave_render(token)
        by_name, by_expression = found.popitem()[1]
        assert _same(by_name, expected) and _same(by_expression, expected)


def test_getitem_undefined_messages(policy):
    with pytest.raises(UndefinedError, match="'str object' has no attribute 'type'"):
        str(policy.getitem("text", "type") + 1)
    with pytest.raises(SecurityError, match="unsafe"):
        policy.getitem("text", "encode")()


# ---------------------------------------------------------------------------------------------
# operators and escaping


@pytest.mark.parametrize(
    "a, b", [("a", "b"), ("x" * 2000, "y"), ([1] * 100, [1] * 100), (1, 2.0), (None, "a")]
)
@pytest.mark.parametrize("op", ["==", "!=", "<", "<=", ">", ">="])
def test_comparisons_charge_big_operands(a, b, op):
    import operator

    budget = Budget(Limits())
    token = budget_module.enter_render(budget)
    try:
        try:
            got: object = COMPARISONS[op](a, b)
        except TypeError as error:
            got = str(error)
    finally:
        budget_module.leave_render(token)
    python = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
              ">": operator.gt, ">=": operator.ge}[op]  # fmt: skip
    try:
        expected: object = python(a, b)
    except TypeError as error:
        expected = str(error)
    assert got == expected
    sizes = {str: 1024, list: 64, tuple: 64, dict: 64}
    steps = sum(len(v) // sizes[type(v)] for v in (a, b) if type(v) in sizes)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        steps += len(a) // 64 + len(b) // 64  # their nesting measured (see check_nesting)
        steps += min(len(a), len(b)) // 64  # and the comparison's walk (check_compared_pair)
    assert budget.steps == steps


def _checked_add(limits: Limits):
    # The operator as first written: every sum of sized values through check_length.
    from minijinja_py.sandbox.budget import charge_built, check_int, check_length

    def add(a, b):
        sized = isinstance(a, (str, list, tuple)) and isinstance(b, (str, list, tuple))
        if sized:
            check_length(len(a) + len(b), limits, "string" if isinstance(a, str) else "list")
        result = a + b
        if type(result) is int:
            check_int(result, limits)
        elif not isinstance(a, (str, list, tuple)):
            charge_built(result)
        return result

    return add


def _add_outcome(add, limits, a, b) -> tuple:
    budget = Budget(limits)
    token = budget_module.enter_render(budget)
    try:
        result: object = add(a, b)
    except (LimitError, TypeError) as error:
        result = f"{type(error).__name__}: {error}"
    finally:
        budget_module.leave_render(token)
    return result, type(result), budget.steps


@pytest.mark.parametrize("max_string", [5, 1023, 1024, 10_000_000])
@pytest.mark.parametrize("length", [3, 6, 63, 64, 1023, 1024, 3000])
def test_add_checks_as_check_length(max_string, length):
    limits = Limits(max_string=max_string, max_items=max_string)
    pairs = [
        ("a" * length, "b"),
        (["a"] * length, ["b"]),
        (("a",) * length, ("b",)),
        (Markup("<"), "<" * length),
        ("a" * length, ["b"]),
        (2**length, 2**length),
    ]
    for a, b in pairs:
        expected = _add_outcome(_checked_add(limits), limits, a, b)
        assert _add_outcome(make_add(limits), limits, a, b) == expected


@pytest.mark.parametrize("value", ["plain", "<a href='x'>&\"", Markup("<b>"), 3, None, Undefined()])
def test_escape(value):
    result = escape(value)
    assert type(result) is Markup
    if isinstance(value, Markup):
        assert result == value
    else:
        text = str(value)
        for char, entity in (("&", "&amp;"), (">", "&gt;"), ("<", "&lt;"), ("'", "&#39;"),
                             ('"', "&#34;")):  # fmt: skip
            text = text.replace(char, entity)
        assert result == text
    assert type(Markup("<") + "<") is Markup and Markup("<") + "<" == "<&lt;"
    assert type("<" + Markup("<")) is Markup and "<" + Markup("<") == "&lt;<"


# ---------------------------------------------------------------------------------------------
# the chat preset's tojson, with a reused encoder


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"indent": 2}, {"indent": 4}, {"indent": -1}, {"indent": True}, {"indent": 0},
     {"indent": "\t"}, {"sort_keys": True}, {"ensure_ascii": True}, {"separators": (",", ":")},
     {"indent": 4, "sort_keys": True}],
)  # fmt: skip
def test_chat_tojson_as_json_dumps(kwargs):
    import json

    from minijinja_py.builtins.filters import chat_tojson

    value = {"b": ["é", 1.5, None, True, {"c": (1, 2)}], "a": "<&>"}
    expected = json.dumps(value, **{"ensure_ascii": False, **kwargs})
    assert chat_tojson(value, **kwargs) == expected
    assert chat_tojson(value, **kwargs) == expected  # the encoder again
    with pytest.raises(TypeError, match="is not JSON serializable"):
        chat_tojson({1, 2}, **kwargs)


_JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text()
    | st.text().map(Markup)
)
_JSON_KEYS = st.text() | st.integers() | st.floats(allow_nan=True) | st.booleans() | st.none()
_JSON_VALUES = st.recursive(
    _JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(_JSON_KEYS, inner, max_size=4)
        | st.sets(st.integers(), min_size=1, max_size=2)
    ),
    max_leaves=30,
)


@given(_JSON_VALUES)
def test_chat_tojson_writes_what_json_dumps_writes_or_fails_as_it_does(value):
    # (the encoder is made once and kept, without json's check for a structure that
    # contains itself, which is refused before it is written: see the test below)
    import json

    from minijinja_py.builtins.filters import chat_tojson

    try:
        expected = json.dumps(value, ensure_ascii=False)
    except TypeError as error:
        with pytest.raises(TypeError, match=f"^{re.escape(str(error))}$"):
            chat_tojson(value)
    else:
        assert chat_tojson(value) == expected


def test_a_structure_that_contains_itself_is_refused_before_it_is_written():
    from minijinja_py.builtins.filters import chat_tojson

    looped: list = []
    looped.append({"again": looped})
    template = mj.chat_environment().from_string("{{ value|tojson }}")
    with pytest.raises(LimitError, match=r"^a value nested deeper than max_recursion \(100\)"):
        template.render(value=looped)
    with pytest.raises(LimitError, match="exceeds max_string"):
        chat_tojson(looped)  # (outside a render: bounded by its layout)


# ---------------------------------------------------------------------------------------------
# select/reject/map: the test or filter looked up once per application


@pytest.mark.parametrize(
    "source, per_item",
    [
        ("{{ xs|selectattr('a', 'equalto', 1)|list }}", True),
        ("{{ xs|rejectattr('a')|list }}", False),
        ("{{ xs|map(attribute='a')|list }}", False),
        ("{{ ['a', 'b']|map('upper')|join }}", True),
        ("{{ ['a', 'b']|map('replace', 'a', 'c')|join }}", True),
        ("{{ [1, 2, 3]|select('odd')|list }}", True),
        ("{{ [1, 2, 3]|select('divisibleby', 2)|list }}", True),
        ("{{ [1, 2, 3]|reject('in', [1, 2])|list }}", True),
        ("{{ [1]|select('nope')|list }}", True),
        ("{{ []|select('nope')|list }}", False),
        ("{{ [1]|map('nope')|list }}", True),
        ("{{ [1]|select([1])|list }}", True),
        ("{{ [1]|select('odd', 2)|list }}", True),
        ("{{ [1]|select('shout')|list }}", True),
        ("{{ ['a']|map('shout')|list }}", True),
    ],
)
def test_registered_lookups(source, per_item):
    class Counting(mj.Environment):
        # an environment of the caller's own: its call_test/call_filter still run per item
        def call_test(self, name, value, args=(), kwargs=None):
            self.calls += 1
            return super().call_test(name, value, args, kwargs)

        def call_filter(self, name, value, args=(), kwargs=None):
            self.calls += 1
            return super().call_filter(name, value, args, kwargs)

    def outcome(env):
        env.filters["shout"] = mj.pass_environment(lambda environment, s: s.upper() + "!")
        env.tests["shout"] = mj.pass_environment(lambda environment, s: environment is env)
        try:
            return env.from_string(source).render(xs=[{"a": 1}, {"a": 0}])
        except mj.TemplateError as error:
            return f"{type(error).__name__}: {error.message}"

    plain, counting = mj.Environment(), Counting()
    counting.calls = 0
    assert outcome(plain) == outcome(counting)
    assert (counting.calls > 0) is per_item


@pytest.mark.parametrize(
    "item, container",
    [
        ("a", "abc"),
        ("a", "x" * 5000),
        (1, [1] * 10),
        (1, [2] * 200),
        (1, (2,) * 200),
        ("k", {str(i): i for i in range(500)}),
        (("t",), {("t",): 1}),
        (1, range(1000)),
        ("a", None),
    ],
)
@pytest.mark.parametrize("op", ["in", "notin"])
def test_containment_charges_as_before(item, container, op):
    from minijinja_py.sandbox.budget import charge_size
    from minijinja_py.sandbox.measure import check_key

    def reference(a, b):  # as first written: every container but a dict charged by size
        if type(a) is tuple:
            check_key(a)
        if type(b) is not dict:
            charge_size(b)
        return (a in b) if op == "in" else (a not in b)

    def outcome(compare):
        budget = Budget(Limits())
        token = budget_module.enter_render(budget)
        try:
            result: object = compare(item, container)
        except TypeError as error:
            result = str(error)
        finally:
            budget_module.leave_render(token)
        return result, budget.steps

    assert outcome(COMPARISONS[op]) == outcome(reference)


contained_items = st.one_of(
    st.text(max_size=3),
    st.text(min_size=1020, max_size=1030),
    st.integers(-3, 3),
    st.floats(allow_nan=False),
    st.none(),
    st.booleans(),
    st.text(max_size=2).map(Markup),
    st.lists(st.integers(0, 2), max_size=2),
    st.tuples(st.text(max_size=2)),
)
containers = st.one_of(
    st.text(max_size=4),
    st.integers(1000, 1100).map(lambda n: "ab" * (n // 2)),
    st.lists(contained_items, max_size=4),
    st.integers(60, 70).map(lambda n: ["a"] * n),
    st.integers(60, 70).map(lambda n: (1,) * n),
    st.lists(contained_items, max_size=3).map(tuple),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=3),
    st.integers(0, 5),
    st.none(),
    st.frozensets(st.integers(0, 3), max_size=3),
)


@settings(max_examples=400, deadline=None)
@given(item=contained_items, container=containers, op=st.sampled_from(["in", "notin"]))
def test_contains_answers_and_charges_as_the_operator(item, container, op):
    from minijinja_py.run.expressions import Const
    from minijinja_py.run.frames import Frame, RenderState
    from minijinja_py.run.operators import Contains

    def outcome(compare) -> tuple:
        state = RenderState(Limits(), [])
        token = budget_module.enter_render(state)
        try:
            result: object = compare(Frame({}, None, state))
        except Exception as error:
            result = (type(error).__name__, str(error).split("\n")[0])
        finally:
            budget_module.leave_render(token)
        return result, state.steps

    evaluator = Contains(Const(item), Const(container), op == "notin", COMPARISONS[op], None)
    direct = outcome(lambda frame: COMPARISONS[op](item, container))
    inline = outcome(evaluator.eval)
    if isinstance(direct[0], tuple):  # (the evaluator places the operator's error)
        assert inline == (("TemplateRuntimeError", direct[0][1]), direct[1])
    else:
        assert inline == direct


# ---------------------------------------------------------------------------------------------
# namespaces written in place, loop conditions tested in one scope, sized loop sources copied


def test_namespace_attributes_written_in_place():
    source = (
        "{% set ns = namespace(a=1, b=[1]) %}{% set ns.a = ns.a + 1 %}{% set ns.c = 3 %}"
        "{{ ns.a }} {{ ns.b }} {{ ns.c }}"
    )
    assert mj.chat_environment().from_string(source).render() == "2 [1] 3"
    assert mj.Environment().from_string(source).render() == "2 [1] 3"


def test_chat_namespace_still_refuses_a_private_attribute():
    template = mj.chat_environment().from_string("{% set ns = namespace(a=1) %}{% set ns._a = 2 %}")
    with pytest.raises(SecurityError) as caught:
        template.render()
    assert str(caught.value).startswith(
        "Chat templates cannot store underscore-prefixed attributes on a namespace, but got '_a'."
    )


class _CountingNamespace(Namespace):
    """A caller's own namespace whose set does more than store: it must still be called."""

    __slots__ = ("calls",)

    def __init__(self) -> None:
        super().__init__(a=0)
        self.calls = 0

    def set(self, name, value):
        self.calls += 1
        super().set(name, value)


def test_a_callers_namespace_subclass_has_its_set_called():
    ns = _CountingNamespace()
    mj.Environment().from_string("{% set ns.a = 5 %}{% set ns.b = 6 %}").render(ns=ns)
    assert (ns.calls, ns.get("a"), ns.get("b")) == (2, 5, 6)


def test_loop_condition_sees_each_item_in_one_scope():
    source = (
        "{% for a, b in pairs if a > 1 %}{{ a }}{{ b }} {% endfor %}|"
        "{% for m in ms if m.role == 'user' %}{{ m.content }}{{ loop.length }} {% endfor %}|"
        "{% set ns = namespace(seen=0) %}{% for x in xs if x > ns.seen %}"
        "{% set ns.seen = x + 1 %}{{ x }}{% endfor %}"
    )
    context = {
        "pairs": [(1, "a"), (2, "b"), (3, "c")],
        "ms": [{"role": "user", "content": "u"}, {"role": "x", "content": "-"}] * 2,
        "xs": [0, 1, 2, 3, 4],
    }
    # The last loop's condition reads what the body wrote for the item before: lazy, as Jinja2
    # (which renders the same text).
    assert mj.Environment().from_string(source).render(context) == "2b 3c |u2 u2 |13"


def test_sized_loop_sources_are_copied_whole():
    source = (
        "{% for k, v in d.items() %}{{ k }}={{ v }} {% endfor %}|"
        "{% for k in d.keys() %}{{ k }}{% endfor %}|{% for v in d.values() %}{{ v }}{% endfor %}|"
        "{% for x in s|sort %}{{ x }}{% endfor %}"
    )
    context = {"d": {"a": 1, "b": 2}, "s": {3, 1, 2}}
    assert mj.Environment().from_string(source).render(context) == "a=1 b=2 |ab|12|123"


def test_a_long_dict_view_is_refused_by_max_items():
    env = mj.Environment(limits=Limits(max_items=100))
    template = env.from_string("{% for k, v in d.items() %}{% endfor %}")
    with pytest.raises(LimitError) as caught:
        template.render(d={i: i for i in range(101)})
    assert caught.value.message == "a list of 101 items exceeds max_items (100)"


# ---------------------------------------------------------------------------------------------
# shared structure: comparing, hashing and sorting pay for the tree a value stands for


def _doubled(levels: int, leaf: object) -> object:
    value = leaf
    for _ in range(levels):
        value = [value, value] if isinstance(leaf, list) else (value, value)
    return value


def _steps_of(action) -> int:
    budget = Budget(Limits())
    token = budget_module.enter_render(budget)
    try:
        action()
    finally:
        budget_module.leave_render(token)
    return budget.steps


def test_compared_walk_counts_shared_containers_each_time_reached():
    # 20 levels of [x, x]: 40 lists' worth of memory, 2**21 - 2 items reached by a walk.
    value = _doubled(20, [])
    assert _steps_of(lambda: measure_module.check_compared(value)) == (2**21 - 2) // 64
    assert _steps_of(lambda: measure_module.check_compared(value, 3)) == 3 * (2**21 - 2) // 64
    # Only its depth is measured where it is kept, not compared: no walk charged.
    assert _steps_of(lambda: measure_module.check_nesting(value)) == 0


def test_compared_pair_charges_the_smaller_walk_and_nothing_for_one_value():
    big, small = _doubled(20, []), _doubled(12, [])
    assert _steps_of(lambda: measure_module.check_compared_pair(big, small)) == (2**13 - 2) // 64
    assert _steps_of(lambda: measure_module.check_compared_pair(big, big)) == 0


def test_a_flat_list_pays_its_measure_once_and_each_walk():
    flat = list(range(640))

    def twice():
        measure_module.check_compared(flat)
        measure_module.check_compared(flat)

    # 10 steps to measure it (remembered for the render), 10 for each walk
    assert _steps_of(twice) == 30


def test_hashing_a_shared_tuple_is_charged_before_it_runs():
    value = _doubled(40, ())
    env = mj.Environment()
    with pytest.raises(LimitError) as caught:
        env.from_string("{{ {key: 1}|length }}").render(key=value)
    assert caught.value.message.startswith("the render exceeded its budget of")


# ---------------------------------------------------------------------------------------------
# traced strings (provenance mode) take the plain string's shortcuts, with its charges


def _traced(text: str):
    from cost_report import STRING_KINDS

    return STRING_KINDS["traced"](text)


def _steps(call) -> tuple:
    budget = Budget(Limits())
    token = budget_module.enter_render(budget)
    try:
        result = call()
    finally:
        budget_module.leave_render(token)
    return result, budget.steps


@pytest.mark.parametrize("size", [10, 1023, 1024, 5000, 100_000])
@pytest.mark.parametrize("name", ["strip", "split", "count", "startswith", "upper"])
def test_a_traced_strings_method_is_charged_as_a_plain_strings(policy, name, size):
    from minijinja_py.builtins.costs import charge_method

    text = "x" * size
    traced = _traced(text)
    _, plain_steps = _steps(lambda: policy.getattr(text, name))
    method, traced_steps = _steps(lambda: policy.getattr(traced, name))
    _, declared_steps = _steps(lambda: charge_method(traced, name))  # the general path's charge
    assert traced_steps == plain_steps == declared_steps == size // 1024
    assert method.__self__ is traced


@pytest.mark.parametrize("key", ["type", "_x"])
def test_a_traced_strings_missing_item_answers_as_a_plain_strings(policy, key):
    assert _same(policy.getitem(_traced("text"), key), policy.getitem("text", key))


@pytest.mark.parametrize("key", ["upper", "format"])
def test_a_traced_strings_method_item_is_its_own_method(policy, key):
    traced = _traced("text")
    method = policy.getitem(traced, key)
    assert getattr(method, "__wrapped__", method).__name__ == key
    assert method() == policy.getitem("text", key)()


def _least(render, limit: str = "max_steps", high: int = 4096) -> int:
    """The smallest value of the limit named `limit` (at most `high`) under which
    `render(limits)` succeeds."""
    low = 1
    while low < high:
        middle = (low + high) // 2
        try:
            render(Limits(**{limit: middle}))
            high = middle
        except LimitError:
            low = middle + 1
    return low


def _least_steps(render) -> int:
    """The smallest max_steps under which `render(limits)` succeeds."""
    return _least(render)


@pytest.mark.parametrize("size", [3, 1024, 1025, 5000, 100_000])
@pytest.mark.parametrize(
    "source",
    [
        "{% for m in messages %}{% if m.content == 'x' %}y{% endif %}{% endfor %}",
        "{% for m in messages %}{{ m['content'] != 'x' }}{% endfor %}",
        "{% for m in messages %}{{ m.content.strip() }}{% endfor %}",
        "{% for m in messages %}{{ m.content['upper']() }}{% endfor %}",
    ],
)
def test_provenance_charges_a_traced_message_as_render_charges_the_plain_one(source, size):
    from minijinja_py import ChatTemplate

    messages = [{"role": "user", "content": "x" * size}]

    def plain(limits):
        return ChatTemplate(source, limits=limits).render(messages)

    def traced(limits):
        return ChatTemplate(source, limits=limits).render_with_provenance(messages).text

    assert traced(Limits()) == plain(Limits())
    assert _least_steps(traced) == _least_steps(plain)


_TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "It's \"the\" weather"}},
    {"type": "function", "function": {"name": "search", "parameters": {"q": ["a", "b\n"]}}},
]


@pytest.mark.parametrize(
    "source",
    [
        "{{ tools|string }}",
        "{{ tools }}",
        "{{ tools[0]|pprint }}",
        "{{ tools|tojson }}",
        "{{ messages|string }}",
        "{{ messages|pprint }}",
        "{{ messages[0].content|pprint }}",
        "{% for t in tools %}{{ t.function }}{% endfor %}",
    ],
)
def test_provenance_measures_printed_traced_data_as_render_measures_the_plain(source):
    # (a traced string prints as the plain one: measured alike, it is refused alike)
    from minijinja_py import ChatTemplate

    # (a long one, which pprint splits into a piece per word)
    messages = [{"role": "user", "content": "x's \"y\" " + "word " * 30}]

    def plain(limits):
        return ChatTemplate(source, limits=limits).render(messages, tools=_TOOLS)

    def traced(limits):
        return ChatTemplate(source, limits=limits).render_with_provenance(messages, _TOOLS).text

    assert traced(Limits()) == plain(Limits())
    assert _least(traced, "max_string", 1 << 16) == _least(plain, "max_string", 1 << 16)
    assert _least_steps(traced) == _least_steps(plain)


# ---------------------------------------------------------------------------------------------
# a chain of if/elif comparing one key with strings, answered by one lookup (IfSwitch)

_SWITCHED = (
    "{% for m in messages %}{% if m['role'] == 'system' %}S{% elif m.role == 'user' %}"
    "{{ m.content }}{% elif m['role'] == 'assistant' %}{{ m.content ~ '!' }}{% else %}?"
    "{% endif %}{% endfor %}"
)
# The same chain reading the same value under two keys in turn: no two tests in a row read the
# same key, so each is evaluated in turn, as Jinja does (the tests have the same shapes).
_IN_TURN = _SWITCHED.replace("m.role == 'user'", "m.kind == 'user'")
_SWITCHED_OR = (
    "{% for m in messages %}{% if m.role == 'user' or m['role'] == 'system' %}{{ m.content }}"
    "{% elif m.role == 'assistant' %}A{% else %}?{% endif %}{% endfor %}"
)
_OR_IN_TURN = _SWITCHED_OR.replace("m['role'] == 'system'", "m['kind'] == 'system'")
# Two runs, on two keys (each made a switch), against the keys alternating (none made).
_TWO_RUNS = (
    "{% for m in messages %}{% if m.role == 'system' %}S{% elif m.role == 'user' %}{{ m.content }}"
    "{% elif m.kind == 'assistant' %}A{% elif m.kind == 'tool' %}T{% else %}?{% endif %}{% endfor %}"
)
_TWO_IN_TURN = _TWO_RUNS.replace("m.role == 'user'", "m.kind == 'user'").replace(
    "m.kind == 'assistant'", "m.role == 'assistant'"
)


@pytest.mark.parametrize("role", ["system", "user", "assistant", "tool", "x" * 2000, None])
@pytest.mark.parametrize("provenance", [False, True])
@pytest.mark.parametrize(
    ("switched", "in_turn"),
    [(_SWITCHED, _IN_TURN), (_SWITCHED_OR, _OR_IN_TURN), (_TWO_RUNS, _TWO_IN_TURN)],
)
def test_a_chain_read_once_is_charged_as_its_tests_in_turn(role, provenance, switched, in_turn):
    from minijinja_py import ChatTemplate

    messages = [{"role": role, "kind": role, "content": "c"}] * 20

    def render(source):
        def run(limits):
            # (no growth with the context: the least max_steps is then the steps taken)
            template = ChatTemplate(source, limits=limits.replace(max_steps_growth=0))
            if provenance:
                return template.render_with_provenance(messages).text
            return template.render(messages)

        return run

    assert render(switched)(Limits()) == render(in_turn)(Limits())
    least = _least_steps(render(switched))
    assert 20 < least < 4096
    assert least == _least_steps(render(in_turn))


# ---------------------------------------------------------------------------------------------
# `is defined` and `is undefined`: answered by their evaluator, as the builtin tests answer


DEFINED_CASES = (
    "{{ x is defined }} {{ x is undefined }} {{ y is defined }} {{ y is undefined }}",
    "{{ u is defined }} {{ u is undefined }} {{ not x is defined }}",
    "{% set z = 1 %}{{ z is defined }} {{ x.a is defined }} {{ x.b is defined }}",
    "{% for m in [x] %}{{ m['a'] is defined }} {{ m.b is undefined }}{% endfor %}",
)


@pytest.mark.parametrize(
    ("source", "expected"),
    list(
        zip(
            DEFINED_CASES,
            (
                "True False False True",
                "False True False",
                "True True False",
                "True True",
            ),
            strict=True,
        )
    ),
)
def test_defined_tests_answer_as_the_builtin_tests(source, expected):
    env = mj.Environment()
    # (an undefined value given as a variable is not defined: the test reads the value)
    assert env.from_string(source).render(x={"a": 1}, u=Undefined()) == expected


# `is none`, `is string` and `is mapping`: answered by their evaluator, as the builtin tests
TYPE_TEST_CASES = (
    ("{{ x is none }} {{ n is none }} {{ u is none }} {{ x is not none }}", "False True False True"),
    ("{{ x is string }} {{ s is string }} {{ m is string }} {{ u is string }}", "False True True False"),
    ("{{ x is mapping }} {{ s is mapping }} {{ namespace() is mapping }}", "True False False"),
    ("{% for v in [x, s, n] %}{{ v is mapping }}{{ v is string }}{% endfor %}", "TrueFalseFalseTrueFalseFalse"),
)


@pytest.mark.parametrize(("source", "expected"), TYPE_TEST_CASES)
def test_type_tests_answer_as_the_builtin_tests(source, expected):
    context = {"x": {"a": 1}, "n": None, "s": "text", "m": Markup("<b>"), "u": Undefined()}
    assert mj.Environment().from_string(source).render(context) == expected


def test_a_type_test_of_the_environments_own_is_called():
    env = mj.Environment()
    env.tests["string"] = lambda value: "called"
    env.tests["none"] = lambda value: "also"
    assert env.from_string("{{ 1 is string }} {{ 1 is none }}").render() == "called also"


def test_a_type_test_of_a_value_whose_class_fails_is_placed():
    class Failing:
        @property
        def __class__(self):  # noqa: PLE0307 - the failure under test
            raise RuntimeError("no class")

    with pytest.raises(mj.TemplateRuntimeError) as caught:
        mj.Environment().from_string("{{ v is string }}").render(v=Failing())
    assert (caught.value.message, caught.value.lineno, caught.value.colno) == ("no class", 1, 9)


def test_a_defined_test_of_the_environments_own_is_called():
    env = mj.Environment()
    env.tests["defined"] = lambda value: "called"
    assert env.from_string("{{ x is defined }} {{ y is defined }}").render(x=1) == "called called"
