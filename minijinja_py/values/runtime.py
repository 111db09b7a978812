"""Values that exist only while templates run: undefined values, loops, namespaces, macros."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from ..errors import MAX_MESSAGE, TemplateRuntimeError, UndefinedError, bounded_repr
from ..sandbox.budget import measure_escaped
from ..sandbox.measure import measure_text
from ..sandbox.opaque import shown_str
from ..sandbox.printing import AttributeBag
from .loops import NO_ITEM, LoopState


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "missing"

    def __reduce__(self):
        return "MISSING"


MISSING: Any = _Missing()


def pass_environment(func: Callable[..., Any]) -> Callable[..., Any]:
    """Mark a filter, test or global so that the environment is passed as its first argument.

    Examples:
        >>> from minijinja_py import Environment
        >>> @pass_environment
        ... def describe(env, value):
        ...     return f"{value} (trim_blocks={env.trim_blocks})"
        >>> env = Environment()
        >>> env.filters["describe"] = describe
        >>> env.from_string("{{ 1|describe }}").render()
        '1 (trim_blocks=False)'
    """
    func.jinja_pass_arg = "environment"  # type: ignore[attr-defined]
    return func


def wants_environment(func: Callable[..., Any]) -> bool:
    """True when `func` was marked by `pass_environment` (ours or a Jinja2-style marker)."""
    marker = getattr(func, "jinja_pass_arg", None)
    if marker is None:
        return False
    return getattr(marker, "name", marker) == "environment"


def object_type_repr(obj: Any) -> str:
    """How error messages name the type of a value: `'dict object'`, `'None'`."""
    if obj is None:
        return "None"
    if obj is Ellipsis:
        return "Ellipsis"
    cls = type(obj)
    if cls.__module__ == "builtins":
        return f"{cls.__name__} object"
    if cls.__module__.startswith("minijinja_py."):
        jinja_name = _JINJA_TYPE_NAMES.get(cls.__name__)
        if jinja_name is not None:
            return f"{jinja_name} object"
    return f"{cls.__module__}.{cls.__name__} object"


# Where Jinja2 (and markupsafe) define the classes ours stand for: messages name them alike.
_JINJA_TYPE_NAMES = {
    "Markup": "markupsafe.Markup",
    "Namespace": "jinja2.utils.Namespace",
    "SandboxedNamespace": "jinja2.utils.Namespace",
    "Cycler": "jinja2.utils.Cycler",
    "Joiner": "jinja2.utils.Joiner",
    "LoopContext": "jinja2.runtime.LoopContext",
    "TemplateReference": "jinja2.runtime.TemplateReference",
    "BlockReference": "jinja2.runtime.BlockReference",
    "Macro": "jinja2.runtime.Macro",
    "Undefined": "jinja2.runtime.Undefined",
    "ChainableUndefined": "jinja2.runtime.ChainableUndefined",
    "StrictUndefined": "jinja2.runtime.StrictUndefined",
    "_GroupTuple": "jinja2.filters._GroupTuple",
}


class Undefined:
    """A value that is not there: prints as nothing, iterates as nothing, fails on real use.

    The default of every `Environment`, as Jinja2's default `Undefined`: arithmetic, calls
    and attributes of it raise `UndefinedError`.

    Examples:
        >>> from minijinja_py import Template
        >>> Template("[{{ missing }}]{% for x in missing %}never{% endfor %}").render()
        '[]'
        >>> Template("{{ 'set' if missing is defined else 'unset' }}").render()
        'unset'
    """

    __slots__ = ("_undefined_hint", "_undefined_obj", "_undefined_name", "_undefined_exception")

    def __init__(
        self,
        hint: str | None = None,
        obj: Any = MISSING,
        name: str | None = None,
        exc: type[Exception] = UndefinedError,
    ) -> None:
        self._undefined_hint = hint
        self._undefined_obj = obj
        self._undefined_name = name
        self._undefined_exception = exc

    @property
    def _undefined_message(self) -> str:
        if self._undefined_hint:
            return self._undefined_hint
        # The name is quoted as repr would, within the bounds of a message (half of it, so that
        # the message is cut once): a key can be a 200-million-character string or an int past
        # Python's digit limit.
        name = bounded_repr(self._undefined_name, MAX_MESSAGE // 2)
        if self._undefined_obj is MISSING:
            return f"{name} is undefined"
        if not isinstance(self._undefined_name, str):
            return f"{object_type_repr(self._undefined_obj)} has no element {name}"
        return f"{object_type_repr(self._undefined_obj)!r} has no attribute {name}"

    def _fail_with_undefined_error(self, *args: Any, **kwargs: Any) -> Any:
        raise self._undefined_exception(self._undefined_message)

    def __getattr__(self, name: str) -> Any:
        if name[:2] == "__":
            raise AttributeError(name)
        return self._fail_with_undefined_error()

    # (the aliases below, declared for type checkers, which infer only the first of a chain)
    __radd__: Callable[..., Any]
    __sub__: Callable[..., Any]
    __rsub__: Callable[..., Any]
    __rmul__: Callable[..., Any]
    __div__: Callable[..., Any]
    __rdiv__: Callable[..., Any]
    __rtruediv__: Callable[..., Any]
    __rfloordiv__: Callable[..., Any]
    __rmod__: Callable[..., Any]
    __pos__: Callable[..., Any]
    __neg__: Callable[..., Any]
    __getitem__: Callable[..., Any]
    __lt__: Callable[..., Any]
    __le__: Callable[..., Any]
    __gt__: Callable[..., Any]
    __ge__: Callable[..., Any]
    __float__: Callable[..., Any]
    __complex__: Callable[..., Any]
    __rpow__: Callable[..., Any]
    __add__ = __radd__ = __sub__ = __rsub__ = _fail_with_undefined_error
    __mul__ = __rmul__ = __div__ = __rdiv__ = _fail_with_undefined_error
    __truediv__ = __rtruediv__ = _fail_with_undefined_error
    __floordiv__ = __rfloordiv__ = _fail_with_undefined_error
    __mod__ = __rmod__ = __pos__ = __neg__ = _fail_with_undefined_error
    __call__ = __getitem__ = _fail_with_undefined_error
    __lt__ = __le__ = __gt__ = __ge__ = _fail_with_undefined_error
    __int__ = __float__ = __complex__ = _fail_with_undefined_error
    __pow__ = __rpow__ = _fail_with_undefined_error

    def __eq__(self, other: Any) -> bool:
        return type(self) is type(other)

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return id(type(self))

    def __str__(self) -> str:
        return ""

    def __len__(self) -> int:
        return 0

    def __iter__(self) -> Iterator[Any]:
        yield from ()

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "Undefined"


class ChainableUndefined(Undefined):
    """An undefined value whose attributes and items are undefined too, instead of failing.

    Examples:
        >>> from minijinja_py import Environment
        >>> env = Environment(undefined=ChainableUndefined)
        >>> env.from_string("[{{ user.name.first }}]").render()
        '[]'
    """

    __slots__ = ()

    def __html__(self) -> str:
        return str(self)

    def __getattr__(self, name: str) -> Any:
        if name[:2] == "__":
            raise AttributeError(name)
        return self

    def __getitem__(self, key: Any) -> Any:
        return self


class StrictUndefined(Undefined):
    """An undefined value that fails on every use, printing and testing for truth included.

    Examples:
        >>> from minijinja_py import Environment, UndefinedError
        >>> env = Environment(undefined=StrictUndefined)
        >>> try:
        ...     env.from_string("Hello {{ name }}").render()
        ... except UndefinedError as error:
        ...     print(error.message)
        'name' is undefined
    """

    __slots__ = ()
    __iter__: Callable[..., Any]
    __str__: Callable[..., Any]
    __len__: Callable[..., Any]
    __eq__: Callable[..., Any]
    __ne__: Callable[..., Any]
    __bool__: Callable[..., Any]
    __hash__: Callable[..., Any]
    __contains__: Callable[..., Any]
    __iter__ = __str__ = __len__ = Undefined._fail_with_undefined_error
    __eq__ = __ne__ = __bool__ = __hash__ = Undefined._fail_with_undefined_error
    __contains__ = Undefined._fail_with_undefined_error


def is_undefined(value: Any) -> bool:
    return isinstance(value, Undefined)


class Markup(str):
    """A string already escaped for HTML: escaping it again leaves it unchanged."""

    __slots__ = ()

    def __new__(cls, base: Any = "") -> Markup:
        if hasattr(base, "__html__"):
            base = base.__html__()
        elif not isinstance(base, str):
            measure_text(base)  # (``[s] * 1000|safe`` prints the list)
        return super().__new__(cls, base)

    def __html__(self) -> Markup:
        return self

    # (``str.__new__(Markup, text)`` is ``Markup(text)`` for a plain str, without __new__'s
    # look for __html__.)
    def __add__(self, other: Any) -> Any:
        if isinstance(other, str) or hasattr(other, "__html__"):
            return str.__new__(Markup, str.__add__(self, escape(other)))
        return NotImplemented

    def __radd__(self, other: Any) -> Any:
        if isinstance(other, str) or hasattr(other, "__html__"):
            return str.__new__(Markup, str.__add__(escape(other), self))
        return NotImplemented

    # markupsafe's operators: the results stay markup, and ``%`` escapes what it inserts.
    def __mul__(self, count: Any) -> Markup:
        return Markup(str.__mul__(self, count))

    __rmul__ = __mul__

    def __getitem__(self, key: Any) -> Markup:
        return Markup(str.__getitem__(self, key))

    def __mod__(self, value: Any) -> Markup:
        if _markup_mod is None:  # (never: the package's import loads the builtins)
            raise TemplateRuntimeError("Markup % needs the builtins, which are not loaded")
        return _markup_mod(self, value)

    def __repr__(self) -> str:
        return f"Markup({str.__repr__(self)})"


# How ``Markup % value`` escapes and sizes what it inserts: the builtins' markup_mod, which
# builtins/methods.py registers with use_markup_mod (it sits above these values).
_markup_mod: Callable[[Markup, Any], Markup] | None = None


def use_markup_mod(function: Callable[[Markup, Any], Markup]) -> None:
    """Make `function` the `%` of Markup values (see builtins/methods.py)."""
    global _markup_mod
    _markup_mod = function


# escape() and Markup() measure the text they make before making it (the sandbox's budget):
# measure_text(value) before ``str(value)`` of anything but a string (a container prints its
# items' reprs), measure_escaped(text) before escaping a long text (``"`` becomes ``&#34;``).

# Texts shorter than this are escaped without measuring (five times it is still small).
_MEASURED_ESCAPE = 1024


def escape(value: Any) -> Markup:
    """HTML-escape `&<>'"` unless the value is already markup."""
    if type(value) is str:  # (has no __html__)
        text = value
    elif hasattr(value, "__html__"):
        return Markup(value.__html__())
    else:
        if not isinstance(value, str):
            measure_text(value)
        text = shown_str(value)
    if "&" in text or "<" in text or ">" in text or "'" in text or '"' in text:
        if len(text) >= _MEASURED_ESCAPE:
            measure_escaped(text)
        text = (
            text.replace("&", "&amp;")
            .replace(">", "&gt;")
            .replace("<", "&lt;")
            .replace("'", "&#39;")
            .replace('"', "&#34;")
        )
    return Markup(text) if type(text) is not str else str.__new__(Markup, text)


class Namespace(AttributeBag):
    """The mutable attribute bag made by `namespace()`; the one thing `set x.y` may change."""

    __slots__ = ()  # (``_attrs``, the slot of AttributeBag, which the budget sizes)

    def __init__(self, /, *args: Any, **kwargs: Any) -> None:
        # `self` is positional-only: `namespace(self=37)` names an attribute, as in Jinja.
        self._attrs: dict[str, Any] = dict(*args, **kwargs)

    def get(self, name: str) -> Any:
        return self._attrs.get(name, MISSING)

    def __getattr__(self, name: str) -> Any:
        # Its values are its attributes, as in Jinja (`ns|attr('a')`); private names are not.
        if name[:1] != "_":
            try:
                return self._attrs[name]
            except KeyError:
                pass
        raise AttributeError(name)

    def set(self, name: str, value: Any) -> None:
        self._attrs[name] = value

    def __repr__(self) -> str:
        return f"<Namespace {self._attrs!r}>"


# The namespace classes whose ``set`` stores a name that does not start with an underscore
# as it is: ``{% set ns.count = ... %}`` writes their attributes directly.  A class whose
# ``set`` does more (a caller's own subclass) is not here, and is called.
PLAIN_NAMESPACES: set[type] = {Namespace}


class LoopContext(LoopState):
    """The `loop` variable of a for loop.

    Over a list it reads items by index.  Over anything else (a generator, a filter's lazy
    result) it pulls one item at a time, as Jinja's does: `loop.last` and `loop.nextitem`
    take exactly one item ahead, `loop.length` takes the rest, and a loop left early leaves
    the others in the iterator.  Like Jinja's it is itself an iterator of `(item, loop)`
    pairs over the items still to come (`dict(loop)`).  The walk and the counters are
    LoopState's (values/loops.py).
    """

    __slots__ = ()

    @property
    def previtem(self) -> Any:
        if self.index0 <= 0:
            return Undefined("there is no previous item")
        if self._items is not None:
            return self._items[self.index0 - 1]
        return self._before

    @property
    def nextitem(self) -> Any:
        if self._items is not None:
            if self.index0 + 1 >= self._length:  # type: ignore[operator]
                return Undefined("there is no next item")
            return self._items[self.index0 + 1]
        item = self._peek()
        return Undefined("there is no next item") if item is NO_ITEM else item

    def cycle(self, *args: Any) -> Any:
        if not args:
            raise TypeError("no items for cycling given")
        return args[self.index0 % len(args)]

    def changed(self, *value: Any) -> bool:
        if self._last_changed != value:
            self._last_changed = value
            return True
        return False

    def __call__(self, iterable: Any) -> Any:
        if self._recurse is None:
            raise TypeError("The loop must have the 'recursive' marker to be called recursively.")
        return self._recurse(iterable, self.depth0 + 1)

    def __iter__(self) -> LoopContext:
        return self

    def __next__(self) -> tuple[Any, LoopContext]:
        item = self.next_item()
        if item is NO_ITEM:
            raise StopIteration
        return item, self

    def __len__(self) -> int:
        return self.length

    def __repr__(self) -> str:
        return f"<LoopContext {self.index}/{self.length}>"


# The levels of template code a block call is counted as keeping open.
_BLOCK_WEIGHT = 10


class TemplateReference:
    """`self`: the template's blocks by name; any other name is undefined, as in Jinja."""

    __slots__ = ("_blocks", "_frame")

    def __init__(self, blocks: dict[str, Any], frame: Any) -> None:
        self._blocks = blocks
        self._frame = frame

    def __getitem__(self, name: Any) -> BlockReference:
        block = self._blocks.get(name) if isinstance(name, str) else None
        if block is None:
            raise KeyError(name)
        return BlockReference(name, block, self._frame)

    def __repr__(self) -> str:
        return "<TemplateReference None>"  # Jinja names the template: strings have no name


class BlockReference:
    """`self.title`: calling it renders the block (there is no inheritance, so no super)."""

    __slots__ = ("name", "_block", "_frame")
    name: str

    def __init__(self, name: str, block: Any, frame: Any) -> None:
        self.name = name
        self._block = block
        self._frame = frame

    @property
    def super(self) -> Undefined:
        return Undefined(f"there is no parent block called {self.name!r}.", name="super")

    def __call__(self) -> str:
        # A block calling itself (``self.a()`` inside block a) recurses: a level counted as a
        # macro call's is, its body paid for first (see budget.Budget.enter).
        state = self._frame.state
        state.charge(self._block.cost)
        state.enter(_BLOCK_WEIGHT, "block calls")
        try:
            out: list[str] = []
            self._block.run(self._frame, out)
        finally:
            state.depth -= 1
            state.nested -= _BLOCK_WEIGHT
        return "".join(out)


class Macro:
    """A macro defined by the template; calling it renders its body."""

    __slots__ = (
        "name",
        "arguments",
        "defaults",
        "catch_varargs",
        "catch_kwargs",
        "caller",
        "_invoke",
    )
    name: str | None  # None for a call block's caller
    arguments: tuple[str, ...]
    defaults: tuple[Any, ...]
    catch_varargs: bool
    catch_kwargs: bool
    caller: bool

    def __init__(
        self,
        name: str | None,
        arguments: tuple[str, ...],
        defaults: tuple[Any, ...],
        catch_varargs: bool,
        catch_kwargs: bool,
        caller: bool,
        invoke: Callable[..., str],
    ) -> None:
        self.name = name
        self.arguments = arguments
        self.defaults = defaults
        self.catch_varargs = catch_varargs
        self.catch_kwargs = catch_kwargs
        self.caller = caller
        self._invoke = invoke

    def __call__(self, *args: Any, **kwargs: Any) -> str:
        return self._invoke(*args, **kwargs)

    def __repr__(self) -> str:
        name = "anonymous" if self.name is None else repr(self.name)
        return f"<Macro {name}>"


class Cycler:
    """`cycler(a, b, c)`: `next()` walks the items round and round."""

    __slots__ = ("items", "pos")
    items: Any
    pos: int

    def __init__(self, *items: Any) -> None:
        if not items:
            raise TemplateRuntimeError("at least one item has to be provided")
        self.items = items
        self.pos = 0

    def reset(self) -> None:
        self.pos = 0

    @property
    def current(self) -> Any:
        return self.items[self.pos]

    def next(self) -> Any:
        rv = self.current
        self.pos = (self.pos + 1) % len(self.items)
        return rv

    __next__ = next


class Joiner:
    """`joiner(sep)`: returns nothing the first time it is called and `sep` afterwards."""

    __slots__ = ("sep", "used")
    sep: str
    used: bool

    def __init__(self, sep: str = ", ") -> None:
        self.sep = sep
        self.used = False

    def __call__(self) -> str:
        if not self.used:
            self.used = True
            return ""
        return self.sep
