"""The docs build's reST check (docs/hooks.py) and the docstring converter
(tools/rest_to_markdown.py) that makes the API reference pass it."""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path
from types import ModuleType, SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]


def load(relative: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(Path(relative).stem, ROOT / relative)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hooks = load("docs/hooks.py")
tool = load("tools/rest_to_markdown.py")


def page(uri: str) -> SimpleNamespace:
    return SimpleNamespace(file=SimpleNamespace(src_uri=uri))


def test_the_hook_finds_roles_and_double_back_quotes_outside_code_blocks():
    html = (
        "<p>See :meth:<code>render</code>, :class:<code>~a.B</code>, :func:`f` and ``x``."
        "</p><pre><code>&gt;&gt;&gt; ``kept``  :meth:<code>kept</code></code></pre>"
        "<p>A <code>normal</code> name: the same.</p>"
    )
    assert hooks.leftovers(html) == [":meth:`render`", ":class:`~a.B`", ":func:`f`", "``", "``"]
    assert hooks.leftovers("<p>Only <code>code</code> here.</p>") == []


def test_the_hook_logs_an_error_for_a_reference_page_only(caplog):
    html = "<p>:meth:<code>render</code></p>"
    with caplog.at_level(logging.ERROR, logger="mkdocs.hooks.rest_roles"):
        assert hooks.on_post_page(html, page("reference/chat.md"), None) == html
        assert hooks.on_post_page(html, page("engine.md"), None) == html
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [
        (
            "ERROR",
            "reference/chat.md shows 1 reST leftovers from docstrings (:meth:`render`): convert "
            "the docstrings to Markdown with `python tools/rest_to_markdown.py minijinja_py`",
        )
    ]


SOURCE = '''\
"""Módulo: see :mod:`.arrow` and ``x``."""

NOT_A_DOCSTRING = "``kept`` :meth:`kept`"  # ``a comment`` stays


class Thing:
    """:class:`~minijinja_py.Template`, ``a
    b`` across a line, ``has ` quote`` kept.

    >>> f(``kept``)
    ``kept``

    After the example: :func:`g`.
    """

    def method(self) -> str:
        r"""``\\n`` and :attr:`columns`."""
        return "``kept``"
'''

CONVERTED = '''\
"""Módulo: see `arrow` and `x`."""

NOT_A_DOCSTRING = "``kept`` :meth:`kept`"  # ``a comment`` stays


class Thing:
    """`Template`, `a
    b` across a line, ``has ` quote`` kept.

    >>> f(``kept``)
    ``kept``

    After the example: `g`.
    """

    def method(self) -> str:
        r"""`\\n` and `columns`."""
        return "``kept``"
'''


def test_the_converter_rewrites_docstrings_only():
    assert tool.convert_source(SOURCE) == (CONVERTED, 4, 3)
    assert tool.convert_source(CONVERTED) == (CONVERTED, 0, 0)


def test_the_converter_rewrites_files_and_checks(tmp_path, capsys):
    module = tmp_path / "module.py"
    module.write_text(SOURCE, encoding="utf-8")
    assert tool.main(["--check", str(tmp_path)]) == 1
    assert module.read_text(encoding="utf-8") == SOURCE
    assert tool.main([str(tmp_path)]) == 0
    assert module.read_text(encoding="utf-8") == CONVERTED
    assert tool.main(["--check", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"{module}: 4 roles, 3 literals",
        "1 of 1 files to convert: 4 roles, 3 literals",
        f"{module}: 4 roles, 3 literals",
        "1 of 1 files converted: 4 roles, 3 literals",
        "0 of 1 files to convert: 0 roles, 0 literals",
    ]
