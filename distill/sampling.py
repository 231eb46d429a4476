"""Closed-loop sampling of the states a policy visits, plus tail coverage around them.

A ``Recorder`` wraps the controller that drives the simulator (the teacher, or a student in
DAgger rounds). For every decision it keeps, besides the exact spec input window the engine
built (``obs``), the *raw* per-step quantities of the whole window (RTT in ns, rate, previous
factor, CNP and NACK counts) so the device's integer features can be recomputed for the same
sample (``Samples.device_inputs``). Memory is bounded per scenario by a seeded reservoir.

Tail coverage perturbs visited windows in raw space (RTT, rate, previous factor, counts) and
recomputes every derived feature through the spec, so perturbed samples stay consistent. A
share of perturbed windows is made stationary (past steps = current step): persisting deep
congestion is rare on the teacher's own trajectories but is where a student that decreases
too little gets stuck.
"""

from __future__ import annotations

import dataclasses
import zlib
from typing import Callable, Sequence

import numpy as np

from rlcc import formats as fmt
from rlcc.parallel import Runner, run_all
from rlcc.errors import BadInputError
from rlcc.fxp import golden
from rlcc.fxp.model import FxConstants
from rlcc.progress import Stage
from rlcc.simulator.controllers.base import Decision, DecisionBatch
from rlcc.simulator.controllers.recurrent import RecurrentController, recurrent_owner
from rlcc.simulator.engine import simulate
from rlcc.simulator.scenarios import AllToAll, LongShort, ManyToOne, Network, Scenario, TopologyConfig
from rlcc.spec import ObservationSpec

RAW_FIELDS = ("rtt_ns", "rate", "prev_factor", "cnp_count", "nack_count")
RTT, RATE, PREV, CNP, NACK = range(len(RAW_FIELDS))
ORIGIN_CLOSED_LOOP, ORIGIN_PERTURBED, ORIGIN_DAGGER, ORIGIN_ANCHOR = 0, 1, 2, 3
ORIGIN_NAMES = {ORIGIN_CLOSED_LOOP: "closed_loop", ORIGIN_PERTURBED: "perturbed", ORIGIN_DAGGER: "dagger",
                ORIGIN_ANCHOR: "anchor"}

FactorFn = Callable[[np.ndarray], np.ndarray]

# name -> scenario; durations long enough for many-to-one incasts to converge from line rate.
DEFAULT_SCENARIOS = ("many-to-one:2,many-to-one:16,many-to-one:128,many-to-one:1024,all-to-all:8,long-short:16,"
                     "fat-tree/all-to-all:16")
FAT_TREE_PREFIX = "fat-tree/"  # a sampling scenario on the 64-host fat-tree


@dataclasses.dataclass
class Samples:
    """Sampled decisions: spec inputs, raw windows (N, history, 5; index 0 = current), labels."""

    obs: np.ndarray
    raw: np.ndarray
    label: np.ndarray
    origin: np.ndarray
    scenario: np.ndarray
    flow: np.ndarray
    scenario_names: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.obs)

    def subset(self, idx: np.ndarray) -> "Samples":
        return Samples(self.obs[idx], self.raw[idx], self.label[idx], self.origin[idx], self.scenario[idx], self.flow[idx], self.scenario_names)

    @staticmethod
    def concat(parts: Sequence["Samples"]) -> "Samples":
        names = tuple(dict.fromkeys(n for p in parts for n in p.scenario_names))
        remap = [np.array([names.index(n) for n in p.scenario_names] or [0], dtype=np.int16) for p in parts]
        return Samples(
            np.concatenate([p.obs for p in parts]),
            np.concatenate([p.raw for p in parts]),
            np.concatenate([p.label for p in parts]),
            np.concatenate([p.origin for p in parts]),
            np.concatenate([r[p.scenario] for r, p in zip(remap, parts)]).astype(np.int16),
            np.concatenate([p.flow for p in parts]),
            names,
        )

    def device_inputs(self, spec: ObservationSpec) -> np.ndarray:
        """The int64 policy inputs (N, width) the device computes for these raw windows."""
        return device_inputs(spec, self.raw)


def float_inputs(spec: ObservationSpec, raw: np.ndarray) -> np.ndarray:
    """Spec float inputs (N, width) float32 for raw windows (N, history, 5): the engine's math."""
    n, k, _ = raw.shape
    flat = raw.reshape(n * k, raw.shape[2])
    step = spec.raw_step_features(flat[:, PREV], flat[:, RTT], flat[:, RATE], flat[:, CNP], flat[:, NACK])
    return spec.assemble(spec.scale_step(step).reshape(n, k, spec.n_features))


def device_inputs(spec: ObservationSpec, raw: np.ndarray) -> np.ndarray:
    """Integer device features for raw windows: rate -> Q20, factor -> Q16.16 (nearest), golden math."""
    n, k, _ = raw.shape
    flat = raw.reshape(n * k, raw.shape[2])
    rate_q = np.clip(np.rint(flat[:, RATE] * fmt.RATE_ONE), 1, fmt.RATE_MAX).astype(np.int64)
    prev_q = np.rint(flat[:, PREV] * fmt.FACTOR_ONE).astype(np.int64)
    counts = [np.minimum(flat[:, c], fmt.COUNT_MAX).astype(np.int64) for c in (CNP, NACK)]
    rtt = np.rint(flat[:, RTT]).astype(np.int64)
    steps = golden.step_features(spec, FxConstants.from_spec(spec), rtt, rate_q, prev_q, *counts)
    steps = steps.reshape(n, k, spec.n_features)
    return golden.window_inputs(spec, steps[:, 0], steps[:, 1:])


class Recorder:
    """Wraps a driving controller; keeps a seeded reservoir of its decisions with raw windows.

    Batchable when its driver is (the engine then decides a block of steps per call): the
    CNP/NACK counts of a block's decisions arrive after the block (``block_counts``) and the
    decisions are recorded then, in the same order as step by step, so the reservoir keeps the
    same samples either way.
    """

    def __init__(self, driver, spec: ObservationSpec, capacity: int, seed: int, teacher=None) -> None:
        self.driver = driver
        # A recurrent teacher labels each decision as it happens, from its per-flow state along
        # this trajectory: the driver's own factors when the teacher drives, else a shadow copy
        # fed the same decisions (DAgger). None: window teachers label afterwards (closed_loop).
        owner = recurrent_owner(teacher) if teacher is not None else None
        self.label_driver = owner is not None and isinstance(driver, RecurrentController)
        self.shadow = RecurrentController(owner, spec, "shadow") if owner is not None and not self.label_driver else None
        self.spec = spec  # the engine builds the exact spec inputs for us
        self.initial_rate = driver.initial_rate
        self.name = f"recorder:{getattr(driver, 'name', type(driver).__name__)}"
        self.batchable = bool(getattr(driver, "batchable", False))
        self.capacity = capacity
        self.rng = np.random.default_rng(seed)
        k = spec.history
        self.obs = np.zeros((capacity, spec.input_width), np.float32)
        self.raw = np.zeros((capacity, k, len(RAW_FIELDS)))
        self.flow = np.zeros(capacity, np.int64)
        self.label = np.zeros(capacity)
        self.size = 0
        self.seen = 0
        self._waiting: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    def reset(self, n_flows: int, network: Network, rng: np.random.Generator) -> None:
        self.driver.reset(n_flows, network, rng)
        if self.shadow is not None:
            self.shadow.reset(n_flows, network, rng)
        self.prev_factor = np.ones(n_flows)
        self.past = np.zeros((n_flows, max(self.spec.history - 1, 0), len(RAW_FIELDS)))
        self._waiting = None

    def decide(self, batch: DecisionBatch):
        out = self.driver.decide(batch)
        rates, factors = out if isinstance(out, Decision) else (out, None)
        labels = (self.shadow.factors(batch) if self.shadow is not None else
                  factors if self.label_driver else np.zeros(len(batch.flow_ids)))
        ids = batch.flow_ids
        late = batch.cnp_count is None  # block mode: counts come through block_counts
        zeros = np.zeros(len(ids))
        current = np.stack(
            [batch.rtt_ns.astype(np.float64), batch.rate, self.prev_factor[ids],
             zeros if late else batch.cnp_count.astype(np.float64),
             zeros if late else batch.nack_count.astype(np.float64)], axis=1,
        )
        past = self.past[ids]
        first = np.asarray(batch.first, dtype=bool)
        if first.any():
            past[first] = current[first][:, None, :]
        window = np.concatenate([current[:, None, :], past], axis=1)
        if factors is None:
            factors = np.clip(np.asarray(rates, dtype=np.float64), 1e-9, 1.0) / batch.rate
        self.prev_factor[ids] = factors
        if late:
            self._waiting = (batch.obs, window, ids, first, labels)
        else:
            self._record(batch.obs, window, ids, labels)
        return out

    def block_counts(self, cnp: np.ndarray, nack: np.ndarray) -> None:
        """The CNP/NACK counts of the last block's decisions (engine block mode)."""
        if self._waiting is None:
            return
        obs, window, ids, first, labels = self._waiting
        self._waiting = None
        for col, counts in ((CNP, cnp), (NACK, nack)):
            window[:, 0, col] = counts
            window[first, 1:, col] = np.asarray(counts, dtype=np.float64)[first, None]  # copies of the first step
        self._record(obs, window, ids, labels)

    def _record(self, obs: np.ndarray, window: np.ndarray, ids: np.ndarray, labels: np.ndarray) -> None:
        self._keep(obs, window, ids, labels)
        if self.spec.history > 1:
            self.past[ids] = window[:, :-1]

    def _keep(self, obs: np.ndarray, window: np.ndarray, ids: np.ndarray, labels: np.ndarray) -> None:
        """Algorithm R over all decisions seen, vectorized per batch."""
        n = len(ids)
        index = self.seen + np.arange(n)
        self.seen += n
        head = min(self.capacity - self.size, n)
        if head:
            sl = slice(self.size, self.size + head)
            self.obs[sl], self.raw[sl], self.flow[sl], self.label[sl] = obs[:head], window[:head], ids[:head], labels[:head]
            self.size += head
        if head < n:
            slots = (self.rng.random(n - head) * (index[head:] + 1)).astype(np.int64)
            hit = np.flatnonzero(slots < self.capacity) + head
            dst = slots[hit - head]
            self.obs[dst], self.raw[dst], self.flow[dst], self.label[dst] = obs[hit], window[hit], ids[hit], labels[hit]


@dataclasses.dataclass(frozen=True)
class ScenarioEntry:
    name: str
    scenario: Scenario


def parse_scenarios(text: str, seed: int = 0, duration_scale: float = 1.0) -> list[ScenarioEntry]:
    """``[fat-tree/]kind:size[:duration_ms]`` comma list; size = flows (many-to-one), hosts
    (all-to-all), short flows per burst (long-short). Default durations let incasts converge from
    line rate. ``fat-tree/``: on the 64-host two-level fat-tree (else the single switch)."""
    entries = []
    for i, item in enumerate(p.strip() for p in text.split(",") if p.strip()):
        topology = None
        body = item
        if item.startswith(FAT_TREE_PREFIX):
            topology, body = TopologyConfig(), item[len(FAT_TREE_PREFIX):]
        parts = body.split(":")
        try:
            kind, size = parts[0], int(parts[1])
            duration = float(parts[2]) if len(parts) > 2 else None
        except (IndexError, ValueError):
            raise BadInputError(f"invalid scenario {item!r}: expected kind:size[:duration_ms]") from None
        if len(parts) > 3 or size < 1 or (duration is not None and duration <= 0):
            raise BadInputError(f"invalid scenario {item!r}: expected kind:size[:duration_ms]")
        s = seed + i
        if kind == "many-to-one":
            d = duration or min(150.0, 40.0 + 10.0 * np.log2(size))
            sc: Scenario = ManyToOne(flows=size, duration_ms=d * duration_scale, seed=s)
        elif kind == "all-to-all":
            sc = AllToAll(hosts=size, duration_ms=(duration or 20.0) * duration_scale, seed=s)
        elif kind == "long-short":
            sc = LongShort(short_flows=size, bursts=4, burst_start_frac=0.3, burst_interval_us=2000.0,
                           duration_ms=(duration or 20.0) * duration_scale, seed=s)
        else:
            raise BadInputError(f"invalid scenario {item!r}: kind must be many-to-one, all-to-all or long-short")
        if topology is not None:
            sc = dataclasses.replace(sc, topology=topology)
        sc.validate()
        entries.append(ScenarioEntry(item, sc))
    if not entries:
        raise BadInputError("no scenarios given")
    return entries


def closed_loop(
    driver_factory: Callable[[], object],
    teacher: FactorFn,
    spec: ObservationSpec,
    scenarios: Sequence[ScenarioEntry],
    n_samples: int,
    seed: int,
    origin: int = ORIGIN_CLOSED_LOOP,
    runner: Runner | None = None,
    stage: Stage | None = None,
) -> Samples:
    """Run each scenario under a fresh driver; keep ~n_samples/len(scenarios) decisions each.

    The scenarios run through ``runner`` (in worker processes: ``driver_factory`` must then be
    picklable, e.g. a ``functools.partial``); ``stage`` advances by simulated milliseconds."""
    per = max(1, n_samples // len(scenarios))
    tasks = [(driver_factory, spec, entry.scenario, per, _mix(seed, entry.name, origin), teacher) for entry in scenarios]
    costs = [entry.scenario.duration_ms for entry in scenarios]
    recorded = run_all(runner, _record_scenario, tasks, costs=costs, stage=stage)
    parts = []
    for i, (obs, raw, flow, label) in enumerate(recorded):
        m = len(obs)
        if m == 0:
            continue
        parts.append(Samples(obs, raw, label, np.full(m, origin, np.int8), np.full(m, i, np.int16),
                             flow, tuple(e.name for e in scenarios)))
    if not parts:
        raise BadInputError("the simulator produced no decisions for the sampling scenarios")
    out = Samples.concat(parts)
    if recurrent_owner(teacher) is None:
        out.label = teacher_labels(teacher, out.obs)
    elif not np.all(np.isfinite(out.label)):
        raise BadInputError("teacher policy produced NaN or inf on sampled states")
    return out


def _record_scenario(task: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One scenario of ``closed_loop``: the reservoir's (obs, raw windows, flow ids, labels)."""
    driver_factory, spec, scenario, capacity, seed, teacher = task
    rec = Recorder(driver_factory(), spec, capacity, seed=seed, teacher=teacher)
    simulate(scenario, rec)
    m = rec.size
    return rec.obs[:m].copy(), rec.raw[:m].copy(), rec.flow[:m].copy(), rec.label[:m].copy()


def teacher_labels(teacher: FactorFn, obs: np.ndarray) -> np.ndarray:
    y = np.asarray(teacher(obs), dtype=np.float64).reshape(len(obs))
    if not np.all(np.isfinite(y)):
        raise BadInputError("teacher policy produced NaN or inf on sampled states")
    return y


def perturb(base: Samples, teacher: FactorFn, spec: ObservationSpec, n: int, seed: int) -> Samples:
    """``n`` windows perturbed around ``base`` in raw space, relabelled by the teacher."""
    rng = np.random.default_rng(seed)
    pick = rng.integers(0, len(base), n)
    raw = base.raw[pick].copy()
    shape = raw.shape[:2]
    base_rtt = float(spec.reward.base_rtt_ns)
    raw[..., RTT] = np.clip(np.rint(raw[..., RTT] * np.exp(rng.normal(0, 0.4, shape))), base_rtt * 0.9, base_rtt * 2000)
    raw[..., RATE] = np.clip(raw[..., RATE] * np.exp(rng.normal(0, 0.7, shape)), spec.rate.min, 1.0)
    a = spec.action
    fresh = rng.random(shape) < 0.5
    jitter = raw[..., PREV] * np.exp(rng.normal(0, 0.05, shape))
    raw[..., PREV] = np.clip(np.where(fresh, rng.uniform(a.clamp_min, a.clamp_max, shape), jitter), a.clamp_min, a.clamp_max)
    for c in (CNP, NACK):
        bump = rng.random(shape) < 0.2
        raw[..., c] = raw[..., c] + np.where(bump, rng.poisson(3.0, shape), 0)
    steady = rng.random(n) < 0.3  # persisting conditions: every past step equals the current one
    raw[steady, 1:] = raw[steady, :1]
    obs = float_inputs(spec, raw)
    return Samples(obs, raw, teacher_labels(teacher, obs), np.full(n, ORIGIN_PERTURBED, np.int8),
                   base.scenario[pick], base.flow[pick], base.scenario_names)


def anchors(spec: ObservationSpec, teacher: FactorFn, n: int, seed: int, buffer_bytes: float = 32e6,
            line_rate_gbps: float = 100.0) -> Samples:
    """``n`` synthetic windows over the physically reachable extreme region, teacher-labelled.

    Current RTT inflation log-uniform from 1 to a full buffer (``buffer_bytes`` at line rate),
    rate log-uniform over [rate.min, 1], previous factors uniform over the clamp range with 30%
    exactly at the clamp / the tanh saturation values. Each older step's RTT is the newer one
    times a log-normal ratio (30% exactly 1: persisting congestion), its rate the newer rate
    divided by the factor applied in between. Deep congestion is where the teacher's answer
    depends on the *change* of delta (draining vs persisting queue) and is rare on its own
    trajectories, but it is where a student started at line rate spends its first decisions.
    """
    rng = np.random.default_rng(seed)
    a, k = spec.action, spec.history
    base = float(spec.reward.base_rtt_ns)
    max_infl = 1.0 + buffer_bytes / (line_rate_gbps / 8.0) / base  # bytes / (bytes/ns) / ns
    raw = np.zeros((n, k, len(RAW_FIELDS)))
    raw[:, 0, RTT] = base * np.exp(rng.uniform(0.0, np.log(max_infl), n))
    raw[:, 0, RATE] = np.exp(rng.uniform(np.log(spec.rate.min), 0.0, n))
    prev = rng.uniform(a.clamp_min, a.clamp_max, (n, k))
    edges = np.array([a.clamp_min, a.clamp_max, 1.0] + ([1.0 / (1.0 + a.gain), 1.0 + a.gain] if a.type == "tanh" else []))
    prev = np.where(rng.random((n, k)) < 0.3, np.clip(rng.choice(edges, (n, k)), a.clamp_min, a.clamp_max), prev)
    raw[:, :, PREV] = prev
    for j in range(1, k):
        ratio = np.where(rng.random(n) < 0.3, 1.0, np.exp(rng.normal(0.0, 0.5, n)))
        raw[:, j, RTT] = np.clip(raw[:, j - 1, RTT] * ratio, base, base * max_infl)
        raw[:, j, RATE] = np.clip(raw[:, j - 1, RATE] / raw[:, j - 1, PREV], spec.rate.min, 1.0)
    raw[..., RTT] = np.rint(raw[..., RTT])
    obs = float_inputs(spec, raw)
    return Samples(obs, raw, teacher_labels(teacher, obs), np.full(n, ORIGIN_ANCHOR, np.int8),
                   np.zeros(n, np.int16), np.arange(n, dtype=np.int64), ("anchors",))


# Cap of the time weights (RTT inflation; 1000 = 8 ms at an 8 us base RTT). Chosen on the
# trained example: the closed loop is sensitive to it (caps 100 / 321 / none gave startup gaps at
# 2048 flows of +85% / +29% / +7% with steady-state gaps of -3% / -7% / -6%; 1000: +13% / -1%).
TIME_WEIGHT_CAP = 1000.0


def time_weights(spec: ObservationSpec, raw: np.ndarray, cap: float = TIME_WEIGHT_CAP) -> np.ndarray:
    """Per-sample weight proportional to the time a decision governs: its current RTT over the
    base RTT, in [1, cap]. Decisions are sampled once each, but one taken in a deep queue steers
    the flow for its whole (long) RTT: the closed loop spends its time where these weights are."""
    return np.clip(raw[:, 0, RTT] / float(spec.reward.base_rtt_ns), 1.0, cap)


def split_holdout(samples: Samples, fraction: float, seed: int) -> tuple[Samples, Samples]:
    """(train, held-out): whole flows of closed-loop runs are held out, perturbed ones never
    (rows instead of flows when there are too few flows)."""
    key = (samples.scenario.astype(np.int64) << 32) + samples.flow
    h = np.array([zlib.crc32(np.int64(k).tobytes() + seed.to_bytes(4, "little")) for k in np.unique(key)], dtype=np.int64)
    held_keys = np.unique(key)[(h % 1000) < fraction * 1000]
    held = np.isin(key, held_keys) & (samples.origin == ORIGIN_CLOSED_LOOP)
    if not held.any() or held.all():  # too few flows to hold whole ones out: hold out rows
        rng = np.random.default_rng(seed)
        held = (rng.random(len(samples)) < fraction) & (samples.origin == ORIGIN_CLOSED_LOOP)
    return samples.subset(np.flatnonzero(~held)), samples.subset(np.flatnonzero(held))


def _mix(seed: int, name: str, origin: int) -> int:
    return (seed * 1_000_003 + zlib.crc32(name.encode()) * 31 + origin) & 0x7FFFFFFF
