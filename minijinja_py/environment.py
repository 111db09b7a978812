"""The public API: environments hold options, filters, tests and globals; templates render."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from .builtins.costs import Cost, declare, inline
from .builtins.policy import AttributePolicy, SandboxedDict, SandboxedNamespace, check_pairs
from .errors import (
    LimitError,
    SecurityError,
    TemplateError,
    TemplateRuntimeError,
    bounded_repr,
)
from .sandbox.budget import (
    FILTER_ITEMS_PER_STEP,
    charge_memory,
    charge_steps,
    check_length,
    current_limits,
    enter_render,
    leave_render,
    recursion_error,
)
from .sandbox.limits import Limits
from .sandbox.measure import check_key, check_printable
from .values.runtime import PLAIN_NAMESPACES, Cycler, Joiner, Undefined, wants_environment

if TYPE_CHECKING:
    from .compile.compiler import Compiler
    from .provenance import Provenance
    from .run.frames import Frame
    from .syntax.lexer import LexOptions
    from .syntax.nodes import Template as TemplateNode

# The lexer, parser, compiler, filters and tests are imported by the first environment or
# template that needs them: `import minijinja_py` stays cheap for tools that may not render.

_EXTENSION_TAGS = {
    "loopcontrols": ("break", "continue"),
    "jinja2.ext.loopcontrols": ("break", "continue"),
    "generation": ("generation",),
}
_OPTIONAL_TAGS = frozenset(["break", "continue", "generation"])


class Environment:
    """Options and the filters, tests and globals that templates compiled by it use.

    `extensions` switches on the optional tags: `"loopcontrols"` (`break`/`continue`,
    also accepted as `"jinja2.ext.loopcontrols"`) and `"generation"`.  `filters`,
    `tests` and `globals` are plain dicts you may extend with Python callables; `limits`
    (a `Limits`) bounds the work of every render; `undefined` is the class of the value a
    missing name gives (`Undefined`, `StrictUndefined` or `ChainableUndefined`).

    Examples:
        >>> env = Environment(trim_blocks=True, extensions=["loopcontrols"])
        >>> env.filters["shout"] = lambda s: s.upper() + "!"
        >>> source = "{% for x in items %}{% if x == 'c' %}{% break %}{% endif %}{{ x|shout }} {% endfor %}"
        >>> env.from_string(source).render(items="abcd")
        'A! B! '
    """

    extensions: tuple[Any, ...]
    limits: Limits
    policy: AttributePolicy

    def __init__(
        self,
        trim_blocks: bool = False,
        lstrip_blocks: bool = False,
        keep_trailing_newline: bool = False,
        undefined: type[Undefined] = Undefined,
        extensions: Iterable[str] = (),
        limits: Limits | None = None,
    ) -> None:
        self.trim_blocks = trim_blocks
        self.lstrip_blocks = lstrip_blocks
        self.keep_trailing_newline = keep_trailing_newline
        self.undefined = undefined
        self.extensions = tuple(extensions)
        builtins = _builtins()

        enabled: set[str] = set()
        for extension in self.extensions:
            if extension not in _EXTENSION_TAGS:
                raise ValueError(f"unknown extension {extension!r}")
            enabled.update(_EXTENSION_TAGS[extension])
        self._lex_options = builtins.lex_options(
            trim_blocks=trim_blocks,
            lstrip_blocks=lstrip_blocks,
            keep_trailing_newline=keep_trailing_newline,
            disabled_tags=frozenset(_OPTIONAL_TAGS - enabled),
        )
        if limits is not None and not isinstance(limits, Limits):
            # (a dict or a number here would fail only at the first render, inside it)
            raise TypeError(f"limits must be a Limits or None, not {type(limits).__name__}")
        self.limits = limits if limits is not None else _DEFAULT_LIMITS
        self.filters: dict[str, Callable[..., Any]] = dict(builtins.filters)
        self.tests: dict[str, Callable[..., Any]] = dict(builtins.tests)
        self.globals: dict[str, Any] = default_globals(self.limits)
        self.policies: dict[str, Any] = {
            "json.dumps_function": None,
            "json.dumps_kwargs": {"sort_keys": True},
        }
        self.policy = AttributePolicy(self)
        self._remember_builtins(None)

    # ------------------------------------------------------------ templates

    def from_string(
        self, source: str, globals: Mapping[str, Any] | None = None, *, name: str | None = None
    ) -> Template:
        """Compile `source`; raises `TemplateSyntaxError` when it does not parse.

        `globals` are variables of this template only, under the render's context.  `name`
        (the file it was read from, say) becomes the template's `name` and the `name` of every
        error it raises, compiling or rendering, which `str(error)` shows beside the line.

        Examples:
            >>> template = Environment().from_string("{{ greeting }}, {{ name }}!", {"greeting": "Hello"})
            >>> template.render(name="World")
            'Hello, World!'
        """
        return Template._compile(self, source, globals, name)

    # ------------------------------------------------------------ used by filters and tests

    def getattr(self, obj: Any, attribute: str) -> Any:
        """`obj.attribute` as a template sees it: attribute first, then item."""
        return self.policy.getattr(obj, attribute)

    def getitem(self, obj: Any, argument: Any) -> Any:
        """`obj[argument]` as a template sees it: item first, then attribute."""
        return self.policy.getitem(obj, argument)

    def call_filter(
        self,
        name: str,
        value: Any,
        args: Iterable[Any] = (),
        kwargs: Mapping[str, Any] | None = None,
    ) -> Any:
        return self._call_registered(self.filters, "filter", name, value, args, kwargs)

    def call_test(
        self,
        name: str,
        value: Any,
        args: Iterable[Any] = (),
        kwargs: Mapping[str, Any] | None = None,
    ) -> Any:
        return self._call_registered(self.tests, "test", name, value, args, kwargs)

    def _call_registered(
        self,
        registry: dict[str, Callable[..., Any]],
        kind: str,
        name: str,
        value: Any,
        args: Iterable[Any],
        kwargs: Mapping[str, Any] | None,
    ) -> Any:
        func = registry.get(check_key(name))
        if func is None:
            raise TemplateRuntimeError(f"No {kind} named {name!r}.")
        if wants_environment(func):
            return func(self, value, *args, **(kwargs or {}))
        return func(value, *args, **(kwargs or {}))

    def _remember_builtins(self, preset: str | None) -> None:
        # What the constructor (and a preset) installed: pickling sends only what differs,
        # so the built-ins, closures over the limits among them, need not pickle.  The
        # registries (never changed) stand for what no preset changes: no copy of them to
        # make for every environment.
        builtins = _builtins()
        self._preset = preset
        self._builtins = {
            "filters": builtins.filters if preset is None else dict(self.filters),
            "tests": builtins.tests,
            "globals": dict(self.globals),
        }

    def __reduce__(self) -> Any:
        changes = {}
        for kind, base in self._builtins.items():
            current = getattr(self, kind)
            changed = {k: v for k, v in current.items() if base.get(k, _ABSENT) is not v}
            removed = [k for k in base if k not in current]
            changes[kind] = (changed, removed)
        options = {
            "trim_blocks": self.trim_blocks,
            "lstrip_blocks": self.lstrip_blocks,
            "keep_trailing_newline": self.keep_trailing_newline,
            "undefined": self.undefined,
            "extensions": self.extensions,
            "limits": self.limits,
        }
        return (_rebuild_environment, (self._preset, options, changes, self.policies))


_ABSENT = object()


class _Builtins:
    # (slotted classes, not NamedTuples, here and in _ProvenanceRun: a NamedTuple class is
    # built by `exec` when the module is imported, a sixth of a millisecond of every start)
    __slots__ = ("filters", "tests", "chat_tojson", "lex_options")
    filters: dict[str, Callable[..., Any]]
    tests: dict[str, Callable[..., Any]]
    chat_tojson: Callable[..., Any]
    lex_options: type[LexOptions]

    def __init__(
        self,
        filters: dict[str, Callable[..., Any]],
        tests: dict[str, Callable[..., Any]],
        chat_tojson: Callable[..., Any],
        lex_options: type[LexOptions],
    ) -> None:
        self.filters = filters
        self.tests = tests
        self.chat_tojson = chat_tojson
        self.lex_options = lex_options


@functools.cache
def _builtins() -> _Builtins:
    """The filters, tests and lexer options, imported when the first environment is made and
    kept: an import statement in a function costs microseconds at every call (two thirds of
    what making an environment cost)."""
    from .builtins.filters import FILTERS, chat_tojson, use_environment
    from .builtins.tests import TESTS
    from .syntax.lexer import LexOptions

    use_environment(Environment)  # (the filters sit below: they learn of it from here)
    return _Builtins(FILTERS, TESTS, chat_tojson, LexOptions)


class _Compiling(NamedTuple):
    compiler: type[Compiler]
    start_render: Callable[[Limits, list[Any], dict[str, Any], dict[str, Any], int], Frame]
    parse: Callable[[str, LexOptions, int | None], tuple[str, TemplateNode]]


@functools.cache
def _compiling() -> _Compiling:
    """What compiling a template uses, imported by the first template compiled and kept, as
    `_builtins` keeps what an environment uses."""
    from .compile.compiler import Compiler
    from .run.frames import start_render
    from .syntax.parser import parse

    return _Compiling(Compiler, start_render, parse)


# Limits are immutable: environments made without any share one (see compile/compiler.py).
_DEFAULT_LIMITS = Limits()


def _rebuild_environment(
    preset: str | None, options: dict[str, Any], changes: dict[str, Any], policies: dict
) -> Environment:
    if preset == "chat":
        environment = chat_environment(limits=options["limits"])
    else:
        environment = Environment(**options)
    for kind, (changed, removed) in changes.items():
        registry = getattr(environment, kind)
        registry.update(changed)
        for key in removed:
            registry.pop(key, None)
    environment.policies = policies
    return environment


class _ProvenanceRun:
    """A template compiled to keep sources, and the names it reads (see Template.trace)."""

    __slots__ = ("body", "reads", "tracing")
    body: Any
    reads: frozenset[str]
    tracing: Any  # the provenance module (imported with the first template traced)

    def __init__(self, body: Any, reads: frozenset[str], tracing: Any) -> None:
        self.body = body
        self.reads = reads
        self.tracing = tracing


class Template:
    """A compiled template.  `Template(source, **options)` makes its own environment.

    `options` are `Environment`'s.  Templates pickle (their source travels and is compiled
    again) and render identically in worker processes.

    Examples:
        >>> Template("Hello {{ name }}!").render(name="World")
        'Hello World!'
        >>> Template("{{ xs|join(', ') }}", keep_trailing_newline=True).render(xs=[1, 2])
        '1, 2'
    """

    environment: Environment
    source: str
    #: What the template was loaded as (`from_string(..., name=)`), else None, as Jinja2's
    #: `Template.name`; its errors carry it as their `name`.
    name: str | None

    def __new__(cls, source: str | None = None, **options: Any) -> Template:
        if source is None:  # unpickling and _compile build the instance themselves
            return super().__new__(cls)
        return Environment(**options).from_string(source)

    @classmethod
    def _compile(
        cls,
        environment: Environment,
        source: str,
        globals: Mapping[str, Any] | None,
        name: str | None = None,
    ) -> Template:
        try:
            return cls._compile_named(environment, source, globals, name)
        except TemplateError as error:
            if error.name is None:
                error.name = name
            raise

    @classmethod
    def _compile_named(
        cls,
        environment: Environment,
        source: str,
        globals: Mapping[str, Any] | None,
        name: str | None,
    ) -> Template:
        Compiler, start_render, parse = _compiling()
        limit = environment.limits.max_source
        if isinstance(source, str) and len(source) > limit:
            # Refused before the lexer reads it: compiling takes time linear in the source,
            # but a source of any length would still take any time.
            # (placed at the source's start: the whole of it is what is refused)
            raise LimitError(
                f"a template source of {len(source)} characters exceeds max_source ({limit})"
            ).with_position(source, 0)
        self = super().__new__(cls)
        self._start_render = start_render
        self.environment = environment
        self.source = source
        self.name = name
        self.globals = dict(globals or {})
        normalised, tree = parse(source, environment._lex_options, environment.limits.max_nesting)
        try:
            self._run = Compiler(environment).template(tree)
        except TemplateError as error:
            if error.source is None:
                error.source = normalised
            raise
        # Neither the tree nor the normalised text is kept: a compiled template is its
        # evaluators, and the rare caller who asks for the tree gets it parsed again.
        return self

    @property
    def tree(self) -> TemplateNode:
        """The syntax tree the template was compiled from."""
        environment = self.environment
        return _compiling().parse(
            self.source, environment._lex_options, environment.limits.max_nesting
        )[1]

    def render(self, *args: Any, **kwargs: Any) -> str:
        """Render with the variables of a mapping and/or keywords, as Jinja2's `render`.

        Every failure raises a `TemplateError` subclass with a message and a position.

        Examples:
            >>> Template("{{ a }} and {{ b }}").render({"a": 1}, b=2)
            '1 and 2'
        """
        # (keywords alone arrive in a dict made for this call: no copy of it is needed)
        text, _ = self._render(dict(*args, **kwargs) if args else kwargs, record_spans=False)
        return text

    def render_with_spans(self, *args: Any, **kwargs: Any) -> tuple[str, list[tuple[int, int]]]:
        """Render, and return the (start, end) character span of each generation block.

        Needs the `"generation"` extension (`chat_environment()` has it).  The spans are the
        character offsets transformers turns into its assistant-token mask.

        Examples:
            >>> template = chat_environment().from_string("Q{% generation %}AB{% endgeneration %}")
            >>> template.render_with_spans()
            ('QAB', [(1, 3)])
        """
        return self._render(dict(*args, **kwargs), record_spans=True)

    def render_with_provenance(self, *args: Any, **kwargs: Any) -> Provenance:
        """Render, and say where each character came from (see `minijinja_py.provenance`).

        The text is `render()`'s; every string of the context is traced through the template's
        operations, its characters attributed to the path of the value they came from:
        `("messages", 3, "content")` for `render(messages=...)`.
        """
        return self.trace(dict(*args, **kwargs))

    def trace(
        self,
        context: Mapping[str, Any],
        traced: Iterable[str] | None = None,
        *,
        private: bool = False,
    ) -> Provenance:
        """`render_with_provenance` of `context`, tracing only the variables named in
        `traced` (all when None): the others, like a tokenizer's special tokens, print as
        template text does, without a source.

        `private`: the context's lists and dicts were made for this call alone (as the chat
        layer makes them); their strings are replaced in place by traced ones instead of being
        copied."""
        run = self._run_with_provenance()
        # A variable the template never names cannot reach its text: left untraced, uncopied.
        names = run.reads if traced is None else run.reads.intersection(traced)
        track = run.tracing.track_value
        sourced = {
            name: track(value, (name,), private) if name in names else value
            for name, value in context.items()
        }
        out, spans = self._render(sourced, record_spans=True, provenance=True)
        return run.tracing.collect(out, spans)

    def undeclared_variables(self) -> set[str]:
        """The names the template reads from its context (globals excluded).

        Examples:
            >>> sorted(Template("{% set x = 1 %}{{ x }}{{ y }}{{ range(n)|list }}").undeclared_variables())
            ['n', 'y']
        """
        from .compile.meta import undeclared_variables

        return undeclared_variables(self.tree) - set(self.environment.globals) - set(self.globals)

    def _render(
        self, context: dict[str, Any], record_spans: bool, provenance: bool = False
    ) -> tuple[Any, list]:
        global_vars = self.environment.globals
        if self.globals:
            global_vars = {**global_vars, **self.globals}
        run = self._run
        if provenance:
            traced = self._run_with_provenance()
            run = traced.body
        out: list[str] = []
        # (the context over the globals, one dict; the top-level statements' steps counted)
        root = self._start_render(self.environment.limits, out, global_vars, context, run.cost)
        state = root.state
        if provenance:
            state.join = traced.tracing.join_text
        # Filters and operators find the budget through a context variable (see sandbox).
        token = enter_render(state)
        try:
            if state.steps >= state.next_clock:  # (Budget.charge of the top-level statements)
                state.check()
            run.run(root, out)
        except TemplateError as error:
            if error.offset is None and isinstance(error, LimitError):
                # A limit met outside any statement that places it (the top-level statements'
                # steps, paid before the first runs): the template as a whole, from its start.
                error.offset = 0
            raise self._placed(error) from None
        except RecursionError:
            raise self._placed(recursion_error(state.limits)) from None
        except MemoryError:
            raise self._placed(LimitError("out of memory")) from None
        except Exception as error:  # a bug of ours must still surface as our error
            message = f"internal error: {bounded_repr(error)}"
            raise self._placed(TemplateRuntimeError(message)) from error
        finally:
            leave_render(token)
            # The render's scopes refer to the state and its macros to their scope: cycles,
            # which the garbage collector would otherwise find, render after render.
            root.vars.clear()
            state.root = None
        if provenance:
            return out, state.spans
        return "".join(out), state.spans

    def _run_with_provenance(self) -> Any:
        # Compiled again, once, the first time it is asked for: the filters, operators and
        # str methods of this form keep the sources of the strings they are given.
        run = self.__dict__.get("_provenance_run")
        if run is None:
            from . import provenance

            compiler = _compiling().compiler(
                self.environment, instrument=provenance.track_operations
            )
            run = self._provenance_run = _ProvenanceRun(
                compiler.template(self.tree), compiler.analysis.names, provenance
            )
        return run

    def _placed(self, error: TemplateError) -> TemplateError:
        if error.source is None:
            from .syntax.lexer import normalise_newlines

            error.source = normalise_newlines(self.source, self.environment._lex_options)
            # Named only with the source: an error that already had one came from another
            # template (rendered by a caller's filter), whose name is not ours to give.
            if error.name is None:
                error.name = self.name
        return error

    def __reduce__(self) -> Any:
        return (_rebuild_template, (self.environment, self.source, self.globals, self.name))

    def __repr__(self) -> str:
        return f"<Template {self.source[:40]!r}>"


def _rebuild_template(
    environment: Environment, source: str, globals: dict[str, Any], name: str | None = None
) -> Template:
    # (`name` defaults for pickles made before templates had one)
    return environment.from_string(source, globals, name=name)


# ---------------------------------------------------------------- globals

# Each global's cost (see costs.py): its arguments are charged by the call by their sizes, and
# the function checks what it would build before building it.
GLOBAL_COSTS: dict[str, Cost] = {
    "range": inline("the length within max_range"),
    "dict": inline("the pairs' keys measured before they are hashed"),
    "lipsum": inline("paragraphs times words within max_string; a step per two words"),
    "cycler": inline("its items, charged as arguments"),
    "joiner": inline("nothing but its separator"),
    "namespace": inline("the pairs' keys measured before they are hashed"),
    "raise_exception": inline("the printed size of the message"),
    "strftime_now": inline("directives times their widest text within max_string"),
}
declare("global", GLOBAL_COSTS)


def default_globals(limits: Limits) -> dict[str, Any]:
    def safe_range(*args: Any) -> range:
        """range(stop) / range(start, stop[, step]), refusing more than max_range items."""
        result = range(*args)
        if len(result) > limits.max_range:
            raise LimitError(
                f"Range too big. The sandbox blocks ranges larger than MAX_RANGE"
                f" ({limits.max_range})."
            )
        return result

    # Python's argument errors name the function as Jinja's: "safe_range() ...".
    safe_range.__qualname__ = "safe_range"

    def lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
        """Placeholder text: `n` paragraphs of `min` to `max` words."""
        if n * max > limits.max_string // 8 or n < 0 or min > max:
            raise LimitError(f"lipsum({n}, max={max}) would exceed max_string")
        charge_steps(n * max // FILTER_ITEMS_PER_STEP)  # Python work per word
        return _lorem_ipsum(n, html, min, max)

    lipsum.__name__ = lipsum.__qualname__ = "generate_lorem_ipsum"

    return {
        "range": safe_range,
        "dict": SandboxedDict,
        "lipsum": lipsum,
        "cycler": Cycler,
        "joiner": Joiner,
        "namespace": SandboxedNamespace,
    }


_LOREM_WORDS = (
    "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut "
    "labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco "
    "laboris nisi aliquip ex ea commodo consequat duis aute irure in reprehenderit voluptate "
    "velit esse cillum eu fugiat nulla pariatur excepteur sint occaecat cupidatat non proident "
    "sunt culpa qui officia deserunt mollit anim id est laborum"
).split()


def _lorem_ipsum(n: int, html: bool, min_words: int, max_words: int) -> str:
    import random

    paragraphs = []
    for _ in range(n):
        # randrange, as Jinja: ``max`` itself is never drawn, and min == max is an error.
        count = random.randrange(min_words, max_words)
        words = [random.choice(_LOREM_WORDS) for _ in range(count)]
        text = " ".join(words).capitalize()
        if not text.endswith("."):
            text += "."
        paragraphs.append(text)
    if html:
        return "\n".join(f"<p>{p}</p>" for p in paragraphs)
    return "\n\n".join(paragraphs)


def raise_exception(message: Any) -> None:
    """`raise_exception(message)`: abort rendering with a TemplateError carrying `message`."""
    # The error makes bounded text of the message at once (errors.bounded_text); the value is
    # still measured and counted as printing it would be, and refused past max_string.
    check_printable(message)
    raise TemplateError(message)


# The most characters one strftime directive makes (``%c``: 'Thu Jan 15 12:00:00 2026').
_STRFTIME_WIDTH = 32


def _strftime_now(format: str) -> str:
    """`strftime_now(format)`: the current local time, formatted by `datetime.strftime`."""
    from datetime import datetime

    if isinstance(format, str):
        size = len(format) * _STRFTIME_WIDTH
        limit = current_limits().max_string
        if size > limit:
            raise LimitError(
                f"a strftime format of {len(format)} characters could exceed max_string ({limit})"
            )
        charge_memory(size)
    return datetime.now().strftime(format)


class ChatNamespace(SandboxedNamespace):
    """transformers' `namespace`: no name starting with an underscore, built or assigned."""

    __slots__ = ()

    def __init__(self, /, *args: Any, **kwargs: Any) -> None:
        SandboxedNamespace.__init__(self, *args, **kwargs)
        for name in self._attrs:
            # (made by most chat templates once a render: a plain name is read in place)
            if type(name) is not str or name[:1] == "_":
                _refuse_private_name(name)

    def set(self, name: str, value: Any) -> None:
        _refuse_private_name(name)
        super().set(name, value)


# Python's type errors ("argument of type ... is not iterable") name it as transformers' class.
ChatNamespace.__name__ = "TemplateNamespace"
PLAIN_NAMESPACES.add(ChatNamespace)  # (it refuses private names only)


def _refuse_private_name(name: Any) -> None:
    if isinstance(name, str) and name.startswith("_"):
        raise SecurityError(
            "Chat templates cannot store underscore-prefixed attributes on a namespace, but got"
            f" {name!r}. Please rename the attribute."
        )


class ChatDict:
    """transformers' `dict`: calling it builds a dict, `dict.fromkeys` works, nothing else."""

    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> dict[Any, Any]:
        return dict(*check_pairs(args), **kwargs)

    def fromkeys(self, keys: Any, value: Any = None) -> dict[Any, Any]:
        if isinstance(keys, str):
            # Its characters, one object each: walked by the dict without a list of them
            # (which would be ten million objects at once for ten million characters).
            charge_steps(len(keys) // 64)  # (a step per 64 items, as a list is walked)
            return dict.fromkeys(keys, value)
        keys = list(keys)
        check_length(len(keys), current_limits(), "dict")
        for key in keys:
            check_key(key)
        return dict.fromkeys(keys, value)


# Printed (`<TemplateDict object>`, sandbox/opaque.py) and named in Python's type errors as
# transformers' own object.
ChatDict.__name__ = ChatDict.__qualname__ = "TemplateDict"


def chat_environment(limits: Limits | None = None) -> Environment:
    """An environment configured exactly as transformers configures Jinja2 for chat templates.

    `trim_blocks` and `lstrip_blocks` on, `break`/`continue` and `{% generation %}`
    enabled, `tojson` as `json.dumps(x, ensure_ascii=False, ...)`, and the globals
    `raise_exception` and `strftime_now` (replace it through `env.globals` to pin time),
    with transformers 5.23's `dict` and `namespace`.

    Examples:
        >>> env = chat_environment()
        >>> env.globals["strftime_now"] = lambda fmt: "26 Jul 2024"
        >>> env.from_string("{{ {'city': 'Zürich'}|tojson }} {{ strftime_now('%d %b %Y') }}").render()
        '{"city": "Zürich"} 26 Jul 2024'
    """
    environment = Environment(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=("loopcontrols", "generation"),
        limits=limits,
    )
    environment.filters["tojson"] = _builtins().chat_tojson
    environment.globals.update(
        raise_exception=raise_exception,
        strftime_now=_strftime_now,
        dict=ChatDict(),
        namespace=ChatNamespace,
    )
    environment._remember_builtins("chat")
    return environment
