"""Attacks on the training path (provenance, tokens), on caller data with shared structure, on
loaders and files, and on memory kept between calls: variants of the classes of issue 21, each
run in a capped worker and summed up in a short string that the table expects exactly."""

from __future__ import annotations

import gc
import importlib.util
import json
import struct
import sys
import tempfile
import tracemalloc
from pathlib import Path

from .model import Attack, Ok

TRAIN = "training-path"
SHARED = "shared-caller-data"
FILES = "loaders-files"
KEPT = "memory-kept-bytes"


def _traced(source: str, **context) -> str:
    """'ok <length> <segments>' / '<ErrorClass>: <message>' of render_with_provenance."""
    import minijinja_py as mj

    try:
        result = mj.chat_environment().from_string(source).render_with_provenance(**context)
    except mj.TemplateError as error:
        return f"{type(error).__name__}: {error.message}"
    return f"ok {len(result.text)} {len(result.segments)}"


def _shared(levels: int, leaf: object = "s") -> object:
    value = [leaf]
    for _ in range(levels):
        value = [value, value]
    return value


# -- the training path --------------------------------------------------------------------------


def reversed_repetition() -> str:
    # a repeated sourced character, reversed and sliced by two: runs, never a segment per char
    return _traced(
        "{% set s = (c[:1] * 4000000)[::-1][::2] %}{{ s|length }}{{ s[:3] }}", c="xy"
    )


def repetition_of_many_segments() -> str:
    # a string of 3 sources repeated a million times: one segment per source
    return _traced("{{ (a ~ b ~ a) * 1000000 }}", a="p", b="q")


def split_of_many_segments() -> str:
    # 60,000 sourced parts joined, then cut into 60,000 pieces (each clip used to scan all)
    return _traced("{{ (parts|join(',')).split(',')|length }}", parts=["ab"] * 60000)


def replace_in_many_segments() -> str:
    return _traced("{{ (parts|join(' ')).replace('a', 'A')|length }}", parts=["ab"] * 60000)


def iterate_many_segments() -> str:
    return _traced("{{ (parts|join)|list|length }}", parts=["ab"] * 40000)


# Forty levels of [l, l] built by the template over a sourced string: a tree of 2**40; and
# five levels of a thousand references to the level below: 10**15 strings.
_SHARED_LEVELS = "{% set l0 = [c, c] %}" + "".join(
    f"{{% set l{level} = [l{level - 1}, l{level - 1}] %}}" for level in range(1, 41)
)
_WIDE_LEVELS = "{% set w0 = [c] * 1000 %}" + "".join(
    f"{{% set w{level} = [w{level - 1}] * 1000 %}}" for level in range(1, 5)
)


def shared_filter_arguments() -> str:
    # walked as an argument of several filters, a hundred times
    return _traced(
        _SHARED_LEVELS + "{% for i in range(100) %}{{ c|truncate(5, l40) }}"
        "{{ c|wordwrap(3, l40) }}{{ [c]|map('default', l40)|list|length }}{% endfor %}",
        c="abcdefgh",
    )


def wide_shared_filter_arguments() -> str:
    return _traced(
        _WIDE_LEVELS + "{% for i in range(100) %}{{ c|truncate(5, w4) }}"
        "{{ c|wordwrap(3, w4) }}{{ [c]|map('default', w4)|list|length }}{% endfor %}",
        c="abcdefgh",
    )


def format_with_shared_arguments() -> str:
    return _traced(
        _SHARED_LEVELS + "{% for i in range(100) %}{{ '%(a)s|' % {'a': c, 'b': l40} }}"
        "{{ c.replace('a', 'b', l40|length) }}{% endfor %}",
        c="ab",
    )


def shared_context_argument() -> str:
    return _traced("{{ c|truncate(5, l) }}", c="abcdefgh", l=_shared(40, "z"))


def deep_context_value() -> str:
    value: list = ["s"]
    for _ in range(5000):
        value = [value]
    return _traced("{{ d|length }}", d=value)


def self_containing_context_value() -> str:
    value: list = ["s"]
    value.append(value)
    return _traced("{{ d|length }}", d=value)


def _tokenizer():
    from tokenizers import AddedToken, Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({"[UNK]": 0, "a": 1, "b": 2}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.add_special_tokens([AddedToken(t, special=True) for t in ("<|im_start|>", "<|im_end|>")])
    tok.add_tokens([f"<|reserved_{i}|>" for i in range(300)])
    return tok


def many_generation_blocks_masked() -> str:
    from minijinja_py import ChatTemplate

    chat = ChatTemplate.from_string(
        "{% for m in messages %}{% generation %}{{ m.content }}{% endgeneration %}{% endfor %}",
        tokenizer=_tokenizer(),
    )
    # (each span's last character, a space, has no token: it runs to the end of the text)
    messages = [{"role": "assistant", "content": "a "}] * 30000
    encoded = chat.tokenize(messages, return_assistant_tokens_mask=True, return_dict=True)
    return f"{len(encoded['input_ids'])} tokens, {sum(encoded['assistant_masks'])} masked"


def protected_many_caller_tokens() -> str:
    from minijinja_py import ChatTemplate

    chat = ChatTemplate.from_string(
        "{% for m in messages %}<|im_start|>{{ m.content }}<|im_end|>{% endfor %}",
        tokenizer=_tokenizer(),
    )
    messages = [{"role": "user", "content": "<|reserved_7|> a <|im_end|>"}] * 20000
    ids = chat.tokenize(messages, protect_special_tokens=True)["input_ids"]
    end = chat.tokenizer.token_to_id("<|im_end|>")
    return f"{ids.count(end)} control ends"


def inferred_spans_many_turns() -> str:
    # 40,000 turns, a third of them empty: each turn's neighbours were found by a walk over
    # every other message
    from minijinja_py import ChatTemplate

    chat = ChatTemplate.from_string(
        "{% for m in messages %}[{{ m.role }}]{{ m.content }}</s>{% endfor %}"
        "{% if add_generation_prompt %}[assistant]{% endif %}"
    )
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": "x" if i % 3 else ""}
        for i in range(40_000)
    ]
    result = chat.render_with_provenance(messages)
    return f"{len(result.assistant_spans)} spans, {result.assistant_rule}"


def inferred_spans_long_header() -> str:
    # An empty past turn whose text holds no start of the 100,002-character generation prompt
    # followed by its marker: each length of the header was tried in turn (10**10 characters).
    from minijinja_py import ChatTemplate

    chat = ChatTemplate.from_string(
        "{% for m in messages %}{% if m.role == 'user' %}<u>{{ m.content }}</s>"
        "{% else %}[{{ 'a' * 100000 }}b{{ m.content }}</s>{% endif %}{% endfor %}"
        "{% if add_generation_prompt %}[{{ 'a' * 100000 }}]{% endif %}"
    )
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": "ok"},
    ]
    result = chat.render_with_provenance(messages)
    return f"{result.assistant_spans}, {result.assistant_rule}"


def lone_surrogate_tokenized() -> str:
    from minijinja_py import ChatTemplate

    chat = ChatTemplate.from_string("{{ messages[0].content }}", tokenizer=_tokenizer())
    try:
        chat.tokenize([{"role": "user", "content": "a \udc80 b"}])
    except ValueError as error:
        return f"ValueError: {error}"
    return "encoded"


# -- caller data with shared structure ----------------------------------------------------------


def _chat(source: str, trace: bool = False, **kwargs) -> str:
    from minijinja_py import ChatTemplate, TemplateError

    chat = ChatTemplate.from_string(source)
    messages = kwargs.pop("messages", [{"role": "user", "content": "hi"}])
    try:
        if trace:
            return "ok " + chat.render_with_provenance(messages, **kwargs).text[:60]
        return "ok " + chat.render(messages, **kwargs)[:60]
    except TemplateError as error:
        return f"{type(error).__name__}: {error.message}"
    except TypeError as error:
        return f"TypeError: {error}"


def shared_keyword_rendered() -> str:
    return _chat("{{ p|length }}{{ p[1][0][1][0]|length }}", p=_shared(48))


def shared_message_field_rendered() -> str:
    message = {"role": "user", "content": "hi", "extra": _shared(48)}
    return _chat("{{ messages[0].extra|length }}", messages=[message])


def shared_keyword_traced() -> str:
    return _chat("{{ p|length }}", trace=True, p=_shared(45))


def shared_message_traced() -> str:
    message = {"role": "user", "content": "hi", "extra": _shared(45)}
    return _chat("{{ messages[0].extra|length }}", trace=True, messages=[message])


def shared_tools_traced() -> str:
    parameters = {"type": "object", "properties": {"a": _shared(45)}}
    tools = [{"type": "function", "function": {"name": "f", "parameters": parameters}}]
    return _chat("{{ tools|length }}", trace=True, tools=tools)


def self_containing_keyword() -> str:
    value: dict = {"a": 1}
    value["self"] = [value]
    return _chat("{{ p }}", p=value)


# -- loaders and files --------------------------------------------------------------------------


def _load_folder(files: dict[str, str]) -> str:
    from minijinja_py import ChatTemplate

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, text in files.items():
            (folder / name).write_text(text, encoding="utf-8")
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(10**6)
        try:
            chat = ChatTemplate.from_pretrained(folder)
            return "loaded: " + chat.render([{"role": "user", "content": "hi"}])
        except (ValueError, OSError) as error:
            return f"{type(error).__name__}: {str(error).replace(str(folder), '<folder>')}"
        finally:
            sys.setrecursionlimit(limit)


def deep_objects_in_config() -> str:
    return _load_folder({"tokenizer_config.json": '{"a":' * 400_000 + "1" + "}" * 400_000})


def deep_special_tokens_map() -> str:
    return _load_folder(
        {
            "tokenizer_config.json": json.dumps({"chat_template": "{{ bos_token }}"}),
            "special_tokens_map.json": "[" * 400_000,
        }
    )


def deep_chat_template_json() -> str:
    return _load_folder({"chat_template.json": '{"chat_template": ' + "[" * 400_000})


def brackets_inside_strings_are_text() -> str:
    text = json.dumps({"chat_template": "{{ '" + "[" * 50_000 + "'|length }}"})
    return _load_folder({"tokenizer_config.json": text})


def escaped_quotes_batch_line() -> str:
    from minijinja_py.pipelines.rows import InputError, parse_json

    outcomes = []
    for line in ('"' + '\\"' * 200_000 + "[" * 101, "[" * 101 + '"' + '\\"' * 200_000):
        try:
            parse_json(line)
            outcomes.append("parsed")
        except InputError as error:
            outcomes.append(f"InputError: {error}")
        except ValueError:
            outcomes.append("ValueError")
    return " | ".join(outcomes)


def _gguf(entries: list[bytes]) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, 0, len(entries)) + b"".join(entries)


def _gguf_text(text: bytes) -> bytes:
    return struct.pack("<Q", len(text)) + text


def _read_gguf(data: bytes) -> str:
    from minijinja_py import ChatTemplate

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.gguf"
        path.write_bytes(data)
        try:
            chat = ChatTemplate.from_gguf(path)
            return "loaded: " + chat.render([{"role": "user", "content": "hi"}])
        except (ValueError, OSError) as error:
            return f"{type(error).__name__}: {str(error).replace(str(path), '<file>')}"


def gguf_emoji_template() -> str:
    template = "😀".encode() * (12 * 1024 * 1024 // 4)
    return _read_gguf(
        _gguf([_gguf_text(b"tokenizer.chat_template") + struct.pack("<I", 8) + _gguf_text(template)])
    )


def gguf_string_past_the_end() -> str:
    entry = _gguf_text(b"tokenizer.chat_template") + struct.pack("<IQ", 8, 3 * 1024 * 1024)
    return _read_gguf(_gguf([entry + b"{{ 1 }}"]))


def gguf_many_empty_strings() -> str:
    # two nested arrays of 2.5 million empty strings: more than the header may walk in all
    inner = struct.pack("<IQ", 8, 2_500_000) + b"\0" * (8 * 2_500_000)
    entry = _gguf_text(b"k") + struct.pack("<IIQ", 9, 9, 2) + inner + inner
    return _read_gguf(_gguf([entry]))


# -- memory kept between calls, in bytes --------------------------------------------------------


def _grown(calls) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        calls()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()


def kept_distinct_sources() -> str:
    from minijinja_py import ChatTemplate

    chat = ChatTemplate.from_string("{{ messages[0].content }}")
    padding = "{# " + "p" * 200_000 + " #}"

    def calls() -> None:
        for index in range(200):  # (40 MB of sources)
            chat.render([{"role": "user", "content": "hi"}], chat_template=f"{index}{padding}")

    grown = _grown(calls)
    return "bounded" if grown < 16 << 20 else f"kept {grown} bytes"


def kept_distinct_tools_traced() -> str:
    from minijinja_py import ChatTemplate

    chat = ChatTemplate.from_string("{{ tools|tojson(indent=i) }}{{ messages[0].content }}")

    def calls() -> None:
        for index in range(16):  # (16 distinct tool lists of a megabyte)
            tools = [{"name": f"f{index}", "description": "d" * 1_000_000}]
            chat.render_with_provenance(
                [{"role": "user", "content": "hi"}], tools=tools, i=index % 9
            )

    grown = _grown(calls)
    return "bounded" if grown < 12 << 20 else f"kept {grown} bytes"


def _fn(name: str) -> str:
    return f"{__name__}:{name}"


TRAINING = [
    Attack(TRAIN, "reversed-repetition", call=_fn("reversed_repetition"), expect=Ok("ok 10 1")),
    Attack(
        TRAIN,
        "repetition-of-segments",
        call=_fn("repetition_of_many_segments"),
        expect=Ok("ok 3000000 2"),
    ),
    Attack(TRAIN, "split-many-segments", call=_fn("split_of_many_segments"), expect=Ok("ok 5 0")),
    Attack(
        TRAIN, "replace-many-segments", call=_fn("replace_in_many_segments"), expect=Ok("ok 6 0")
    ),
    Attack(TRAIN, "iterate-many-segments", call=_fn("iterate_many_segments"), expect=Ok("ok 5 0")),
    Attack(
        TRAIN,
        "shared-filter-arguments",
        call=_fn("shared_filter_arguments"),
        expect=Ok("ok 1900 200"),
    ),
    Attack(
        TRAIN,
        "wide-shared-filter-arguments",
        call=_fn("wide_shared_filter_arguments"),
        expect=Ok("ok 1900 200"),
    ),
    Attack(
        TRAIN,
        "format-shared-arguments",
        call=_fn("format_with_shared_arguments"),
        # (a %-format sizes only the fields its spec reads, so the shared list is never walked;
        # per round: "ab" from c, then "b" of the replaced copy from c)
        expect=(Ok("ok 500 200"),),
    ),
    Attack(
        TRAIN,
        "shared-context-argument",
        call=_fn("shared_context_argument"),
        expect=Ok(
            "LimitError: the value of 'l' holds 3298534883326 items once its shared lists and"
            " dicts are traced at each place they occur, more than max_items (1000000)"
        ),
    ),
    Attack(
        TRAIN,
        "deep-context-value",
        call=_fn("deep_context_value"),
        expect=Ok("LimitError: the value of 'd' nests deeper than provenance traces (1000 levels)"),
    ),
    Attack(
        TRAIN,
        "self-containing-value",
        call=_fn("self_containing_context_value"),
        expect=Ok("LimitError: the value of 'd' contains itself: provenance cannot trace it"),
    ),
    Attack(
        TRAIN,
        "generation-blocks-masked",
        call=_fn("many_generation_blocks_masked"),
        expect=Ok("30000 tokens, 30000 masked"),
    ),
    Attack(
        TRAIN,
        "protected-caller-tokens",
        call=_fn("protected_many_caller_tokens"),
        expect=Ok("20000 control ends"),
    ),
    Attack(
        TRAIN,
        "inferred-spans-many-turns",
        call=_fn("inferred_spans_many_turns"),
        expect=Ok("20000 spans, inferred"),
    ),
    Attack(
        TRAIN,
        "inferred-spans-long-header",
        call=_fn("inferred_spans_long_header"),
        expect=Ok("[(200025, 200031)], inferred"),
    ),
    Attack(
        TRAIN,
        "lone-surrogate-tokenized",
        call=_fn("lone_surrogate_tokenized"),
        expect=Ok(
            "ValueError: the rendered text holds a lone surrogate (U+DC80) at character 2,"
            " which cannot be encoded as UTF-8 or tokenized"
        ),
    ),
    Attack(SHARED, "keyword-rendered", call=_fn("shared_keyword_rendered"), expect=Ok("ok 22")),
    Attack(
        SHARED,
        "message-field-rendered",
        call=_fn("shared_message_field_rendered"),
        expect=Ok("ok 2"),
    ),
    Attack(
        SHARED,
        "keyword-traced",
        call=_fn("shared_keyword_traced"),
        expect=Ok(
            "LimitError: the value of 'p' holds 105553116266494 items once its shared lists and"
            " dicts are traced at each place they occur, more than max_items (1000000)"
        ),
    ),
    Attack(
        SHARED,
        "message-traced",
        call=_fn("shared_message_traced"),
        expect=Ok(
            "LimitError: the value of 'messages' holds 105553116266498 items once its shared"
            " lists and dicts are traced at each place they occur, more than max_items (1000000)"
        ),
    ),
    Attack(
        SHARED,
        "tools-traced",
        call=_fn("shared_tools_traced"),
        expect=Ok(
            "LimitError: the value of 'tools' holds 105553116266502 items once its shared"
            " lists and dicts are traced at each place they occur, more than max_items (1000000)"
        ),
    ),
    Attack(
        SHARED,
        "self-containing-keyword",
        call=_fn("self_containing_keyword"),
        expect=Ok(
            "TypeError: keyword argument 'p' is nested more than 200 levels deep (or contains"
            " itself)"
        ),
    ),
    Attack(
        FILES,
        "deep-objects-config",
        call=_fn("deep_objects_in_config"),
        expect=Ok(
            "ValueError: <folder>/tokenizer_config.json: invalid JSON: nested more than 100"
            " levels deep"
        ),
    ),
    Attack(
        FILES,
        "deep-special-tokens-map",
        call=_fn("deep_special_tokens_map"),
        expect=Ok(
            "ValueError: <folder>/special_tokens_map.json: invalid JSON: nested more than 100"
            " levels deep"
        ),
    ),
    Attack(
        FILES,
        "deep-chat-template-json",
        call=_fn("deep_chat_template_json"),
        expect=Ok(
            "ValueError: <folder>/chat_template.json: invalid JSON: nested more than 100"
            " levels deep"
        ),
    ),
    Attack(
        FILES,
        "brackets-in-strings",
        call=_fn("brackets_inside_strings_are_text"),
        expect=Ok("loaded: 50000"),
    ),
    Attack(
        FILES,
        "escaped-quotes-line",
        call=_fn("escaped_quotes_batch_line"),
        expect=Ok("ValueError | InputError: JSON nested deeper than 100 levels"),
    ),
    Attack(
        FILES,
        "gguf-emoji-template",
        call=_fn("gguf_emoji_template"),
        expect=Ok(
            "GGUFError: <file>: GGUF string of 12582912 bytes at offset 67 is implausibly large"
        ),
    ),
    Attack(
        FILES,
        "gguf-string-past-end",
        call=_fn("gguf_string_past_the_end"),
        expect=Ok("GGUFError: <file>: truncated GGUF header (needed 3145728 bytes at offset 67)"),
    ),
    Attack(
        FILES,
        "gguf-many-empty-strings",
        call=_fn("gguf_many_empty_strings"),
        expect=Ok(
            "GGUFError: <file>: GGUF string arrays of more than 4000000 strings in all at"
            " offset 20000073, refused"
        ),
    ),
    Attack(KEPT, "distinct-sources", call=_fn("kept_distinct_sources"), expect=Ok("bounded")),
    Attack(KEPT, "distinct-tools-traced", call=_fn("kept_distinct_tools_traced"), expect=Ok("bounded")),
]

# The three attacks on token ids need the tokens extra (tokenizers); without it they are left out
# of the list rather than failing on the missing module.
_NEEDS_TOKENIZERS = {"generation-blocks-masked", "protected-caller-tokens", "lone-surrogate-tokenized"}
if importlib.util.find_spec("tokenizers") is None:
    TRAINING = [attack for attack in TRAINING if attack.name not in _NEEDS_TOKENIZERS]
