"""The compiler's switch: the operators, `str` methods, filters and output of a template
compiled with provenance keep the sources of the strings they are given."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from ..builtins.filters import FILTERS, chat_tojson
from ..builtins.methods import STR_METHODS
from ..builtins.ops import to_string
from ..run.evaluator import Expression
from ..run.expressions import Const
from ..run.frames import located
from ..run.operators import AddChain
from ..run.statements import Output
from ..sandbox.budget import (
    CHARS_PER_STEP,
    check_length,
)
from ..values.runtime import Markup, Undefined, wants_environment
from .tojson import _exact_chat_tojson, _exact_tojson
from .traced import (
    _EXACT_METHODS,
    Sourced,
    SourcedMarkup,
    _checked,
    _interleave,
    _make,
    _Paths,
    _recased,
    derived,
    join_text,
    paths_of,
    percent_format,
    str_format,
)

# -------------------------------------------------------------------- the compiler's switch


def track_operations(compiler: Any) -> None:
    """Make `compiler` build a template whose operations keep the sources of strings."""
    compiler.binops = {
        name: _tracked_operator(name, op) if name in _TEXT_OPERATORS else op
        for name, op in compiler.binops.items()
    }
    compiler.method_getattr = _tracked_lookup(compiler.policy_getattr)
    compiler.method_getitem = _tracked_lookup(compiler.policy_getitem)
    compiler.comparisons = {
        **compiler.comparisons,
        "==": _short_text_first(compiler.comparisons["=="], operator.eq),
        "!=": _short_text_first(compiler.comparisons["!="], operator.ne),
    }
    compiler.track_filter = tracked_filter
    compiler.track_printed = Printed
    compiler.add_chain = SourcedAddChain
    compiler.output = sourced_output


def _short_text_first(
    compare: Callable[[Any, Any], bool], direct: Callable[[Any, Any], bool]
) -> Callable[[Any, Any], bool]:
    # A short string compares with anything in bounded time: the evaluators' fast path for a
    # plain one (``message.role == 'user'``), taken for a sourced one too.
    def checked(a: Any, b: Any) -> bool:
        if a.__class__ is Sourced and len(a) <= CHARS_PER_STEP:
            return direct(a, b)
        return compare(a, b)

    return checked


class SourcedAddChain(AddChain):
    """`a + b + c`: a run of string operands is joined once, keeping the sources, instead of
    making a sourced string per `+`; the lengths are checked and charged as each `+` would."""

    __slots__ = ("short",)
    short: int

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        # (sums shorter than this cost nothing: see ops.make_add)
        self.short = min(CHARS_PER_STEP, self.limits.max_string + 1)

    def eval(self, frame: Any) -> Any:
        total, parts = self.parts(frame)
        return total if parts is None else join_text(parts)

    def parts(self, frame: Any) -> tuple[Any, list[Any] | None]:
        """The sum, as `(None, strings)` while every operand is a string (the strings to
        join), else as `(value, None)`."""
        total = self.first.eval(frame)
        parts = None  # the strings added so far, while every operand is one
        length = 0
        short = self.short
        for pos, operand in self.operands:
            value = operand.value if operand.__class__ is Const else operand.eval(frame)
            kind = value.__class__
            if parts is not None:
                # (plain or sourced text joins as text; markup escapes what is added to it)
                if kind is str or kind is Sourced:
                    length += len(value)
                    if length >= short:
                        try:
                            check_length(length, self.limits)
                        except Exception as error:
                            raise located(error, pos) from None
                    parts.append(value)
                    continue
                total = join_text(parts)
                parts = None
            else:
                held = total.__class__
                if (held is str or held is Sourced) and (kind is str or kind is Sourced):
                    if held is str and kind is str and len(total) + len(value) <= CHARS_PER_STEP:
                        total = total + value  # (plain text: AddChain's own fast path)
                        continue
                    length = len(total) + len(value)
                    if length >= short:
                        try:
                            check_length(length, self.limits)
                        except Exception as error:
                            raise located(error, pos) from None
                    parts = [total, value]
                    continue
            try:
                total = self.add(total, value)
            except Exception as error:
                raise located(error, pos) from None
        return (total, None) if parts is None else (None, parts)


def printed_text(value: Any) -> Any:
    """What `{{ x }}` and `~` print of `value`, keeping its sources: a container's text
    (its `repr`) is attributed to every source it holds."""
    cls = value.__class__
    if cls is Sourced or cls is str:
        return value
    if cls is SourcedMarkup:  # printing makes it text (str() of it is plain)
        return _make(str.__str__(value), value.segments)
    if isinstance(value, (list, tuple, dict)):
        return derived(to_string(value), (value,))
    return to_string(value)


class SourcedOutput(Output):
    """`{{ x }}` of a template compiled with provenance."""

    __slots__ = ()
    printed = staticmethod(printed_text)


class SourcedSumOutput(SourcedOutput):
    """`{{ a + b + c }}` of a template compiled with provenance: a sum of strings is printed
    as its strings, which the output joins anyway, instead of being joined first."""

    __slots__ = ()
    expr: SourcedAddChain

    def run(self, frame: Any, out: list[Any]) -> None:
        value, parts = self.expr.parts(frame)
        if parts is None:  # (what Output.run does with the value)
            if value.__class__ is not str:
                try:
                    value = printed_text(value)
                except Exception as error:
                    raise located(error, self.pos) from None
            parts = [value]
        state = frame.state
        state.size += sum(map(len, parts))
        if state.size > self.max_output:
            state.grow(0)
        out += parts


def sourced_output(expr: Any, pos: int, max_output: int, cost: int = 1) -> Output:
    """The statement `{{ expr }}` of a template compiled with provenance."""
    kind = SourcedSumOutput if expr.__class__ is SourcedAddChain else SourcedOutput
    return kind(expr, pos, max_output, cost)


class Printed(Expression):
    """An operand of `~` of a template compiled with provenance: evaluates to what it prints
    (see `printed_text`)."""

    __slots__ = ("expr",)
    expr: Expression

    def __init__(self, expr: Expression) -> None:
        self.expr = expr

    def eval(self, frame: Any) -> Any:
        value = self.expr.eval(frame)
        if value.__class__ is str or value.__class__ is Sourced:
            return value
        try:
            return printed_text(value)
        except Exception:
            return value  # printing it again fails where the engine places its errors


# The operators that can make text of text (`-`, `/`, `//` and `**` only make numbers).
_TEXT_OPERATORS = frozenset(["+", "*", "%"])


def _tracked_operator(name: str, op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def operate(a: Any, b: Any) -> Any:
        result = op(a, b)
        if result.__class__ is str and result:
            if name == "%" and a.__class__ is str:
                return percent_format(a, b)
            return derived(result, (a, b))
        if isinstance(result, Markup) and result.__class__ is not SourcedMarkup:
            return derived(result, (a, b))
        return result

    return operate


def _tracked_lookup(lookup: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def find(obj: Any, name: Any) -> Any:
        value = lookup(obj, name)
        if (
            isinstance(obj, str)
            and isinstance(name, str)
            and name in STR_METHODS
            and not isinstance(value, Undefined)
        ):
            return _tracked_method(obj, name, value)
        return value

    return find


def _tracked_method(obj: str, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        if name == "join" and len(args) == 1 and not kwargs and obj.__class__ is str:
            items = list(args[0]) if not isinstance(args[0], list) else args[0]
            return _checked(_interleave(obj, items), method(items), (obj, items))
        result = method(*args, **kwargs)
        if result.__class__ is Sourced:
            if obj.__class__ is Sourced and name in _EXACT_METHODS:
                return result  # what it left untraced is the arguments' plain text
            return _completed(result, (obj, args, kwargs))
        if result.__class__ is not str or not result:
            return result
        if name in ("format", "format_map"):
            if name == "format_map":
                return str_format(obj, result, (), args[0] if args else {})
            return str_format(obj, result, args, kwargs)
        return derived(result, (obj, args, kwargs))

    return call


def tracked_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """`func` (the filter `name`), its string results keeping their sources."""
    if name in _PASSING and func is FILTERS.get(name):
        return func
    exact = _EXACT_FILTERS.get(name)
    if name == "tojson" and func is chat_tojson:
        exact = _exact_chat_tojson
    takes_environment = wants_environment(func)

    def apply(*args: Any, **kwargs: Any) -> Any:
        inputs = args[1:] if takes_environment else args
        if exact is not None:
            if name == "join" and inputs and not isinstance(inputs[0], (list, tuple, str, dict)):
                # a generator is read once: for the filter and for the exact join alike
                inputs = (list(inputs[0]), *inputs[1:])
                args = (args[0], *inputs) if takes_environment else inputs
            result = func(*args, **kwargs)
            if isinstance(result, Markup):
                return derived(result, (inputs, kwargs))
            try:
                return exact(result, *inputs, **kwargs)
            except Exception:  # a shape the exact form does not know: conservative
                return _settle(result, inputs, kwargs)
        return _settle(func(*args, **kwargs), inputs, kwargs)

    if takes_environment:
        apply.jinja_pass_arg = func.jinja_pass_arg  # type: ignore[attr-defined]
    apply.__name__ = getattr(func, "__name__", name)
    return apply


def _settle(result: Any, inputs: tuple, kwargs: dict) -> Any:
    # A string made from sourced inputs is attributed to all of them where no exact
    # operation traced it (Markup stays untracked: its type decides how later filters
    # escape it).
    if result.__class__ is str or result.__class__ is Sourced:
        return _completed(result, (inputs, kwargs))
    if isinstance(result, Markup) and result.__class__ is not SourcedMarkup:
        return derived(result, (inputs, kwargs))
    if result.__class__ is list and any(isinstance(item, str) for item in result):
        paths = _Paths((inputs, kwargs))  # (the inputs walked once for all the items)
        return [_completed(item, paths) for item in result]
    return result


def _completed(result: Any, inputs: Any) -> Any:
    """`result` with every character no segment covers attributed to all of `inputs`.

    A filter written for plain strings may trace part of its result (a sourced operand added
    to a plain one) and lose the rest (a plain `"".join`): the untraced characters are
    attributed to every source, so that none is left without one.
    """
    if result.__class__ is str:
        return derived(result, inputs)
    if result.__class__ is not Sourced:
        return result
    gaps = _uncovered(result.segments, len(result))
    if not gaps:
        return result
    paths = inputs.get() if inputs.__class__ is _Paths else paths_of(inputs)
    extra = [(start, end, path, None, False) for start, end in gaps for path in paths]
    return _make(result, (*result.segments, *extra))


def _uncovered(segments: tuple[tuple, ...], length: int) -> list[tuple[int, int]]:
    # The maximal runs of [0, length) that no segment covers, in order.
    if len(segments) == 1 and segments[0][0] == 0 and segments[0][1] >= length:
        return []  # (one value's text, the whole of it: the usual case)
    gaps = []
    reached = 0
    for start, end in sorted(segment[:2] for segment in segments):
        if end <= start:
            continue
        if start > reached:
            gaps.append((reached, start))
        if end > reached:
            reached = end
    if reached < length:
        gaps.append((reached, length))
    return gaps


def _exact_join(result: str, value: Any, d: Any = "", attribute: Any = None) -> Any:
    if attribute is not None:
        return derived(result, (value, d))
    items = [item if isinstance(item, str) else str(item) for item in value]
    return _checked(_interleave(str(d), items), result, (value, d))


def _exact_method(method: str) -> Callable[..., Any]:
    def apply(result: str, value: Any, *args: Any, **kwargs: Any) -> Any:
        if value.__class__ is not Sourced:
            return derived(result, (value, args, kwargs))
        return _checked(getattr(value, method)(*args), result, (value,))

    return apply


def _exact_title(result: str, value: Any) -> Any:
    if value.__class__ is Sourced and len(result) == len(value):
        return _recased(value, result)
    return derived(result, (value,))


def _exact_reverse(result: Any, value: Any) -> Any:
    if value.__class__ is Sourced:
        return _checked(value[::-1], result, (value,))
    return result if not isinstance(result, str) else derived(result, (value,))


def _exact_indent(
    result: str, s: Any, width: Any = 4, first: bool = False, blank: bool = False
) -> Any:
    indention = width if isinstance(width, str) else " " * width
    lines = (s + "\n").splitlines()
    if blank:
        text = _interleave("\n" + indention, lines)
    else:
        rest = [join_text((indention, line)) if line else line for line in lines[1:]]
        text = lines[0]
        if rest:
            text = join_text((text, "\n", _interleave("\n", rest)))
    if first:
        text = join_text((indention, text))
    return _checked(text, result, (s, width))


def _exact_format(result: str, value: Any, *args: Any, **kwargs: Any) -> Any:
    if args and not kwargs:
        return percent_format(value, args)
    return derived(result, (value, args, kwargs))


def _exact_map(result: Any, *inputs: Any, **kwargs: Any) -> Any:
    if isinstance(result, str):
        return derived(result, (inputs, kwargs))
    paths = _Paths((inputs, kwargs))  # (the inputs walked once for all the items)
    return (derived(item, paths) if item.__class__ is str else item for item in result)


# Built-in filters that make no text: they return numbers, or the input's own items (which
# keep their sources), or containers of them.
_PASSING = frozenset(
    """abs batch count d default dictsort first float groupby int items last length list max
    min random reject rejectattr round select selectattr slice sort sum unique wordcount""".split()
)

_EXACT_FILTERS: dict[str, Callable[..., Any]] = {
    "join": _exact_join,
    "tojson": _exact_tojson,
    "trim": _exact_method("strip"),
    "upper": _exact_method("upper"),
    "lower": _exact_method("lower"),
    "capitalize": _exact_method("capitalize"),
    "center": _exact_method("center"),
    "title": _exact_title,
    "reverse": _exact_reverse,
    "indent": _exact_indent,
    "format": _exact_format,
    "map": _exact_map,
}
