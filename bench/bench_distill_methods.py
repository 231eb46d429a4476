"""Benchmark: distillation methods side by side, judged in closed loop (float trees vs teacher).

Each method fits a 10-tree depth-4 student (the paper's budget) on the same training set per
seed (closed-loop teacher samples + perturbed + tail anchors, as ``rlcc-compile`` builds it
before its on-policy rounds), and the float trees then drive the report's incasts (many-to-one
64/512/2048, steady state 10 ms and startup transient 150 ms). Float trees, not firmware: this
ranks methods before any of them is carried through quantization and code generation (the
fixed point follows the float trees closely: see the compile reports).

Methods: oblivious trees on the window inputs (CatBoost SymmetricTree, what rlcc ships), the
same with rlcc's joint time-weighted leaf refit, non-oblivious Depthwise trees, and two
device-computable derived inputs appended to the window: the change of delta
(delta[t] - delta[t-1]) and its log-ratio slog(delta[t]) - slog(delta[t-1]) with
slog(d) = sign(d) log2(1 + |d|), which turns the teacher's ratio boundary over
(delta[t], delta[t-1]) into an axis-aligned one.

    python bench/bench_distill_methods.py [--seeds 0,1,2,3,4] [--policies rlcc_mlp,synthetic_mlp] [--jobs 2]

Writes bench/results/distill_methods.json (after every seed).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np

from benchlib import POLICIES, machine, seeds_and_policies, shown
from rlcc.distill import evaluate, sampling
from rlcc.distill.factor_range import teacher_factor_range
from rlcc.distill.fit import FitConfig, fit_student
from rlcc.parallel import Runner, run_all
from rlcc.distill.pipeline import CompileOptions
from rlcc.distill.sampling import Samples
from rlcc.policy import OnnxPolicy
from rlcc.simulator.controllers import FactorController
from rlcc.simulator.controllers.compiled import FloatTreesController

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "distill_methods.json"
CHECKS = [(n, mode, ms) for mode, ms in (("steady", 10.0), ("startup", 150.0)) for n in (64, 512, 2048)]


def slog(v: np.ndarray) -> np.ndarray:
    return np.sign(v) * np.log2(1.0 + np.abs(v))


class Derived:
    """A student on the window inputs plus derived columns (picklable for worker processes)."""

    def __init__(self, model, kind: str, delta_cols: tuple[int, int], scale: float) -> None:
        self.model, self.kind, self.cols, self.scale = model, kind, delta_cols, scale

    def columns(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float64)
        cur, prev = x[:, self.cols[0]] / self.scale, x[:, self.cols[1]] / self.scale
        if self.kind == "raw":
            return x
        extra = cur - prev if self.kind == "diff" else slog(cur) - slog(prev)
        return np.c_[x, extra]

    def predict(self, x: np.ndarray) -> np.ndarray:
        return self.model.predict(self.columns(x))


def catboost_student(x: np.ndarray, y: np.ndarray, grow: str, seed: int):
    import catboost

    m = catboost.CatBoostRegressor(iterations=10, depth=4, learning_rate=0.5, grow_policy=grow, random_seed=seed,
                                   thread_count=1, bootstrap_type="No", random_strength=0.0, verbose=False,
                                   allow_writing_files=False)
    m.fit(x, y)
    return m


def training_set(policy: OnnxPolicy, seed: int, runner: Runner) -> Samples:
    o = CompileOptions(seed=seed)
    spec, teacher = policy.spec, policy.factor
    scenarios = sampling.parse_scenarios(o.scenarios, seed, o.duration_scale)
    visited = sampling.closed_loop(functools.partial(FactorController, teacher, spec, "teacher"), teacher, spec,
                                   scenarios, o.samples, seed, runner=runner)
    train, _ = sampling.split_holdout(visited, o.holdout_fraction, seed)
    return Samples.concat([train, sampling.perturb(train, teacher, spec, round(len(train) * o.perturb_fraction), seed + 1),
                           sampling.anchors(spec, teacher, round(len(train) * o.anchor_fraction), seed + 2)])


def methods(policy: OnnxPolicy, train: Samples, seed: int):
    spec = policy.spec
    names = spec.input_names()
    cols = (names.index("delta[t]"), names.index("delta[t-1]"))
    scale = next(f.scale for f in spec.features if f.name == "delta")
    x, y = train.obs.astype(np.float64), train.label
    out = {}
    for key, kind, grow in (("oblivious", "raw", "SymmetricTree"), ("depthwise", "raw", "Depthwise"),
                            ("oblivious + delta change", "diff", "SymmetricTree"),
                            ("oblivious + delta log-ratio", "logratio", "SymmetricTree"),
                            ("depthwise + delta log-ratio", "logratio", "Depthwise")):
        probe = Derived(None, kind, cols, scale)
        out[key] = Derived(catboost_student(probe.columns(x), y, grow, seed), kind, cols, scale)
    refit = fit_student(train.obs, y, FitConfig(seed=seed), leaf_weights=sampling.time_weights(spec, train.raw))
    out["oblivious + time-weighted leaf refit (rlcc)"] = refit.ensemble
    return out


def judge(rows: dict) -> dict:
    """Worst signed difference per mode and measure over the flow counts."""
    res = {}
    for mode in ("steady", "startup"):
        for m, key in (("rtt", "mean_rtt_inflation"), ("queue", "queue_delay_mean_us")):
            vals = [100.0 * (s[key] / t[key] - 1.0) for (n, md), (t, s) in rows.items() if md == mode and t[key]]
            res[f"{mode}_{m}"] = round(max(vals, key=abs), 2)
        for m, key in (("goodput", "goodput"), ("drops", "drop_fraction")):
            vals = [s[key] - t[key] for (n, md), (t, s) in rows.items() if md == mode]
            res[f"{mode}_{m}"] = round(max(vals, key=abs), 4)
    return res


def main() -> None:
    args = seeds_and_policies(__doc__)
    runner = Runner(args.jobs)
    results = {"machine": machine(), "checks": [f"{m} many-to-one:{n} ({ms:g} ms)" for n, m, ms in CHECKS], "policies": {}}
    for pname in args.policies:
        policy = OnnxPolicy(POLICIES[pname])
        entry = results["policies"].setdefault(pname, {"policy": shown(POLICIES[pname]), "seeds": {}})
        for seed in args.seeds:
            train = training_set(policy, seed, runner)
            lo, hi = teacher_factor_range(policy, train.obs).min, teacher_factor_range(policy, train.obs).max
            students = methods(policy, train, seed)
            scen = {(n, mode): evaluate.eval_scenario(n, ms, seed, mode) for n, mode, ms in CHECKS}
            factories = [("teacher", functools.partial(FactorController, policy.factor, policy.spec, "teacher"))]
            factories += [(k, functools.partial(FloatTreesController, s, policy.spec, clamp=(lo, hi)))
                          for k, s in students.items()]
            tasks = [(sc, f) for _, f in factories for sc in scen.values()]
            metrics = run_all(runner, evaluate._measure, tasks)
            by = {k: dict(zip(scen, metrics[i * len(scen):(i + 1) * len(scen)])) for i, (k, _) in enumerate(factories)}
            entry["seeds"][str(seed)] = {k: judge({c: (by["teacher"][c], by[k][c]) for c in scen})
                                         for k in students}
            for k, r in entry["seeds"][str(seed)].items():
                print(f"{pname} seed {seed} {k:45s} steady rtt {r['steady_rtt']:+6.1f}% q {r['steady_queue']:+6.1f}% | "
                      f"startup rtt {r['startup_rtt']:+6.1f}% q {r['startup_queue']:+6.1f}% drops {r['startup_drops']:+.3f}",
                      flush=True)
            RESULTS.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
