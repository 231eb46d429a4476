"""Benchmark: rlcc-sim against a packet-level peer (HPCC's ns-3 RDMA models), per scenario x controller.

Every scenario of ``scenarios.SCENARIOS`` runs under DCQCN and HPCC in rlcc-sim and in the peer
(``rlcc-peer``, built by ``bench/peer_ns3/build.py``) with the same inputs; both sides' series go
through the same metric functions (``metrics.py``): steady goodput and Jain fairness over the
second half of the run, mean / p99 of the queue summed over all switch egress ports, time to
converge, drops (rlcc) and PFC pauses (peer). Writes bench/results/ns3_peer.json and one
queue-over-time plot per scenario under bench/results/ns3_peer/. Not in CI.

    python bench/peer_ns3/compare.py --peer /work/ns3-build/out/scratch/ns3.36.1-rlcc-peer \
        [--fallback-peer /work/hpcc-build/out/scratch/rlcc-peer] [--work-dir /tmp/ns3-peer-runs]
        [--only NAME,...] [--duration-ms 10] [--large]

``--controllers rl`` adds the bundled RL policy's rows (incast scenarios; ``--firmware`` manifest,
``--model`` its teacher ONNX policy): rlcc-sim runs the teacher (``rlcc``) and the firmware's golden
model (``rlcc_firmware``), the peer runs the firmware itself (CC_MODE 11 of rlcc-peer.cc, the
firmware built as a shared library by ``firmware_lib.py``), all with links lengthened so the base
RTT is the policy's (``scenarios.rl_scenario``).

Where the primary peer (ns-3-alibabacloud) crashes, its error is recorded with the row and, given
``--fallback-peer`` (the same driver built in the HPCC repository's ns-3.17 tree), that peer's run
fills the row (``peer_tree`` names the tree that produced each row's numbers).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import ecmp  # noqa: E402
import firmware_lib as fl  # noqa: E402
import metrics as m  # noqa: E402
import peer_output as po  # noqa: E402
import scenarios as s  # noqa: E402
from benchlib import machine  # noqa: E402

from rlcc.simulator import simulate  # noqa: E402
from rlcc.simulator.registry import make_controller  # noqa: E402
from rlcc.simulator.suite import load_firmware  # noqa: E402

ROOT = HERE.parents[1]
OUT = ROOT / "bench" / "results" / "ns3_peer.json"
PEER_ENV = "RLCC_NS3_PEER"
BYTES_PER_NS = s.LINE_GBPS / 8


def side_metrics(t_us: np.ndarray, queue_us: np.ndarray, rates: np.ndarray, delivered: np.ndarray,
                 span_ns: float, sc: s.PeerScenario) -> dict:
    half = sc.duration_ms * 1e3 / 2
    qm, qp = m.queue_stats(t_us, queue_us, half)
    return {"goodput": m.steady_goodput(delivered, span_ns, sc.receivers(), BYTES_PER_NS),
            "jain": m.fairness(delivered), "queue_mean_us": qm, "queue_p99_us": qp,
            "converge_us": m.convergence_time(t_us, rates, half)}


def run_rlcc(sc: s.PeerScenario, cc: str) -> tuple[dict, dict]:
    return run_rlcc_with(sc, s.controller(cc, sc), cc)


def run_rlcc_with(sc: s.PeerScenario, ctl, cc: str) -> tuple[dict, dict]:
    """rlcc-sim's side of a row under controller ``ctl`` (``cc``: whose packet headers the network carries)."""
    t0 = time.perf_counter()
    r = simulate(sc.rlcc_scenario(cc), ctl)
    wall = time.perf_counter() - t0
    span = r.metrics["window_ms"] * 1e6
    delivered = r.flows["window_rate"] * BYTES_PER_NS * span
    t_us, q_us = r.series["t_us"], r.series["queue_us"]
    # rlcc's window_rate counts a flow's bytes once sent (minus drops); bytes still queued at the
    # window's end were not delivered: take the queue's growth over the window off the total
    # (payload share of wire bytes), spread over the flows in proportion (Jain is unchanged).
    net = r.scenario.network
    queued_us = q_us[-1] - np.interp(r.metrics["window_start_ms"] * 1e3, t_us, q_us)
    queued = queued_us * 1e3 * BYTES_PER_NS * net.payload_fraction
    total = float(delivered.sum())
    if total > 0:
        delivered = delivered * max(total - queued, 0.0) / total
    out = side_metrics(t_us, q_us, r.series["rates"], delivered, span, sc)
    out.update({"drop_packets": float(r.metrics["drops_per_flow"] * sc.flows), "pfc_pauses": r.metrics_full.get("pfc_pauses"),
                "wall_s": round(wall, 2)})
    return out, {"t_us": t_us, "queue_us": q_us, "flow_ids": r.series["flow_ids"],
                 "probe_phase_ns": r.flows["probe_phase_ns"]}


def peer_keys(sc: s.PeerScenario) -> list[tuple[int, int, int]]:
    """(src, dst, sport) of every flow in flow-file order (rlcc-peer numbers ports from 10000 per pair)."""
    src, dst = sc.flow_pairs()
    return [(int(a), int(b), p) for a, b, p in zip(src, dst, ecmp.peer_sport(src, dst))]


def _rel(path: Path) -> str:
    """A path as recorded in the results: relative to the repository when inside it."""
    p = Path(path).resolve()
    return str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)


def build_info(binary: Path) -> dict | None:
    """build.py's record next to a peer binary (BUILD_DIR/out/scratch/BINARY -> BUILD_DIR/build-info.json)."""
    path = Path(binary).resolve().parents[2] / "build-info.json"
    return json.loads(path.read_text()) if path.is_file() else None


def run_peer(binary: Path, sc: s.PeerScenario, cc: str, work: Path, flow_ids: np.ndarray,
             rl: s.RlPeer | None = None) -> tuple[dict, dict]:
    """The peer's side of a row (``rl``: the firmware mode's settings, for ``cc`` = rl)."""
    run_dir = work / sc.name / cc
    cfg = s.write_rl_peer_inputs(sc, rl, run_dir) if rl is not None else s.write_peer_inputs(sc, cc, run_dir)
    info = build_info(binary) or {}
    env = {**os.environ, "LD_LIBRARY_PATH": info["lib_dir"]} if "lib_dir" in info else None  # waf builds: no rpath
    t0 = time.perf_counter()
    with open(run_dir / "stdout.txt", "w") as log:
        subprocess.run(["nice", "-n", "10", str(binary), str(cfg)], cwd=run_dir, stdout=log, stderr=subprocess.STDOUT,
                       env=env, check=True)
    wall = time.perf_counter() - t0
    q = po.read_qlen(run_dir / "qlen.txt")
    f = po.read_flows(run_dir / "flows.txt")
    keys = peer_keys(sc)
    col = {k: j for j, k in enumerate(f.keys)}
    missing = [k for k in keys if k not in col]
    if missing:
        raise po.PeerOutputError(f"{run_dir}: flows {missing[:3]} never appear in the flow trace")
    order = np.array([col[k] for k in keys])
    acked = np.nan_to_num(f.acked[:, order])
    rates = np.nan_to_num(f.rate_bps[:, order]) / (s.LINE_GBPS * 1e9)
    # A QP appears two zero-delay events after its flow starts: drop the samples taken before every
    # tracked flow existed (the t = 0 sample).
    first = int(np.argmax(np.all(np.isfinite(f.rate_bps[:, order][:, flow_ids]), axis=1)))
    acked, rates = acked[first:], rates[first:]
    t_f = f.t_ns[first:] / 1e3
    half = sc.duration_ms * 1e3 / 2
    a = int(np.searchsorted(t_f, half))
    span = (t_f[-1] - t_f[a]) * 1e3
    delivered = acked[-1] - acked[a]
    t_q, q_us = q.t_ns / 1e3, q.total() / BYTES_PER_NS / 1e3
    out = side_metrics(t_f, _resample(t_q, q_us, t_f), rates[:, flow_ids], delivered, span, sc)
    out.update({"queue_mean_us": m.queue_stats(t_q, q_us, half)[0], "queue_p99_us": m.queue_stats(t_q, q_us, half)[1],
                "drop_packets": None, "pfc_pauses": po.pfc_pauses(run_dir / "pfc.txt"), "wall_s": round(wall, 2)})
    return out, {"t_us": t_q, "queue_us": q_us}


def rl_controllers(firmware: Path, model: Path):
    """(teacher, golden): the ONNX policy and the firmware's fixed-point model as rlcc-sim controllers."""
    return make_controller("policy", str(model)), load_firmware(str(firmware))


def rl_peer_settings(sc: s.PeerScenario, golden, library: Path, phases_ns: np.ndarray) -> s.RlPeer:
    """The peer's firmware settings that reproduce rlcc's golden-controller run of ``sc``: that run's
    probe phases, the controller's clock offset and decision latency, the context it seeds a flow
    started at the scenario's initial rate with, and the model's initial rate on a line-rate start."""
    scenario = sc.rlcc_scenario()
    seed = None
    if scenario.initial_rate is not None:
        ctx = golden.seeded_context(float(scenario.initial_rate))
        seed = None if ctx is None else tuple(int(w) for w in ctx)
    init = golden.initial_rate if sc.start == "line" and golden.initial_rate < 1.0 else None
    return s.RlPeer(library=library, phases_ns=phases_ns, clock_offset_ns=int(golden.clock_offset_ns),
                    # whole ns, rounded up as the verified worst case is (a peer must not decide sooner)
                    decision_latency_ns=math.ceil(round(golden.decision_latency_us * 1e3, 6)), seed_ctx=seed,
                    init_rate_fraction=init)


def rl_row(sc: s.PeerScenario, args, curves: dict) -> dict:
    """One RL row: teacher and firmware golden model in rlcc-sim, the firmware in the peer."""
    teacher, golden = rl_controllers(args.firmware, args.model)
    rsc = s.rl_scenario(sc, golden.model.spec.reward.base_rtt_ns)
    ours, oc = run_rlcc_with(rsc, teacher, "rl")
    fw, fc = run_rlcc_with(rsc, golden, "rl")
    curves[f"rlcc-sim / {s.RL}"], curves[f"rlcc-sim (firmware) / {s.RL}"] = oc, fc
    library = fl.build_library(args.firmware, args.work_dir / "firmware-libs")
    settings = rl_peer_settings(rsc, golden, library, fc["probe_phase_ns"])
    peer_error, peer, tree = None, None, None
    for which, binary in (("primary", args.peer), ("fallback", args.fallback_peer)):
        if binary is None or peer is not None:
            continue
        work = args.work_dir / which
        try:
            peer, pc = run_peer(Path(binary), rsc, s.RL, work, oc["flow_ids"], settings)
            curves[f"ns-3 peer / {s.RL}"] = pc
            tree = (build_info(Path(binary)) or {}).get("source", which)
        except subprocess.CalledProcessError as e:
            how = f"signal {-e.returncode}" if e.returncode < 0 else f"exit code {e.returncode}"
            known = s.PEER_PFC_RESUME_ISSUE if po.last_pfc_is_resume(work / rsc.name / s.RL / "pfc.txt") else None
            peer_error = f"the peer failed ({how})" + (f": {known}" if known else "")
    none = {"goodput": None, "queue_mean": None, "converge": None}
    return {"scenario": sc.name, "controller": s.RL, "kind": sc.kind, "flows": sc.flows, "hosts": sc.hosts,
            "start": sc.start, "duration_ms": sc.duration_ms, "base_rtt_us": rsc.base_rtt_ns / 1e3,
            "link_delay_ns": rsc.link_delay_ns, "start_fraction": rsc.start_fraction(),
            "firmware": _rel(args.firmware), "model": _rel(args.model),
            "rlcc": _round(ours), "rlcc_firmware": _round(fw), "peer": _round(peer) if peer else None,
            "peer_tree": tree, "peer_error": peer_error,
            "pass": m.verdict(ours, peer) if peer is not None else none,
            "pass_firmware": m.verdict(fw, peer) if peer is not None else none}


def _resample(t: np.ndarray, x: np.ndarray, at: np.ndarray) -> np.ndarray:
    return np.interp(at, t, x)


def plot(sc: s.PeerScenario, curves: dict[str, dict], folder: Path, failed: list[str]) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4))
    styles = {"rlcc-sim": "-", "rlcc-sim (firmware)": ":", "ns-3 peer": "--"}
    colors = {"dcqcn": "tab:blue", "hpcc": "tab:red", s.RL: "tab:green"}
    for label, c in curves.items():
        sim, cc = label.split(" / ")
        ax.plot(np.asarray(c["t_us"]) / 1e3, c["queue_us"], styles[sim], color=colors[cc], lw=1, label=label)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("queue, all switch egress ports (µs at 100 Gb/s)")
    ax.set_title(sc.name + (f" (no peer curve: {', '.join(failed)} crashed the peer)" if failed else ""), fontsize=10)
    ax.set_yscale("symlog", linthresh=1.0)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    fig.tight_layout()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{sc.name}.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _round(d: dict) -> dict:
    return {k: (round(v, 4) if isinstance(v, float) and np.isfinite(v) else (None if isinstance(v, float) else v))
            for k, v in d.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peer", type=Path, default=os.environ.get(PEER_ENV),
                    help=f"the rlcc-peer binary (default: ${PEER_ENV})")
    ap.add_argument("--fallback-peer", type=Path, default=os.environ.get(PEER_ENV + "_FALLBACK"),
                    help=f"rlcc-peer built in the HPCC repository's tree, run where --peer crashes "
                         f"(default: ${PEER_ENV}_FALLBACK)")
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/ns3-peer-runs"))
    ap.add_argument("--only", type=lambda x: x.split(","), default=None, help="scenario names")
    ap.add_argument("--duration-ms", type=float, default=None)
    ap.add_argument("--large", action="store_true", help="add the 512-flow incast")
    ap.add_argument("--controllers", type=lambda x: x.split(","), default=list(s.CONTROLLERS),
                    help=f"{', '.join(s.CONTROLLERS)} and/or {s.RL} (the firmware in the peer; incast scenarios only)")
    ap.add_argument("--firmware", type=Path, default=ROOT / "examples" / "firmware" / "firmware.rlcc.json",
                    help="controller rl: the firmware's .rlcc.json manifest (default: the bundled one)")
    ap.add_argument("--model", type=Path, default=ROOT / "examples" / "rlcc_mlp.onnx",
                    help="controller rl: the firmware's teacher, an ONNX policy (default: the bundled one)")
    ap.add_argument("--out", type=Path, default=OUT, help="results file (default: bench/results/ns3_peer.json)")
    args = ap.parse_args(argv)
    if args.peer is None or not Path(args.peer).is_file():
        ap.error(f"need the peer binary: --peer FILE or ${PEER_ENV} (build it with bench/peer_ns3/build.py)")
    todo = list(s.SCENARIOS) + (list(s.LARGE) if args.large else [])
    if args.only:
        todo = [sc for sc in todo if sc.name in args.only]
    if args.duration_ms:
        todo = [dataclasses.replace(sc, duration_ms=args.duration_ms) for sc in todo]
    out_path = args.out
    old = json.loads(out_path.read_text()) if out_path.exists() else {}
    rows = {(r["scenario"], r["controller"]): r for r in old.get("rows", [])}
    for sc in todo:
        curves = {}
        for cc in args.controllers:
            if cc == s.RL:
                if sc.kind == "incast":  # the probe follows the first next hop: unique paths only
                    rows[(sc.name, cc)] = row = rl_row(sc, args, curves)
                    print(json.dumps(row), flush=True)
                continue
            ours, oc = run_rlcc(sc, cc)
            curves[f"rlcc-sim / {cc}"] = oc
            peer_error, peer, tree = None, None, None
            for which, binary in (("primary", args.peer), ("fallback", args.fallback_peer)):
                if binary is None or (which == "fallback" and peer is not None):
                    continue
                work = args.work_dir / which
                try:
                    peer, pc = run_peer(Path(binary), sc, cc, work, oc["flow_ids"])
                    curves[f"ns-3 peer / {cc}"] = pc
                    tree = (build_info(Path(binary)) or {}).get("source", which)
                except subprocess.CalledProcessError as e:
                    if which == "fallback":
                        raise
                    how = f"signal {-e.returncode}" if e.returncode < 0 else f"exit code {e.returncode}"
                    known = s.PEER_KNOWN_ISSUES.get(cc)
                    if known is None and po.last_pfc_is_resume(work / sc.name / cc / "pfc.txt"):
                        known = s.PEER_PFC_RESUME_ISSUE
                    peer_error = f"the peer failed ({how})" + (f": {known}" if known else "")
            none = {"goodput": None, "queue_mean": None, "converge": None}
            verdict = m.verdict(ours, peer) if peer is not None else none
            row = {"scenario": sc.name, "controller": cc, "kind": sc.kind, "flows": sc.flows, "hosts": sc.hosts,
                   "start": sc.start, "duration_ms": sc.duration_ms, "base_rtt_us": sc.base_rtt_ns / 1e3,
                   "start_fraction": sc.start_fraction(), "rlcc": _round(ours),
                   "peer": _round(peer) if peer else None, "peer_tree": tree, "peer_error": peer_error,
                   "pass": verdict}
            rows[(sc.name, cc)] = row
            print(json.dumps(row), flush=True)
        plot(sc, curves, out_path.parent / out_path.stem,
             [cc for cc in args.controllers if f"ns-3 peer / {cc}" not in curves and (cc != s.RL or sc.kind == "incast")])
    build = build_info(Path(args.peer)) or old.get("build")
    fallback = (build_info(Path(args.fallback_peer)) if args.fallback_peer else None) or old.get("fallback_build")
    doc = {"command": "python bench/peer_ns3/compare.py --peer BIN" + (" --fallback-peer BIN" if args.fallback_peer else "")
           + (" --large" if args.large else "")
           + (f" --controllers {','.join(args.controllers)}" if args.controllers != list(s.CONTROLLERS) else ""),
           "peer": "github.com/aliyun/ns-3-alibabacloud + bench/peer_ns3/rlcc-peer.cc", "build": build,
           "fallback_build": fallback,
           "rlcc_differs": s.RLCC_DIFFERS,
           **({"rl_differs": s.RL_DIFFERS} if any(r["controller"] == s.RL for r in rows.values()) else {}),
           "goals": {"goodput_abs": m.GOODPUT_TOL, "queue_rel": m.QUEUE_REL_TOL,
                     "queue_abs_us": m.QUEUE_ABS_TOL_US, "converge_rel": m.CONVERGE_REL_TOL},
           "rows": sorted(rows.values(), key=lambda r: (r["kind"], r["flows"], r["hosts"], r["start"], r["controller"])),
           "machine": machine()}
    out_path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
