"""The sweep runner: Ray returns exactly the serial results, in job order; job errors keep their
type; bad backends, unreachable clusters and a missing Ray are bad input."""

from __future__ import annotations

import math
import sys

import pytest
from rlcc.errors import BadInputError
from rlcc.simulator import AllToAll, Dcqcn, ManyToOne, Scenario, Swift, simulate
from rlcc.simulator.sweep import run_jobs

ray = pytest.importorskip("ray")
# Workers unpickle ``metrics_job`` by value: they need not import this test file by its name.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])

CONTROLLERS = {"swift": Swift, "dcqcn": Dcqcn}
WALL_CLOCK = ("wall_s", "sim_speed")


def metrics_job(job: tuple[Scenario | dict, str]) -> dict[str, float]:
    """One simulation's metrics without the wall-clock keys (NaN as a string: NaN != NaN)."""
    scenario, controller = job
    if isinstance(scenario, dict):
        scenario = Scenario.from_dict(scenario)
    m = simulate(scenario, CONTROLLERS[controller]()).metrics
    return {k: ("nan" if math.isnan(v) else v) for k, v in m.items() if k not in WALL_CLOCK}


# The longest job first, so on 2 workers results arrive out of job order.
JOBS = [
    (ManyToOne(flows=8, duration_ms=0.6, seed=3), "swift"),
    (ManyToOne(flows=8, duration_ms=0.3, seed=0), "swift"),
    (ManyToOne(flows=8, duration_ms=0.3, seed=1), "dcqcn"),
    (AllToAll(hosts=4, duration_ms=0.3, seed=0), "swift"),
    (AllToAll(hosts=4, duration_ms=0.3, seed=2), "dcqcn"),
    (ManyToOne(flows=16, duration_ms=0.3, seed=1), "dcqcn"),
]
BAD_JOB = ({"kind": "many-to-one", "flows": 0}, "swift")


@pytest.fixture
def no_ray_left():
    """Every test starts and ends without a Ray in this process."""
    ray.shutdown()
    yield
    ray.shutdown()


def test_serial_runs_the_jobs_in_order():
    out = run_jobs(metrics_job, JOBS[:2], progress=False)
    assert out == [metrics_job(JOBS[0]), metrics_job(JOBS[1])]
    assert out[0] != out[1]


@pytest.mark.slow
def test_ray_equals_serial_exactly(no_ray_left):
    serial = run_jobs(metrics_job, JOBS, backend="serial", progress=False)
    on_ray = run_jobs(metrics_job, JOBS, backend="ray", num_cpus=2, progress=False)
    assert on_ray == serial
    assert len({tuple(sorted(m.items())) for m in serial}) == len(JOBS)  # the jobs differ: order matters
    assert all(m["goodput"] > 0 for m in serial)
    assert not ray.is_initialized()  # the Ray this call started is shut down


@pytest.mark.slow
def test_job_errors_keep_their_type_on_ray_and_a_running_ray_is_reused(no_ray_left):
    with pytest.raises(BadInputError, match="flows"):
        run_jobs(metrics_job, [BAD_JOB], backend="serial", progress=False)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    with pytest.raises(BadInputError, match="flows") as info:
        run_jobs(metrics_job, [JOBS[1], BAD_JOB, JOBS[2]], backend="ray", progress=False)
    assert "RayTaskError" not in type(info.value).__name__
    assert ray.is_initialized()  # not started by run_jobs: left running
    assert run_jobs(metrics_job, JOBS[1:3], backend="ray", progress=False) == run_jobs(metrics_job, JOBS[1:3])


def test_bad_backend():
    with pytest.raises(BadInputError, match="unknown backend 'dask'"):
        run_jobs(metrics_job, JOBS, backend="dask")


def test_unreachable_cluster_is_bad_input_in_one_line(no_ray_left):
    with pytest.raises(BadInputError, match=r"cannot connect to Ray at 127\.0\.0\.1:1: ") as info:
        run_jobs(metrics_job, JOBS, backend="ray", address="127.0.0.1:1")
    assert "\n" not in str(info.value)
    assert not ray.is_initialized()


def test_missing_ray_is_bad_input(monkeypatch, no_ray_left):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(BadInputError, match=r"pip install 'rlcc\[ray\]'"):
        run_jobs(metrics_job, JOBS, backend="ray")
