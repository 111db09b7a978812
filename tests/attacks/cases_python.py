"""Attacks that need Python around them: memory kept after renders, loaders, caller objects,
the command line's batch, and a host that raised its recursion limit.
Each function runs in a capped worker and returns a short summary that the table expects
exactly; a function cleans up what it changes in its worker."""

from __future__ import annotations

import gc
import json
import struct
import sys
import tempfile
import tracemalloc
from pathlib import Path

from .model import Attack, Ok

KEPT = "memory-kept"
LOAD = "loaders"
OBJ = "caller-objects"
CLI = "cli-batch"
HOST = "host-settings"


def _retained(source: str, context: dict, warm: int = 50, more: int = 500) -> str:
    """'steady' when rendering ``more`` times keeps no more memory than rendering ``warm``."""
    import minijinja_py as mj

    template = mj.chat_environment().from_string(source)

    def render() -> None:
        try:
            template.render(context)
        except mj.TemplateError:
            pass

    for _ in range(warm):
        render()
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(more):
            render()
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    return "steady" if grown < 32 * 1024 else f"kept {grown} bytes"


def kept_break() -> str:
    return _retained("{% for i in range(3) %}{% if i %}{% break %}{% endif %}{% endfor %}", {})


def kept_continue() -> str:
    return _retained("{% for i in x %}{% continue %}{% endfor %}", {"x": list(range(50))})


def kept_break_with_data() -> str:
    return _retained(
        "{% set big = range(1000)|list %}{% for i in big %}{% break %}{% endfor %}", {}
    )


def kept_tojson_indent() -> str:
    import minijinja_py as mj

    env = mj.chat_environment()
    template = env.from_string("{{ x|tojson(indent=n) }}")
    for i in range(20):
        template.render(x=[1], n=" " * i)
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for i in range(20, 1000):
            template.render(x=[1], n=" " * (i % 50) + str(i))
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    return "steady" if grown < 256 * 1024 else f"kept {grown} bytes"


def kept_errors() -> str:
    return _retained("{% for i in range(5) %}{{ raise_exception('no ' ~ i) }}{% endfor %}", {})


def kept_limit_errors() -> str:
    return _retained("{{ 'a' * 10**10 }}", {})


def kept_macros() -> str:
    return _retained(
        "{% macro m(n) %}{% if n %}{{ m(n - 1) }}{% endif %}{% endmacro %}{{ m(10) }}"
        "{% set ns = namespace(a=[1]) %}{% set ns.b = ns %}",
        {},
        more=250,
    )


def kept_compiles() -> str:
    import minijinja_py as mj

    env = mj.chat_environment()
    for i in range(30):
        env.from_string(f"{{{{ {i} + x }}}}{{% if a == {i} %}}y{{% endif %}}").render(x=1)
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for i in range(30, 330):
            env.from_string(f"{{{{ {i} + x }}}}{{% if a == {i} %}}y{{% endif %}}").render(x=1)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    return "steady" if grown < 256 * 1024 else f"kept {grown} bytes"


# -- loaders ------------------------------------------------------------------------------------


def _load(path: Path, how: str = "pretrained") -> str:
    """'ValueError naming <file>' / 'loaded: <render>' / '<Error>: <message>'."""
    from minijinja_py import ChatTemplate

    try:
        if how == "gguf":
            chat = ChatTemplate.from_gguf(path)
        else:
            chat = ChatTemplate.from_pretrained(path)
        text = chat.render([{"role": "user", "content": "hi"}])
    except (ValueError, OSError) as error:
        names = [p.name for p in path.rglob("*")] if path.is_dir() else [path.name]
        named = [n for n in names if n in str(error)]
        return (
            f"{type(error).__name__} naming {named[0]}"
            if named
            else f"{type(error).__name__}: {str(error)[:120]}"
        )
    return f"loaded: {text[:200]}"


def loader_symlink_out() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        secret = Path(tmp) / "secret.txt"
        secret.write_text("TOP-SECRET {{ messages }}", encoding="utf-8")
        folder = Path(tmp) / "model"
        folder.mkdir()
        (folder / "chat_template.jinja").symlink_to(secret)
        return _load(folder)


def loader_symlink_proc_environ() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "model"
        folder.mkdir()
        (folder / "chat_template.jinja").symlink_to("/proc/self/environ")
        return _load(folder)


def loader_symlink_config_out() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        outside = Path(tmp) / "elsewhere.json"
        outside.write_text(json.dumps({"chat_template": "LEAKED"}), encoding="utf-8")
        folder = Path(tmp) / "model"
        folder.mkdir()
        (folder / "tokenizer_config.json").symlink_to(outside)
        return _load(folder)


def loader_huge_template_file() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "model"
        folder.mkdir()
        with open(folder / "chat_template.jinja", "wb") as handle:
            handle.truncate(2 << 30)  # sparse: no disk used, 2 GiB to read
        return _load(folder)


def loader_deep_config() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "model"
        folder.mkdir()
        (folder / "tokenizer_config.json").write_text("[" * 100_000 + "]" * 100_000)
        return _load(folder)


def loader_config_not_utf8() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "model"
        folder.mkdir()
        (folder / "tokenizer_config.json").write_bytes(b'{"chat_template": "\xff\xfe"}')
        return _load(folder)


def loader_huge_int_config() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "model"
        folder.mkdir()
        (folder / "tokenizer_config.json").write_text('{"x": ' + "9" * 5000 + "}")
        return _load(folder)


def _gguf_string(text: bytes) -> bytes:
    return struct.pack("<Q", len(text)) + text


def _gguf(kvs: list[bytes], count: int | None = None) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, 0, len(kvs) if count is None else count) + b"".join(kvs)


def _kv_template(template: bytes) -> bytes:
    return _gguf_string(b"tokenizer.chat_template") + struct.pack("<I", 8) + _gguf_string(template)


def loader_gguf_sparse_2gib() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.gguf"
        with open(path, "wb") as handle:
            handle.write(_gguf([_kv_template(b"[{{ messages[0].content }}]")]))
            handle.truncate(2 << 30)
        return _load(path, "gguf")


def loader_gguf_many_empty_arrays() -> str:
    entry = _gguf_string(b"k") + struct.pack("<IIQ", 9, 4, 0)
    count = 100_000_000 // len(entry)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.gguf"
        header = b"GGUF" + struct.pack("<IQQ", 3, 0, count + 1)
        path.write_bytes(header + _kv_template(b"ok") + entry * count)
        return _load(path, "gguf")


def loader_gguf_huge_count() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.gguf"
        path.write_bytes(_gguf([_kv_template(b"x")], count=2**63))
        return _load(path, "gguf")


def loader_gguf_huge_string_length() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.gguf"
        bad = _gguf_string(b"tokenizer.chat_template") + struct.pack("<IQ", 8, 2**62) + b"x"
        path.write_bytes(_gguf([bad]))
        return _load(path, "gguf")


def loader_gguf_nested_arrays() -> str:
    nested = struct.pack("<IQ", 9, 1) * 100_000 + struct.pack("<IQ", 4, 0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.gguf"
        path.write_bytes(
            _gguf([_gguf_string(b"deep") + struct.pack("<I", 9) + nested[4:], _kv_template(b"ok")])
        )
        return _load(path, "gguf")


# -- caller objects -----------------------------------------------------------------------------


def _chat_render(source: str, **kwargs) -> str:
    from minijinja_py import ChatTemplate, TemplateError

    try:
        return "ok: " + ChatTemplate.from_string(source).render(
            [{"role": "user", "content": "hi"}], **kwargs
        )
    except TypeError as error:
        return (
            "TypeError naming p"
            if "'p'" in str(error) or " p " in str(error)
            else f"TypeError: {error}"
        )
    except TemplateError as error:
        return f"{type(error).__name__}: {error.message}"


def path_write() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "f.txt"
        target.write_text("original")
        _chat_render("{{ p.joinpath('f.txt').write_text('pwned') }}", p=Path(tmp))
        return f"{'file untouched' if target.read_text() == 'original' else 'FILE WRITTEN'}"


def path_read() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "f.txt").write_text("SECRET")
        result = _chat_render(
            "{{ (p / 'f.txt').read_text() }}{{ p.joinpath('f.txt').read_text() }}", p=Path(tmp)
        )
        return "secret kept" if "SECRET" not in result else "SECRET READ"


def defaultdict_kwarg() -> str:
    from collections import defaultdict

    dd = defaultdict(list, {"a": [1]})
    _chat_render("{{ p.missing }}{{ p['other'] }}{{ p.get('x') }}", p=dd)
    return f"keys {sorted(dd)}"


def defaultdict_message() -> str:
    from collections import defaultdict

    from minijinja_py import ChatTemplate, TemplateError

    message = defaultdict(str, {"role": "user", "content": "hi"})
    try:
        ChatTemplate.from_string("{{ messages[0].tool_calls }}{{ messages[0]['x'] }}").render(
            [message]
        )
    except (TemplateError, TypeError):
        pass
    return f"keys {sorted(message)}"


def array_kwarg() -> str:
    import array

    data = array.array("i", [1, 2])
    for method in (
        "byteswap()",
        "fromlist([3])",
        "frombytes(p.tobytes())",
        "append(1)",
        "reverse()",
    ):
        _chat_render("{{ p." + method + " }}", p=data)
    return f"array {data.tolist()}"


def object_with_side_effect() -> str:
    class Account:
        def __init__(self) -> None:
            self.balance = 10

        def withdraw(self) -> int:
            self.balance -= 10
            return self.balance

    account = Account()
    _chat_render("{{ p.withdraw() }}", p=account)
    return f"balance {account.balance}"


def generator_kwarg() -> str:
    consumed = []

    def numbers():
        for i in range(3):
            consumed.append(i)
            yield i

    result = _chat_render("{{ p|list }}", p=numbers())
    return result if result.startswith("TypeError") else f"{result} consumed {consumed}"


def bytes_kwarg() -> str:
    return _chat_render("{{ p.decode() }}", p=b"abc")


def module_kwarg() -> str:
    import os as module

    return _chat_render("{{ p.system('true') }}{{ p.environ }}", p=module)


# -- command line batch -------------------------------------------------------------------------


def _batch(lines: list[str], newline: str = "\n") -> str:
    from minijinja_py import cli

    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "t.jinja"
        template.write_text("{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}")
        source, target = Path(tmp) / "in.jsonl", Path(tmp) / "out.jsonl"
        source.write_bytes(newline.join(lines).encode("utf-8", "surrogatepass") + b"\n")
        code = cli.main(["batch", "--template", str(template), str(source), str(target), "--quiet"])
        text = target.read_text(encoding="utf-8") if target.exists() else ""
        out = text.split("\n")[:-1]
    kinds = []
    for line in out:
        record = json.loads(line)
        kinds.append(record["text"] if record.get("text") is not None else "error")
    return f"exit {code}: " + " | ".join(kinds)


GOOD = json.dumps([{"role": "user", "content": "a"}])
LAST = json.dumps([{"role": "user", "content": "z"}])


def batch_template_override() -> str:
    line = json.dumps({"messages": [{"role": "user", "content": "a"}], "chat_template": "PWNED"})
    return _batch([GOOD, line, LAST])


def batch_option_override() -> str:
    line = json.dumps(
        {
            "messages": [{"role": "user", "content": "a"}],
            "continue_final_message": True,
            "add_generation_prompt": True,
        }
    )
    return _batch([GOOD, line, LAST])


def batch_lone_surrogate() -> str:
    return _batch([GOOD, '[{"role": "user", "content": "\\ud800"}]', LAST])


def batch_huge_int() -> str:
    return _batch([GOOD, '[{"role": "user", "content": ' + "9" * 5000 + "}]", LAST])


def batch_deep_brackets() -> str:
    return _batch([GOOD, "[" * 100_000 + "]" * 100_000, LAST])


def batch_raw_carriage_return() -> str:
    return _batch([GOOD, '[{"role": "user", "content": "a\rb"}]', LAST])


def batch_nan() -> str:
    return _batch([GOOD, '[{"role": "user", "content": NaN}]', LAST])


def batch_not_utf8() -> str:
    from minijinja_py import cli

    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "t.jinja"
        template.write_text("{% for m in messages %}{{ m.content }}{% endfor %}")
        source, target = Path(tmp) / "in.jsonl", Path(tmp) / "out.jsonl"
        source.write_bytes(
            GOOD.encode()
            + b"\n"
            + b'[{"role": "user", "content": "\xff"}]\n'
            + LAST.encode()
            + b"\n"
        )
        code = cli.main(["batch", "--template", str(template), str(source), str(target), "--quiet"])
        lines = target.read_text(encoding="utf-8").splitlines()
    return f"exit {code}: {len(lines)} lines"


def batch_unicode_line_separator() -> str:
    return _batch([GOOD, '[{"role": "user", "content": "a\u2028b\u0085c"}]', LAST])


def batch_template_error_line() -> str:
    return _batch([GOOD, json.dumps([{"role": "user", "content": "a" * 10}] * 3), "null", LAST])


# -- host settings ------------------------------------------------------------------------------


def _with_recursion_limit(source: str, limit: int = 100_000) -> str:
    import threading

    import minijinja_py as mj

    result: list[str] = []

    def run() -> None:
        previous = sys.getrecursionlimit()
        sys.setrecursionlimit(limit)
        try:
            out = mj.chat_environment().from_string(source).render()
            result.append(f"ok: {out[:100]}")
        except mj.TemplateError as error:
            # any limit will do (steps may run out before the value is deep enough); a crash
            # or a bare RecursionError will not
            result.append(type(error).__name__)
        finally:
            sys.setrecursionlimit(previous)

    # ML hosts raise the limit and often run renders in threads with a default 8 MiB stack
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return result[0] if result else "no result"


def deep_list_printed_high_limit() -> str:
    return _with_recursion_limit(
        "{% set ns = namespace(x=[]) %}{% for i in range(120) %}{% for j in range(500) %}"
        "{% set ns.x = [ns.x] %}{% endfor %}{% endfor %}{{ ns.x }}"
    )


def macro_default_high_limit() -> str:
    return _with_recursion_limit("{% macro m(a=m()) %}{% endmacro %}{{ m() }}")


def macro_recursion_high_limit() -> str:
    return _with_recursion_limit("{% macro m(n) %}{{ m(n + 1) }}{% endmacro %}{{ m(0) }}")


def deep_dict_tojson_high_limit() -> str:
    return _with_recursion_limit(
        "{% set ns = namespace(x={}) %}{% for i in range(120) %}{% for j in range(500) %}"
        "{% set ns.x = {'a': ns.x} %}{% endfor %}{% endfor %}{{ ns.x|tojson }}"
    )


def recursive_loop_high_limit() -> str:
    return _with_recursion_limit("{% for x in [[1]] recursive %}{{ loop([[x]]) }}{% endfor %}")


def _fn(name: str) -> str:
    return f"{__name__}:{name}"


PYTHON = [
    Attack(KEPT, "break-traceback", call=_fn("kept_break"), expect=Ok("steady")),
    Attack(KEPT, "continue-traceback", call=_fn("kept_continue"), expect=Ok("steady")),
    Attack(KEPT, "break-pins-loop-data", call=_fn("kept_break_with_data"), expect=Ok("steady")),
    Attack(KEPT, "tojson-indent-cache", call=_fn("kept_tojson_indent"), expect=Ok("steady")),
    Attack(KEPT, "raised-errors", call=_fn("kept_errors"), expect=Ok("steady")),
    Attack(KEPT, "limit-errors", call=_fn("kept_limit_errors"), expect=Ok("steady")),
    Attack(KEPT, "macro-cycles", call=_fn("kept_macros"), expect=Ok("steady")),
    Attack(KEPT, "compiled-sources", call=_fn("kept_compiles"), expect=Ok("steady")),
    Attack(
        LOAD,
        "symlink-out-of-folder",
        call=_fn("loader_symlink_out"),
        expect=Ok("ValueError naming chat_template.jinja"),
    ),
    Attack(
        LOAD,
        "symlink-proc-environ",
        call=_fn("loader_symlink_proc_environ"),
        expect=Ok("ValueError naming chat_template.jinja"),
    ),
    Attack(
        LOAD,
        "symlink-config-out",
        call=_fn("loader_symlink_config_out"),
        expect=Ok("ValueError naming tokenizer_config.json"),
    ),
    Attack(
        LOAD,
        "huge-template-file",
        call=_fn("loader_huge_template_file"),
        expect=Ok("ValueError naming chat_template.jinja"),
    ),
    Attack(
        LOAD,
        "deep-tokenizer-config",
        call=_fn("loader_deep_config"),
        expect=Ok("ValueError naming tokenizer_config.json"),
    ),
    Attack(
        LOAD,
        "config-not-utf8",
        call=_fn("loader_config_not_utf8"),
        expect=Ok("ValueError naming tokenizer_config.json"),
    ),
    Attack(
        LOAD,
        "config-huge-int",
        call=_fn("loader_huge_int_config"),
        expect=(
            Ok("ValueError naming tokenizer_config.json"),
            Ok("ValueError naming tokenizer_config.json"),
        ),
    ),
    Attack(
        LOAD, "gguf-sparse-2gib", call=_fn("loader_gguf_sparse_2gib"), expect=Ok("loaded: [hi]")
    ),
    Attack(
        LOAD,
        "gguf-many-empty-arrays",
        call=_fn("loader_gguf_many_empty_arrays"),
        expect=(
            Ok("loaded: ok"),
            Ok("ValueError naming model.gguf"),
            Ok("GGUFError naming model.gguf"),
        ),
    ),
    Attack(
        LOAD,
        "gguf-huge-kv-count",
        call=_fn("loader_gguf_huge_count"),
        expect=(Ok("ValueError naming model.gguf"), Ok("GGUFError naming model.gguf")),
    ),
    Attack(
        LOAD,
        "gguf-huge-string-length",
        call=_fn("loader_gguf_huge_string_length"),
        expect=(Ok("ValueError naming model.gguf"), Ok("GGUFError naming model.gguf")),
    ),
    Attack(
        LOAD,
        "gguf-nested-arrays",
        call=_fn("loader_gguf_nested_arrays"),
        expect=(
            Ok("loaded: ok"),
            Ok("ValueError naming model.gguf"),
            Ok("GGUFError naming model.gguf"),
        ),
    ),
    Attack(OBJ, "path-write", call=_fn("path_write"), expect=Ok("file untouched")),
    Attack(OBJ, "path-read", call=_fn("path_read"), expect=Ok("secret kept")),
    Attack(OBJ, "defaultdict-kwarg", call=_fn("defaultdict_kwarg"), expect=Ok("keys ['a']")),
    Attack(
        OBJ,
        "defaultdict-message",
        call=_fn("defaultdict_message"),
        expect=Ok("keys ['content', 'role']"),
    ),
    Attack(OBJ, "array-kwarg", call=_fn("array_kwarg"), expect=Ok("array [1, 2]")),
    Attack(
        OBJ,
        "object-method-side-effect",
        call=_fn("object_with_side_effect"),
        expect=Ok("balance 10"),
    ),
    Attack(
        OBJ,
        "generator-kwarg",
        call=_fn("generator_kwarg"),
        expect=(
            Ok("ok: [0, 1, 2] consumed [0, 1, 2]"),
            Ok("TypeError naming p"),
            # converted to its name, not iterated: harmless
            Ok("ok: ['<', 'g', 'e', 'n', 'e', 'r', 'a', 't', 'o', 'r', '>'] consumed []"),
        ),
    ),
    Attack(
        OBJ,
        "bytes-kwarg",
        call=_fn("bytes_kwarg"),
        expect=(
            Ok("TypeError naming p"),
            Ok("UndefinedError: 'str object' has no attribute 'decode'"),
        ),
    ),
    Attack(
        OBJ,
        "module-kwarg",
        call=_fn("module_kwarg"),
        expect=(
            Ok("TypeError naming p"),
            Ok("UndefinedError: 'str object' has no attribute 'system'"),
        ),
    ),
    Attack(
        CLI,
        "template-override",
        call=_fn("batch_template_override"),
        expect=(Ok("exit 0: [user]a | [user]a | [user]z"), Ok("exit 0: [user]a | error | [user]z")),
    ),
    Attack(
        CLI,
        "option-override",
        call=_fn("batch_option_override"),
        expect=(Ok("exit 0: [user]a | [user]a | [user]z"), Ok("exit 0: [user]a | error | [user]z")),
    ),
    Attack(
        CLI,
        "lone-surrogate",
        call=_fn("batch_lone_surrogate"),
        expect=Ok("exit 0: [user]a | error | [user]z"),
    ),
    Attack(
        CLI,
        "huge-integer",
        call=_fn("batch_huge_int"),
        expect=Ok("exit 0: [user]a | error | [user]z"),
    ),
    Attack(
        CLI,
        "deep-brackets",
        call=_fn("batch_deep_brackets"),
        expect=Ok("exit 0: [user]a | error | [user]z"),
    ),
    Attack(
        CLI,
        "raw-carriage-return",
        call=_fn("batch_raw_carriage_return"),
        expect=Ok("exit 0: [user]a | error | [user]z"),
    ),
    Attack(
        CLI,
        "nan-content",
        call=_fn("batch_nan"),
        expect=(
            Ok("exit 0: [user]a | error | [user]z"),
            Ok("exit 0: [user]a | [user]nan | [user]z"),
        ),
    ),
    Attack(CLI, "not-utf8", call=_fn("batch_not_utf8"), expect=Ok("exit 0: 3 lines")),
    Attack(
        CLI,
        "unicode-line-separators",
        call=_fn("batch_unicode_line_separator"),
        expect=Ok("exit 0: [user]a | [user]a\u2028b\u0085c | [user]z"),
    ),
    Attack(
        CLI,
        "null-line",
        call=_fn("batch_template_error_line"),
        expect=Ok(
            "exit 0: [user]a | [user]aaaaaaaaaa[user]aaaaaaaaaa[user]aaaaaaaaaa | error | [user]z"
        ),
    ),
    Attack(
        HOST,
        "deep-list-printed",
        call=_fn("deep_list_printed_high_limit"),
        expect=(Ok("LimitError"),),
    ),
    Attack(
        HOST,
        "macro-default-argument",
        call=_fn("macro_default_high_limit"),
        expect=Ok("LimitError"),
    ),
    Attack(
        HOST, "macro-recursion", call=_fn("macro_recursion_high_limit"), expect=Ok("LimitError")
    ),
    Attack(
        HOST, "deep-dict-tojson", call=_fn("deep_dict_tojson_high_limit"), expect=Ok("LimitError")
    ),
    Attack(HOST, "recursive-loop", call=_fn("recursive_loop_high_limit"), expect=Ok("LimitError")),
]
