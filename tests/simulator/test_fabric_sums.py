"""The fabric's per-host sums in a defined order (``fabric.host_sums``) against the BLAS product
they replaced (``host_scale @ host_queue_rate``, the oracle here): the same sums up to float
rounding, and runs that stay within a stated bound of the old ones.

Why the order changed: a BLAS product sums in an order of its own (blocking, SIMD lanes), which
the C block loop cannot reproduce; ``np.bincount`` adds in host order from 0.0, which C can.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from rlcc.simulator import AllToAll, PolicyController, TopologyConfig, make_controller, simulate
from rlcc.simulator import fabric as fabric_mod
from rlcc.simulator.blocks import BlockLoop
from rlcc.simulator.fabric import host_sums
from sim_identity import blas_order_refresh

# Relative bound of a sum of n products against any other order: n x eps x sum |terms|
# (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., section 4.2).
EPS = np.finfo(np.float64).eps
POLICY = str(Path(__file__).resolve().parents[2] / "examples" / "rlcc_mlp.onnx")
RUN_BOUND = 1e-9  # runs: relative to each array's largest magnitude (measured at 1 ms: <= 9e-14, HPCC)


def test_host_sums_add_in_host_order_from_zero():
    rng = np.random.default_rng(5)
    scale = rng.uniform(0.5, 1.0, 64)
    m = rng.uniform(0.0, 1.0, (64, 129)) * 10.0 ** rng.integers(-8, 3, (64, 129))
    want = np.zeros(129)
    for h in range(64):  # the defined order, spelled out
        want = want + scale[h] * m[h]
    assert host_sums(scale, m).tobytes() == want.tobytes()


def test_host_sums_match_the_blas_product_within_the_summation_bound():
    rng = np.random.default_rng(6)
    for hosts, queues in ((64, 129), (128, 257), (8, 13)):
        scale = rng.uniform(0.0, 1.0, hosts)
        m = rng.uniform(-1e-3, 1.0, (hosts, queues)) * 10.0 ** rng.integers(-6, 2, (hosts, queues))
        got, old = host_sums(scale, m), scale @ m
        bound = hosts * EPS * (np.abs(scale[:, None] * m)).sum(axis=0)
        assert (np.abs(got - old) <= bound).all()


def _relative_gap(a: np.ndarray, b: np.ndarray) -> float:
    """Largest difference relative to the array's largest finite magnitude (non-finite entries must agree)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    fin = np.isfinite(a) & np.isfinite(b)
    assert np.array_equal(a[~fin], b[~fin], equal_nan=True)
    a, b = a[fin], b[fin]
    diff = float(np.max(np.abs(a - b), initial=0.0))
    scale = float(np.max(np.abs(a), initial=0.0))
    return diff / scale if scale > 0 else diff


@pytest.mark.parametrize("controller", ["mlp", "swift", "hpcc"])
def test_runs_stay_within_the_bound_of_the_blas_order(controller, monkeypatch):
    topo = TopologyConfig(leaves=4, hosts_per_leaf=4, spines=2, links_per_pair=1)
    sc = AllToAll(hosts=16, flows_per_pair=2 if controller == "mlp" else 1, duration_ms=1.0, topology=topo)
    sc = dataclasses.replace(sc, initial_rate=sc.fair_rate())

    def ctl():
        return PolicyController(POLICY) if controller == "mlp" else make_controller(controller)

    monkeypatch.setattr(BlockLoop, "use_kernel", False)  # the Python fabric step (the C one sums as it does)
    new = simulate(sc, ctl())
    monkeypatch.setattr(fabric_mod.PathFabric, "_refresh", blas_order_refresh)
    old = simulate(sc, ctl())
    gaps = {}
    for part in ("metrics_full", "flows", "series"):
        a, b = getattr(new, part), getattr(old, part)
        for key in a:
            if key in ("wall_s", "sim_speed") or np.asarray(a[key]).dtype.kind not in "fiub":
                continue
            gaps[f"{part}.{key}"] = _relative_gap(a[key], b[key])
    assert max(gaps.values()) <= RUN_BOUND, sorted(gaps.items(), key=lambda kv: -kv[1])[:3]
    assert any(g > 0 for g in gaps.values())  # the order does change the last bits
