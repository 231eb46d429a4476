"""Measurements of a compiled model against its teacher: fidelity, closed loop, probe, sizes.

Every number here is deterministic for a fixed seed (no wall-clock values), so the report
written from them is byte-identical across runs.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Callable, Sequence

import numpy as np

from rlcc import formats as fmt
from rlcc.parallel import Runner, run_all
from rlcc.distill import settle
from rlcc.distill.closed_loop import ClosedLoop, ControllerRow
from rlcc.distill.report_data import Fidelity, Probe, Sizes
from rlcc.distill.sampling import NACK, PREV, RATE, RTT, CNP, RAW_FIELDS, Samples, float_inputs
from rlcc.tree_ir import FloatEnsemble
from rlcc.fxp import golden
from rlcc.simulator.controllers.compiled import FloatTreesController, GoldenController
from rlcc.fxp.model import FxModel
from rlcc.fxp.quantize import device_inputs_to_float
from rlcc.progress import Stage
from rlcc.simulator.controllers.recurrent import teacher_controller
from rlcc.simulator.engine import simulate
from rlcc.simulator.nic import NicConfig
from rlcc.simulator.scenarios import ManyToOne
from rlcc.spec import ObservationSpec

FactorFn = Callable[[np.ndarray], np.ndarray]
PAPER_OPS = 150
STATES = ("under-utilized", "on-target", "congested")


def float_factor(ensemble: FloatEnsemble, spec: ObservationSpec, x: np.ndarray,
                 clamp: tuple[float, float] | None = None) -> np.ndarray:
    """The float trees' factors on window inputs ``x`` (the spec's derived inputs appended here,
    unless ``x`` already has them), clamped to ``clamp`` (default: the spec's clamp)."""
    lo, hi = clamp or (spec.action.clamp_min, spec.action.clamp_max)
    x = spec.student_obs(x) if np.shape(x)[1] == spec.input_width else x
    return np.clip(ensemble.predict(x), lo, hi)


def factor_clamp(model: FxModel) -> tuple[float, float]:
    """The float counterpart of ``model``'s factor clamp: the teacher's achievable range it was
    quantized with (provenance ``factor_range``, already within the spec clamp), else the spec's."""
    fr = model.provenance.get("factor_range")
    a = model.spec.action
    return (float(fr["min"]), float(fr["max"])) if fr else (a.clamp_min, a.clamp_max)


def fixed_factor(model: FxModel, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(clamped Q16.16 factor int64, leaf indices) of the golden model on integer inputs."""
    total, leaves = golden.eval_trees(model, q)
    c = model.constants
    return np.clip(total, c.clamp_min_q16, c.clamp_max_q16), leaves


def fidelity(model: FxModel, ensemble: FloatEnsemble, samples: Samples) -> Fidelity:
    """Float trees vs teacher, fixed point vs float trees (LSB), decision-path changes."""
    spec, clamp = model.spec, factor_clamp(model)
    teacher = samples.label
    f_obs = float_factor(ensemble, spec, samples.obs, clamp)
    q = samples.device_inputs(spec)
    fx, fx_leaves = fixed_factor(model, q)
    x_dev = device_inputs_to_float(spec, q)
    f_dev = float_factor(ensemble, spec, x_dev, clamp)
    lsb = float(fmt.FACTOR_ONE)
    err = f_obs - teacher
    return Fidelity(
        samples=int(len(samples)),
        float_vs_teacher_rmse=_r(np.sqrt(np.mean(err**2))),
        float_vs_teacher_max_abs=_r(np.max(np.abs(err))),
        fixed_vs_teacher_rmse=_r(np.sqrt(np.mean((fx / lsb - teacher) ** 2))),
        fixed_vs_teacher_max_abs=_r(np.max(np.abs(fx / lsb - teacher))),
        fixed_vs_float_max_lsb=_r(np.max(np.abs(fx - f_dev * lsb))),
        path_changed_fraction=_r(np.mean(np.any(fx_leaves != ensemble.leaf_indices(x_dev), axis=1))),
        fixed_vs_float_end_to_end_max_lsb=_r(np.max(np.abs(fx - f_obs * lsb))),
        fixed_vs_float_end_to_end_mean_lsb=_r(np.mean(np.abs(fx - f_obs * lsb))),
        path_changed_fraction_end_to_end=_r(np.mean(np.any(fx_leaves != ensemble.leaf_indices(spec.student_obs(samples.obs)),
                                                            axis=1))),
    )


STARTUP, STEADY = "startup", "steady"


def eval_scenario(n: int, duration_ms: float, seed: int, mode: str = STARTUP) -> ManyToOne:
    """The many-to-one incast of the closed-loop check. ``startup``: every flow starts at line
    rate into the default 32 MB buffer (the paper's setting: mostly the transient of draining
    it). ``steady``: flows start at their fair share 1/N, so the converged window (second half)
    measures the equilibrium the controller settles at."""
    return ManyToOne(flows=n, duration_ms=duration_ms, seed=seed, initial_rate=1.0 / n if mode == STEADY else None)


def closed_loop(
    teacher: FactorFn,
    ensemble: FloatEnsemble,
    model: FxModel,
    flows: Sequence[int],
    duration_ms: float,
    seed: int,
    mode: str = STARTUP,
    teacher_rows: dict[str, ControllerRow] | None = None,
    controllers: Sequence[str] = ("float_trees", "fixed_point"),
    runner: Runner | None = None,
    stage: Stage | None = None,
) -> ClosedLoop:
    """Teacher vs float trees vs fixed point on many-to-one incasts (the paper's Table III),
    measured over the simulator's converged window (the second half of the run).
    ``teacher_rows`` reuses earlier teacher runs of the same scenarios."""
    check = {"flows": flows, "duration_ms": duration_ms, "seed": seed, "mode": mode, "teacher_rows": teacher_rows,
             "controllers": controllers}
    return closed_loops(teacher, ensemble, model, [check], runner, stage)[0]


def closed_loops(
    teacher: FactorFn,
    ensemble: FloatEnsemble,
    model: FxModel,
    checks: Sequence[dict[str, Any]],
    runner: Runner | None = None,
    stage: Stage | None = None,
) -> list[ClosedLoop]:
    """Several ``closed_loop`` checks (each a dict of its keyword arguments, optionally with its
    own ``ensemble`` and ``model``, and ``teacher_of``: the index of an earlier check of the same
    scenarios whose teacher runs it reuses) with all their simulations in one ``runner.map``, so
    worker processes stay busy across checks and ``stage`` learns the whole work at once.
    ``teacher`` must be picklable for a multi-process runner (e.g. ``OnnxPolicy.factor``)."""
    spec = model.spec
    tasks, costs, slots = [], [], []
    for c, check in enumerate(checks):
        e, m = check.get("ensemble", ensemble), check.get("model", model)
        factories = {
            "teacher": functools.partial(teacher_controller, teacher, spec, "teacher"),
            "float_trees": functools.partial(FloatTreesController, e, spec, clamp=factor_clamp(m)),
            "fixed_point": functools.partial(GoldenController, m),
        }
        for n in check["flows"]:
            scenario = eval_scenario(n, check["duration_ms"], check["seed"], check.get("mode", STARTUP))
            reused = check.get("teacher_rows") or {}
            for key in ("teacher", *check.get("controllers", ("float_trees", "fixed_point"))):
                if key == "teacher" and (f"many-to-one:{n}" in reused or "teacher_of" in check):
                    continue
                tasks.append((scenario, factories[key]))
                costs.append(run_cost(scenario.duration_ms, check.get("mode", STARTUP), key))
                slots.append((c, n, key))
    measured = dict(zip(slots, run_all(runner, _measure, tasks, costs=costs, stage=stage)))
    base_us = spec.reward.base_rtt_ns / 1e3
    out = []
    for c, check in enumerate(checks):
        controllers = tuple(check.get("controllers", ("float_trees", "fixed_point")))
        mode = check.get("mode", STARTUP)
        rows = {}
        for n in check["flows"]:
            name = f"many-to-one:{n}"
            m = measured.get((check.get("teacher_of", c), n, "teacher"))
            t = _row(m, base_us) if m else check["teacher_rows"][name]
            row = {"teacher": t}
            for key in controllers:
                s = _row(measured[(c, n, key)], base_us)
                row[key] = dataclasses.replace(
                    s, goodput_diff=_r(s.goodput - t.goodput),
                    latency_rel_diff=_r(s.mean_latency_us / t.mean_latency_us - 1.0),
                    queue_diff_us=_r(s.queue_delay_mean_us - t.queue_delay_mean_us))
            rows[name] = row
        window_from = eval_scenario(1, check["duration_ms"], check["seed"], mode).converged_from if check["flows"] else 0.5
        out.append(ClosedLoop(mode, check["duration_ms"], window_from, rows))
    return out


SUITE_KEYS = ("teacher", "float_trees", "fixed_point")


def _golden_at(model: FxModel, latency_us: float) -> GoldenController:
    """The fixed-point model as a controller that decides in ``latency_us`` (the device's time)."""
    ctl = GoldenController(model)
    ctl.decision_latency_us = latency_us
    return ctl


def suite_check(teacher: FactorFn, ensemble: FloatEnsemble | None, model: FxModel, latency_us: float, seed: int,
                runner: Runner | None = None, stage: Stage | None = None, keys: Sequence[str] = SUITE_KEYS,
                nic: NicConfig | None = None) -> ClosedLoop:
    """Teacher vs float trees vs fixed point on the simulator's reduced suite (many-to-one on the
    single switch and on the 64-host fat-tree, all-to-all on the fat-tree; steady state: fair-share
    start, second half measured). The fixed point decides in ``latency_us``, the worst-case event
    time ``rlcc-verify`` measured; teacher and float trees in the simulator's default. ``keys``: the
    controllers run (a recurrent teacher, an object with ``recurrent = True``, keeps per-flow state;
    an int8 network has no float trees). ``nic``: the fixed point decides on each sending host's
    decision processor instead (``simulator.nic``: its RTT events queue for the NIC's threads)."""
    from rlcc.simulator.suite import reduced_suite

    spec = model.spec
    factories = {
        "teacher": functools.partial(teacher_controller, teacher, spec, "teacher"),
        "float_trees": functools.partial(FloatTreesController, ensemble, spec, clamp=factor_clamp(model)),
        "fixed_point": functools.partial(_golden_at, model, latency_us),
    }
    points = reduced_suite(seed)
    tasks, costs, slots = [], [], []
    for pt in points:
        sc = dataclasses.replace(pt.scenario, initial_rate=pt.scenario.fair_rate())
        name = f"{pt.topology} {pt.family}:{int(pt.scale_value)}"
        for key in keys:
            tasks.append((dataclasses.replace(sc, nic=nic) if nic is not None and key == "fixed_point" else sc,
                          factories[key]))
            costs.append(sc.duration_ms * sc.n_flows * _RELATIVE_COST[key])
            slots.append((name, key))
    measured = dict(zip(slots, run_all(runner, _measure, tasks, costs=costs, stage=stage)))
    base_us = spec.reward.base_rtt_ns / 1e3
    rows: dict[str, dict[str, ControllerRow]] = {}
    for (name, key), m in measured.items():
        rows.setdefault(name, {})[key] = _row(m, base_us)
    for row in rows.values():
        t = row["teacher"]
        for key in keys[1:]:
            s = row[key]
            row[key] = dataclasses.replace(s, goodput_diff=_r(s.goodput - t.goodput),
                                           latency_rel_diff=_r(s.mean_latency_us / t.mean_latency_us - 1.0),
                                           queue_diff_us=_r(s.queue_delay_mean_us - t.queue_delay_mean_us))
    durations = {pt.scenario.duration_ms for pt in points}
    return ClosedLoop(STEADY, max(durations), points[0].scenario.converged_from, rows)


def _row(m: dict[str, float], base_us: float) -> ControllerRow:
    return ControllerRow(goodput=_r(m["goodput"]), mean_latency_us=_r(m["mean_rtt_inflation"] * base_us),
                         queue_delay_mean_us=_r(m["queue_delay_mean_us"]), drop_fraction=_r(m["drop_fraction"]),
                         rate_swing=_r(m["rate_swing"]))


# Relative simulation cost per simulated ms (measured: the golden model's integer event is the
# slowest controller; a fair-share start decides about 6x as often per ms as a line-rate start,
# whose deep queue stretches every RTT). Orders the work over worker processes and weights the
# progress bars, so a bar's percentage follows the wall time.
_RELATIVE_COST = {"teacher": 1.0, "float_trees": 1.0, "fixed_point": 2.5}
_MODE_COST = {STARTUP: 1.0, STEADY: 6.0}


def run_cost(duration_ms: float, mode: str, controller: str) -> float:
    """Estimated work of one closed-loop run, in line-rate-start teacher milliseconds."""
    return duration_ms * _MODE_COST[mode] * _RELATIVE_COST[controller]


def _measure(task: tuple) -> dict[str, float]:
    """One closed-loop run: the converged-window metrics the checks report."""
    scenario, factory = task
    result = simulate(scenario, factory())
    m = result.metrics
    return {**{k: m[k] for k in ("goodput", "mean_rtt_inflation", "queue_delay_mean_us", "drop_fraction")},
            "rate_swing": settle.rate_swing(result)}


def probe_windows(spec: ObservationSpec) -> tuple[list[tuple[str, str]], np.ndarray]:
    """Raw windows for (previous, current) in {under-utilized, on target, congested}^2.

    under-utilized: RTT at base, rate 0.25 (delta = target); on target: inflation chosen so
    delta = 0 at rate 0.25; congested: inflation 5 at rate 0.5. Previous factor 1.0, no CNP/NACK.
    """
    r = spec.reward
    on_target = r.beta + r.target / np.sqrt(0.25)
    state = {
        "under-utilized": (r.base_rtt_ns * 1.0, 0.25),
        "on-target": (r.base_rtt_ns * on_target, 0.25),
        "congested": (r.base_rtt_ns * 5.0, 0.5),
    }
    pairs, raws = [], []
    for prev in STATES:
        for cur in STATES:
            w = np.zeros((spec.history, len(RAW_FIELDS)))
            w[:, PREV] = 1.0
            w[:, RTT], w[:, RATE] = state[prev]
            w[0, RTT], w[0, RATE] = state[cur]
            w[:, RTT] = np.rint(w[:, RTT])
            w[:, CNP] = w[:, NACK] = 0
            pairs.append((prev, cur))
            raws.append(w)
    return pairs, np.array(raws)


def explainability(teacher: FactorFn, ensemble: FloatEnsemble, model: FxModel) -> list[Probe]:
    from rlcc.distill.sampling import device_inputs

    spec = model.spec
    pairs, raw = probe_windows(spec)
    obs = float_inputs(spec, raw)
    t = np.asarray(teacher(obs), dtype=np.float64)
    f = float_factor(ensemble, spec, obs, factor_clamp(model))
    fx, _ = fixed_factor(model, device_inputs(spec, raw))
    return [Probe(p, c, _r(t[i]), _r(f[i]), _r(fx[i] / fmt.FACTOR_ONE)) for i, (p, c) in enumerate(pairs)]


def sizes(model: FxModel) -> Sizes:
    """Per-flow state and constant-table bytes (packed tables: int32 thresholds and leaves,
    one byte per split input index and op) and the paper's operation count."""
    n_splits = sum(t.depth for t in model.trees)
    n_leaves = sum(len(t.leaves) for t in model.trees)
    state_words = model.context_words
    return Sizes(
        state_bytes=state_words * 4,
        context_bytes=fmt.CTX_BYTES,
        state_fits_context=state_words * 4 <= fmt.CTX_BYTES,
        model_constant_bytes=n_splits * (4 + 1 + 1) + n_leaves * 4 + 4 + 7 * 4,
        trees=len(model.trees),
        depths=sorted({t.depth for t in model.trees}),
        splits=n_splits,
        leaves=n_leaves,
        operations=model.n_operations,
        paper_operations=PAPER_OPS,
    )


def _r(v: float) -> float:
    """Round for a stable, readable report (9 significant digits)."""
    v = float(v)
    return float(f"{v:.9g}") if np.isfinite(v) else v
