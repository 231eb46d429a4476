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

Where the primary peer (ns-3-alibabacloud) crashes, its error is recorded with the row and, given
``--fallback-peer`` (the same driver built in the HPCC repository's ns-3.17 tree), that peer's run
fills the row (``peer_tree`` names the tree that produced each row's numbers).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import ecmp  # noqa: E402
import metrics as m  # noqa: E402
import peer_output as po  # noqa: E402
import scenarios as s  # noqa: E402
from benchlib import machine  # noqa: E402

from rlcc.simulator import simulate  # noqa: E402

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
    t0 = time.perf_counter()
    r = simulate(sc.rlcc_scenario(cc), s.controller(cc, sc))
    wall = time.perf_counter() - t0
    span = r.metrics["window_ms"] * 1e6
    delivered = r.flows["window_rate"] * BYTES_PER_NS * span
    t_us, q_us = r.series["t_us"], r.series["queue_us"]
    out = side_metrics(t_us, q_us, r.series["rates"], delivered, span, sc)
    out.update({"drop_packets": float(r.metrics["drops_per_flow"] * sc.flows), "pfc_pauses": None,
                "wall_s": round(wall, 2)})
    return out, {"t_us": t_us, "queue_us": q_us, "flow_ids": r.series["flow_ids"]}


def peer_keys(sc: s.PeerScenario) -> list[tuple[int, int, int]]:
    """(src, dst, sport) of every flow in flow-file order (rlcc-peer numbers ports from 10000 per pair)."""
    src, dst = sc.flow_pairs()
    return [(int(a), int(b), p) for a, b, p in zip(src, dst, ecmp.peer_sport(src, dst))]


def build_info(binary: Path) -> dict | None:
    """build.py's record next to a peer binary (BUILD_DIR/out/scratch/BINARY -> BUILD_DIR/build-info.json)."""
    path = Path(binary).resolve().parents[2] / "build-info.json"
    return json.loads(path.read_text()) if path.is_file() else None


def run_peer(binary: Path, sc: s.PeerScenario, cc: str, work: Path, flow_ids: np.ndarray) -> tuple[dict, dict]:
    run_dir = work / sc.name / cc
    cfg = s.write_peer_inputs(sc, cc, run_dir)
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


def _resample(t: np.ndarray, x: np.ndarray, at: np.ndarray) -> np.ndarray:
    return np.interp(at, t, x)


def plot(sc: s.PeerScenario, curves: dict[str, dict], folder: Path, failed: list[str]) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 4))
    styles = {"rlcc-sim": "-", "ns-3 peer": "--"}
    colors = {"dcqcn": "tab:blue", "hpcc": "tab:red"}
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
    ap.add_argument("--controllers", type=lambda x: x.split(","), default=list(s.CONTROLLERS))
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
             [cc for cc in args.controllers if f"ns-3 peer / {cc}" not in curves])
    build = build_info(Path(args.peer)) or old.get("build")
    fallback = (build_info(Path(args.fallback_peer)) if args.fallback_peer else None) or old.get("fallback_build")
    doc = {"command": "python bench/peer_ns3/compare.py --peer BIN" + (" --fallback-peer BIN" if args.fallback_peer else "")
           + (" --large" if args.large else ""),
           "peer": "github.com/aliyun/ns-3-alibabacloud + bench/peer_ns3/rlcc-peer.cc", "build": build,
           "fallback_build": fallback,
           "rlcc_differs": s.RLCC_DIFFERS, "goals": {"goodput_abs": m.GOODPUT_TOL, "queue_rel": m.QUEUE_REL_TOL,
                                                 "queue_abs_us": m.QUEUE_ABS_TOL_US, "converge_rel": m.CONVERGE_REL_TOL},
           "rows": sorted(rows.values(), key=lambda r: (r["kind"], r["flows"], r["hosts"], r["start"], r["controller"])),
           "machine": machine()}
    out_path.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {out_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
