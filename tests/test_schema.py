"""Tool schemas from Python functions, matching transformers' get_json_schema (5.x)."""

from __future__ import annotations

import enum
from typing import Any, Literal, Optional, Union, get_type_hints

import pytest

from minijinja_py.chat.schema import (
    DocstringParsingException,
    ToolSchemaError,
    TypeHintParsingException,
    get_json_schema,
    parse_google_format_docstring,
    tool_to_schema,
)


def test_documented_example():
    # The example of transformers' get_json_schema docstring.
    def multiply(x: float, y: float):
        """
        A function that multiplies two numbers

        Args:
            x: The first number to multiply
            y: The second number to multiply
        """
        return x * y

    assert get_json_schema(multiply) == {
        "type": "function",
        "function": {
            "name": "multiply",
            "description": "A function that multiplies two numbers",
            "parameters": {
                "type": "object",
                "properties": {
                    "x": {"type": "number", "description": "The first number to multiply"},
                    "y": {"type": "number", "description": "The second number to multiply"},
                },
                "required": ["x", "y"],
            },
        },
    }


def test_choices_become_enum():
    def drink_beverage(beverage: str):
        """
        A function that drinks a beverage

        Args:
            beverage: The beverage to drink (choices: ["tea", "coffee"])
        """

    assert get_json_schema(drink_beverage)["function"]["parameters"] == {
        "type": "object",
        "properties": {
            "beverage": {
                "type": "string",
                "enum": ["tea", "coffee"],
                "description": "The beverage to drink",
            }
        },
        "required": ["beverage"],
    }


def _any_defaulting_to_none(a: Any = None) -> None:
    pass


# Python 3.10's get_type_hints reads `a: Any = None` as Optional[Any] (as transformers sees it
# there too); 3.11 and later leave the hint as written.
NONE_DEFAULT_OF_ANY = (
    {"nullable": True} if get_type_hints(_any_defaulting_to_none)["a"] != Any else {}
)


def test_types_optional_defaults_and_returns():
    def search(
        query: str,
        limit: Optional[int] = 10,  # noqa: UP045 - typing.Optional on purpose
        mode: Literal["fast", "exact"] = "fast",
        tags: list[str] | None = None,
        weights: dict[str, float] | None = None,
        point: tuple[int, float] = (0, 0.0),
        either: Union[int, str] = 0,  # noqa: UP007 - typing.Union on purpose
        anything: Any = None,
        nested: list[dict[str, int | list[str]]] | None = None,
    ) -> list[str]:
        """Search the index.

        Matches are ranked.

        Args:
            query: What to look for,
                over several lines.
            limit: How many results
            mode: Search mode
            tags: Filter tags
            weights: Per-field weights
            point: A point
            either: Int or string
            anything: Whatever
            nested: Deep structure

        Returns:
            The matching document ids.
        """

    assert get_json_schema(search) == {
        "type": "function",
        "function": {
            "name": "search",
            "description": "Search the index.\n\nMatches are ranked.",
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "description": "What to look for, over several lines.",
                    },
                    "limit": {
                        "type": "integer",
                        "nullable": True,
                        "description": "How many results",
                    },
                    "mode": {
                        "type": "string",
                        "enum": ["fast", "exact"],
                        "description": "Search mode",
                    },
                    "tags": {
                        "type": "array",
                        "items": {"type": "string"},
                        "nullable": True,
                        "description": "Filter tags",
                    },
                    "weights": {
                        "type": "object",
                        "additionalProperties": {"type": "number"},
                        "nullable": True,
                        "description": "Per-field weights",
                    },
                    "point": {
                        "type": "array",
                        "prefixItems": [{"type": "integer"}, {"type": "number"}],
                        "description": "A point",
                    },
                    "either": {"type": ["integer", "string"], "description": "Int or string"},
                    "anything": {"description": "Whatever", **NONE_DEFAULT_OF_ANY},
                    "nested": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            # a member with items goes through anyOf, as in transformers 5.23
                            "additionalProperties": {
                                "anyOf": [
                                    {"type": "integer"},
                                    {"type": "array", "items": {"type": "string"}},
                                ]
                            },
                        },
                        "nullable": True,
                        "description": "Deep structure",
                    },
                },
                "required": ["query"],
            },
            "return": {
                "type": "array",
                "items": {"type": "string"},
                "description": "The matching document ids.",
            },
        },
    }


def test_union_of_untyped_schemas_is_any_of():
    def mix(x: Union[int, Literal["a", 1]]):  # noqa: UP007
        """Mix.

        Args:
            x: The x
        """

    assert get_json_schema(mix)["function"]["parameters"]["properties"]["x"] == {
        "anyOf": [{"type": "integer"}, {"type": ["string", "integer"], "enum": ["a", 1]}],
        "description": "The x",
    }


def test_mixed_literal_and_none_literal():
    def pick(level: Literal[1, "high", None]):
        """Pick.

        Args:
            level: The level
        """

    assert get_json_schema(pick)["function"]["parameters"]["properties"]["level"] == {
        "type": ["integer", "string", "null"],
        "enum": [1, "high", None],
        "description": "The level",
    }


class Point:
    pass


def test_custom_class_is_refused_and_method_receiver_skipped():
    class Tools:
        def move(self, to: Point, speed: float = 1.0) -> None:
            """Move somewhere.

            Args:
                to: Destination
                speed: How fast
            """

        def wait(self, seconds: float) -> Point:
            """Wait.

            Args:
                seconds: How long
            """

    with pytest.raises(TypeHintParsingException) as caught:
        get_json_schema(Tools.move)
    assert str(caught.value).startswith(
        "Couldn't convert the type hint <class 'test_schema.Point'> to a JSON schema, likely "
        "because it is a custom class or object. Supported type hints are basic types"
    )
    # A return hint without a schema is left out, not refused: the model never writes it.
    assert get_json_schema(Tools.wait)["function"] == {
        "name": "wait",
        "description": "Wait.",
        "parameters": {
            "type": "object",
            "properties": {"seconds": {"type": "number", "description": "How long"}},
            "required": ["seconds"],
        },
    }


class Colour(enum.Enum):
    RED = "red"
    ANY = None
    LEVEL = 3


class Empty(enum.Enum):
    pass


def test_enum_bare_containers_and_enum_errors():
    def paint(colour: Colour, layers: list, box: tuple, extra: dict) -> None:
        """Paint.

        Args:
            colour: The colour
            layers: Layers
            box: Box
            extra: Extra
        """

    assert get_json_schema(paint)["function"]["parameters"]["properties"] == {
        "colour": {"type": ["string", "null", "integer"], "enum": ["red", None, 3],
                   "description": "The colour"},
        "layers": {"type": "array", "description": "Layers"},
        "box": {"type": "array", "description": "Box"},
        "extra": {"type": "object", "description": "Extra"},
    }

    def empty(e: Empty) -> None:
        """Empty.

        Args:
            e: Nothing
        """

    with pytest.raises(TypeHintParsingException, match="^The Enum Empty has no members, so no"):
        get_json_schema(empty)



def test_missing_docstring():
    def nodoc(x: int):
        pass

    with pytest.raises(DocstringParsingException) as info:
        get_json_schema(nodoc)
    assert str(info.value) == "Cannot generate JSON schema for nodoc because it has no docstring!"


def test_missing_argument_description():
    def half(x: int, y: int):
        """Half documented.

        Args:
            x: The x
        """

    with pytest.raises(DocstringParsingException) as info:
        get_json_schema(half)
    assert str(info.value) == (
        "Cannot generate JSON schema for half because the docstring has no description for the "
        "argument 'y'"
    )


def test_missing_type_hint():
    def untyped(x):
        """Untyped.

        Args:
            x: The x
        """

    with pytest.raises(TypeHintParsingException) as info:
        get_json_schema(untyped)
    assert str(info.value) == "Argument x is missing a type hint in function untyped"


def test_single_element_tuple():
    def single(x: tuple[int]):
        """Single.

        Args:
            x: The x
        """

    with pytest.raises(TypeHintParsingException) as info:
        get_json_schema(single)
    assert str(info.value) == (
        "The type hint tuple[int] is a Tuple with a single element, which we do not automatically "
        "convert to JSON schema as it is rarely necessary. If this input can contain more than one "
        "element, we recommend using a list[] type instead, or if it really is a single element, "
        "remove the tuple[] wrapper and just pass the element directly."
    )


def test_ellipsis_tuple():
    def var(x: tuple[int, ...]):
        """Var.

        Args:
            x: The x
        """

    with pytest.raises(TypeHintParsingException) as info:
        get_json_schema(var)
    assert str(info.value) == (
        "Conversion of '...' is not supported in Tuple type hints. Use list[] types for "
        "variable-length inputs instead."
    )


def test_bad_literal():
    def lit(x: Literal[b"raw"]):
        """Lit.

        Args:
            x: The x
        """

    with pytest.raises(TypeHintParsingException) as info:
        get_json_schema(lit)
    assert str(info.value) == "Only the valid python literals can be listed in typing.Literal."


def test_parse_google_docstring():
    doc = "Summary line.\n\nArgs:\n    a: First\n\n    b: Second\n        continued\n\nReturns:\n    Stuff\n\nRaises:\n    ValueError: never"
    assert parse_google_format_docstring(doc) == (
        "Summary line.",
        {"a": "First", "b": "Second continued"},
        "Stuff",
    )


def test_tool_to_schema_rejects_other_objects():
    with pytest.raises(ValueError) as info:
        tool_to_schema("get_weather")
    assert str(info.value) == (
        "Tools should either be a JSON schema, or a callable function with type hints and a "
        "docstring suitable for auto-conversion to a schema."
    )
    schema = {"type": "function", "function": {"name": "f"}}
    assert tool_to_schema(schema) is schema


def test_both_tool_errors_are_caught_as_one_class_and_not_as_value_error():
    # Issue 44 item 5: a caller catches ToolSchemaError once; transformers' names and plain
    # Exception still catch them, and `except ValueError` around a render still does not.
    from minijinja_py import chat

    def nodoc(x: int):
        pass

    def untyped(x):
        """Untyped.

        Args:
            x: The x
        """

    caught = []
    for function in (nodoc, untyped):
        with pytest.raises(ToolSchemaError) as info:
            get_json_schema(function)
        caught.append((type(info.value).__name__, str(info.value)))
        assert isinstance(info.value, Exception)
        assert not isinstance(info.value, (ValueError, TypeError))
    assert caught == [
        ("DocstringParsingException", "Cannot generate JSON schema for nodoc because it has no docstring!"),
        ("TypeHintParsingException", "Argument x is missing a type hint in function untyped"),
    ]
    assert ToolSchemaError.__bases__ == (Exception,)
    assert (chat.ToolSchemaError, chat.DocstringParsingException, chat.TypeHintParsingException) == (
        ToolSchemaError,
        DocstringParsingException,
        TypeHintParsingException,
    )
    assert {"ToolSchemaError", "DocstringParsingException", "TypeHintParsingException"} <= set(
        chat.__all__
    )


def test_a_render_given_an_undescribable_tool_raises_the_tool_error():
    from minijinja_py.chat import ChatTemplate

    def nodoc(x: int):
        pass

    chat = ChatTemplate.from_string("{{ tools|length }}")
    with pytest.raises(ToolSchemaError) as info:
        chat.render([{"role": "user", "content": "Hi"}], tools=[nodoc])
    assert type(info.value) is DocstringParsingException
    assert str(info.value) == "Cannot generate JSON schema for nodoc because it has no docstring!"
