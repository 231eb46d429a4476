"""PFC pause control shared by both fabrics: thresholds, delayed PAUSE/RESUME, counters.

The fabric tells it, after each step, every ingress port's bytes in its switch's buffer
(``observe``); crossing XOFF (XON) schedules a pause (resume) that takes effect 2 x the ingress
link's propagation delay later (``apply`` at the step starts: the upstream's bytes stop, or
restart, reaching the switch then). A pause is one PAUSE frame: real switches refresh it with
quanta while the port stays above XON; the fluid counts transitions. One priority class: a paused
upstream stops all its traffic, whatever egress it goes to (head-of-line blocking).
"""

from __future__ import annotations

import heapq

import numpy as np

from rlcc.simulator.params import PfcParams

MAX_EVENTS = 100_000  # kept in the record's event log (counters are always complete)
HEADROOM_BDPS = 3  # the peer's per-port headroom (rlcc-peer.cc ConfigHdrm): 3 x link rate x one-way delay


class PauseControl:
    """Pause state of ``n`` ingress ports, each entering switch ``ingress_switch[i]`` (-1: a slot
    that is no port, e.g. a link into a host: it never holds bytes)."""

    def __init__(self, params: PfcParams, ingress_switch: np.ndarray, buffers: np.ndarray, delay_ns: np.ndarray,
                 rate_bytes_per_ns: np.ndarray) -> None:
        self.p = params
        into = np.asarray(ingress_switch, np.int64)
        self.is_port = into >= 0
        self.switch = np.maximum(into, 0)
        self.n = len(self.switch)
        self.buffers = np.asarray(buffers, np.float64)
        headroom = (HEADROOM_BDPS * np.asarray(rate_bytes_per_ns, np.float64) * np.asarray(delay_ns, np.float64)
                    if params.headroom_bytes is None else np.full(self.n, float(params.headroom_bytes)))
        # The shared pool the dynamic threshold divides: buffer minus every port's headroom and reserve.
        held_back = headroom + float(params.reserve_bytes)
        self.pool = self.buffers - np.bincount(self.switch[self.is_port], weights=held_back[self.is_port],
                                               minlength=len(self.buffers))
        self.delay = 2.0 * np.asarray(delay_ns, np.float64)
        self.requested = np.zeros(self.n, bool)  # the switch's view: PAUSE sent, no RESUME yet
        self.paused = np.zeros(self.n, bool)  # in effect at the upstream
        self.pauses = np.zeros(self.n, np.int64)
        self.paused_ns = np.zeros(self.n)
        self.since = np.zeros(self.n)
        self.max_bytes = np.zeros(self.n)
        self.events: list[tuple[float, int, int, bool]] = []  # heap: (effective time, seq, port, pause)
        self._seq = 0
        self.log: list[tuple[float, int, bool]] = []  # (time the switch decided, port, pause)

    def thresholds(self, occupancy: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per port: (the bytes compared, XOFF, XON). Static: the port's bytes; dynamic: its bytes
        above the reserve, against alpha x what the switch's shared pool has left."""
        p = self.p
        if not p.dynamic:
            return occupancy, np.full(self.n, float(p.xoff_bytes)), np.full(self.n, float(p.xon_bytes))
        shared = np.where(self.is_port, np.maximum(occupancy - p.reserve_bytes, 0.0), 0.0)
        used = np.bincount(self.switch, weights=shared, minlength=len(self.buffers))
        xoff = p.alpha * np.maximum(self.pool - used, 0.0)[self.switch]
        return shared, xoff, xoff - p.resume_offset_bytes

    def observe(self, t: float, occupancy: np.ndarray) -> None:
        """Compare each port's bytes at time ``t`` with its thresholds; schedule PAUSE / RESUME."""
        np.maximum(self.max_bytes, occupancy, out=self.max_bytes)
        level, xoff, xon = self.thresholds(occupancy)
        on = np.flatnonzero(~self.requested & (level > 0) & (level >= xoff))
        off = np.flatnonzero(self.requested & ((level <= xon) | (level <= 0)))
        for ports, pause in ((on, True), (off, False)):
            if len(ports) == 0:
                continue
            self.requested[ports] = pause
            if pause:
                self.pauses[ports] += 1
            for i in ports.tolist():
                heapq.heappush(self.events, (t + float(self.delay[i]), self._seq, i, pause))
                self._seq += 1
                if len(self.log) < MAX_EVENTS:
                    self.log.append((t, i, pause))

    def due(self, t: float) -> bool:
        return bool(self.events) and self.events[0][0] <= t

    def apply(self, t: float) -> np.ndarray:
        """Put the frames effective by ``t`` into effect; the ports whose state changed."""
        changed = []
        while self.events and self.events[0][0] <= t:
            _, _, i, pause = heapq.heappop(self.events)
            if self.paused[i] == pause:
                continue
            self.paused[i] = pause
            if pause:  # the fluid changes rates at step starts: time from ``t``, not ``at``
                self.since[i] = t
            else:
                self.paused_ns[i] += t - self.since[i]
            changed.append(i)
        return np.asarray(changed, np.int64)

    def record(self, t_end: float) -> dict[str, np.ndarray]:
        """Per ingress slot: pauses sent, paused time (ns, an open pause counted to ``t_end``), peak
        buffered bytes, whether it is a port; and the log (decision time ns, slot, 1 pause / 0 resume)."""
        paused = self.paused_ns + np.where(self.paused, t_end - self.since, 0.0)
        log = np.array(self.log, dtype=np.float64).reshape(-1, 3)
        return {"pauses": self.pauses.copy(), "paused_ns": paused, "max_bytes": self.max_bytes.copy(),
                "port": self.is_port.copy(), "log": log}
