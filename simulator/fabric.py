"""Fluid multi-switch fabric: per-egress-link queues at every switch, flows on multi-hop paths.

The same accounting trick as the single switch (``network.Fabric``), lifted from ports to paths.
Flows are grouped by (sender host, path). Per step every queued link (a switch's egress link)
integrates its queue, drop fraction and ECN-mark fraction; a path's drop and mark integrals are
the sums of its links' (a packet crossing two marking hops counts two expected marks: the
small-fraction approximation of 1 - prod(1 - p)). A flow's bytes sent / dropped / marked are its
piecewise-constant rate x its host's NIC scale x the change of its path's integrals, settled when
its rate changes, so a step costs O(links), not O(flows).

Per link per step: arrivals = the sum of the sending rates of the flows whose path crosses it
(rates are not reshaped by upstream queues: exact when no upstream link is overloaded, which is
the steady state of any working congestion control; a transient's downstream queues are
overestimated). Queue update is explicit Euler as on the single switch; RED marking uses the
step-start queue. Each switch has a shared buffer: a port whose queue would exceed the dynamic
threshold alpha x (free buffer at the step start) (Choudhury and Hahne, "Dynamic queue length
thresholds for shared-memory packet switches", IEEE/ACM ToN 1998) drops the excess; what still
exceeds the switch's buffer is dropped in proportion to the ports' arrivals (the single switch's
rule). ``alpha = None``: no per-port threshold.
"""

from __future__ import annotations

import numpy as np

from rlcc.simulator.scenarios import FlowTable, Network
from rlcc.simulator.topology import Routing, Topology


class PathFabric:
    """Per-link queue state and per-(host, path) sending integrals for one run on a topology."""

    def __init__(self, net: Network, table: FlowTable, topo: Topology, seed: int, alpha: float | None) -> None:
        self.net, self.topo, self.alpha = net, topo, alpha
        self.C = net.bytes_per_ns  # a host line rate, bytes/ns: rate 1.0
        routing = Routing(topo)
        n = table.n_flows
        links = routing.paths(table.host.astype(np.int64), table.dst.astype(np.int64), np.arange(n, dtype=np.int64), seed)
        valid = links >= 0
        delay = np.where(valid, topo.link_delay_ns[np.maximum(links, 0)], 0.0)
        # Queued links: every link out of a switch (a host's uplink is its NIC: no queue).
        queued = topo.link_src >= topo.n_hosts
        self.queue_links = np.flatnonzero(queued)
        nQ = self.n_queues = len(self.queue_links)
        qid = np.full(topo.n_links, nQ, np.int64)  # nQ: the padding slot (always empty)
        qid[self.queue_links] = np.arange(nQ)
        hops = np.where(valid[:, 1:], qid[np.maximum(links[:, 1:], 0)], nQ)
        uniq, inverse = np.unique(hops, axis=0, return_inverse=True)
        self.path_queues = uniq  # (paths, H): queue ids, padded with nQ
        self.flow_path = inverse.reshape(-1).astype(np.int64)
        self.n_paths = len(uniq)
        self.hops = (uniq < nQ).sum(axis=1)
        self.path_base_rtt = np.zeros(self.n_paths)
        self.path_base_rtt[self.flow_path] = 2.0 * delay.sum(axis=1)  # out and back over the same links
        self.flow_base_rtt = self.path_base_rtt[self.flow_path]
        self.path_flows = np.bincount(self.flow_path, minlength=self.n_paths).astype(np.float64)

        pair = table.host.astype(np.int64) * self.n_paths + self.flow_path
        g_uniq, g_inv = np.unique(pair, return_inverse=True)
        self.flow_group = g_inv.reshape(-1).astype(np.int64)
        self.group_host = (g_uniq // self.n_paths).astype(np.int64)
        self.group_path = (g_uniq % self.n_paths).astype(np.int64)
        self.n_groups, self.n_hosts = len(g_uniq), table.n_hosts
        # A host sends at most its NIC cap and its uplink's rate (fractions of a line rate).
        uplink_rate = topo.link_gbps[topo.host_uplink()] / net.line_rate_gbps
        self.host_cap = np.minimum(net.host_cap, uplink_rate)
        self.group_queues = self.path_queues[self.group_path]  # (groups, H)
        self.n_sinks = len(np.unique(table.dst))

        # Per-queue constants (index nQ: the padding slot: capacity 1, never queues).
        ql = self.queue_links
        self.cap = np.append(topo.link_gbps[ql] / 8.0, 1.0)  # bytes/ns
        self.switch = np.append(topo.link_src[ql] - topo.n_hosts, 0)
        self.n_switches = len(topo.switches)
        self.buffers = topo.buffer_bytes.astype(np.float64)
        self.last_hop = np.append(topo.link_dst[ql] < topo.n_hosts, False)
        self.kmin = np.full(nQ + 1, float(net.ecn_kmin_bytes))
        self.kmax = np.full(nQ + 1, float(net.ecn_kmax_bytes))
        self.pmax = np.full(nQ + 1, float(net.ecn_pmax))

        self.queue = np.zeros(nQ + 1)
        self.drop_int = np.zeros(nQ + 1)
        self.mark_int = np.zeros(nQ + 1)
        self.tx = np.zeros(nQ + 1)  # cumulative bytes each queue's link transmitted (INT txBytes)
        self.time = 0.0
        self.link_load = np.zeros(nQ + 1)  # arrivals as a fraction of a host line rate
        self.group_rate = np.zeros(self.n_groups)
        self.group_scale = np.ones(self.n_groups)
        self.host_sum = np.zeros(self.n_hosts)
        self.send_rate = 0.0
        self.g0 = np.zeros((self.n_groups, 3))
        self.gref = np.zeros((self.n_groups, 3))
        self.delivered = self.dropped = self.offered = 0.0
        self._scaled = False  # some host NIC is oversubscribed (its flows are scaled down)
        self._dirty = False

    # ---- rates -------------------------------------------------------------------------------
    def add_rates(self, groups: np.ndarray, delta: np.ndarray) -> None:
        """Add rate changes of some flows to their groups (callers settle those flows first)."""
        dg = np.bincount(groups, weights=delta, minlength=self.n_groups)
        self.group_rate += dg
        dh = np.bincount(self.group_host[groups], weights=delta, minlength=self.n_hosts)
        self.host_sum += dh
        if not self._scaled and (self.host_sum <= self.host_cap).all():
            # No NIC scaling before or after: loads change by exactly the flows' changes.
            touched = np.unique(groups)
            q = self.group_queues[touched]
            self.link_load += np.bincount(q.ravel(), weights=np.repeat(dg[touched], q.shape[1]), minlength=self.n_queues + 1)
            self.link_load[self.n_queues] = 0.0
            self.send_rate += float(delta.sum())
        else:
            self._dirty = True

    def _refresh(self) -> None:
        """Rebase every group's integrals, then recompute NIC scales and link loads from scratch."""
        self.g0 = self.integrals(np.arange(self.n_groups))
        self.gref = self.path_integrals(self.group_path)
        self.host_sum = np.bincount(self.group_host, weights=self.group_rate, minlength=self.n_hosts)
        cap = self.host_cap
        scale = np.where(self.host_sum > cap, cap / np.maximum(self.host_sum, 1e-300), 1.0)
        self._scaled = bool((self.host_sum > cap).any())
        self.group_scale = scale[self.group_host]
        load = self.group_scale * self.group_rate
        H = self.group_queues.shape[1]
        self.link_load = np.bincount(self.group_queues.ravel(), weights=np.repeat(load, H), minlength=self.n_queues + 1)
        self.link_load[self.n_queues] = 0.0
        self.send_rate = float(load.sum())
        self._dirty = False

    # ---- integrals -----------------------------------------------------------------------------
    def path_integrals(self, paths: np.ndarray) -> np.ndarray:
        """(B, 3) integrals (ns) of [1, drop fraction, mark fraction] along each path, up to now."""
        q = self.path_queues[paths]
        return np.column_stack([np.full(len(paths), self.time), self.drop_int[q].sum(axis=1), self.mark_int[q].sum(axis=1)])

    def integrals(self, groups: np.ndarray) -> np.ndarray:
        """(B, 3) per-group integrals (ns) of [host scale, scale x drop, scale x mark fraction]."""
        s = self.group_scale[groups][:, None]
        return self.g0[groups] + s * (self.path_integrals(self.group_path[groups]) - self.gref[groups])

    # ---- time step ---------------------------------------------------------------------------
    def step(self, dt: float) -> None:
        """Advance every queue by dt ns at the current rates."""
        if self._dirty:
            self._refresh()
        q = self.queue
        ramp = self.pmax * (q - self.kmin) / np.maximum(self.kmax - self.kmin, 1e-300)
        mark = np.where(q >= self.kmax, 1.0, np.where(q > self.kmin, ramp, 0.0))
        inflow = np.maximum(self.link_load, 0.0) * (self.C * dt)  # (incremental sums may dip below 0 by an ulp)
        q_new = np.maximum(q + inflow - self.cap * dt, 0.0)
        drop = np.zeros_like(q)
        if self.alpha is not None:
            occupied = np.bincount(self.switch, weights=q, minlength=self.n_switches)
            limit = self.alpha * np.maximum(self.buffers - occupied, 0.0)[self.switch]
            drop = np.minimum(np.maximum(q_new - np.maximum(limit, q - self.cap * dt), 0.0), inflow)
            q_new -= drop
        used = np.bincount(self.switch, weights=q_new, minlength=self.n_switches)
        excess = used - self.buffers
        if (excess > 0).any():
            arriving = np.bincount(self.switch, weights=inflow, minlength=self.n_switches)
            share = np.where(arriving > 0, np.maximum(excess, 0.0) / np.maximum(arriving, 1e-300), 0.0)
            extra = np.minimum(share[self.switch] * inflow, q_new)
            q_new -= extra
            drop += extra
        frac = drop / np.maximum(inflow, 1e-300)
        self.drop_int += frac * dt
        self.mark_int += mark * (1.0 - frac) * dt
        departed = q + inflow - q_new - drop
        self.tx += departed
        self.delivered += float(departed[self.last_hop].sum())
        self.dropped += float(drop.sum())
        self.offered += self.send_rate * self.C * dt
        q_new[self.n_queues] = 0.0
        self.queue = q_new
        self.time += dt

    # ---- observation -------------------------------------------------------------------------
    def path_delay(self, paths: np.ndarray) -> np.ndarray:
        """Queueing delay (ns) a packet entering each path now would meet: the sum over its hops."""
        q = self.path_queues[paths]
        return (self.queue[q] / self.cap[q]).sum(axis=1)

    def total_queue(self) -> float:
        return float(self.queue.sum())

    def offered_load(self) -> float:
        """Sum of the hosts' sending rates (fractions of a line rate)."""
        return self.send_rate

    def hop_state(self, paths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Telemetry of each path's hops now: (hops, queue bytes, cumulative tx bytes, capacity
        bytes/ns), (B, H) arrays padded past ``hops`` (queue 0, capacity 1)."""
        q = self.path_queues[paths]
        return self.hops[paths], self.queue[q], self.tx[q], self.cap[q]
