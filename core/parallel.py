"""The one runner of independent tasks over worker processes (``rlcc.parallel``).

The stages that scale with cores map a function over independent tasks: the compile's closed-loop
simulations, the mutants of a firmware, the prover's output queries, a simulator suite.
``Runner.map`` returns the results in task order, each computed by the same code as in-process
(``jobs == 1``), so outputs do not depend on the number of jobs.

Each task runs in a process forked for it, at most ``jobs`` at a time. Forking per task is what
lets a task see the parent's state as it was when the task started (the prover hands each proven
output to the queries started after it, as facts held in z3 terms that cannot be pickled), kill a
task that overruns its ``timeout`` alone, and leave nothing to shut down between calls. With
``pickled=True`` (the default) the function and the task still cross into the child through
pickle, as to a fresh process: an object holding a native session (ONNX Runtime) builds its own
from its pickled state instead of using the parent's, whose threads a fork does not copy.
Without ``fork`` (not Linux or macOS) tasks run in-process.

Workers ignore Ctrl-C (the parent reports it once) and are killed when ``map`` leaves by an
error, Ctrl-C or SIGTERM (the CLI turns SIGTERM into an exception). A task that raises re-raises
its own exception in the parent (a ``BadInputError`` still exits 3) after the others are killed.
"""

from __future__ import annotations

import multiprocessing as mp
import multiprocessing.connection as mp_connection
import os
import pickle
import signal
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from rlcc.progress import Stage

T = TypeVar("T")
R = TypeVar("R")

_POLL_S = 0.5  # the longest the parent waits without checking timeouts (keeps Ctrl-C responsive)


class TaskLost(RuntimeError):
    """A task's process died without a result (killed, out of memory) or ran past its timeout."""


class TaskTimeout(TaskLost, TimeoutError):
    """A task ran past the ``timeout`` of its ``map``."""


def available_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_jobs() -> int:
    """The CPUs this process may run on, at most 8 (a compile has about 20 parallel runs)."""
    return max(1, min(8, available_cpus()))


def can_fork() -> bool:
    return "fork" in mp.get_all_start_methods()


class Runner:
    """``map(fn, items)`` in-process (``jobs == 1``) or over up to ``jobs`` forked processes."""

    def __init__(self, jobs: int = 1) -> None:
        if jobs < 1:
            raise ValueError("jobs must be >= 1")
        self.jobs = jobs

    def map(
        self,
        fn: Callable[[T], R],
        items: Iterable[T],
        costs: Sequence[float] | None = None,
        stage: Stage | None = None,
        on_done: Callable[[int, R], None] | None = None,
        timeout: float | None = None,
        lost: Callable[[T, TaskLost], R] | None = None,
        pickled: bool = True,
    ) -> list[R]:
        """``[fn(x) for x in items]``.

        ``costs`` (estimated work of each item, e.g. simulated ms) order the start, largest first,
        so the workers finish together, and advance ``stage`` as items finish. ``on_done(i, r)``
        runs in the parent as item ``i`` finishes, before the next item starts (so that item's
        process inherits what it recorded). ``timeout``: seconds a task may run in its process
        (in-process tasks run to their end); a task over it, or whose process dies, is
        ``lost(item, error)`` (default: raise the ``TaskLost``). ``pickled``: see the module doc; False for closures over unpicklable state.
        """
        items = list(items)
        costs = [1.0] * len(items) if costs is None else [float(c) for c in costs]
        if len(costs) != len(items):
            raise ValueError("one cost per item")
        stage = stage or Stage()
        stage.add(sum(costs))
        order = sorted(range(len(items)), key=lambda i: -costs[i])
        results: dict[int, R] = {}

        def finish(i: int, r: R) -> None:
            results[i] = r
            if on_done is not None:
                on_done(i, r)
            stage.advance(costs[i])

        if self.jobs == 1 or len(items) < 2 or not can_fork():
            for i in range(len(items)):
                finish(i, fn(items[i]))
        else:
            _in_processes(fn, items, order, self.jobs, finish, timeout, lost, pickled)
        return [results[i] for i in range(len(items))]


def run_all(runner: Runner | None, fn: Callable[[T], R], items: Iterable[T], **kwargs: Any) -> list[R]:
    """``runner.map`` or, without a runner, the same in-process."""
    return (runner or Runner(1)).map(fn, list(items), **kwargs)


def _in_processes(fn: Callable[[T], R], items: list[T], order: list[int], jobs: int, finish: Callable[[int, R], None],
                  timeout: float | None, lost: Callable[[T, TaskLost], R] | None, pickled: bool) -> None:
    ctx = mp.get_context("fork")
    pending = list(order)
    running: dict[Any, tuple[int, Any, float]] = {}  # receiving end -> (item, process, deadline)
    try:
        while pending or running:
            while pending and len(running) < jobs:
                i = pending.pop(0)
                recv, send = ctx.Pipe(duplex=False)
                # not a daemon: a task may run its own processes (a mutant's proof)
                proc = ctx.Process(target=_child, args=(fn, items[i], pickled, send))
                proc.start()
                send.close()
                running[recv] = (i, proc, time.monotonic() + timeout if timeout is not None else float("inf"))
            soonest = min(d for _, _, d in running.values())
            ready = mp_connection.wait(list(running), timeout=max(0.0, min(_POLL_S, soonest - time.monotonic())))
            for recv in ready:
                i, proc, _ = running.pop(recv)
                try:
                    ok, value = recv.recv()
                except (EOFError, OSError):
                    ok, value = False, TaskLost(f"task {i}: its process died (exit code {proc.exitcode})")
                recv.close()
                proc.join()
                if not ok and isinstance(value, TaskLost) and lost is not None:
                    ok, value = True, lost(items[i], value)
                if not ok:
                    raise value
                finish(i, value)
            now = time.monotonic()
            for recv in [r for r, (_, _, d) in running.items() if d <= now]:
                i, proc, _ = running.pop(recv)
                _kill(proc)
                recv.close()
                err = TaskTimeout(f"task {i}: over its {timeout:g} s timeout")
                if lost is None:
                    raise err
                finish(i, lost(items[i], err))
    finally:
        for recv, (_, proc, _) in running.items():
            _kill(proc)
            recv.close()


def _kill(proc: Any) -> None:
    if proc.is_alive():
        proc.kill()
    proc.join()


def _child(fn: Callable[[Any], Any], item: Any, pickled: bool, send: Any) -> None:
    # Ctrl-C is the parent's to report; SIGTERM ends a worker at once, whatever handler it
    # inherited (the CLI's turns SIGTERM into an exception)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        if pickled:
            fn, item = pickle.loads(pickle.dumps((fn, item)))
        out: tuple[bool, Any] = (True, fn(item))
    except BaseException as exc:  # noqa: BLE001 - every failure is the parent's to raise
        out = (False, exc)
    try:
        send.send(out)
    except Exception as exc:  # an unpicklable result or exception: say so, in one line
        send.send((False, RuntimeError(f"{type(out[1]).__name__} from a worker cannot be pickled: {exc}")))
    send.close()
