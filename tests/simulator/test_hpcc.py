"""HPCC (Algorithm 1 of Li et al., SIGCOMM 2019) on hand-made per-hop telemetry, without the engine.

Expected windows are computed here from the paper's formulas: u' = min(qlen, prev qlen) / (B T) +
txRate / B per hop, u = max over hops, U = (1 - tau/T) U + tau/T u with tau = min(delta ts, T),
W = Wc / (U / eta) + W_AI if U >= eta or incStage >= maxStage else Wc + W_AI, R = W / T.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from rlcc.errors import BadInputError
from rlcc.simulator import DecisionBatch, HopTelemetry, Hpcc, HpccParams, Network, TickInfo, make_controller

NET = Network()  # 100 Gb/s, 8 us base RTT
T = NET.base_rtt_ns
C = NET.bytes_per_ns  # 12.5 bytes/ns
BDP = C * T  # 100 kB
ETA = 0.95
W_AI = 0.04 / 8.0 * T  # 40 Mb/s x T = 40 bytes
RNG = np.random.default_rng(0)


def _batch(ids, ts, rate, first, qlen, tx, hops=None, cap=None) -> DecisionBatch:
    ids = np.asarray(ids, np.int64)
    n = len(ids)
    qlen = np.asarray(qlen, np.float64).reshape(n, -1)
    tx = np.asarray(tx, np.float64).reshape(n, -1)
    hops = np.full(n, qlen.shape[1], np.int64) if hops is None else np.asarray(hops, np.int64)
    cap = np.full(qlen.shape, C) if cap is None else np.asarray(cap, np.float64).reshape(n, -1)
    ts = np.broadcast_to(np.asarray(ts, np.float64), (n,)).copy()
    tel = HopTelemetry(hops=hops, qlen_bytes=qlen, tx_bytes=tx, ts_ns=ts, capacity=cap)
    zeros = np.zeros(n, np.int64)
    return DecisionBatch(flow_ids=ids, time_ns=ts + T, rtt_ns=np.full(n, int(T), np.int64),
                         rate=np.broadcast_to(np.asarray(rate, np.float64), (n,)).copy(), cnp_count=zeros,
                         nack_count=zeros, first=np.broadcast_to(np.asarray(first, bool), (n,)).copy(), obs=None,
                         telemetry=tel)


def _controller(n_flows: int = 1, **params) -> Hpcc:
    """The per-probe algorithm alone (no per-ACK reaction, window or compounded EWMA unless asked)."""
    params = {"fast_react": False, "window": False, "ack_ewma": False, **params}
    ctl = Hpcc(HpccParams(**params))
    ctl.reset(n_flows, NET, RNG)
    return ctl


def _window(w_c: float, u: float, stage: int, max_stage: int = 5) -> tuple[float, int]:
    """ComputeWind(U, updateWc=True) of Algorithm 1: (new Wc, new incStage)."""
    if u >= ETA or stage >= max_stage:
        return w_c / (u / ETA) + W_AI, 0
    return w_c + W_AI, stage + 1


def test_overloaded_hop_scales_window_by_eta_over_u():
    ctl = _controller()
    r0 = 0.5
    out = ctl.decide(_batch([0], 0.0, r0, True, [0.0], [0.0]))
    assert out[0] == r0  # first decision: telemetry stored, start rate kept
    u = 1.2 * ETA  # link sent 1.2 eta x capacity over one T, no queue
    tx = u * C * T
    out = ctl.decide(_batch([0], T, out, False, [0.0], [tx]))
    w1, _ = _window(r0 * BDP, u, 0)
    assert out[0] == pytest.approx(w1 / BDP, rel=1e-12)
    assert w1 / BDP == pytest.approx(r0 / 1.2 + 0.0004, rel=1e-12)
    # next RTT: the link ran at 0.99 x capacity, U >= eta again: Wc (not the start window) is scaled
    out = ctl.decide(_batch([0], 2 * T, out, False, [0.0], [tx + 0.99 * C * T]))
    w2, _ = _window(w1, 0.99, 0)
    assert out[0] == pytest.approx(w2 / BDP, rel=1e-12)


def test_queue_term_uses_the_smaller_of_the_two_samples():
    ctl = _controller()
    ctl.decide(_batch([0], 0.0, 0.3, True, [80_000.0], [0.0]))
    out = ctl.decide(_batch([0], T, 0.3, False, [120_000.0], [0.9 * C * T]))
    u = min(120_000.0, 80_000.0) / (C * T) + 0.9  # 1.7 (the newer sample alone would give 2.1)
    w, _ = _window(0.3 * BDP, u, 0)
    assert out[0] == pytest.approx(w / BDP, rel=1e-12)


@pytest.mark.parametrize("max_stage", [5, 2, 0])
def test_additive_stages_then_multiplicative(max_stage):
    ctl = _controller(max_stage=max_stage)
    r0, u = 0.1, 0.5 * ETA
    ctl.decide(_batch([0], 0.0, r0, True, [0.0], [0.0]))
    w, stage, tx = r0 * BDP, 0, 0.0
    kinds = []
    for k in range(1, 2 * max_stage + 4):
        tx += u * C * T
        out = ctl.decide(_batch([0], k * T, 0.0, False, [0.0], [tx]))
        kinds.append("MI" if stage >= max_stage else "AI")
        w, stage = _window(w, u, stage, max_stage)
        assert out[0] == pytest.approx(w / BDP, rel=1e-12)
    cycle = ["AI"] * max_stage + ["MI"]
    assert kinds == (cycle * 4)[: len(kinds)]
    assert kinds[max_stage] == "MI" and ctl.inc_stage[0] == len(kinds) % (max_stage + 1)


def test_high_utilization_resets_the_stage():
    ctl = _controller()
    ctl.decide(_batch([0], 0.0, 0.2, True, [0.0], [0.0]))
    w, stage, tx = 0.2 * BDP, 0, 0.0
    for k, u in enumerate([0.5, 0.5, 0.5, 1.1, 0.5], start=1):
        tx += u * C * T
        out = ctl.decide(_batch([0], k * T, 0.0, False, [0.0], [tx]))
        w, stage = _window(w, u, stage)
        assert out[0] == pytest.approx(w / BDP, rel=1e-12)
    assert stage == 1 and ctl.inc_stage[0] == 1  # AI x3, MI at U >= eta (stage 0), AI


def test_hop_with_largest_utilization_drives_the_update():
    ctl = _controller(n_flows=5)
    big = 1e12  # padding columns must be ignored
    cap = [[C, C / 4, C, 1.0], [C / 2, C, 1.0, 1.0]]
    ctl.decide(_batch([3, 0], 0.0, [0.4, 0.2], True, [[0, 10_000, 0, big], [30_000, 0, big, big]],
                      [[0, 0, 0, 0], [0, 0, 0, 0]], hops=[3, 2], cap=cap))
    q1 = [[5_000, 20_000, 90_000, big], [40_000, 0, big, big]]
    tx1 = [[0.3 * C * T, 0.2 * C * T, 0.5 * C * T, big], [0.45 * C * T, 0.9 * C * T, big, big]]
    out = ctl.decide(_batch([3, 0], T, [0.4, 0.2], False, q1, tx1, hops=[3, 2], cap=cap))
    # flow 3: hop 0: 0 + 0.3; hop 1 (a quarter of the rate): 10e3/(C/4 T) + 0.2 C/(C/4) = 0.4 + 0.8;
    # hop 2: 0/(C T) + 0.5 = 0.5 (its queue grew from 0: min() = 0). Max: hop 1, u = 1.2.
    u_a = max(0.3, 10_000 / (C / 4 * T) + 0.2 * 4, 0.5)
    assert u_a == pytest.approx(1.2)
    # flow 0: hop 0 (half rate): 30e3/(C/2 T) + 0.45 x 2 = 0.6 + 0.9; hop 1: 0.9. Max: hop 0, u = 1.5.
    u_b = max(30_000 / (C / 2 * T) + 0.9, 0.9)
    assert out[0] == pytest.approx(_window(0.4 * BDP, u_a, 0)[0] / BDP, rel=1e-12)
    assert out[1] == pytest.approx(_window(0.2 * BDP, u_b, 0)[0] / BDP, rel=1e-12)
    assert ctl.u[3] == pytest.approx(u_a) and ctl.u[0] == pytest.approx(u_b)


def test_ewma_with_probe_interval_below_and_above_t():
    ctl = _controller()
    ctl.decide(_batch([0], 0.0, 0.5, True, [0.0], [0.0]))
    u1, u2, u3 = 1.2 * ETA, 0.5, 1.05
    w, stage = 0.5 * BDP, 0
    tx = u1 * C * T
    ctl.decide(_batch([0], T, 0.0, False, [0.0], [tx]))  # tau = T: U = u1
    w, stage = _window(w, u1, stage)
    tx += u2 * C * (T / 4)
    out = ctl.decide(_batch([0], T + T / 4, 0.0, False, [0.0], [tx]))  # tau = T/4
    big_u = (1 - 0.25) * u1 + 0.25 * u2
    w, stage = _window(w, big_u, stage)
    assert ctl.u[0] == pytest.approx(big_u, rel=1e-12)
    assert out[0] == pytest.approx(w / BDP, rel=1e-12)
    tx += u3 * C * (3 * T)
    out = ctl.decide(_batch([0], T + T / 4 + 3 * T, 0.0, False, [0.0], [tx]))  # tau = min(3T, T) = T
    w, stage = _window(w, u3, stage)
    assert ctl.u[0] == pytest.approx(u3, rel=1e-12)
    assert out[0] == pytest.approx(w / BDP, rel=1e-12)


@pytest.mark.parametrize("n,max_stage", [(8, 5), (64, 0), (64, 5)])
def test_single_link_loop_converges_to_the_fixed_point(n, max_stage):
    # N flows share one link of capacity C, all probe once per T (synchronously); the link carries the
    # offered load sum(r) C (no queue), so every flow sees u = sum(r) over the last T and tau = T.
    # Fixed point of W_i = W_i eta / U + W_AI (the MI branch, taken whenever U >= eta): summing over i,
    # S' = S eta / U + N W_AI with U = S / BDP, so S' = eta BDP + N W_AI, i.e. U* = eta + N r_ai
    # (r_ai = W_AI / BDP = R_AI / line rate), reached one step after the first U >= eta and >= eta, so
    # the MI branch persists. Per flow, W' = W eta / U* + W_AI contracts with factor eta / U* < 1 to
    # W* = W_AI / (1 - eta / U*) = U* BDP / N: equal rates U* / N.
    r_ai = W_AI / BDP
    u_star = ETA + n * r_ai
    ctl = _controller(n_flows=n, max_stage=max_stage)
    rng = np.random.default_rng(7)
    rates = rng.uniform(0.1, 1.5, n) / n  # unequal shares, total ~0.8
    ids = np.arange(n)
    rates = ctl.decide(_batch(ids, 0.0, rates, True, np.zeros(n), np.zeros(n)))
    steps = math.ceil(math.log(1e-4) / math.log(ETA / u_star)) + 20
    tx = 0.0
    for k in range(1, steps):
        tx += rates.sum() * C * T
        rates = ctl.decide(_batch(ids, k * T, rates, False, np.zeros(n), np.full(n, tx)))
    assert rates.sum() == pytest.approx(u_star, rel=0.01)
    assert rates.max() / rates.min() < 1.01
    assert rates == pytest.approx(np.full(n, u_star / n), rel=0.01)


def test_path_change_and_wider_telemetry_restart_the_measurement():
    ctl = _controller(n_flows=2)
    ctl.decide(_batch([0, 1], 0.0, [0.5, 0.25], True, [[0.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]))
    # flow 0 now reports 4 hops (a new path): only stored; flow 1 updates from its 2-hop history
    q = [[0, 0, 0, 0], [0, 0, 0, 0]]
    tx = [[1e9, 1e9, 1e9, 1e9], [1.2 * ETA * C * T, 0.1 * C * T, 0, 0]]
    out = ctl.decide(_batch([0, 1], T, [0.5, 0.25], False, q, tx, hops=[4, 2]))
    assert out[0] == 0.5
    assert out[1] == pytest.approx(_window(0.25 * BDP, 1.2 * ETA, 0)[0] / BDP, rel=1e-12)
    tx2 = [[1e9 + 1.2 * ETA * C * T] * 4, [0, 0, 0, 0]]
    out = ctl.decide(_batch([0], 2 * T, 0.5, False, tx2[1][:4], tx2[0], hops=[4]))
    assert out[0] == pytest.approx(_window(0.5 * BDP, 1.2 * ETA, 0)[0] / BDP, rel=1e-12)


@pytest.mark.parametrize("rate_ai_gbps", [0.04, 0.0])
def test_rates_are_clipped_and_an_idle_path_goes_to_line_rate(rate_ai_gbps):
    ctl = _controller(n_flows=2, max_stage=0, rate_ai_gbps=rate_ai_gbps)
    ctl.decide(_batch([0, 1], 0.0, [0.5, 0.5], True, [0.0, 0.0], [0.0, 0.0]))
    out = ctl.decide(_batch([0, 1], T, [0.5, 0.5], False, [0.0, 0.0], [0.0, 1e6 * C * T]))
    assert out[0] == 1.0  # u = 0: Wc eta / 0 -> clipped to one BDP
    r_ai = rate_ai_gbps / NET.line_rate_gbps  # u = 1e6: the window falls to ~W_AI, floored at min_rate
    assert out[1] == pytest.approx(max(0.5 * ETA / 1e6 + r_ai, ctl.p.min_rate), rel=1e-12)


def test_needs_telemetry_and_is_registered():
    ctl = make_controller("hpcc")
    assert isinstance(ctl, Hpcc) and ctl.wants_telemetry and ctl.spec is None and ctl.name == "hpcc"
    ctl.reset(1, NET, RNG)
    plain = DecisionBatch(np.zeros(1, np.int64), np.zeros(1), np.full(1, 8000, np.int64), np.ones(1),
                          np.zeros(1, np.int64), np.zeros(1, np.int64), np.ones(1, bool), None)
    assert plain.telemetry is None  # positional construction still works
    with pytest.raises(BadInputError, match="telemetry"):
        ctl.decide(plain)


def _tick(ctl: Hpcc, t: float, qlen, tx, rate, queue_delay=0.0) -> np.ndarray:
    """One window/per-ACK tick with every flow's INT now (one hop each)."""
    n = len(ctl.u)
    tel = HopTelemetry(hops=np.ones(n, np.int64), qlen_bytes=np.asarray(qlen, np.float64).reshape(n, 1),
                       tx_bytes=np.asarray(tx, np.float64).reshape(n, 1), ts_ns=np.full(n, t),
                       capacity=np.full((n, 1), C))
    return ctl.on_tick(TickInfo(t, None, None, np.broadcast_to(np.asarray(rate, np.float64), (n,)).copy(),
                                np.ones(n, bool), np.full(n, float(queue_delay)), T, tel))


def test_window_bounds_the_rate_by_w_over_the_current_rtt():
    # W = R T in flight over an RTT of T + q sends at R T / (T + q): q = T halves the rate, q = 0 keeps R.
    ctl = _controller(window=True)
    assert ctl.tick_ns == NET.dt_ns  # re-evaluated every engine step by default
    assert _tick(ctl, 1000.0, [0.0], [0.0], 0.6, queue_delay=0.0)[0] == 0.6
    assert _tick(ctl, 2000.0, [0.0], [0.0], 0.6, queue_delay=T)[0] == pytest.approx(0.3, rel=1e-12)
    assert _tick(ctl, 3000.0, [0.0], [0.0], 0.6, queue_delay=3 * T)[0] == pytest.approx(0.15, rel=1e-12)
    # at a decision the bound uses the probe's RTT: 2T halves the new pace
    out = ctl.decide(_batch([0], 0.0, 0.6, True, [0.0], [0.0]))
    assert out[0] == 0.6  # (the batch's RTT is T)
    rtt2 = dataclasses.replace(_batch([0], T, 0.6, False, [0.0], [0.5 * C * T]), rtt_ns=np.full(1, 2 * int(T)))
    out = ctl.decide(rtt2)
    assert out[0] == pytest.approx(ctl.pace[0] / 2, rel=1e-12)


def test_probe_ewma_compounds_the_per_ack_updates():
    # ack_ewma: over a probe interval dt the per-ACK updates U <- (1 - tau/T) U + tau/T u with
    # sum(tau) = dt compound to U <- exp(-dt/T) U + (1 - exp(-dt/T)) u (u constant over the interval).
    ctl = _controller(ack_ewma=True)
    ctl.decide(_batch([0], 0.0, 0.5, True, [0.0], [0.0]))
    u = 0.7
    ctl.decide(_batch([0], T, 0.5, False, [0.0], [u * C * T]))
    keep = math.exp(-1.0)
    assert ctl.u[0] == pytest.approx(keep * 1.0 + (1 - keep) * u, rel=1e-12)
    # the limit of many small per-ACK steps is the same number
    u_acks = 1.0
    for _ in range(100_000):
        u_acks = (1 - 1e-5) * u_acks + 1e-5 * u
    assert ctl.u[0] == pytest.approx(u_acks, rel=1e-4)


def test_fast_react_updates_u_per_tick_from_delayed_int_and_keeps_wc():
    # Per ACK: U from the INT the ACK carries (stamped half a base RTT earlier), W = Wc eta / U + W_AI
    # with Wc unchanged; the next probe then updates Wc with the U the ticks kept.
    tick = 1000.0
    ctl = _controller(fast_react=True, ack_ewma=True, max_stage=0, window_tick_us=tick / 1e3)
    delay_ticks = int(round(T / 2 / tick))
    assert ctl.hist.maxlen == delay_ticks + 2
    r0 = 0.5
    ctl.decide(_batch([0], 0.0, r0, True, [0.0], [0.0]))
    w_c = r0 * BDP
    u_link = 1.2  # the hop transmits at line rate with a 0.2 BDP queue: u' = 0.2 + 1.0
    q = 0.2 * C * T
    keep = math.exp(-tick / T)
    expect_u, tx = 1.0, 0.0
    for k in range(1, delay_ticks + 6):
        out = _tick(ctl, k * tick, [q], [tx], r0)
        if k >= delay_ticks + 2:  # the INT pair of (delay_ticks + 1) and delay_ticks ticks ago
            expect_u = keep * expect_u + (1 - keep) * u_link
            assert ctl.u[0] == pytest.approx(expect_u, rel=1e-12)
            assert out[0] == pytest.approx((w_c * ETA / expect_u + W_AI) / BDP, rel=1e-12)
            assert ctl.w_c[0] == w_c  # only probes update Wc
        else:
            assert ctl.u[0] == 1.0 and out[0] == r0  # no ACK INT yet
        tx += C * tick
    out = ctl.decide(_batch([0], T, out, False, [q], [tx]))  # the probe's own INT is not re-measured
    assert ctl.u[0] == pytest.approx(expect_u, rel=1e-12)
    assert ctl.w_c[0] == pytest.approx(w_c * ETA / expect_u + W_AI, rel=1e-12)


def test_engine_hpcc_holds_a_small_queue_on_an_incast():
    # 64 line-rate flows into one 100G port (star, 4 us RTT): without the window and the per-ACK
    # reaction the per-RTT loop holds ~1 ms of queue; with them HPCC keeps about eta of the link
    # with a queue under one base RTT (the HPCC paper's near-zero queue).
    from rlcc.simulator import ManyToOne, TopologyConfig, simulate

    net = Network(base_rtt_us=4.0, dt_ns=500.0)
    star = TopologyConfig(kind="star", hosts=9, link_delay_ns=1000.0)
    sc = ManyToOne(flows=64, hosts=8, duration_ms=2.0, network=net, topology=star)
    full = simulate(sc, Hpcc(HpccParams(max_stage=0))).metrics
    plain = simulate(sc, Hpcc(HpccParams(max_stage=0, fast_react=False, window=False, ack_ewma=False))).metrics
    assert full["queue_delay_mean_us"] < 4.0 < 100.0 < plain["queue_delay_mean_us"]
    assert full["goodput"] == pytest.approx(ETA, abs=0.03)


def test_flows_not_yet_started_keep_their_start_rate():
    # A tick before a flow starts must not fix its pace (its engine rate is not its start rate yet):
    # once active, its first tick adopts the rate the engine started it at.
    ctl = _controller(n_flows=2, window=True)
    n = 2
    tel = HopTelemetry(hops=np.ones(n, np.int64), qlen_bytes=np.zeros((n, 1)), tx_bytes=np.zeros((n, 1)),
                       ts_ns=np.zeros(n), capacity=np.full((n, 1), C))
    idle = TickInfo(500.0, None, None, np.array([0.7, 0.0]), np.array([True, False]), np.zeros(n), T, tel)
    out = ctl.on_tick(idle)
    assert out[0] == 0.7 and np.isnan(ctl.pace[1])
    started = TickInfo(1000.0, None, None, np.array([0.7, 1.0]), np.ones(n, bool), np.zeros(n), T, tel)
    assert list(ctl.on_tick(started)) == [0.7, 1.0]


def test_a_window_below_one_packet_still_lets_one_packet_out():
    # R = 0.001: W = R T = 100 B, below a 1024 B packet; a QP may send while less than W is in flight,
    # so one packet is: over an RTT of 20 T the flow sends 1024 B / 20 T = 0.000512 of line rate, not
    # W / 20 T = 0.00005 (the 512-flow incast on the 1 Gb/s rate floor: its queue is one packet a flow).
    ctl = _controller(window=True)
    assert NET.packet_bytes == 1024 and NET.header_bytes == 0 and BDP == 100_000
    assert _tick(ctl, 1000.0, [0.0], [0.0], 0.001, queue_delay=19 * T)[0] == pytest.approx(0.000512, rel=1e-12)
    assert _tick(ctl, 2000.0, [0.0], [0.0], 0.001, queue_delay=4 * T)[0] == 0.001  # the pacing rate binds
