"""The hard wall: renders in capped worker processes give the in-process results, and a worker
that hangs, runs out of memory or crashes costs one render, never the caller."""

from __future__ import annotations

import ctypes
import json
import os
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest

import minijinja_py as mj
from minijinja_py import ChatTemplate, IsolatedRenderer, IsolationError

# (appended: the compiled build's suite imports minijinja_py from where it is installed)
sys.path.append(str(Path(__file__).resolve().parents[1]))
from conformance.corpus import corpus_dir  # noqa: E402

CORPUS = corpus_dir()
CAP = 1 << 30
# Time bounds are the worker's CPU time, which a busy machine does not stretch; the wall-clock
# timeout is only the backstop for a render that waits without working, twenty times larger
# (with four CPU-bound processes and the suite's own on two cores, a worker may get a tenth of
# a core).  The renders that spin until killed are given one CPU second.
CPU_SECONDS = 3
BACKSTOP = 20 * CPU_SECONDS


def pinned_now(fmt: str) -> str:
    return datetime(2026, 1, 15, 12, 0, 0).strftime(fmt)


def sleep_forever(x: object) -> object:
    time.sleep(600)
    return x


def spin_forever(x: object) -> object:
    while True:
        pass


def allocate_two_gib(x: object) -> int:
    return len(bytearray(2 << 30))


def segfault() -> str:
    return ctypes.string_at(0).decode()


def exit_now(code: int) -> None:
    os._exit(code)


class CountingTarget:
    """Counts its picklings in the caller and its calls in the worker."""

    pickled = 0

    def __init__(self) -> None:
        self.calls = 0

    def __reduce__(self):
        CountingTarget.pickled += 1
        return (CountingTarget, ())

    def render(self) -> int:
        self.calls += 1
        return self.calls


@pytest.fixture(scope="module")
def iso():
    with IsolatedRenderer(
        workers=2, max_memory_bytes=CAP, timeout=BACKSTOP, cpu_timeout=CPU_SECONDS
    ) as renderer:
        yield renderer


def outcome(call):
    try:
        return "ok", call()
    except mj.TemplateError as error:
        return type(error).__name__, str(error)


@pytest.mark.skipif(not (CORPUS / "templates").is_dir(), reason="chat-template corpus absent")
def test_corpus_renders_are_the_in_process_ones(iso):
    meta = json.loads((CORPUS / "template_meta.json").read_text(encoding="utf-8"))
    conversations = [
        json.loads(p.read_text(encoding="utf-8"))
        for p in sorted((CORPUS / "conversations").glob("*.json"))
    ]
    paths = sorted((CORPUS / "templates").glob("*.jinja"))[::10]
    compared = 0
    for path in paths:
        env = mj.chat_environment()
        env.globals["strftime_now"] = pinned_now
        template = env.from_string(path.read_text(encoding="utf-8"))
        info = meta.get(path.stem, {})
        for conversation in conversations:
            ctx = {"tools": None, "documents": None, "add_generation_prompt": False}
            ctx.update({k: info[k] for k in ("bos_token", "eos_token") if info.get(k)})
            ctx.update(info.get("extra") or {})
            ctx.update(conversation)
            expected = outcome(lambda t=template, c=ctx: t.render(c))
            assert outcome(lambda t=template, c=ctx: iso.render(t, c)) == expected, path.stem
            compared += 1
    assert compared == len(paths) * len(conversations) == 15 * 18


def test_chat_template_and_render_many(iso):
    chat = ChatTemplate.from_string(
        "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{% endfor %}"
        "{% if add_generation_prompt %}[assistant]{% endif %}",
        {"bos_token": "<s>"},
    )
    messages = [{"role": "user", "content": "Hi"}]
    assert iso.call(chat, "render", messages, add_generation_prompt=True) == (
        "<s>[user]Hi[assistant]"
    )
    wrapped = iso.wrap(chat)
    assert wrapped.render(messages) == chat.render(messages) == "<s>[user]Hi"
    assert wrapped.render_many([messages, messages * 2]) == ["<s>[user]Hi", "<s>[user]Hi[user]Hi"]


def test_errors_come_back_with_their_class_and_position(iso):
    template = mj.Template("line one\n{{ 1 / 0 }}")
    with pytest.raises(mj.TemplateRuntimeError) as caught:
        iso.render(template)
    assert (caught.value.message, caught.value.lineno, caught.value.colno) == (
        "division by zero",
        2,
        6,
    )
    with pytest.raises(ValueError, match="multiple chat templates with no default specified"):
        iso.call(ChatTemplate({"a": "x", "b": "y"}), "render", [])


def test_a_template_is_sent_once_and_cached_in_the_worker():
    target = CountingTarget()
    CountingTarget.pickled = 0
    with IsolatedRenderer(workers=1, timeout=BACKSTOP, cpu_timeout=CPU_SECONDS) as one:
        assert [one.call(target, "render") for _ in range(3)] == [1, 2, 3]
    assert CountingTarget.pickled == 1


def test_timeout_kills_the_worker_and_the_pool_goes_on(iso):
    env = mj.Environment()
    env.filters["hang"] = sleep_forever
    before = set(iso.pids)
    with pytest.raises(IsolationError) as caught:
        # a sleep of ten minutes outlasts a 3 s wall clock however busy the machine is
        iso.submit(env.from_string("{{ x|hang }}"), "render", (), {"x": 1}, timeout=3)
    assert caught.value.reason == "timeout"
    assert caught.value.message == (
        "the render ran longer than the timeout (3 s): its worker process was killed"
    )
    assert len(set(iso.pids) - before) == 1
    assert iso.render(mj.Template("{{ 6 * 7 }}")) == "42"


def test_memory_cap_stops_a_two_gib_allocation(iso):
    env = mj.Environment()
    env.filters["hog"] = allocate_two_gib
    before = set(iso.pids)
    with pytest.raises(mj.LimitError) as caught:
        iso.render(env.from_string("{{ x|hog }}"), x=1)
    assert caught.value.message == "out of memory"
    # a worker that met a MemoryError retires: its heap may be in any state
    assert len(set(iso.pids) - before) == 1
    assert iso.render(mj.Template("{{ 'ok' }}")) == "ok"


def test_segfault_costs_one_render(iso):
    env = mj.Environment()
    env.globals["crash"] = segfault
    with pytest.raises(IsolationError) as caught:
        iso.render(env.from_string("{{ crash() }}"))
    assert caught.value.reason == "crash"
    assert caught.value.message == (
        "the worker process was killed by SIGSEGV during the render"
        f" (its address space was capped at {CAP} bytes)"
    )
    assert iso.render(mj.Template("{{ 'still here' }}")) == "still here"


def test_exit_costs_one_render(iso):
    env = mj.Environment()
    env.globals["exit_now"] = exit_now
    with pytest.raises(IsolationError) as caught:
        iso.render(env.from_string("{{ exit_now(7) }}"))
    assert caught.value.message.startswith("the worker process exited with code 7 during")
    assert [iso.render(mj.Template("{{ i }}"), i=i) for i in range(4)] == ["0", "1", "2", "3"]


def test_cpu_timeout_kills_a_worker_that_keeps_working(iso):
    env = mj.Environment()
    env.filters["spin"] = spin_forever
    before = set(iso.pids)
    with pytest.raises(IsolationError) as caught:
        iso.submit(env.from_string("{{ x|spin }}"), "render", (), {"x": 1}, cpu_timeout=1)
    assert caught.value.reason == "timeout"
    assert caught.value.message == (
        "the render used more than its CPU time limit (1 s): its worker process was killed"
    )
    assert len(set(iso.pids) - before) == 1
    # the limit is per call: the next render has the whole of it again
    assert [iso.render(mj.Template("{{ i }}"), i=i) for i in range(3)] == ["0", "1", "2"]


def test_from_string_compiles_only_in_the_workers(iso):
    env = mj.Environment()
    env.filters["spin"] = spin_forever
    # a constant argument would be folded (the filter run) by a compile in this process
    template = iso.from_string("{{ 1|spin }}", env)
    with pytest.raises(IsolationError, match=r"used more than its CPU time limit \(1 s\)"):
        iso.submit(template.template, "render", cpu_timeout=1)
    assert iso.from_string("{{ 'a' ~ x }}").render(x=1) == "a1"
    with pytest.raises(mj.TemplateSyntaxError) as caught:
        iso.from_string("{% if %}").render()
    assert caught.value.lineno == 1


def test_isolation_error_is_a_template_error():
    assert issubclass(IsolationError, mj.TemplateRuntimeError)


def test_private_methods_are_not_callable(iso):
    with pytest.raises(ValueError, match="only public methods"):
        iso.call(mj.Template("x"), "_render", {}, False)


def test_closed_renderer_refuses():
    renderer = IsolatedRenderer(workers=1)
    renderer.close()
    with pytest.raises(RuntimeError, match="closed"):
        renderer.render(mj.Template("x"))


def _wait_until_taken(renderer: IsolatedRenderer) -> None:
    """Until the pool's one worker is taken by the render under way (bounded)."""
    for _ in range(BACKSTOP * 100):
        if not renderer._idle:
            return
        time.sleep(0.01)
    raise AssertionError("the render never took the worker")


def _bounded_join(thread: threading.Thread) -> None:
    thread.join(BACKSTOP)
    assert not thread.is_alive(), "a thread is still blocked"


def test_close_ends_the_render_under_way_and_the_waiting_callers():
    env = mj.Environment()
    env.filters["hang"] = sleep_forever
    renderer = IsolatedRenderer(workers=1, timeout=None, cpu_timeout=CPU_SECONDS)
    outcomes: dict[str, object] = {}

    def call(name: str, template: mj.Template) -> None:
        try:
            outcomes[name] = renderer.render(template, x=1)
        except (IsolationError, RuntimeError) as error:
            outcomes[name] = (type(error).__name__, getattr(error, "reason", None), str(error))

    rendering = threading.Thread(target=call, args=("rendering", env.from_string("{{ x|hang }}")))
    rendering.start()
    _wait_until_taken(renderer)
    waiting = threading.Thread(target=call, args=("waiting", mj.Template("{{ x }}")))
    waiting.start()
    time.sleep(0.2)  # (closed before it waits, it fails the same way)
    renderer.close()
    _bounded_join(rendering)
    _bounded_join(waiting)
    assert outcomes == {
        "rendering": (
            "IsolationError",
            "closed",
            "the IsolatedRenderer was closed during the render: its worker process was stopped",
        ),
        "waiting": ("RuntimeError", None, "the IsolatedRenderer is closed"),
    }
    assert renderer.pids == []


def test_close_wakes_every_waiter():
    env = mj.Environment()
    env.filters["hang"] = sleep_forever
    renderer = IsolatedRenderer(workers=1, timeout=None)
    errors: list[str] = []

    def call(template: mj.Template) -> None:
        try:
            renderer.render(template, x=1)
        except (IsolationError, RuntimeError) as error:
            errors.append(type(error).__name__)

    threads = [threading.Thread(target=call, args=(env.from_string("{{ x|hang }}"),))]
    threads[0].start()
    _wait_until_taken(renderer)
    threads += [threading.Thread(target=call, args=(mj.Template("{{ x }}"),)) for _ in range(4)]
    for thread in threads[1:]:
        thread.start()
    time.sleep(0.2)
    renderer.close()
    for thread in threads:
        _bounded_join(thread)
    assert sorted(errors) == ["IsolationError"] + ["RuntimeError"] * 4


def test_a_cap_too_small_to_start_a_worker_is_refused_with_the_minimum():
    from minijinja_py.isolation import MIN_MEMORY

    with pytest.raises(IsolationError) as caught:
        IsolatedRenderer(workers=1, max_memory_bytes=1 << 20)
    assert str(caught.value) == (
        "max_memory_bytes=1048576 is too small to start a worker: the address space of a "
        "worker needs at least 67108864 bytes (64 MiB)"
    )
    assert (caught.value.reason, MIN_MEMORY) == ("memory", 1 << 26)
    with pytest.raises(TypeError, match="max_memory_bytes must be an int"):
        IsolatedRenderer(workers=1, max_memory_bytes=1.5e9)


class _HugeOnLoad:
    """Unpickles into a 4 GiB buffer: past any cap the tests set."""

    def __reduce__(self):
        return (bytearray, (4 << 30,))


def test_a_target_that_cannot_load_under_the_cap_is_an_isolation_error(iso):
    with pytest.raises(IsolationError) as caught:
        iso.call(_HugeOnLoad(), "decode")
    assert caught.value.reason == "memory"
    assert str(caught.value) == (
        f"the worker could not load the template within its address-space cap of {CAP} "
        "bytes: MemoryError: "
    )
    assert iso.render(mj.Template("{{ 6 * 7 }}")) == "42"
