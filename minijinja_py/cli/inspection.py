"""`minijinja-py inspect`: a conversation rendered with its assistant mask shown, so that a
person can see which characters training would learn instead of reading ids.

On a terminal the masked characters are shown in reverse video; elsewhere between `⟦` and `⟧`;
with `--html`, as an HTML page with the masked text in `<mark>`.  A line on standard error says
where the mask came from and why (`mask: inferred: from '<|im_start|>assistant\\n' to
'<|im_end|>'`).
"""

from __future__ import annotations

import argparse
import html
import sys
from typing import Any

from .options import (
    CommandError,
    _add_limit_options,
    _add_source,
    _load_chat,
    _load_conversation,
    _load_json,
    _parse_vars,
    _write_stdout,
)

__all__ = ["add_inspect", "mark_spans"]

_OPEN_TEXT, _CLOSE_TEXT = "\u27e6", "\u27e7"
_OPEN_ANSI, _CLOSE_ANSI = "\x1b[7m", "\x1b[27m"


def add_inspect(commands: Any) -> None:
    """The `inspect` command's options."""


    inspect = commands.add_parser(
        "inspect", help="show a conversation with its assistant mask marked"
    )
    _add_source(inspect)
    inspect.add_argument(
        "--messages",
        metavar="FILE",
        required=True,
        help="JSON list of messages, or an object with 'messages' and options ('-' for stdin)",
    )
    inspect.add_argument("--tools", metavar="FILE", help="a JSON list of tool schemas")
    inspect.add_argument(
        "--mask",
        default="auto",
        choices=["auto", "generation", "tagged", "inferred"],
        help="where the mask comes from (default: auto)",
    )
    inspect.add_argument(
        "--mask-header",
        default="auto",
        choices=["auto", "exclude", "whitespace", "include"],
        help="whether an inferred span takes the role header (default: the family's)",
    )
    inspect.add_argument(
        "--color",
        default="auto",
        choices=["auto", "always", "never"],
        help="reverse video for the mask (auto: on a terminal)",
    )
    inspect.add_argument("--html", action="store_true", help="write an HTML page instead")
    inspect.add_argument(
        "--var",
        action="append",
        metavar="KEY=VALUE",
        help="an extra template variable (VALUE is parsed as JSON when it is valid JSON)",
    )
    _add_limit_options(inspect)
    inspect.set_defaults(func=_cmd_inspect)


def mark_spans(text: str, spans: list[tuple[int, int]], opener: str, closer: str) -> str:
    """`text` with `opener` and `closer` around each span (sorted, disjoint)."""
    pieces: list[str] = []
    position = 0
    for start, end in sorted(spans):
        if start < position:
            start = position
        if end <= start:
            continue
        pieces += [text[position:start], opener, text[start:end], closer]
        position = end
    pieces.append(text[position:])
    return "".join(pieces)


def _cmd_inspect(args: argparse.Namespace) -> int:
    chat = _load_chat(args)
    data, options = _load_conversation(args.messages)
    if args.tools:
        tools = _load_json(args.tools, "--tools")
        if not isinstance(tools, list):
            raise CommandError(f"{args.tools}: --tools must hold a JSON list")
        options["tools"] = tools
    options.update(_parse_vars(args.var))
    try:
        found = chat.assistant_spans(
            data, mask=args.mask, mask_header=args.mask_header, **options
        )
    except ValueError as error:  # (mask="tagged" on a template with no tagged copy)
        raise CommandError(str(error)) from None
    spans = [(start, end) for start, end in found.spans]
    if args.html:
        _write_stdout(_page(found.text, spans, found.source))
    else:
        color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
        opener, closer = (_OPEN_ANSI, _CLOSE_ANSI) if color else (_OPEN_TEXT, _CLOSE_TEXT)
        _write_stdout(mark_spans(found.text, spans, opener, closer))
    masked = sum(end - start for start, end in spans)
    print(
        f"mask: {_reason(chat, data, options, found.source)} "
        f"({len(spans)} span{'s' if len(spans) != 1 else ''}, {masked} characters)",
        file=sys.stderr,
    )
    return 0


def _reason(chat: Any, messages: list[Any], options: dict[str, Any], source: str) -> str:
    from ..chat.spans.modes import mask_reason

    texts = None
    if source == "inferred":  # (the texts the rule read off the template)
        texts = chat.render_with_provenance(messages, **options).turn_texts
    return mask_reason(source, texts) or ""


def _page(text: str, spans: list[tuple[int, int]], source: str) -> str:
    body = mark_spans(html.escape(text, quote=False), _escaped_spans(text, spans), "<mark>", "</mark>")
    return (
        "<!doctype html>\n<meta charset=\"utf-8\">\n<title>assistant mask</title>\n"
        "<style>pre{white-space:pre-wrap}mark{background:#ffe066}</style>\n"
        f"<p>mask source: {html.escape(source)}</p>\n<pre>{body}</pre>\n"
    )


def _escaped_spans(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    # The spans' offsets in the escaped text: each character's escaped length, summed.
    offsets = [0]
    for char in text:
        offsets.append(offsets[-1] + len(html.escape(char, quote=False)))
    return [(offsets[start], offsets[end]) for start, end in spans]
