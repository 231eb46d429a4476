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
rule). ``alpha = None``: no per-port threshold. RED parameters are per queue (``set_ecn``: a
switch agent retunes them); ``track_queues`` adds per-queue cumulative marked bytes and queue
time integrals (``queue_counters``).

Lossless mode (``Network.pfc``, ``_step_lossless``): queues are store-and-forward. The fabric keeps
each (group, hop) cell's bytes in its hop's queue; a queue serves at most its capacity x dt
(nothing while its link is paused) from backlog and arrivals in proportion (fluid FIFO mixing), and
what a hop serves arrives at the next hop in the next step (one dt per hop of store-and-forward
lag). An ingress port is a host's uplink or a switch-to-switch link; its bytes in the downstream
switch are the cells that entered through it. ``pfc.PauseControl`` pauses the upstream above XOFF:
a host's NIC (scale 0: all its flows, head-of-line blocking) or the upstream switch's egress queue
(service 0: it fills and may pause its own ingress ports: hop-by-hop propagation). No per-port
dynamic drop threshold in this mode (the peer's lossless queues have none); the switch buffer
still drops what overflows it. ECN marks and drops are attributed at the flows' sending rates
(the lossy model's rule), not at the rate a paused hop reshapes them to.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from rlcc.errors import BadInputError
from rlcc.simulator.network import queue_areas
from rlcc.simulator.params import FlowTable, Network
from rlcc.simulator.pfc import PauseControl
from rlcc.simulator.topology import Routing, Topology, pinned_links

# The per-(host, queue) rate matrix (hosts x (switch egress links + 1) float64, a few copies per
# step block): 2^24 cells = 128 MB each.
MAX_RATE_CELLS = 1 << 24


def host_sums(scale: np.ndarray, per_host: np.ndarray) -> np.ndarray:
    """Per column of ``per_host`` (hosts, k): the sum over hosts of scale x value, added from 0.0 in
    host order (``np.bincount``'s order; a BLAS ``scale @ per_host`` sums in an order of its own,
    which the C block loop could not reproduce bit for bit)."""
    k = per_host.shape[1]
    cols = np.broadcast_to(np.arange(k), per_host.shape).ravel()
    return np.bincount(cols, weights=(scale[:, None] * per_host).ravel(), minlength=k)


class PathFabric:
    """Per-link queue state and per-(host, path) sending integrals for one run on a topology."""

    def __init__(self, net: Network, table: FlowTable, topo: Topology, seed: int, alpha: float | None,
                 paths: Sequence[Sequence[str]] | None = None) -> None:
        self.net, self.topo, self.alpha = net, topo, alpha
        self.C = net.bytes_per_ns  # a host line rate, bytes/ns: rate 1.0
        cells = table.n_hosts * (int(np.count_nonzero(topo.link_src >= topo.n_hosts)) + 1)
        if cells > MAX_RATE_CELLS:
            raise BadInputError(
                f"invalid scenario: {topo.n_hosts} hosts x {cells // table.n_hosts} switch queues = {cells:.3g} rate "
                f"cells on this topology, more than the limit {MAX_RATE_CELLS:.3g} (memory): use fewer hosts")
        n = table.n_flows
        if paths is None:
            links = Routing(topo).paths(table.host.astype(np.int64), table.dst.astype(np.int64),
                                        np.arange(n, dtype=np.int64), seed)
        else:  # pinned (``Scenario.paths``): validated here, where they are used
            links = pinned_links(topo, table.host, table.dst, paths)
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
        self._kmin_min = float(self.kmin.min())
        self._buffer_min = float(self.buffers.min())
        self._last_hop = np.flatnonzero(self.last_hop)

        self.queue = np.zeros(nQ + 1)
        # Cumulative bytes arrived at / dropped by each queue: a link's transmitted bytes (INT
        # txBytes) are arrived - queued - dropped, computed on demand (``tx``, ``delivered``).
        self.arrived = np.zeros(nQ + 1)
        self.lost = np.zeros(nQ + 1)
        self._qsum = self._qmax = 0.0  # of ``queue``: the next step's fast-path checks
        self.time = 0.0
        # Rates: per host, the summed rate of its flows crossing each queue (and in all); NIC
        # scales and link loads follow from them in O(hosts x queues).
        self.host_queue_rate = np.zeros((self.n_hosts, nQ + 1))
        self.host_sum = np.zeros(self.n_hosts)
        self.host_scale = np.ones(self.n_hosts)
        self.link_load = np.zeros(nQ + 1)  # arrivals as a fraction of a host line rate (>= 0)
        self.send_rate = 0.0
        # Integrals per unit rate: per host of its NIC scale, host_base + host_scale x (time -
        # host_ref) (rebased when a scale changes), per group of scale x the path's drop and mark
        # fractions (only links that drop or mark add to them, through ``queue_groups``).
        self.host_base = np.zeros(self.n_hosts)
        self.host_ref = 0.0
        self.group_drop = np.zeros(self.n_groups)
        self.group_mark = np.zeros(self.n_groups)
        flat = self.group_queues.ravel()
        order = np.argsort(flat, kind="stable")
        self.queue_groups = (order // self.group_queues.shape[1]).astype(np.int64)  # groups, by queue
        self.queue_ptr = np.searchsorted(flat[order], np.arange(nQ + 2))
        # Per hop, contiguous: each group's (host, queue) cell of ``host_queue_rate``, each path's
        # and each flow's queue (1-D gathers are ~5x faster than row gathers of a (n, H) array).
        self.group_cells = np.ascontiguousarray((self.group_host[:, None] * (nQ + 1) + self.group_queues).T)
        self.path_queues_t = np.ascontiguousarray(self.path_queues.T)
        self.flow_queues = np.ascontiguousarray(self.path_queues_t[:, self.flow_path])  # (H, flows)
        self.dropped = self.offered = 0.0
        self._track = False  # per-queue marked bytes and queue integrals (switch agents)
        self.marked = np.zeros(nQ + 1)
        self.q_area = np.zeros(nQ + 1)
        self._dirty = False
        self._dt, self._capdt, self._inflow = None, None, None  # per-step constants at the current rates
        self._delay, self._delay_at = np.zeros(nQ + 1), 0.0  # per-queue delay (ns), cached per step
        self.host_on = np.ones(self.n_hosts)  # 0 while PFC pauses the host's NIC
        self.pfc: PauseControl | None = None
        if net.pfc is not None:
            self._init_lossless(net, topo)

    def _init_lossless(self, net: Network, topo: Topology) -> None:
        """Cells, ingress ports and the pause control of lossless mode (``_step_lossless``)."""
        nQ, nH = self.n_queues, self.n_hosts
        self.group_rate = np.zeros(self.n_groups)
        self.cell_bytes = np.zeros(self.group_queues.shape)  # (groups, hops): bytes in the hop's queue
        self.cell_out = np.zeros(self.group_queues.shape)  # what each cell's hop served last step
        # Ingress ports: host uplinks (0..hosts-1), then every queued link (hosts + queue id), then padding.
        ingress = np.empty(self.group_queues.shape, np.int64)
        ingress[:, 0] = self.group_host
        ingress[:, 1:] = nH + self.group_queues[:, :-1]
        self.cell_ingress = np.where(self.group_queues < nQ, ingress, nH + nQ)
        up = topo.host_uplink()
        dst = np.append(topo.link_dst[self.queue_links], -1)  # padding: no port
        into = np.concatenate([topo.link_dst[up], dst]) - topo.n_hosts  # < 0: into a host, or padding
        links = np.concatenate([up, self.queue_links])
        delay = np.append(topo.link_delay_ns[links], 0.0)
        rate = np.append(topo.link_gbps[links] / 8.0, 0.0)
        self.pfc = PauseControl(net.pfc, np.where(into >= 0, into, -1), self.buffers, delay, rate)
        self.q_paused = np.zeros(nQ + 1, bool)

    # ---- switch agents -----------------------------------------------------------------------
    def set_ecn(self, queues: np.ndarray, kmin: np.ndarray, kmax: np.ndarray, pmax: np.ndarray) -> None:
        """Set the RED parameters of some queues (kmin == kmax: step marking above kmin)."""
        self.kmin[queues], self.kmax[queues], self.pmax[queues] = kmin, kmax, pmax
        self._kmin_min = float(self.kmin[: max(self.n_queues, 1)].min())  # the padding slot never queues

    def track_queues(self) -> None:
        """Keep per-queue cumulative marked bytes and queue integrals from now on."""
        self._track = True

    def queue_counters(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per queue (padding slot excluded): (queue bytes, cumulative transmitted bytes,
        cumulative ECN-marked bytes, integral of the queue over time in byte x ns)."""
        nQ = self.n_queues
        return self.queue[:nQ].copy(), self.tx[:nQ], self.marked[:nQ].copy(), self.q_area[:nQ].copy()

    # ---- rates -------------------------------------------------------------------------------
    def add_rates(self, groups: np.ndarray, delta: np.ndarray) -> None:
        """Add rate changes of some flows (callers settle those flows first)."""
        nQ1 = self.n_queues + 1
        hosts = self.group_host[groups]
        q = self.group_queues[groups]
        cells = (hosts[:, None] * nQ1 + q).ravel()
        self.host_queue_rate += np.bincount(cells, weights=np.repeat(delta, q.shape[1]),
                                            minlength=self.n_hosts * nQ1).reshape(self.n_hosts, nQ1)
        self.host_sum += np.bincount(hosts, weights=delta, minlength=self.n_hosts)
        if self.pfc is not None:
            self.group_rate += np.bincount(groups, weights=delta, minlength=self.n_groups)
        self._dirty = True

    def _refresh(self) -> None:
        """NIC scales and link loads from the per-host rates; a changed scale rebases the host integrals."""
        cap = self.host_cap
        scale = cap / np.maximum(self.host_sum, cap)  # cap / sum when oversubscribed, else exactly 1
        if self.pfc is not None:
            scale = scale * self.host_on
        if (scale != self.host_scale).any():
            self.host_base = self.host_base + self.host_scale * (self.time - self.host_ref)
            self.host_ref = self.time
            self.host_scale = scale
        load = host_sums(self.host_scale, self.host_queue_rate)
        load[self.n_queues] = 0.0
        self.link_load = np.maximum(load, 0.0, out=load)  # (incremental sums may dip below 0 by an ulp)
        self.send_rate = float(host_sums(self.host_scale, self.host_sum[:, None])[0])
        self._inflow = None
        self._dirty = False

    # ---- integrals -----------------------------------------------------------------------------
    def host_integral(self) -> np.ndarray:
        """Per host: integral (ns) of its NIC scale up to now."""
        return self.host_base + self.host_scale * (self.time - self.host_ref)

    def integral_cols(self, groups: np.ndarray) -> list[np.ndarray]:
        """Per-group integrals (ns) of [host scale, scale x drop, scale x mark fraction], 3 arrays."""
        return [self.host_integral()[self.group_host[groups]], self.group_drop[groups], self.group_mark[groups]]

    def integrals(self, groups: np.ndarray) -> np.ndarray:
        """``integral_cols`` as one (B, 3) array."""
        return np.column_stack(self.integral_cols(groups))

    def _accrue(self, frac: np.ndarray, mark: np.ndarray, dt: float) -> None:
        """Add one step's drop and mark fractions of the links that dropped or marked to their groups."""
        hit = np.flatnonzero((frac[:-1] > 0) | (mark[:-1] > 0))
        if len(hit) == 0:
            return
        lo, hi = self.queue_ptr[hit], self.queue_ptr[hit + 1]
        n = hi - lo
        pos = np.repeat(lo - np.cumsum(n) + n, n) + np.arange(int(n.sum()))
        groups = self.queue_groups[pos]
        link = np.repeat(hit, n)
        scale = self.host_scale[self.group_host] * dt
        # New arrays (not in place): block snapshots of the integrals keep the old ones. A
        # fraction that is 0 on every link adds nothing: the array is kept.
        if frac.any():
            self.group_drop = self.group_drop + scale * np.bincount(groups, weights=frac[link], minlength=self.n_groups)
        if mark.any():
            self.group_mark = self.group_mark + scale * np.bincount(groups, weights=mark[link], minlength=self.n_groups)

    # ---- time step ---------------------------------------------------------------------------
    def step(self, dt: float) -> None:
        """Advance every queue by dt ns at the current rates."""
        if self.pfc is not None:
            self._step_lossless(dt)
            return
        if self._dirty:
            self._refresh()
        if dt != self._dt:
            self._dt, self._capdt, self._inflow = dt, self.cap * dt, None
        inflow = self._inflow
        if inflow is None:
            inflow = self._inflow = self.link_load * (self.C * dt)
        q = self.queue
        q_new = q + inflow
        q_new -= self._capdt
        q_raw = q_new.copy() if self._track else None
        np.maximum(q_new, 0.0, out=q_new)
        qsum, qmax = float(q_new.sum()), float(q_new.max())
        # Fast path: no queue above its ECN threshold, and no queue near a buffer limit (every
        # port's dynamic threshold is at least alpha x (smallest buffer - all queues)).
        marking = self._qmax > self._kmin_min
        room = self._buffer_min - self._qsum
        dropping = qsum > self._buffer_min or (self.alpha is not None and qmax > self.alpha * max(room, 0.0))
        drop = None
        if dropping:
            drop = np.zeros_like(q)
            if self.alpha is not None:
                occupied = np.bincount(self.switch, weights=q, minlength=self.n_switches)
                limit = self.alpha * np.maximum(self.buffers - occupied, 0.0)[self.switch]
                drop = np.minimum(np.maximum(q_new - np.maximum(limit, q - self._capdt), 0.0), inflow)
                q_new -= drop
            used = np.bincount(self.switch, weights=q_new, minlength=self.n_switches)
            excess = used - self.buffers
            if (excess > 0).any():
                arriving = np.bincount(self.switch, weights=inflow, minlength=self.n_switches)
                share = np.where(arriving > 0, np.maximum(excess, 0.0) / np.maximum(arriving, 1e-300), 0.0)
                extra = np.minimum(share[self.switch] * inflow, q_new)
                q_new -= extra
                drop += extra
            q_new[self.n_queues] = 0.0
            qsum, qmax = float(q_new.sum()), float(q_new.max())
            self.lost += drop
            self.dropped += float(drop.sum())
        if marking or dropping:
            ramp = self.pmax * (q - self.kmin) / np.maximum(self.kmax - self.kmin, 1e-300)
            mark = np.where(q > self.kmin, np.where(q >= self.kmax, 1.0, ramp), 0.0)
            frac = drop / np.maximum(inflow, 1e-300) if dropping else np.zeros_like(q)
            accepted = mark * (1.0 - frac)
            self._accrue(frac, accepted, dt)
            if self._track:
                self.marked += accepted * inflow
        if self._track:
            self.q_area += queue_areas(q, q_raw, q_new, dt)
        self.arrived += inflow
        self.offered += self.send_rate * self.C * dt
        self.queue = q_new
        self._qsum, self._qmax = qsum, qmax
        self.time += dt

    def ingress_names(self) -> list[str]:
        """Lossless mode: each PFC ingress port as 'upstream->switch' (index order of ``pfc`` arrays;
        links into hosts and the padding slot, which are no ports, named '-')."""
        topo, name = self.topo, self.topo.node_name
        up = topo.host_uplink()
        links = np.concatenate([up, self.queue_links])
        out = [f"{name(int(topo.link_src[k]))}->{name(int(topo.link_dst[k]))}"
               if topo.link_dst[k] >= topo.n_hosts else "-" for k in links.tolist()]
        return out + ["-"]

    def _step_lossless(self, dt: float) -> None:
        """One store-and-forward step with PFC (see the module docstring)."""
        pfc, nQ, nH = self.pfc, self.n_queues, self.n_hosts
        if pfc.due(self.time):
            changed = pfc.apply(self.time)
            hosts, links = changed[changed < nH], changed[changed >= nH] - nH
            self.host_on[hosts] = np.where(pfc.paused[hosts], 0.0, 1.0)
            self.q_paused[links] = pfc.paused[links + nH]
            self._dirty = self._dirty or len(hosts) > 0
        if self._dirty:
            self._refresh()
        qc = self.group_queues
        arriving = np.empty_like(self.cell_bytes)
        arriving[:, 0] = self.group_rate * self.host_scale[self.group_host] * (self.C * dt)
        arriving[:, 1:] = self.cell_out[:, :-1]
        inflow = np.bincount(qc.ravel(), weights=arriving.ravel(), minlength=nQ + 1)
        inflow[nQ] = 0.0  # past a path's last hop: delivered
        q = self.queue
        held = q + inflow
        serve = np.where(self.q_paused, 0.0, np.minimum(held, self.cap * dt))
        q_new = held - serve
        drop = np.zeros(nQ + 1)
        excess = np.bincount(self.switch, weights=q_new, minlength=self.n_switches) - self.buffers
        if (excess > 0).any():  # headroom exhausted: the lossy rule, arrivals dropped in proportion
            per_switch = np.bincount(self.switch, weights=inflow, minlength=self.n_switches)
            share = np.where(per_switch > 0, np.maximum(excess, 0.0) / np.maximum(per_switch, 1e-300), 0.0)
            drop = np.minimum(share[self.switch] * inflow, q_new)
            q_new -= drop
            self.lost += drop
            self.dropped += float(drop.sum())
        keep = np.divide(q_new, held, out=np.zeros_like(held), where=held > 0)
        sent = np.divide(serve, held, out=np.ones_like(held), where=held > 0)
        keep[nQ], sent[nQ] = 0.0, 1.0
        total = self.cell_bytes + arriving
        self.cell_bytes = total * keep[qc]
        self.cell_out = total * sent[qc]
        ramp = self.pmax * (q - self.kmin) / np.maximum(self.kmax - self.kmin, 1e-300)
        mark = np.where(q > self.kmin, np.where(q >= self.kmax, 1.0, ramp), 0.0)
        mark[nQ] = 0.0
        frac = drop / np.maximum(inflow, 1e-300)
        accepted = mark * (1.0 - frac)
        self._accrue(frac, accepted, dt)
        if self._track:
            self.marked += accepted * inflow
            self.q_area += (q + q_new) * (0.5 * dt)
        self.arrived += inflow
        self.offered += self.send_rate * self.C * dt
        self.queue = q_new
        self._qsum, self._qmax = float(q_new.sum()), float(q_new.max())
        self.time += dt
        pfc.observe(self.time, np.bincount(self.cell_ingress.ravel(), weights=self.cell_bytes.ravel(), minlength=pfc.n))

    @property
    def tx(self) -> np.ndarray:
        """Cumulative bytes each queue's link transmitted (INT txBytes)."""
        return self.arrived - self.queue - self.lost

    @property
    def delivered(self) -> float:
        """Bytes the last hops delivered to the hosts."""
        return float(self.tx[self._last_hop].sum())

    # ---- observation -------------------------------------------------------------------------
    def queue_delays(self) -> np.ndarray:
        """Per queue: its queueing delay (ns) now, queue / capacity (cached per step; do not modify)."""
        if self._delay_at != self.time:
            self._delay = self.queue / self.cap
            self._delay_at = self.time
        return self._delay

    def path_delay(self, paths: np.ndarray) -> np.ndarray:
        """Queueing delay (ns) a packet entering each path now would meet: the sum over its hops."""
        return self.sum_hops(self.queue_delays(), paths)

    def sum_hops(self, per_queue: np.ndarray, paths: np.ndarray) -> np.ndarray:
        """Per path: the sum of ``per_queue`` (queues + 1 padding slot, last axis) over its hops, in hop order."""
        pq = self.path_queues_t
        out = per_queue[..., pq[0].take(paths)]
        for h in range(1, len(pq)):
            out = out + per_queue[..., pq[h].take(paths)]
        return out

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
