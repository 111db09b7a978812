"""Parsing what a model writes back into a message: transformers 5.23's `response_template`
format (`tokenizer.parse_response`, `get_response_parser`), as a stage that takes text and
returns data. It knows nothing of ChatTemplate; ChatTemplate delegates to it.

>>> template = {
...     "defaults": {"role": "assistant"},
...     "start_anchor": "<|im_start|>assistant\\n",
...     "fields": {
...         "thinking": {"open": "<think>", "close": "</think>"},
...         "content": {"close": "<|im_end|>"},
...     },
... }
>>> parse_response("<think>2+2</think>4<|im_end|>", template, prefix="")
{'role': 'assistant', 'thinking': '2+2', 'content': '4'}
"""

from .parse import (
    NoResponseTemplateError,
    decode_with,
    parse_response,
    parse_responses,
    response_parser,
)
from .pattern import MAX_ANCHOR
from .stream import ResponseParser
from .template import ResponseTemplate, ResponseTemplateField, load_response_template

__all__ = [
    "MAX_ANCHOR",
    "NoResponseTemplateError",
    "ResponseParser",
    "ResponseTemplate",
    "ResponseTemplateField",
    "decode_with",
    "load_response_template",
    "parse_response",
    "parse_responses",
    "response_parser",
]
