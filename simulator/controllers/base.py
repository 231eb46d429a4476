"""The controller interface: what the engine hands a congestion controller and what it gets back.

Every controller sees the same raw per-decision events (``DecisionBatch``): one row per flow
whose RTT probe returned in this time step. Spec-driven controllers also get ``obs``, the exact
policy input window built by the engine from ``rlcc.spec``. Controllers keep their own per-flow
state indexed by flow id (the fixed-point golden model keeps its 48-byte contexts that way).
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

from rlcc.simulator.params import Network
from rlcc.spec import ObservationSpec


@dataclasses.dataclass(frozen=True)
class HopTelemetry:
    """In-band telemetry (INT) a probe brings back, one column per hop of the flow's path, stamped
    when the probe was sent (the fluid model samples every hop at send time)."""

    hops: np.ndarray  # int64 (B,): number of valid hops of each row's path (columns >= hops are padding)
    qlen_bytes: np.ndarray  # float64 (B, H): egress queue of each hop
    tx_bytes: np.ndarray  # float64 (B, H): cumulative bytes the hop's egress link has transmitted since t=0
    ts_ns: np.ndarray  # float64 (B,): stamp time (probe send time), same for all hops of a row
    capacity: np.ndarray  # float64 (B, H): the hop's link rate in bytes/ns (padding: 1.0)


@dataclasses.dataclass(frozen=True)
class DecisionBatch:
    """All decisions due in one time step (row i belongs to flow ``flow_ids[i]``)."""

    flow_ids: np.ndarray  # int64 (B,)
    time_ns: np.ndarray  # float64 (B,), when each probe returned
    rtt_ns: np.ndarray  # int64 (B,), base RTT + queueing delay seen by the probe
    rate: np.ndarray  # float64 (B,), current rate as a fraction of line rate
    cnp_count: np.ndarray | None  # int64 (B,), CNPs since the flow's previous decision
    nack_count: np.ndarray | None  # int64 (B,), NACKs since ... (both None in block mode, batchable only)
    first: np.ndarray  # bool (B,), True at a flow's first decision
    obs: np.ndarray | None  # float32 (B, spec.input_width), or None if the controller has no spec
    telemetry: HopTelemetry | None = None  # per-hop INT of each row's probe (controllers with wants_telemetry)


class Decision(NamedTuple):
    """New rates (fractions of line rate) and, for factor policies, the factors applied."""

    rates: np.ndarray
    factors: np.ndarray | None = None


@dataclasses.dataclass(frozen=True)
class TickInfo:
    """Per-flow fluid state at a tick (for timer-driven controllers: DCQCN, Swift's pacing).

    ``marked_packets`` / ``sent_bytes`` are None when the controller sets ``tick_counters =
    False`` (it does not read them; the engine then skips settling every flow's counters).
    """

    time_ns: float
    marked_packets: np.ndarray | None  # float64 (N,), ECN-marked packets delivered since the last tick
    sent_bytes: np.ndarray | None  # float64 (N,), bytes sent since the last tick
    rate: np.ndarray  # float64 (N,), current rates
    active: np.ndarray  # bool (N,)
    queue_delay_ns: np.ndarray  # float64 (N,), current queueing delay at each flow's egress port
    base_rtt_ns: np.ndarray | float | None = None  # base RTT of each flow's path (ns; a float: all flows)
    telemetry: HopTelemetry | None = None  # every flow's per-hop INT now (controllers with wants_telemetry)


@runtime_checkable
class Controller(Protocol):
    """A congestion controller.

    ``spec``: the observation spec whose input window the engine must build (None: no obs).
    ``initial_rate``: the rate of a new flow. ``reset`` is called once per run before any
    decision. ``decide`` returns new rates (an array, or a ``Decision`` with the factors so the
    engine can feed ``prev_action`` back). Rates are clipped by the engine to (0, 1].
    Optional ``batchable = True``: decisions depend only on each row's obs / rate / flow state, not
    on CNP/NACK counts or on how rows are grouped into calls; the engine then decides a whole
    block of steps per call (``rlcc.simulator.blocks``) with ``cnp_count = nack_count = None``;
    a controller that still wants them defines ``block_counts(cnp, nack)``, called after each
    block with the counts of its decisions (rows in the order of the block's ``decide`` call).
    Optional ``wants_telemetry = True``: the engine fills ``DecisionBatch.telemetry`` (the per-hop
    INT each row's probe carried) for every decision batch (HPCC).
    """

    spec: ObservationSpec | None
    initial_rate: float

    def reset(self, n_flows: int, network: Network, rng: np.random.Generator) -> None: ...

    def decide(self, batch: DecisionBatch) -> np.ndarray | Decision: ...


class TickController(Controller, Protocol):
    """A controller that also reacts to fluid state every ``tick_ns`` (vectorized over flows).

    ``tick_ns`` is read after ``reset`` (so it may depend on the network); ticks happen at step
    boundaries (the first step with t >= the next tick time). ``on_tick`` returns new rates for
    all N flows (only active flows whose rate differs are changed) or None. Optional
    ``tick_counters = False``: the controller ignores ``marked_packets`` / ``sent_bytes``.
    """

    tick_ns: float

    def on_tick(self, info: TickInfo) -> np.ndarray | None: ...
