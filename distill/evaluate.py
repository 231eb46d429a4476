"""Measurements of a compiled model against its teacher: fidelity, closed loop, probe, sizes.

Every number here is deterministic for a fixed seed (no wall-clock values), so the report
written from them is byte-identical across runs.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from rlcc import formats as fmt
from rlcc.distill.sampling import NACK, PREV, RATE, RTT, CNP, RAW_FIELDS, Samples, float_inputs
from rlcc.distill.tree_ir import FloatEnsemble
from rlcc.fxp import golden
from rlcc.fxp.controller import FloatTreesController, GoldenController
from rlcc.fxp.model import FxModel
from rlcc.fxp.quantize import device_inputs_to_float
from rlcc.simulator.controllers import FactorController
from rlcc.simulator.engine import simulate
from rlcc.simulator.scenarios import ManyToOne
from rlcc.spec import ObservationSpec

FactorFn = Callable[[np.ndarray], np.ndarray]
PAPER_OPS = 150
STATES = ("under-utilized", "on-target", "congested")


def float_factor(ensemble: FloatEnsemble, spec: ObservationSpec, x: np.ndarray) -> np.ndarray:
    return np.clip(ensemble.predict(x), spec.action.clamp_min, spec.action.clamp_max)


def fixed_factor(model: FxModel, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(clamped Q16.16 factor int64, leaf indices) of the golden model on integer inputs."""
    total, leaves = golden.eval_trees(model, q)
    c = model.constants
    return np.clip(total, c.clamp_min_q16, c.clamp_max_q16), leaves


def fidelity(model: FxModel, ensemble: FloatEnsemble, samples: Samples) -> dict[str, Any]:
    """Float trees vs teacher, fixed point vs float trees (LSB), decision-path changes."""
    spec = model.spec
    teacher = samples.label
    f_obs = float_factor(ensemble, spec, samples.obs)
    q = samples.device_inputs(spec)
    fx, fx_leaves = fixed_factor(model, q)
    x_dev = device_inputs_to_float(spec, q)
    f_dev = float_factor(ensemble, spec, x_dev)
    lsb = float(fmt.FACTOR_ONE)
    err = f_obs - teacher
    return {
        "samples": int(len(samples)),
        "float_vs_teacher_rmse": _r(np.sqrt(np.mean(err**2))),
        "float_vs_teacher_max_abs": _r(np.max(np.abs(err))),
        "fixed_vs_teacher_rmse": _r(np.sqrt(np.mean((fx / lsb - teacher) ** 2))),
        "fixed_vs_teacher_max_abs": _r(np.max(np.abs(fx / lsb - teacher))),
        # Threshold/leaf quantization alone: the same device integers through both models.
        "fixed_vs_float_max_lsb": _r(np.max(np.abs(fx - f_dev * lsb))),
        "path_changed_fraction": _r(np.mean(np.any(fx_leaves != ensemble.leaf_indices(x_dev), axis=1))),
        # End to end: device integer features vs the spec's float features of the same state.
        "fixed_vs_float_end_to_end_max_lsb": _r(np.max(np.abs(fx - f_obs * lsb))),
        "fixed_vs_float_end_to_end_mean_lsb": _r(np.mean(np.abs(fx - f_obs * lsb))),
        "path_changed_fraction_end_to_end": _r(
            np.mean(np.any(fx_leaves != ensemble.leaf_indices(samples.obs), axis=1))
        ),
    }


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
    teacher_rows: dict[str, Any] | None = None,
    controllers: Sequence[str] = ("float_trees", "fixed_point"),
) -> dict[str, Any]:
    """Teacher vs float trees vs fixed point on many-to-one incasts (the paper's Table III),
    measured over the simulator's converged window (the second half of the run).
    ``teacher_rows`` reuses earlier teacher runs of the same scenarios."""
    spec = model.spec
    base_us = spec.reward.base_rtt_ns / 1e3
    rows = {}
    for n in flows:
        scenario = eval_scenario(n, duration_ms, seed, mode)
        name = f"many-to-one:{n}"
        row = {}
        make = {
            "teacher": lambda: FactorController(teacher, spec, name="teacher"),
            "float_trees": lambda: FloatTreesController(ensemble, spec),
            "fixed_point": lambda: GoldenController(model),
        }
        for key in ("teacher", *controllers):
            if key == "teacher" and teacher_rows and name in teacher_rows:
                row[key] = dict(teacher_rows[name])
                continue
            m = simulate(scenario, make[key]()).metrics
            row[key] = {
                "goodput": _r(m["goodput"]),
                "mean_latency_us": _r(m["mean_rtt_inflation"] * base_us),
                "queue_delay_mean_us": _r(m["queue_delay_mean_us"]),
                "drop_fraction": _r(m["drop_fraction"]),
            }
        t = row["teacher"]
        for key in controllers:
            row[key]["goodput_diff"] = _r(row[key]["goodput"] - t["goodput"])
            row[key]["latency_rel_diff"] = _r(row[key]["mean_latency_us"] / t["mean_latency_us"] - 1.0)
            row[key]["queue_diff_us"] = _r(row[key]["queue_delay_mean_us"] - t["queue_delay_mean_us"])
        rows[name] = row
    return {"mode": mode, "duration_ms": duration_ms, "window_from": scenario.converged_from if flows else 0.5,
            "scenarios": rows}


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


def explainability(teacher: FactorFn, ensemble: FloatEnsemble, model: FxModel) -> list[dict[str, Any]]:
    from rlcc.distill.sampling import device_inputs

    spec = model.spec
    pairs, raw = probe_windows(spec)
    obs = float_inputs(spec, raw)
    t = np.asarray(teacher(obs), dtype=np.float64)
    f = float_factor(ensemble, spec, obs)
    fx, _ = fixed_factor(model, device_inputs(spec, raw))
    return [
        {"previous": p, "current": c, "teacher": _r(t[i]), "float_trees": _r(f[i]), "fixed_point": _r(fx[i] / fmt.FACTOR_ONE)}
        for i, (p, c) in enumerate(pairs)
    ]


def sizes(model: FxModel) -> dict[str, Any]:
    """Per-flow state and constant-table bytes (packed tables: int32 thresholds and leaves,
    one byte per split input index and op) and the paper's operation count."""
    n_splits = sum(t.depth for t in model.trees)
    n_leaves = sum(len(t.leaves) for t in model.trees)
    state_words = fmt.CTX_HISTORY + model.history_words
    return {
        "state_bytes": state_words * 4,
        "context_bytes": fmt.CTX_BYTES,
        "state_fits_context": state_words * 4 <= fmt.CTX_BYTES,
        "model_constant_bytes": n_splits * (4 + 1 + 1) + n_leaves * 4 + 4 + 7 * 4,
        "trees": len(model.trees),
        "depths": sorted({t.depth for t in model.trees}),
        "splits": n_splits,
        "leaves": n_leaves,
        "operations": model.n_operations,
        "paper_operations": PAPER_OPS,
    }


def _r(v: float) -> float:
    """Round for a stable, readable report (9 significant digits)."""
    v = float(v)
    return float(f"{v:.9g}") if np.isfinite(v) else v
