"""The C block loop of a single-port switch (``_fluidcore.Kernel``, simulator/csrc/fluidcore.c).

A block of ``blocks.BlockLoop`` costs ~0.6 ms of fixed Python/numpy overhead whatever the
number of flows (about a hundred small numpy calls); on a one-port fabric (every many-to-one
incast) this kernel does the same work in C with the same float operations in the same order,
so results are bit-identical (tests/simulator/test_kernel.py runs both paths). Only the
controller call and the step features stay in Python.

``BlockKernel`` binds the kernel to one run: the ``FlowState`` columns and the fabric's
per-group arrays (block mode updates them in place, never rebinds them) plus the output scratch
the block loop reads after each call.

On a topology (``fabric.PathFabric``) the kernel's one-port ``post`` is never called and its
one-port fabric slots get unused placeholders (``front_only``): ``prep`` finds and sorts the
block's decisions and gathers their rows, ``observe`` shifts the windows and writes the policy
inputs. Without ``paths`` (runs that count CNP/NACKs) the block loop keeps the pending rate
changes and the fabric (``blocks._block_paths``), so the kernel's own pending list stays empty.

With ``paths`` (a topology run where nothing is counted: no trace, no recording controller, no
go-back-N) the kernel also runs the block after the controller call, ``path_post``: the pending
rate changes live here (``prep`` applies those landing before a decision), and the rate-matrix
sums, the fabric steps (``fabric.PathFabric.step``), settles, probes and queue samples run in C
(``blocks._block_paths_c``; tests/simulator/test_kernel_paths.py holds it to the Python blocks).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlcc.simulator import _fluidcore

# Vocabulary features (``rlcc.features``) whose float formula the kernel has (fluidcore.c
# ``feature_column``; tests/simulator/test_kernel.py checks each against ``float_value``).
FEATURE_CODES = {"prev_action": 0, "rtt_inflation": 1, "rate": 2, "delta": 3}


class BlockKernel:
    """The C kernel of one run plus the numpy arrays it writes each block's outputs to."""

    def __init__(self, run: Any, front_only: bool = False, paths: bool = False) -> None:
        fl, fab = run.flows, run.fabric
        n, nG, bmax = run.n, fab.n_groups, run.block_steps
        self.front_only = front_only
        spec = run.spec
        F = spec.n_features if spec is not None else 0
        W = fl.window.shape[1]
        nsf = len(run.series_flows)
        self.due = np.empty(n, np.int64)
        self.ret = np.empty(n)
        self.jd = np.empty(n, np.int64)
        self.rate = np.empty(n)
        self.rtt = np.empty(n, np.int64)
        self.rtt_f = np.empty(n)
        self.prev = np.empty(n)
        self.first = np.empty(n, bool)
        self.new = np.empty(n)  # the decisions' clipped rates and factors
        self.factors = np.empty(n)
        self.cnp = np.empty(n, np.int64)
        self.nack = np.empty(n, np.int64)
        self.queue = np.empty(bmax + 1)  # queue bytes at each step's start, then at the block end
        self.loads = np.empty(bmax)  # the port's offered load of each step
        if front_only:  # placeholders for what only ``post`` touches
            nsf = nsf if paths else 0
            self.fabric_arrays = (np.zeros((nG, 3)), np.ones(nG), np.zeros(3), np.zeros(nG), np.zeros(1))
            outputs = (np.zeros(1, np.float32), run.series_flows if paths else np.zeros(0, np.int64),
                       run.rtt_stats if paths else np.zeros(4))
            ecn = (0.0, 1.0, 0.0)
            self.send_rates, self.queue_sums = np.empty(bmax), np.empty(bmax)  # ``path_post``'s per-step series
        else:
            self.fabric_arrays = (fab.g0, fab.group_scale, fab.ref, fab.group_rate, fab.port_load)
            outputs = (run.q_samples.reshape(-1), run.series_flows, run.rtt_stats)
            ecn = fab._ecn0
        self.series_rates = np.zeros((bmax, nsf))
        arrays = (
            fl.rate, fl.tx, fl.next_ret, fl.probe_sent, fl.prev_action, fl.n_dec, fl.slot, fl.acc.T, fl.last.T,
            fl.cnp_seen, fl.nack_seen, fl.window.T, run.group,
            fab.group_host, *self.fabric_arrays, *outputs,
            self.due, self.ret, self.jd, self.rate, self.rtt, self.rtt_f, self.prev, self.first, self.new, self.factors,
            self.cnp, self.nack,
            self.queue, self.loads, self.series_rates,
        )
        kmin, kmax, pmax = ecn
        sizes = (n, nG, fab.n_hosts, W, F, bmax, nsf, len(outputs[0]) if front_only else len(run.q_samples))
        buffer = 0.0 if front_only else fab.buffer
        constants = (run.dt, run.C, float(run.base), run.pkt, float(run.net.host_cap), buffer, kmin, kmax, pmax,
                     run.latency_steps, run.block_steps, run.q_every, run.series_every, run.window_step,
                     spec is not None and spec.step_order == "oldest_first")
        self.core = _fluidcore.Kernel(arrays, sizes, constants)
        self.no_rows = np.empty(0)
        # reused every block: the policy inputs ``prep`` writes (topology runs with native features)
        # and the controller's rates and factors (``blocks._block_paths_c``)
        self.ctl_rates, self.ctl_factors = np.empty(n), np.empty(n)
        self.obs_rows = None
        # The step features in C when the kernel has every one of the spec's (else blocks.py's numpy).
        self.native_features = spec is not None and all(f.name in FEATURE_CODES for f in spec.features)
        if self.native_features:
            r = spec.reward
            self.core.set_features(tuple(FEATURE_CODES[f.name] for f in spec.features),
                                   tuple(float(f.scale) for f in spec.features), tuple(float(f.offset) for f in spec.features),
                                   float(r.target), float(r.beta), float(r.base_rtt_ns))
            if front_only:
                self.obs_rows = np.empty((n, spec.input_width), np.float32)

    def check_fabric(self, fab: Any) -> None:
        """The fabric still holds the arrays the kernel updates (block mode never rebinds them)."""
        if any(a is not b for a, b in zip(self.fabric_arrays, (fab.g0, fab.group_scale, fab.ref, fab.group_rate, fab.port_load))):
            raise RuntimeError("the fabric's per-group arrays were replaced during a block-mode run")
