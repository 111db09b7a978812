"""The way back, checked by going there and back: for an assistant message, the corpus template
renders a conversation ending with it; the text the model would have written (what follows the
generation prompt, through the end-of-turn marker) is parsed with the response template inferred
from the chat template; the message must come back, modulo what the template itself normalises
(whitespace around a field it strips).

``python -m conformance.response_roundtrip`` prints the table of conformance/FINDINGS.md: per
corpus template, what the inferred parser reads and whether the round trip holds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .corpus import _meta, template_names, template_source

USER = {"role": "user", "content": "What is the weather like?"}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": "A tool.",
            "parameters": {
                "type": "object",
                "properties": {
                    key: {"type": kind, "description": f"The {key}."} for key, kind in properties
                },
            },
        },
    }
    for name, properties in (
        ("get_weather", (("city", "string"), ("days", "integer"))),
        ("get_time", (("zone", "string"), ("exact", "boolean"))),
        ("search_web", (("query", "string"),)),
    )
]
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")


def chat_template(name: str) -> Any:
    from minijinja_py import ChatTemplate

    meta = _meta().get(name, {})
    tokens = {key: meta[key] for key in ("bos_token", "eos_token") if meta.get(key)}
    tokens.update(meta.get("extra") or {})
    return ChatTemplate.from_string(template_source(name), tokens)


def renderer(chat: Any) -> Callable[..., str]:
    def render(messages: list[dict[str, Any]], prompt: bool, tools: Any) -> str:
        return chat.render(messages, tools=tools, add_generation_prompt=prompt)

    return render


def _with_string_arguments(message: dict[str, Any]) -> dict[str, Any]:
    calls = [
        {**call, "function": {**call["function"], "arguments": json.dumps(call["function"]["arguments"])}}
        for call in message.get("tool_calls", [])
    ]
    return {**message, "tool_calls": calls}


FOLLOW_UP = {"role": "user", "content": "And tomorrow?"}


def generated(
    render: Callable[..., str],
    message: dict[str, Any],
    ends: list[str],
    anchor: str,
    follow: bool = False,
) -> tuple[str, str]:
    """(prefix, response): the prompt before the assistant's turn, and what the model writes,
    through its end-of-turn marker (what follows it is not generated).  Where the turn does
    not follow the generation prompt as written, the prompt is the text through the turn's
    header (`anchor`).  With `follow`, the turn is rendered with a user's turn after it (a
    template that drops a conversation's last assistant message writes it then)."""
    after = [FOLLOW_UP] if follow else []
    tools = TOOLS if message.get("tool_calls") else None
    try:
        render([USER], False, tools)
    except Exception:  # (a template that renders only when tools are offered)
        tools = TOOLS
    try:
        full = render([USER, message, *after], False, tools)
    except Exception:  # (a template that takes a call's arguments only as a JSON string)
        full = render([USER, _with_string_arguments(message), *after], False, tools)
    if follow:
        full = full[: full.index(FOLLOW_UP["content"])]
    prompt = render([USER], True, tools)
    if full.startswith(prompt):
        prefix, response = prompt, full[len(prompt) :]
    else:
        anchor = anchor or USER["content"]  # (no header: the reply follows the user's text)
        at = full.find(anchor, full.find(USER["content"])) + len(anchor)
        prefix, response = full[:at], full[at:]
    from minijinja_py.chat.responses.inferred import through_turn_end

    # (through the end marker after the message's last text: what the template writes after
    # the turn is not generated)
    return prefix, through_turn_end(response, ends, _texts_of(message))


def _texts_of(message: dict[str, Any]) -> list[str]:
    texts = [value for key, value in message.items() if key != "role" and isinstance(value, str) and value]
    for call in message.get("tool_calls", ()):
        texts.append(call["function"]["name"])
        arguments = call["function"]["arguments"]
        values = arguments.values() if isinstance(arguments, dict) else [arguments]
        texts += [json.dumps(value)[1:-1] for value in values if isinstance(value, str)]
    return texts or [""]


def generation_prompt(name: str) -> str:
    """The prompt for a reply to the user's question (with tools where the template needs
    them)."""
    render = renderer(chat_template(name))
    try:
        return render([USER], True, None)
    except Exception:  # (a template that renders only when tools are offered)
        return render([USER], True, TOOLS)


def renders_calls(name: str) -> bool:
    """Whether the template writes an assistant message's tool call (its name, after the
    user's question)."""
    render = renderer(chat_template(name))
    message = probe_messages()[2]
    for written in (message, _with_string_arguments(message)):
        try:
            text = render([USER, written], False, TOOLS)
        except Exception:  # (a template that refuses the call, or takes it only as a string)
            continue
        return "get_weather" in text.split(USER["content"], 1)[-1]
    return False


def normalised(message: dict[str, Any]) -> dict[str, Any]:
    """The message as a round trip can give it back: empty fields dropped, text stripped,
    a call as its name and arguments."""
    out: dict[str, Any] = {}
    for key, value in message.items():
        if value in ("", None, []):
            continue
        if key == "tool_calls":
            value = [
                {
                    "name": call["function"]["name"],
                    "arguments": _stripped(call["function"]["arguments"]),
                }
                for call in value
            ]
        elif isinstance(value, str):
            value = value.strip()
        out[key] = value
    return out


def round_trip(
    name: str, messages: list[dict[str, Any]], parse: Callable[..., dict[str, Any]]
) -> tuple[dict[str, Any], list[str], list[str]]:
    """(the inferred template, what it says is lost, the messages that did not come back)."""
    from minijinja_py.chat.responses.inferred import infer_response_template, turn_ends

    render = renderer(chat_template(name))
    inferred = infer_response_template(render)
    fields = inferred.template["fields"]
    ends = turn_ends(inferred.template)
    failed = []
    for message in messages:
        if any(key in message for key in REASONING_FIELDS) and not any(
            key in fields for key in REASONING_FIELDS
        ):
            continue
        if message.get("tool_calls") and "tool_calls" not in fields:
            continue
        # (reasoning under the name the template reads)
        own = next((key for key in REASONING_FIELDS if key in fields), None)
        given = next((key for key in REASONING_FIELDS if key in message), None)
        if own is not None and given is not None and own != given:
            message = {**message, own: message[given]}
            del message[given]
        # (a template that writes one call per message refuses or drops a second: what it
        # wrote is what comes back)
        single = any(line.startswith("tool_calls: the template writes one call") for line in inferred.lost)
        try:
            prefix, response = generated(
                render, message, ends, inferred.turn_header, inferred.needs_follow_up
            )
        except Exception as error:  # (a message the template itself refuses: nothing to parse)
            if single and len(message.get("tool_calls", ())) > 1:
                continue
            failed.append(f"the template refuses the message: {getattr(error, 'message', error)}")
            continue
        if single and len(message.get("tool_calls", ())) > 1:
            message = {**message, "tool_calls": message["tool_calls"][:1]}
        try:
            got = parse(response, inferred.template, prefix=prefix, tools=TOOLS)
        except Exception as error:  # (the finding: what the parser said)
            failed.append(f"{type(error).__name__}: {str(error)[:80]}")
            continue
        want = {key: value for key, value in normalised(message).items() if key != "role"}
        for key in REASONING_FIELDS:  # (reasoning a template drops from past turns: not written)
            if key in want and want[key] not in response:
                del want[key]
        back = {key: value for key, value in normalised(got).items() if key != "role"}
        for key in REASONING_FIELDS:  # (the template's own name for reasoning comes back)
            if key in want and key not in back:
                other = next((k for k in REASONING_FIELDS if k in back), None)
                if other is not None:
                    back[key] = back.pop(other)
        if back != want:
            failed.append(f"{want} came back as {back}")
    return inferred.template, inferred.lost, failed


def _stripped(arguments: Any) -> Any:
    # (an argument's text around whitespace, which templates that write arguments in tags trim)
    if isinstance(arguments, dict):
        return {
            key: value.strip() if isinstance(value, str) else value
            for key, value in arguments.items()
        }
    return arguments


def probe_messages() -> list[dict[str, Any]]:
    """The messages of the table: content; content and reasoning; one call; two calls."""
    call = {"id": "call0abcd", "type": "function"}
    return [
        {"role": "assistant", "content": "It is sunny in Paris."},
        {"role": "assistant", "content": "It is sunny.", "reasoning_content": "Look it up."},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {**call, "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}}
            ],
        },
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {**call, "function": {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}},
                {**call, "function": {"name": "get_time", "arguments": {"zone": "CET", "exact": True}}},
            ],
        },
    ]


def main() -> None:
    from minijinja_py.chat.responses import parse_response

    print("| template | reads | round trip | lost |")
    print("|---|---|---|---|")
    for name in template_names():
        try:
            template, lost, failed = round_trip(name, probe_messages(), parse_response)
        except ValueError as error:
            print(f"| {name} | - | no | {error} |")
            continue
        reads = ", ".join(field for field in template["fields"])
        verdict = "yes" if not failed else f"no: {failed[0][:120]}"
        print(f"| {name} | {reads} | {verdict} | {'; '.join(lost)} |")


if __name__ == "__main__":
    main()
