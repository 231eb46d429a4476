"""Swift's step-by-step loop on a single-port switch in C (``_swiftloop.Loop``, simulator/csrc/swiftloop.c).

Swift reads NACK counts and re-paces every flow every tick, so it runs the engine's step loop,
about a hundred small numpy calls per step plus a whole-array pass per tick (8192 flows: ~250 us
per 1 us step). On one switch port (``Fabric._single``: every many-to-one incast) this loop does
the same steps in C with the same float operations in the same order, so results are
bit-identical (tests/simulator/test_swiftloop.py runs both; ``_Run.use_swift_loop = False``
selects the Python loop, the reference).

``eligible`` says when the C loop applies: a ``Swift`` controller (the class itself, not a
subclass), one port, every flow started and none finite, and nothing the C loop does not have
(trace, switch agent, NIC decision processor, serial decisions, the go-back-N clock, telemetry).
``SwiftLoop`` binds it to one run; the engine runs the steps before the last flow starts in
Python, hands the pending rate changes over and calls ``run`` in chunks (the converged window's
snapshot and progress reports fall between chunks).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlcc.simulator import _swiftloop
from rlcc.simulator.controllers.swift import MIN_RATE as SWIFT_MIN_RATE
from rlcc.simulator.controllers.swift import Swift


def eligible(run: Any) -> bool:
    """Whether ``run`` (an ``engine._Run``) can take the C loop once every flow has started."""
    return (
        type(run.ctl) is Swift
        and not run.multi
        and run.fabric._single
        and run.recorder is None
        and run.agent is None
        and run.nic is None
        and not run.sc.serial_decisions
        and not run.gbn_clock
        and not run.telemetry
        and run.epoch is None
        and not run.finite.any()
        and not run.tick_counters
        and run.spec is None
    )


class SwiftLoop:
    """The C loop of one run: the arrays it updates in place and the series rows it writes."""

    def __init__(self, run: Any, engine_min_rate: float) -> None:
        fl, fab, ctl = run.flows, run.fabric, run.ctl
        self.run, self.fab, self.ctl = run, fab, ctl
        self.series_rows = (run.n_steps - 1) // run.series_every + 1
        nsf = len(run.series_flows)
        self.ser_t = np.zeros(self.series_rows)
        self.ser_q = np.zeros(self.series_rows)
        self.ser_rates = np.zeros((self.series_rows, nsf))
        self.ser_load = np.zeros(self.series_rows)
        self.fabric_arrays = (fab.g0, fab.group_scale, fab.ref, fab.group_rate, fab.port_load)
        self.swift_arrays = (ctl.cwnd, ctl.cwnd_eff, ctl.paced, ctl.pend_rate, ctl.pend_cwnd, ctl.qdelay)
        arrays = (
            fl.rate, fl.tx, fl.active, fl.next_ret, fl.probe_sent, fl.prev_action, fl.n_dec, fl.acc.T, fl.last.T,
            fl.cnp_seen, fl.nack_seen, fl.sent_at_dec, fl.resent, fl.discarded, run.group,
            fab.group_host, *self.fabric_arrays, *self.swift_arrays,
            run.q_samples.reshape(-1), run.rtt_stats, run.series_flows, self.ser_t, self.ser_q, self.ser_rates,
            self.ser_load,
        )
        kmin, kmax, pmax = fab._ecn0
        sizes = (run.n, fab.n_groups, fab.n_hosts, nsf, run.q_samples.size, self.series_rows)
        constants = (run.dt, run.C, float(run.base), run.pkt, float(run.net.host_cap), fab.buffer, kmin, kmax, pmax,
                     engine_min_rate, run.latency_steps, run.q_every, run.series_every, run.window_step, run.go_back)
        p = ctl.p
        swift = (float(ctl.pkts_per_ns), float(p.ai), float(p.beta), float(p.max_mdf), float(p.min_cwnd),
                 float(ctl.fs_a), float(ctl.fs_b), float(p.fs_range_us * 1e3), float(ctl.base_target_ns),
                 float(ctl.tick_ns), SWIFT_MIN_RATE)
        self.core = _swiftloop.Loop(arrays, sizes, constants, swift)

    def hand_over(self) -> None:
        """Move the engine's pending rate changes (decided, not applied) into the C loop."""
        while self.run.pending:
            step, idx, new, probe_at = self.run.pending.popleft()
            if probe_at is not None:
                raise RuntimeError("serial decisions cannot take the C loop")
            self.core.push(int(step), np.ascontiguousarray(idx, np.int64), np.ascontiguousarray(new, np.float64))

    def run_steps(self, k0: int, k1: int) -> None:
        """Steps [k0, k1) in C; the fabric's single-port scalars and the next tick go in and come back."""
        run, fab = self.run, self.fab
        self._check_bound()
        state = (fab.time, fab._q, fab._d, fab._m, fab.offered, fab.delivered, fab.dropped, fab._dirty, run.next_tick)
        (fab.time, fab._q, fab._d, fab._m, fab.offered, fab.delivered, fab.dropped, fab._dirty,
         run.next_tick) = self.core.run(k0, k1, state)
        fab._load1 = float(fab.port_load[0])

    def series(self, rows_done: int, k_end: int) -> None:
        """Append the series rows the C loop wrote, from row ``rows_done`` to those of steps < k_end."""
        s, rows = self.run.series, (k_end - 1) // self.run.series_every + 1
        for r in range(rows_done, rows):
            s["t_us"].append(float(self.ser_t[r]))
            s["queue_us"].append(float(self.ser_q[r]))
            s["rates"].append(self.ser_rates[r].copy())
            s["load"].append(float(self.ser_load[r]))

    def _check_bound(self) -> None:
        """The fabric and Swift still hold the arrays the loop updates (nothing rebinds them in C mode)."""
        fab, ctl = self.fab, self.ctl
        now = (fab.g0, fab.group_scale, fab.ref, fab.group_rate, fab.port_load,
               ctl.cwnd, ctl.cwnd_eff, ctl.paced, ctl.pend_rate, ctl.pend_cwnd, ctl.qdelay)
        if any(a is not b for a, b in zip(self.fabric_arrays + self.swift_arrays, now)):
            raise RuntimeError("the fabric's or Swift's arrays were replaced during a C-loop run")
