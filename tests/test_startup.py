"""What a process that only renders text imports.

`minijinja-py render`, every `batch` worker started by spawn or forkserver, and every script that
renders a chat template pay for each module imported at start-up.  The chat layer's provenance
(and the engine's, which it brings), span inference, token ids, the transformers drop-in, the GGUF
reader, the hand-tag registry's hashing and package-data reading are imported by the calls that
use them; these tests keep it so, each in a fresh interpreter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

DEFERRED = (
    "minijinja_py.provenance",
    "minijinja_py.chat.spans.choose",
    "minijinja_py.chat.spans.traced",
    "minijinja_py.chat.spans.inferred",
    "minijinja_py.chat.tokens",
    "minijinja_py.chat.dropin",
    "minijinja_py.chat.gguf",
    "hashlib",
    "importlib.resources",
    "logging",
)

SETUP = """
from minijinja_py.chat import ChatTemplate
from minijinja_py.pipelines import RowRenderer
chat = ChatTemplate.from_string(
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] | tojson }}\\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)
messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
"""


def deferred_modules_after(code: str) -> tuple[str, list[str]]:
    """What `code` (run after SETUP in a fresh interpreter) printed last, and which of
    DEFERRED were imported by then."""
    probe = (
        SETUP
        + code
        + f"\nimport sys, json\nprint(json.dumps([m for m in {DEFERRED!r} if m in sys.modules]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        timeout=120,
    )
    *printed, modules = done.stdout.splitlines()
    return "\n".join(printed), json.loads(modules)


def test_rendering_text_imports_none_of_the_deferred_modules() -> None:
    printed, modules = deferred_modules_after(
        "print(repr(chat.render(messages, add_generation_prompt=True)))\n"
        "print(RowRenderer(chat).render_value({'messages': messages}))"
    )
    assert printed == (
        '\'<|user|>"hi"\\n<|assistant|>"hello"\\n<|assistant|>\'\n'
        "{'text': '<|user|>\"hi\"\\n<|assistant|>\"hello\"\\n', 'error': None}"
    )
    assert modules == []


def test_provenance_is_imported_by_the_call_that_uses_it() -> None:
    printed, modules = deferred_modules_after(
        "print(chat.render_with_provenance(messages).assistant_spans)"
    )
    assert printed == "[(26, 34)]"  # ('"hello"' and its line end, after '<|assistant|>')
    assert modules == [
        "minijinja_py.provenance",
        "minijinja_py.chat.spans.traced",
        "minijinja_py.chat.spans.inferred",
    ]


def test_the_deferred_names_of_the_chat_package_are_its_modules_own() -> None:
    import minijinja_py.chat as chat
    from minijinja_py.chat import gguf
    from minijinja_py.chat.spans import traced

    assert chat.ChatProvenance is traced.ChatProvenance
    assert chat.GGUFError is gguf.GGUFError
    assert chat.GGUFMetadata is gguf.GGUFMetadata
    assert chat.read_gguf_metadata is gguf.read_gguf_metadata
    assert {"ChatProvenance", "GGUFError", "GGUFMetadata", "read_gguf_metadata"} <= set(
        chat.__all__
    )


def test_an_unknown_name_of_the_chat_package_is_an_attribute_error() -> None:
    import minijinja_py.chat as chat

    try:
        chat.NoSuchName  # noqa: B018
    except AttributeError as error:
        assert str(error) == "module 'minijinja_py.chat' has no attribute 'NoSuchName'"
    else:
        raise AssertionError("no AttributeError")


# Heavy standard-library modules that a plain `import minijinja_py` and a first render of a
# template must not load (`dataclasses` brings `inspect`, which brings `ast`, `dis` and
# `tokenize`: a fifth of the package's import time).
HEAVY = ("dataclasses", "inspect", "ast", "dis", "tokenize", "linecache", "hashlib", "logging")


def test_importing_and_rendering_loads_no_heavy_module() -> None:
    # (only what the package brings: Python 3.13 itself starts with linecache loaded)
    probe = (
        "import sys, json\n"
        "heavy = [m for m in " + repr(HEAVY) + " if m not in sys.modules]\n"
        "import minijinja_py\n"
        "after_import = sorted(m for m in heavy if m in sys.modules)\n"
        "print(minijinja_py.Environment().from_string('{{ x|upper }}').render(x='a'))\n"
        "after_render = sorted(m for m in heavy if m in sys.modules)\n"
        "print(json.dumps([after_import, after_render]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        timeout=120,
    )
    printed, modules = done.stdout.splitlines()
    assert printed == "A"
    assert json.loads(modules) == [[], []]


# Every module a plain `import minijinja_py` may load: the package's own (exactly these) and the
# standard library's (these at most; the names differ between Python 3.10 and 3.13).  A module
# that joins the start-up path fails here: import it where it is used, or add it with the reason.
STARTUP_PACKAGE_MODULES = {
    "minijinja_py",
    "minijinja_py.__about__",
    "minijinja_py._mypyc",
    "minijinja_py.builtins",
    "minijinja_py.builtins.access",  # the attribute policy's lookups, which environment wires
    "minijinja_py.builtins.costs",  # the cost declarations' table
    "minijinja_py.builtins.methods",  # the allow-listed str/dict/list methods
    "minijinja_py.builtins.policy",
    "minijinja_py.environment",
    "minijinja_py.errors",
    "minijinja_py.sandbox",
    "minijinja_py.sandbox.budget",
    "minijinja_py.sandbox.format_spec",
    "minijinja_py.sandbox.limits",
    "minijinja_py.sandbox.measure",
    "minijinja_py.sandbox.opaque",
    "minijinja_py.sandbox.printing",
    "minijinja_py.values",
    "minijinja_py.values.loops",
    "minijinja_py.values.runtime",
}
STARTUP_STDLIB_MODULES = {
    "__future__",
    "_collections",
    "_contextvars",
    "_functools",
    "_json",
    "_locale",  # (3.10's re)
    "_operator",
    "_sre",
    "_typing",
    "array",  # methods: the bounded str.format's buffers
    "collections",
    "collections.abc",
    "contextlib",
    "contextvars",  # the running render's budget
    "copyreg",
    "enum",
    "functools",
    "itertools",
    "json",  # printing: the sizes of JSON text
    "json.decoder",
    "json.encoder",
    "json.scanner",
    "keyword",
    "math",
    "operator",
    "re",
    "re._casefix",
    "re._compiler",
    "re._constants",
    "re._parser",
    "reprlib",
    "sre_compile",  # (3.10's re)
    "sre_constants",
    "sre_parse",
    "types",
    "typing",
    "typing.io",
    "typing.re",
    "warnings",
}


# What the compiled build's shims import to load its shared library (mypyc's runtime).
COMPILED_BUILD_MODULES = {
    "importlib",
    "importlib._bootstrap",
    "importlib._bootstrap_external",
    "importlib.machinery",
}


def test_a_plain_import_loads_only_the_listed_modules() -> None:
    probe = (
        "import sys, json\n"
        "before = set(sys.modules)\n"
        "import minijinja_py\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        timeout=120,
    )
    # (the compiled build adds its modules' shared library, `minijinja_py__mypyc`, and the
    # import machinery its modules' shims load it with)
    everything = json.loads(done.stdout)
    compiled = any(m.endswith("__mypyc") for m in everything)
    loaded = {m for m in everything if not m.endswith("__mypyc")}
    package = {m for m in loaded if m.split(".")[0] == "minijinja_py"}
    assert package == STARTUP_PACKAGE_MODULES
    allowed = STARTUP_STDLIB_MODULES | (COMPILED_BUILD_MODULES if compiled else set())
    assert loaded - package <= allowed
