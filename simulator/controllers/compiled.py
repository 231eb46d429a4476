"""Simulator controllers that run a compiled model closed loop.

``GoldenController`` drives the simulator with the normative integer semantics
(``rlcc.fxp.golden.step``): per-flow 48-byte contexts keyed by flow id, and per decision the
PCC events the NIC would deliver: a CNP event carrying the coalesced CNP count, a NACK event
likewise, then the RTT event whose timestamps give back the probe's RTT modulo 2^32. The
device clock starts ``clock_offset_ns`` before a 2^32 wrap, so every run longer than that
exercises timestamp wraparound. Rates map as ``rate = rate_q20 / 2^20``. A scenario that
overrides the flows' initial rate (``initial_rate``) is honoured by seeding a new flow's context
with that rate at its first decision (as a runtime would when it hands the NIC a flow already
paced at that rate); otherwise contexts start zeroed and take the model's ``rate_initial``.

``FloatTreesController`` runs the float tree IR on the spec's float inputs (the engine builds
them), clamped like the device: the float reference the fixed-point model is compared with.

Both are ``batchable`` (the engine may decide a block of steps per call, see
``rlcc.simulator.blocks``) when the spec has no CNP/NACK feature: each flow's decision then
depends only on its own window or context. The golden controller gets no counts in block mode
and delivers no CNP/NACK events; that changes no decision and no context after an RTT event,
because those events only add to the counters, which the RTT event resets and a count-free
model never reads.
"""

from __future__ import annotations

import numpy as np

from rlcc import formats as fmt
from rlcc.tree_ir import FloatEnsemble
from rlcc.fxp import golden
from rlcc.fxp.model import FxModel
from rlcc.simulator.controllers.base import Decision, DecisionBatch
from rlcc.simulator.params import Network
from rlcc.spec import ObservationSpec

DEFAULT_CLOCK_OFFSET_NS = 2**32 - 1_000_000  # the device clock wraps 1 ms into every run


class GoldenController:
    """The fixed-point model as a raw-event controller (no float observation needed)."""

    spec: ObservationSpec | None = None

    def __init__(self, model: FxModel, clock_offset_ns: int = DEFAULT_CLOCK_OFFSET_NS, name: str = "fixed-point") -> None:
        self.model = model
        self.name = name
        self.clock_offset_ns = int(clock_offset_ns)
        self.initial_rate = model.constants.rate_initial / fmt.RATE_ONE
        self.ctx = np.zeros((0, fmt.CTX_WORDS), dtype=np.uint32)
        self.decisions = 0
        self.batchable = _count_free(model.spec)

    def reset(self, n_flows: int, network: Network, rng: np.random.Generator) -> None:
        self.ctx = np.zeros((n_flows, fmt.CTX_WORDS), dtype=np.uint32)
        self.decisions = 0

    def _apply(self, ids: np.ndarray, events: np.ndarray) -> golden.GoldenResult:
        result = golden.step(self.model, self.ctx[ids], events)
        self.ctx[ids] = result.ctx
        return result

    def _counter_events(self, ids: np.ndarray, now: np.ndarray, counts: np.ndarray, etype: int) -> None:
        """Deliver coalesced CNP/NACK counts (16-bit coalesced field; larger counts saturate anyway)."""
        hit = np.flatnonzero(counts > 0)
        if len(hit):
            ev = golden.make_events(
                np.full(len(hit), etype), now[hit], coalesced=np.minimum(counts[hit], fmt.COUNT_MAX)
            )
            self._apply(ids[hit], ev)

    def seeded_context(self, rate: float) -> np.ndarray | None:
        """The context a flow started at ``rate`` (fraction of line rate) begins from, or None when
        that is the device's own start (zeroed context, the model's ``rate_initial``)."""
        rate_q, seed = self._start_rates(np.array([rate]))
        if not seed[0]:
            return None
        ctx = np.zeros((1, fmt.CTX_WORDS), dtype=np.uint32)
        _write_seed(ctx, rate_q)
        return ctx[0]

    def _start_rates(self, rates: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Q20 start rates and which of them need a seeded context (the default start stays the device's own path)."""
        rate_q = np.clip(np.rint(np.asarray(rates, dtype=np.float64) * fmt.RATE_ONE), 1, fmt.RATE_MAX).astype(np.int64)
        return rate_q, rate_q != self.model.constants.rate_initial

    def _seed_initial_rates(self, ids: np.ndarray, batch: DecisionBatch) -> None:
        first = np.asarray(batch.first, dtype=bool) & (self.ctx[ids, fmt.CTX_RATE] == 0)
        if not first.any():
            return
        rate_q, seed = self._start_rates(np.asarray(batch.rate, dtype=np.float64)[first])
        if seed.any():
            rows = ids[first][seed]
            ctx = np.zeros((len(rows), fmt.CTX_WORDS), dtype=np.uint32)
            _write_seed(ctx, rate_q[seed])
            self.ctx[rows] = ctx

    def decide(self, batch: DecisionBatch) -> Decision:
        ids = np.asarray(batch.flow_ids, dtype=np.int64)
        self._seed_initial_rates(ids, batch)
        now = np.floor(np.asarray(batch.time_ns, dtype=np.float64)).astype(np.int64) + self.clock_offset_ns
        if batch.cnp_count is not None:  # None: block mode, count-free model (module doc)
            self._counter_events(ids, now, np.asarray(batch.cnp_count, dtype=np.int64), fmt.EVENT_CNP)
            self._counter_events(ids, now, np.asarray(batch.nack_count, dtype=np.int64), fmt.EVENT_NACK)
        sent = now - np.asarray(batch.rtt_ns, dtype=np.int64)
        result = self._apply(ids, golden.make_events(np.full(len(ids), fmt.EVENT_RTT), now, u0=sent))
        self.decisions += len(ids)
        factors = self.ctx[ids, fmt.CTX_PREV_FACTOR].astype(np.float64) / fmt.FACTOR_ONE
        return Decision(result.rate.astype(np.float64) / fmt.RATE_ONE, factors)


class FloatTreesController:
    """The float ensemble on the engine-built spec inputs (plus the spec's derived inputs), clamped like the device (``clamp``:
    the model's factor clamp in float, ``rlcc.distill.evaluate.factor_clamp``; default the spec's)."""

    def __init__(self, ensemble: FloatEnsemble, spec: ObservationSpec, name: str = "float-trees",
                 clamp: tuple[float, float] | None = None) -> None:
        self.ensemble = ensemble
        self.spec = spec
        self.name = name
        self.initial_rate = spec.rate.initial
        self.batchable = _count_free(spec)
        self.clamp = clamp or (spec.action.clamp_min, spec.action.clamp_max)

    def factors(self, obs: np.ndarray) -> np.ndarray:
        return np.clip(self.ensemble.predict(self.spec.student_obs(obs)), *self.clamp)

    def reset(self, n_flows: int, network: Network, rng: np.random.Generator) -> None:
        """Stateless: the engine keeps the observation windows."""

    def decide(self, batch: DecisionBatch) -> Decision:
        factors = self.factors(batch.obs)
        rates = np.clip(batch.rate * factors, self.spec.rate.min, 1.0)
        return Decision(rates, factors)


def _count_free(spec: ObservationSpec) -> bool:
    return not spec.uses_counters


class Int8NetController(GoldenController):
    """An int8 network (``rlcc.fxp.int8_net.Int8Net``) closed loop: the same raw-event semantics as
    ``GoldenController`` (the golden model runs either backend's decision), its recurrent state in
    each flow's context."""

    def __init__(self, model, clock_offset_ns: int = DEFAULT_CLOCK_OFFSET_NS, name: str = "int8-net") -> None:
        super().__init__(model, clock_offset_ns, name)


# The controller that runs each device model (``model.backend``) in closed loop.
CONTROLLERS = {"trees": GoldenController, "int8": Int8NetController}


def _write_seed(ctx: np.ndarray, rate_q: np.ndarray) -> None:
    """Zeroed contexts (rows of ``ctx``) of flows handed to the NIC already paced at ``rate_q``."""
    ctx[:] = 0
    ctx[:, fmt.CTX_RATE] = rate_q
    ctx[:, fmt.CTX_PREV_FACTOR] = fmt.FACTOR_ONE
