"""The NIC decision processor: the sending host's cores and hardware threads that run the firmware.

The papers' Table II collapse is a capacity effect: a NIC runs every flow's RTT decision on a few
cores, so when flows x decision time exceeds what its threads can do, RTT events wait and each
flow's loop slows down. ``NicConfig`` (a ``Scenario.nic``; None: no processor, the default) gives
the NIC ``cores`` x ``threads`` hardware threads and the decision cost in cycles at the target
profile's clock; ``DecisionProcessor`` queues the RTT events of each NIC FIFO and hands each to the
earliest free thread for ``decision_ns``. A flow has at most one decision pending (its next probe
leaves when the decision completes, as the firmware's ``rtt_req`` does; the engine's serial path).

Threads are modelled as independent servers, each running a decision in ``decision_ns``. A profile
whose hardware threads share one in-order pipeline (dpa: barrel multithreading) gives a busy thread
only its share of the pipeline: measure the cycles under full load (``rlcc-verify --full-load``
records ``budget.hw_threads_sharing``, which ``from_verify`` folds into the cycles, the same product
as ``worst_case_ns``), or count one thread per pipeline.
"""

from __future__ import annotations

import collections
import dataclasses
from pathlib import Path
from typing import Any

import numpy as np

from rlcc import textio
from rlcc.errors import BadInputError
from rlcc.simulator.params import check_range, fields_from_json

MAX_CORES = 1024
MAX_THREADS = 256
MAX_DECISION_CYCLES = 10**9
CLOCK_HZ = (1e6, 1e11)


@dataclasses.dataclass(frozen=True)
class NicConfig:
    """Each sending host's decision processor: ``cores`` x ``threads`` hardware threads, each
    decision ``decision_cycles`` cycles at ``clock_hz`` (the target profile's clock)."""

    cores: int = 1
    threads: int = 1
    decision_cycles: int = 1800
    clock_hz: int = 1_800_000_000

    @property
    def servers(self) -> int:
        return self.cores * self.threads

    @property
    def decision_ns(self) -> float:
        """One decision's time on a thread (ns)."""
        return self.decision_cycles * 1e9 / self.clock_hz

    def validate(self) -> None:
        for name, value, hi in (("cores", self.cores, MAX_CORES), ("threads", self.threads, MAX_THREADS)):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= hi:
                raise BadInputError(f"invalid scenario: nic.{name} must be an integer in 1..{hi}, got {value!r}")
        if isinstance(self.decision_cycles, bool) or not isinstance(self.decision_cycles, int) \
                or not 1 <= self.decision_cycles <= MAX_DECISION_CYCLES:
            raise BadInputError(f"invalid scenario: nic.decision_cycles must be an integer in 1..{MAX_DECISION_CYCLES}, "
                                f"got {self.decision_cycles!r}")
        check_range(self.clock_hz, *CLOCK_HZ, "nic.clock_hz")

    @staticmethod
    def from_dict(data: Any) -> NicConfig:
        if isinstance(data, NicConfig):
            return data
        cfg = NicConfig(**fields_from_json(NicConfig, data, "nic"))
        cfg.validate()
        return cfg


def verify_cycles(verify_json: Path) -> tuple[int, int]:
    """(worst-case decision cycles, clock Hz) ``rlcc-verify`` measured: ``cycles.max`` times the
    hardware threads it assumed share the pipeline (its ``worst_case_ns`` at ``clock_hz``)."""
    try:
        data = textio.load_json(verify_json, "rlcc-verify report")
        cycles = int(data["cycles"]["max"]) * int(data["budget"].get("hw_threads_sharing", 1))
        clock = int(data["clock_hz"])
    except textio.InputFileError as exc:
        raise BadInputError(f"{verify_json}: {exc.reason}") from None
    except (KeyError, TypeError, ValueError, AttributeError):
        raise BadInputError(f"{verify_json}: not an rlcc-verify report with cycles.max and clock_hz") from None
    return cycles, clock


class DecisionProcessor:
    """Per-NIC FIFO queues of RTT events served by identical threads (state of one run).

    All decisions take the same time, so FIFO service keeps threads freeing in assignment order:
    each NIC's threads are a ring of free times and an event starts at max(arrival, the oldest
    thread's free time). Records every decision's wait (start - arrival) and the backlog (events
    waiting for a thread, this one included) seen at each arrival.
    """

    def __init__(self, cfg: NicConfig, flow_host: np.ndarray) -> None:
        self.cfg, self.d = cfg, cfg.decision_ns
        self.flow_host = np.asarray(flow_host, np.int64)
        hosts = int(self.flow_host.max()) + 1 if len(self.flow_host) else 0
        self.free = np.zeros((hosts, cfg.servers))
        self.ptr = np.zeros(hosts, np.int64)
        self.waiting: list[collections.deque] = [collections.deque() for _ in range(hosts)]
        n = len(self.flow_host)
        self.wait_sum, self.wait_max, self.count = np.zeros(n), np.zeros(n), np.zeros(n, np.int64)
        self.backlog_max = np.zeros(hosts, np.int64)
        self.waits: list[np.ndarray] = []
        self.starts: list[np.ndarray] = []

    def admit(self, flows: np.ndarray, arrival: np.ndarray) -> np.ndarray:
        """Queue the RTT events of ``flows`` arriving at ``arrival`` (ns); returns each decision's
        completion time. Events are served in arrival order (ties: flow index)."""
        done = np.empty(len(flows))
        wait = np.empty(len(flows))
        order = np.lexsort((flows, arrival))
        hosts = self.flow_host[flows]
        free, ptr, k = self.free, self.ptr, self.cfg.servers
        for i in order.tolist():
            h, a = int(hosts[i]), float(arrival[i])
            start = max(a, free[h, ptr[h]])
            free[h, ptr[h]] = done[i] = start + self.d
            ptr[h] = (ptr[h] + 1) % k
            q = self.waiting[h]
            while q and q[0] <= a:
                q.popleft()
            if start > a:
                q.append(start)
            self.backlog_max[h] = max(self.backlog_max[h], len(q))
            wait[i] = start - a
        np.add.at(self.wait_sum, flows, wait)
        np.maximum.at(self.wait_max, flows, wait)
        np.add.at(self.count, flows, 1)
        self.waits.append(wait)
        self.starts.append(done - self.d)
        return done

    def metrics(self, span_ns: float) -> dict[str, float]:
        """Decision queueing delay over all decisions (us), the largest backlog of any NIC, and
        the mean thread utilisation over the run's ``span_ns`` (NICs with flows; decisions still
        queued or running at the end count only their part inside it)."""
        w = np.concatenate(self.waits) if self.waits else np.zeros(0)
        start = np.concatenate(self.starts) if self.starts else np.zeros(0)
        busy = float(np.clip(np.minimum(start + self.d, span_ns) - start, 0.0, None).sum())
        nics = len(np.unique(self.flow_host))
        util = busy / (nics * self.cfg.servers * span_ns) if span_ns > 0 and nics else float("nan")
        return {
            "nic_decision_us": self.d / 1e3,
            "nic_wait_mean_us": float(w.mean()) / 1e3 if len(w) else 0.0,
            "nic_wait_p99_us": float(np.percentile(w, 99)) / 1e3 if len(w) else 0.0,
            "nic_wait_max_us": float(w.max()) / 1e3 if len(w) else 0.0,
            "nic_backlog_max": float(self.backlog_max.max(initial=0)),
            "nic_utilization": util,
        }

    def per_flow(self) -> dict[str, np.ndarray]:
        """Per-flow mean and max decision queueing delay (ns; NaN: no decision)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(self.count > 0, self.wait_sum / self.count, np.nan)
        return {"nic_wait_mean_ns": mean, "nic_wait_max_ns": np.where(self.count > 0, self.wait_max, np.nan)}

