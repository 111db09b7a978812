"""The response_templates and responses of transformers 5.23's response-parsing tests
(tests/utils/test_chat_parsing.py), written down as data for the parity grid, with a few
more: prefixes, batches, tools with typed arguments, and hostile responses."""

from __future__ import annotations

import copy
from typing import Any

COHERE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
    "fields": {
        "content": {"open": "<|START_RESPONSE|>", "close": "<|END_RESPONSE|>", "content": "text"},
        "thinking": {"open": "<|START_THINKING|>", "close": "<|END_THINKING|>", "content": "text"},
        "tool_calls": {
            "open": "<|START_ACTION|>",
            "close": "<|END_ACTION|>",
            "content": "json",
            "transform_each": True,
            "transform": {
                "type": "function",
                "function": {"name": "{tool_name}", "arguments": "{parameters}"},
            },
        },
    },
}

ERNIE = {
    "defaults": {"role": "assistant"},
    "start_anchor": "Assistant:",
    "fields": {
        "thinking": {"open_pattern": r"(?:^|<think>\s*)", "close": "</think>", "content": "text"},
        "content": {"open": "<response>\n", "close_pattern": r"\n?</response>", "content": "text"},
        "tool_calls": {
            "open": "<tool_call>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
    },
}

GPT_OSS = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|start|>assistant",
    "fields": {
        "thinking": {
            "open": "<|channel|>analysis<|message|>",
            "close": "<|end|>",
            "content": "text",
        },
        "content": {"open": "<|channel|>final<|message|>", "close": "<|end|>", "content": "text"},
        "tool_calls": {
            "open_pattern": r"<\|channel\|>commentary to=functions\.(?P<name>\w+).*?<\|message\|>",
            "close": "<|call|>",
            "repeats": True,
            "content": "json",
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
    },
}

SMOLLM = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open": "<tool_call>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "json",
            "transform": {"type": "function", "function": "{content}"},
        },
        "content": {"close": "<|im_end|>", "content": "text"},
    },
}

QWEN3 = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "thinking": {"open": "<think>", "close": "</think>", "content": "text"},
        "tool_calls": {
            "open_pattern": r"<tool_call>\s*<function=(?P<name>\w+)>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {
                "tag_pattern": r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>",
                "value_parser": {"name": "json", "args": {"allow_non_json": True}},
            },
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
    },
}

GEMMA4 = {
    "defaults": {"role": "assistant"},
    "start_anchor": ["<|turn>model\n", "<tool_response|>"],
    "fields": {
        "thinking": {"open": "<|channel>thought\n", "close": "<channel|>", "content": "text"},
        "tool_calls": {
            "open_pattern": r"<\|tool_call>call:(?P<name>\w+)",
            "close": "<tool_call|>",
            "repeats": True,
            "content": "json",
            "content_args": {"unquoted_keys": True, "string_delims": [['<|"|>', '<|"|>']]},
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
        "content": {"close": ["<turn|>", "<|tool_response>", "<eos>"], "content": "text"},
    },
}

INKLING = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|message_model|>",
    "fields": {
        "thinking": {
            "open_pattern": r"(?:<\|message_model\|>)?[^<]*<\|content_thinking\|>",
            "close": "<|end_message|>",
            "repeats": True,
            "join": "",
            "content_args": {"strip": False},
        },
        "content": {
            "open_pattern": r"(?:<\|message_model\|>)?[^<]*<\|content_text\|>",
            "close": "<|end_message|>",
            "repeats": True,
            "join": "",
            "content_args": {"strip": False},
        },
        "tool_calls": {
            "open_pattern": r"(?:<\|message_model\|>)?[^<]*<\|content_invoke_tool_json\|>",
            "close": "<|end_message|>",
            "repeats": True,
            "content": "json",
            "transform": {
                "type": "function",
                "function": {"name": "{content.name}", "arguments": "{content.args}"},
            },
        },
    },
}

XML_STRING_ARGS = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<tool_call>\s*<function=(?P<name>\w+)>",
            "close": "</tool_call>",
            "repeats": True,
            "content": "xml-inline",
            "content_args": {
                "tag_pattern": r"<parameter=(?P<key>\w+)>\s*(?P<value>.*?)\s*</parameter>"
            },
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
    },
}

KV_LINES_TOOLS = {
    "defaults": {"role": "assistant"},
    "start_anchor": "<|im_start|>assistant\n",
    "fields": {
        "tool_calls": {
            "open_pattern": r"<tool_call>\s*<function=(?P<name>\w+)>\n",
            "close": "</tool_call>",
            "repeats": True,
            "content": "kv-lines",
            "transform": {
                "type": "function",
                "function": {"name": "{name}", "arguments": "{content}"},
            },
        },
    },
}

MERGE_DUPLICATES = copy.deepcopy(XML_STRING_ARGS)
MERGE_DUPLICATES["fields"]["tool_calls"]["content_args"]["merge_duplicates"] = True


def _simple(fields: dict[str, Any], anchor: str = "<|assistant|>") -> dict[str, Any]:
    return {"defaults": {"role": "assistant"}, "start_anchor": anchor, "fields": fields}


DOTTED = _simple(
    {
        "tool_calls": {
            "open": "<tool>",
            "close": "</tool>",
            "repeats": True,
            "content": "json",
            "transform": {
                "type": "function",
                "function": {"name": "{content.name}", "arguments": "{content.args}"},
            },
        }
    }
)
DOTTED_EACH = _simple(
    {
        "tool_calls": {
            "open": "<actions>",
            "close": "</actions>",
            "content": "json",
            "transform_each": True,
            "transform": {
                "type": "function",
                "function": {"name": "{fn.name}", "arguments": "{fn.args}"},
            },
        }
    }
)
JOIN = _simple(
    {
        "thinking": {"open": "<think>", "close": "</think>", "repeats": True, "join": " "},
        "content": {"repeats": True, "join": " "},
    }
)
REQUIRED = _simple(
    {
        "content": {
            "open": "<response>",
            "close": "</response>",
            "content": "text",
            "optional": False,
        }
    }
)
INT = _simple({"count": {"open": "<n>", "close": "</n>", "content": "int"}})
KV = _simple({"metadata": {"open": "<meta>", "close": "</meta>", "content": "kv-lines"}})
LITERAL_LISTS = _simple(
    {"x": {"open": ["<a>", "<bb>"], "close": ["</a>", "</bb>"], "content": "text"}}
)
CLOSE_LIST = _simple(
    {"content": {"close": ["<turn|>", "<|tool_response>", "<eos>"], "content": "text"}}
)
EXTENDING = _simple({"x": {"open": "<x>", "close": ["END", "ENDX"], "content": "text"}})
NO_CLOSE = _simple({"content": {"open": "<resp>", "content": "text"}})
END_CLOSE = _simple(
    {"content": {"close_pattern": r"\Z", "content": "text"}}, "<|im_start|>assistant\n"
)
PREFILL = {
    "defaults": {"role": "assistant"},
    "start_anchor": "[BEGIN]",
    "fields": {
        "tag": {"open": "<tag>", "close": "</tag>", "content": "text"},
        "body": {"close_pattern": r"$", "content": "text"},
    },
}
DIRTY = _simple(
    {
        "thinking": {"open": "<t>", "close": "</t>", "content": "text"},
        "score": {"open": "<n>", "close": "</n>", "content": "int"},
        "json_call": {"open": "<j>", "close": "</j>", "content": "json"},
        "xml_call": {
            "open": "<x>",
            "close": "</x>",
            "content": "xml-inline",
            "content_args": {"tag_pattern": r"<(?P<key>\w+)=(?P<value>[^>]+)>"},
        },
        "kv_call": {"open": "<kv>", "close": "</kv>", "content": "kv-lines"},
    }
)

TEMPLATES: dict[str, dict[str, Any]] = {
    "cohere": COHERE,
    "ernie": ERNIE,
    "gpt_oss": GPT_OSS,
    "smollm": SMOLLM,
    "qwen3": QWEN3,
    "gemma4": GEMMA4,
    "inkling": INKLING,
    "xml_string_args": XML_STRING_ARGS,
    "kv_lines_tools": KV_LINES_TOOLS,
    "merge_duplicates": MERGE_DUPLICATES,
    "dotted": DOTTED,
    "dotted_each": DOTTED_EACH,
    "join": JOIN,
    "required": REQUIRED,
    "int": INT,
    "kv": KV,
    "literal_lists": LITERAL_LISTS,
    "close_list": CLOSE_LIST,
    "extending": EXTENDING,
    "no_close": NO_CLOSE,
    "end_close": END_CLOSE,
    "prefill": PREFILL,
    "dirty": DIRTY,
}

COHERE_OUT = (
    "<|START_THINKING|>I should call a tool.<|END_THINKING|>"
    '<|START_ACTION|>[\n    {"tool_call_id": "0", "tool_name": "simple_tool", '
    '"parameters": {"temperature_format": "Celsius"}}\n]<|END_ACTION|><|END_OF_TURN_TOKEN|>'
)
SET_ALARM_CALL = (
    "<tool_call>\n<function=set_alarm>\n"
    "<parameter=hour>\n7\n</parameter>\n"
    "<parameter=enabled>\ntrue\n</parameter>\n"
    "<parameter=label>\nwake up\n</parameter>\n"
    "</function>\n</tool_call>"
)


def set_alarm_tools(**properties: Any) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": "set_alarm",
                "parameters": {"type": "object", "properties": properties},
            },
        }
    ]


SET_ALARM_TOOLS = set_alarm_tools(
    hour={"type": "integer"}, enabled={"type": "boolean"}, label={"type": "string"}
)
UNION_TOOLS = set_alarm_tools(label={"anyOf": [{"type": "string"}, {"type": "object"}]})
WIDE_TOOLS = set_alarm_tools(
    hour={"type": "integer"},
    ratio={"type": "number"},
    enabled={"type": "boolean"},
    tags={"type": "array"},
    opts={"type": "object"},
    label={"type": ["integer", "null"]},
    note={"type": "string", "nullable": True},
)
TOOLS: dict[str, list[dict[str, Any]] | None] = {
    "none": None,
    "set_alarm": SET_ALARM_TOOLS,
    "union": UNION_TOOLS,
    "wide": WIDE_TOOLS,
}

QWEN_PROMPT = "<|im_start|>system\nA<|im_end|>\n<|im_start|>user\nB<|im_end|>\n<|im_start|>assistant\n<think>\n"

# (template, response, prefix, tools): every case is parsed one-shot and streamed in chunks.
CASES: list[tuple[str, str, str | None, str]] = [
    ("cohere", COHERE_OUT, "", "none"),
    (
        "ernie",
        "Thinking it over.\n</think>\n\n<tool_call>\n"
        '{"name": "get_current_temperature", "arguments": {"location": "Paris"}}\n</tool_call>\n</s>',
        "",
        "none",
    ),
    ("ernie", "Hmm.\n</think>\n\n<response>\nHello! How are you?\n</response>\n</s>", "", "none"),
    (
        "ernie",
        "<think>some deliberation here</think>\n\n<tool_call>\n"
        '{"name": "f", "arguments": {"location": "Paris"}}\n</tool_call>\n</s>',
        "",
        "none",
    ),
    (
        "gpt_oss",
        "<|channel|>analysis<|message|>We need weather.\n\nCall it.<|end|><|start|>assistant<|channel|>commentary "
        'to=functions.get_current_weather <|constrain|>json<|message|>{\n  "location": "San Francisco, CA"\n}',
        "",
        "none",
    ),
    (
        "gpt_oss",
        "<|channel|>analysis<|message|>2+2 = 4.<|end|><|start|>assistant<|channel|>final<|message|>2",
        "",
        "none",
    ),
    (
        "gpt_oss",
        "<|channel|>analysis<|message|>Let me check.<|end|><|start|>assistant<|channel|>commentary "
        'to=functions.get_current_weather <|constrain|>json<|message|>{"location": "San Francisco, CA"}<|call|>',
        "",
        "none",
    ),
    (
        "smollm",
        '<think>\nOkay.\n</think>\n\n<tool_call>{"name": "greet_user", "arguments": {"greeting": "Hi"}}</tool_call>',
        "",
        "none",
    ),
    (
        "smollm",
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
        "",
        "none",
    ),
    ("smollm", "<think>\nGravity?</think>\nSome content about gravity.", "", "none"),
    ("smollm", "", "", "none"),
    ("smollm", "the answer<|im_end|>", "<|im_start|>assistant\nSure, here is ", "none"),
    (
        "qwen3",
        "<tool_call>\n<function=get_weather>\n<parameter=locations>\n"
        '[{"country": "France", "city": "Paris"}]\n</parameter>\n'
        "<parameter=temp_units>\ncelsius\n</parameter>\n</function>\n</tool_call>",
        "",
        "none",
    ),
    (
        "qwen3",
        "<think>short thought</think>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
        "</function>\n</tool_call>",
        "",
        "none",
    ),
    (
        "qwen3",
        "Let me think...</think>",
        "<|im_start|>system\nYou are helpful<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\n<think>\n",
        "none",
    ),
    (
        "qwen3",
        "done</think>",
        "<|im_start|>system\nA<|im_end|>\n<|im_start|>user\nB<|im_end|>\n<|im_start|>assistant\n"
        "Earlier reply<|im_end|>\n<|im_start|>user\nFollowup<|im_end|>\n<|im_start|>assistant\n<think>\n",
        "none",
    ),
    ("qwen3", "hi</think>", "<think>\n", "none"),
    ("qwen3", "nk>real body</think>", "<|im_start|>assistant\n<thi", "none"),
    ("qwen3", "thinking A</think>answer A", "<|im_start|>assistant\n<think>\n", "none"),
    (
        "qwen3",
        "<tool_call>\n<function=set_alarm>\n<parameter=hour>\n007\n</parameter>\n<parameter=enabled>\ntrue\n"
        "</parameter>\n<parameter=label>\nwake up\n</parameter>\n</function>\n</tool_call>",
        "",
        "set_alarm",
    ),
    (
        "qwen3",
        "<tool_call>\n<function=set_alarm>\n<parameter=label>\n1.50\n</parameter>\n</tool_call>",
        "",
        "set_alarm",
    ),
    (
        "gemma4",
        "<|channel>thought\nI should check the tools.<channel|>"
        '<|tool_call>call:get_current_temperature{detail_level:0,location:<|"|>Paris, France<|"|>,'
        'unit:<|"|>celsius<|"|>}<tool_call|><|tool_response>',
        "",
        "none",
    ),
    (
        "gemma4",
        "<|channel>thought\nLet me call the tool.<channel|>"
        '<|tool_call>call:foo{bool_value:true,list_value:[<|"|>foo<|"|>,<|"|>bar<|"|>],'
        'null_value:null,number_value:1,string_value:<|"|>foo<|"|>,struct_value:{foo:<|"|>bar<|"|>}}<tool_call|>',
        "",
        "none",
    ),
    ("gemma4", "It is sunny.<turn|>", "<start_of_turn>user\nhi<turn|><|turn>model\n", "none"),
    (
        "inkling",
        "<|content_thinking|>Consider the weather.<|end_message|>"
        "<|message_model|><|content_thinking|> Tokyo, probably.<|end_message|>"
        "<|message_model|><|content_text|>Checking the weather now.<|end_message|>"
        "<|message_model|>get_weather<|content_invoke_tool_json|>"
        '{"name":"get_weather","args":{"city":"Tokyo","units":"C"}}<|end_message|><|content_model_end_sampling|>',
        "<|message_system|><|content_text|>Thinking effort level: 0.9<|end_message|><|message_model|>",
        "none",
    ),
    ("xml_string_args", SET_ALARM_CALL, "", "none"),
    ("xml_string_args", SET_ALARM_CALL, "", "set_alarm"),
    (
        "xml_string_args",
        "<tool_call>\n<function=set_alarm>\n<parameter=label>\n1.50\n</parameter>\n</tool_call>",
        "",
        "union",
    ),
    (
        "xml_string_args",
        '<tool_call>\n<function=set_alarm>\n<parameter=label>\n{"a": 1}\n</parameter>\n</tool_call>',
        "",
        "union",
    ),
    (
        "xml_string_args",
        "<tool_call>\n<function=set_alarm>\n<parameter=hour>\n3.0\n</parameter>\n<parameter=ratio>\n1e3\n"
        "</parameter>\n<parameter=enabled>\n0\n</parameter>\n<parameter=tags>\n[1, 2]\n</parameter>\n<parameter=opts>\n"
        "[1]\n</parameter>\n<parameter=label>\nnull\n</parameter>\n<parameter=note>\nNone\n</parameter>\n"
        "<parameter=extra>\n5\n</parameter>\n</tool_call>",
        "",
        "wide",
    ),
    (
        "xml_string_args",
        "<tool_call>\n<function=set_alarm>\n<parameter=ratio>\nNaN\n</parameter>\n<parameter=hour>\n"
        "seven\n</parameter>\n</tool_call>",
        "",
        "wide",
    ),
    (
        "kv_lines_tools",
        "<tool_call>\n<function=set_alarm>\nhour: 7\nenabled: true\n</tool_call>",
        "",
        "none",
    ),
    (
        "kv_lines_tools",
        "<tool_call>\n<function=set_alarm>\nhour: 7\nenabled: true\n</tool_call>",
        "",
        "set_alarm",
    ),
    (
        "merge_duplicates",
        "<tool_call>\n<function=set_alarm>\n<parameter=hour>\n7\n</parameter>\n<parameter=hour>\n9\n"
        "</parameter>\n</function>\n</tool_call>",
        "",
        "set_alarm",
    ),
    (
        "cohere",
        '<|START_THINKING|>x<|END_THINKING|><|START_ACTION|>[{"tool_call_id": "0", "tool_name": "set_alarm", '
        '"parameters": {"hour": 7, "enabled": true}}]<|END_ACTION|><|END_OF_TURN_TOKEN|>',
        "",
        "set_alarm",
    ),
    ("dotted", '<tool>{"name": "get_weather", "args": {"city": {"id": 7}}}</tool>', "", "none"),
    (
        "dotted_each",
        '<actions>[{"fn": {"name": "a", "args": {"x": 1}}}, {"fn": {"name": "b", "args": {}}}]</actions>',
        "",
        "none",
    ),
    ("join", "<think>first</think>middle<think>second</think>done", "", "none"),
    ("join", "<think>only</think>", "", "none"),
    ("int", "<n>42</n>", "", "none"),
    ("kv", "<meta>name: alice\nage: 30</meta>", "", "none"),
    ("literal_lists", "<a>hi</a>", "", "none"),
    ("literal_lists", "<bb>hi</bb>", "", "none"),
    ("literal_lists", "<a>hi</bb>", "", "none"),
    ("close_list", "x" * 32, "", "none"),
    ("extending", "<x>hiEND more", "", "none"),
    ("no_close", "<resp>hello world", "", "none"),
    (
        "end_close",
        "Hello there!",
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n",
        "none",
    ),
    ("end_close", "Hello there!", "", "none"),
    ("prefill", "real generated body", "noise[BEGIN]<tag>silently consumed</tag>", "none"),
    (
        "dirty",
        '<t>hello world</t><n>42</n><j>{"a": 1, "b": 2}</j><x><name=foo><age=10></x><kv>k1: v1\nk2: v2</kv>',
        "",
        "none",
    ),
]

# Responses that must fail the same way on both sides (the error class).
FAILING: list[tuple[str, str]] = [
    ("required", "no response here"),
    ("int", "<n>forty</n>"),
    ("cohere", "<|START_ACTION|>not json<|END_ACTION|>"),
    ("cohere", '<|START_ACTION|>{"a": 1}<|END_ACTION|>'),
]

# Templates that both refuse when loaded.
BAD_TEMPLATES: list[dict[str, Any]] = [
    {"start_anchor": "a", "fields": {"x": {"open": "<x>", "close": "</x>", "join": ""}}},
    {
        "start_anchor": "a",
        "fields": {"x": {"open": "<x>", "close": "</x>", "repeats": True, "join": 7}},
    },
    _simple({"x": {"open": "[", "close": "]", "content": "not-a-real-parser"}}),
    {"version": 2, "start_anchor": "a", "fields": {"content": {}}},
    _simple({"a": {"content": "text"}, "b": {"content": "text"}}),
    _simple(
        {"tool": {"open": "<tool>", "close": "</tool>", "transform": {"label": "name: {content}"}}}
    ),
    _simple({"tool": {"open_pattern": r"<tool name=(?P<name>\w+)>", "close": "</tool>"}}),
    _simple({"x": {"open": [], "close": "</x>"}}),
    _simple({"x": {"open": [""], "close": "</x>"}}),
    _simple({"x": {"open": [1, 2], "close": "</x>"}}),
    _simple({"x": {"open": {"foo": "bar"}, "close": "</x>"}}),
    _simple({"x": {"open": "<x>", "open_pattern": "<x>"}}),
    _simple({"x": {"open_pattern": "(unclosed"}}),
    _simple({"x": {"open": "<x>", "transform_each": True}}),
    _simple({"x": {"open": "<x>", "transform_each": 1, "transform": {}}}),
    _simple({"x": {"open": "<x>", "bogus": 1}}),
    {"fields": {"x": {"open": "<x>"}}},
    {"start_anchor": "a", "fields": {}},
    {"start_anchor": "a", "fields": {"x": {}}, "extra": 1},
    {"start_anchor": "a", "fields": {"x": {}}, "defaults": []},
    ["not", "a", "dict"],  # type: ignore[list-item]
]
