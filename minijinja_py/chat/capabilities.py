"""What a chat template does with each kind of input, found by analysis and probe renders."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from .inputs import REASONING_FIELDS, normalise_conversations
from .loading import SPECIAL_TOKEN_NAMES

__all__ = ["ChatCapabilities", "probe_capabilities"]


@dataclasses.dataclass(frozen=True)
class ChatCapabilities:
    """What a chat template does with each kind of input, found by analysis and probe renders."""

    supports_system_role: bool = False
    supports_tools: bool = False
    supports_tool_calls: bool = False
    supports_string_arguments: bool = False
    supports_object_arguments: bool = False
    requires_object_arguments: bool = False
    supports_parallel_tool_calls: bool = False
    supports_tool_responses: bool = False
    supports_tool_call_id: bool = False
    supports_thinking: bool = False
    reasoning_field: str | None = None
    supports_enable_thinking: bool = False
    supports_documents: bool = False
    supports_typed_content: bool = False
    requires_typed_content: bool = False
    requires_non_null_content: bool = False
    supports_generation_spans: bool = False
    #: Whether appending a message keeps the text of the earlier ones (False when some probe
    #: conversation's rendering of its first k messages is not a prefix of its first k + 1).
    preserves_prefix: bool = True
    #: Where it is not: how many messages the earlier rendering held when appending one changed it.
    prefix_changed_at: int | None = None
    #: False when every basic probe raised: the template renders nothing (see render_error)
    renders: bool = True
    render_error: str | None = None
    variables: frozenset[str] = frozenset()

    def as_dict(self) -> dict[str, Any]:
        """The flags as a plain dict (`variables` as a sorted list)."""
        out = dataclasses.asdict(self)
        out["variables"] = sorted(self.variables)
        return out


_USER_NEEDLE = "<User Needle>"
_SYSTEM_NEEDLE = "<System Needle>"
_ARGS_NEEDLE = {"argument_needle": "print('Hello, World!')"}
_PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "some_tool",
        "description": "Some tool.",
        "parameters": {
            "type": "object",
            "properties": {"arg": {"type": "string", "description": "Some argument."}},
            "required": ["arg"],
        },
    },
}


def _tool_call(name: str, arguments: Any, call_id: str = "call_1___") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"arguments": arguments, "name": name}}


def _shows_arguments(text: str) -> bool:
    return '"argument_needle":' in text or "'argument_needle':" in text


def probe_capabilities(compiled: Any, special_tokens: Mapping[str, Any]) -> ChatCapabilities:
    """Which inputs the chosen template renders, found by analysis and probe renders.

    Modelled on llama.cpp's template capability detection: each probe renders a tiny
    conversation holding a needle string and looks for the needle in the output (a probe that
    fails to render counts as "not supported").
    """
    variables = frozenset(compiled.undeclared_variables())
    tokens = dict(special_tokens)
    for name in SPECIAL_TOKEN_NAMES:  # a bare template file: stand-ins for the tokens it reads
        if name in variables and name not in tokens:
            tokens[name] = f"<{name}>"
    errors: list[str] = []

    def probe(messages: list[Any], **extra: Any) -> str:
        context = {**tokens, "tools": None, "documents": None}
        context["add_generation_prompt"] = False
        context.update(extra)
        # None-valued keys dropped as render() drops them; reasoning left under the probed name,
        # so that reasoning_field names the field the template itself reads.
        context["messages"] = normalise_conversations(messages, offer_reasoning=False)[0][0]
        try:
            return str(compiled.render(context))
        except Exception as error:
            errors.append(str(getattr(error, "message", error)))
            return ""

    user_str = {"role": "user", "content": _USER_NEEDLE}
    user_typed = {"role": "user", "content": [{"type": "text", "text": _USER_NEEDLE}]}
    shows_str = _USER_NEEDLE in probe([user_str])
    typed_out = probe([user_typed])
    # Printing the list itself shows the needle inside the parts' repr: that is not reading them.
    shows_typed = _USER_NEEDLE in typed_out and not any(
        mark in typed_out for mark in ("'type': 'text'", '"type": "text"', "'text': '")
    )
    basic_failures = len(errors)
    requires_typed = not shows_str and shows_typed
    user = user_typed if requires_typed else user_str

    def text(value: str) -> Any:
        return [{"type": "text", "text": value}] if requires_typed else value

    system = {"role": "system", "content": text(_SYSTEM_NEEDLE)}
    supports_system = _SYSTEM_NEEDLE in probe([system, user])
    tools_out = probe([user], tools=[_PROBE_TOOL])
    supports_tools = "some_tool" in tools_out
    renders = basic_failures < 2 or bool(tools_out)
    render_error = None if renders else errors[0]

    def calls_message(calls: list[Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": None, "tool_calls": calls}

    def render_calls(calls: list[Any], *rest: Any) -> str:
        out = probe([user, calls_message(calls), *rest])
        if not out:  # some templates need a string content next to tool calls
            message = {**calls_message(calls), "content": ""}
            out = probe([user, message, *rest])
        return out

    args_json = json.dumps(_ARGS_NEEDLE)
    string_args = _shows_arguments(render_calls([_tool_call("ipython", args_json)]))
    # An object may also be spread into the text (``<parameter=argument_needle>``).
    object_args = "argument_needle" in render_calls([_tool_call("ipython", _ARGS_NEEDLE)])
    supports_calls = string_args or object_args
    out_empty = probe([user, {"role": "assistant", "content": ""}])
    out_null = probe([user, {"role": "assistant", "content": None}])
    parallel = responses = call_id = False
    if supports_calls:
        args = _ARGS_NEEDLE if (object_args and not string_args) else args_json
        first, second = _tool_call("test_tool1", args), _tool_call("test_tool2", args)
        out = render_calls([first, second])
        parallel = "test_tool1" in out and "test_tool2" in out
        response = {
            "role": "tool",
            "name": "test_tool1",
            "content": "Some response!",
            "tool_call_id": "call_911_",
        }
        out = render_calls([first], response)
        responses = "Some response!" in out
        call_id = "call_911_" in out

    reasoning_field = None
    for field in REASONING_FIELDS:
        thought = {"role": "assistant", "content": text("Answer."), field: "<Thought Needle>"}
        if "<Thought Needle>" in probe([user, thought]) or "<Thought Needle>" in probe(
            [user, thought, {"role": "user", "content": text("Next.")}]
        ):
            reasoning_field = field
            break
    enable_thinking = False
    if "enable_thinking" in variables:
        on = probe([user], add_generation_prompt=True, enable_thinking=True)
        off = probe([user], add_generation_prompt=True, enable_thinking=False)
        enable_thinking = on != off
    spans: list[Any] = []
    try:
        context = {**tokens, "tools": None, "documents": None}
        context.update(
            add_generation_prompt=False,
            messages=[user, {"role": "assistant", "content": text("Answer.")}],
        )
        spans = compiled.render_with_spans(context)[1]
    except Exception:
        pass
    documents = [{"title": "Doc", "text": "<Document Needle>"}]
    supports_documents = "<Document Needle>" in probe([user], documents=documents)
    changed_at = _prefix_change(probe, user, text, reasoning_field, supports_system)

    return ChatCapabilities(
        supports_system_role=supports_system,
        supports_tools=supports_tools,
        supports_tool_calls=supports_calls,
        supports_string_arguments=string_args,
        supports_object_arguments=object_args,
        requires_object_arguments=object_args and not string_args,
        supports_parallel_tool_calls=parallel,
        supports_tool_responses=responses,
        supports_tool_call_id=call_id,
        supports_thinking=reasoning_field is not None,
        reasoning_field=reasoning_field,
        supports_enable_thinking=enable_thinking,
        supports_documents=supports_documents,
        supports_typed_content=shows_typed,
        requires_typed_content=requires_typed,
        requires_non_null_content=_USER_NEEDLE in out_empty and _USER_NEEDLE not in out_null,
        supports_generation_spans=bool(spans),
        preserves_prefix=changed_at is None,
        prefix_changed_at=changed_at,
        renders=renders,
        render_error=render_error,
        variables=variables,
    )


def _prefix_change(
    probe: Any, user: dict[str, Any], text: Any, reasoning_field: str | None, system: bool
) -> int | None:
    """The first k at which the rendering of a probe conversation's first k messages is not a
    prefix of its first k + 1 (an RL loop extending a conversation turn by turn needs none)."""
    reply: dict[str, Any] = {"role": "assistant", "content": text("First answer.")}
    if reasoning_field is not None:
        reply[reasoning_field] = "First thought."
    turns = [user, reply, {"role": "user", "content": text("Next.")}]
    turns.append({"role": "assistant", "content": text("Second answer.")})
    if system:
        turns.insert(0, {"role": "system", "content": text("Be brief.")})
    previous = None
    for count in range(1, len(turns) + 1):
        current = probe(turns[:count])
        if previous and current and not current.startswith(previous):
            return count - 1
        previous = current
    return None
