"""Switch-agent vectors as harness records, and the firmware's outputs compared with the golden
ones: what the check, the C mutants and the proof's counterexample replay share."""

from __future__ import annotations

from typing import Any

import numpy as np

from rlcc.firmware_sdk_stub import switch_layout as sl
from rlcc.kinds.switch_agent import vectors as sv


def to_records(v: sv.SwitchVectors) -> np.ndarray:
    recs = sl.new_records(len(v))
    n = np.arange(len(v))
    recs["port"], recs["queue"] = n % sl.MAX_PORTS, n % sl.MAX_QUEUES
    recs["util_mul"], recs["flags"] = v.util_mul, v.flags
    recs["qlen_bytes"], recs["tx_bytes"], recs["marked_pkts"] = v.qlen_bytes, v.tx_bytes, v.marked_pkts
    recs["ctx_in"] = v.ctx_in
    return recs


def mismatches(v: sv.SwitchVectors, out: np.ndarray, n_classes: int, with_scores: bool = True) -> np.ndarray:
    """Indices of records whose firmware output differs from the golden outputs."""
    ecn = np.stack([out["kmin_bytes"], out["kmax_bytes"], out["pmax_q16"]], axis=1).astype(np.int64)
    bad = np.any(out["ctx_out"].astype(np.int64) != v.ctx_out, axis=1) | np.any(ecn != v.ecn, axis=1)
    if with_scores:
        bad |= out["action"].astype(np.int64) != v.action
        bad |= np.any(out["scores"][:, :n_classes].astype(np.int64) != v.scores, axis=1)
    return np.flatnonzero(bad)


def example(v: sv.SwitchVectors, i: int, out: np.ndarray, n_classes: int) -> dict[str, Any]:
    o = out[i]
    return {
        "index": int(i), "tag": v.tags[i], "flags": int(v.flags[i]),
        "inputs": {"ctx_in": v.ctx_in[i].tolist(), "qlen_bytes": int(v.qlen_bytes[i]), "tx_bytes": int(v.tx_bytes[i]),
                   "marked_pkts": int(v.marked_pkts[i]), "util_mul": int(v.util_mul[i])},
        "expected": {"action": int(v.action[i]), "ecn": v.ecn[i].tolist(), "ctx_out": v.ctx_out[i].tolist(),
                     "scores": v.scores[i].tolist()},
        "got": {"action": int(o["action"]), "ecn": [int(o["kmin_bytes"]), int(o["kmax_bytes"]), int(o["pmax_q16"])],
                "ctx_out": o["ctx_out"].tolist(), "scores": o["scores"][:n_classes].tolist()},
    }
