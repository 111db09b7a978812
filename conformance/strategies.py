"""Hypothesis strategies: valid, meaningful templates of the chat-template dialect, with contexts.

The generator is typed: every expression is produced for a wanted type (``int``, ``float``,
``str``, ``bool``, ``none``, ``list_int``, ``list_str``, ``dict``, ``msg``, ``msgs``, ...), so
that most generated programs render without error in Jinja2, while still combining every
operator, filter, test, method and statement of the dialect. Each case records the features it
used (``op:+``, ``filter:join``, ``stmt:for``, ``ws:lstrip``...) for the report by feature.

Entry point: :func:`cases` (``config`` ``"chat"``, ``"plain"`` or ``None`` for both).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

# ----------------------------------------------------------------------------- the case


@dataclass
class Case:
    config: str  # "chat" or "plain"
    options: dict[
        str, Any
    ]  # plain only: trim_blocks, lstrip_blocks, keep_trailing_newline, undefined
    source: str
    context: dict[str, Any]
    features: frozenset[str] = field(default_factory=frozenset)

    def describe(self) -> str:
        opts = ", ".join(f"{k}={v}" for k, v in self.options.items())
        return (
            f"config={self.config} {opts}\ncontext={json.dumps(self.context, ensure_ascii=False)}"
            f"\ntemplate={self.source!r}"
        )


# ----------------------------------------------------------------------------- choosers


class HypothesisChooser:
    """Choices drawn from Hypothesis (so failing cases shrink); strategies are cached."""

    _cache: dict[tuple[int, int], Any] = {}

    def __init__(self, draw):
        self._draw = draw

    def integer(self, lo: int, hi: int) -> int:
        strategy = self._cache.get((lo, hi))
        if strategy is None:
            strategy = self._cache[(lo, hi)] = st.integers(lo, hi)
        return self._draw(strategy)


class RandomChooser:
    """Choices from a seeded ``random.Random``: fast, for ``python -m conformance report``."""

    def __init__(self, rng):
        self._rng = rng

    def integer(self, lo: int, hi: int) -> int:
        return self._rng.randint(lo, hi)


def _pick(ch, options):
    return options[ch.integer(0, len(options) - 1)]


# ----------------------------------------------------------------------------- contexts

WORDS = ["a", "b", "hi", "Hello", "x y", "user", "tool", "é", "日本", "it's", 'q"t', "A-b_c", ""]
ROLES = ["system", "user", "assistant", "tool"]
TEXT_CHARS = list("abcXYZ 019,.:-_'\"\\/<>&\n\t") + ["é", "ß", "日", "😀", "\u00a0"]
FLOATS = [0.0, 0.5, 1.0, -2.25, 3.14159, 0.1, 1e-3, 2.5, 1e16, 100.0, -0.0]


def _text(ch, max_size: int = 8) -> str:
    return "".join(_pick(ch, TEXT_CHARS) for _ in range(ch.integer(0, max_size)))


def _list(ch, item, lo: int, hi: int) -> list:
    return [item(ch) for _ in range(ch.integer(lo, hi))]


def _arguments(ch) -> Any:
    args = {}
    for _ in range(ch.integer(0, 2)):
        key = _pick(ch, ["city", "n", "q", "unit"])
        args[key] = _pick(ch, WORDS) if ch.integer(0, 1) else ch.integer(-5, 20)
    return json.dumps(args) if ch.integer(0, 1) else args


def _tool_call(ch) -> dict[str, Any]:
    call: dict[str, Any] = {"type": "function"}
    if ch.integer(0, 1):
        call["id"] = "call_1"
    call["function"] = {
        "name": _pick(ch, ["get_weather", "search", "add"]),
        "arguments": _arguments(ch),
    }
    return call


def _part(ch) -> dict[str, Any]:
    if ch.integer(0, 3) == 0:
        return {"type": "image"}
    return {"type": "text", "text": _text(ch)}


def make_message(ch) -> dict[str, Any]:
    role = _pick(ch, ROLES)
    kind = _pick(ch, ["str", "str", "str", "parts", "none"])
    if kind == "str":
        content: Any = _text(ch)
    elif kind == "parts":
        content = _list(ch, _part, 1, 3)
    else:
        content = None
    msg: dict[str, Any] = {"role": role, "content": content}
    if role == "assistant" and ch.integer(0, 1):
        msg["tool_calls"] = _list(ch, _tool_call, 1, 2)
    if role == "assistant" and ch.integer(0, 3) == 0:
        msg["reasoning_content"] = _text(ch)
    if role == "tool" and ch.integer(0, 1):
        msg["tool_call_id"] = "call_1"
    return msg


def _tool(ch) -> dict[str, Any]:
    props = {}
    for _ in range(ch.integer(0, 2)):
        props[_pick(ch, ["city", "n", "q"])] = _pick(
            ch, [{"type": "string"}, {"type": "integer", "description": "n <5"}]
        )
    return {
        "type": "function",
        "function": {
            "name": _pick(ch, ["get_weather", "search", "add"]),
            "description": _text(ch),
            "parameters": {"type": "object", "properties": props, "required": sorted(props)[:1]},
        },
    }


TREE = [
    {
        "name": "root",
        "children": [
            {"name": "a", "children": []},
            {"name": "b", "children": [{"name": "c", "children": []}]},
        ],
    },
    {"name": "leaf", "children": []},
]


def make_context(ch) -> dict[str, Any]:
    d = {}
    for _ in range(ch.integer(0, 3)):
        d[_pick(ch, ["a", "b", "k", "role", "Z"])] = ch.integer(-5, 20)
    return {
        "s": _text(ch),
        "t": _pick(ch, WORDS),
        "n": ch.integer(-5, 20),
        "m": ch.integer(0, 4),
        "f": _pick(ch, FLOATS),
        "b": bool(ch.integer(0, 1)),
        "z": None,
        "xs": _list(ch, lambda c: c.integer(-5, 20), 0, 5),
        "ws": _list(ch, lambda c: _pick(c, WORDS), 0, 4),
        "d": d,
        "msg": make_message(ch),
        "messages": _list(ch, make_message, 1, 4),
        "tools": _list(ch, _tool, 0, 2),
        "tree": TREE,
        "add_generation_prompt": bool(ch.integer(0, 1)),
        "bos_token": "<s>",
    }


@st.composite
def contexts(draw) -> dict[str, Any]:
    """Hypothesis strategy for a render context (typed as :data:`CONTEXT_TYPES`)."""
    return make_context(HypothesisChooser(draw))


# Static types of the context variables.
CONTEXT_TYPES: dict[str, str] = {
    "s": "str",
    "t": "str",
    "n": "int",
    "m": "int",
    "f": "float",
    "b": "bool",
    "z": "none",
    "xs": "list_int",
    "ws": "list_str",
    "d": "dict",
    "msg": "msg",
    "messages": "msgs",
    "tools": "tools",
    "add_generation_prompt": "bool",
    "bos_token": "str",
}

# ----------------------------------------------------------------------------- literals

_ESCAPES = {"\n": "\\n", "\t": "\\t", "\\": "\\\\"}


def str_literal(value: str, quote: str = "'", escape_unicode: bool = False) -> str:
    out = []
    for ch in value:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch == quote:
            out.append("\\" + ch)
        elif escape_unicode and ord(ch) > 127:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    return quote + "".join(out) + quote


# Text between tags: lots of whitespace shapes, never a "{" (it could open a tag).
_TEXT_PIECES = [
    "a",
    "b",
    "Hi",
    " ",
    "  ",
    "\t",
    "\n",
    "\n",
    "\n  ",
    "  \n",
    " \t\n",
    "x\n",
    "\n\n",
    "é",
    "}",
    "%",
    "#",
    "-",
    ":",
    "{ ",
    "a{b",
    "\r\n",
    "}}",
    "%}",
    "\u2028",
]


# ----------------------------------------------------------------------------- the generator

LOOSE_TYPES = ["int", "float", "str", "bool", "none", "list_int", "list_str", "dict", "msg", "msgs"]
WILD_ATTRS = [
    "role",
    "content",
    "upper",
    "items",
    "real",
    "nope",
    "name",
    "tool_calls",
    "a",
    "first",
]
WILD_FILTERS = [
    "length",
    "upper",
    "trim",
    "first",
    "last",
    "sum",
    "join",
    "join(', ')",
    "list",
    "sort",
    "unique|list",
    "reverse|list",
    "int",
    "float",
    "string",
    "tojson",
    "abs",
    "round",
    "capitalize",
    "title",
    "dictsort",
    "items|list",
    "map('upper')|list",
    "select|list",
    "batch(2)|list",
    "default('d')",
    "count",
    "max",
    "min",
    "wordcount",
    "center(5)",
    "indent(2)",
    "replace('a', 'b')",
    "pprint",
    "e",
    "format(1)",
    "truncate(3)",
    "striptags",
    "urlencode",
    "slice(2)|list",
    "selectattr('role')|list",
    "map(attribute='role')|list",
    "groupby('role')|list",
    "xmlattr",
    "filesizeformat",
    "wordwrap(3)",
    "attr('role')",
    "forceescape",
    "safe",
    "lower",
]
WILD_METHODS = [
    "upper()",
    "strip()",
    "split()",
    "items()",
    "keys()",
    "values()",
    "get('a')",
    "get('role', 0)",
    "startswith('a')",
    "count(1)",
    "count('a')",
    "index(1)",
    "find('a')",
    "replace('a', 'b')",
    "title()",
    "join(['x'])",
    "format(1)",
    "copy()",
    "isdigit()",
    "endswith('x')",
    "lower()",
]


class Gen:
    """Draws template source for one case; ``features`` records what was used."""

    def __init__(self, ch, config: str, max_depth: int = 3, loose: int = 0):
        self.ch = ch
        self.loose = loose  # percent of sub-expressions of a random (likely wrong) type
        self.config = config
        self.chat = config == "chat"
        self.max_depth = max_depth
        self.features: set[str] = set()
        self.budget = 40  # statements/expressions still allowed, keeps templates small
        self.macro_count = 0
        self.var_count = 0
        self.assigned: list[str] = []  # every name assigned so far, in any scope (scope probes)

    # -- helpers
    def integer(self, lo: int, hi: int) -> int:
        return self.ch.integer(lo, hi)

    def pick(self, options):
        return options[self.ch.integer(0, len(options) - 1)]

    def chance(self, p_percent: int) -> bool:
        return self.ch.integer(0, 99) < p_percent

    def feat(self, name: str) -> None:
        self.features.add(name)

    def fresh(self, prefix: str = "v") -> str:
        self.var_count += 1
        name = f"{prefix}{self.var_count}"
        self.assigned.append(name)
        return name

    # -- expressions --------------------------------------------------------------------

    def vars_of(self, scope: dict[str, str], typ: str) -> list[str]:
        return [name for name, t in scope.items() if t == typ]

    def expr(self, typ: str, scope: dict[str, str], depth: int = 0) -> str:
        self.budget -= 1
        leaf = depth >= 3 or self.budget <= 0
        if self.loose and self.chance(self.loose):
            if not leaf and self.chance(50):
                return self.e_wild(scope, depth)
            typ = self.pick(LOOSE_TYPES)
        method = getattr(self, f"e_{typ}")
        return method(scope, depth, leaf)

    def sub(self, typ: str, scope, depth: int) -> str:
        return self.expr(typ, scope, depth + 1)

    def atom(self, typ: str, scope, depth: int) -> str:
        """A sub-expression safe as an operand (parenthesised unless trivially atomic)."""
        text = self.sub(typ, scope, depth)
        if text.replace("_", "").replace(".", "").isalnum() and not text.startswith("-"):
            return text
        return f"({text})"

    def name_or(self, typ, scope, fallback):
        names = self.vars_of(scope, typ)
        if names and self.chance(60):
            return self.pick(names)
        return fallback()

    # int ---------------------------------------------------------------------------------
    def e_int(self, scope, depth, leaf):
        def lit():
            v = self.integer(-3, 12)
            if v < 0:
                self.feat("op:unary-")
                return f"-{-v}"
            if v > 9 and self.chance(10):
                self.feat("lit:int_")
                return "1_0" if v == 10 else str(v)
            return str(v)

        if leaf:
            return self.name_or("int", scope, lit)
        k = self.integer(0, 22)
        if k <= 3:
            return self.name_or("int", scope, lit)
        if k <= 7:
            op = self.pick(["+", "-", "*", "//", "%", "**"])
            self.feat(f"op:{op}")
            left = self.atom("int", scope, depth)
            if op == "**":
                return f"{left} ** {self.integer(0, 3)}"
            if op in ("//", "%"):
                right = (
                    self.pick(["2", "3", "7", "-2"])
                    if self.chance(85)
                    else self.atom("int", scope, depth)
                )
                return f"{left} {op} {right}"
            return f"{left} {op} {self.atom('int', scope, depth)}"
        if k == 8:
            self.feat("filter:length")
            return f"{self.atom(self.pick(['str', 'list_int', 'list_str', 'dict', 'msgs']), scope, depth)}|length"
        if k == 9:
            f = self.pick(["sum", "count", "length"])
            self.feat(f"filter:{f}")
            return f"{self.atom('list_int', scope, depth)}|{f}"
        if k == 10:
            f = self.pick(["first", "last", "min", "max"])
            self.feat(f"filter:{f}")
            self.feat("filter:default")
            return f"{self.atom('list_int', scope, depth)}|{f}|default({lit()})"
        if k == 11:
            self.feat("filter:abs")
            return f"{self.atom('int', scope, depth)}|abs"
        if k == 12:
            self.feat("filter:int")
            src = self.pick(["float", "str_num", "bool"])
            if src == "str_num":
                choice = self.pick(["'12'", "'-3'", "'0x1A'", "'x'", "'4.7'"])
                return f"{choice}|int"
            return f"{self.atom(src, scope, depth)}|int"
        if k == 13:
            m = self.pick(["count", "find", "rfind"])
            self.feat(f"method:str.{m}")
            return f"{self.atom('str', scope, depth)}.{m}({self.e_str_lit()})"
        if k == 14:
            self.feat("method:list.count")
            return f"{self.atom('list_int', scope, depth)}.count({lit()})"
        if k == 15:
            self.feat("index:list")
            self.feat("filter:default")
            return f"{self.atom('list_int', scope, depth)}[{self.pick(['0', '-1', '1', 'm'])}]|default(0)"
        if k == 16:
            self.feat("method:dict.get")
            choice = self.pick(["'a'", "'k'", "'none'"])
            return f"d.get({choice}, {lit()})"
        if k == 17:
            return self.e_cond("int", scope, depth)
        if k == 18:
            self.feat("filter:wordcount")
            return f"{self.atom('str', scope, depth)}|wordcount"
        if k == 19:
            self.feat("filter:round")
            return f"{self.atom('float', scope, depth)}|round|int"
        if k == 20:
            if "loop" in scope:
                attr = self.pick(
                    ["index", "index0", "revindex", "revindex0", "length", "depth", "depth0"]
                )
                self.feat(f"loop.{attr}")
                return f"loop.{attr}"
            return lit()
        if k == 21:
            self.feat("op:unary+-")
            return f"{self.pick(['-', '+'])}{self.atom('int', scope, depth)}"
        if k == 22 and self.vars_of(scope, "ns_int"):
            self.feat("namespace")
            return self.pick(self.vars_of(scope, "ns_int"))
        return lit()

    # float -------------------------------------------------------------------------------
    def e_float(self, scope, depth, leaf):
        def lit():
            v = self.pick(["0.5", "1.0", "2.25", "0.1", "3.0", "1e3", "1.5e-2", "10.0"])
            if "e" in v:
                self.feat("lit:float-exp")
            return v

        if leaf:
            return self.name_or("float", scope, lit)
        k = self.integer(0, 10)
        if k <= 2:
            return self.name_or("float", scope, lit)
        if k <= 4:
            op = self.pick(["+", "-", "*", "/", "/"])
            self.feat(f"op:{op}")
            num = self.pick(["int", "float"])
            right = (
                self.atom(num, scope, depth)
                if op != "/" or self.chance(20)
                else self.pick(["2", "4", "0.5", "3"])
            )
            return f"{self.atom(self.pick(['int', 'float']), scope, depth)} {op} {right}"
        if k == 5:
            self.feat("filter:float")
            src = self.pick(["int", "strnum"])
            if src == "strnum":
                choice = self.pick(["'1.5'", "'x'", "'2'", "'1e2'"])
                return f"{choice}|float"
            return f"{self.atom('int', scope, depth)}|float"
        if k == 6:
            self.feat("filter:round")
            method = self.pick(["", "2", "1, 'floor'", "0, 'ceil'", "precision=1"])
            return (
                f"{self.atom('float', scope, depth)}|round({method})"
                if method
                else f"{self.atom('float', scope, depth)}|round"
            )
        if k == 7:
            self.feat("filter:abs")
            return f"{self.atom('float', scope, depth)}|abs"
        if k == 8:
            return self.e_cond("float", scope, depth)
        if k == 9:
            self.feat("op:**float")
            return f"{self.atom('float', scope, depth)} ** {self.pick(['2', '0.5', '-1'])}"
        return lit()

    # str ---------------------------------------------------------------------------------
    def e_str_lit(self) -> str:
        value = self.pick(
            [
                "",
                "a",
                "ab",
                "x y",
                "é",
                "it's",
                'say "hi"',
                "\n",
                "a\tb",
                "日本",
                "😀",
                "-",
                ", ",
                "{{ not }}",
                "%s",
                "<b>&</b>",
                "  pad  ",
                "A,B,,C",
                "  ",
                "\\",
            ]
        )
        quote = "'" if self.chance(70) else '"'
        esc = self.chance(20)
        if esc:
            self.feat("lit:str-unicode-escape")
        if "\n" in value or "\t" in value:
            self.feat("lit:str-escape")
        return str_literal(value, quote, esc)

    def e_str(self, scope, depth, leaf):
        if leaf:
            return self.name_or("str", scope, self.e_str_lit)
        k = self.integer(0, 34)
        if k <= 3:
            return self.name_or("str", scope, self.e_str_lit)
        if k <= 5:
            self.feat("op:~")
            left = self.atom(
                self.pick(["str", "int", "float", "bool", "none", "list_int", "str"]), scope, depth
            )
            return f"{left} ~ {self.atom(self.pick(['str', 'int', 'str', 'dict']), scope, depth)}"
        if k == 6:
            self.feat("op:+str")
            return f"{self.atom('str', scope, depth)} + {self.atom('str', scope, depth)}"
        if k == 7:
            self.feat("op:*str")
            return f"{self.atom('str', scope, depth)} * {self.pick(['0', '2', '3', 'm'])}"
        if k <= 10:
            f = self.pick(
                [
                    "upper",
                    "lower",
                    "title",
                    "capitalize",
                    "trim",
                    "string",
                    "e",
                    "escape",
                    "striptags",
                    "wordwrap",
                    "center",
                    "indent",
                    "truncate",
                    "reverse",
                    "urlencode",
                    "safe",
                    "forceescape",
                ]
            )
            self.feat(f"filter:{f}")
            base = self.atom("str", scope, depth)
            if f == "trim" and self.chance(40):
                return f"{base}|trim({self.e_str_lit()})"
            if f == "center":
                return f"{base}|center({self.pick(['9', '1', '12'])})"
            if f == "indent":
                args = self.pick(["", "(2)", "(4, true)", "(2, first=true, blank=true)", "('> ')"])
                return f"{base}|indent{args}"
            if f == "truncate":
                choice = self.pick(["3", "5, true", "4, false, '..'", "9, leeway=0"])
                return f"{base}|truncate({choice})"
            if f == "wordwrap":
                choice = self.pick(["5", "3, true", "4, false, '|'"])
                return f"{base}|wordwrap({choice})"
            if f in ("e", "escape", "safe", "forceescape"):
                return f"({base}|{f})|string"
            return f"{base}|{f}"
        if k <= 13:
            m = self.pick(
                [
                    "strip",
                    "lstrip",
                    "rstrip",
                    "upper",
                    "lower",
                    "title",
                    "capitalize",
                    "swapcase",
                    "casefold",
                    "strip_arg",
                    "replace",
                    "zfill",
                    "center",
                    "ljust",
                    "rjust",
                    "removeprefix",
                    "removesuffix",
                    "expandtabs",
                ]
            )
            base = self.atom("str", scope, depth)
            if m == "strip_arg":
                m2 = self.pick(["strip", "lstrip", "rstrip"])
                self.feat(f"method:str.{m2}")
                return f"{base}.{m2}({self.e_str_lit()})"
            self.feat(f"method:str.{m}")
            if m == "replace":
                count = self.pick(["", ", 1"])
                return f"{base}.replace({self.e_str_lit()}, {self.e_str_lit()}{count})"
            if m in ("zfill", "center", "ljust", "rjust"):
                return f"{base}.{m}({self.pick(['5', '0', '8'])})"
            if m in ("removeprefix", "removesuffix"):
                return f"{base}.{m}({self.e_str_lit()})"
            return f"{base}.{m}()"
        if k == 14:
            self.feat("filter:replace")
            extra = self.pick(["", ", 1"])
            return f"{self.atom('str', scope, depth)}|replace({self.e_str_lit()}, {self.e_str_lit()}{extra})"
        if k == 15:
            self.feat("slice")
            sl = self.pick(["1:", ":2", "::-1", "::2", "1:3", "-2:", ":-1", "1::2", "::", "m:"])
            self.feat(f"slice:{sl}")
            return f"{self.atom('str', scope, depth)}[{sl}]"
        if k == 16:
            self.feat("filter:join")
            src = self.pick(["list_str", "list_int", "msgs_roles"])
            sep = (
                self.pick(["", "(', ')", "('|')", "(d=', ')"]) if src != "msgs_roles" else "(', ')"
            )
            if sep == "(d=', ')":
                sep = "(', ')"
            if src == "msgs_roles":
                self.feat("filter:map-attribute")
                return f"messages|map(attribute='role')|join{sep}"
            return f"{self.atom(src, scope, depth)}|join{sep}"
        if k == 17:
            self.feat("filter:format")
            fmt = self.pick(["'%s-%s'", "'%s=%d'", "'%5s|%s'"])
            first = self.e_str_lit() if self.chance(50) else "s"
            second = self.sub("int", scope, depth)
            return f"{fmt}|format({first}, {second})"
        if k == 18:
            self.feat("method:str.format")
            return f"'{{}}-{{}}'.format({self.sub('str', scope, depth)}, {self.sub(self.pick(['int', 'float', 'list_int']), scope, depth)})"
        if k == 19:
            self.feat("filter:tojson")
            target = self.pick(
                ["str", "int", "list_str", "dict", "msg", "none", "bool", "float", "tools"]
            )
            args = ""
            if self.chat and self.chance(40):
                args = self.pick(
                    [
                        "(indent=2)",
                        "(ensure_ascii=true)",
                        "(separators=(',', ':'))",
                        "(sort_keys=true)",
                        "(indent=4, sort_keys=true)",
                    ]
                )
                self.feat("filter:tojson-args")
            elif not self.chat and self.chance(30):
                args = "(indent=2)"
            return f"{self.atom(target, scope, depth)}|tojson{args}"
        if k == 20:
            return self.e_cond("str", scope, depth)
        if k == 21:
            self.feat("attr:msg.role")
            how = self.pick(
                [
                    "msg.role",
                    "msg['role']",
                    "messages[0].role",
                    "messages[-1]['role']",
                    "(messages|last).role",
                    "(messages|first)['role']",
                ]
            )
            return how
        if k == 22:
            self.feat("filter:default")
            base = self.pick(["missing", "msg.name", "d.nope", "none_var", "z"])
            boolean = ", true" if self.chance(40) else ""
            if boolean:
                self.feat("filter:default-boolean")
            return f"{base}|{self.pick(['default', 'd'])}({self.e_str_lit()}{boolean})"
        if k == 23:
            self.feat("filter:string")
            return f"{self.atom(self.pick(['int', 'float', 'bool', 'none', 'list_str', 'dict', 'msg']), scope, depth)}|string"
        if k == 24:
            self.feat("method:str.join")
            return f"{self.e_str_lit()}.join({self.atom('list_str', scope, depth)})"
        if k == 25:
            self.feat("index:str")
            return f"{self.atom('str', scope, depth)}[{self.pick(['0', '-1'])}] if {self.atom('str', scope, depth)} else ''"
        if k == 26:
            self.feat("filter:pprint")
            return f"{self.atom(self.pick(['dict', 'list_str', 'str']), scope, depth)}|pprint"
        if k == 27:
            self.feat("filter:dictsort")
            choice = self.pick(["", "(reverse=true)", "(by='value')", "(true)"])
            return f"d|dictsort{choice}|string"
        if k == 28 and "loop" in scope:
            self.feat("loop.cycle")
            return f"loop.cycle({self.e_str_lit()}, {self.e_str_lit()})"
        if k == 29 and self.chat:
            self.feat("global:strftime_now")
            choice = self.pick(["'%Y-%m-%d'", "'%d %b %Y'", "'%H:%M'", "'%A'"])
            return f"strftime_now({choice})"
        if k == 30:
            self.feat("method:str.split-join")
            choice = self.pick(["", "','", "' '", "None, 1"])
            return f"{self.atom('str', scope, depth)}.split({choice})|join('/')"
        if k == 31:
            self.feat("filter:list-join")
            return f"{self.atom('str', scope, depth)}|list|join('.')"
        if k == 32:
            self.feat("filter:items")
            return "d|items|list|string"
        if k == 33:
            self.feat("filter:sort-join")
            return f"ws|sort{self.pick(['', '(reverse=true)', '(case_sensitive=true)'])}|join(',')"
        if k == 34:
            self.feat("filter:unique")
            return "ws|unique|join(',')"
        return self.e_str_lit()

    # bool --------------------------------------------------------------------------------
    def e_bool(self, scope, depth, leaf):
        if leaf:
            return self.name_or(
                "bool", scope, lambda: self.pick(["true", "false", "True", "False"])
            )
        k = self.integer(0, 16)
        if k <= 1:
            return self.name_or(
                "bool", scope, lambda: self.pick(["true", "false", "True", "false"])
            )
        if k <= 4:
            typ = self.pick(["int", "int", "float", "str", "list_int"])
            ops = ["==", "!=", "<", ">", "<=", ">="]
            op = self.pick(ops)
            self.feat(f"cmp:{op}")
            if typ == "list_int" and op not in ("==", "!="):
                typ = "int"
            left, right = self.atom(typ, scope, depth), self.atom(typ, scope, depth)
            if self.chance(15):
                self.feat("cmp:chained")
                return f"{left} {op} {right} {self.pick(ops)} {self.atom(typ, scope, depth)}"
            return f"{left} {op} {right}"
        if k == 5:
            self.feat("cmp:==any")
            return f"{self.atom(self.pick(['str', 'int', 'none', 'bool']), scope, depth)} {self.pick(['==', '!='])} {self.atom(self.pick(['str', 'int', 'none', 'float']), scope, depth)}"
        if k == 6:
            self.feat("op:not")
            return f"not {self.atom(self.pick(['bool', 'str', 'list_int', 'int', 'dict', 'none']), scope, depth)}"
        if k <= 8:
            op = self.pick(["and", "or"])
            self.feat(f"op:{op}")
            return f"{self.atom('bool', scope, depth)} {op} {self.atom('bool', scope, depth)}"
        if k == 9:
            neg = self.pick(["in", "not in"])
            self.feat(f"op:{neg}")
            kind = self.pick(["int-list", "str-str", "str-dict", "str-liststr"])
            if kind == "int-list":
                return (
                    f"{self.atom('int', scope, depth)} {neg} {self.atom('list_int', scope, depth)}"
                )
            if kind == "str-str":
                return f"{self.atom('str', scope, depth)} {neg} {self.atom('str', scope, depth)}"
            if kind == "str-dict":
                choice = self.pick(["'a'", "'role'", "'content'", "t"])
                return f"{choice} {neg} {self.pick(['d', 'msg'])}"
            return f"{self.atom('str', scope, depth)} {neg} {self.atom('list_str', scope, depth)}"
        if k <= 12:
            return self.e_test(scope, depth)
        if k == 13:
            m = self.pick(
                [
                    "startswith",
                    "endswith",
                    "isdigit",
                    "isalpha",
                    "isspace",
                    "isupper",
                    "islower",
                    "isalnum",
                    "startswith_tuple",
                ]
            )
            self.feat(f"method:str.{m}")
            base = self.atom("str", scope, depth)
            if m == "startswith_tuple":
                return f"{base}.startswith(({self.e_str_lit()}, {self.e_str_lit()}))"
            if m in ("startswith", "endswith"):
                return f"{base}.{m}({self.e_str_lit()})"
            return f"{base}.{m}()"
        if k == 14:
            return self.e_cond("bool", scope, depth)
        if k == 15 and "loop" in scope:
            attr = self.pick(["first", "last", "changed(1)"])
            self.feat(f"loop.{attr}")
            return f"loop.{attr}"
        if k == 16:
            self.feat("op:and-or-values")
            return f"({self.atom(self.pick(['str', 'int', 'list_int']), scope, depth)} {self.pick(['and', 'or'])} {self.atom('str', scope, depth)}) is {self.pick(['string', 'number', 'sequence'])}"
        return "true"

    TESTS_UNARY = [
        ("defined", "any"),
        ("undefined", "any"),
        ("none", "any"),
        ("string", "any"),
        ("number", "any"),
        ("integer", "any"),
        ("float", "any"),
        ("boolean", "any"),
        ("mapping", "any"),
        ("iterable", "any"),
        ("sequence", "any"),
        ("callable", "any"),
        ("true", "any"),
        ("false", "any"),
        ("even", "int"),
        ("odd", "int"),
        ("lower", "str"),
        ("upper", "str"),
        ("escaped", "str"),
    ]

    def e_test(self, scope, depth):
        neg = " not" if self.chance(25) else ""
        if neg:
            self.feat("test:is-not")
        k = self.integer(0, 5)
        if k <= 2:
            name, typ = self.pick(self.TESTS_UNARY)
            self.feat(f"test:{name}")
            if typ == "any":
                subject = self.pick(
                    [
                        self.atom(
                            self.pick(["int", "str", "float", "bool", "none", "list_int", "dict"]),
                            scope,
                            depth,
                        ),
                        "missing",
                        "msg.tool_calls",
                        "msg.content",
                        "d.a",
                        "z",
                        "raise_exception" if self.chat else "range",
                        "namespace",
                    ]
                )
            else:
                subject = self.atom(typ, scope, depth)
            return f"{subject} is{neg} {name}"
        if k == 3:
            name = self.pick(
                [
                    "divisibleby",
                    "eq",
                    "ne",
                    "gt",
                    "ge",
                    "lt",
                    "le",
                    "equalto",
                    "greaterthan",
                    "lessthan",
                    "sameas",
                ]
            )
            self.feat(f"test:{name}")
            arg = self.atom("int", scope, depth)
            if name == "divisibleby":
                arg = self.pick(["2", "3", "1"])
            if self.chance(50) or not arg.isdigit():
                return f"{self.atom('int', scope, depth)} is{neg} {name}({arg})"
            return f"{self.atom('int', scope, depth)} is{neg} {name} {arg}"
        if k == 4:
            self.feat("test:in")
            choice = self.pick(["ws", "['a', 'b']", "s", "(('x', 'y'))"])
            return f"{self.atom('str', scope, depth)} is{neg} in {choice}"
        self.feat("test:filter-test")
        which = self.pick(["filter", "test"])
        self.feat(f"test:{which}")
        choice = self.pick(["'upper'", "'odd'", "'tojson'", "'nope'"])
        return f"{choice} is{neg} {which}"

    # none --------------------------------------------------------------------------------
    def e_none(self, scope, depth, leaf):
        return self.pick(["none", "None", "z"])

    # lists -------------------------------------------------------------------------------
    def e_list_int(self, scope, depth, leaf):
        def lit():
            self.feat("lit:list")
            return (
                "[" + ", ".join(str(self.integer(-2, 9)) for _ in range(self.integer(0, 4))) + "]"
            )

        if leaf:
            return self.name_or("list_int", scope, lit)
        k = self.integer(0, 12)
        if k <= 3:
            return self.name_or("list_int", scope, lit)
        if k == 4:
            self.feat("op:+list")
            return f"{self.atom('list_int', scope, depth)} + {self.atom('list_int', scope, depth)}"
        if k == 5:
            sl = self.pick(["1:", ":2", "::-1", "::2", "-2:", "1:-1"])
            self.feat(f"slice:{sl}")
            return f"{self.atom('list_int', scope, depth)}[{sl}]"
        if k == 6:
            f = self.pick(
                [
                    "sort",
                    "reverse_list",
                    "unique_list",
                    "select",
                    "reject",
                    "map_int",
                    "sort_rev",
                    "list",
                ]
            )
            base = self.atom("list_int", scope, depth)
            if f == "sort":
                self.feat("filter:sort")
                return f"{base}|sort"
            if f == "sort_rev":
                self.feat("filter:sort")
                return f"{base}|sort(reverse=true)"
            if f == "reverse_list":
                self.feat("filter:reverse")
                return f"{base}|reverse|list"
            if f == "unique_list":
                self.feat("filter:unique")
                return f"{base}|unique|list"
            if f in ("select", "reject"):
                test = self.pick(
                    [
                        "'odd'",
                        "'even'",
                        "'gt', 2",
                        "'divisibleby', 3",
                        "",
                        "'ne', 0",
                        "'lessthan', 4",
                        "'in', [1, 2]",
                    ]
                )
                self.feat(f"filter:{f}")
                return f"{base}|{f}({test})|list"
            if f == "map_int":
                self.feat("filter:map")
                return f"{base}|map('abs')|list"
            self.feat("filter:list")
            return f"{base}|list"
        if k == 7:
            self.feat("global:range")
            args = self.pick(["3", "m", "1, 4", "0, 10, 3", "5, 0, -2", "n if n < 8 else 3"])
            return f"range({args})|list" if self.chance(50) else f"range({args})|list|list"
        if k == 8:
            self.feat("filter:map-int")
            return "ws|map('length')|list"
        if k == 9:
            self.feat("op:tuple")
            return f"[{self.sub('int', scope, depth)}, {self.sub('int', scope, depth)}]"
        if k == 10:
            self.feat("filter:batch")
            return f"{self.atom('list_int', scope, depth)}|batch(2)|map('sum')|list"
        if k == 11:
            return self.e_cond("list_int", scope, depth)
        self.feat("method:dict.values")
        return "d.values()|list"

    def e_list_str(self, scope, depth, leaf):
        def lit():
            self.feat("lit:list")
            return "[" + ", ".join(self.e_str_lit() for _ in range(self.integer(0, 3))) + "]"

        if leaf:
            return self.name_or("list_str", scope, lit)
        k = self.integer(0, 10)
        if k <= 3:
            return self.name_or("list_str", scope, lit)
        if k == 4:
            self.feat("method:str.split")
            choice = self.pick(["", "','", "' '", "'a'", "none, 1"])
            return f"{self.atom('str', scope, depth)}.split({choice})"
        if k == 5:
            self.feat("filter:map-upper")
            choice = self.pick(["'upper'", "'trim'", "'capitalize'", "'replace', 'a', 'b'"])
            return f"{self.atom('list_str', scope, depth)}|map({choice})|list"
        if k == 6:
            self.feat("method:dict.keys")
            return self.pick(["d.keys()|list", "d|list", "d|sort", "msg|list"])
        if k == 7:
            self.feat("filter:map-attribute")
            choice = self.pick(["'role'", "'role', default='?'"])
            return f"messages|map(attribute={choice})|list"
        if k == 8:
            self.feat("filter:map-string")
            return f"{self.atom('list_int', scope, depth)}|map('string')|list"
        if k == 9:
            self.feat("method:str.splitlines")
            return f"{self.atom('str', scope, depth)}.splitlines()"
        self.feat("filter:reject")
        return f"{self.atom('list_str', scope, depth)}|reject('equalto', {self.e_str_lit()})|list"

    # dicts / messages --------------------------------------------------------------------
    def e_dict(self, scope, depth, leaf):
        k = self.integer(0, 5)
        if leaf or k <= 1:
            return self.name_or("dict", scope, lambda: "d")
        if k == 2:
            self.feat("lit:dict")
            n = self.integer(0, 3)
            keys = ["'a'", "'b'", "'c'", "'role'"][:n]
            return "{" + ", ".join(f"{key}: {self.sub('int', scope, depth)}" for key in keys) + "}"
        if k == 3:
            self.feat("global:dict")
            return f"dict(a={self.sub('int', scope, depth)}, z={self.sub('int', scope, depth)})"
        if k == 4:
            self.feat("filter:dictsort-dict")
            return "dict(d|dictsort)"
        return "d"

    def e_msg(self, scope, depth, leaf):
        return self.name_or(
            "msg", scope, lambda: self.pick(["msg", "messages[0]", "messages|last", "messages[-1]"])
        )

    def e_msgs(self, scope, depth, leaf):
        if leaf or self.chance(50):
            return "messages"
        k = self.integer(0, 3)
        if k == 0:
            self.feat("filter:selectattr")
            choice = self.pick(
                [
                    "'equalto', 'user'",
                    "'eq', 'assistant'",
                    "'in', ['user', 'system']",
                    "'ne', 'tool'",
                ]
            )
            return f"messages|selectattr('role', {choice})|list"
        if k == 1:
            self.feat("filter:rejectattr")
            return "messages|rejectattr('content', 'none')|list"
        if k == 2:
            self.feat("slice:msgs")
            return "messages[1:]"
        self.feat("filter:selectattr-defined")
        return "messages|selectattr('tool_calls', 'defined')|list"

    def e_tools(self, scope, depth, leaf):
        return "tools"

    def e_any(self, scope, depth, leaf):
        return self.expr(
            self.pick(["int", "float", "str", "bool", "none", "list_int", "list_str", "dict"]),
            scope,
            depth,
        )

    def cond_expr(self, typ: str, scope) -> str:
        """An expression for a statement head, where a bare conditional expression is invalid."""
        text = self.expr(typ, scope)
        return f"({text})" if " if " in text else text

    def e_wild(self, scope, depth) -> str:
        """Loose mode: an operation on a value of a random type (errors welcome: both must fail)."""
        base = self.atom(self.pick(LOOSE_TYPES), scope, depth)
        k = self.integer(0, 5)
        if k == 0:
            attr = self.pick(WILD_ATTRS)
            self.feat(f"wild:attr.{attr}")
            return f"{base}.{attr}"
        if k == 1:
            key = self.pick(["0", "-1", "'a'", "'role'", "none", "1.5", "true", "1:", "::-1"])
            self.feat("wild:item")
            return f"{base}[{key}]"
        if k == 2:
            f = self.pick(WILD_FILTERS)
            self.feat(f"wild:filter.{f.split('(')[0]}")
            return f"{base}|{f}"
        if k == 3:
            m = self.pick(WILD_METHODS)
            self.feat(f"wild:method.{m.split('(')[0]}")
            return f"{base}.{m}"
        if k == 4:
            op = self.pick(["+", "-", "*", "/", "//", "%", "**", "~", "<", "==", "in", "and", "or"])
            self.feat(f"wild:op{op}")
            return f"{base} {op} {self.atom(self.pick(LOOSE_TYPES), scope, depth)}"
        test = self.pick(
            [
                "defined",
                "none",
                "string",
                "number",
                "mapping",
                "iterable",
                "sequence",
                "odd",
                "even",
                "divisibleby(2)",
                "lower",
                "upper",
                "in([1])",
                "eq(1)",
                "callable",
                "escaped",
                "true",
                "boolean",
                "float",
                "integer",
            ]
        )
        self.feat(f"wild:test.{test.split('(')[0]}")
        return f"{base} is {test}"

    def e_cond(self, typ, scope, depth):
        if self.chance(25) and typ in ("str",):
            self.feat("op:cond-no-else")
            return f"{self.atom(typ, scope, depth)} if {self.atom('bool', scope, depth)}"
        self.feat("op:cond")
        return f"{self.atom(typ, scope, depth)} if {self.atom('bool', scope, depth)} else {self.atom(typ, scope, depth)}"

    # -- whitespace and tags -------------------------------------------------------------

    def text(self) -> str:
        n = self.integer(0, 4)
        return "".join(self.pick(_TEXT_PIECES) for _ in range(n))

    def marks(self, allow_plus: bool = True) -> tuple[str, str]:
        opts = ["", "", "", "-"] + (["+"] if allow_plus else [])
        left, right = self.pick(opts), self.pick(opts)
        if left:
            self.feat(f"ws:{left}open")
        if right:
            self.feat(f"ws:{right}close")
        return left, right

    def tag(self, body: str, allow_plus: bool = True) -> str:
        left, right = self.marks(allow_plus)
        if self.chance(8) and left and right:
            self.feat("ws:tight")
            return f"{{%{left}{body}{right}%}}"
        return f"{{%{left} {body} {right}%}}"

    def output(self, scope) -> str:
        left, right = self.marks(allow_plus=False)
        if self.assigned and self.chance(12):
            # A scope probe: a name assigned somewhere (maybe in a loop, macro or block that
            # does not leak), printed wherever we are.
            name = self.pick(self.assigned)
            self.feat("scope:probe")
            probe = self.pick([f"{name}|default('-')", f"{name} is defined", f"{name}|string"])
            return f"{{{{{left} {probe} {right}}}}}"
        typ = self.pick(
            [
                "str",
                "str",
                "str",
                "int",
                "float",
                "bool",
                "list_int",
                "list_str",
                "dict",
                "none",
                "msg",
            ]
        )
        self.feat(f"print:{typ}")
        expr = self.expr(typ, scope)
        if self.chance(6):
            self.feat("print:undefined")
            expr = self.pick(["missing", "msg.nope", "d['nope']", "xs[99]", "missing.attr"])
        return f"{{{{{left} {expr} {right}}}}}"

    def comment(self) -> str:
        left, right = self.marks()
        self.feat("stmt:comment")
        note = self.pick(["note", "a {{ b }} c", "multi\nline", "%} tricky"])
        return f"{{#{left} {note} {right}#}}"

    def raw(self) -> str:
        self.feat("stmt:raw")
        # Jinja2's raw opening tag takes "-%}" or "%}" only (no "+%}").
        opening = self.pick(["{% raw %}", "{%- raw %}", "{%+ raw %}", "{% raw -%}", "{%- raw -%}"])
        inner = self.pick(["{{ x }}", "{% if %}", " a\n", "{# c #}"])
        return f"{opening}{inner}{self.tag('endraw')}"

    # -- statements ----------------------------------------------------------------------

    def body(self, scope, depth, in_loop: bool = False, min_items: int = 0) -> str:
        scope = dict(scope)
        out = []
        n = self.integer(min_items, 4 if depth < self.max_depth else 2)
        for _ in range(n):
            if self.budget <= 0:
                break
            out.append(self.item(scope, depth, in_loop))
        return "".join(out)

    def item(self, scope, depth, in_loop) -> str:
        kinds = ["text", "text", "output", "output", "output", "comment", "set"]
        if depth < self.max_depth:
            kinds += [
                "if",
                "if",
                "for",
                "for",
                "set_block",
                "filter",
                "macro",
                "namespace",
                "chat_loop",
            ]
            if self.chat:
                kinds.append("generation")
        kinds += ["raw"]
        if in_loop and self.chat:
            kinds.append("loopctl")
        if not self.chat:
            kinds.append("cycler")
        kind = self.pick(kinds)
        return getattr(self, f"s_{kind}")(scope, depth, in_loop)

    def s_text(self, scope, depth, in_loop):
        return self.text() or " "

    def s_output(self, scope, depth, in_loop):
        return self.text() + self.output(scope)

    def s_comment(self, scope, depth, in_loop):
        return self.text() + self.comment()

    def s_raw(self, scope, depth, in_loop):
        return self.text() + self.raw()

    def s_set(self, scope, depth, in_loop):
        self.feat("stmt:set")
        if self.chance(20):
            self.feat("stmt:set-tuple")
            a, b = self.fresh(), self.fresh()
            if self.chance(50):
                src = f"{self.expr('int', scope)}, {self.expr('str', scope)}"
            else:
                src = f"[{self.expr('int', scope)}, {self.expr('str', scope)}]"
            out = self.text() + self.tag(f"set {a}, {b} = {src}")
            scope[a], scope[b] = "int", "str"
            return out
        typ = self.pick(["int", "str", "str", "list_int", "bool", "float", "list_str"])
        name = self.fresh()
        out = self.text() + self.tag(f"set {name} = {self.expr(typ, scope)}")
        scope[name] = typ
        return out

    def s_set_block(self, scope, depth, in_loop):
        self.feat("stmt:set-block")
        name = self.fresh()
        filt = ""
        if self.chance(40):
            f = self.pick(["upper", "trim", "replace('a', 'b')", "title", "indent(2)"])
            self.feat("stmt:set-block-filter")
            filt = f" | {f}"
        inner = self.body(scope, depth + 1)
        out = self.text() + self.tag(f"set {name}{filt}") + inner + self.tag("endset")
        scope[name] = "str"
        return out

    def s_if(self, scope, depth, in_loop):
        self.feat("stmt:if")
        out = self.text() + self.tag(
            f"if {self.cond_expr(self.pick(['bool', 'bool', 'str', 'list_int', 'int', 'msg']), scope)}"
        )
        out += self.body(scope, depth + 1, in_loop)
        for _ in range(self.integer(0, 2)):
            self.feat("stmt:elif")
            out += self.tag(f"elif {self.cond_expr('bool', scope)}") + self.body(
                scope, depth + 1, in_loop
            )
        if self.chance(50):
            self.feat("stmt:else")
            out += self.tag("else") + self.body(scope, depth + 1, in_loop)
        return out + self.tag("endif")

    def s_for(self, scope, depth, in_loop):
        self.feat("stmt:for")
        kind = self.pick(["int", "str", "msgs", "pairs", "tools", "recursive", "chars"])
        inner = dict(scope)
        inner["loop"] = "loop"
        var = self.fresh("x")
        if kind == "int":
            it = self.expr("list_int", scope)
            inner[var] = "int"
        elif kind == "str":
            it = self.pick(["ws", "d", "d.keys()", "s.split()", self.expr("list_str", scope)])
            inner[var] = "str"
        elif kind == "chars":
            it = self.expr("str", scope)
            inner[var] = "str"
            self.feat("stmt:for-string")
        elif kind == "msgs":
            it = self.expr("msgs", scope)
            inner[var] = "msg"
        elif kind == "tools":
            it = "tools"
            inner[var] = "tool"
        elif kind == "pairs":
            self.feat("stmt:for-unpack")
            k, v = self.fresh("k"), self.fresh("v")
            it = self.pick(
                [
                    "d.items()",
                    "d|dictsort",
                    "d|items",
                    "d|dictsort(by='value')",
                    "[('a', 1), ('b', 2)]",
                ]
            )
            inner[k], inner[v] = "str", "int"
            var = f"{k}, {v}"
        else:
            return self.s_recursive(scope, depth)
        cond = ""
        if self.chance(15):
            self.feat("stmt:for-if")
            no_loop = {k: v for k, v in inner.items() if k != "loop"}
            cond = f" if {self.cond_expr('bool', no_loop)}"
        if " if " in it:
            it = f"({it})"
        head = self.text() + self.tag(f"for {var} in {it}{cond}")
        if kind == "tools":
            body = self.pick(
                [
                    "{{ %s.function.name }}: {{ %s.function.description }}\n",
                    "{{ %s|tojson }}\n",
                    "{% for p, spec in %s.function.parameters.properties|dictsort %}{{ p }}={{ spec.type }};{% endfor %}",
                ]
            ).replace("%s", var)
            self.feat("chat:tools")
            body += self.body(inner, depth + 1, in_loop=True)
        elif kind == "msgs":
            body = self.msg_body(var, inner, depth)
        else:
            body = self.body(inner, depth + 1, in_loop=True, min_items=1)
        out = head + body
        if self.chance(20):
            self.feat("stmt:for-else")
            out += self.tag("else") + self.body(scope, depth + 1, in_loop)
        return out + self.tag("endfor")

    def s_recursive(self, scope, depth):
        self.feat("stmt:for-recursive")
        var = self.fresh("node")
        sep = self.pick(["", ",", "\n"])
        return (
            self.tag(f"for {var} in tree recursive")
            + f"{{{{ {var}.name }}}}({{{{ loop.depth }}}}){sep}"
            + self.tag(f"if {var}.children")
            + f"[{{{{ loop({var}.children) }}}}]"
            + self.tag("endif")
            + self.tag("endfor")
        )

    def msg_body(self, var, scope, depth) -> str:
        """The body of a loop over messages: chat-template idioms."""
        self.feat("chat:messages")
        parts = []
        style = self.pick(["im", "llama", "plain"])
        if style == "im":
            parts.append(f"<|im_start|>{{{{ {var}.role }}}}\n")
        elif style == "llama":
            parts.append(
                f"{{{{ '<|start_header_id|>' + {var}['role'] + '<|end_header_id|>\\n\\n' }}}}"
            )
        else:
            parts.append(f"{{{{ {var}.role|upper }}}}: ")
        content = self.pick(["typed", "string", "trim", "parts"])
        if content == "typed":
            self.feat("chat:content-typed")
            parts.append(
                self.tag(f"if {var}.content is string")
                + f"{{{{ {var}.content }}}}"
                + self.tag(f"elif {var}.content is iterable")
                + self.tag(f"for part in {var}.content")
                + self.tag("if part.type == 'text'")
                + "{{ part.text }}"
                + self.tag("else")
                + "<{{ part.type }}>"
                + self.tag("endif")
                + self.tag("endfor")
                + self.tag("endif")
            )
        elif content == "string":
            parts.append(f"{{{{ {var}.content|string }}}}")
        elif content == "trim":
            self.feat("chat:content-trim")
            parts.append(
                self.tag(f"if {var}.content is string")
                + f"{{{{ {var}['content']|trim }}}}"
                + self.tag("endif")
            )
        else:
            parts.append(
                f"{{{{ {var}.content if {var}.content is string else {var}.content|map(attribute='text')|join('') if {var}.content else '' }}}}"
            )
        if self.chance(50):
            self.feat("chat:tool-calls")
            parts.append(
                self.tag(f"if {var}.tool_calls")
                + self.tag(f"for tc in {var}.tool_calls")
                + self.tag("set fn = tc.function if tc.function is defined else tc")
                + "<tool_call>{{ fn.name }} "
                + self.tag("if fn.arguments is string")
                + "{{ fn.arguments }}"
                + self.tag("else")
                + "{{ fn.arguments|tojson }}"
                + self.tag("endif")
                + "</tool_call>"
                + self.tag("endfor")
                + self.tag("endif")
            )
        if self.chance(30):
            self.feat("chat:reasoning")
            parts.append(
                self.tag(f"if {var}.reasoning_content is defined and {var}.reasoning_content")
                + f"<think>{{{{ {var}.reasoning_content.strip() }}}}</think>"
                + self.tag("endif")
            )
        if self.chance(25):
            self.feat("chat:raise_exception" if self.chat else "chat:alternation")
            if self.chat:
                parts.append(
                    self.tag(f"if {var}.role not in ['system', 'user', 'assistant', 'tool']")
                    + "{{ raise_exception('Unknown role: ' ~ "
                    + var
                    + ".role) }}"
                    + self.tag("endif")
                )
                if self.chance(40):
                    parts.append(
                        self.tag(f"if loop.index0 > 0 and {var}.role == 'system'")
                        + "{{ raise_exception('System message must be first') }}"
                        + self.tag("endif")
                    )
        parts.append(self.pick(["<|im_end|>\n", "\n", "{{ '<|eot_id|>' }}", ""]))
        if self.chance(40):
            parts.append(self.body(scope, depth + 1, in_loop=True))
        if self.chance(30):
            self.feat("loop.last")
            parts.append(
                self.tag("if loop.last and add_generation_prompt")
                + "<|im_start|>assistant\n"
                + self.tag("endif")
            )
        return "".join(parts)

    def s_chat_loop(self, scope, depth, in_loop):
        """A whole messages loop in the shape of a real template, with a system-message split."""
        self.feat("chat:template")
        out = self.text()
        if self.chance(50):
            self.feat("chat:system-split")
            out += (
                self.tag("if messages[0]['role'] == 'system'")
                + self.tag("set sys = messages[0]['content']")
                + self.tag("set rest = messages[1:]")
                + self.tag("else")
                + self.tag("set sys = ''")
                + self.tag("set rest = messages")
                + self.tag("endif")
                + "{{ bos_token }}"
                + self.tag("if sys")
                + "[SYS]{{ sys if sys is string else sys|tojson }}[/SYS]\n"
                + self.tag("endif")
                + self.tag("for message in rest")
                + self.msg_body("message", {**scope, "loop": "loop", "message": "msg"}, depth)
                + self.tag("endfor")
            )
        else:
            out += (
                self.tag("for message in messages")
                + self.msg_body("message", {**scope, "loop": "loop", "message": "msg"}, depth)
                + self.tag("endfor")
            )
        if self.chance(40):
            out += (
                self.tag("if add_generation_prompt") + "<|im_start|>assistant\n" + self.tag("endif")
            )
        return out

    def s_filter(self, scope, depth, in_loop):
        f = self.pick(
            [
                "upper",
                "lower",
                "trim",
                "replace('\\n', ' ')",
                "indent(2)",
                "title",
                "center(20)",
                "striptags",
                "truncate(8)",
                "replace('a', 'A')|trim",
            ]
        )
        self.feat("stmt:filter")
        self.feat(f"filter:{f.split('(')[0]}")
        return (
            self.text()
            + self.tag(f"filter {f}")
            + self.body(scope, depth + 1, min_items=1)
            + self.tag("endfilter")
        )

    def s_generation(self, scope, depth, in_loop):
        self.feat("stmt:generation")
        return (
            self.text()
            + self.tag("generation")
            + self.body(scope, depth + 1)
            + self.tag("endgeneration")
        )

    def s_loopctl(self, scope, depth, in_loop):
        which = self.pick(["break", "continue"])
        self.feat(f"stmt:{which}")
        return (
            self.text()
            + self.tag(f"if {self.cond_expr('bool', scope)}")
            + self.tag(which)
            + self.tag("endif")
        )

    def s_namespace(self, scope, depth, in_loop):
        self.feat("namespace")
        ns = self.fresh("ns")
        out = self.text() + self.tag(
            f"set {ns} = namespace(count={self.expr('int', scope)}, found=false, text='')"
        )
        scope[f"{ns}.count"] = "ns_int"
        it = self.pick(["xs", "messages", "ws", "range(3)"])
        var = self.fresh("x")
        inner = {
            **scope,
            "loop": "loop",
            var: {"xs": "int", "messages": "msg", "ws": "str", "range(3)": "int"}[it],
        }
        upd = self.pick([f"{ns}.count + 1", f"{ns}.count + loop.index", f"{ns}.count * 2 - 1"])
        out += (
            self.tag(f"for {var} in {it}")
            + self.tag(f"set {ns}.count = {upd}")
            + self.tag(f"if loop.first or ({self.expr('bool', inner)})")
            + self.tag(f"set {ns}.found = true")
            + self.tag(f"set {ns}.text = {ns}.text ~ loop.index")
            + self.tag("endif")
            + self.body(inner, depth + 1, in_loop=True)
            + self.tag("endfor")
        )
        out += f"{{{{ {ns}.count }}}}|{{{{ {ns}.found }}}}|{{{{ {ns}.text }}}}"
        return out

    def s_macro(self, scope, depth, in_loop):
        self.feat("stmt:macro")
        self.macro_count += 1
        name = f"mac{self.macro_count}"
        shape = self.pick(["plain", "defaults", "varargs", "kwargs", "caller", "caller_args"])
        self.feat(f"macro:{shape}")
        # Macros see their parameters, the context, and earlier top-level names.
        inner = {
            k: v
            for k, v in scope.items()
            if k != "loop" and not k.startswith(("x", "k", "v", "node"))
        }
        inner.update({"a": "str", "b": "str"})
        params = "a, b='dflt'"
        if shape == "plain":
            params = "a, b"
        extra = ""
        if shape == "varargs":
            extra = "[{{ varargs|join(',') }}]"
        elif shape == "kwargs":
            extra = "{% for key, val in kwargs|dictsort %}{{ key }}={{ val }};{% endfor %}"
        elif shape == "caller":
            extra = "<{{ caller() }}>"
        elif shape == "caller_args":
            extra = "<{{ caller(a|upper, 2) }}>"
        body = self.body(inner, depth + 1) + extra
        definition = self.text() + self.tag(f"macro {name}({params})") + body + self.tag("endmacro")
        args = f"{self.expr('str', scope)}"
        if shape == "plain" or self.chance(50):
            args += f", {self.expr('str', scope)}"
        elif shape != "varargs" and self.chance(50):
            args += f", b={self.expr('str', scope)}"
        if shape == "varargs":
            args += f", {self.expr('int', scope)}, {self.expr('str', scope)}"
        if shape == "kwargs":
            args += f", zeta={self.expr('int', scope)}, alpha={self.expr('str', scope)}"
        if shape == "caller":
            call = (
                self.tag(f"call {name}({args})") + self.body(scope, depth + 1) + self.tag("endcall")
            )
        elif shape == "caller_args":
            self.feat("stmt:call-args")
            inner2 = {**scope, "p": "str", "q": "int"}
            call = (
                self.tag(f"call(p, q) {name}({args})")
                + "{{ p }}{{ q }}"
                + self.body(inner2, depth + 1)
                + self.tag("endcall")
            )
        else:
            call = self.text() + f"{{{{ {name}({args}) }}}}"
            if self.chance(30):
                self.feat("macro:twice")
                call += f"{{{{ {name}({self.e_str_lit()}, 'x')|upper }}}}"
        return definition + call

    def s_cycler(self, scope, depth, in_loop):
        which = self.pick(["cycler", "joiner"])
        self.feat(f"global:{which}")
        if which == "cycler":
            return (
                self.tag("set cyc = cycler('a', 'b', 'c')")
                + "{{ cyc.next() }}{{ cyc.next() }}{{ cyc.current }}{{ cyc.next() }}{{ cyc.next() }}"
            )
        return self.tag("set jn = joiner(', ')") + "{% for x in ws %}{{ jn() }}{{ x }}{% endfor %}"


# ----------------------------------------------------------------------------- cases

UNDEFINED_KINDS = [
    "Undefined",
    "Undefined",
    "Undefined",
    "Undefined",
    "ChainableUndefined",
    "StrictUndefined",
]


def build_case(ch, config: str | None = None) -> Case:
    """One case from a chooser (Hypothesis-driven or seeded random)."""
    if config is None:
        config = _pick(ch, ["chat", "plain"])
    options: dict[str, Any] = {}
    if config == "plain":
        options = {
            "trim_blocks": bool(ch.integer(0, 1)),
            "lstrip_blocks": bool(ch.integer(0, 1)),
            "keep_trailing_newline": bool(ch.integer(0, 1)),
            "undefined": _pick(ch, UNDEFINED_KINDS),
        }
    gen = Gen(ch, config)
    scope = dict(CONTEXT_TYPES)
    source = gen.body(scope, 0, min_items=1) + gen.text()
    if ch.integer(0, 4) == 0:
        source += _pick(ch, ["\n", "\n\n", " \n", "\r\n"])
        gen.feat("ws:trailing-newline")
    features = set(gen.features)
    features.add(f"config:{config}")
    features.add("mode:template")
    for key, value in options.items():
        if value is True:
            features.add(f"opt:{key}")
        elif key == "undefined" and value != "Undefined":
            features.add(f"opt:{value}")
    return Case(config, options, source, make_context(ch), frozenset(features))


@st.composite
def cases(draw, config: str | None = None) -> Case:
    """Hypothesis strategy: a generated template with its context (``config`` or both)."""
    return build_case(HypothesisChooser(draw), config)


def random_case(rng, config: str | None = None) -> Case:
    """A case from a seeded ``random.Random`` (fast; no shrinking)."""
    return build_case(RandomChooser(rng), config)


# ----------------------------------------------------------------------------- focused cases

EXPR_TYPES = ["int", "float", "str", "str", "bool", "list_int", "list_str", "dict", "none"]


def build_expression_case(ch, config: str | None = None, loose: int = 0) -> Case:
    """A single ``{{ expr }}`` (or a few): operators, filters, tests and methods in isolation.

    ``loose`` (percent) makes sub-expressions of random types: many fail, and both engines must.
    """
    if config is None:
        config = _pick(ch, ["chat", "plain"])
    gen = Gen(ch, config, loose=loose)
    parts = []
    for _ in range(ch.integer(1, 3)):
        typ = _pick(ch, EXPR_TYPES)
        gen.feat(f"print:{typ}")
        parts.append("{{ " + gen.expr(typ, dict(CONTEXT_TYPES)) + " }}")
    options = {} if config == "chat" else {"undefined": "Undefined"}
    mode = "mode:loose" if loose else "mode:expression"
    features = frozenset(gen.features | {f"config:{config}", mode})
    return Case(config, options, "|".join(parts), make_context(ch), features)


_WS_TEXT = [
    "",
    "",
    " ",
    "  ",
    "\t",
    "\n",
    "\n",
    "\n\n",
    " \n",
    "\n ",
    "\t\n  ",
    "a",
    "b\n",
    "  x",
    "\r\n",
]


def build_whitespace_case(ch, config: str | None = None) -> Case:
    """Simple tags of every kind with every whitespace marker, between whitespace-heavy text."""
    if config is None:
        config = _pick(ch, ["chat", "plain", "plain"])
    options: dict[str, Any] = {}
    if config == "plain":
        options = {
            "trim_blocks": bool(ch.integer(0, 1)),
            "lstrip_blocks": bool(ch.integer(0, 1)),
            "keep_trailing_newline": bool(ch.integer(0, 1)),
            "undefined": "Undefined",
        }
    gen = Gen(ch, config)

    def mark(plus: bool = True) -> str:
        m = _pick(ch, ["", "", "-", "+"] if plus else ["", "", "-"])
        if m:
            gen.feat(f"ws:{m}marker")
        return m

    def tag(body: str, plus_close: bool = True) -> str:
        return "{%" + mark() + " " + body + " " + mark(plus_close) + "%}"

    def text() -> str:
        return "".join(_pick(ch, _WS_TEXT) for _ in range(ch.integer(0, 3)))

    def block(depth: int) -> str:
        out = []
        for _ in range(ch.integer(1, 4)):
            out.append(text())
            kind = _pick(
                ch,
                [
                    "output",
                    "if",
                    "for",
                    "set",
                    "comment",
                    "raw",
                    "setblock",
                    "macro",
                    "filter",
                    "text",
                ],
            )
            if depth >= 2 and kind in ("if", "for", "setblock", "macro", "filter"):
                kind = "output"
            gen.feat(f"ws:{kind}")
            if kind == "output":
                out.append(
                    "{{"
                    + mark(False)
                    + " "
                    + _pick(ch, ["n", "'x'", "s", "none", "''"])
                    + " "
                    + mark(False)
                    + "}}"
                )
            elif kind == "if":
                out.append(tag(_pick(ch, ["if true", "if false", "if n > 3"])) + block(depth + 1))
                if ch.integer(0, 1):
                    out.append(tag("else") + block(depth + 1))
                out.append(tag("endif"))
            elif kind == "for":
                out.append(tag("for i in [1, 2]") + block(depth + 1) + tag("endfor"))
            elif kind == "set":
                out.append(tag("set q = 1"))
            elif kind == "comment":
                out.append("{#" + mark() + " c\n " + mark() + "#}")
            elif kind == "raw":
                out.append(
                    "{%"
                    + mark()
                    + " raw "
                    + _pick(ch, ["", "-"])
                    + "%}"
                    + text()
                    + "{{ r }}"
                    + text()
                    + tag("endraw")
                )
            elif kind == "setblock":
                out.append(tag("set blk") + block(depth + 1) + tag("endset") + "[{{ blk }}]")
            elif kind == "macro":
                out.append(tag("macro mc(a)") + block(depth + 1) + tag("endmacro") + "{{ mc(1) }}")
            elif kind == "filter":
                out.append(tag("filter upper") + block(depth + 1) + tag("endfilter"))
        return "".join(out)

    source = block(0) + text()
    features = set(gen.features) | {f"config:{config}", "mode:whitespace"}
    for key, value in options.items():
        if value is True:
            features.add(f"opt:{key}")
    return Case(config, options, source, make_context(ch), frozenset(features))


@st.composite
def expression_cases(draw, config: str | None = None, loose: int = 0) -> Case:
    return build_expression_case(HypothesisChooser(draw), config, loose)


@st.composite
def whitespace_cases(draw, config: str | None = None) -> Case:
    return build_whitespace_case(HypothesisChooser(draw), config)
