"""Rendering behind a hard wall: a pool of worker processes, each under an address-space cap, a
wall-clock kill and, if asked, a CPU-time kill.

The sandbox bounds what a template can do inside the interpreter; this module bounds what the
interpreter itself can do to its host.  A crash of CPython (a segfault), an allocation that runs
past the cap, a caller-registered filter that never returns: each costs one render and one
worker, which is replaced, never the calling process.

Anything picklable with methods to call can be rendered through the pool (a `Template`, a
`ChatTemplate`, or the caller's own object).  Each template is pickled once in the caller and
sent to a worker once; the worker keeps the compiled form for the renders that follow.
"""

from __future__ import annotations

import collections
import itertools
import os
import pickle
import signal
import subprocess
import sys
import threading
import weakref
from collections import OrderedDict
from multiprocessing.connection import Connection
from typing import Any

from .errors import TemplateRuntimeError, bounded_text

__all__ = ["IsolatedRenderer", "IsolatedTemplate", "IsolationError"]

DEFAULT_MEMORY = 1 << 30
#: The smallest address-space cap a worker is started under: an interpreter with the engine
#: imported maps about 20 MiB, the compiled build more, and a render needs room beside it.
MIN_MEMORY = 64 << 20
DEFAULT_TIMEOUT = 10.0
# Compiled templates a worker keeps (least recently used first out).
WORKER_CACHE = 64
_UNCACHED = 0


class _Default:
    """The type of "the renderer's own timeout" (None already means no timeout)."""


_DEFAULT = _Default()


class IsolationError(TemplateRuntimeError):
    """A render's worker process died, ran out of memory or ran past a timeout.

    `reason` is `"timeout"` (the wall clock or the CPU time), `"memory"`, `"crash"`, or
    `"closed"` (the renderer was closed during the render); the worker has been replaced
    (unless the renderer is closed).

    >>> issubclass(IsolationError, TemplateRuntimeError)
    True
    """

    reason: str = "crash"

    def __init__(self, message: str, reason: str = "crash") -> None:
        super().__init__(message)
        self.reason = reason

    def __reduce__(self) -> tuple[Any, ...]:
        # (a worker sends its own IsolationError back: the reason travels with the message)
        return (IsolationError, (self.message, self.reason))


# -- the worker side ---------------------------------------------------------------------------


def _cap_address_space(max_memory_bytes: int | None) -> None:
    if max_memory_bytes is None:
        return
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = max_memory_bytes if hard == resource.RLIM_INFINITY else min(hard, max_memory_bytes)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))


def _ran_out_of_memory(error: BaseException) -> bool:
    # The engine turns a MemoryError into a LimitError "from None": the original stays in
    # __context__.  A worker that met one is retired, since its heap may be in any state.
    seen = 0
    while error is not None and seen < 10:
        if isinstance(error, MemoryError):
            return True
        error = error.__cause__ or error.__context__
        seen += 1
    return False


def _load(payload: bytes, max_memory_bytes: int | None) -> Any:
    try:
        return pickle.loads(payload)
    except (MemoryError, ImportError, OSError) as error:
        # Unpickling imports the target's modules and builds it under the cap: what fails here
        # is the worker's room, not the template.
        described = bounded_text(error, 1000)
        raise IsolationError(
            f"the worker could not load the template within its address-space cap of "
            f"{max_memory_bytes} bytes: {type(error).__name__}: {described}",
            "memory",
        ) from error


def _worker_main(read_fd: int, write_fd: int, max_memory_bytes: int | None) -> None:
    # The parent's Ctrl-C is the parent's business: a worker is stopped by its pipe closing.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _cap_address_space(max_memory_bytes)
    conn = _Duplex(Connection(read_fd, writable=False), Connection(write_fd, readable=False))
    targets: OrderedDict[int, Any] = OrderedDict()
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        key, payload, method, args, kwargs, cpu_limit = request
        retire = False
        if cpu_limit is not None:
            # The kernel counts this process's CPU time and ends it with SIGPROF past the
            # limit: no Python code needs to run for it (a long C call is stopped too).
            signal.setitimer(signal.ITIMER_PROF, cpu_limit)
        try:
            if payload is not None:
                target = _load(payload, max_memory_bytes)
                if key != _UNCACHED:
                    targets[key] = target
                    while len(targets) > WORKER_CACHE:
                        targets.popitem(last=False)
            else:
                target = targets[key]
                targets.move_to_end(key)
            reply: tuple[str, Any] = ("ok", getattr(target, method)(*args, **kwargs))
        except BaseException as error:  # every outcome goes back to the caller, to re-raise
            retire = _ran_out_of_memory(error)
            error.__traceback__ = None
            reply = ("error", error)
        finally:
            if cpu_limit is not None:
                signal.setitimer(signal.ITIMER_PROF, 0)
        try:
            conn.send((*reply, retire))
        except BaseException as error:  # an unpicklable result or error, or no memory to pickle
            retire = retire or isinstance(error, MemoryError)
            described = bounded_text(error, 1000)  # str() of it may itself raise
            message = (
                f"the worker could not send the result back: {type(error).__name__}: {described}"
            )
            failure = IsolationError(message, "memory" if retire else "crash")
            conn.send(("error", failure, retire))
        if retire:
            return


# -- the caller side ---------------------------------------------------------------------------


class _Duplex:
    """Two one-way pipes as one connection (a worker's stdin and stdout stay free)."""

    def __init__(self, reader: Connection, writer: Connection) -> None:
        self.reader, self.writer = reader, writer

    def send(self, obj: Any) -> None:
        self.writer.send(obj)

    def recv(self) -> Any:
        return self.reader.recv()

    def poll(self, timeout: float | None) -> bool:
        return self.reader.poll(timeout)

    def close(self) -> None:
        self.reader.close()
        self.writer.close()


_BOOTSTRAP = (
    "import sys; sys.path[:0] = {path!r}; from minijinja_py.isolation import _worker_main; "
    "_worker_main({read}, {write}, {memory!r})"
)


class _Worker:
    """One worker: a fresh interpreter (never a fork of the caller, whose mappings would count
    against the cap and whose threads make forking unsafe) talking pickles over two pipes."""

    def __init__(self, max_memory_bytes: int | None) -> None:
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()
        code = _BOOTSTRAP.format(
            path=[p for p in sys.path if p],
            read=to_child_r,
            write=from_child_w,
            memory=max_memory_bytes,
        )
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", code],
                pass_fds=(to_child_r, from_child_w),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        finally:
            os.close(to_child_r)
            os.close(from_child_w)
        self.conn = _Duplex(
            Connection(from_child_r, writable=False), Connection(to_child_w, readable=False)
        )
        # The keys of the targets this worker holds, evicted in the worker's own order.
        self.known: OrderedDict[int, None] = OrderedDict()

    def remember(self, key: int) -> bool:
        """Whether the worker holds `key` already; afterwards it does."""
        if key == _UNCACHED:
            return False
        if key in self.known:
            self.known.move_to_end(key)
            return True
        self.known[key] = None
        while len(self.known) > WORKER_CACHE:
            self.known.popitem(last=False)
        return False

    def exitcode(self) -> int | None:
        try:
            return self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return None

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()

    def stop(self) -> None:
        self.kill()
        self.process.wait()
        self.conn.close()


def _describe_death(exitcode: int | None, cpu_limit: float | None) -> tuple[str, str]:
    if exitcode == -signal.SIGPROF and cpu_limit is not None:
        return (
            f"the render used more than its CPU time limit ({cpu_limit} s):"
            " its worker process was killed",
            "timeout",
        )
    if exitcode is None:
        return "the worker process stopped answering", "crash"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"the worker process was killed by {name} during the render", "crash"
    return f"the worker process exited with code {exitcode} during the render", "crash"


class IsolatedRenderer:
    """Render in a pool of capped worker processes.

    >>> with IsolatedRenderer(workers=1, max_memory_bytes=1 << 30, timeout=10) as iso:
    ...     iso.render(Template("Hello {{ name }}!"), name="World")
    'Hello World!'

    `iso.call(chat, "render", messages)` runs `chat.render(messages)` in a worker;
    `iso.wrap(chat).render_many(conversations)` does the same as an object.

    Results and errors are the in-process ones (a `TemplateError` raised in the worker is
    raised here, with its position); a worker that dies, exhausts its memory cap, runs past
    `timeout` seconds of wall-clock time or past `cpu_timeout` seconds of its own CPU time
    raises `IsolationError` and is replaced.  A CPU-time limit holds the same on a busy
    machine as on an idle one; give it a far larger wall-clock `timeout` as the backstop for a
    render that waits without working.  `max_memory_bytes` is at least `MIN_MEMORY` (64 MiB;
    a smaller cap is an `IsolationError` here, since no worker could start under it) or `None`.  Thread-safe: up to `workers` renders run at once, the
    others wait for a worker; `close` ends the renders under way and the waits with an
    error.
    """

    def __init__(
        self,
        workers: int = 2,
        *,
        max_memory_bytes: int | None = DEFAULT_MEMORY,
        timeout: float | None = DEFAULT_TIMEOUT,
        cpu_timeout: float | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError("workers must be at least 1")
        _check_memory(max_memory_bytes)
        self.max_memory_bytes = max_memory_bytes
        self.timeout = timeout
        self.cpu_timeout = cpu_timeout
        # The idle workers, and the condition that wakes a caller waiting for one: a worker
        # given back, or close() (which must never leave a waiter blocked).
        self._idle: collections.deque[_Worker] = collections.deque()
        self._workers: list[_Worker] = []
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)
        self._closed = False
        self._keys: weakref.WeakKeyDictionary[Any, tuple[int, bytes]] = weakref.WeakKeyDictionary()
        self._next_key = itertools.count(1)
        for _ in range(workers):
            self._add_worker()

    # lifecycle ---------------------------------------------------------------------------------

    def _add_worker(self) -> None:
        worker = _Worker(self.max_memory_bytes)
        with self._ready:
            if not self._closed:
                self._workers.append(worker)
                self._idle.append(worker)
                self._ready.notify()
                return
        worker.stop()  # closed while it started

    def _take(self) -> _Worker:
        """An idle worker, waiting for one; `RuntimeError` once the renderer is closed."""
        with self._ready:
            while not self._idle and not self._closed:
                self._ready.wait()
            if self._closed:
                raise RuntimeError("the IsolatedRenderer is closed")
            return self._idle.popleft()

    def _give_back(self, worker: _Worker) -> None:
        with self._ready:
            if not self._closed:
                self._idle.append(worker)
                self._ready.notify()
                return
        worker.stop()

    def _replace(self, worker: _Worker) -> None:
        worker.stop()
        with self._ready:
            if worker in self._workers:
                self._workers.remove(worker)
            closed = self._closed
        if not closed:
            self._add_worker()

    def close(self) -> None:
        """Stop every worker; the renderer cannot be used afterwards.

        A render under way in another thread ends with `IsolationError` (reason
        `"closed"`); a call waiting for a worker raises `RuntimeError`.
        """
        with self._ready:
            self._closed = True
            workers, self._workers = self._workers, []
            idle = set(self._idle)
            self._idle.clear()
            self._ready.notify_all()
        for worker in workers:
            if worker in idle:
                worker.stop()
            else:
                # Busy: its caller's thread reads its pipe, and closes it when the read fails.
                worker.kill()

    def __enter__(self) -> IsolatedRenderer:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __del__(self) -> None:
        if not getattr(self, "_closed", True):
            self.close()

    # rendering ---------------------------------------------------------------------------------

    def render(self, template: Any, /, *args: Any, **kwargs: Any) -> str:
        """`template.render(*args, **kwargs)` in a worker."""
        return self.call(template, "render", *args, **kwargs)

    def from_string(self, source: str, environment: Any = None) -> IsolatedTemplate:
        """A template compiled only in the workers: hostile source never compiles here.

        `environment` defaults to the chat preset; a syntax error is raised by the first
        render.
        """
        return IsolatedTemplate(self, _CompiledInWorker(source, environment))

    def wrap(self, template: Any) -> IsolatedTemplate:
        """An object whose `render`/`render_many` run `template`'s in this pool."""
        return IsolatedTemplate(self, template)

    def call(self, target: Any, method: str, /, *args: Any, **kwargs: Any) -> Any:
        """`getattr(target, method)(*args, **kwargs)` in a worker; `target` is sent once."""
        return self.submit(target, method, args, kwargs)

    def submit(
        self,
        target: Any,
        method: str,
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
        *,
        timeout: float | None | _Default = _DEFAULT,
        cpu_timeout: float | None | _Default = _DEFAULT,
    ) -> Any:
        """`call` with the arguments as values, and a `timeout` (wall clock) or a
        `cpu_timeout` (the worker's CPU time) for this call only."""
        kwargs = kwargs or {}
        limit = self.timeout if isinstance(timeout, _Default) else timeout
        cpu_limit = self.cpu_timeout if isinstance(cpu_timeout, _Default) else cpu_timeout
        if method.startswith("_"):
            raise ValueError(f"only public methods can be called in a worker, not {method!r}")
        if self._closed:
            raise RuntimeError("the IsolatedRenderer is closed")
        key, payload = self._identify(target)
        worker = self._take()
        retired = False
        try:
            cached = worker.remember(key)
            request = (key, None if cached else payload, method, args, kwargs, cpu_limit)
            answered = False
            try:
                worker.conn.send(request)
                answered = worker.conn.poll(limit)
                if answered:
                    status, value, retired = worker.conn.recv()
            except (EOFError, OSError):
                raise self._death(worker, cpu_limit) from None
            if not answered:
                raise IsolationError(
                    f"the render ran longer than the timeout ({limit} s):"
                    " its worker process was killed",
                    "timeout",
                )
        except BaseException:
            retired = True
            raise
        finally:
            if retired:
                self._replace(worker)
            else:
                self._give_back(worker)
        if status == "ok":
            return value
        raise value

    def _death(self, worker: _Worker, cpu_limit: float | None) -> IsolationError:
        """The error of a render whose worker stopped answering."""
        if self._closed:
            return IsolationError(
                "the IsolatedRenderer was closed during the render: its worker process was stopped",
                "closed",
            )
        message, reason = _describe_death(worker.exitcode(), cpu_limit)
        if self.max_memory_bytes is not None and reason == "crash":
            message += f" (its address space was capped at {self.max_memory_bytes} bytes)"
        return IsolationError(message, reason)

    def _identify(self, target: Any) -> tuple[int, bytes]:
        try:
            found = self._keys.get(target)
        except TypeError:  # not weak-referenceable: sent with every call, never cached
            return _UNCACHED, pickle.dumps(target)
        if found is None:
            found = (next(self._next_key), pickle.dumps(target))
            self._keys[target] = found
        return found

    @property
    def pids(self) -> list[int]:
        """The process ids of the current workers."""
        with self._lock:
            return [w.process.pid for w in self._workers]


def _check_memory(max_memory_bytes: Any) -> None:
    # Under the minimum a worker fails wherever its next allocation falls (a bare MemoryError,
    # OSError or ImportError of the compiled build): refused here, with the number to use.
    if max_memory_bytes is None:
        return
    if isinstance(max_memory_bytes, bool) or not isinstance(max_memory_bytes, int):
        raise TypeError(
            "max_memory_bytes must be an int (bytes) or None, not "
            f"{type(max_memory_bytes).__name__}"
        )
    if max_memory_bytes < MIN_MEMORY:
        raise IsolationError(
            f"max_memory_bytes={max_memory_bytes} is too small to start a worker: the address "
            f"space of a worker needs at least {MIN_MEMORY} bytes ({MIN_MEMORY >> 20} MiB)",
            "memory",
        )


class _CompiledInWorker:
    """A template's source and environment; compiled on first use, in whichever process."""

    def __init__(self, source: str, environment: Any = None) -> None:
        self.source = source
        self.environment = environment
        self._template: Any = None

    def __reduce__(self) -> Any:
        return (_CompiledInWorker, (self.source, self.environment))

    def _compiled(self) -> Any:
        if self._template is None:
            environment = self.environment
            if environment is None:
                from .environment import chat_environment

                environment = chat_environment()
            self._template = environment.from_string(self.source)
        return self._template

    def render(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled().render(*args, **kwargs)

    def render_with_spans(self, *args: Any, **kwargs: Any) -> Any:
        return self._compiled().render_with_spans(*args, **kwargs)


class IsolatedTemplate:
    """A template whose renders run in an `IsolatedRenderer`'s workers.

    >>> with IsolatedRenderer(workers=1, timeout=10) as iso:
    ...     iso.wrap(Template("{{ x * 2 }}")).render(x=21)
    '42'
    """

    def __init__(self, renderer: IsolatedRenderer, template: Any) -> None:
        self.renderer = renderer
        self.template = template

    def render(self, *args: Any, **kwargs: Any) -> Any:
        return self.renderer.call(self.template, "render", *args, **kwargs)

    def render_many(self, *args: Any, **kwargs: Any) -> Any:
        return self.renderer.call(self.template, "render_many", *args, **kwargs)

    def __repr__(self) -> str:
        return f"<IsolatedTemplate {self.template!r}>"
