"""Turns the syntax tree into nested Python closures, once per template.

Every decision that does not depend on the data (which filter, which operator, which scope a
name lives in, whether an attribute could be a method) is made here, so that rendering only
calls closures.  No source code is generated and nothing is ``exec``-ed.

Expressions become ``fn(frame) -> value``; statements become ``fn(frame, out) -> None`` where
``out`` is the list the text is appended to.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any

from . import nodes as n
from .errors import LimitError, TemplateError, TemplateRuntimeError, TemplateSyntaxError
from .methods import DICT_METHODS
from .ops import COMPARISONS, make_binops, to_string
from .runtime import (
    MISSING,
    LoopContext,
    Macro,
    Markup,
    Namespace,
    Undefined,
    wants_environment,
)
from .sandbox import CHARS_PER_STEP as SHORT
from .sandbox import (
    Budget,
    Limits,
    _no_charge,
    charge_for,
    charge_size,
    check_key,
    check_length,
    check_stack,
    enter_render,
    leave_render,
    recursion_error,
)

Expr = Callable[["Frame"], Any]
Stmt = Callable[["Frame", list], None]


class RenderState(Budget):
    """What one render counts (steps, output size, depth: see Budget) and collects."""

    __slots__ = ("root_out", "spans", "root")

    def __init__(self, limits: Limits, root_out: list) -> None:
        Budget.__init__(self, limits)
        self.root: Frame | None = None
        self.root_out = root_out
        self.spans: list[tuple[int, int]] = []


class Frame:
    """One scope: its own variables, the enclosing scope, and the render's state."""

    __slots__ = ("vars", "parent", "state")

    def __init__(self, variables: dict, parent: Frame | None, state: RenderState) -> None:
        self.vars = variables
        self.parent = parent
        self.state = state


class BreakLoop(Exception):
    pass


class ContinueLoop(Exception):
    pass


_BREAK = BreakLoop()
_CONTINUE = ContinueLoop()


def located(error: BaseException, pos: int | None) -> TemplateError:
    """The engine's error for ``error``, placed at ``pos`` unless an inner node placed it."""
    if isinstance(error, TemplateError):
        if error.offset is None:
            error.offset = pos
        return error
    if isinstance(error, RecursionError):
        result: TemplateError = recursion_error()
    elif isinstance(error, MemoryError):
        result = LimitError("out of memory")
    else:
        result = TemplateRuntimeError(str(error) or type(error).__name__)
    result.offset = pos
    return result


def _references(nodes_: Iterable[Any], names: frozenset[str]) -> set[str]:
    """Which of ``names`` the subtree reads as variables (for varargs/kwargs/caller)."""
    found: set[str] = set()
    stack = list(nodes_)
    while stack:
        node = stack.pop()
        if isinstance(node, n.Name) and node.name in names:
            found.add(node.name)
        if isinstance(node, (tuple, list)):
            stack.extend(node)
        elif isinstance(node, (n.Node, n.Arguments, n.Param)):
            for slot in type(node).__slots__:
                stack.append(getattr(node, slot))
    return found


class Compiler:
    """Compiles one template for one environment."""

    def __init__(self, environment: Any) -> None:
        self.environment = environment
        self.limits: Limits = environment.limits
        self.policy = environment.policy
        self.binops = make_binops(self.limits)
        self.undefined = environment.undefined
        # Jinja reports an unknown filter or test when it compiles the template, unless it
        # sits inside an `if` or a conditional expression, where only reaching it fails.
        self.soft = False
        self.loop_depth = 0
        self.block_names: set[str] = set()
        # True while compiling a printed expression that Jinja would fold into a constant.
        self.folding = False
        # _is_constant's answers for this compile (see there).
        self.constant_memo: dict[int, tuple[Any, bool]] = {}
        # Whether constant sub-expressions are folded now (not while folding one).
        self.may_fold = True
        self.fold_state: RenderState | None = None
        # One closure per distinct constant and per distinct name, shared by every use.
        self.constants: dict[tuple[type, Any], Expr] = {}
        self.names: dict[str, Expr] = {}

    # ------------------------------------------------------------ statements

    def template(self, tree: n.Template) -> Stmt:
        return self.body(tree.body)

    def body(self, nodes_: tuple[n.Node, ...]) -> Stmt:
        # Text (and printed constants) stay plain strings inside a body: no closure each.
        items: list[Any] = []
        for node in nodes_:
            text = self._constant_text(node)
            if text is None:
                items.append(self.statement(node))
            elif items and type(items[-1]) is str:
                items[-1] += text
            else:
                items.append(text)
        if not items:
            return _nothing
        if len(items) == 1:
            only = items[0]
            return self._text(only) if type(only) is str else only
        if len(items) == 2 and type(items[0]) is not str and type(items[1]) is not str:
            first, second = items

            def run_two(frame: Frame, out: list) -> None:
                first(frame, out)
                second(frame, out)

            return run_two
        sequence = tuple(items)
        max_output = self.limits.max_output

        def run_all(frame: Frame, out: list) -> None:
            for item in sequence:
                if item.__class__ is str:
                    state = frame.state
                    state.size += len(item)
                    if state.size > max_output:
                        state.grow(0)  # raises, naming the limit
                    out.append(item)
                else:
                    item(frame, out)

        return run_all

    def _constant_text(self, node: n.Node) -> str | None:
        if isinstance(node, n.Data):
            return node.text
        if isinstance(node, n.Output) and isinstance(node.expr, n.Const):
            value = node.expr.value
            return value if type(value) is str else to_string(value)
        return None

    def _text(self, text: str) -> Stmt:
        length = len(text)

        def data(frame: Frame, out: list) -> None:
            frame.state.grow(length)
            out.append(text)

        return data

    def statement(self, node: n.Node) -> Stmt:
        method = getattr(self, "stmt_" + type(node).__name__)
        return method(node)

    def stmt_Data(self, node: n.Data) -> Stmt:
        return self._text(node.text)

    def stmt_Output(self, node: n.Output) -> Stmt:
        max_output = self.limits.max_output
        self.folding = _is_constant(node.expr, self.constant_memo)
        expr = self.expr(node.expr)
        self.folding = False
        pos = node.pos

        def output(frame: Frame, out: list) -> None:
            value = expr(frame)
            if type(value) is not str:
                try:
                    value = to_string(value)
                except Exception as error:
                    raise located(error, pos) from None
            # Budget.grow and Budget.step, inlined: this runs for every printed value.
            state = frame.state
            state.size += len(value)
            state.steps += 1
            if state.size > max_output:
                state.grow(0)
            if state.steps >= state.next_clock:
                state.check()
            out.append(value)

        return output

    def stmt_If(self, node: n.If) -> Stmt:
        soft, self.soft = self.soft, True
        test = self.expr(node.test)
        body = self.body(node.body)
        otherwise = self.body(node.otherwise)
        self.soft = soft
        pos = node.pos

        def if_(frame: Frame, out: list) -> None:
            value = test(frame)
            try:
                truth = value if type(value) is bool else bool(value)
            except Exception as error:
                raise located(error, pos) from None
            if truth:
                body(frame, out)
            else:
                otherwise(frame, out)

        return if_

    def stmt_For(self, node: n.For) -> Stmt:
        self._refuse_loop_target(node.target)
        iterable = self.expr(node.iter)
        soft, self.soft = self.soft, False
        assign = self.assigner(node.target, for_loop=True)
        condition = self.expr(node.condition) if node.condition is not None else None
        self.loop_depth += 1
        body = self.body(node.body)
        self.loop_depth -= 1
        otherwise = self.body(node.otherwise) if node.otherwise else None
        self.soft = soft
        recursive = node.recursive
        pos = node.pos

        def run(frame: Frame, out: list, values: Any, depth0: int, recurse: Any) -> None:
            state = frame.state
            try:
                items = _as_list(values, state.limits)
            except Exception as error:
                raise located(error, pos) from None
            if condition is not None:
                kept = []
                for item in items:
                    test_frame = Frame({}, frame, state)
                    assign(test_frame, item)
                    if condition(test_frame):
                        kept.append(item)
                items = kept
            if not items:
                if otherwise is not None:
                    otherwise(Frame({}, frame, state), out)
                return
            loop = LoopContext(items, depth0, recurse)
            if recursive:
                state.depth += 1
                if state.depth > state.limits.max_recursion:
                    raise located(
                        LimitError(
                            "recursive loops nest deeper than max_recursion"
                            f" ({state.limits.max_recursion})"
                        ),
                        pos,
                    )
                check_stack(state.limits)
            # Jinja runs `else` unless some iteration ran its body to the end: a `break` in the
            # first iteration, or `continue` in every one, still leads to `else`.
            completed = False
            try:
                for item in items:
                    state.steps += 1  # Budget.step, inlined for every iteration
                    if state.steps >= state.next_clock:
                        state.check()
                    loop.index0 += 1
                    inner = Frame({"loop": loop}, frame, state)
                    assign(inner, item)
                    try:
                        body(inner, out)
                    except ContinueLoop:
                        continue
                    except BreakLoop:
                        break
                    completed = True
            finally:
                if recursive:
                    state.depth -= 1
            if not completed and otherwise is not None:
                otherwise(Frame({}, frame, state), out)

        def recurse_from(frame: Frame) -> Callable[[Any, int], str]:
            def again(values: Any, depth0: int) -> str:
                captured: list = []
                run(frame, captured, values, depth0, again)
                return "".join(captured)

            return again

        def for_(frame: Frame, out: list) -> None:
            values = iterable(frame)
            run(frame, out, values, 0, recurse_from(frame) if recursive else None)

        return for_

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

    def stmt_Assign(self, node: n.Assign) -> Stmt:
        if self.loop_depth:
            self._refuse_loop_target(node.target)
        value = self.expr(node.value)
        assign = self.assigner(node.target)

        def set_(frame: Frame, out: list) -> None:
            assign(frame, value(frame))

        return set_

    def stmt_AssignBlock(self, node: n.AssignBlock) -> Stmt:
        body = self.body(node.body)
        assign = self.assigner(node.target)
        filters = self.filter_chain(node.filters)

        def set_block(frame: Frame, out: list) -> None:
            captured: list = []
            body(Frame({}, frame, frame.state), captured)
            assign(frame, filters(frame, "".join(captured)))

        return set_block

    def stmt_Macro(self, node: n.Macro) -> Stmt:
        build = self.macro(node.name, node.params, node.body, node.pos)
        name = node.name

        def define(frame: Frame, out: list) -> None:
            frame.vars[name] = build(frame)

        return define

    def stmt_CallBlock(self, node: n.CallBlock) -> Stmt:
        build_caller = self.macro(None, node.params, node.body, node.pos)
        call = node.call
        func = self.expr(call.func)
        arguments = self.arguments(call.arguments)
        pos = node.pos

        def call_block(frame: Frame, out: list) -> None:
            target = func(frame)
            args, kwargs = arguments(frame)
            kwargs["caller"] = build_caller(frame)
            frame.state.step()
            try:
                value = target(*args, **kwargs)
            except Exception as error:
                raise located(error, pos) from None
            if not isinstance(value, str):
                # Jinja joins the call's result with the output as it is.
                message = f"sequence item 0: expected str instance, {type(value).__name__} found"
                raise located(TemplateRuntimeError(message), pos)
            text = value
            frame.state.grow(len(text))
            out.append(text)

        return call_block

    def stmt_FilterBlock(self, node: n.FilterBlock) -> Stmt:
        soft, self.soft = self.soft, False  # an inner scope in Jinja, even inside an if
        body = self.body(node.body)
        filters = self.filter_chain(node.filters)
        self.soft = soft
        pos = node.pos

        def filter_block(frame: Frame, out: list) -> None:
            captured: list = []
            body(Frame({}, frame, frame.state), captured)
            value = filters(frame, "".join(captured))
            if not isinstance(value, str):
                # Jinja joins the filter's result with the output as it is.
                message = f"sequence item 0: expected str instance, {type(value).__name__} found"
                raise located(TemplateRuntimeError(message), pos)
            frame.state.grow(len(value))
            out.append(value)

        return filter_block

    def stmt_With(self, node: n.With) -> Stmt:
        assignments = [
            (self.assigner(target), self.expr(value)) for target, value in node.assignments
        ]
        body = self.body(node.body)

        def with_(frame: Frame, out: list) -> None:
            inner = Frame({}, frame, frame.state)
            values = [value(frame) for _, value in assignments]
            for (assign, _), value in zip(assignments, values, strict=True):
                assign(inner, value)
            body(inner, out)

        return with_

    def stmt_Generation(self, node: n.Generation) -> Stmt:
        # transformers' generation tag is a call block: its body is a function of its own,
        # where break and continue have no loop, and unknown filters fail when compiling.
        soft, self.soft = self.soft, False
        loop_depth, self.loop_depth = self.loop_depth, 0
        body = self.body(node.body)
        self.soft, self.loop_depth = soft, loop_depth

        def generation(frame: Frame, out: list) -> None:
            state = frame.state
            captured: list = []
            body(Frame({}, frame, state), captured)
            text = "".join(captured)
            # Spans are offsets in the final text, as transformers computes them: the length
            # of what the template has emitted at its top level so far.
            start = sum(map(len, state.root_out))
            state.spans.append((start, start + len(text)))
            out.append(text)

        return generation

    def stmt_Block(self, node: n.Block) -> Stmt:
        if node.name in self.block_names:
            error = TemplateSyntaxError(f"block {node.name!r} defined twice")
            error.offset = node.pos
            raise error
        self.block_names.add(node.name)
        soft, self.soft = self.soft, False
        loop_depth, self.loop_depth = self.loop_depth, 0
        body = self.body(node.body)
        self.soft, self.loop_depth = soft, loop_depth
        scoped = node.scoped

        def block(frame: Frame, out: list) -> None:
            # A block sees the template's own variables; the enclosing loop's only if scoped.
            state = frame.state
            body(Frame({}, frame if scoped else state.root, state), out)

        return block

    def stmt_Break(self, node: n.Break) -> Stmt:
        self._require_loop(node, "break")

        def break_(frame: Frame, out: list) -> None:
            raise _BREAK

        return break_

    def stmt_Continue(self, node: n.Continue) -> Stmt:
        self._require_loop(node, "continue")

        def continue_(frame: Frame, out: list) -> None:
            raise _CONTINUE

        return continue_

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

    def macro(
        self,
        name: str | None,
        params: tuple[n.Param, ...],
        body_nodes: tuple[n.Node, ...],
        pos: int,
    ) -> Callable[[Frame], Macro]:
        _check_parameters(params, pos)
        soft, self.soft = self.soft, False
        loop_depth, self.loop_depth = self.loop_depth, 0
        body = self.body(body_nodes)
        defaults = [self.expr(p.default) if p.default is not None else None for p in params]
        self.soft = soft
        self.loop_depth = loop_depth
        names = tuple(p.name for p in params)
        # The implicit varargs/kwargs/caller exist only when the body reads them and no
        # parameter has the name.
        used = _references(body_nodes, frozenset(["varargs", "kwargs", "caller"])) - set(names)
        catch_varargs = "varargs" in used
        catch_kwargs = "kwargs" in used
        catch_caller = "caller" in used
        undefined = self.undefined
        count = len(names)

        def build(definition_frame: Frame) -> Macro:
            def invoke(*args: Any, **kwargs: Any) -> str:
                state = definition_frame.state
                variables: dict[str, Any] = {}
                frame = Frame(variables, definition_frame, state)
                if len(args) > count and not catch_varargs:
                    raise TemplateRuntimeError(
                        f"macro {name!r} takes not more than {count} argument(s)"
                    )
                for index, param in enumerate(names):
                    if index < len(args):
                        variables[param] = args[index]
                    elif param in kwargs:
                        variables[param] = kwargs.pop(param)
                    elif defaults[index] is not None:
                        variables[param] = defaults[index](frame)
                    else:
                        variables[param] = undefined(
                            f"parameter {param!r} was not provided", name=param
                        )
                caller = MISSING if "caller" in names else kwargs.pop("caller", MISSING)
                if caller is not MISSING and not catch_caller and catch_kwargs:
                    kwargs["caller"] = caller  # an ordinary keyword for this macro
                    caller = MISSING
                if caller is not MISSING:
                    if not catch_caller:
                        raise TemplateRuntimeError(
                            f"macro {name!r} was invoked with two values for the special"
                            " caller argument. This is most likely a bug."
                        )
                    variables["caller"] = caller
                elif catch_caller and "caller" not in variables:
                    variables["caller"] = undefined("No caller defined", name="caller")
                if kwargs and not catch_kwargs:
                    key = next(iter(kwargs))
                    raise TemplateRuntimeError(f"macro {name!r} takes no keyword argument {key!r}")
                if catch_varargs:
                    variables["varargs"] = tuple(args[count:])
                if catch_kwargs:
                    variables["kwargs"] = kwargs
                state.step()
                state.depth += 1
                try:
                    if state.depth > state.limits.max_recursion:
                        raise LimitError(
                            f"macro calls nest deeper than max_recursion"
                            f" ({state.limits.max_recursion})"
                        )
                    check_stack(state.limits)
                    out: list = []
                    body(frame, out)
                finally:
                    state.depth -= 1
                return "".join(out)

            return Macro(name, names, (), catch_varargs, catch_kwargs, catch_caller, invoke)

        return build

    # ------------------------------------------------------------ assignment

    def assigner(self, target: n.Node, for_loop: bool = False) -> Callable[[Frame, Any], None]:
        if isinstance(target, n.TargetName):
            name = target.name

            def assign_name(frame: Frame, value: Any) -> None:
                frame.vars[name] = value

            return assign_name
        if isinstance(target, n.TargetTuple):
            parts = [self.assigner(item, for_loop) for item in target.items]
            count = len(parts)
            pos = target.pos

            def assign_tuple(frame: Frame, value: Any) -> None:
                try:
                    values = list(value)
                except TypeError:
                    message = f"cannot unpack non-iterable {type(value).__name__} object"
                    raise located(TemplateRuntimeError(message), pos) from None
                except Exception as error:
                    raise located(error, pos) from None
                if len(values) != count:
                    message = (
                        f"not enough values to unpack (expected {count}, got {len(values)})"
                        if len(values) < count
                        else f"too many values to unpack (expected {count})"
                    )
                    raise located(TemplateRuntimeError(message), pos)
                for part, item in zip(parts, values, strict=True):
                    part(frame, item)

            return assign_tuple
        assert isinstance(target, n.TargetAttr)
        name, attr, pos = target.name, target.attr, target.pos
        lookup = self.expr(n.Name(pos, name))

        def assign_attr(frame: Frame, value: Any) -> None:
            namespace = lookup(frame)
            if not isinstance(namespace, Namespace):
                raise located(
                    TemplateRuntimeError("cannot assign attribute on non-namespace object"), pos
                )
            namespace.set(attr, value)

        return assign_attr

    # ------------------------------------------------------------ expressions

    def expr(self, node: n.Node) -> Expr:
        if (
            self.may_fold
            and type(node) is not n.Const
            and (
                _is_constant(node, self.constant_memo)
                or (isinstance(node, n.CondExpr) and _is_constant(node.test, self.constant_memo))
            )
        ):
            value = self._fold(node)
            if value is not MISSING:
                return self.expr_Const(n.Const(node.pos, value))
        return getattr(self, "expr_" + type(node).__name__)(node)

    def _fold(self, node: n.Node) -> Any:
        """The value Jinja's optimizer would fold ``node`` into, or MISSING.

        Jinja evaluates a constant sub-expression when it compiles, with the sandbox's forgiving
        ``getitem`` (a failing slice is undefined), and keeps the value only when it has a safe
        representation (None, bool, numbers, strings and containers of them).
        """
        may_fold, folding = self.may_fold, self.folding
        self.may_fold, self.folding = False, True
        try:
            if isinstance(node, n.CondExpr):
                # Folded on its test alone: then the chosen branch must be constant too.
                test = self._evaluate(node.test)
                branch = node.then if test else node.otherwise
                if branch is None or not _is_constant(branch, self.constant_memo):
                    return MISSING
                value = self._evaluate(branch)
            else:
                value = self._evaluate(node)
        except Exception:
            return MISSING
        finally:
            self.may_fold, self.folding = may_fold, folding
        return value if _has_safe_repr(value) else MISSING

    def _evaluate(self, node: n.Node) -> Any:
        # One budget for all the folding of a template, published like a render's, so that a
        # constant expression that would walk or build too much stops here (and is left to the
        # render, under the render's own budget) instead of hanging the compiler.
        # (A tenth of max_steps: real templates fold a few tiny expressions.)
        if self.fold_state is None:
            steps = max(1000, self.limits.max_steps // 10)
            self.fold_state = RenderState(replace(self.limits, max_steps=steps), [])
        state = self.fold_state
        token = enter_render(state)
        try:
            return self.expr(node)(Frame({}, None, state))
        finally:
            leave_render(token)

    def expr_Const(self, node: n.Const) -> Expr:
        value = node.value
        if type(value) in (list, dict, set):
            # A folded container: each evaluation gets its own, as Jinja's generated code does
            # (and the copy is charged as building it would be).
            def fresh(frame: Frame) -> Any:
                charge_size(value)
                return _fresh(value)

            return fresh
        # 0.0 == -0.0 (and 1 == True): the key tells them apart by type and, for floats, text.
        key = (type(value), repr(value) if type(value) is float else value)
        loader = self.constants.get(key)
        if loader is None:
            loader = self.constants[key] = lambda frame: value
        return loader

    def expr_Name(self, node: n.Name) -> Expr:
        name = node.name
        loader = self.names.get(name)
        if loader is None:
            loader = self.names[name] = self._name_loader(name)
        return loader

    def _name_loader(self, name: str) -> Expr:
        undefined = self.undefined

        def load(frame: Frame) -> Any:
            scope: Frame | None = frame
            while scope is not None:
                variables = scope.vars
                if name in variables:
                    return variables[name]
                scope = scope.parent
            return undefined(name=name)

        return load

    def expr_TupleLit(self, node: n.TupleLit) -> Expr:
        items = tuple(self.expr(item) for item in node.items)
        return lambda frame: tuple([item(frame) for item in items])

    def expr_ListLit(self, node: n.ListLit) -> Expr:
        items = tuple(self.expr(item) for item in node.items)
        return lambda frame: [item(frame) for item in items]

    def expr_DictLit(self, node: n.DictLit) -> Expr:
        pairs = tuple((self.expr(k), self.expr(v)) for k, v in node.pairs)
        pos = node.pos

        def dict_(frame: Frame) -> dict:
            try:
                return {check_key(key(frame)): value(frame) for key, value in pairs}
            except TypeError as error:
                raise located(error, pos) from None

        return dict_

    def expr_GetAttr(self, node: n.GetAttr) -> Expr:
        obj = self.expr(node.obj)
        attr = node.attr
        pos = node.pos
        policy_getattr = self.policy.getattr
        undefined = self.undefined
        # A dict key is found directly unless the name could be a dict method (Jinja looks
        # attributes up before items, so `d.items` is the method even when the key exists).
        plain_key = attr not in DICT_METHODS and attr[:1] != "_" and not hasattr(dict, attr)

        def getattr_(frame: Frame) -> Any:
            value = obj(frame)
            if plain_key and type(value) is dict:
                try:
                    return value[attr]
                except KeyError:
                    return undefined(obj=value, name=attr)
            try:
                return policy_getattr(value, attr)
            except Exception as error:
                raise located(error, pos) from None

        return getattr_

    def expr_GetItem(self, node: n.GetItem) -> Expr:
        obj = self.expr(node.obj)
        pos = node.pos
        policy_getitem = self.policy.getitem
        if isinstance(node.key, n.Slice) and not self.folding:
            # Jinja subscripts slices directly: slicing None fails instead of being undefined.
            # (Jinja folds a printed expression that is constant as a whole at compile time,
            # through the sandbox's getitem, where such a slice is undefined instead.)
            make_slice = self._slice(node.key)

            def slice_(frame: Frame) -> Any:
                value = obj(frame)
                bounds = make_slice(frame)
                try:
                    result = value[bounds]
                except Exception as error:
                    raise located(error, pos) from None
                charge_size(result)  # a slice is a copy
                return result

            return slice_
        key = self._slice(node.key) if isinstance(node.key, n.Slice) else self.expr(node.key)

        def getitem(frame: Frame) -> Any:
            value = obj(frame)
            index = key(frame)
            # message['role'] and items[0]: found directly; a miss takes the sandbox's path.
            kind = value.__class__
            if (kind is dict and index.__class__ is str) or (
                kind is list and index.__class__ is int
            ):
                try:
                    return value[index]
                except LookupError:
                    pass
            try:
                return policy_getitem(value, index)
            except Exception as error:
                raise located(error, pos) from None

        return getitem

    def _slice(self, node: n.Slice) -> Expr:
        parts = [
            self.expr(p) if p is not None else None for p in (node.start, node.stop, node.step)
        ]
        start, stop, step = parts
        return lambda frame: slice(
            start(frame) if start else None,
            stop(frame) if stop else None,
            step(frame) if step else None,
        )

    def expr_Slice(self, node: n.Slice) -> Expr:
        return self._slice(node)

    def arguments(self, arguments: n.Arguments) -> Callable[[Frame], tuple[list, dict]]:
        positional = tuple(self.expr(a) for a in arguments.args)
        keywords = tuple((k, self.expr(v)) for k, v in arguments.kwargs)
        star = self.expr(arguments.star) if arguments.star is not None else None
        dstar = self.expr(arguments.dstar) if arguments.dstar is not None else None

        def evaluate(frame: Frame) -> tuple[list, dict]:
            args = [a(frame) for a in positional]
            if star is not None:
                extra = star(frame)
                try:
                    args.extend(extra)
                except TypeError:
                    kind = type(extra).__name__
                    raise TypeError(f"Value after * must be an iterable, not {kind}") from None
            kwargs = {k: v(frame) for k, v in keywords}
            if dstar is not None:
                mapping = dstar(frame)
                if not hasattr(mapping, "keys"):
                    kind = type(mapping).__name__
                    raise TypeError(f"argument after ** must be a mapping, not {kind}")
                for key in mapping.keys():
                    if key in kwargs:
                        raise TypeError(f"got multiple values for keyword argument {key!r}")
                    kwargs[key] = mapping[key]
            return args, kwargs

        return evaluate

    def expr_Call(self, node: n.Call) -> Expr:
        func = self.expr(node.func)
        environment = self.environment
        pos = node.pos
        arguments = node.arguments
        if arguments is n.NO_ARGUMENTS or not (
            arguments.args or arguments.kwargs or arguments.star or arguments.dstar
        ):

            def call_empty(frame: Frame) -> Any:
                target = func(frame)
                frame.state.step()
                try:
                    # pass_environment marks a global as well as a filter, as in Jinja.
                    result = target(environment) if wants_environment(target) else target()
                except Exception as error:
                    raise located(error, pos) from None
                charge_size(result)  # what a method built (split, upper, copy) counts
                return result

            return call_empty
        evaluate = self.arguments(arguments)

        def call(frame: Frame) -> Any:
            target = func(frame)
            try:
                args, kwargs = evaluate(frame)
                frame.state.step()
                if wants_environment(target):
                    args.insert(0, environment)
                result = target(*args, **kwargs)
            except Exception as error:
                raise located(error, pos) from None
            charge_size(result)
            return result

        return call

    def _callable(self, kind: str, name: str, pos: int) -> Any:
        registry = self.environment.filters if kind == "filter" else self.environment.tests
        func = registry.get(name)
        if func is None and not self.soft:
            error = TemplateSyntaxError(f"No {kind} named {name!r}.")
            error.offset = pos
            raise error
        return func

    def _applier(
        self, kind: str, name: str, arguments: n.Arguments, pos: int
    ) -> Callable[[Frame, Any], Any]:
        func = self._callable(kind, name, pos)
        if func is None:
            message = f"No {kind} named {name!r} found."  # Jinja's run-time wording

            def missing(frame: Frame, value: Any) -> Any:
                raise located(TemplateRuntimeError(message), pos)

            return missing
        environment = self.environment
        pass_environment = wants_environment(func)
        charge = charge_for(kind, name)  # big inputs and outputs count (see sandbox)
        if not (arguments.args or arguments.kwargs or arguments.star or arguments.dstar):
            if pass_environment:

                def apply_env(frame: Frame, value: Any) -> Any:
                    try:
                        if _costly(value):
                            charge(value, None)
                        result = func(environment, value)
                    except Exception as error:
                        raise located(error, pos) from None
                    if _costly(result):
                        charge(None, result)
                    return result

                return apply_env

            def apply_plain(frame: Frame, value: Any) -> Any:
                try:
                    if _costly(value):
                        charge(value, None)
                    result = func(value)
                except Exception as error:
                    raise located(error, pos) from None
                if _costly(result):
                    charge(None, result)
                return result

            return apply_plain
        evaluate = self.arguments(arguments)

        def apply(frame: Frame, value: Any) -> Any:
            try:
                args, kwargs = evaluate(frame)
                if _costly(value):
                    charge(value, None)
                if pass_environment:
                    result = func(environment, value, *args, **kwargs)
                else:
                    result = func(value, *args, **kwargs)
            except Exception as error:
                raise located(error, pos) from None
            if _costly(result):
                charge(None, result)
            return result

        return apply

    def filter_chain(self, filters: tuple[n.Filter, ...]) -> Callable[[Frame, Any], Any]:
        appliers = [self._applier("filter", f.name, f.arguments, f.pos) for f in filters]

        def chain(frame: Frame, value: Any) -> Any:
            for apply in appliers:
                value = apply(frame, value)
            return value

        return chain

    def expr_Filter(self, node: n.Filter) -> Expr:
        return self._filter_or_test("filter", node)

    def expr_Test(self, node: n.Test) -> Expr:
        return self._filter_or_test("test", node)

    def _filter_or_test(self, kind: str, node: n.Filter | n.Test) -> Expr:
        value = self.expr(node.value)
        arguments = node.arguments
        func = self._callable(kind, node.name, node.pos)
        if func is None or arguments is not n.NO_ARGUMENTS or wants_environment(func):
            apply = self._applier(kind, node.name, arguments, node.pos)
            return lambda frame: apply(frame, value(frame))
        pos = node.pos
        charge = charge_for(kind, node.name)  # big inputs and outputs count (see sandbox)
        if charge is _no_charge:
            # The common case (`x|trim`, `x is defined`) in one closure.
            def apply_free(frame: Frame) -> Any:
                operand = value(frame)
                try:
                    return func(operand)
                except Exception as error:
                    raise located(error, pos) from None

            return apply_free

        def apply_direct(frame: Frame) -> Any:
            operand = value(frame)
            try:
                # Short strings and scalars cost nothing: skip the charging call for them.
                kind = operand.__class__
                if not ((kind is str and len(operand) < SHORT) or kind in _SCALARS):
                    charge(operand, None)
                result = func(operand)
            except Exception as error:
                raise located(error, pos) from None
            kind = result.__class__
            if not ((kind is str and len(result) < SHORT) or kind in _SCALARS):
                charge(None, result)
            return result

        return apply_direct

    def expr_Unary(self, node: n.Unary) -> Expr:
        operand = self.expr(node.operand)
        pos = node.pos
        op = node.op

        def unary(frame: Frame) -> Any:
            value = operand(frame)
            try:
                if op == "not":
                    return not value
                if op == "-":
                    return -value
                return +value
            except Exception as error:
                raise located(error, pos) from None

        return unary

    def expr_BinOp(self, node: n.BinOp) -> Expr:
        left = self.expr(node.left)
        right = self.expr(node.right)
        op = self.binops[node.op]
        pos = node.pos
        if node.op == "+" and isinstance(node.left, n.BinOp) and node.left.op == "+":
            return self._add_chain(node)
        if node.op == "+":
            # Joining two short strings is most of what chat templates compute: do it inline
            # and leave everything else (sizes, numbers, lists) to the checked operator.
            def add(frame: Frame) -> Any:
                a = left(frame)
                b = right(frame)
                if a.__class__ is str and b.__class__ is str and len(a) + len(b) <= SHORT:
                    return a + b
                try:
                    return op(a, b)
                except Exception as error:
                    raise located(error, pos) from None

            return add

        def binop(frame: Frame) -> Any:
            a = left(frame)
            b = right(frame)
            try:
                return op(a, b)
            except Exception as error:
                raise located(error, pos) from None

        return binop

    def _add_chain(self, node: n.BinOp) -> Expr:
        """``a + b + c + ...`` in one closure, still evaluated and added left to right."""
        steps: list[tuple[int | None, Expr]] = []
        while isinstance(node, n.BinOp) and node.op == "+":
            steps.append((node.pos, self.expr(node.right)))
            left = node.left
            if (
                isinstance(left, n.BinOp)
                and left.op == "+"
                and not _is_constant(left, self.constant_memo)
            ):
                node = left
                continue
            first = self.expr(left)
            break
        steps.reverse()
        operands = tuple(steps)
        add = self.binops["+"]

        def add_chain(frame: Frame) -> Any:
            total = first(frame)
            for pos, operand in operands:
                value = operand(frame)
                if (
                    total.__class__ is str
                    and value.__class__ is str
                    and len(total) + len(value) <= SHORT
                ):
                    total = total + value
                    continue
                try:
                    total = add(total, value)
                except Exception as error:
                    raise located(error, pos) from None
            return total

        return add_chain

    def expr_Concat(self, node: n.Concat) -> Expr:
        items = tuple(self.expr(item) for item in node.items)
        pos = node.pos
        limits = self.limits

        def concat(frame: Frame) -> str:
            try:
                parts = []
                total = 0
                for item in items:
                    value = item(frame)
                    text = value if type(value) is str else to_string(value)
                    total += len(text)
                    parts.append(text)
                check_length(total, limits)
                return "".join(parts)
            except Exception as error:
                raise located(error, pos) from None

        return concat

    def expr_Compare(self, node: n.Compare) -> Expr:
        first = self.expr(node.first)
        rest = tuple((COMPARISONS[op], self.expr(operand)) for op, operand in node.ops)
        pos = node.pos
        if len(rest) == 1 and node.ops[0][0] in ("==", "!="):
            second = rest[0][1]
            equal = node.ops[0][0] == "=="
            checked = rest[0][0]

            def compare_equal(frame: Frame) -> Any:
                a = first(frame)
                b = second(frame)
                # A short string, a number or None compares with anything in bounded time,
                # so only other values go through the operator that charges the budget.
                kind = a.__class__
                try:
                    if (kind is str and len(a) <= SHORT) or kind in _SCALARS:
                        return a == b if equal else a != b
                    return checked(a, b)
                except Exception as error:
                    raise located(error, pos) from None

            return compare_equal
        if len(rest) == 1:
            ((op, second),) = rest

            def compare_one(frame: Frame) -> Any:
                a = first(frame)
                b = second(frame)
                try:
                    return op(a, b)
                except Exception as error:
                    raise located(error, pos) from None

            return compare_one

        def compare(frame: Frame) -> Any:
            left = first(frame)
            try:
                for op, operand in rest:
                    right = operand(frame)
                    result = op(left, right)
                    if not result:
                        return result
                    left = right
                return result
            except TemplateError:
                raise
            except Exception as error:
                raise located(error, pos) from None

        return compare

    def expr_And(self, node: n.And) -> Expr:
        left = self.expr(node.left)
        right = self.expr(node.right)
        pos = node.pos

        def and_(frame: Frame) -> Any:
            value = left(frame)
            try:
                if not value:
                    return value
            except Exception as error:
                raise located(error, pos) from None
            return right(frame)

        return and_

    def expr_Or(self, node: n.Or) -> Expr:
        left = self.expr(node.left)
        right = self.expr(node.right)
        pos = node.pos

        def or_(frame: Frame) -> Any:
            value = left(frame)
            try:
                if value:
                    return value
            except Exception as error:
                raise located(error, pos) from None
            return right(frame)

        return or_

    def expr_CondExpr(self, node: n.CondExpr) -> Expr:
        soft, self.soft = self.soft, True
        test = self.expr(node.test)
        then = self.expr(node.then)
        otherwise = self.expr(node.otherwise) if node.otherwise is not None else None
        self.soft = soft
        pos = node.pos

        def conditional(frame: Frame) -> Any:
            value = test(frame)
            try:
                truth = bool(value)
            except Exception as error:
                raise located(error, pos) from None
            if truth:
                return then(frame)
            if otherwise is None:
                # Always the lenient Undefined, whatever the environment's class, as in Jinja.
                return Undefined(
                    "the inline if-expression evaluated to false and no else section was defined."
                )
            return otherwise(frame)

        return conditional


_SCALARS = frozenset([int, float, bool, type(None)])


def _costly(value: Any) -> bool:
    """Whether a filter's input or output is big enough to be charged (see sandbox)."""
    kind = value.__class__
    return not ((kind is str and len(value) < SHORT) or kind in _SCALARS)


# Filters Jinja gives the render context: its optimizer never folds them.
_CONTEXT_FILTERS = frozenset(["random", "map", "select", "reject", "selectattr", "rejectattr"])


def _fresh(value: Any) -> Any:
    """A copy of a folded constant whose containers are new objects."""
    kind = type(value)
    if kind is list:
        return [_fresh(item) for item in value]
    if kind is dict:
        return {key: _fresh(item) for key, item in value.items()}
    if kind is set:
        return set(value)
    if kind is tuple:
        return tuple(_fresh(item) for item in value)
    return value


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


def _is_constant(node: Any, memo: dict[int, tuple[Any, bool]] | None = None) -> bool:
    """Whether Jinja's optimizer may fold ``node`` into a constant when compiling.

    The compiler asks this of every node it compiles, each time about the whole subtree; with
    ``memo`` (kept for one compile, holding the node so that its id stays its own) each
    subtree is walked once.
    """
    if memo is None:
        return _constant(node, None)
    hit = memo.get(id(node))
    if hit is None:
        hit = memo[id(node)] = (node, _constant(node, memo))
    return hit[1]


def _constant(node: Any, memo: dict[int, tuple[Any, bool]] | None) -> bool:
    if isinstance(node, n.Const):
        return True
    if isinstance(node, (n.TupleLit, n.ListLit)):
        return all(_is_constant(item, memo) for item in node.items)
    if isinstance(node, n.DictLit):
        return all(_is_constant(k, memo) and _is_constant(v, memo) for k, v in node.pairs)
    if isinstance(node, (n.BinOp, n.And, n.Or)):
        return _is_constant(node.left, memo) and _is_constant(node.right, memo)
    if isinstance(node, n.Unary):
        return _is_constant(node.operand, memo)
    if isinstance(node, n.Concat):
        return all(_is_constant(item, memo) for item in node.items)
    if isinstance(node, n.Compare):
        return _is_constant(node.first, memo) and all(_is_constant(v, memo) for _, v in node.ops)
    if isinstance(node, n.CondExpr):
        # Strict here; a conditional on a constant test is folded on its own (see expr).
        return all(_is_constant(p, memo) for p in (node.test, node.then, node.otherwise) if p)
    if isinstance(node, (n.Filter, n.Test)):
        arguments = node.arguments
        return (
            node.value is not None
            and not (isinstance(node, n.Filter) and node.name in _CONTEXT_FILTERS)
            and _is_constant(node.value, memo)
            and arguments.star is None
            and arguments.dstar is None
            and all(_is_constant(a, memo) for a in arguments.args)
            and all(_is_constant(v, memo) for _, v in arguments.kwargs)
        )
    if isinstance(node, n.GetAttr):
        return _is_constant(node.obj, memo)
    if isinstance(node, n.GetItem):
        return _is_constant(node.obj, memo) and _is_constant(node.key, memo)
    if isinstance(node, n.Slice):
        return all(_is_constant(p, memo) for p in (node.start, node.stop, node.step) if p)
    return False


def _check_parameters(params: tuple[n.Param, ...], pos: int) -> None:
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


def _nothing(frame: Frame, out: list) -> None:
    return None


def _as_list(values: Any, limits: Limits) -> list:
    """The items a for loop walks: a dict's keys, a string's characters, nothing for undefined."""
    if type(values) is list:
        return values
    if isinstance(values, Undefined):
        return list(iter(values))
    if isinstance(values, (dict, str, tuple, range)):
        return list(values)
    items = []
    for item in values:
        items.append(item)
        if len(items) > limits.max_items:
            raise LimitError(f"an iterable of more than {limits.max_items} items exceeds max_items")
    return items
