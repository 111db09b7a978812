"""Rewrite the reST markup of docstrings as the Markdown that mkdocstrings renders.

mkdocstrings reads docstrings as Markdown (Google style), so a Sphinx role shows verbatim in the
API reference. In the docstrings (module, class and function docstrings only; never code, other
strings or comments) of the given files or folders:

- a role becomes inline code: :meth:`render` -> `render`; a leading ``~`` keeps only the last
  dotted name (:class:`~minijinja_py.Template` -> `Template`), a leading ``.`` goes
  (:mod:`.arrow` -> `arrow`);
- a ``literal`` becomes `literal` (one back-quote each side), unless it holds a back-quote
  itself, where the double back-quotes are what Markdown needs too.

Doctest examples (from a ``>>>`` line to the next blank line) are left as they are. Usage:

    python tools/rest_to_markdown.py minijinja_py          # rewrite in place, print a summary
    python tools/rest_to_markdown.py --check minijinja_py  # exit 1 if anything is left to do
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

ROLE = re.compile(
    r":(?:py:)?(?:meth|class|func|mod|attr|data|exc|obj|const):`(?P<tilde>~?)\.?(?P<name>[^`]+)`"
)
# Two back-quotes, text without a back-quote or a blank line, two back-quotes; not part of a
# longer run of back-quotes.
LITERAL = re.compile(r"(?<!`)``(?!`)(?P<text>(?:(?!\n\s*\n)[^`])+?)(?<!`)``(?!`)")
DOCTEST = re.compile(r"^[ \t]*>>>.*?(?=\n[ \t]*\n|\Z)", re.M | re.S)


def _role(match: re.Match[str]) -> str:
    name = match["name"]
    return f"`{name.rsplit('.', 1)[-1] if match['tilde'] else name}`"


def convert_text(text: str) -> tuple[str, int, int]:
    """``text`` with its roles and literals rewritten, and how many of each.

    >>> convert_text("See :meth:`render` and ``x=1``.\\n\\n>>> f(``a``)\\n")
    ('See `render` and `x=1`.\\n\\n>>> f(``a``)\\n', 1, 1)
    """
    pieces, roles, literals, last = [], 0, 0, 0
    for example in [*DOCTEST.finditer(text), None]:
        start = len(text) if example is None else example.start()
        prose = text[last:start]
        prose, found_roles = ROLE.subn(_role, prose)
        prose, found_literals = LITERAL.subn(lambda m: f"`{m['text']}`", prose)
        pieces.append(prose)
        roles += found_roles
        literals += found_literals
        if example is not None:
            pieces.append(example[0])
            last = example.end()
    return "".join(pieces), roles, literals


def _docstring_spans(source: str) -> list[tuple[int, int]]:
    """Character spans, in ``source``, of every module, class and function docstring."""
    line_starts = [0]
    for line in source.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    spans = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        first = node.body[0] if node.body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            value = first.value
            assert value.end_lineno is not None and value.end_col_offset is not None
            # ast's columns count UTF-8 bytes; convert them to characters of their line.
            start_line = source[line_starts[value.lineno - 1] :].encode("utf-8")
            end_line = source[line_starts[value.end_lineno - 1] :].encode("utf-8")
            start = line_starts[value.lineno - 1] + len(
                start_line[: value.col_offset].decode("utf-8")
            )
            end = line_starts[value.end_lineno - 1] + len(
                end_line[: value.end_col_offset].decode("utf-8")
            )
            spans.append((start, end))
    return sorted(spans)


def convert_source(source: str) -> tuple[str, int, int]:
    """A module's source with its docstrings converted, and the counts of roles and literals."""
    pieces, roles, literals, last = [], 0, 0, 0
    for start, end in _docstring_spans(source):
        text, found_roles, found_literals = convert_text(source[start:end])
        pieces += [source[last:start], text]
        roles += found_roles
        literals += found_literals
        last = end
    pieces.append(source[last:])
    return "".join(pieces), roles, literals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, help="Python files or folders")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if needed")
    args = parser.parse_args(argv)
    files = sorted({f for p in args.paths for f in ([p] if p.is_file() else p.rglob("*.py"))})
    changed = roles = literals = 0
    for path in files:
        source = path.read_text(encoding="utf-8")
        converted, found_roles, found_literals = convert_source(source)
        if converted != source:
            ast.parse(converted)  # never write a file that no longer parses
            changed += 1
            roles += found_roles
            literals += found_literals
            print(f"{path}: {found_roles} roles, {found_literals} literals")
            if not args.check:
                path.write_text(converted, encoding="utf-8")
    verb = "to convert" if args.check else "converted"
    print(f"{changed} of {len(files)} files {verb}: {roles} roles, {literals} literals")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
