"""The time-stepped engine: flows, RTT probes, decisions, rate changes, and the fabric.

Per step of ``network.dt_ns``: start new flows, apply rate changes whose decision latency has
elapsed, collect every flow whose RTT probe returned in this step and hand them to the
controller in ONE batched call, run timer-driven controllers (DCQCN; Swift's re-pacing: ticks see
each flow's current egress queueing delay), advance the fabric, finish short flows, and sample
the queue. Each flow has one outstanding probe: it is sent when the
previous one returns (or at a random phase in [0, base RTT) at start) and comes back after base
RTT + the queueing delay of its egress port at send time. On a topology (``fabric.PathFabric``)
the base RTT is the flow's path's and the delay is the sum over the path's hops; flows of later
epochs (OSU iterations) start when the previous epoch's last flow has finished. With a NIC decision
processor (``Scenario.nic``, ``nic.py``) returned probes queue for their host's threads and each
decision lands, rate and next probe, when it completes (step-by-step loop only).
"""

from __future__ import annotations

import collections
import dataclasses
import heapq
import time
from typing import Callable

import numpy as np

from rlcc.errors import BadInputError
from rlcc.simulator import swiftloop
from rlcc.simulator.blocks import BlockLoop
from rlcc.simulator.controllers.base import Controller, Decision, DecisionBatch, HopTelemetry, TickInfo
from rlcc.simulator.fabric import PathFabric
from rlcc.simulator.flows import FlowState
from rlcc.simulator.metrics import Snapshot, compute_metrics, in_order
from rlcc.simulator.network import Fabric
from rlcc.simulator.nic import DecisionProcessor
from rlcc.simulator.scenarios import DEFAULT_DECISION_LATENCY_US, Scenario
from rlcc.simulator.switch_agent import WindowAgent
from rlcc.simulator.switch_run import SwitchAgentRun
from rlcc.simulator.trace import Trace, TraceConfig, TraceRecorder
from rlcc.spec import Feature, ObservationSpec, Reward

MIN_RATE = 1e-9
MAX_QUEUE_SAMPLES = 4_000_000
MAX_QUEUE_CELLS = 1 << 24  # a topology's queue-sample matrix (rows x queues): 128 MB of float64
MAX_BLOCK_CELLS = 1 << 24  # per-block arrays (block steps x per-step cells): ~128 MB each
SERIES_POINTS = 2000
SERIES_FLOWS = 8
PROGRESS_EVERY = 1000  # steps between progress reports


@dataclasses.dataclass
class SimResult:
    """What a run produces. ``metrics``: converged window; ``metrics_full``: whole run."""

    scenario: Scenario
    controller: str
    metrics: dict[str, float]
    metrics_full: dict[str, float]
    series: dict[str, np.ndarray]
    flows: dict[str, np.ndarray]
    trace: Trace | None
    wall_s: float
    switch: dict[str, np.ndarray] | None = None  # switch-agent record (``switch_run.SwitchAgentRun.result``)
    pfc: dict[str, np.ndarray] | None = None  # lossless mode: per ingress port (``pfc.PauseControl.record``, "names")


class _Run(BlockLoop):
    """Mutable state of one simulation run (see ``simulate``); per-flow state in ``self.flows``."""

    flow_state = FlowState  # class of ``self.flows`` (tests extend it)
    use_swift_loop = True  # Swift on one port runs in C once every flow started (False: the Python loop, same results)

    def __init__(
        self, scenario: Scenario, controller: Controller, trace: TraceConfig | None, block_steps: int | None = None,
        switch_agent: WindowAgent | None = None,
    ) -> None:
        scenario.validate()
        _check_controller(controller)
        self.sc, self.ctl, self.net = scenario, controller, scenario.network
        self.multi = scenario.topology is not None
        if self.multi:
            self.table = scenario.placed_table()
            topo = scenario.topology.build(self.net)
            self.fabric = PathFabric(self.net, self.table, topo, scenario.ecmp_seed, scenario.topology.buffer_alpha,
                                     scenario.paths)
            self.path = self.fabric.flow_path
        else:
            self.table = scenario.flow_table()
            self.fabric = Fabric(self.net, self.table)
            self.path = self.table.port.astype(np.int64)
        n = self.n = self.table.n_flows
        self.group = self.fabric.flow_group
        self.dt = float(self.net.dt_ns)
        self.n_steps = int(round(scenario.duration_ns / self.dt))
        self.C = self.net.bytes_per_ns
        self.pkt = float(self.net.wire_packet_bytes)  # marks and drops count wire packets
        self.payload = self.net.payload_fraction  # payload bytes per wire byte (1.0 without headers)
        self.base = self.net.base_rtt_ns
        self.flow_base = self.fabric.flow_base_rtt if self.multi else None  # per-path base RTTs (ns)
        latency = scenario.decision_latency_us
        if latency is None:
            latency = getattr(controller, "decision_latency_us", None)
            latency = DEFAULT_DECISION_LATENCY_US if latency is None else float(latency)
        self.decision_latency_us = latency
        self.latency_steps = int(round(latency * 1e3 / self.dt))

        root = np.random.default_rng(scenario.seed)
        phase_rng, ctl_rng = root.spawn(2)
        controller.reset(n, self.net, ctl_rng)
        self.agent: SwitchAgentRun | None = None
        if switch_agent is not None:  # a third child: the phases' and the controller's streams are unchanged
            self.agent = SwitchAgentRun(switch_agent, self.fabric, self.multi, self.net.line_rate_gbps, self.dt,
                                        self.n_steps, root.spawn(1)[0])

        self.spec: ObservationSpec | None = getattr(controller, "spec", None)
        width = self.spec.input_width if self.spec else 0
        self.telemetry = bool(getattr(controller, "wants_telemetry", False))
        hops = (self.fabric.path_queues.shape[1] if self.multi else 1) if self.telemetry else 0
        self.flows = self.flow_state.new(n, width, hops)
        self.flows.phase[:] = phase_rng.uniform(0.0, self.base if self.flow_base is None else self.flow_base, n)
        self.epoch = self.table.epoch
        if self.epoch is not None:  # later epochs start when the previous one has finished
            self.table = dataclasses.replace(self.table, start_ns=self.table.start_ns.copy())
            self.epoch_left = np.bincount(self.epoch).astype(np.int64)
            self.epoch_start = np.full(len(self.epoch_left), np.nan)
            self.epoch_start[0] = 0.0
            self.epoch_end = np.full(len(self.epoch_left), np.nan)
            self.epoch_now = 0
        self.start_order = np.argsort(self.table.start_ns, kind="stable")
        self.start_pos = np.empty(n, np.int64)
        self.start_pos[self.start_order] = np.arange(n)
        self.sorted_starts = self.table.start_ns[self.start_order]
        self.start_ptr = 0
        self.finite = np.isfinite(self.table.size_bytes)
        self.finite_active = np.zeros(0, np.int64)
        self.pending: collections.deque | _StepHeap = collections.deque()
        self.nic: DecisionProcessor | None = None
        if scenario.nic is not None:  # completions land out of order: a heap keyed by step
            self.nic = DecisionProcessor(scenario.nic, self.table.host)
            self.pending = _StepHeap()

        reward = self.spec.reward if self.spec else Reward(base_rtt_ns=int(round(self.base)))
        self.delta_spec = ObservationSpec(features=(Feature("delta"),), reward=reward)
        names = self.spec.input_names() if self.spec else []
        self.recorder = TraceRecorder(trace, width, names) if trace else None
        if self.recorder:
            self.recorder.bind(n)

        self.tick_ns = getattr(controller, "tick_ns", None)
        self.tick_counters = bool(getattr(controller, "tick_counters", True))
        self.next_tick = self.tick_ns if self.tick_ns else np.inf

        self.window_step = int(np.ceil(scenario.converged_from * self.n_steps))
        self.snap_start = Snapshot.zero(n, self.net.go_back_n)
        self.snap_window: Snapshot | None = None
        self.rtt_stats = np.zeros(4)  # whole-run RTT sum (ns, exact integer), count; window sum, count
        # Queue samples, one row per q_every steps: per port as bytes at a host's line rate
        # (single switch), or per queue as its delay in ns (a topology: the metrics derive the
        # per-path delays, whose count (paths x rows) q_every bounds).
        n_q = self.fabric.n_paths if self.multi else self.fabric.n_ports
        self.q_weights = self.fabric.path_flows if self.multi else None
        self.q_every = max(1, int(np.ceil(self.n_steps * n_q / MAX_QUEUE_SAMPLES)))
        if self.multi:  # every queue is stored: rows x queues within MAX_QUEUE_CELLS as well
            self.q_every = max(self.q_every, int(np.ceil(self.n_steps * (self.fabric.n_queues + 1) / MAX_QUEUE_CELLS)))
        rows = self.n_steps // self.q_every + 1
        if self.multi:
            self.q_samples = np.zeros((rows, self.fabric.n_queues + 1))
        else:
            self.q_samples = np.zeros((rows, n_q), np.float32)
        self.series_every = max(1, self.n_steps // SERIES_POINTS)
        self.series_flows = np.unique(np.linspace(0, n - 1, min(n, SERIES_FLOWS)).astype(np.int64))
        self.series: dict[str, list] = {"t_us": [], "queue_us": [], "rates": [], "load": []}

        # Block-batched decisions (see ``blocks.py``): at most floor(base RTT / dt) steps, the
        # shortest time between two decisions of one flow (exact up to that bound).
        max_block = max(1, int((self.base if self.flow_base is None else self.flow_base.min()) // self.dt))
        # Memory: a block holds (steps x per-step cells) arrays; results do not depend on the block size.
        fab = self.fabric
        per_step = (fab.n_hosts * (fab.n_queues + 2) + 2 * fab.n_groups if self.multi
                    else 4 * fab.n_groups + fab.n_hosts + fab.n_ports)
        max_block = max(1, min(max_block, MAX_BLOCK_CELLS // max(per_step, 1)))
        if block_steps is None:
            block_steps = max_block
        if not isinstance(block_steps, (int, np.integer)) or block_steps < 0 or block_steps > max_block:
            raise BadInputError(f"invalid block_steps {block_steps!r}: must be 0..{max_block} (base RTT / dt)")
        self.block_steps = int(block_steps)
        # Block mode: CNP/NACK counts of each decision are known after its block; a controller
        # that records them takes them through ``block_counts(cnp, nack)`` (see blocks.py).
        self.block_counts = getattr(controller, "block_counts", None)
        # Go-back-N (``Network.loss_recovery``): accounted at each decision from its NACK count and
        # the flow's sent bytes, which the step loop and the Python block loops have at every
        # decision (the C kernel does not: one-port go-back-N runs take the Python blocks).
        self.go_back = self.net.go_back_n
        # With serial decisions or a decision processor a flow decides far less often than once per
        # RTT (or never, behind a backlog), but NACKs are the NIC's transport, not the policy's: then
        # go-back-N runs on its own clock, one NACK check per RTT per flow (``nack_clock``).
        self.gbn_clock = self.go_back and (bool(scenario.serial_decisions) or self.nic is not None)
        self.blocked = (
            self.block_steps >= 1
            and bool(getattr(controller, "batchable", False))
            and self.tick_ns is None
            and not self.finite.any()
            and not self.telemetry
            and not scenario.serial_decisions
            and scenario.nic is None
            and self.agent is None
            and self.net.pfc is None  # pauses change NIC scales mid-block: the step loop
        )

    # ---- per-flow accounting -------------------------------------------------------------------
    def settle(self, idx: np.ndarray | slice) -> None:
        """Bring the flows' sent/dropped/marked counters up to now (before a rate change).

        ``idx``: flow indices, or ``slice(None)`` for all flows (no gathers)."""
        if isinstance(idx, slice):
            self._settle_all()
            return
        if self.multi:  # column by column: 1-D gathers (~3x faster than (B, 3) fancy indexing)
            self.flows.settle_cols(idx, self.fabric.integral_cols(self.group[idx]), self.flows.tx[idx] * self.C)
            return
        self.flows.settle_rows(idx, self.fabric.integrals(self.group[idx]), self.C)

    def _settle_all(self) -> None:
        """``settle`` of every flow (timer ticks): per-group integrals gathered column by column;
        the same float operations as ``settle``, without (N, 3) fancy indexing (~10x faster)."""
        gi = self.fabric.integrals(np.arange(self.fabric.n_groups))
        self.flows.settle_cols(None, [gi[:, c].take(self.group) for c in range(3)], self.flows.tx * self.C)

    @property
    def acc_sent(self) -> np.ndarray:
        return self.flows.acc[:, 0]

    @property
    def acc_drop(self) -> np.ndarray:
        return self.flows.acc[:, 1]

    @property
    def acc_mark(self) -> np.ndarray:
        """Cumulative ECN-marked packets (fluid)."""
        return self.flows.acc[:, 2] / self.pkt

    def set_rates(self, idx: np.ndarray | slice, new: np.ndarray) -> None:
        self.settle(idx)
        self.fabric.add_rates(self.group[idx], self.flows.set_rates(idx, new))

    def queue_delay(self, idx: np.ndarray) -> np.ndarray | float:
        """Queueing delay (ns) a packet of each flow would see entering its path now."""
        if self.multi:
            return self.fabric.path_delay(self.path[idx])
        if self.fabric.n_ports == 1:
            return self.fabric.total_queue() / self.C
        return self.fabric.queue_bytes()[self.path[idx]] / self.C

    def base_rtt(self, idx: np.ndarray) -> np.ndarray | float:
        """Base RTT (ns) of each flow's path."""
        return self.base if self.flow_base is None else self.flow_base[idx]

    def send_probes(self, idx: np.ndarray, sent: np.ndarray) -> None:
        """Flows ``idx`` send a probe at ``sent``; telemetry controllers get its per-hop state."""
        self.flows.send_probes(idx, sent, self.base_rtt(idx), self.queue_delay(idx))
        if self.telemetry:
            _, q, tx, _ = self._hop_state(idx)
            self.flows.int_q[idx] = q
            self.flows.int_tx[idx] = tx

    def _hop_state(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self.fabric.hop_state(self.path[idx])

    def _telemetry(self, due: np.ndarray) -> HopTelemetry:
        hops, _, _, cap = self._hop_state(due)
        fl = self.flows
        return HopTelemetry(hops=hops, qlen_bytes=fl.int_q[due], tx_bytes=fl.int_tx[due], ts_ns=fl.probe_sent[due].copy(),
                            capacity=cap)

    # ---- events --------------------------------------------------------------------------------
    def start_flows(self, t: float) -> None:
        end = int(np.searchsorted(self.sorted_starts, t, side="right"))
        if end == self.start_ptr:
            return
        idx = self.start_order[self.start_ptr : end]
        self.start_ptr = end
        fl = self.flows
        fl.active[idx] = True
        override = self.sc.initial_rate
        init = np.asarray(self.ctl.initial_rate if override is None else override, dtype=np.float64)
        self.set_rates(idx, np.full(len(idx), float(init)) if init.ndim == 0 else init[idx])
        start = self.table.start_ns[idx]
        first = np.where(start == 0.0, fl.phase[idx], start)
        self.send_probes(idx, first)
        if self.gbn_clock:  # a loss's NACK is back one RTT after the first packet at the earliest
            fl.gbn_next[idx] = first + self.base_rtt(idx)
        fin = idx[self.finite[idx]]
        if len(fin):
            self.finite_active = np.concatenate([self.finite_active, fin])

    def apply_pending(self, k: int) -> None:
        while self.pending and self.pending[0][0] <= k:
            _, idx, new, probe_at = self.pending.popleft()
            live = self.flows.active[idx]
            if not live.all():
                idx, new = idx[live], new[live]
                probe_at = None if probe_at is None else probe_at[live]
            self.set_rates(idx, new)
            if probe_at is not None:  # serial decisions: the result requests the next probe
                self.send_probes(idx, probe_at)

    def decide(self, k: int, t_end: float) -> None:
        fl = self.flows
        due = np.flatnonzero(fl.next_ret < t_end)
        if len(due) == 0:
            return
        ret = fl.next_ret[due]
        rtt = np.rint(ret - fl.probe_sent[due]).astype(np.int64)
        self.settle(due)
        cnp, nack = fl.take_counts(due, fl.acc[due, 1:], self.pkt)
        rate = fl.rate[due]
        if self.go_back and not self.gbn_clock:
            fl.go_back(due, nack, fl.acc[due, 0], self.pkt)
        first = fl.n_dec[due] == 0
        obs = self._observe(due, rtt, rate, cnp, nack, first) if self.spec is not None else None
        tele = self._telemetry(due) if self.telemetry else None
        out = self.ctl.decide(DecisionBatch(due, ret, rtt, rate, cnp, nack, first, obs, tele))
        rates, factors = out if isinstance(out, Decision) else (out, None)
        new = np.clip(np.asarray(rates, dtype=np.float64).reshape(len(due)), MIN_RATE, 1.0)
        if factors is None:
            factors = new / rate
        fl.record_decision(due, factors)
        if self.nic is not None:
            self._nic_decide(k, due, ret, new)
        elif self.latency_steps == 0:
            self.set_rates(due, new)
            self.send_probes(due, ret)
        elif self.sc.serial_decisions:
            fl.next_ret[due] = np.inf  # no probe in flight until the decision completes
            self.pending.append((k + self.latency_steps, due, new, ret + self.decision_latency_us * 1e3))
        else:
            self.pending.append((k + self.latency_steps, due, new, None))
            self.send_probes(due, ret)
        rsum = int(rtt.sum())
        self.rtt_stats[0:2] += (rsum, len(due))
        if k >= self.window_step:
            self.rtt_stats[2:4] += (rsum, len(due))
        if self.recorder is not None:
            self._record(due, obs, ret, rtt, rate, cnp, nack, factors, new)

    def nack_clock(self, t_end: float) -> None:
        """Go-back-N on the NIC's own clock (``gbn_clock``): each flow whose check falls in this step
        books one go-back if packets were dropped since its previous check (``FlowState.go_back``
        over the bytes sent since then: about one RTT), then checks again one RTT later (its path's
        base RTT plus the queueing a packet sent now would see)."""
        fl = self.flows
        due = np.flatnonzero(fl.gbn_next < t_end)
        if len(due) == 0:
            return
        self.settle(due)
        packets = np.floor(fl.acc[due, 1] / self.pkt).astype(np.int64)
        fl.go_back(due, packets - fl.gbn_seen[due], fl.acc[due, 0], self.pkt)
        fl.gbn_seen[due] = packets
        fl.gbn_next[due] += self.base_rtt(due) + self.queue_delay(due)

    def _nic_decide(self, k: int, due: np.ndarray, ret: np.ndarray, new: np.ndarray) -> None:
        """Queue the decisions on the NIC's threads; each lands (rate, next probe) at its completion,
        in the step ``round((completion - return) / dt)`` after the probe's (the serial path's rule)."""
        done = self.nic.admit(due, ret)
        self.flows.next_ret[due] = np.inf  # no probe in flight until the decision completes
        steps = k + np.rint((done - ret) / self.dt).astype(np.int64)
        now = steps <= k
        if now.any():
            self.set_rates(due[now], new[now])
            self.send_probes(due[now], done[now])
        for s in np.unique(steps[~now]).tolist():
            mine = steps == s
            self.pending.append((s, due[mine], new[mine], done[mine]))

    def _record(self, due, obs, ret, rtt, rate, cnp, nack, factors, new) -> None:
        """Trace the decisions (after ``record_decision``: ``delta`` uses the new factor)."""
        delta = self.delta_spec.raw_step_features(self.flows.prev_action[due], rtt, rate)[:, 0]
        self.recorder.add(
            obs, flow_id=due, time_ns=np.rint(ret).astype(np.int64), rtt_ns=rtt, rate=rate,
            cnp_count=cnp, nack_count=nack, delta=delta, factor=factors, new_rate=new,
        )

    def _observe(self, due, rtt, rate, cnp, nack, first) -> np.ndarray:
        """Shift the flows' observation windows (kept in input order) by one step and return
        the exact policy inputs."""
        spec, window = self.spec, self.flows.window
        F, W = spec.n_features, spec.input_width
        step = spec.scale_step(spec.raw_step_features(self.flows.prev_action[due], rtt, rate, cnp, nack))
        if spec.step_order == "oldest_first":
            new = np.concatenate([window[due, F:], step], axis=1)
        else:
            new = np.concatenate([step, window[due, : W - F]], axis=1)
        if first.any():
            new[first] = np.tile(step[first], spec.history)
        window[due] = new
        return new.astype(np.float32)

    def tick(self, t: float) -> None:
        if self.tick_counters:
            active = self.flows.active
            self.settle(slice(None) if active.all() else np.flatnonzero(active))
            fl, mark, sent = self.flows, self.acc_mark, self.acc_sent
            marked, sent_d = mark - fl.tick_mark, sent - fl.tick_sent
            fl.tick_mark[:], fl.tick_sent[:] = mark, sent
        else:
            marked = sent_d = None
        info = TickInfo(
            time_ns=t,
            marked_packets=marked,
            sent_bytes=sent_d,
            rate=self.flows.rate.copy(),
            active=self.flows.active.copy(),
            queue_delay_ns=self.port_delays(),
            base_rtt_ns=self.base if self.flow_base is None else self.flow_base,
            telemetry=self._tick_telemetry(t) if self.telemetry else None,
        )
        new = self.ctl.on_tick(info)  # type: ignore[attr-defined]
        if new is not None:
            new = np.clip(np.asarray(new, dtype=np.float64), MIN_RATE, 1.0)
            change = self.flows.active & (new != self.flows.rate)
            n_changed = int(np.count_nonzero(change))
            if n_changed > self.n // 8:
                # Many flows change (Swift re-pacing): settle and update every flow with whole-array
                # operations (unchanged flows get a zero rate change), ~10x cheaper than gathers.
                self.set_rates(slice(None), np.where(change, new, self.flows.rate))
            elif n_changed:
                changed = np.flatnonzero(change)
                self.set_rates(changed, new[changed])

    def _tick_telemetry(self, t: float) -> HopTelemetry:
        """Every flow's per-hop INT now, stamped ``t``."""
        hops, q, tx, cap = self._hop_state(np.arange(self.n))
        return HopTelemetry(hops=hops, qlen_bytes=q, tx_bytes=tx, ts_ns=np.full(self.n, t), capacity=cap)

    def port_delays(self) -> np.ndarray:
        """(N,) current queueing delay (ns) along each flow's path: per port or path, then gathered."""
        if self.multi:
            return self.fabric.path_delay(np.arange(self.fabric.n_paths))[self.path]
        if self.fabric.n_ports == 1:
            return np.full(self.n, self.fabric.total_queue() / self.C)
        return (self.fabric.queue_bytes() / self.C)[self.path]

    def finish_flows(self, t: float) -> None:
        idx = self.finite_active
        self.settle(idx)
        fl = self.flows
        done = (self.acc_sent[idx] - self.acc_drop[idx] - fl.discarded[idx]) * self.payload >= self.table.size_bytes[idx]
        if self.go_back:  # a lost packet awaiting its NACK is not delivered yet
            nacked = fl.gbn_seen[idx] if self.gbn_clock else fl.nack_seen[idx]
            done &= np.floor(self.acc_drop[idx] / self.pkt).astype(np.int64) == nacked
        if not done.any():
            return
        fin = idx[done]
        self.finite_active = idx[~done]
        fct = t - self.table.start_ns[fin] + self.base_rtt(fin) / 2 + self.queue_delay(fin)
        self.set_rates(fin, np.zeros(len(fin)))
        self.flows.finish(fin, fct)
        if self.epoch is not None:
            self._epochs(fin, fct)

    def _epochs(self, fin: np.ndarray, fct: np.ndarray) -> None:
        """Count finished flows per epoch; when the current epoch is done, its end (the last
        completion) starts the next one."""
        np.subtract.at(self.epoch_left, self.epoch[fin], 1)
        ends = self.table.start_ns[fin] + fct
        for e in np.unique(self.epoch[fin]).tolist():
            mine = self.epoch[fin] == e
            self.epoch_end[e] = np.fmax(self.epoch_end[e], ends[mine].max())
        while self.epoch_now < len(self.epoch_left) and self.epoch_left[self.epoch_now] == 0:
            e = self.epoch_now = self.epoch_now + 1
            if e == len(self.epoch_left):
                break
            t_next = float(self.epoch_end[e - 1])
            nxt = np.flatnonzero(self.epoch == e)
            self.epoch_start[e] = t_next
            self.table.start_ns[nxt] = t_next
            self.sorted_starts[self.start_pos[nxt]] = t_next

    def snapshot(self, k: int) -> Snapshot:
        self.settle(np.arange(self.n))
        f = self.fabric
        fl = self.flows
        gbn = (fl.discarded.copy(), fl.resent.copy()) if self.go_back else (None, None)
        return Snapshot(k * self.dt, self.acc_sent.copy(), self.acc_drop.copy(), f.delivered, f.dropped, f.offered,
                        f.total_queue(), *gbn)

    def sample(self, k: int) -> None:
        if k % self.q_every == 0:
            f = self.fabric
            if self.multi:
                self.q_samples[k // self.q_every] = f.queue_delays()
            else:
                self.q_samples[k // self.q_every] = f.total_queue() if f.n_ports == 1 else f.queue_bytes()
        if k % self.series_every == 0:
            s = self.series
            s["t_us"].append(k * self.dt / 1e3)
            s["queue_us"].append(self.fabric.total_queue() / self.C / 1e3)
            s["rates"].append(self.flows.tx[self.series_flows].copy())
            s["load"].append(self.fabric.offered_load() if self.multi else float(self.fabric.port_load.sum()))

    # ---- main loop -----------------------------------------------------------------------------
    def run(self, progress: Callable[[int], None] | None = None) -> None:
        if self.blocked:
            self._run_blocks(progress)
            return
        swift_c = self.use_swift_loop and swiftloop.eligible(self)
        for k in range(self.n_steps):
            if swift_c and self.start_ptr >= self.n:  # every flow started: the rest in C
                self._run_swift_loop(k, progress)
                break
            self._step(k)
            if progress is not None and k % PROGRESS_EVERY == PROGRESS_EVERY - 1:
                progress(PROGRESS_EVERY)
            if self.epoch is not None and self.epoch_now >= len(self.epoch_left):
                self.n_steps = k + 1  # every epoch (OSU iteration) is done: nothing left to run
                break
        if progress is not None:
            progress(self.n_steps % PROGRESS_EVERY)
        self.snap_end = self.snapshot(self.n_steps)
        if self.snap_window is None:
            self.snap_window = self.snap_end

    def _step(self, k: int) -> None:
        """One step of the step-by-step loop."""
        dt = self.dt
        t = k * dt
        if k == self.window_step:
            self.snap_window = self.snapshot(k)
        if self.start_ptr < self.n and self.sorted_starts[self.start_ptr] <= t:
            self.start_flows(t)
        if self.pending and self.pending[0][0] <= k:
            self.apply_pending(k)
        self.decide(k, t + dt)
        if self.gbn_clock:
            self.nack_clock(t + dt)
        if t >= self.next_tick:
            self.tick(t)
            self.next_tick += self.tick_ns
        self.fabric.step(dt)
        if self.agent is not None and self.agent.due(k + 1):
            self.agent.close((k + 1) * dt)
        if len(self.finite_active):
            self.finish_flows(t + dt)
        self.sample(k)

    def _run_swift_loop(self, k0: int, progress: Callable[[int], None] | None) -> None:
        """Steps k0.. of a Swift run on one port in C (``swiftloop``), in chunks that end where the
        converged window's snapshot is due and, with ``progress``, every ``PROGRESS_EVERY`` steps."""
        loop = swiftloop.SwiftLoop(self, MIN_RATE)
        loop.hand_over()
        rows_done = len(self.series["t_us"])
        k = k0
        while k < self.n_steps:
            if k == self.window_step:
                self.snap_window = self.snapshot(k)
            k1 = self.n_steps
            if self.window_step > k:
                k1 = min(k1, self.window_step)
            if progress is not None:
                k1 = min(k1, (k // PROGRESS_EVERY + 1) * PROGRESS_EVERY)
            loop.run_steps(k, k1)
            if progress is not None and k1 % PROGRESS_EVERY == 0:
                progress(PROGRESS_EVERY)
            k = k1
        loop.series(rows_done, self.n_steps)


def simulate(
    scenario: Scenario,
    controller: Controller,
    trace: TraceConfig | None = None,
    progress: Callable[[int], None] | None = None,
    block_steps: int | None = None,
    switch_agent: WindowAgent | None = None,
) -> SimResult:
    """Run ``scenario`` under ``controller``; deterministic for the scenario's seed.

    ``trace``: record per-decision observations (see ``rlcc.simulator.trace``). ``progress``
    is called with the number of steps completed since its previous call.

    ``block_steps``: decisions of batchable controllers (``FactorController`` /
    ``PolicyController`` and the compiled-model controllers of ``rlcc.simulator.controllers.compiled`` without
    CNP/NACK features, the distillation sampler around them) are computed in blocks of this many steps
    with one controller call per block (default and maximum: floor(base RTT / dt)).
    Results do not depend on it (see ``rlcc.simulator.blocks``); 0 forces the step-by-step loop.

    ``switch_agent``: a switch agent (``rlcc.simulator.switch_agent``) retuning every egress queue's
    ECN each ``agent.spec.interval_us`` (see ``rlcc.simulator.switch_run``); its record is
    ``SimResult.switch``. Runs with an agent use the step-by-step loop.
    """
    wall = time.perf_counter()
    run = _Run(scenario, controller, trace, block_steps, switch_agent)
    run.run(progress)
    wall = time.perf_counter() - wall
    stats = run.rtt_stats / np.array([run.base, 1.0, run.base, 1.0])  # RTT sums -> inflation sums
    full = compute_metrics(run, run.snap_start, run.snap_end, stats[0:2], 0)
    window = compute_metrics(run, run.snap_window, run.snap_end, stats[2:4], run.window_step)
    for m in (full, window):
        if run.nic is not None:  # whole-run decision-processor statistics in both
            m.update(run.nic.metrics(run.n_steps * run.dt))
        m["wall_s"] = wall
        m["sim_speed"] = scenario.duration_ns * 1e-9 / wall
    series = {
        "t_us": np.asarray(run.series["t_us"]),
        "queue_us": np.asarray(run.series["queue_us"]),
        "rates": np.asarray(run.series["rates"]),
        "load": np.asarray(run.series["load"]),
        "flow_ids": run.series_flows,
    }
    a, b = run.snap_window, run.snap_end
    span = max(b.time_ns - a.time_ns, 1e-9)
    flows = {
        "window_rate": (in_order(b) - in_order(a)) * run.payload / (run.C * span),
        "sent_bytes": run.acc_sent.copy(),
        "dropped_bytes": run.acc_drop.copy(),
        "fct_ns": run.flows.fct,
        "decisions": run.flows.n_dec,
        "final_rate": run.flows.rate,
        "size_bytes": run.table.size_bytes.copy(),
        "base_rtt_ns": np.broadcast_to(run.base_rtt(np.arange(run.n)), (run.n,)).astype(np.float64),
        "probe_phase_ns": run.flows.phase.copy(),  # first probe time of a flow starting at t = 0
    }
    if run.nic is not None:
        flows.update(run.nic.per_flow())
    name = getattr(controller, "name", type(controller).__name__)
    if run.go_back:
        flows["resent_bytes"] = run.flows.resent.copy()
        flows["discarded_bytes"] = run.flows.discarded.copy()
    tr = run.recorder.finish() if run.recorder else None
    switch = run.agent.result() if run.agent is not None else None
    pfc = run.fabric.pfc.record(run.n_steps * run.dt) if run.fabric.pfc is not None else None
    if pfc is not None:
        names = run.fabric.ingress_names() if run.multi else [f"host{h}" for h in range(run.fabric.n_hosts)]
        pfc["names"] = np.array(names)
        for m in (full, window):
            m["pfc_pauses"] = float(pfc["pauses"].sum())
            m["pfc_paused_frac"] = float(pfc["paused_ns"][pfc["port"]].mean() / max(run.n_steps * run.dt, 1e-9))
    return SimResult(scenario, name, window, full, series, flows, tr, wall, switch, pfc)


class _StepHeap:
    """``_Run.pending`` when completions are not in step order (the NIC processor): the same
    ``append`` / ``[0]`` / ``popleft`` of ``(step, ...)`` entries, smallest step first, ties in push order."""

    def __init__(self) -> None:
        self.heap: list = []
        self.seq = 0

    def __bool__(self) -> bool:
        return bool(self.heap)

    def __getitem__(self, i: int) -> tuple:
        if i != 0:
            raise IndexError(i)
        return self.heap[0][2]

    def append(self, entry: tuple) -> None:
        heapq.heappush(self.heap, (entry[0], self.seq, entry))
        self.seq += 1

    def popleft(self) -> tuple:
        return heapq.heappop(self.heap)[2]


def _check_controller(controller: object) -> None:
    for attr in ("reset", "decide"):
        if not callable(getattr(controller, attr, None)):
            raise BadInputError(f"invalid controller: {type(controller).__name__} has no {attr}() method")
    if not hasattr(controller, "initial_rate"):
        raise BadInputError(f"invalid controller: {type(controller).__name__} has no initial_rate")
