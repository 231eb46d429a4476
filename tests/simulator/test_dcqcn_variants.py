"""DCQCN's Mellanox variants (HPCC-ns3 rdma-hw.cc, ``DcqcnParams`` flags), hand-worked tick by tick,
and the defaults (the paper's rules) left bit-identical."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from rlcc.errors import BadInputError
from rlcc.simulator import AllToAll, Dcqcn, DcqcnParams, LongShort, ManyToOne, Network, TickInfo, TopologyConfig, simulate
from rlcc.simulator.fabric import PathFabric
from sim_identity import blas_order_refresh

R_AI, R_HAI = 0.02 / 100, 0.2 / 100  # 20 / 200 Mb/s at 100 Gb/s, as fractions of line rate
EXACT = 1e-15


def _dcqcn(**flags) -> Dcqcn:
    """One flow at 100 Gb/s, F = 2, no byte counter, no alpha decay within a test (g = 1/256: alpha
    stays exactly 1 after a cut from 1)."""
    kw = {"fast_recovery_steps": 2, "timer_us": 10.0, "byte_counter": float("inf"), "alpha_timer_us": 1e6,
          "cnp_interval_us": 4.0, "rate_ai_gbps": 0.02, "rate_hai_gbps": 0.2, "min_rate": 0.01, "tick_us": 1.0}
    kw.update(flags)
    dc = Dcqcn(DcqcnParams(**kw))
    dc.reset(1, Network(line_rate_gbps=100.0), np.random.default_rng(0))
    return dc


def _tick(dc: Dcqcn, t_us: float, marks: float = 0.0) -> float:
    """One tick at ``t_us`` with ``marks`` expected marked packets (50: a CNP for sure); the flow
    runs at 0.5 when DCQCN first sees it. Returns RC."""
    info = TickInfo(time_ns=t_us * 1e3, marked_packets=np.array([marks]), sent_bytes=np.zeros(1),
                    rate=np.array([0.5]), active=np.ones(1, bool), queue_delay_ns=np.zeros(1))
    return float(dc.on_tick(info)[0])


def _targets_after_a_cut(**flags) -> list[float]:
    dc = _dcqcn(**flags)
    assert _tick(dc, 1.0, marks=50.0) == 0.25  # RT = RC = 0.5, RC = 0.5 (1 - 1/2)
    rts = []
    for k in range(1, 6):  # five timer events, 10 us apart, no CNP
        _tick(dc, 1.0 + 10.0 * k)
        rts.append(float(dc.rt[0]))
    return rts


def test_hyper_increase_on_the_timer_stage_alone():
    """RateIncEventMlx with F = 2: events 1-2 fast recovery, event 3 (stage F) +R_AI, then +R_HAI per event."""
    rts = _targets_after_a_cut(hyper_on_timer_alone=True)
    assert rts == pytest.approx([0.5, 0.5, 0.5 + R_AI, 0.5 + R_AI + R_HAI, 0.5 + R_AI + 2 * R_HAI], abs=EXACT)


def test_paper_rule_without_a_byte_counter_stays_additive():
    rts = _targets_after_a_cut()
    assert rts == pytest.approx([0.5, 0.5, 0.5 + R_AI, 0.5 + 2 * R_AI, 0.5 + 3 * R_AI], abs=EXACT)


def test_hyper_increase_recovers_rate_by_halves_towards_the_target():
    dc = _dcqcn(hyper_on_timer_alone=True)
    _tick(dc, 1.0, marks=50.0)
    rc = [_tick(dc, 1.0 + 10.0 * k) for k in range(1, 5)]
    assert rc == pytest.approx([0.375, 0.4375, (0.5 + R_AI + 0.4375) / 2,
                                (0.5 + R_AI + R_HAI + (0.5 + R_AI + 0.4375) / 2) / 2], abs=EXACT)


def _cut_cut_recover_cut(**flags) -> list[tuple[float, float]]:
    """Cut at 1 us, cut again at 5 us (no timer event between), one fast recovery at 15 us, cut at
    20 us: (RT, RC) after each."""
    dc = _dcqcn(**flags)
    out = []
    for t, marks in ((1.0, 50.0), (5.0, 50.0), (15.0, 0.0), (20.0, 50.0)):
        _tick(dc, t, marks)
        out.append((float(dc.rt[0]), float(dc.rc[0])))
    return out


def test_clamp_target_off_keeps_the_target_until_a_timer_event():
    """CheckRateDecreaseMlx, ClampTargetRate off: RT = RC at a cut only once the timer stage is > 0."""
    assert _cut_cut_recover_cut(clamp_target=False) == [(0.5, 0.25), (0.5, 0.125), (0.5, 0.3125), (0.3125, 0.15625)]


def test_clamp_target_on_sets_the_target_at_every_cut():
    assert _cut_cut_recover_cut() == [(0.5, 0.25), (0.25, 0.125), (0.25, 0.1875), (0.1875, 0.09375)]


def test_no_rate_increase_before_the_first_cnp():
    """A flow started at 0.5 with no marks keeps 0.5 for the whole run; with the paper's timers from
    the start it climbs (additive increase after F timer events)."""
    sc = ManyToOne(flows=1, duration_ms=2.0, initial_rate=0.5, converged_from=0.0, seed=1)
    held = simulate(sc, Dcqcn(DcqcnParams(timers_from_first_cnp=True)))
    assert np.all(held.series["rates"] == 0.5) and held.flows["final_rate"][0] == 0.5
    assert held.metrics["queue_delay_p99_us"] == 0.0
    climbs = simulate(sc, Dcqcn())
    assert climbs.flows["final_rate"][0] > 0.5


def test_first_cnp_starts_the_timers():
    dc = _dcqcn(timers_from_first_cnp=True)
    for t in (1.0, 11.0, 21.0, 31.0):
        assert _tick(dc, t) == 0.5
    assert dc.t_stage[0] == 0
    assert _tick(dc, 32.0, marks=50.0) == 0.25
    assert _tick(dc, 42.0) == 0.375 and dc.t_stage[0] == 1  # the timer runs from the cut


def test_decrease_and_alpha_on_their_own_timers():
    """CheckRateDecreaseMlx / UpdateAlphaMlx, alpha every 1 us, decrease check every 4 us from the
    first CNP: the first CNP (1 us) sets alpha = 1; alpha decays at 2..5 us (no CNP since); the
    check at 5 us cuts with alpha (1-g)^4. A CNP at 6 us: alpha +g at 6 us, decays at 7..9 us, no
    cut before the check at 9 us."""
    g = 1 / 256
    dc = _dcqcn(decrease_on_timer=True, alpha_timer_us=1.0)
    assert _tick(dc, 1.0, marks=50.0) == 0.5
    for t in (2.0, 3.0, 4.0):
        assert _tick(dc, t) == 0.5
    a = (1 - g) ** 4
    rc = 0.5 * (1 - a / 2)
    assert _tick(dc, 5.0) == pytest.approx(rc, abs=EXACT) and dc.alpha[0] == pytest.approx(a, abs=EXACT)
    assert dc.rt[0] == 0.5
    assert _tick(dc, 6.0, marks=50.0) == pytest.approx(rc, abs=EXACT)
    a = ((1 - g) * a + g) * (1 - g) ** 3
    for t in (7.0, 8.0):
        assert _tick(dc, t) == pytest.approx(rc, abs=EXACT)
    assert _tick(dc, 9.0) == pytest.approx(rc * (1 - a / 2), abs=EXACT)
    assert dc.alpha[0] == pytest.approx(a, abs=EXACT) and dc.rt[0] == pytest.approx(rc, abs=EXACT)
    assert _tick(dc, 13.0) == pytest.approx(rc * (1 - a / 2), abs=EXACT)  # no CNP since 9 us: no cut
    assert dc.cnps == 2


@pytest.mark.parametrize("decrease_on_timer", [False, True])
def test_feedback_delay_holds_the_cut_back_by_whole_ticks(decrease_on_timer):
    """Marks seen at tick 1 come back as a CNP 3 ticks later (3 us at a 1 us tick): no cut before."""
    dc = _dcqcn(feedback_delay_us=3.0, decrease_on_timer=decrease_on_timer, cnp_interval_us=1.0)
    assert _tick(dc, 1.0, marks=50.0) == 0.5
    assert _tick(dc, 2.0) == 0.5 and _tick(dc, 3.0) == 0.5 and dc.cnps == 0
    # tick 4: the CNP of tick 1's marks arrives; the paper's RP cuts at once, the timed decrease at its
    # first check one interval (1 us) after the first CNP: RC = 0.5 (1 - alpha / 2) with alpha 1
    assert _tick(dc, 4.0) == (0.5 if decrease_on_timer else 0.25) and dc.cnps == 1
    assert _tick(dc, 5.0) == 0.25 and dc.cnps == 1


def test_negative_feedback_delay_is_rejected():
    with pytest.raises(BadInputError, match="feedback_delay_us"):
        _dcqcn(feedback_delay_us=-1.0)


def test_paper_rule_cuts_at_the_cnp():
    dc = _dcqcn(alpha_timer_us=1.0)
    assert _tick(dc, 1.0, marks=50.0) == 0.25


def _digest(r) -> str:
    h = hashlib.sha256()
    for k in ("t_us", "queue_us", "rates"):
        h.update(np.ascontiguousarray(r.series[k], dtype=np.float64).tobytes())
    for k in ("window_rate", "sent_bytes", "dropped_bytes", "final_rate", "fct_ns"):
        h.update(np.ascontiguousarray(r.flows[k], dtype=np.float64).tobytes())
    h.update(repr(sorted((k, v) for k, v in r.metrics.items() if k not in ("wall_s", "sim_speed"))).encode())
    return h.hexdigest()[:16]


# Digests of these runs before the Mellanox flags and header_bytes existed (main @ 6fc0a15).
DEFAULT_RUNS = {
    "incast": (ManyToOne(flows=8, duration_ms=2, seed=3), "4ee817c5cc70ab1c"),
    "star": (ManyToOne(flows=8, hosts=8, duration_ms=2, seed=3, topology=TopologyConfig(kind="star", hosts=9)),
             "4ee817c5cc70ab1c"),
    "fat-tree": (AllToAll(hosts=8, duration_ms=1, seed=1,
                          topology=TopologyConfig(kind="fat-tree", hosts_per_leaf=2, leaves=4, spines=2)),
                 "dc4b5a0de764245d"),
    "long-short": (LongShort(duration_ms=2, seed=4), "f6c531ceb7f80a5c"),
}


# The fat-tree run since its link loads are summed in host order (fabric.host_sums) instead of by
# a BLAS product: the digest above still holds with the product (``blas_order_refresh``).
FAT_TREE_HOST_ORDER = "94ddad2e7426be65"


@pytest.mark.parametrize("name", list(DEFAULT_RUNS))
def test_defaults_leave_dcqcn_runs_bit_identical(name, monkeypatch):
    sc, digest = DEFAULT_RUNS[name]
    if name == "fat-tree":
        assert _digest(simulate(sc, Dcqcn())) == FAT_TREE_HOST_ORDER
        monkeypatch.setattr(PathFabric, "_refresh", blas_order_refresh)
    assert _digest(simulate(sc, Dcqcn())) == digest
