"""The per-flow state contract: one ``FlowState`` holds every per-flow array of a run, for the
step-by-step and the block loop alike, and a field declared on it exists for every flow."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from rlcc.simulator import LongShort, ManyToOne, Network, make_controller, simulate
from rlcc.simulator.engine import _Run
from rlcc.simulator.flows import HOPS, WINDOW, FlowState, per_flow

SYNTHETIC = "examples/synthetic_mlp.onnx"
N = 13  # odd flow count: no other array of these runs has this length by accident
# per-flow inputs derived from the flow table, fixed for the run (not state)
STATIC = {"path", "flow_base", "group", "start_order", "start_pos", "sorted_starts", "finite", "epoch"}


@dataclasses.dataclass(eq=False)
class _WithPath(FlowState):
    """What the fabric issue will add: an ECMP path id and per-hop INT values."""

    path: np.ndarray = per_flow(7, np.int64)
    int_hops: np.ndarray = per_flow(0.5, width=2)


def test_new_allocates_every_field_for_all_flows_with_its_fill():
    fl = FlowState.new(5, window=4, hops=3)
    for f in dataclasses.fields(FlowState):
        arr, meta = getattr(fl, f.name), f.metadata
        width = {WINDOW: 4, HOPS: 3}.get(meta["width"], meta["width"])
        assert arr.shape == ((5,) if width is None else (5, width)), f.name
        assert arr.dtype == np.dtype(meta["dtype"]), f.name
        np.testing.assert_array_equal(arr, np.full(arr.shape, meta["fill"], meta["dtype"]), err_msg=f.name)
    assert all(c.base is fl.acc for c in fl.acc_cols) and len(fl.window_cols) == 4


@pytest.mark.parametrize("block_steps", [0, None], ids=["step", "block"])
def test_a_field_added_to_flowstate_is_initialized_in_both_paths(monkeypatch, block_steps):
    monkeypatch.setattr(_Run, "flow_state", _WithPath)
    sc = ManyToOne(flows=N, duration_ms=0.3, initial_rate=1 / N)
    run = _Run(sc, make_controller("policy", SYNTHETIC), None, block_steps)
    assert run.blocked == (block_steps is None)
    run.run()
    assert type(run.flows) is _WithPath
    np.testing.assert_array_equal(run.flows.path, np.full(N, 7))
    assert run.flows.int_hops.shape == (N, 2) and (run.flows.int_hops == 0.5).all()
    assert (run.flows.n_dec > 0).all()


def _per_flow_arrays(run: _Run):
    """(name, array) of every per-flow array the run keeps itself (attributes, lists, dicts)."""
    for name, value in vars(run).items():
        items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else [value]
        for item in items:
            if isinstance(item, np.ndarray) and item.ndim and item.shape[0] == run.n:
                yield name, item


@pytest.mark.parametrize(
    "scenario, controller, block_steps",
    [
        (ManyToOne(flows=N, duration_ms=0.3), "policy", 0),
        (ManyToOne(flows=N, duration_ms=0.3), "policy", None),
        (ManyToOne(flows=N, duration_ms=0.3, network=Network(buffer_bytes=100_000)), "swift", None),  # ticks
        (LongShort(short_flows=N - 1, duration_ms=0.4, burst_start_frac=0.1), "dcqcn", None),  # finite flows
    ],
    ids=["policy-step", "policy-block", "swift-tick", "dcqcn-finite"],
)
def test_run_keeps_no_per_flow_state_outside_flowstate(scenario, controller, block_steps):
    """Fails when the engine or the block loop keeps a per-flow array of its own: declare it on
    ``FlowState`` instead, so both paths (and new per-flow quantities) share one definition."""
    run = _Run(scenario, make_controller(controller, SYNTHETIC), None, block_steps)
    assert run.n == N and run.blocked == (controller == "policy" and block_steps is None)
    run.run()
    fields = [getattr(run.flows, f.name) for f in dataclasses.fields(run.flows)]
    own = {name for name, arr in _per_flow_arrays(run) if not any(np.shares_memory(arr, f) for f in fields)}
    assert own <= STATIC, own - STATIC


def test_flowstate_results_do_not_depend_on_the_extra_field(monkeypatch):
    sc = ManyToOne(flows=N, duration_ms=0.3, initial_rate=1 / N)
    a = simulate(sc, make_controller("policy", SYNTHETIC))
    monkeypatch.setattr(_Run, "flow_state", _WithPath)
    b = simulate(sc, make_controller("policy", SYNTHETIC))
    for key in a.flows:
        np.testing.assert_array_equal(a.flows[key], b.flows[key], err_msg=key)
