"""Tool descriptions from Python functions, in the JSON-schema shape chat templates expect.

`get_json_schema` follows the rules of `transformers.utils.get_json_schema` (transformers
5.x) so that a function passed as a tool renders to the same text here as there: the description is
the docstring up to `Args:`/`Returns:`/`Raises:`; each argument needs a type hint and a
Google-style description; a trailing `(choices: [...])` becomes an `enum`; a `Returns:`
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

import enum
import inspect
import json
import re
import sys
import types
from collections.abc import Callable
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

__all__ = [
    "DocstringParsingException",
    "ToolSchemaError",
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


class ToolSchemaError(Exception):
    """A Python function given as a tool cannot be described as a JSON schema.

    The base of `TypeHintParsingException` and `DocstringParsingException`, so that a caller
    catches both at once.  It derives from `Exception` alone, as transformers' two classes do:
    code written for transformers that catches `ValueError` or `TypeError` around a render
    must not start catching these.

    >>> def undocumented(x: int): ...
    >>> try:
    ...     get_json_schema(undocumented)
    ... except ToolSchemaError as error:
    ...     print(type(error).__name__, error)
    DocstringParsingException Cannot generate JSON schema for undocumented because it has no docstring!
    """


class TypeHintParsingException(ToolSchemaError):
    """A parameter's type hint has no JSON-schema equivalent (or is missing)."""


class DocstringParsingException(ToolSchemaError):
    """The docstring lacks a description for the function or one of its arguments."""


_BARE_TYPES: dict[Any, dict[str, Any]] = {
    int: {"type": "integer"},
    float: {"type": "number"},
    str: {"type": "string"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    list: {"type": "array"},
    tuple: {"type": "array"},
    dict: {"type": "object"},
    Any: {},
}
_JSON_SCALAR_NAMES = {int: "integer", float: "number", str: "string", bool: "boolean", type(None): "null"}


def _enum_schema(values: list[Any]) -> dict[str, Any]:
    # One JSON type per kind of value, in the order the kinds first appear.
    kinds = list(dict.fromkeys(_JSON_SCALAR_NAMES[type(value)] for value in values))
    return {"type": kinds[0] if len(kinds) == 1 else kinds, "enum": values}


def _schema_for_bare(hint: Any) -> dict[str, Any]:
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        # The model has to generate a member's value, so the values are the schema's enum.
        values = [member.value for member in hint]
        if not values:
            raise TypeHintParsingException(
                f"The Enum {hint.__name__} has no members, so no value could ever match it."
            )
        if any(type(value) not in _JSON_SCALAR_NAMES for value in values):
            raise TypeHintParsingException(
                f"The Enum {hint.__name__} has member values that cannot be written as JSON "
                f"scalars.\nValues: {values}\nEnum member values must be int, float, str, bool or "
                "None to be converted to a JSON schema."
            )
        return _enum_schema(values)
    try:
        known = _BARE_TYPES.get(hint)
    except TypeError:  # an unhashable hint object
        known = None
    if known is not None:
        return dict(known)
    # Images and audio tensors, known only when the user's code already imported their libraries.
    pil_image = getattr(sys.modules.get("PIL.Image"), "Image", None)
    if pil_image is not None and hint is pil_image:
        return {"type": "image"}
    torch_tensor = getattr(sys.modules.get("torch"), "Tensor", None)
    if torch_tensor is not None and hint is torch_tensor:
        return {"type": "audio"}
    # What JSON a custom class expects cannot be known: refuse rather than guess.
    raise TypeHintParsingException(
        f"Couldn't convert the type hint {hint!r} to a JSON schema, likely because it is a custom "
        "class or object. Supported type hints are basic types like int, float, str and bool, Enum "
        "classes, typing.Literal, and list, tuple, dict and Union types containing those. If you "
        "need a more complex schema than that, you can write the JSON schema for your tool by hand "
        "and pass that instead of the function."
    )


def _schema_for_hint(hint: Any) -> dict[str, Any]:
    origin = get_origin(hint)
    args = get_args(hint)

    if origin is None:
        return _schema_for_bare(hint)

    if origin is Union or origin is types.UnionType:
        members = [_schema_for_hint(arg) for arg in args if arg is not type(None)]
        if len(members) == 1:
            schema = members[0]
        elif all(m.keys() == {"type"} and isinstance(m["type"], str) for m in members):
            # Members with more than a type (items, enum, ...) go through anyOf so nothing is lost;
            # different hints can name one JSON type (list | tuple): it is listed once.
            names = sorted({member["type"] for member in members})
            schema = {"type": names[0] if len(names) == 1 else names}
        else:
            schema = {"anyOf": members}
        if type(None) in args:
            schema["nullable"] = True
        return schema

    if origin is Literal and args:
        if any(type(value) not in _JSON_SCALAR_NAMES for value in args):
            raise TypeHintParsingException(
                "Only the valid python literals can be listed in typing.Literal."
            )
        return _enum_schema(list(args))

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
    properties: dict[str, Any] = {}
    for param_name, hint in hints.items():
        if param_name == receiver:
            continue
        if param_name == "return":
            # The model never generates the return value: a return hint without a schema is left
            # out rather than refusing the tool.
            try:
                properties[param_name] = _schema_for_hint(hint)
            except TypeHintParsingException:
                pass
        else:
            properties[param_name] = _schema_for_hint(hint)
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
    """The `{"type": "function", "function": {...}}` description of `func`.

    Raises `DocstringParsingException` or `TypeHintParsingException` with the same
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
