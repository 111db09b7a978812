"""Tool descriptions from Python functions, in the JSON-schema shape chat templates expect.

:func:`get_json_schema` follows the rules of ``transformers.utils.get_json_schema`` (transformers
5.x) so that a function passed as a tool renders to the same text here as there: the description is
the docstring up to ``Args:``/``Returns:``/``Raises:``; each argument needs a type hint and a
Google-style description; a trailing ``(choices: [...])`` becomes an ``enum``; a ``Returns:``
block describes the annotated return type.

>>> def multiply(x: float, y: float):
...     '''Multiply two numbers.
...
...     Args:
...         x: The first number
...         y: The second number
...     '''
>>> get_json_schema(multiply)["function"]["parameters"]["required"]
['x', 'y']
"""

from __future__ import annotations

import inspect
import json
import re
import sys
import types
from collections.abc import Callable
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

__all__ = [
    "DocstringParsingException",
    "TypeHintParsingException",
    "get_json_schema",
    "parse_google_format_docstring",
    "tool_to_schema",
]

# Everything before the first section header (or the end) is the description.
_DESCRIPTION = re.compile(r"^(.*?)[\n\s]*(Args:|Returns:|Raises:|\Z)", re.DOTALL)
# The body of the ``Args:`` section.
_ARGS = re.compile(r"\n\s*Args:\n\s*(.*?)[\n\s]*(Returns:|Raises:|\Z)", re.DOTALL)
# One ``name: description`` entry; the description runs until the next ``name:`` line.
_ARG_ENTRY = re.compile(r"(?:^|\n)\s*(\w+):\s*(.*?)\s*(?=\n\s*\w+:|\Z)", re.DOTALL)
# The body of the ``Returns:`` section.
_RETURNS = re.compile(r"\n\s*Returns:\n\s*(.*?)[\n\s]*(Raises:|\Z)", re.DOTALL)
_CHOICES = re.compile(r"\(choices:\s*(.*?)\)\s*$", re.IGNORECASE)

_LITERAL_TYPES = (int, float, str, bool, type(None))


class TypeHintParsingException(Exception):
    """A parameter's type hint has no JSON-schema equivalent (or is missing)."""


class DocstringParsingException(Exception):
    """The docstring lacks a description for the function or one of its arguments."""


def _schema_for_class(hint: Any) -> dict[str, Any]:
    simple = {int: "integer", float: "number", str: "string", bool: "boolean"}
    try:
        if hint in simple:
            return {"type": simple[hint]}
        if hint is type(None):
            return {"type": "null"}
        if hint is Any:
            return {}
    except TypeError:  # unhashable hint objects
        return {"type": "object"}
    # Images and audio tensors, known only when the user's code already imported their libraries.
    pil_image = getattr(sys.modules.get("PIL.Image"), "Image", None)
    if pil_image is not None and hint is pil_image:
        return {"type": "image"}
    torch_tensor = getattr(sys.modules.get("torch"), "Tensor", None)
    if torch_tensor is not None and hint is torch_tensor:
        return {"type": "audio"}
    return {"type": "object"}


def _schema_for_hint(hint: Any) -> dict[str, Any]:
    origin = get_origin(hint)
    args = get_args(hint)

    if origin is None:
        return _schema_for_class(hint)

    if origin is Union or origin is types.UnionType:
        members = [_schema_for_hint(arg) for arg in args if arg is not type(None)]
        if len(members) == 1:
            schema = members[0]
        elif all("type" in member and isinstance(member["type"], str) for member in members):
            schema = {"type": sorted(member["type"] for member in members)}
        else:
            schema = {"anyOf": members}
        if type(None) in args:
            schema["nullable"] = True
        return schema

    if origin is Literal and args:
        kinds: list[str] = []
        for value in args:
            if type(value) not in _LITERAL_TYPES:
                raise TypeHintParsingException(
                    "Only the valid python literals can be listed in typing.Literal."
                )
            kind = _schema_for_class(type(value)).get("type")
            if kind is not None and kind not in kinds:
                kinds.append(kind)
        return {"type": kinds.pop() if len(kinds) == 1 else list(kinds), "enum": list(args)}

    if origin is list:
        if not args:
            return {"type": "array"}
        return {"type": "array", "items": _schema_for_hint(args[0])}

    if origin is tuple:
        if not args:
            return {"type": "array"}
        if len(args) == 1:
            shown = str(hint).replace("typing.", "")
            raise TypeHintParsingException(
                f"The type hint {shown} is a Tuple with a single element, which we do not "
                "automatically convert to JSON schema as it is rarely necessary. If this input can "
                "contain more than one element, we recommend using a list[] type instead, or if it "
                "really is a single element, remove the tuple[] wrapper and just pass the element "
                "directly."
            )
        if ... in args:
            raise TypeHintParsingException(
                "Conversion of '...' is not supported in Tuple type hints. Use list[] types for "
                "variable-length inputs instead."
            )
        return {"type": "array", "prefixItems": [_schema_for_hint(arg) for arg in args]}

    if origin is dict:
        schema = {"type": "object"}
        if len(args) == 2:
            schema["additionalProperties"] = _schema_for_hint(args[1])
        return schema

    raise TypeHintParsingException(
        "Couldn't parse this type hint, likely due to a custom class or object: ", hint
    )


def _parameters_schema(func: Callable[..., Any]) -> dict[str, Any]:
    hints = get_type_hints(func)
    signature = inspect.signature(func)
    name = getattr(func, "__name__", "operation")
    params = signature.parameters
    first = next(iter(params), None)
    # A leading un-annotated ``self``/``cls`` is the receiver of an unbound method: not a tool input.
    receiver = (
        first
        if first in {"self", "cls"} and params[first].annotation is inspect.Parameter.empty
        else None
    )
    required = []
    for param_name, param in params.items():
        if param_name == receiver:
            continue
        if param.annotation is inspect.Parameter.empty:
            raise TypeHintParsingException(
                f"Argument {param.name} is missing a type hint in function {name}"
            )
        if param.default is inspect.Parameter.empty:
            required.append(param_name)
    properties = {
        param_name: _schema_for_hint(hint)
        for param_name, hint in hints.items()
        if param_name != receiver
    }
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def parse_google_format_docstring(docstring: str) -> tuple[str | None, dict[str, str], str | None]:
    """Split a Google-style docstring into (description, {argument: description}, returns)."""
    description = _DESCRIPTION.search(docstring)
    args_block = _ARGS.search(docstring)
    returns = _RETURNS.search(docstring)
    arguments: dict[str, str] = {}
    if args_block is not None:
        lines = [line for line in args_block.group(1).strip().split("\n") if line.strip()]
        for arg_name, text in _ARG_ENTRY.findall("\n".join(lines)):
            arguments[arg_name] = re.sub(r"\s*\n+\s*", " ", text.strip())
    return (
        description.group(1).strip() if description else None,
        arguments,
        returns.group(1).strip() if returns else None,
    )


def get_json_schema(func: Callable[..., Any]) -> dict[str, Any]:
    """The ``{"type": "function", "function": {...}}`` description of ``func``.

    Raises :class:`DocstringParsingException` or :class:`TypeHintParsingException` with the same
    messages as transformers when the docstring or the type hints do not describe every argument.
    """
    doc = inspect.getdoc(func)
    name = getattr(func, "__name__", "operation")
    if not doc:
        raise DocstringParsingException(
            f"Cannot generate JSON schema for {name} because it has no docstring!"
        )
    description, arg_docs, returns_doc = parse_google_format_docstring(doc.strip())
    parameters = _parameters_schema(func)
    returns = parameters["properties"].pop("return", None)
    if returns is not None and returns_doc is not None:
        returns["description"] = returns_doc
    for arg_name, schema in parameters["properties"].items():
        if arg_name not in arg_docs:
            raise DocstringParsingException(
                f"Cannot generate JSON schema for {name} because the docstring has no description "
                f"for the argument '{arg_name}'"
            )
        text = arg_docs[arg_name]
        choices = _CHOICES.search(text)
        if choices:
            schema["enum"] = [
                c.strip() if isinstance(c, str) else c for c in json.loads(choices.group(1))
            ]
            text = text[: choices.start()].strip()
        schema["description"] = text
    function: dict[str, Any] = {"name": name, "description": description, "parameters": parameters}
    if returns is not None:
        function["return"] = returns
    return {"type": "function", "function": function}


def tool_to_schema(tool: Any) -> dict[str, Any]:
    """A tool as chat templates see it: JSON schemas pass through, functions are described."""
    if isinstance(tool, dict):
        return tool
    if inspect.isfunction(tool) or inspect.ismethod(tool):
        return get_json_schema(tool)
    raise ValueError(
        "Tools should either be a JSON schema, or a callable function with type hints and a "
        "docstring suitable for auto-conversion to a schema."
    )
