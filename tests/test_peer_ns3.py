"""bench/peer_ns3: one scenario description written for rlcc-sim and for HPCC's ns-3 (the peer),
the peer-output parsers, the comparison's metrics, and the RL firmware's shared library (checked
against the golden model with a host C compiler only). The tests that run a peer skip without it
(``RLCC_NS3_PEER`` / ``RLCC_NS3_PEER_FALLBACK``: rlcc-peer binaries from bench/peer_ns3/build.py)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import os
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
PEER_DIR = ROOT / "bench" / "peer_ns3"


def _load(name: str):
    for p in (str(PEER_DIR), str(ROOT / "bench")):
        if p not in sys.path:
            sys.path.insert(0, p)
    spec = importlib.util.spec_from_file_location(f"peer_ns3_{name}", PEER_DIR / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


S = _load("scenarios")
PO = _load("peer_output")
M = _load("metrics")
C = _load("compare")
FL = _load("firmware_lib")
FIRMWARE = ROOT / "examples" / "firmware" / "firmware.rlcc.json"
TEACHER = ROOT / "examples" / "rlcc_mlp.onnx"


# ---- scenario translation ---------------------------------------------------------------------

def test_incast_topology_and_flows_in_third_cc_format():
    sc = S.PeerScenario("incast", 8, 4)
    topo = S.topology_text(sc.topology()).splitlines()
    assert topo[0] == "6 1 5"  # 5 hosts (receiver + 4 senders), 1 switch, 5 cables
    assert topo[1] == "5"
    assert topo[2:] == [f"{h} 5 100Gbps 0.001ms 0" for h in range(5)]
    flows = S.flow_text(sc).splitlines()
    assert flows[0] == "8"
    assert [tuple(map(int, f.split()[:2])) for f in flows[1:]] == [(1 + i % 4, 0) for i in range(8)]
    assert all(f.split()[2:4] == ["3", "100"] and f.split()[5] == "0" for f in flows[1:])


def test_incast_rlcc_side_uses_the_peers_parameters():
    sc = S.PeerScenario("incast", 8, 8)
    r = sc.rlcc_scenario()
    net = r.network
    assert net.base_rtt_us == pytest.approx(4.16)  # 4 x 1 us + 2 hops x 80 ns serialization (third.cc maxRtt)
    assert (net.ecn_kmin_bytes, net.ecn_kmax_bytes, net.ecn_pmax) == (400_000, 1_600_000, 0.2)
    assert net.buffer_bytes == 32 * 2**20 and net.packet_bytes == 1000 and net.line_rate_gbps == 100
    assert r.topology.kind == "star" and r.topology.hosts == 9 and r.topology.link_delay_ns == 1000
    table = r.placed_table()
    src, dst = sc.flow_pairs()
    assert list(table.host) == list(src) and list(table.dst) == list(dst)
    assert r.initial_rate is None and sc.start_fraction() == 0.0
    fair = dataclasses.replace(sc, start="fair")
    assert fair.start_fraction() == pytest.approx(1 / 8)


def test_controllers_carry_run_py_settings():
    sc = S.PeerScenario("incast", 8, 8)
    d = S.controller("dcqcn", sc).p
    assert (d.g, d.alpha_timer_us, d.timer_us, d.fast_recovery_steps, d.cnp_interval_us) == (1 / 256, 1, 300, 1, 4)
    assert (d.rate_ai_gbps, d.rate_hai_gbps, d.min_rate, d.byte_counter) == (0.02, 0.2, 0.01, float("inf"))
    assert d.hyper_on_timer_alone and not d.clamp_target and d.timers_from_first_cnp and d.decrease_on_timer
    h = S.controller("hpcc", sc).p
    assert (h.eta, h.max_stage, h.rate_ai_gbps, h.min_rate) == (0.95, 0, 0.04, 0.01)


def test_header_bytes_per_controller_and_tree():
    """PPP 14 + IPv4 20 + UDP 8 + SeqTs (10 in ns-3-alibabacloud, 6 in the HPCC repo) + INT (42 for HPCC)."""
    assert (S.header_bytes("dcqcn"), S.header_bytes("hpcc")) == (52, 90)  # the trees their rows come from
    assert (S.header_bytes("dcqcn", "hpcc-repo"), S.header_bytes("hpcc", "ns-3-alibabacloud")) == (48, 94)
    sc = S.PeerScenario("incast", 8, 8)
    assert sc.rlcc_scenario().network.header_bytes == 0
    assert [sc.rlcc_scenario(cc).network.header_bytes for cc in S.CONTROLLERS] == [52, 90]


def test_fair_start_dcqcn_incast_delivers_the_peers_payload_share():
    """Flows at the fair share see no marks, so DCQCN (no CNP, no change) holds them: goodput is the
    wire's payload share 1000 / 1052 = 0.9506 (the peer measured 0.951)."""
    from rlcc.simulator import simulate

    sc = S.PeerScenario("incast", 8, 8, start="fair", duration_ms=2.0)
    r = simulate(sc.rlcc_scenario("dcqcn"), S.controller("dcqcn", sc))
    assert r.metrics["goodput"] == pytest.approx(1000 / 1052, rel=1e-9)
    assert np.all(r.series["rates"] == 1 / 8)


def test_config_file_holds_both_controllers_and_the_ecn_map(tmp_path):
    sc = S.PeerScenario("incast", 8, 8, "fair", duration_ms=2.0)
    for cc, mode in (("dcqcn", "1"), ("hpcc", "3")):
        cfg = S.write_peer_inputs(sc, cc, tmp_path / cc)
        kv = dict(line.split(" ", 1) for line in cfg.read_text().splitlines())
        assert kv["CC_MODE"] == mode
        assert kv["KMIN_MAP"] == "1 100000000000 400" and kv["KMAX_MAP"] == "1 100000000000 1600"
        assert kv["PMAX_MAP"] == "1 100000000000 0.2" and kv["BUFFER_SIZE"] == "32"
        assert kv["SIMULATOR_STOP_TIME"] == "0.002" and float(kv["INIT_RATE_FRACTION"]) == pytest.approx(0.125)
        assert Path(kv["TOPOLOGY_FILE"]).read_text().startswith("10 1 9\n")
        assert Path(kv["FLOW_FILE"]).read_text().startswith("8\n")
    assert kv["RATE_AI"] == "40Mb/s" and kv["HAS_WIN"] == "1" and kv["INT_MULTI"] == "4"


def test_leaf_spine_all_to_all_matches_rlcc_placement():
    sc = S.PeerScenario("all-to-all", 240, 16)
    lines = S.topology_text(sc.topology()).splitlines()
    assert lines[0] == "22 6 24" and lines[1] == "16 17 18 19 20 21"
    links = [tuple(x.split()[:2]) for x in lines[2:]]
    assert links[:4] == [("0", "16"), ("1", "16"), ("2", "16"), ("3", "16")]
    assert ("16", "20") in links and ("19", "21") in links
    src, dst = sc.flow_pairs()
    assert len(src) == 240 and len(set(zip(src.tolist(), dst.tolist()))) == 240 and not np.any(src == dst)
    assert sc.base_rtt_ns == pytest.approx(8320)
    assert sc.rlcc_scenario().n_flows == 240


def test_peer_ports_number_flows_per_pair():
    sc = S.PeerScenario("incast", 4, 2)
    assert C.peer_keys(sc) == [(1, 0, 10000), (2, 0, 10000), (1, 0, 10001), (2, 0, 10001)]


# ---- peer output parsers ------------------------------------------------------------------------

def test_qlen_trace_parses_into_ports_by_time(tmp_path):
    p = tmp_path / "qlen.txt"
    p.write_text("0 9 1 0\n0 9 2 0\n1000 9 1 5000\n1000 9 2 2500\n2000 9 2 1000\n")
    q = PO.read_qlen(p)
    assert list(q.t_ns) == [0, 1000, 2000] and q.ports == [(9, 1), (9, 2)]
    assert list(q.total()) == [0, 7500, 1000]


def test_flow_trace_marks_absent_qps(tmp_path):
    p = tmp_path / "flows.txt"
    p.write_text("0 1 0 10000 0 100000000000\n5000 1 0 10000 62500 50000000000\n5000 2 0 10000 1000 1000000000\n")
    f = PO.read_flows(p)
    assert f.keys == [(1, 0, 10000), (2, 0, 10000)]
    assert f.acked[1].tolist() == [62500, 1000] and np.isnan(f.acked[0, 1])
    assert f.rate_bps[0, 0] == 1e11


def test_pfc_and_fct_files(tmp_path):
    pfc = tmp_path / "pfc.txt"
    pfc.write_text("2000 9 1 3 1\n2500 9 1 3 0\n3000 4 0 1 1\n")
    assert PO.pfc_pauses(pfc) == 2
    fct = tmp_path / "fct.txt"
    fct.write_text("0b000101 0b000001 10000 100 1000 0 12000 10500\n")
    (row,) = PO.read_fct(fct)
    assert (row["src"], row["dst"], row["sport"], row["size"], row["fct_ns"]) == (1, 0, 10000, 1000, 12000)


def test_malformed_peer_output_names_file_and_line(tmp_path):
    p = tmp_path / "qlen.txt"
    p.write_text("0 9 1 0\n1000 9 1\n")
    with pytest.raises(PO.PeerOutputError, match="qlen.txt: line 2: expected 4 fields, got 3"):
        PO.read_qlen(p)
    p.write_text("0 9 x 0\n")
    with pytest.raises(PO.PeerOutputError, match="line 1: not a number"):
        PO.read_qlen(p)


# ---- metrics on hand-worked series --------------------------------------------------------------

def test_goodput_fairness_and_queue_stats():
    # two flows delivering 12.5 and 6.25 KB in 1 us on one 100 Gb/s receiver: 18.75 / 12.5 = 1.5 ...
    assert M.steady_goodput(np.array([6250.0, 3125.0]), 1000.0, 1, 12.5) == pytest.approx(0.75)
    assert M.fairness(np.array([1.0, 1.0, 1.0, 1.0])) == pytest.approx(1.0)
    assert M.fairness(np.array([1.0, 0.0])) == pytest.approx(0.5)
    t = np.arange(10.0)
    q = np.array([9, 9, 9, 9, 9, 1, 2, 3, 4, 100.0])
    mean, p99 = M.queue_stats(t, q, 5.0)
    assert mean == pytest.approx(22.0) and p99 == pytest.approx(np.percentile([1, 2, 3, 4, 100], 99))


def test_smoothing_is_a_trailing_mean():
    t = np.arange(6.0)
    out = M.smooth(t, np.array([0, 0, 3, 3, 3, 3.0]), 2.0)
    assert out.tolist() == [0, 0, 1.5, 3, 3, 3]


def test_convergence_time_is_the_last_exit_from_the_band():
    t = np.arange(0.0, 100.0, 1.0)
    rates = np.full((100, 2), 0.5)
    rates[:20, 0] = 1.0  # flow 0 starts at line rate, settles at t = 20
    rates[:35, 1] = 0.1  # flow 1 starts too low, settles at t = 35
    assert M.convergence_time(t, rates, 50.0, band=0.5, width_us=1.0) == 35.0
    assert M.convergence_time(t, np.full((100, 2), 0.5), 50.0, width_us=1.0) == 0.0
    wobbly = np.full((100, 1), 0.5)
    wobbly[80] = 2.0  # leaves the band inside the steady window: never converged
    assert np.isnan(M.convergence_time(t, wobbly, 50.0, width_us=1.0))


def test_verdict_applies_the_issues_goals():
    peer = {"goodput": 0.95, "queue_mean_us": 20.0, "converge_us": 100.0}
    ok = {"goodput": 0.965, "queue_mean_us": 22.9, "converge_us": 124.0}
    assert M.verdict(ok, peer) == {"goodput": True, "queue_mean": True, "converge": True}
    bad = {"goodput": 0.975, "queue_mean_us": 23.5, "converge_us": 126.0}
    assert M.verdict(bad, peer) == {"goodput": False, "queue_mean": False, "converge": False}
    small = {"goodput": 0.95, "queue_mean_us": 1.9, "converge_us": float("nan")}
    v = M.verdict(small, {"goodput": 0.95, "queue_mean_us": 0.0, "converge_us": 3.0})
    assert v == {"goodput": True, "queue_mean": True, "converge": None}  # 2 us floor; no convergence: no verdict


# ---- with the built peer ------------------------------------------------------------------------

PEERS = {  # env var -> (controller it runs, how to build it)
    "RLCC_NS3_PEER": ("dcqcn", "the built ns-3 peer (python bench/peer_ns3/build.py SRC --build-dir DIR)"),
    "RLCC_NS3_PEER_FALLBACK": ("hpcc", "the driver built in the HPCC repository's ns-3.17 tree "
                                       "(python bench/peer_ns3/build.py HPCC_SRC --build-dir DIR --python2 python2.7)"),
}


@pytest.mark.parametrize("env", list(PEERS))
def test_peer_runs_a_short_incast_and_its_outputs_parse(tmp_path, env):
    """8 flows at 1/8 of line rate keep the port busy; at the fair share the queue stays short
    (HPCC's fallback peer: near empty)."""
    cc, build = PEERS[env]
    peer = os.environ.get(env)
    if not peer or not Path(peer).is_file():
        pytest.skip(f"needs {build}: set {env} to the rlcc-peer binary")
    sc = S.PeerScenario("incast", 8, 8, "fair", duration_ms=0.4)
    out, curve = C.run_peer(Path(peer), sc, cc, tmp_path, np.arange(8))
    assert 0.8 < out["goodput"] <= 1.0
    assert out["jain"] > 0.95 and out["pfc_pauses"] >= 0
    assert len(curve["t_us"]) >= 400 and curve["queue_us"].min() >= 0
    if cc == "hpcc":
        assert curve["queue_us"].max() < 50


def test_last_pfc_event_is_a_resume(tmp_path):
    pfc = tmp_path / "pfc.txt"
    pfc.write_text("2000 9 1 3 1\n2500 4 0 1 1\n3000 4 0 1 0\n")
    assert PO.last_pfc_is_resume(pfc)
    pfc.write_text("2000 9 1 3 0\n2500 9 1 3 1\n")
    assert not PO.last_pfc_is_resume(pfc)
    pfc.write_text("")
    assert not PO.last_pfc_is_resume(pfc)


# ---- the RL firmware in the peer (CC_MODE 11) ---------------------------------------------------

def _golden_model():
    import json

    from rlcc.fxp.int8_net import load_model_dict

    return load_model_dict(json.loads(FIRMWARE.read_text())["model"])


@pytest.fixture(scope="module")
def firmware_library(tmp_path_factory):
    try:
        return FL.build_library(FIRMWARE, tmp_path_factory.mktemp("fwlib"))
    except FL.FirmwareLibError as exc:
        pytest.skip(f"no C compiler for the firmware library: {exc}")


def test_firmware_library_decides_as_the_golden_model(firmware_library):
    """The shared library the peer loads (firmware.c + host runtime + shim) against rlcc.fxp.golden:
    300 RTT events over 12 flows (fresh and seeded contexts, RTTs from below base to 40 x base, the
    device clock wrapping mid-run) plus TX events: same rate, rtt_req and context after every event."""
    import ctypes

    from rlcc import formats as fmt
    from rlcc.fxp import golden

    lib = ctypes.CDLL(str(firmware_library))
    u32p = ctypes.POINTER(ctypes.c_uint32)
    lib.rlcc_peer_rtt_event.restype = lib.rlcc_peer_event.restype = ctypes.c_uint32
    assert lib.rlcc_peer_abi() == 1 and lib.rlcc_peer_ctx_words() == fmt.CTX_WORDS
    lib.rlcc_peer_init()
    model = _golden_model()
    rng = np.random.default_rng(7)
    n = 12
    ctx = np.zeros((n, fmt.CTX_WORDS), np.uint32)
    ctx[6:, fmt.CTX_RATE] = rng.integers(fmt.RATE_MIN_DEFAULT, fmt.RATE_ONE, n - 6)
    ctx[6:, fmt.CTX_PREV_FACTOR] = fmt.FACTOR_ONE  # GoldenController's seeded start
    ours = ctx.copy()
    now = np.full(n, 2**32 - 50_000, np.int64) + rng.integers(0, 8000, n)
    decided = 0
    for step in range(25):
        rtt = rng.integers(6000, 320_000, n)
        now = now + rtt
        tx = step % 5 == 4
        etype = np.full(n, fmt.EVENT_TX if tx else fmt.EVENT_RTT)
        ev = golden.make_events(etype, now, u0=None if tx else now - rtt)
        want = golden.step(model, ctx, ev)
        ctx = want.ctx
        for i in range(n):
            req = ctypes.c_uint32(7)
            if tx:
                rate = lib.rlcc_peer_event(ours[i].ctypes.data_as(u32p), ev[i].ctypes.data_as(u32p), ctypes.byref(req))
            else:
                rate = lib.rlcc_peer_rtt_event(ours[i].ctypes.data_as(u32p), ctypes.c_uint32(int(ev[i, fmt.EV_TIMESTAMP])),
                                               ctypes.c_uint32(int(ev[i, fmt.EV_RTT_REQ_SEND_TS])), ctypes.c_uint32(0),
                                               ctypes.c_uint32(0), ctypes.byref(req))
                decided += 1
            assert (rate, req.value) == (int(want.rate[i]), int(want.rtt_req[i])), (step, i)
        assert (ours == ctx).all(), step
    assert decided == 240 and len(np.unique(ctx[:, fmt.CTX_RATE])) > 6  # the rates did move


def test_firmware_library_rejects_a_changed_source(tmp_path):
    import json
    import shutil

    for name in ("firmware.rlcc.json", "firmware.c", "firmware.h"):
        shutil.copy(FIRMWARE.parent / name, tmp_path / name)
    (tmp_path / "firmware.c").write_text((tmp_path / "firmware.c").read_text() + "\n")
    with pytest.raises(FL.FirmwareLibError, match="firmware.c: sha256 differs"):
        FL.build_library(tmp_path / "firmware.rlcc.json", tmp_path / "out")
    (tmp_path / "bad.json").write_text(json.dumps({"files": {}}))
    with pytest.raises(FL.FirmwareLibError, match="not a readable firmware manifest"):
        FL.build_library(tmp_path / "bad.json", tmp_path / "out")


def test_rl_scenario_stretches_links_to_the_policys_base_rtt():
    sc = S.rl_scenario(S.PeerScenario("incast", 8, 8), 8000)
    assert sc.link_delay_ns == 1960 and sc.base_rtt_ns == 8000  # 4 x 1960 + 2 x 80
    assert sc.rlcc_scenario().network.base_rtt_us == pytest.approx(8.0)
    assert sc.rlcc_scenario().topology.link_delay_ns == 1960
    assert S.topology_text(sc.topology()).splitlines()[2] == "0 9 100Gbps 0.00196ms 0"
    with pytest.raises(ValueError, match="no whole-ns link delay"):
        S.rl_scenario(S.PeerScenario("incast", 8, 8), 8001)


def _example_latency_ns() -> int:
    """The example's worst verified decision in whole ns, rounded up (verify.json: 595 cycles at 1.8 GHz -> 331)."""
    v = json.loads((FIRMWARE.parent / "verify.json").read_text())
    return math.ceil(v["budget"]["worst_case_ns"])


def test_rl_peer_settings_follow_the_golden_controller(tmp_path):
    """Phases are the engine's (in [0, base RTT)), clock offset and decision latency the golden
    controller's (verify.json's worst case), a fair start seeds the context at round(1/8 x 2^20)."""
    from rlcc import formats as fmt
    from rlcc.simulator.controllers.compiled import DEFAULT_CLOCK_OFFSET_NS

    teacher, golden = C.rl_controllers(FIRMWARE, TEACHER)
    sc = S.rl_scenario(S.PeerScenario("incast", 8, 8, "fair", duration_ms=1.0), 8000)
    phases = C.run_rlcc_with(sc, golden, S.RL)[1]["probe_phase_ns"]  # the golden controller's fluid run
    rl = C.rl_peer_settings(sc, golden, tmp_path / "lib.so", phases)
    assert len(rl.phases_ns) == 8 and 0 <= rl.phases_ns.min() and rl.phases_ns.max() < 8000
    assert len(np.unique(rl.phases_ns)) == 8
    assert rl.clock_offset_ns == DEFAULT_CLOCK_OFFSET_NS and rl.decision_latency_ns == _example_latency_ns()
    assert rl.seed_ctx[fmt.CTX_RATE] == fmt.RATE_ONE // 8 and rl.seed_ctx[fmt.CTX_PREV_FACTOR] == fmt.FACTOR_ONE
    assert not any(rl.seed_ctx[2:]) and rl.init_rate_fraction is None
    line = C.rl_peer_settings(dataclasses.replace(sc, start="line"), golden, tmp_path / "lib.so", phases)
    assert line.seed_ctx is None and line.init_rate_fraction is None  # the model starts at line rate itself
    cfg = S.write_rl_peer_inputs(sc, rl, tmp_path / "run")
    kv = {}
    for row in cfg.read_text().splitlines():
        k, v = row.split(" ", 1)
        kv[k] = v  # later lines win, as in rlcc-peer.cc
    assert kv["CC_MODE"] == "11" and kv["HAS_WIN"] == "0" and kv["RL_FIRMWARE_LIB"].endswith("lib.so")
    assert kv["RL_DECISION_LATENCY_NS"] == str(_example_latency_ns()) and kv["RL_CLOCK_OFFSET_NS"] == str(DEFAULT_CLOCK_OFFSET_NS)
    assert kv["RL_SEED_CTX"].split()[:2] == [str(fmt.RATE_ONE // 8), str(fmt.FACTOR_ONE)]
    assert [float(x) for x in Path(kv["RL_PHASE_FILE"]).read_text().split()] == pytest.approx(rl.phases_ns, abs=1e-3)
    assert teacher.spec.reward.base_rtt_ns == golden.model.spec.reward.base_rtt_ns == 8000


def test_peer_runs_the_firmware_on_a_short_incast(tmp_path, firmware_library):
    """The firmware in the peer (CC_MODE 11): the run completes, every flow decides once per probe
    RTT (>= the 8 us base RTT the unloaded probe measures), each decision changes the rate by a factor
    inside the model's clamp (or hits the rate bounds), and the QPs run at the decided rates."""
    peer = os.environ.get("RLCC_NS3_PEER")
    if not peer or not Path(peer).is_file():
        pytest.skip("needs the built ns-3 peer (python bench/peer_ns3/build.py SRC --build-dir DIR): set RLCC_NS3_PEER")
    from rlcc import formats as fmt

    _, golden = C.rl_controllers(FIRMWARE, TEACHER)
    k = golden.model.constants
    sc = S.rl_scenario(S.PeerScenario("incast", 8, 8, "fair", duration_ms=0.4), 8000)
    rl = C.rl_peer_settings(sc, golden, firmware_library, C.run_rlcc_with(sc, golden, S.RL)[1]["probe_phase_ns"])
    out, curve = C.run_peer(Path(peer), sc, S.RL, tmp_path, np.arange(8), rl)
    assert 0.5 < out["goodput"] <= 1.0 and len(curve["t_us"]) >= 400
    d = np.loadtxt(tmp_path / sc.name / S.RL / "decisions.txt", dtype=np.int64, ndmin=2)
    assert set(d[:, 1]) == set(range(8))
    first = d[np.unique(d[:, 1], return_index=True)[1]]
    assert d[:, 2].min() >= 8000 and first[:, 2].max() < 10_000  # fair start: under 2 us of queue at first
    for flow in range(8):
        mine = d[d[:, 1] == flow]
        assert np.all(np.diff(mine[:, 0]) == mine[1:, 2])  # one probe in flight: each RTT ends the next decision
        rates = np.concatenate([[rl.seed_ctx[fmt.CTX_RATE]], mine[:, 3]]).astype(np.float64)
        ratio = rates[1:] / rates[:-1]
        at_bound = (rates[1:] <= k.rate_min) | (rates[1:] >= fmt.RATE_ONE)
        lo, hi = k.clamp_min_q16 / fmt.FACTOR_ONE, k.clamp_max_q16 / fmt.FACTOR_ONE
        assert np.all(at_bound | ((ratio >= lo - 1e-4) & (ratio <= hi + 1e-4))), flow
    trace = PO.read_flows(tmp_path / sc.name / S.RL / "flows.txt")
    decided = set((d[:, 3] * 100_000_000_000) >> 20)
    seen = set(trace.rate_bps[-1][np.isfinite(trace.rate_bps[-1])].astype(np.int64).tolist())
    assert seen <= decided


# ---- the peer's ECMP paths ---------------------------------------------------------------------

E = _load("ecmp")


@pytest.mark.parametrize("data, seed, expected", [
    # MurmurHash3_x86_32 published vectors (SMHasher's; e.g. hlibc's test_murmurhash3_x86_32)
    (b"", 0, 0), (b"", 1, 0x514E28B7), (b"", 0xFFFFFFFF, 0x81F16F39), (b"\xff\xff\xff\xff", 0, 0x76293B50),
    (b"\x21\x43\x65\x87", 0, 0xF55B516B), (b"\x21\x43\x65\x87", 0x5082EDEE, 0x2362F9DE),
    (b"\x21\x43\x65", 0, 0x7E4A8634), (b"\x21\x43", 0, 0xA0F7B07A), (b"\x21", 0, 0x72661CF4),
    (b"Hello, world!", 1234, 0xFAF6CDB3),
])
def test_murmur3_x86_32_matches_published_vectors(data, seed, expected):
    assert E.murmur3_32(data, seed) == expected


def test_peer_next_hops_follow_the_drivers_bfs_order():
    t = S.PeerScenario("all-to-all", 240, 16, leaves=4, spines=2).topology()
    via = E.next_hops(t, 4)  # toward h4 (leaf1 = node 17); spines are nodes 20, 21
    assert via[16] == [20, 21] and via[20] == [17] and via[17] == [4] and via[0] == [16]
    assert E.host_address(4) == (11 << 24) | (4 << 8) | 1


def test_all_to_all_rlcc_flows_take_the_peers_hashed_paths():
    sc = S.PeerScenario("all-to-all", 240, 16, "fair", leaves=4, spines=2)
    r = sc.rlcc_scenario("dcqcn")
    src, dst = sc.flow_pairs()
    assert r.paths == E.peer_paths(sc.topology(), src, dst, S.DPORT)
    for (a, b), p in zip(zip(src, dst), r.paths):
        assert p[0] == f"h{a}" and p[-1] == f"h{b}" and len(p) == (3 if a // 4 == b // 4 else 5)
        if len(p) == 5:  # the leaf's choice is MurmurHash3 of the packed 5-tuple words, seeded with its node id
            words = [k for k in C.peer_keys(sc) if (k[0], k[1]) == (a, b)][0]
            key = np.array([E.host_address(a), E.host_address(b), words[2] | (S.DPORT << 16)], "<u4").tobytes()
            leaf = 16 + a // 4
            assert p[2] == f"spine{E.murmur3_32(key, leaf) % 2}"
    spines = [p[2] for p in r.paths if len(p) == 5]
    assert spines.count("spine0") != spines.count("spine1")  # the peer's hash is not balanced here
    assert S.PeerScenario("incast", 8, 8).rlcc_scenario("dcqcn").paths is None
