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
