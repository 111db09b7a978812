"""Tool-call arguments cast by the called tool's JSON schema: `"7"` becomes `7` for an
`integer` parameter and stays `"7"` for a `string` one (transformers 5.23's `tools=` of
parse_response). Only strings are cast, and a string that fits none of the declared types is
kept as it was.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from inspect import isfunction, ismethod
from typing import Any

from ..schema import get_json_schema
from .content import loads

__all__ = ["cast_tool_calls", "schema_types", "tool_parameters"]


def schema_types(schema: Any) -> tuple[str, ...]:
    """The JSON types a parameter's schema allows, in the order it names them (`type`, a list
    of types, `anyOf`/`oneOf` branches, and `nullable` as `get_json_schema` writes Optionals)."""
    if not isinstance(schema, dict):
        return ()
    declared = schema.get("type")
    types: list[str] = []
    if isinstance(declared, str):
        types.append(declared)
    elif isinstance(declared, list):
        types.extend(item for item in declared if isinstance(item, str))
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        if isinstance(branches, list):
            for branch in branches:
                types.extend(schema_types(branch))
    if schema.get("nullable") and "null" not in types:
        types.append("null")
    return tuple(types)


def _cast_one(raw: str, kind: str) -> tuple[bool, Any]:
    if kind == "integer":
        try:
            return True, int(raw)
        except ValueError:
            number = float(raw)  # a whole number written as a float ("3.0") is an integer
            return (True, int(number)) if number.is_integer() else (False, None)
    if kind == "number":
        number = float(raw)
        if math.isnan(number) or math.isinf(number):
            return False, None  # not JSON numbers
        return True, int(number) if number.is_integer() and "." not in raw else number
    if kind == "boolean":
        word = raw.strip().lower()
        return (
            (True, word in ("true", "1")) if word in ("true", "1", "false", "0") else (False, None)
        )
    if kind == "null":
        return (True, None) if raw.strip() in ("null", "None") else (False, None)
    if kind in ("object", "array"):
        decoded = loads(raw)
        return isinstance(decoded, dict if kind == "object" else list), decoded
    return False, None


def cast(raw: str, types: Sequence[str]) -> Any:
    """`raw` as the first of `types` it can be read as; else `raw` itself."""
    for kind in types:
        try:
            done, value = _cast_one(raw, kind)
        except (ValueError, OverflowError):
            continue
        if done:
            return value
    return raw


def tool_parameters(tools: Sequence[Any] | None) -> dict[str, dict[str, Any]]:
    """Tool name -> its parameters' `properties`, from tools as apply_chat_template takes them
    (JSON-schema dicts, with or without the `{"type": "function", "function": ...}` wrapper,
    or Python functions)."""
    found: dict[str, dict[str, Any]] = {}
    for tool in tools or []:
        if isfunction(tool) or ismethod(tool):
            tool = get_json_schema(tool)
        function = tool.get("function", tool) if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            parameters = function.get("parameters")
            properties = parameters.get("properties") if isinstance(parameters, dict) else None
            found[function["name"]] = properties if isinstance(properties, dict) else {}
    return found


def cast_tool_calls(value: Any, parameters: dict[str, dict[str, Any]]) -> Any:
    """`value` (a tool call, or a list of them) with its string arguments cast in place."""
    if isinstance(value, list):
        return [cast_tool_calls(item, parameters) for item in value]
    function = value.get("function") if isinstance(value, dict) else None
    if not isinstance(function, dict):
        return value
    name, arguments = function.get("name"), function.get("arguments")
    if not isinstance(name, str) or not isinstance(arguments, dict):
        return value
    properties = parameters.get(name)
    if not properties:
        return value
    for key, argument in arguments.items():
        types = schema_types(properties.get(key)) if key in properties else ()
        if not types:
            continue
        if isinstance(argument, str):
            arguments[key] = cast(argument, types)
        elif isinstance(argument, list) and "array" not in types:
            # repeated tags gathered by xml-inline's merge_duplicates: cast one by one
            arguments[key] = [
                cast(item, types) if isinstance(item, str) else item for item in argument
            ]
    return value
