"""The tool_calls field of an inferred response template: the probe calls rendered (one, then
two; arguments as a dict, then as a JSON string), found in the turn's text by call_forms.py, and
the markers around them made the field's opener and closer: per call, around a section that
holds them all, or (with nothing written before them) where the turn opens with what a call
opens with."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from os.path import commonprefix
from typing import Any

from .call_forms import (
    ID,
    KEY,
    NAME,
    NAME_2,
    NAME_PATTERN,
    PROBE_TOOLS,
    VALUE,
    FoundCalls,
    between_pattern,
    calls_message,
    find_calls,
    read_as_python,
)
from .markers import (
    ANY_ID,
    TOKEN,
    common_suffix,
    first_token,
    last_token,
    literal_pattern,
    whole_tokens_prefix,
    whole_tokens_suffix,
)

__all__ = ["tool_calls_field"]


def _probe_calls(body: Callable[..., str | None]) -> tuple[str, str | None, bool]:
    # The turn with one call, and with two (None where the template refuses two), and whether
    # its arguments had to be a JSON string.
    for arguments in ({KEY: VALUE}, json.dumps({KEY: VALUE})):
        for content in ("", None):
            one = body(calls_message((NAME,), arguments, content), PROBE_TOOLS)
            if one is not None and NAME in one and VALUE in one:
                two = body(calls_message((NAME, NAME_2), arguments, content), PROBE_TOOLS)
                if two is not None and (NAME_2 not in two or two.count(VALUE) != 2):
                    two = None
                return one, two, isinstance(arguments, str)
    return "", None, False


def tool_calls_field(
    body: Callable[..., str | None], end_marker: str, lost: list[str]
) -> tuple[dict[str, Any], list[str], bool] | None:
    """The tool_calls field, the section markers around all calls (which the content field
    must stop at: they are not the reply's text), and whether a message's second call is
    written."""
    one, two, _ = _probe_calls(body)
    if not one:
        lost.append("tool_calls: the template does not write an assistant message's tool calls")
        return None
    calls = find_calls(one, (NAME,))
    if calls is None:
        lost.append(
            "tool_calls: the template writes a call in a form not read here (a JSON or Python "
            "object or call, or a name followed by arguments in JSON, tags or delimiters)"
        )
        return None
    spec = calls.spec
    section: list[str] = []
    if not one[: calls.places[0][0]].strip():
        # Nothing is written before the calls: they are read where a turn opens with one.
        return _calls_opening_the_turn(one, calls, end_marker), section, two is not None
    if spec.get("transform_each"):
        # One list holds every call: its markers are the field's (a code fence between them
        # and the list is the list's, which the python parser reads).
        start, _, end = calls.places[0]
        opener, closer = _marker_before(one[:start]), _marker_after(one[end:])
        if not opener:
            lost.append(_NO_CALL_MARKER)
            return None
        if not (one[:start].rstrip().endswith(opener) and one[end:].lstrip().startswith(closer)):
            spec = read_as_python(spec)
        spec = {"open": opener, **spec}
        ends = [marker for marker in dict.fromkeys((closer, end_marker)) if marker]
        if ends:  # (the section's own closer, or the turn's end where a model writes none)
            spec["close"] = ends[0] if len(ends) == 1 else ends
        return spec, section, two is not None
    start, name_at, end = calls.places[0]
    named = "open_pattern" in spec
    opener = last_token(one[:start])
    closer = first_token(one[end:])
    both = find_calls(two, (NAME, NAME_2)) if two is not None else None
    if both is not None and len(both.places) == 2:
        # What each call writes is what the two calls' texts share around them; a marker
        # written once before (or after) all the calls is the section's.
        two = two.replace(ID % 0, ANY_ID).replace(ID % 1, ANY_ID)
        (start_1, name_1, end_1), (start_2, name_2, end_2) = both.places
        head = two[: name_1 if named else start_1]
        gap = two[end_1 : name_2 if named else start_2]
        tail = two[end_2:]
        lead = whole_tokens_suffix(gap, common_suffix(head, gap))
        trail = whole_tokens_prefix(gap, commonprefix([gap, tail]))
        if len(lead) + len(trail) > len(gap):
            trail = trail[: len(gap) - len(lead)]
        opener, closer = lead.strip(), trail.strip()
        section += (
            [last_token(head[: len(head) - len(lead)])] if head[: len(head) - len(lead)] else []
        )
        section += [first_token(tail[len(trail) :])]
    elif named:
        lead = one[:name_at]
        cut = max(lead.rfind(" "), lead.rfind("\n"))
        opener = lead[cut + 1 :].strip()
    elif opener:
        # A call on a line of its own after a header (GigaChat's "function call<|role_sep|>"):
        # the whole line opens it, not its last marker alone, which other headers share.
        lead = one[:start].rstrip()
        line = lead[lead.rfind("\n") + 1 :].strip()
        if line.endswith(opener) and not line[: -len(opener)].rstrip().endswith((">", "]")):
            opener = line
    if named:
        if not opener:
            lost.append(_NO_CALL_MARKER)
            return None
        betweens = both.betweens if both is not None else [calls.between]
        spec["open_pattern"] = literal_pattern(opener) + NAME_PATTERN + between_pattern(betweens)
    elif not opener and both is not None and gap.strip() in ("", ","):
        # Calls one after another between one pair of markers (MiniMax M1's `<tool_calls>`
        # holding a JSON object a line): the pair is the field's, the calls a sequence in it.
        opener, closer = _marker_before(one[:start]), _marker_after(one[end:])
        if not opener:
            lost.append(_NO_CALL_MARKER)
            return None
        spec = {"open": opener, **read_as_python(spec)}
        if closer or end_marker:
            spec["close"] = closer or end_marker
        return spec, [], True
    elif not opener:
        lost.append(_NO_CALL_MARKER)
        return None
    elif ANY_ID in opener:
        spec = {"open_pattern": literal_pattern(opener), **spec}
    else:
        spec = {"open": opener, **spec}
    if not closer and both is not None and end_marker:
        # Nothing ends a call but the next call's opener (Mistral's "[TOOL_CALLS]NAME[ARGS]"
        # one after another): a call closes before it, which opens the next.
        spec["close_pattern"] = f"(?={literal_pattern(opener)})|{literal_pattern(end_marker)}"
    elif closer or end_marker:
        spec["close"] = closer or end_marker
    section = [
        marker for marker in section if marker and marker not in (opener, closer, end_marker)
    ]
    return spec, section, two is not None


_FENCE = re.compile(r"```\w*")


def _marker_before(text: str) -> str:
    # The last marker of `text`, over a code fence's opening line.
    for token in reversed(TOKEN.findall(text)):
        if not _FENCE.fullmatch(token):
            return token
    return ""


def _marker_after(text: str) -> str:
    # The first marker of `text`, over a code fence's end.
    for token in TOKEN.findall(text):
        if not _FENCE.fullmatch(token):
            return token
    return ""


def _calls_opening_the_turn(one: str, calls: FoundCalls, end_marker: str) -> dict[str, Any]:
    """Calls written with no marker before them (Llama 3.1's bare JSON object, pythonic lists):
    a turn that opens with what a call opens with is read as calls, up to the turn's end."""
    spec = read_as_python(calls.spec)
    start, _, end = calls.places[0]
    region = one[start:end]
    first = re.match(r"""[\[{\s]*(["'])[^"']*\1""", region)
    if first is not None:  # (an object: its brackets, then its first key, `{"name"`)
        brackets, key = first.group()[: first.start(1)], first.group()[first.start(1) :]
        look = "".join(re.escape(char) + r"\s*" for char in brackets if not char.isspace())
        # (a key that is the call's name, `{"NAME": {...}}`, is any name)
        look += r"""["'][\w.\-]+["']""" if NAME in key else re.escape(key)
    else:  # (a pythonic call, alone or in a list)
        look = (r"\[\s*" if region.startswith("[") else "") + r"[A-Za-z_][\w.\-]*\("
    closer = _marker_after(one[end:])
    field = {"open_pattern": rf"\A\s*(?={look})", **spec}
    if closer or end_marker:  # (else the calls run to the end of the text)
        field["close"] = closer or end_marker
    return field


_NO_CALL_MARKER = (
    "tool_calls: the template writes a call with no marker before it, so a generated text "
    "cannot tell a call from the content"
)
