"""Turns the syntax tree into a tree of evaluator objects, once per template.

Every decision that does not depend on the data (which filter, which operator, which scope a
name lives in, whether an attribute could be a method, which sub-expressions are constant) is
made here, so that rendering only runs the evaluators of expressions.py and statements.py.  No
source code is generated and nothing is `exec`-ed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import lru_cache
from threading import RLock
from typing import Any

from ..builtins.costs import charge_for
from ..builtins.methods import DICT_METHODS, STR_METHODS
from ..builtins.ops import COMPARISONS, make_binops, to_string
from ..errors import TemplateSyntaxError
from ..run import branches as b
from ..run import calls as c
from ..run import expressions as e
from ..run import macros as m
from ..run import operators as o
from ..run import statements as s
from ..run.deferred import DeferredBody
from ..run.frames import Frame, RenderState
from ..run.texts import concat_chain, sum_chain
from ..sandbox.budget import enter_render, leave_render, no_charge
from ..sandbox.limits import Limits
from ..syntax import nodes as n
from ..values.runtime import MISSING, wants_environment
from .analysis import Analysis, _declares, analyse, call_depth, check_parameters
from .folding import (
    _CONTEXT_FILTERS,
    FOLD_FACTOR,
    FOLD_SLACK,
    _has_safe_repr,
    _source_weight,
    _tree_weight,
)
from .nesting import _may_nest

# The checked operators depend only on the limits: one set per Limits, shared by templates
# (bounded, so that a caller making new Limits per request does not grow it forever).
_binops_by_value = lru_cache(maxsize=16)(make_binops)
# The last Limits asked about and its operators: environments share the default Limits, and
# hashing a Limits (every field) costs more than compiling a small template's expression.
_last_binops: tuple[Any, Any] = (None, None)


def _binops_for(limits: Limits) -> Any:
    global _last_binops
    last_limits, binops = _last_binops
    if last_limits is not limits:
        binops = _binops_by_value(limits)
        _last_binops = (limits, binops)
    return binops


# Whether an `if`'s branches and a macro's body may be compiled when they first run (see
# deferred): False compiles every one with the template, which the tests compare with.
DEFERRING = True


class Compiler:
    """Compiles one template for one environment."""

    # What one walk of the tree found (see analysis.py); set by template() before anything
    # is compiled.
    analysis: Analysis
    binops: Any
    folding: bool
    loop_depth: int
    may_fold: bool
    policy_getattr: Any
    policy_getitem: Any
    reads_self: bool
    soft: bool
    undefined: type[Any]

    def __init__(
        self, environment: Any, instrument: Callable[[Compiler], None] | None = None
    ) -> None:
        self.environment = environment
        self.limits: Limits = environment.limits
        # Bound once: each `policy.getattr` read would make a new method object to keep.
        self.policy_getattr = environment.policy.getattr
        self.policy_getitem = environment.policy.getitem
        # The lookups of names that may be str methods (see provenance.py).
        self.method_getattr = self.policy_getattr
        self.method_getitem = self.policy_getitem
        self.binops = _binops_for(self.limits)
        self.comparisons = COMPARISONS
        self.undefined = environment.undefined
        # Jinja reports an unknown filter or test when it compiles the template, unless it
        # sits inside an `if` or a conditional expression, where only reaching it fails.
        self.soft = False
        self.loop_depth = 0
        self.block_names: set[str] = set()
        # The template's blocks by name, and whether it reads `self` (which holds them).
        self.blocks: dict[str, Any] = {}
        self.reads_self = False
        self.block_name: str | None = None  # the block being compiled (its `super`)
        # Where the statement being compiled ends at the latest (the start of what follows
        # it), the lock of compiling deferred bodies and how many there are (see deferred).
        self.extent_end = sys.maxsize
        self.lock = RLock()
        self.deferrals = 0
        # The environment's filters and tests (a copy of them once a branch is deferred).
        self.filters: Any = environment.filters
        self.tests: Any = environment.tests
        # True while compiling a printed expression that Jinja would fold into a constant.
        self.folding = False
        # is_constant's answers for this compile (see there).
        self.constant_memo: dict[int, bool] = {}
        # Whether constant sub-expressions are folded now (not while folding one).
        self.may_fold = True
        self.fold_state: RenderState | None = None
        # One evaluator per distinct constant and per distinct name, shared by every use.
        self.constants: dict[tuple[type, Any], Any] = {}
        self.names: dict[str, Any] = {}
        # Wrap each filter and each printed value for a template compiled with provenance
        # (see provenance.py).  These attributes are the interface: ``instrument`` (the
        # provenance layer's track_operations, passed in by the environment, since the
        # compiler sits below it) replaces them before anything is compiled.
        self.track_filter: Any = None
        self.track_printed: Any = None
        self.add_chain: Any = sum_chain
        self.output: Any = s.Output
        if instrument is not None:
            instrument(self)

    # ------------------------------------------------------------ statements

    def template(self, tree: n.Template) -> Any:
        # (also refuses a tree nested too deeply)
        self.analysis = analyse(tree, self.limits, self.filters, self.tests)
        body = self.body(tree.body)
        if self.deferrals:
            # A branch compiled later finds the filters and tests the template was compiled
            # with, as Jinja's compiled code does, whatever the environment holds by then.
            self.filters, self.tests = dict(self.filters), dict(self.tests)
        # What this compiler keeps for the branches compiled later (see deferred) is kept as
        # long as the template: the walk's expression sizes are counted again for the few
        # compiled later, and the constants' memo is rebuilt for them.
        self.analysis.sizes.clear()
        self.constant_memo = {}
        if self.reads_self:
            return s.WithTemplateReference(body, self.blocks)
        return body

    def body(self, nodes_: tuple[n.Node, ...]) -> Any:
        # Text (and printed constants) stay plain strings inside a body: no evaluator each.
        items: list[Any] = []
        end = self.extent_end
        last = len(nodes_) - 1
        for index, node in enumerate(nodes_):
            text = self._constant_text(node)
            if text is None:
                # (where the statement's source ends, at the latest: see deferred)
                following = nodes_[index + 1].pos if index < last else None
                self.extent_end = end if following is None else following
                items.append(self.statement(node))
            elif items and type(items[-1]) is str:
                items[-1] += text
            else:
                items.append(text)
        self.extent_end = end
        if not items:
            return s.NOTHING
        if len(items) == 1:
            only = items[0]
            return s.Text(only, self.limits.max_output) if type(only) is str else only
        if len(items) == 2 and type(items[0]) is not str and type(items[1]) is not str:
            return s.Pair(items[0], items[1])
        return s.Sequence(tuple(items), self.limits.max_output)

    def _may_defer(self, node: n.Node) -> bool:
        """Whether the bodies of `node`, a statement being compiled, may be deferred: its
        source, up to what follows it, holds no risk (see Analysis.quiet)."""
        return DEFERRING and self.analysis.quiet(node.pos, self.extent_end)

    def deferred(self, nodes_: tuple[n.Node, ...]) -> Any:
        """A branch of an `if` or a macro's body whose source holds no risk (see
        Analysis.quiet), to compile when it first runs (see run/deferred.py). Text alone costs
        less to compile now."""
        for node in nodes_:
            if self._constant_text(node) is None:
                context = (self.soft, self.loop_depth, self.block_name, self.extent_end)
                self.deferrals += 1
                return DeferredBody(self, nodes_, context)
        return self.body(nodes_)

    def compile_deferred(self, deferred: DeferredBody) -> Any:
        """Compile `deferred` as it would have been compiled with the template, once (renders
        in several threads may reach it together), and put it in its places."""
        with self.lock:
            body = deferred.compiled
            if body is None:
                saved = (self.soft, self.loop_depth, self.block_name, self.extent_end)
                self.soft, self.loop_depth, self.block_name, self.extent_end = deferred.context
                token = enter_render(None)  # (compiling charges nothing to the render)
                try:
                    body = self.body(deferred.nodes)
                finally:
                    leave_render(token)
                    self.soft, self.loop_depth, self.block_name, self.extent_end = saved
                deferred.settle(body)
        return body

    def _constant_text(self, node: n.Node) -> str | None:
        if isinstance(node, n.Data):
            return node.text
        if isinstance(node, n.Output) and isinstance(node.expr, n.Const):
            value = node.expr.value
            return value if type(value) is str else to_string(value)
        return None

    def statement(self, node: n.Node) -> Any:
        method = _STMT_METHODS.get(node.__class__)
        if method is None:
            method = _STMT_METHODS[node.__class__] = getattr(
                Compiler, "stmt_" + type(node).__name__
            )
        return method(self, node)

    def stmt_Data(self, node: n.Data) -> Any:
        return s.Text(node.text, self.limits.max_output)

    def stmt_Output(self, node: n.Output) -> Any:
        self.folding = self.is_constant(node.expr)
        expr = self.expr(node.expr)
        self.folding = False
        cost = 1 + self.analysis.expression_size(node.expr)
        return self.output(expr, node.pos, self.limits.max_output, cost)

    def stmt_If(self, node: n.If) -> Any:
        return b.switch_runs(self._if(node))

    def _if(self, node: n.If) -> Any:
        """An `if` and the `elif`s after it (an else holding one `if` is one), each compiled
        once; stmt_If then looks at the whole chain once for tests to read at a time."""
        soft, self.soft = self.soft, True
        test = self.expr(node.test)
        defer = self._may_defer(node)  # (the whole chain: its `if` to what follows `endif`)
        body = self.deferred(node.body) if defer else self.body(node.body)
        if len(node.otherwise) == 1 and type(node.otherwise[0]) is n.If:
            otherwise = self._if(node.otherwise[0])
        elif not node.otherwise:
            otherwise = None
        else:
            otherwise = self.deferred(node.otherwise) if defer else self.body(node.otherwise)
        self.soft = soft
        cost = 1 + self.analysis.expression_size(node.test)
        if type(test) is o.CompareConst:
            return s.IfCompareConst(test, body, otherwise, node.pos, cost)
        return s.If(test, body, otherwise, node.pos, cost)

    def stmt_For(self, node: n.For) -> Any:
        self._refuse_loop_target(node.target)
        iterable = self.expr(node.iter)
        soft, self.soft = self.soft, False
        target = self.assigner(node.target)
        condition = self.expr(node.condition) if node.condition is not None else None
        self.loop_depth += 1
        body = self.body(node.body)
        self.loop_depth -= 1
        otherwise = self.body(node.otherwise) if node.otherwise else None
        self.soft = soft
        # Like Jinja, a loop whose body never reads `loop` keeps no loop object.
        uses_loop = node.recursive or "loop" in self.analysis.reads(node)
        costs = (
            self.analysis.expression_size(node.iter, node.target),
            self.analysis.expression_size(node.condition, node.target),
            call_depth(node.body) + 1 if node.recursive else 1,
        )
        return s.For(
            iterable,
            target,
            condition,
            body,
            otherwise,
            node.recursive,
            uses_loop,
            node.pos,
            costs,
            reuse_scope=not _declares(node.body),
        )

    def _refuse_loop_target(self, target: n.Node) -> None:
        names = [target] if not isinstance(target, n.TargetTuple) else list(target.items)
        for item in names:
            if isinstance(item, n.TargetTuple):
                self._refuse_loop_target(item)
            elif isinstance(item, n.TargetName) and item.name == "loop":
                error = TemplateSyntaxError(
                    "Can't assign to special loop variable in for-loop target"
                )
                error.offset = item.pos
                raise error

    def stmt_Assign(self, node: n.Assign) -> Any:
        if self.loop_depth:
            self._refuse_loop_target(node.target)
        value = self.expr(node.value)
        cost = self.analysis.expression_size(node.value, node.target)
        # A value read from elsewhere (a variable, an item, a slice, a filtered list) is
        # nested no deeper than what it came from: only others are measured when stored.
        nests = _may_nest(node.value)
        if isinstance(node.target, n.TargetName):
            assign = s.AssignToName if nests else s.AssignFlatToName
            return assign(value, node.target.name, cost, node.pos)
        return s.Assign(value, self.assigner(node.target), cost, node.pos, nests)

    def stmt_AssignBlock(self, node: n.AssignBlock) -> Any:
        body = self.body(node.body)
        target = self.assigner(node.target)
        return s.AssignBlock(body, target, self.filter_chain(node.filters))

    def stmt_Macro(self, node: n.Macro) -> Any:
        definition = self.macro(node, node.name)
        return m.DefineMacro(node.name, definition)

    def stmt_CallBlock(self, node: n.CallBlock) -> Any:
        caller = self.macro(node, None)
        call = node.call
        func = self.expr(call.func)
        return m.CallBlock(caller, func, self.arguments(call.arguments), node.pos)

    def stmt_FilterBlock(self, node: n.FilterBlock) -> Any:
        soft, self.soft = self.soft, False  # an inner scope in Jinja, even inside an if
        body = self.body(node.body)
        filters = self.filter_chain(node.filters)
        self.soft = soft
        return s.FilterBlock(body, filters, node.pos)

    def stmt_With(self, node: n.With) -> Any:
        assignments = tuple(
            (self.assigner(target), self.expr(value)) for target, value in node.assignments
        )
        return s.With(assignments, self.body(node.body))

    def stmt_Generation(self, node: n.Generation) -> Any:
        # transformers' generation tag is a call block: its body is a function of its own,
        # where break and continue have no loop, and unknown filters fail when compiling.
        soft, self.soft = self.soft, False
        loop_depth, self.loop_depth = self.loop_depth, 0
        body = self.body(node.body)
        self.soft, self.loop_depth = soft, loop_depth
        return s.Generation(body)

    def stmt_Block(self, node: n.Block) -> Any:
        if node.name in self.block_names:
            error = TemplateSyntaxError(f"block {node.name!r} defined twice")
            error.offset = node.pos
            raise error
        self.block_names.add(node.name)
        soft, self.soft = self.soft, False
        loop_depth, self.loop_depth = self.loop_depth, 0
        outer_block, self.block_name = self.block_name, node.name
        body = self.body(node.body)
        self.soft, self.loop_depth, self.block_name = soft, loop_depth, outer_block
        if node.required:
            block: Any = s.RequiredBlock(node.name, node.pos)
        else:
            block = s.Block(body, node.scoped)
        self.blocks[node.name] = block
        return block

    def stmt_Break(self, node: n.Break) -> Any:
        self._require_loop(node, "break")
        return s.Break()

    def stmt_Continue(self, node: n.Continue) -> Any:
        self._require_loop(node, "continue")
        return s.Continue()

    def _require_loop(self, node: n.Node, word: str) -> None:
        if self.loop_depth == 0:
            # Python's wording: Jinja leaves this check to Python's compiler.
            message = (
                "'break' outside loop" if word == "break" else ("'continue' not properly in loop")
            )
            error = TemplateSyntaxError(message)
            error.offset = node.pos
            raise error

    # ------------------------------------------------------------ macros

    def macro(self, node: n.Macro | n.CallBlock, name: str | None) -> m.MacroDefinition:
        params = node.params
        check_parameters(params, node.pos)
        soft, self.soft = self.soft, False
        loop_depth, self.loop_depth = self.loop_depth, 0
        if self._may_defer(node):
            body = self.deferred(node.body)  # (a macro a render never calls: compiled never)
        else:
            body = self.body(node.body)
        defaults = tuple(self.expr(p.default) if p.default is not None else None for p in params)
        self.soft = soft
        self.loop_depth = loop_depth
        names = tuple(p.name for p in params)
        # The implicit varargs/kwargs/caller exist only when the body reads them and no
        # parameter has the name.
        used = self.analysis.reads(node) - set(names)
        catch = ("varargs" in used, "kwargs" in used, "caller" in used)
        # A call binds each parameter; a default is evaluated inside the call's level.
        defaults_nodes = tuple(p.default for p in params if p.default is not None)
        costs = (1 + len(names), call_depth(node.body, defaults_nodes) + 1)
        return m.MacroDefinition(name, names, defaults, body, catch, self.undefined, costs)

    # ------------------------------------------------------------ assignment

    def assigner(self, target: n.Node) -> Any:
        if isinstance(target, n.TargetName):
            return s.AssignName(target.name)
        if isinstance(target, n.TargetTuple):
            parts = tuple(self.assigner(item) for item in target.items)
            return s.AssignTuple(parts, target.pos)
        assert isinstance(target, n.TargetAttr)
        lookup = self.expr(n.Name(target.pos, target.name))
        return s.AssignAttr(lookup, target.attr, target.pos)

    # ------------------------------------------------------------ constants

    def is_constant(self, node: Any) -> bool:
        """Whether Jinja's optimizer may fold `node` into a constant when compiling.

        The compiler asks this of every node it compiles, each time about the whole subtree;
        the memo (kept for one compile) walks each subtree once.  It is keyed by id alone: the
        tree being compiled holds every node it is asked about (the one node the compiler makes
        itself, a Name, never reaches the memo), so no id is reused while it lives.
        """
        cls = node.__class__
        if cls is n.Name:  # (most leaves: answered without the memo)
            return False
        if cls is n.Const:
            return True
        memo = self.constant_memo
        hit = memo.get(id(node))
        if hit is None:
            hit = memo[id(node)] = self._constant(node)
        return hit

    def _constant(self, node: Any) -> bool:
        is_constant = self.is_constant
        # The commonest shapes first, told by class (the isinstance chain below answers the
        # same for them).
        cls = node.__class__
        if cls is n.GetAttr:
            return is_constant(node.obj)
        if cls is n.GetItem:
            return is_constant(node.obj) and is_constant(node.key)
        if cls is n.Call:
            return False
        if isinstance(node, n.Const):
            return True
        if isinstance(node, (n.TupleLit, n.ListLit, n.Concat)):
            return all(is_constant(item) for item in node.items)
        if isinstance(node, n.DictLit):
            return all(is_constant(k) and is_constant(v) for k, v in node.pairs)
        if isinstance(node, n.BinOp):
            return is_constant(node.left) and is_constant(node.right)
        if isinstance(node, (n.And, n.Or, n.CondExpr)):
            deciding = self._deciding_operand(node)
            return deciding is not None and is_constant(deciding)
        if isinstance(node, n.Unary):
            return is_constant(node.operand)
        if isinstance(node, n.Compare):
            return is_constant(node.first) and all(is_constant(v) for _, v in node.ops)
        if isinstance(node, (n.Filter, n.Test)):
            arguments = node.arguments
            return (
                node.value is not None
                and not (isinstance(node, n.Filter) and node.name in _CONTEXT_FILTERS)
                and is_constant(node.value)
                and arguments.star is None
                and arguments.dstar is None
                and all(is_constant(a) for a in arguments.args)
                and all(is_constant(v) for _, v in arguments.kwargs)
            )
        if isinstance(node, n.GetAttr):
            return is_constant(node.obj)
        if isinstance(node, n.GetItem):
            return is_constant(node.obj) and is_constant(node.key)
        if isinstance(node, n.Slice):
            return all(is_constant(p) for p in (node.start, node.stop, node.step) if p)
        return False

    def _deciding_operand(self, node: n.And | n.Or | n.CondExpr) -> Any:
        """The operand whose value an `and`, `or` or conditional takes, when its left side
        or test is constant; None when that cannot be told at compile time.

        Jinja folds bottom-up and short-circuits while folding: `false and x` is the
        constant `false` whatever `x` is, so `(false and x)[1:]` is folded (undefined)
        where `x[1:]` is not.
        """
        if isinstance(node, n.CondExpr):
            if not self.is_constant(node.test):
                return None
            truth = self._truth(node.test)
            if truth is None:
                return None
            return node.then if truth else node.otherwise  # no else: not constant (None)
        if not self.is_constant(node.left):
            return None
        truth = self._truth(node.left)
        if truth is None:
            return None
        return node.left if truth is isinstance(node, n.Or) else node.right

    def _truth(self, node: n.Node) -> bool | None:
        """Whether constant `node` is true when folded (whatever its value, an undefined
        one included, as Jinja's `as_const` tests it), or None when folding it fails."""
        may_fold, folding = self.may_fold, self.folding
        self.may_fold, self.folding = False, True
        try:
            return bool(self._evaluate(node, FOLD_FACTOR * _source_weight(node) + FOLD_SLACK))
        except Exception:
            return None
        finally:
            self.may_fold, self.folding = may_fold, folding

    # ------------------------------------------------------------ expressions

    def expr(self, node: n.Node) -> Any:
        cls = type(node)
        if self.may_fold and cls is not n.Const and cls is not n.Name and self.is_constant(node):
            value = self._fold(node)
            if value is not MISSING:
                return self.constant(value)
        method = _EXPR_METHODS.get(cls)
        if method is None:
            method = _EXPR_METHODS[cls] = getattr(Compiler, "expr_" + cls.__name__)
        return method(self, node)

    def _fold(self, node: n.Node) -> Any:
        """The value Jinja's optimizer would fold `node` into, or MISSING.

        Jinja evaluates a constant sub-expression when it compiles, with the sandbox's forgiving
        `getitem` (a failing slice is undefined), and keeps the value only when it has a safe
        representation (None, bool, numbers, strings and containers of them).
        """
        may_fold, folding = self.may_fold, self.folding
        self.may_fold, self.folding = False, True
        # Compiling stays linear in the source: a constant is folded only when what it folds
        # into is within a small multiple of the source that spells it.  Anything bigger
        # (``[[0] * 10000] * 10000``, or sixty characters of ``[[[0] * 2] * 2] * 2 ...`` that
        # share their lists into a tree of a billion items) is left to the render, whose
        # budget charges it; the output is the same either way.
        room = FOLD_FACTOR * _source_weight(node) + FOLD_SLACK
        try:
            value = self._evaluate(node, room)
        except Exception:
            return MISSING
        finally:
            self.may_fold, self.folding = may_fold, folding
        if _tree_weight(value, room) > room:
            return MISSING
        return value if _has_safe_repr(value) else MISSING

    def _evaluate(self, node: n.Node, room: int | None = None) -> Any:
        # One step budget for all the folding of a template, published like a render's, so
        # that a constant expression that would walk or build too much stops here (and is left
        # to the render, under the render's own budget) instead of hanging the compiler.
        # (A tenth of max_steps: real templates fold a few tiny expressions.)  Each fold may
        # also make only ``room`` bytes of big values (see _fold).
        if self.fold_state is None:
            steps = max(1000, self.limits.max_steps // 10)
            self.fold_state = RenderState(self.limits.replace(max_steps=steps), [])
        state = self.fold_state
        if room is not None:
            state.memory = 0
            state._memory_budget = room
        token = enter_render(state)
        try:
            return self.expr(node).eval(Frame({}, None, state))
        finally:
            leave_render(token)

    def constant(self, value: Any) -> Any:
        if type(value) in (list, dict, set) or (
            type(value) is tuple and any(type(item) in (list, dict, set) for item in value)
        ):
            return e.FreshConst(value)
        # 0.0 == -0.0 (and 1 == True): the key tells them apart by type and, for floats, text.
        key = (type(value), repr(value) if type(value) is float else value)
        try:
            evaluator = self.constants.get(key)
        except TypeError:  # a tuple holding a list: `for x in [1], 2`
            return e.FreshConst(value)
        if evaluator is None:
            evaluator = self.constants[key] = e.Const(value)
        return evaluator

    def expr_Const(self, node: n.Const) -> Any:
        return self.constant(node.value)

    def expr_Name(self, node: n.Name) -> Any:
        evaluator = self.names.get(node.name)
        if (
            node.name == "super"
            and self.block_name is not None
            and "super" not in self.analysis.assigned
        ):
            # Inside a block `super` is its parent's block; a template on its own has none.
            hint = f"there is no parent block called {self.block_name!r}."
            return e.Const(self.undefined(hint, name="super"))
        if evaluator is None and node.name == "self":
            # The template's blocks, unless the template assigns `self` itself.
            self.reads_self = True
            evaluator = self.names["self"] = e.Name("self", self.undefined)
        if evaluator is None:
            # A name no scope of the template can hold is the context's (or a global).
            if node.name not in self.analysis.assigned:
                evaluator = e.ContextName(node.name, self.undefined)
            else:
                evaluator = e.Name(node.name, self.undefined)
            self.names[node.name] = evaluator
        return evaluator

    def expr_TupleLit(self, node: n.TupleLit) -> Any:
        return e.TupleLit(tuple(self.expr(item) for item in node.items))

    def expr_ListLit(self, node: n.ListLit) -> Any:
        return e.ListLit(tuple(self.expr(item) for item in node.items))

    def expr_DictLit(self, node: n.DictLit) -> Any:
        pairs = tuple((self.expr(k), self.expr(v)) for k, v in node.pairs)
        return e.DictLit(pairs, node.pos)

    def expr_GetAttr(self, node: n.GetAttr) -> Any:
        obj = self.expr(node.obj)
        attr = node.attr
        # (a template compiled with provenance traces what str methods return)
        policy_getattr = self.method_getattr if attr in STR_METHODS else self.policy_getattr
        # A dict key is found directly unless the name could be a dict method (Jinja looks
        # attributes up before items, so `d.items` is the method even when the key exists).
        if attr in DICT_METHODS or attr[:1] == "_" or hasattr(dict, attr):
            return e.GetAttr(obj, attr, node.pos, policy_getattr)
        if type(obj) is e.Name:
            return e.NameKeyOrAttr(obj, attr, node.pos, policy_getattr, self.undefined)
        return e.GetKeyOrAttr(obj, attr, node.pos, policy_getattr, self.undefined)

    def expr_GetItem(self, node: n.GetItem) -> Any:
        obj = self.expr(node.obj)
        if isinstance(node.key, n.Slice) and not self.folding:
            # Jinja subscripts slices directly: slicing None fails instead of being undefined.
            # (Jinja folds a printed expression that is constant as a whole at compile time,
            # through the sandbox's getitem, where such a slice is undefined instead.)
            return e.GetSlice(obj, self.expr_Slice(node.key), node.pos)
        key = self.expr_Slice(node.key) if isinstance(node.key, n.Slice) else self.expr(node.key)
        if type(key) is e.Const:
            kind = e.NameConstItem if type(obj) is e.Name else e.GetConstItem
            method = type(key.value) is str and key.value in STR_METHODS
            getitem = self.method_getitem if method else self.policy_getitem
            return kind(obj, key.value, node.pos, getitem)
        return e.GetItem(obj, key, node.pos, self.method_getitem)

    def expr_Slice(self, node: n.Slice) -> e.Slice:
        start, stop, step = (
            self.expr(p) if p is not None else None for p in (node.start, node.stop, node.step)
        )
        return e.Slice(start, stop, step)

    def arguments(self, arguments: n.Arguments) -> c.Arguments:
        return c.Arguments(
            tuple(self.expr(a) for a in arguments.args),
            tuple((k, self.expr(v)) for k, v in arguments.kwargs),
            self.expr(arguments.star) if arguments.star is not None else None,
            self.expr(arguments.dstar) if arguments.dstar is not None else None,
        )

    def expr_Call(self, node: n.Call) -> Any:
        func = self.expr(node.func)
        arguments = node.arguments
        if arguments is n.NO_ARGUMENTS or not _has_arguments(arguments):
            return c.CallEmpty(func, self.environment, node.pos)
        return c.Call(func, self.arguments(arguments), self.environment, node.pos)

    def _callable(self, kind: str, name: str, pos: int | None) -> Any:
        registry = self.filters if kind == "filter" else self.tests
        func = registry.get(name)
        if func is None and not self.soft:
            error = TemplateSyntaxError(f"No {kind} named {name!r}.")
            error.offset = pos
            raise error
        if func is not None and kind == "filter" and self.track_filter is not None:
            func = self.track_filter(name, func)
        return func

    def _applier(self, kind: str, name: str, arguments: n.Arguments, pos: int | None) -> Any:
        func = self._callable(kind, name, pos)
        if func is None:
            return c.MissingFunction(f"No {kind} named {name!r} found.", pos)  # run-time wording
        environment = self.environment if wants_environment(func) else None
        charge = charge_for(kind, name)  # big inputs and outputs count (see sandbox)
        if not _has_arguments(arguments):
            return c.ApplyBare(func, environment, charge, pos)
        return c.ApplyWithArguments(func, environment, self.arguments(arguments), charge, pos)

    def filter_chain(self, filters: tuple[n.Filter, ...]) -> c.FilterChain:
        return c.FilterChain(
            tuple(self._applier("filter", f.name, f.arguments, f.pos) for f in filters)
        )

    def expr_Filter(self, node: n.Filter) -> Any:
        return self._filter_or_test("filter", node)

    def expr_Test(self, node: n.Test) -> Any:
        return self._filter_or_test("test", node)

    def _filter_or_test(self, kind: str, node: n.Filter | n.Test) -> Any:
        # (a filter without a value heads a filter block's chain: see filter_chain)
        assert node.value is not None
        value = self.expr(node.value)
        arguments = node.arguments
        func = self._callable(kind, node.name, node.pos)
        if arguments is n.NO_ARGUMENTS and (inline := c.inline_test(value, func, node.pos)):
            return inline
        if func is None or arguments is not n.NO_ARGUMENTS or wants_environment(func):
            return c.Applied(value, self._applier(kind, node.name, arguments, node.pos))
        charge = charge_for(kind, node.name)  # big inputs and outputs count (see sandbox)
        if charge is no_charge:
            return c.ApplyFree(value, func, node.pos)
        return c.ApplyCharged(value, func, charge, node.pos)

    def expr_Unary(self, node: n.Unary) -> Any:
        operand = self.expr(node.operand)
        if node.op == "not":
            return o.Not(operand, node.pos)
        return o.Sign(operand, node.op == "-", node.pos)

    def expr_BinOp(self, node: n.BinOp) -> Any:
        if node.op == "+" and isinstance(node.left, n.BinOp) and node.left.op == "+":
            return self._add_chain(node)
        left = self.expr(node.left)
        right = self.expr(node.right)
        kind = o.Add if node.op == "+" else o.BinOp
        return kind(left, right, self.binops[node.op], node.pos)

    def _add_chain(self, node: n.BinOp) -> Any:
        """`a + b + c + ...` as one evaluator (a constant prefix stays one folded operand)."""
        links: list[tuple[int | None, n.Node]] = []
        while isinstance(node, n.BinOp) and node.op == "+":
            links.append((node.pos, node.right))
            left = node.left
            if isinstance(left, n.BinOp) and left.op == "+" and not self.is_constant(left):
                node = left
                continue
            break
        links.reverse()
        first = self.expr(left)  # compiled left to right, so the first error found is Jinja's
        operands = tuple((pos, self.expr(operand)) for pos, operand in links)
        return self.add_chain(first, operands, self.binops["+"], self.limits)

    def expr_Concat(self, node: n.Concat) -> Any:
        items = tuple(self.expr(item) for item in node.items)
        if self.track_printed is None:
            return concat_chain(items, node.pos, self.limits)
        return o.Concat(tuple(self.track_printed(item) for item in items), node.pos, self.limits)

    def expr_Compare(self, node: n.Compare) -> Any:
        first = self.expr(node.first)
        rest = tuple((self.comparisons[op], self.expr(operand)) for op, operand in node.ops)
        if len(rest) == 1:
            (checked, second), word = rest[0], node.ops[0][0]
            if word in ("==", "!=") and type(second) is e.Const:
                return o.CompareConst(first, second.value, word == "==", checked, node.pos)
            if word in ("==", "!="):
                return o.CompareEqual(first, second, word == "==", checked, node.pos)
            if word in ("in", "notin"):
                return o.Contains(first, second, word == "notin", checked, node.pos)
            return o.CompareOne(first, second, checked, node.pos)
        return o.CompareChain(first, rest, node.pos)

    def expr_And(self, node: n.And) -> Any:
        return o.And(self.expr(node.left), self.expr(node.right), node.pos)

    def expr_Or(self, node: n.Or) -> Any:
        return o.Or(self.expr(node.left), self.expr(node.right), node.pos)

    def expr_CondExpr(self, node: n.CondExpr) -> Any:
        soft, self.soft = self.soft, True
        test = self.expr(node.test)
        then = self.expr(node.then)
        otherwise = self.expr(node.otherwise) if node.otherwise is not None else None
        self.soft = soft
        return o.CondExpr(test, then, otherwise, node.pos)


# The compiling method of each node class (looked up once per class, not per node).
_STMT_METHODS: dict[type, Callable[[Compiler, Any], Any]] = {}
_EXPR_METHODS: dict[type, Callable[[Compiler, Any], Any]] = {}


def _has_arguments(arguments: n.Arguments) -> bool:
    return bool(arguments.args or arguments.kwargs or arguments.star or arguments.dstar)
