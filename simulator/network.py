"""Fluid switch model: per-port queues in a shared lossy buffer, RED-style ECN, proportional drops.

Flows are grouped by (sender host, egress port). A flow's sending rate is its controller rate
times its host's NIC scale ``min(1, host_cap / sum of the host's rates)``, so the switch only
needs per-group rate sums. Per step the fabric advances the per-port queues and three per-port
time integrals: elapsed time, drop fraction and ECN-mark fraction. A flow's bytes sent, dropped
and marked since time t0 are its (piecewise constant) rate x host scale x the change of those
integrals, so per-flow accounting costs nothing per step; it is settled only when a flow's rate
changes (``Fabric.integrals``). That is what makes 8192 flows at a 1 us step affordable.

Within a step the queue is updated with the step's constant inflow (explicit Euler); marking uses
the queue at the start of the step; drops are shared by the ports' flows in proportion to their
arrival rates. ECN parameters are per port (``set_ecn``: a switch agent retunes them); with
``track_queues`` the fabric also keeps per-port cumulative marked bytes and queue time integrals
(the interval statistics a switch agent reads).

Lossless mode (``Network.pfc``): an ingress port is a host's link. The fabric keeps each group's
bytes in its port's queue: a step serves a queue's backlog and arrivals in proportion (fluid FIFO
mixing), so a group keeps (its bytes + its arrivals) x (queue after / (queue + arrivals)); a
host's bytes in the buffer are its groups' sum. ``pfc.PauseControl`` pauses a host above XOFF: its
NIC scale becomes 0 (every flow of the host, to any port: head-of-line blocking) until the resume
takes effect. PFC runs on the general (numpy) path, never the one-port fast path.
"""

from __future__ import annotations

import numpy as np

from rlcc.simulator.params import FlowTable, Network
from rlcc.simulator.pfc import PauseControl


class Fabric:
    """Per-port queue state and per-group sending integrals for one run."""

    def __init__(self, net: Network, table: FlowTable) -> None:
        self.net = net
        self.C = net.bytes_per_ns
        self.buffer = float(net.buffer_bytes)
        pair = table.host.astype(np.int64) * table.n_ports + table.port
        uniq, inverse = np.unique(pair, return_inverse=True)
        self.flow_group = inverse.astype(np.int64)
        self.group_host = (uniq // table.n_ports).astype(np.int64)
        self.group_port = (uniq % table.n_ports).astype(np.int64)
        self.n_groups, self.n_ports, self.n_hosts = len(uniq), table.n_ports, table.n_hosts
        self.n_sinks = self.n_ports  # receivers: goodput is normalized by their line rate
        self.group_rate = np.zeros(self.n_groups)
        self.queue = np.zeros(self.n_ports)
        self.tx = np.zeros(self.n_ports)  # bytes each port transmitted (several ports; one port: delivered)
        # Per-port integrals over time (ns) of [1, drop fraction, mark fraction].
        self.time = 0.0
        self.drop_int = np.zeros(self.n_ports)
        self.mark_int = np.zeros(self.n_ports)
        # Per-group integrals of [scale, scale*drop, scale*mark] at the last refresh, and the
        # per-port integrals at that moment.
        self.g0 = np.zeros((self.n_groups, 3))
        self.ref = np.zeros((self.n_ports, 3))
        self.group_scale = np.ones(self.n_groups)
        self.port_load = np.zeros(self.n_ports)
        self.delivered = 0.0
        self.dropped = 0.0
        self.offered = 0.0
        self._dirty = True
        self.pfc: PauseControl | None = None
        if net.pfc is not None:  # one switch; ingress port = host link (base RTT / 4 one way)
            self.pfc = PauseControl(net.pfc, np.zeros(self.n_hosts, np.int64), np.array([self.buffer]),
                                    np.full(self.n_hosts, net.base_rtt_ns / 4), np.full(self.n_hosts, self.C))
            self.group_bytes = np.zeros(self.n_groups)  # each group's bytes in its port's queue
        self.host_on = np.ones(self.n_hosts)  # 0 while PFC pauses the host
        self._single = self.n_ports == 1 and self.pfc is None
        self._q = 0.0  # the single-port fast path keeps its state in Python floats
        self._d = 0.0
        self._m = 0.0
        # Per-port RED parameters (a switch agent changes them); the fast path reads port 0's.
        self.kmin = np.full(self.n_ports, float(net.ecn_kmin_bytes))
        self.kmax = np.full(self.n_ports, float(net.ecn_kmax_bytes))
        self.pmax = np.full(self.n_ports, float(net.ecn_pmax))
        self._ecn0 = (float(self.kmin[0]), float(self.kmax[0]), float(self.pmax[0]))
        # Per-port cumulative ECN-marked bytes and queue integral (byte x ns): only with ``track_queues``.
        self._track = False
        self.marked = np.zeros(self.n_ports)
        self.q_area = np.zeros(self.n_ports)
        self._mb = 0.0
        self._qa = 0.0

    # ---- switch agents -----------------------------------------------------------------------
    def set_ecn(self, queues: np.ndarray, kmin: np.ndarray, kmax: np.ndarray, pmax: np.ndarray) -> None:
        """Set the RED parameters of some ports (kmin == kmax: step marking above kmin)."""
        self.kmin[queues], self.kmax[queues], self.pmax[queues] = kmin, kmax, pmax
        self._ecn0 = (float(self.kmin[0]), float(self.kmax[0]), float(self.pmax[0]))

    def track_queues(self) -> None:
        """Keep per-port cumulative marked bytes and queue integrals from now on (``queue_counters``)."""
        self._track = True

    def queue_counters(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per port: (queue bytes, cumulative transmitted bytes, cumulative ECN-marked bytes,
        integral of the queue over time in byte x ns), float64 (ports,) arrays (copies)."""
        if self._single:
            return np.array([self._q]), np.array([self.delivered]), np.array([self._mb]), np.array([self._qa])
        return self.queue.copy(), self.tx.copy(), self.marked.copy(), self.q_area.copy()

    # ---- rates -------------------------------------------------------------------------------
    def add_rates(self, groups: np.ndarray, delta: np.ndarray) -> None:
        """Add rate changes (fractions of line rate) of some flows to their groups' sums.

        Callers must settle the affected flows' integrals first (``integrals``).
        """
        self.group_rate += np.bincount(groups, weights=delta, minlength=self.n_groups)
        self._dirty = True

    def port_integrals(self) -> np.ndarray:
        """(ports, 3) integrals of [1, drop fraction, mark fraction] up to now."""
        if self._single:
            return np.array([[self.time, self._d, self._m]])
        return np.column_stack([np.full(self.n_ports, self.time), self.drop_int, self.mark_int])

    def integrals(self, groups: np.ndarray) -> np.ndarray:
        """(B, 3) per-group integrals (ns) of [host scale, scale x drop, scale x mark fraction]."""
        s = self.group_scale[groups][:, None]
        if self._single:
            return self.g0[groups] + s * (self.port_integrals()[0] - self.ref[0])
        p = self.group_port[groups]
        return self.g0[groups] + s * (self.port_integrals()[p] - self.ref[p])

    def _refresh(self) -> None:
        """Rebase the group integrals, then recompute host scales and port loads."""
        self.g0 = self.integrals(np.arange(self.n_groups))
        self.ref = self.port_integrals()
        host_sum = np.bincount(self.group_host, weights=self.group_rate, minlength=self.n_hosts)
        cap = self.net.host_cap
        scale = np.where(host_sum > cap, cap / np.maximum(host_sum, 1e-300), 1.0)
        if self.pfc is not None:
            scale = scale * self.host_on
        self.group_scale = scale[self.group_host]
        load = self.group_scale * self.group_rate
        self.port_load = np.bincount(self.group_port, weights=load, minlength=self.n_ports)
        self._load1 = float(self.port_load[0])
        self._dirty = False

    def _sync(self) -> None:
        if self._single:
            self.queue[0], self.drop_int[0], self.mark_int[0] = self._q, self._d, self._m

    # ---- time step ---------------------------------------------------------------------------
    def ecn_fraction(self, queue: np.ndarray) -> np.ndarray:
        """RED marking probability for per-port queue lengths (bytes): 0 up to kmin, linear to
        pmax below kmax, 1 from kmax (kmin == kmax: 1 above kmin)."""
        kmin, kmax = self.kmin, self.kmax
        ramp = self.pmax * (queue - kmin) / np.maximum(kmax - kmin, 1e-300)
        return np.where(queue > kmin, np.where(queue >= kmax, 1.0, ramp), 0.0)

    def step(self, dt: float) -> None:
        """Advance queues by dt ns at the current rates."""
        if self.pfc is not None and self.pfc.due(self.time):
            changed = self.pfc.apply(self.time)
            if len(changed):
                self.host_on[changed] = np.where(self.pfc.paused[changed], 0.0, 1.0)
                self._dirty = True
        if self._dirty:
            self._refresh()
        if self._single:
            self._step_single(dt)
        else:
            self._step_multi(dt)
        self.time += dt

    def _step_single(self, dt: float) -> None:
        kmin, kmax, pmax = self._ecn0
        q = self._q
        if q <= kmin:
            mark = 0.0
        elif q >= kmax:
            mark = 1.0
        else:
            mark = pmax * (q - kmin) / (kmax - kmin)
        inflow = self._load1 * self.C * dt
        q_new = q + inflow - self.C * dt
        q_raw = q_new
        if q_new < 0.0:
            q_new = 0.0
        self.offered += inflow
        if q_new > self.buffer:
            excess = q_new - self.buffer
            q_new = self.buffer
            frac = excess / inflow
            self._d += frac * dt
            self.dropped += excess
            mark *= 1.0 - frac
            self.delivered += q + inflow - q_new - excess
        else:
            self.delivered += q + inflow - q_new
        if mark:
            self._m += mark * dt
        if self._track:
            self._mb += mark * inflow
            self._qa += queue_area(q, q_raw, q_new, dt)
        self._q = q_new

    def _step_multi(self, dt: float) -> None:
        q = self.queue
        mark = self.ecn_fraction(q)
        inflow = self.port_load * (self.C * dt)
        q_raw = q + inflow - self.C * dt
        q_new = np.maximum(q_raw, 0.0)
        off = float(inflow.sum())
        self.offered += off
        excess = float(q_new.sum()) - self.buffer
        dropped = 0.0
        if excess > 0 and off > 0:
            drop = np.minimum(excess * inflow / off, q_new)
            q_new -= drop
            frac = drop / np.maximum(inflow, 1e-300)
            self.drop_int += frac * dt
            dropped = float(drop.sum())
            self.dropped += dropped
            mark = mark * (1.0 - frac)
        self.mark_int += mark * dt
        if self._track:
            self.marked += mark * inflow
            self.q_area += queue_areas(q, q_raw, q_new, dt)
        self.delivered += float(q.sum()) + off - float(q_new.sum()) - dropped
        self.tx += q + inflow - q_new - (drop if dropped else 0.0)
        if self.pfc is not None:
            self._pfc_observe(q, inflow, q_new, dt)
        self.queue = q_new

    def _pfc_observe(self, q: np.ndarray, inflow: np.ndarray, q_new: np.ndarray, dt: float) -> None:
        """Each group keeps its proportional share of its queue; hosts' bytes go to the pause control."""
        port = self.group_port
        held = q + inflow
        keep = np.divide(q_new, held, out=np.zeros_like(held), where=held > 0)
        self.group_bytes = (self.group_bytes + self.group_scale * self.group_rate * (self.C * dt)) * keep[port]
        host = np.bincount(self.group_host, weights=self.group_bytes, minlength=self.n_hosts)
        self.pfc.observe(self.time + dt, host)

    # ---- observation -------------------------------------------------------------------------
    def queue_bytes(self) -> np.ndarray:
        self._sync()
        return self.queue

    def total_queue(self) -> float:
        return self._q if self._single else float(self.queue.sum())

    def hop_state(self, ports: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """In-band telemetry of one hop (the egress port): (hops, queue bytes, cumulative tx
        bytes, capacity bytes/ns), (B, 1) arrays."""
        self._sync()
        tx = np.full(self.n_ports, self.delivered) if self._single else self.tx
        col = ports[:, None]
        return np.ones(len(ports), np.int64), self.queue[col], tx[col], np.full((len(ports), 1), self.C)



def queue_area(q: float, q_raw: float, q_new: float, dt: float) -> float:
    """Integral (byte x ns) of a queue over one Euler step: linear from ``q`` toward ``q_raw``
    (the unclamped end), stopping at 0 when it drains (exact); at the buffer clamp the trapezoid
    to the kept ``q_new`` (off by less than half the dropped bytes x dt)."""
    if q_raw >= 0.0:
        return (q + q_new) * (0.5 * dt)
    return q * q / (q - q_raw) * (0.5 * dt)  # q >= 0 > q_raw: it drains at q / (q - q_raw) of the step


def queue_areas(q: np.ndarray, q_raw: np.ndarray, q_new: np.ndarray, dt: float) -> np.ndarray:
    """``queue_area`` of every queue."""
    up = q_raw >= 0.0
    drained = q * q / np.where(up, 1.0, q - q_raw) * (0.5 * dt)
    return np.where(up, (q + q_new) * (0.5 * dt), drained)
