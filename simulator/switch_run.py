"""A switch agent inside a run: interval statistics from the fabric's counters, its template
choices applied to the queues, and the per-interval record in ``SimResult.switch``.

Every ``spec.interval_ns`` (a whole number of simulator steps) the engine calls :meth:`close`
after the fabric step that ends the interval. Statistics are differences of floored cumulative
counters (what a device register reads): queue depth floor(queue); transmitted bytes; ECN-marked
packets floor(marked bytes / packet_bytes). Marked bytes are fluid: each step adds the queue's RED
probability at the step start x the bytes it accepted in the step. The average queue is the
queue's time integral over the interval (exact along the Euler ramp, see ``network.queue_area``)
/ the interval; utilization is the interval's transmitted bytes / (port bytes per ns x interval).
"""

from __future__ import annotations

import numpy as np

from rlcc.errors import BadInputError
from rlcc.simulator.switch_agent import IntervalStats, QueueInfo
from rlcc.switch_spec import STAT_MAX

#: At most this many (interval x queue) cells per recorded array: longer runs keep every m-th interval.
MAX_RECORD_CELLS = 20_000


class SwitchAgentRun:
    """The agent's side of one run: its queues, the counters at the last interval end, the record."""

    def __init__(self, agent, fabric, multi: bool, line_rate_gbps: float, dt_ns: float, n_steps: int,
                 rng: np.random.Generator) -> None:
        spec = self.spec = agent.spec
        self.agent, self.fabric = agent, fabric
        self.steps = spec.check_sim_step(dt_ns)
        self.span_ns = self.steps * dt_ns  # = spec.interval_ns when the step divides it
        if multi:
            nQ = fabric.n_queues
            switch, gbps, last_hop = fabric.switch[:nQ], fabric.cap[:nQ] * 8.0, fabric.last_hop[:nQ]
        else:
            nQ = fabric.n_ports
            switch, gbps, last_hop = np.zeros(nQ, np.int64), np.full(nQ, float(line_rate_gbps)), np.ones(nQ, bool)
        self.info = QueueInfo.build(spec, switch, gbps)
        self.port_bytes_per_ns = gbps / 8.0
        self.queues = np.arange(nQ)
        self.kmin = np.array([a.kmin_bytes for a in spec.actions], np.float64)
        self.kmax = np.array([a.kmax_bytes for a in spec.actions], np.float64)
        self.pmax = np.array([a.pmax_device for a in spec.actions], np.float64)
        fabric.track_queues()
        self.action = np.full(nQ, spec.initial_action, np.int64)
        self._apply(self.queues)
        agent.reset(self.info, rng)
        self.prev_tx = np.zeros(nQ, np.int64)
        self.prev_marked = np.zeros(nQ, np.int64)
        self.prev_area = np.zeros(nQ)
        self.tx_total = np.zeros(nQ, np.int64)
        n_int = n_steps // self.steps
        self.every = max(1, -(-n_int * max(nQ, 1) // MAX_RECORD_CELLS))
        rows = n_int // self.every + 1
        self.rec_time = np.zeros(rows)
        self.rec_actions = np.zeros((rows, nQ), np.int16)
        self.rec_qlen = np.zeros((rows, nQ), np.int64)
        self.rec_util = np.zeros((rows, nQ), np.float32)
        self.n_rec = 0
        self.n_intervals = 0
        self.last_hop = np.asarray(last_hop, bool)

    def _apply(self, queues: np.ndarray) -> None:
        a = self.action[queues]
        self.fabric.set_ecn(queues, self.kmin[a], self.kmax[a], self.pmax[a])

    def due(self, steps_done: int) -> bool:
        return steps_done % self.steps == 0

    def close(self, time_ns: float) -> None:
        """End an interval: statistics to the agent, its choices to the fabric."""
        q, tx, marked, area = self.fabric.queue_counters()
        tx_c = np.floor(tx).astype(np.int64)
        mk_c = np.floor(marked / self.spec.packet_bytes).astype(np.int64)
        tx_b = tx_c - self.prev_tx
        stats = IntervalStats(
            time_ns=time_ns,
            qlen_bytes=np.minimum(np.floor(q).astype(np.int64), STAT_MAX),
            tx_bytes=np.minimum(tx_b, STAT_MAX),
            marked_pkts=np.minimum(mk_c - self.prev_marked, STAT_MAX),
            action=self.action.copy(),
            avg_qlen_bytes=(area - self.prev_area) / self.span_ns,
            util=tx_b / (self.port_bytes_per_ns * self.span_ns),
        )
        self.prev_tx, self.prev_marked, self.prev_area = tx_c, mk_c, area
        self.tx_total += tx_b
        if self.n_intervals % self.every == 0:
            r = self.n_rec
            self.rec_time[r] = time_ns
            self.rec_actions[r] = stats.action
            self.rec_qlen[r] = stats.qlen_bytes
            self.rec_util[r] = stats.util
            self.n_rec += 1
        self.n_intervals += 1
        new = np.asarray(self.agent.on_interval(stats))
        n_act = self.spec.n_actions
        if new.shape != self.action.shape or not np.issubdtype(new.dtype, np.integer) or (
                len(new) and (new.min() < 0 or new.max() >= n_act)):
            raise BadInputError(f"invalid switch agent: on_interval must return {len(self.action)} template indices "
                                f"in 0..{n_act - 1}, got shape {new.shape} dtype {new.dtype}")
        changed = np.flatnonzero(new != self.action)
        if len(changed):
            self.action[changed] = new[changed]
            self._apply(changed)

    def result(self) -> dict[str, np.ndarray]:
        """``SimResult.switch``: recorded intervals (every ``interval_every``-th) and per-queue facts."""
        r = self.n_rec
        return {
            "time_ns": self.rec_time[:r].copy(),
            "actions": self.rec_actions[:r].copy(),
            "qlen_bytes": self.rec_qlen[:r].copy(),
            "util": self.rec_util[:r].copy(),
            "interval_every": np.int64(self.every),
            "queue_switch": self.info.switch.copy(),
            "port_gbps": self.info.port_gbps.copy(),
            "last_hop": self.last_hop.copy(),
            "tx_bytes": self.tx_total.copy(),
        }
