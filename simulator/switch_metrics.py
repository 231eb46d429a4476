"""ACC's evaluation metrics of one run with a switch agent (Yan et al., SIGCOMM 2021, section 5).

FCT slowdown (``metrics.fct_slowdown``: FCT / (size at line rate + the flow's base RTT)) of the
finished flows: mean and p99 for mice (< 100 KB) and elephants (>= 1 MB), mean overall; the
queue over the controlled queues that carried traffic (interval-end depth samples, KB: mean and
p99); the mean utilization of the bottleneck queues (last hop, over the recorded intervals in
which they transmitted). Unfinished flows are counted (``unfinished``), not scored.
"""

from __future__ import annotations

import numpy as np

from rlcc.errors import BadInputError
from rlcc.simulator.metrics import fct_slowdown

MICE_BYTES = 100_000  # below: a mouse flow
ELEPHANT_BYTES = 1_000_000  # at or above: an elephant flow


def _stats(x: np.ndarray, prefix: str) -> dict[str, float]:
    if len(x) == 0:
        return {f"{prefix}_mean": float("nan"), f"{prefix}_p99": float("nan")}
    return {f"{prefix}_mean": float(x.mean()), f"{prefix}_p99": float(np.percentile(x, 99))}


def switch_metrics(result) -> dict[str, float]:
    """ACC metrics of a ``SimResult`` run with finite flows and a switch agent (see module doc)."""
    sw, fl = result.switch, result.flows
    if sw is None:
        raise BadInputError("switch_metrics: the run had no switch agent (simulate(..., switch_agent=...))")
    size = fl["size_bytes"]
    finite = np.isfinite(size)
    if not finite.any():
        raise BadInputError("switch_metrics: the run has no finite flows")
    slow = fct_slowdown(fl["fct_ns"][finite], size[finite], fl["base_rtt_ns"][finite],
                        result.scenario.network.payload_bytes_per_ns)
    done = np.isfinite(slow)
    s, sz = slow[done], size[finite][done]
    out = {"flows": float(finite.sum()), "unfinished": float((~done).sum()),
           "slowdown_mean": float(s.mean()) if len(s) else float("nan")}
    out.update(_stats(s[sz < MICE_BYTES], "mice_slowdown"))
    out.update(_stats(s[sz >= ELEPHANT_BYTES], "elephant_slowdown"))
    used = sw["tx_bytes"] > 0
    out.update(_stats(sw["qlen_bytes"][:, used].ravel() / 1e3, "queue_kb"))
    util = sw["util"][:, sw["last_hop"] & used]
    busy = util[util > 0]
    out["bottleneck_util"] = float(busy.mean()) if len(busy) else float("nan")
    return out
