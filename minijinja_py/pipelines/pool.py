"""The process pool of the file drivers (`batch`, `parse`): chunks run in order on worker
processes, a pool made again when a worker dies, and a chunk whose worker died run again a row
at a time, so that one bad row never costs another."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, Protocol

__all__ = ["Piece", "WorkerPool", "run_in_order"]


class Piece(Protocol):
    """A chunk of rows (files.Lines or files.Rows): counted, and cut into rows."""

    def __len__(self) -> int: ...

    def slice(self, start: int, stop: int) -> Any: ...


class WorkerPool:
    """A process pool that is made again when a worker dies (`BrokenProcessPool`); each worker
    runs `initializer(*initargs)` once, then `function(chunk)` per chunk (files.py renders with
    it, response_files.py parses)."""

    def __init__(
        self,
        workers: int,
        initargs: tuple[Any, ...],
        initializer: Callable[..., None],
        function: Callable[[Any], Any],
    ) -> None:
        self.workers: int = workers
        self.initargs: tuple[Any, ...] = initargs
        self.initializer: Callable[..., None] = initializer
        self.function: Callable[[Any], Any] = function
        self.pool: Any = self._new()

    def _new(self) -> Any:
        from concurrent.futures import ProcessPoolExecutor

        return ProcessPoolExecutor(
            max_workers=self.workers, initializer=self.initializer, initargs=self.initargs
        )

    def submit(self, chunk: Any) -> Any:
        from concurrent.futures import Future

        try:
            return self.pool.submit(self.function, chunk)
        except Exception as exc:  # noqa: BLE001 - a pool broken since: this chunk's outcome
            failed: Future[Any] = Future()
            failed.set_exception(exc)
            return failed

    def renew(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.pool = self._new()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def run_in_order(
    pool: WorkerPool,
    chunks: Iterable[Piece],
    workers: int,
    deliver: Callable[[Any], None],
    dead: Callable[[Piece, Exception], Any],
) -> None:
    """Run `chunks` on `pool`, at most `2 * workers` in flight, and `deliver` their results in
    order; the rest of a chunk whose result stopped short (`consumed`) is submitted again first.
    A chunk whose worker dies or fails is run again a row at a time, each row alone in a fresh
    pool with nothing beside it, so that a row is given up (`dead`, its error row) only when it
    fails by itself. The pool is closed at the end."""
    window: deque[list[Any]] = deque()

    def rescue(chunk: Piece) -> None:
        pool.renew()
        for index in range(len(chunk)):
            one = chunk.slice(index, index + 1)
            try:
                done = pool.submit(one).result()
            except Exception as exc:  # noqa: BLE001 - it failed alone: its error row
                pool.renew()
                done = dead(one, exc)
            deliver(done)
        for entry in window:  # (the chunks in flight were cancelled with the pool)
            entry[1] = pool.submit(entry[0])

    def next_result() -> None:
        chunk, future = window[0]
        try:
            done = future.result()
        except Exception:  # noqa: BLE001 - a dead worker or a failure outside the rows
            window.popleft()
            rescue(chunk)
            return
        window.popleft()
        deliver(done)
        if done.consumed < len(chunk):
            rest = chunk.slice(done.consumed, len(chunk))
            window.appendleft([rest, pool.submit(rest)])

    try:
        for chunk in chunks:
            window.append([chunk, pool.submit(chunk)])
            while len(window) >= 2 * workers:
                next_result()
        while window:
            next_result()
    finally:
        pool.close()
