"""rlcc.parallel.Runner: results in item order whatever the jobs, a task's error is raised as
itself, a task over its timeout or whose process dies is lost (or given a fallback), callbacks
run in the parent, and no worker outlives ``map``."""

from __future__ import annotations

import os
import signal
import time

import pytest

from rlcc.errors import BadInputError
from rlcc.parallel import Runner, TaskLost, TaskTimeout, run_all


def _square_slowly(x: int) -> int:
    time.sleep(0.05 * (x % 3))  # finish out of order
    return x * x


def _fail_on_3(x: int) -> int:
    if x == 3:
        raise BadInputError(f"bad item {x}")
    return x


def _sleep(x: float) -> float:
    time.sleep(x)
    return x


def _fail_or_sleep(x: float) -> float:
    if x < 0:
        raise BadInputError("negative")
    time.sleep(x)
    return x


def _die(x: int) -> int:
    if x == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    return x


def _pid(_x: int) -> int:
    return os.getpid()


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_results_in_item_order_for_any_jobs(jobs):
    items = list(range(9))
    assert Runner(jobs).map(_square_slowly, items) == [x * x for x in items]
    assert Runner(jobs).map(_square_slowly, items, costs=[1, 9, 2, 8, 3, 7, 4, 6, 5]) == [x * x for x in items]
    assert run_all(None, _square_slowly, items) == [x * x for x in items]


def test_tasks_run_in_other_processes_with_jobs():
    assert os.getpid() not in Runner(2).map(_pid, range(4))
    assert set(Runner(1).map(_pid, range(4))) == {os.getpid()}


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_task_error_surfaces_as_that_exception(jobs):
    with pytest.raises(BadInputError, match="bad item 3"):
        Runner(jobs).map(_fail_on_3, range(6))


def test_on_done_runs_in_the_parent_before_later_tasks_start():
    """A task started after another finished sees what ``on_done`` recorded (forked state)."""
    seen: list[int] = []

    def task(x: int) -> int:
        return len(seen)  # read in the child, as the parent held it at the fork

    out = Runner(2).map(task, range(6), on_done=lambda i, r: seen.append(i), pickled=False)
    assert sorted(seen) == list(range(6))
    assert out[:2] == [0, 0] and all(out[k] >= 1 for k in range(2, 6))


def test_a_task_over_its_timeout_is_killed_and_lost():
    t0 = time.monotonic()
    with pytest.raises(TaskTimeout):
        Runner(2).map(_sleep, [0.0, 30.0], timeout=1.0)
    assert time.monotonic() - t0 < 10
    out = Runner(2).map(_sleep, [0.0, 30.0, 0.1], timeout=1.0, lost=lambda x, err: -1.0)
    assert out == [0.0, -1.0, 0.1]


def test_a_dead_worker_is_lost_not_hung():
    with pytest.raises(TaskLost, match="died"):
        Runner(2).map(_die, range(3))
    assert Runner(2).map(_die, range(3), lost=lambda x, err: None) == [0, None, 2]


def test_unpicklable_closures_need_pickled_false():
    lock_free = [5]
    assert Runner(2).map(lambda x: x + lock_free[0], range(3), pickled=False) == [5, 6, 7]
    with pytest.raises(Exception):
        Runner(2).map(lambda x: x, range(3))  # a lambda does not pickle: the error is raised here


def test_no_worker_outlives_an_error():
    import multiprocessing

    t0 = time.monotonic()
    with pytest.raises(BadInputError):
        Runner(3).map(_fail_or_sleep, [30.0, -1.0, 30.0])
    assert time.monotonic() - t0 < 10 and multiprocessing.active_children() == []


def test_jobs_must_be_positive():
    with pytest.raises(ValueError):
        Runner(0)


def _signal_handlers(_x: int) -> tuple[bool, bool]:
    return signal.getsignal(signal.SIGINT) is signal.SIG_IGN, signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_ctrl_c_in_the_parent_kills_the_workers():
    import multiprocessing

    def interrupt(_i: int, _r: float) -> None:
        raise KeyboardInterrupt

    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        Runner(3).map(_sleep, [0.0, 30.0, 30.0], on_done=interrupt)
    assert time.monotonic() - t0 < 10 and multiprocessing.active_children() == []


def test_workers_leave_ctrl_c_to_the_parent_and_die_on_sigterm():
    previous = signal.signal(signal.SIGTERM, lambda *_: None)  # as the CLI turns SIGTERM into an exception
    try:
        assert Runner(2).map(_signal_handlers, range(2)) == [(True, True)] * 2
    finally:
        signal.signal(signal.SIGTERM, previous)
