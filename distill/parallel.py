"""Independent simulations of a compile, spread over worker processes.

Each closed-loop simulation is single-threaded Python and numpy, and the compile runs dozens
of independent ones (sampling scenarios, on-policy incasts, the teacher / float-tree /
fixed-point checks), so they are the part that scales with cores. ``Runner.map`` returns
results in the order of its items and every item is computed by the same code as in-process,
so outputs do not depend on the number of jobs. Workers are forked on Linux (fast, and any
calling script works without a ``__main__`` guard; every task's inputs still arrive pickled, so a
worker builds its own ONNX Runtime session) and spawned elsewhere. They ignore Ctrl-C (the
parent reports it once) and are killed when the runner closes, also on an error, Ctrl-C or
SIGTERM.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import queue
import signal
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from rlcc.progress import Stage

T = TypeVar("T")
R = TypeVar("R")


def default_jobs() -> int:
    """The CPUs this process may run on (at most 8: a compile has about 20 parallel runs)."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(8, n))


def _put(q: queue.Queue, i: int, ok: bool, value: Any) -> None:
    q.put((i, ok, value))


def _worker_signals() -> None:
    """Ctrl-C is the parent's to report; SIGTERM (``close``) ends a worker at once, whatever
    handler a forked worker inherited (the CLI's turns SIGTERM into an exception)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


class Runner:
    """``map(fn, items)`` in-process (``jobs == 1``) or over ``jobs`` worker processes.

    ``fn`` and the items must be picklable for ``jobs > 1`` (module-level functions,
    ``functools.partial`` of classes, dataclasses). ``close`` it when done.
    """

    def __init__(self, jobs: int = 1) -> None:
        if jobs < 1:
            raise ValueError("jobs must be >= 1")
        self.jobs = jobs
        self._pool: Any = None

    def close(self) -> None:
        """Stop the workers (running tasks are killed: nothing is waited for)."""
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None

    def _workers(self) -> Any:
        if self._pool is None:
            ctx = multiprocessing.get_context("fork" if sys.platform == "linux" else "spawn")
            self._pool = ctx.Pool(self.jobs, initializer=_worker_signals)
        return self._pool

    def map(
        self,
        fn: Callable[[T], R],
        items: Sequence[T],
        costs: Sequence[float] | None = None,
        stage: Stage | None = None,
    ) -> list[R]:
        """``[fn(x) for x in items]``. ``costs`` (estimated work of each item, e.g. simulated ms)
        order the submission, largest first, so the workers finish together, and advance
        ``stage`` as items finish."""
        items = list(items)
        costs = [1.0] * len(items) if costs is None else [float(c) for c in costs]
        stage = stage or Stage()
        stage.add(sum(costs))
        if self.jobs == 1 or len(items) < 2:
            out = []
            for x, c in zip(items, costs):
                out.append(fn(x))
                stage.advance(c)
            return out
        order = sorted(range(len(items)), key=lambda i: -costs[i])
        pool = self._workers()
        finished: queue.Queue = queue.Queue()
        for i in order:
            pool.apply_async(fn, (items[i],), callback=functools.partial(_put, finished, i, True),
                             error_callback=functools.partial(_put, finished, i, False))
        results: dict[int, R] = {}
        while len(results) < len(items):
            try:
                i, ok, value = finished.get(timeout=0.5)  # a timeout keeps Ctrl-C / SIGTERM responsive
            except queue.Empty:
                continue
            if not ok:
                raise value  # the worker's exception (BadInputError etc.), as in-process
            results[i] = value
            stage.advance(costs[i])
        return [results[i] for i in range(len(items))]


def run_all(runner: Runner | None, fn: Callable[[T], R], items: Iterable[T], **kwargs: Any) -> list[R]:
    """``runner.map`` or, without a runner, the same in-process."""
    return (runner or Runner(1)).map(fn, list(items), **kwargs)
