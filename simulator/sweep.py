"""Run a list of independent jobs (a suite's simulations) in this process or on Ray.

``run_jobs(fn, jobs)`` is ``[fn(j) for j in jobs]``, computed serially or as one Ray task per job
(a local Ray on this machine's cores, or a cluster by address). Results come back in job order
whatever order the tasks finish in, and each job must carry everything its result depends on,
its own seed included (``ManyToOne(..., seed=s)``): nothing depends on which worker runs a job or
when, so the serial and Ray backends return equal results (``tests/simulator/test_sweep.py``).

On Ray, ``fn`` and the jobs travel pickled (cloudpickle), so both must be picklable: ``fn`` a
module-level function of an installed module (``rlcc.simulator....``, which workers import by
name; a script's ``__main__`` functions travel by value; a module the workers cannot import fails
with ``No module named ...`` unless registered with ``ray.cloudpickle.register_pickle_by_value``),
jobs plain data (scenario dataclasses, dicts, names), no lambdas or open sessions. A job that
raises re-raises its own exception here (a ``BadInputError`` in a job still exits 3), after the
remaining tasks are cancelled. The serial backend is ``rlcc.parallel.Runner``, the runner of the
compile's simulations, the mutants and the prover; ``RayRunner`` is the same ``map`` on Ray.
"""

from __future__ import annotations

import logging
import signal
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from rlcc.errors import BadInputError
from rlcc.parallel import Runner, available_cpus

J = TypeVar("J")
R = TypeVar("R")

BACKENDS = ("serial", "ray")
CONNECT_TIMEOUT_S = 5.0  # a cluster address that does not answer a TCP connect in this time is refused


def run_jobs(
    fn: Callable[[J], R],
    jobs: Sequence[J],
    backend: str = "serial",
    address: str | None = None,
    num_cpus: int | None = None,
    progress: bool | None = None,
    desc: str = "suite",
) -> list[R]:
    """``[fn(j) for j in jobs]`` on ``backend`` ("serial" or "ray"), in job order.

    Ray: ``address`` connects to a running cluster ("auto", "HOST:PORT", "ray://HOST:10001");
    without it a local Ray with ``num_cpus`` workers (default: the CPUs this process may use) is
    started and shut down at the end. A Ray this process had already initialized is reused and
    left running. ``progress``: a tqdm bar on stderr, advanced as results arrive (None: only
    when stderr is a TTY). ``desc`` labels the bar.
    """
    if backend not in BACKENDS:
        raise BadInputError(f"unknown backend {backend!r} (use one of: {', '.join(BACKENDS)})")
    jobs = list(jobs)
    if not jobs:
        return []
    if progress is None:
        progress = sys.stderr.isatty()
    runner = Runner(1) if backend == "serial" else RayRunner(address, num_cpus)
    with _bar(progress, len(jobs), desc) as advance:
        return runner.map(fn, jobs, on_done=lambda _i, _r: advance())


class RayRunner:
    """``rlcc.parallel.Runner.map`` on Ray (see ``run_jobs`` for ``address`` and ``num_cpus``)."""

    def __init__(self, address: str | None = None, num_cpus: int | None = None) -> None:
        self.address, self.num_cpus = address, num_cpus

    def map(self, fn: Callable[[J], R], items: Sequence[J], on_done: Callable[[int, R], None] | None = None) -> list[R]:
        """``[fn(x) for x in items]``, one Ray task each; ``on_done(i, r)`` as results arrive."""
        return _run_ray(fn, list(items), self.address, self.num_cpus, on_done or (lambda _i, _r: None))


@contextmanager
def _bar(show: bool, total: int, desc: str) -> Iterator[Callable[[], None]]:
    if not show or total == 0:
        yield lambda: None
        return
    from tqdm import tqdm

    bar = tqdm(total=total, desc=desc, unit="run", file=sys.stderr, leave=False, dynamic_ncols=True)
    try:
        yield lambda: bar.update(1)
    finally:
        bar.close()


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as e:
        raise BadInputError(f"the ray backend needs Ray: pip install 'rlcc[ray]' ({e})") from None
    return ray


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _check_reachable(address: str) -> None:
    """Refuse a HOST:PORT that does not accept a TCP connection, before ``ray.init`` (which
    retries an unreachable GCS for minutes)."""
    hostport = address.split("://", 1)[-1].rsplit("/", 1)[0]
    host, sep, port = hostport.rpartition(":")
    if not sep or not port.isdigit():
        return  # "auto" and the like: Ray answers those at once
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as e:
        raise BadInputError(f"cannot connect to Ray at {address}: {_first_line(e) or 'no answer'}") from None


@contextmanager
def _keep_sigterm() -> Iterator[None]:
    """``ray.init`` installs its own SIGTERM handler (``sys.exit``); keep the caller's (the CLI
    turns SIGTERM into an exception that runs its cleanups)."""
    main = threading.current_thread() is threading.main_thread()
    previous = signal.getsignal(signal.SIGTERM) if main else None
    try:
        yield
    finally:
        if main and previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _init_ray(ray: Any, address: str | None, num_cpus: int | None) -> bool:
    """Connect or start Ray; True when this call started it (and must shut it down)."""
    if ray.is_initialized():
        return False
    quiet = dict(log_to_driver=False, logging_level=logging.ERROR, configure_logging=True)
    with _keep_sigterm():
        if address:
            _check_reachable(address)
            try:
                ray.init(address=address, **quiet)
            except Exception as e:  # ConnectionError, ray[client] missing (ValueError), ...
                raise BadInputError(f"cannot connect to Ray at {address}: {_first_line(e)}") from None
        else:
            if num_cpus is not None and num_cpus < 1:
                raise BadInputError(f"num_cpus must be >= 1, got {num_cpus}")
            ray.init(address="local", num_cpus=num_cpus or available_cpus(), include_dashboard=False, **quiet)
    return True


def _apply(fn: Callable[[J], R], job: J) -> R:
    return fn(job)


def _run_ray(fn: Callable[[J], R], jobs: list[J], address: str | None, num_cpus: int | None,
             on_done: Callable[[int, R], None]) -> list[R]:
    ray = _import_ray()
    started = _init_ray(ray, address, num_cpus)
    pending: list[Any] = []
    try:
        task = ray.remote(_apply)
        fn_ref = ray.put(fn)
        refs = [task.remote(fn_ref, job) for job in jobs]
        index = {ref: i for i, ref in enumerate(refs)}
        results: list[Any] = [None] * len(jobs)
        pending = list(refs)
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            for ref in ready:
                i = index[ref]
                results[i] = _get(ray, ref)
                on_done(i, results[i])
        return results
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
        if started:
            ray.shutdown()


def _get(ray: Any, ref: Any) -> Any:
    """The task's value, or its own exception (unwrapped from Ray's ``RayTaskError``)."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as e:
        cause = getattr(e, "cause", None)
        if isinstance(cause, Exception):
            raise cause from e
        raise
