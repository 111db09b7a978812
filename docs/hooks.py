"""MkDocs hooks of this site (registered under ``hooks:`` in mkdocs.yml).

The API reference is rendered from docstrings by mkdocstrings, which reads them as Markdown
(Google style). A reST role (:meth:`x`) or a ``literal`` written for Sphinx shows up verbatim
on the page; this hook finds what is left of them in each reference page's HTML and logs an
error per page, which fails ``mkdocs build --strict``. An error, not a warning: ``--quiet``
drops warnings before strict mode counts them, so a warning would pass ``--strict --quiet``.
"""

from __future__ import annotations

import html
import logging
import re
from typing import Any

log = logging.getLogger("mkdocs.hooks.rest_roles")

# Code blocks (doctest examples) may hold anything; the prose around them may not.
_PRE = re.compile(r"<pre\b.*?</pre>", re.S)
_TAG = re.compile(r"<[^>]+>")
# What Markdown leaves of a role: ":meth:" then the back-quoted name (a <code> element, or the
# back-quote itself when Markdown could not pair it).
_ROLE = re.compile(r":(?:py:)?(?:meth|class|func|mod|attr|data|exc|obj|const|ref|doc):(?=<code>|`)")


def leftovers(page_html: str) -> list[str]:
    """The reST left in a page's HTML: each role, and each pair of back-quotes shown as text.

    >>> leftovers('<p>See :meth:<code>render</code> and ``x``.</p><pre>``ok``</pre>')
    [':meth:`render`', '``']
    """
    prose = _PRE.sub("", page_html)
    found = []
    for match in _ROLE.finditer(prose):
        rest = prose[match.end() :]
        if rest.startswith("<code>"):
            name = _TAG.sub("", rest[len("<code>") :].split("</code>", 1)[0])
        else:  # a back-quote Markdown left unpaired
            name = rest[1:].split("`", 1)[0] if rest.count("`") > 1 else ""
        found.append(f"{match[0]}`{html.unescape(name)}`")
    text = html.unescape(_TAG.sub("", prose))
    found += ["``"] * text.count("``")
    return found


def on_post_page(output: str, page: Any, config: Any) -> str:
    if page.file.src_uri.startswith("reference/"):
        found = leftovers(output)
        if found:
            shown = ", ".join(dict.fromkeys(found))
            log.error(
                "%s shows %d reST leftovers from docstrings (%s): convert the docstrings to "
                "Markdown with `python tools/rest_to_markdown.py minijinja_py`",
                page.file.src_uri,
                len(found),
                shown[:300],
            )
    return output
