"""Caller values rebuilt as the plain JSON-like data a template sees, as transformers 5.23 does.

A chat template is untrusted code from a model repository, so nothing the caller passes reaches
it as a live Python object: messages, tools, documents and every keyword argument are rebuilt by
`to_template_data`.  The rules are those of transformers' `apply_chat_template` (5.23),
so that a template sees the same values here as there:

- `None`, `bool`, `int`, `float`, `str` stay; subclasses (enums, numpy scalars) become
  the plain value (`np.bool_(False)` becomes `False`, `np.float32(1.5)` becomes `1.5`);
- mappings become dicts (read through `items()`: a `defaultdict` gains no keys), lists stay
  lists and tuples stay tuples, each rebuilt item by item, keys included;
- dataclass instances and pydantic (2) models become dicts of their fields;
- anything else becomes the inert string `"<TypeName>"`: `"<ndarray>"`, `"<PosixPath>"`,
  `"<array>"`, `"<bytes>"`, `"<set>"`, `"<Image>"`.

Data nested deeper than `MAX_DEPTH` (or containing itself) is refused with a `TypeError`
naming the argument, where transformers runs into Python's recursion limit.

A conversation is normalised by `normalise_conversations`: an empty one is refused, a list
of conversations is a batch, each message must be a mapping (or a dataclass or pydantic model,
which transformers 5.23 fails on with an `AttributeError`), its `None`-valued keys are
dropped, and `alias_reasoning` offers its reasoning under every name templates read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import bounded_repr

__all__ = [
    "MAX_DEPTH",
    "REASONING_FIELDS",
    "alias_reasoning",
    "normalise_conversations",
    "to_template_data",
]

#: how deeply caller data may nest (messages, tools, documents, keyword arguments)
MAX_DEPTH = 200
#: names a message's reasoning is read under; templates read the first, gpt-oss reads the second
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")

_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})


class _TooDeep(Exception):
    pass


def to_template_data(value: Any, argument: str = "value") -> Any:
    """`value` rebuilt from plain JSON-like data, as a template should see it (see the module).

    `argument` names the value in the `TypeError` raised for data nested too deeply.

    A container the data holds more than once is rebuilt once and shared, as transformers
    hands the template the caller's own objects: `[x, x]` forty levels deep is forty
    containers here, not a tree of 2**40.  The walk keeps its own stack (no Python recursion).
    """
    cls = type(value)
    if cls in _SCALAR_TYPES:
        return value
    if cls is dict:  # (a message of strings, the usual value: copied at once)
        scalars = _SCALAR_TYPES
        for item in value.values():
            if type(item) not in scalars:
                break
        else:
            for item in value:
                if type(item) not in scalars:
                    break
            else:
                return value.copy()
    return _rebuilt(value, argument)[0]


def to_template_tree(value: Any, argument: str = "value") -> tuple[Any, bool]:
    """`to_template_data(value)`, and whether what it made is a tree: no list, tuple or dict
    in it twice (what provenance asks before it walks the value as a tree, known here from
    the rebuild's own walk)."""
    if type(value) in _SCALAR_TYPES:
        return value, True
    return _rebuilt(value, argument)


def _rebuilt(value: Any, argument: str) -> tuple[Any, bool]:
    rebuild = _Rebuild()
    try:
        return rebuild.plain(value, 0), not rebuild.shared
    except _TooDeep:
        raise TypeError(
            f"{argument} is nested more than {MAX_DEPTH} levels deep (or contains itself)"
        ) from None


# A container being rebuilt: its items are rebuilt first (see _Rebuild).
_BUILDING = object()
_MISSING = object()
# The levels rebuilt by recursion (far below any recursion limit); deeper ones by a stack.
_RECURSION = 24


class _Rebuild:
    """One rebuild: containers by id (each rebuilt once; the values read are kept alive
    so that an id is never reused during the walk) and their heights, for the depth bound."""

    __slots__ = ("done", "heights", "alive", "height", "shared")

    def __init__(self) -> None:
        self.done: dict[int, Any] = {}
        self.heights: dict[int, int] = {}
        self.alive: list[Any] = []
        self.height = 0  # (of the last value plain() rebuilt)
        self.shared = False  # (whether a container was met twice: the result shares it)

    def plain(self, value: Any, depth: int) -> Any:
        """`value` rebuilt at `depth`; its height left in `self.height`.

        The usual data (dicts and lists a few levels deep) is rebuilt here, by recursion
        bounded by _RECURSION levels; what lies deeper, and other types, by run()'s stack."""
        cls = type(value)
        if (cls is not dict and cls is not list) or depth >= _RECURSION:
            found = self.open(value, depth)
            if found.__class__ is list:
                return self.run(found, depth)
            self.height = found[1]
            return found[0]
        key = id(value)
        done = self.done.get(key, _MISSING)
        if done is not _MISSING:
            return self.met(key, done, depth)
        scalars = _SCALAR_TYPES
        height = 0  # (0 while only scalars were met: then it is not registered, only copied)
        below = depth + 1
        if cls is dict:
            result: Any = {}
            for name, item in value.items():
                if type(name) not in scalars or type(item) not in scalars:
                    if not height:
                        height = self.register(key, value)
                    if type(name) not in scalars:
                        name = self.plain(name, below)
                        if self.height >= height:
                            height = self.height + 1
                    if type(item) not in scalars:
                        item = self.plain(item, below)
                        if self.height >= height:
                            height = self.height + 1
                result[name] = item
        else:
            result = []
            for item in value:
                if type(item) not in scalars:
                    if not height:
                        height = self.register(key, value)
                    item = self.plain(item, below)
                    if self.height >= height:
                        height = self.height + 1
                result.append(item)
        if not height:
            if depth >= MAX_DEPTH:
                raise _TooDeep
            self.height = 1
            return result
        if depth + height > MAX_DEPTH:
            raise _TooDeep
        self.done[key] = result
        self.heights[key] = self.height = height
        return result

    def register(self, key: int, value: Any) -> int:
        # A container with containers in it: met again, it is shared or contains itself.
        self.done[key] = _BUILDING
        self.alive.append(value)
        return 1

    def met(self, key: int, done: Any, depth: int) -> Any:
        # A container met before: shared (or, still being rebuilt, containing itself).
        if done is _BUILDING:
            raise _TooDeep
        height = self.heights[key]
        if depth + height > MAX_DEPTH:
            raise _TooDeep
        self.height = height
        self.shared = True
        return done

    def run(self, frame: list[Any], depth: int) -> Any:
        # A frame: [id, build, items, rebuilt items, next index, height of the items so far]
        stack = [frame]
        depth -= 1  # (the frames' depths: depth + their place on the stack)
        while stack:
            frame = stack[-1]
            items, rebuilt = frame[2], frame[3]
            index = frame[4]
            while index < len(items):
                item = items[index]
                cls = type(item)
                if cls in _SCALAR_TYPES:
                    rebuilt.append(item)
                    index += 1
                    continue
                opened = self.open(item, depth + len(stack))
                if opened.__class__ is list:
                    break
                rebuilt.append(opened[0])
                if opened[1] > frame[5]:
                    frame[5] = opened[1]
                index += 1
            frame[4] = index
            if index < len(items):
                stack.append(opened)
                continue
            stack.pop()
            result = frame[1](rebuilt)
            height = frame[5] + 1
            self.done[frame[0]] = result
            self.heights[frame[0]] = height
            if stack:
                parent = stack[-1]
                parent[3].append(result)
                parent[4] += 1
                if height > parent[5]:
                    parent[5] = height
            else:
                self.height = height
                return result
        raise AssertionError("unreachable")

    def open(self, value: Any, depth: int) -> Any:
        """`(rebuilt, height)` of a value rebuilt at once (a scalar, a container met before,
        an opaque object), or the frame of a container whose items are to be rebuilt."""
        cls = type(value)
        if cls is dict:
            # (most containers hold scalars only: copied at once, without a frame)
            scalars = _SCALAR_TYPES
            for item in value.values():
                if type(item) not in scalars:
                    break
            else:
                for item in value:
                    if type(item) not in scalars:
                        break
                else:
                    if depth >= MAX_DEPTH:
                        raise _TooDeep
                    return (value.copy(), 1)
        elif cls is list:
            scalars = _SCALAR_TYPES
            for item in value:
                if type(item) not in scalars:
                    break
            else:
                if depth >= MAX_DEPTH:
                    raise _TooDeep
                return (value.copy(), 1)
        key = id(value)
        done = self.done.get(key, _MISSING)
        if done is not _MISSING:
            return (self.met(key, done, depth), self.height)
        if depth >= MAX_DEPTH:
            raise _TooDeep
        items: Any
        build: Callable[[list[Any]], Any]
        if cls is dict or (cls is not list and isinstance(value, Mapping)):
            items = []
            for pair in value.items():
                items += pair
            build = _pairs
        elif cls is list or isinstance(value, list):
            items, build = value, list
        elif isinstance(value, tuple):
            items, build = value, tuple
        elif isinstance(value, str):
            return (str.__str__(value), 0)
        elif isinstance(value, int):  # bool cannot be subclassed: an int subclass
            return (int.__int__(value), 0)
        elif isinstance(value, float):
            return (float.__float__(value), 0)
        elif _is_numpy_scalar(cls):
            items, build = [value.item()], _only
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            # One field at a time: arrays and images inside are not deep-copied.
            names = [f.name for f in dataclasses.fields(value)]
            items = [getattr(value, name) for name in names]
            build = _named(names)
        elif callable(getattr(value, "model_dump", None)) and not isinstance(value, type):
            items, build = [value.model_dump()], _only  # pydantic 2
        else:
            return (f"<{cls.__name__}>", 0)
        self.alive.append(value)
        self.alive.append(items)
        self.done[key] = _BUILDING
        return [key, build, items, [], 0, 0]


def _pairs(rebuilt: list[Any]) -> dict[Any, Any]:
    return dict(zip(rebuilt[::2], rebuilt[1::2], strict=True))


def _only(rebuilt: list[Any]) -> Any:
    return rebuilt[0]


def _named(names: list[str]) -> Any:
    def build(rebuilt: list[Any]) -> dict[str, Any]:
        return dict(zip(names, rebuilt, strict=True))

    return build


def _is_numpy_scalar(cls: type) -> bool:
    # numpy.generic, found without importing numpy: the caller's values already imported it.
    return any(base.__name__ == "generic" and base.__module__ == "numpy" for base in cls.__mro__)


def alias_reasoning(message: dict[str, Any]) -> dict[str, Any]:
    """`message` with its reasoning under `thinking` (first) and `reasoning_content` (last).

    The reasoning is the first non-`None` of `reasoning_content`, `thinking`, `reasoning`;
    keys the message already has keep their place, as in transformers 5.23.
    """
    for key in REASONING_FIELDS:
        reasoning = message.get(key)
        if reasoning is not None:
            return {"thinking": reasoning, **message, "reasoning_content": reasoning}
    return message


def _message(message: Any) -> dict[str, Any]:
    # (a dict is told by its exact type first: the check against the Mapping ABC costs more
    # than the rest of a short message's copy)
    if type(message) is dict or isinstance(message, Mapping):
        # Dropped before the rebuild, as transformers does: Arrow and Parquet rows carry a None
        # for every field a message lacks, and templates test for a key, not for None.
        kept = {key: item for key, item in message.items() if item is not None}
        return to_template_data(kept, "messages")
    if (dataclasses.is_dataclass(message) and not isinstance(message, type)) or (
        callable(getattr(message, "model_dump", None)) and not isinstance(message, type)
    ):
        plain = to_template_data(message, "messages")
        return {key: item for key, item in plain.items() if item is not None}
    raise TypeError(
        "Chat messages should be dicts, dataclasses or pydantic models, but got "
        f"{bounded_repr(message)}."
    )


def _conversation(conversation: Any) -> list[dict[str, Any]]:
    if type(conversation) is list:
        return [_message(message) for message in conversation]
    if hasattr(conversation, "messages") and not isinstance(conversation, (list, tuple, Mapping)):
        conversation = conversation.messages  # a Conversation-like object
    if not isinstance(conversation, (list, tuple)):
        raise TypeError(
            "messages must be a list of message dicts (or a list of such lists), not "
            f"{type(conversation).__name__}"
        )
    return [_message(message) for message in conversation]


def normalise_conversations(
    messages: Any, offer_reasoning: bool = True
) -> tuple[list[list[dict[str, Any]]], bool]:
    """The conversations of `messages` as plain data, and whether `messages` was a batch.

    A batch is a list whose first item is itself a list (or has `.messages`), as transformers
    decides it.  Raises `ValueError` for an empty conversation and `TypeError` for a message
    that is not a mapping, with transformers' messages.
    """
    if isinstance(messages, (list, tuple)) and len(messages) == 0:
        raise ValueError(
            "Cannot apply chat template to an empty conversation. Provide at least one message."
        )
    batched = isinstance(messages, (list, tuple)) and (
        isinstance(messages[0], (list, tuple)) or hasattr(messages[0], "messages")
    )
    conversations = [_conversation(c) for c in (messages if batched else [messages])]
    if offer_reasoning:
        conversations = [[alias_reasoning(m) for m in chat] for chat in conversations]
    return conversations, batched
