"""The ADPG training loop: rollouts on every training scenario, one Adam step per iteration."""

from __future__ import annotations

import csv
import dataclasses
import math
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import numpy as np

from rlcc.train.adam import Adam
from rlcc.train.adpg import Policy, Rollout, adpg_direction, run_rollout
from rlcc.train.config import TrainConfig
from rlcc.train.lstm import Lstm
from rlcc.train.mlp import Mlp

if TYPE_CHECKING:
    from matplotlib.figure import Figure

LOG_COLUMNS = (
    "iteration",
    "mean_delta",
    "mean_abs_delta",
    "reward",
    "goodput",
    "rtt_inflation",
    "drop_fraction",
    "jain",
    "decisions",
    "grad_norm",
)


@dataclasses.dataclass
class TrainResult:
    policy: Mlp | Lstm
    log: list[dict[str, float]]
    wall_s: float


def summarize(iteration: int, rollouts: list[Rollout], grad_norm: float) -> dict[str, float]:
    """One log row: decision-weighted delta stats and scenario-averaged simulator metrics.

    ``mean_abs_delta`` is the mean over flows of |mean delta| over the flow's decisions in the
    scenario's converged window (the startup transient excluded), the quantity ADPG drives to 0;
    ``reward`` is the papers' -delta^2 averaged over all decisions.
    """
    delta = np.concatenate([r.delta for r in rollouts])
    flow_abs = np.concatenate([r.flow_abs_delta for r in rollouts])

    def avg(key: str) -> float:
        vals = [r.metrics.get(key, float("nan")) for r in rollouts]
        return float(np.nanmean(vals)) if np.any(np.isfinite(vals)) else float("nan")

    return {
        "iteration": iteration,
        "mean_delta": float(delta.mean()) if len(delta) else float("nan"),
        "mean_abs_delta": float(flow_abs.mean()) if len(flow_abs) else float("nan"),
        "reward": float(-np.mean(delta**2)) if len(delta) else float("nan"),
        "goodput": avg("goodput"),
        "rtt_inflation": avg("mean_rtt_inflation"),
        "drop_fraction": avg("drop_fraction"),
        "jain": avg("jain"),
        "decisions": float(len(delta)),
        "grad_norm": grad_norm,
    }


def collect(policy: Policy, cfg: TrainConfig, iteration: int) -> list[Rollout]:
    spec = cfg.observation_spec()
    return [
        run_rollout(policy, spec, sc, cfg.rollout, cfg.delta_clip, cfg.trace_capacity)
        for sc in cfg.scenario_objects(seed_offset=iteration)
    ]


def init_policy(cfg: TrainConfig, rng: np.random.Generator) -> Mlp | Lstm:
    """The untrained network of ``cfg.arch``, with a small output layer (factor ~1 at start)."""
    spec = cfg.observation_spec()
    if cfg.arch == "lstm":
        return Lstm.init(spec.n_features, cfg.lstm_hidden, rng, cfg.lstm_pre, cfg.init_out_scale)
    out_bias = 1.0 if spec.action.type == "factor" else 0.0  # a direct factor starts at 1
    return Mlp.init([spec.input_width, *cfg.hidden, 1], rng, cfg.init_out_scale, bias=cfg.bias,
                    hidden_activation=cfg.activation, output=cfg.output, out_bias=out_bias)


def train(cfg: TrainConfig, progress: Callable[[dict[str, float]], None] | None = None) -> TrainResult:
    """Run ``cfg.iterations`` ADPG steps; the log has one row per iteration plus a final evaluation row."""
    wall = time.perf_counter()
    policy = init_policy(cfg, np.random.default_rng(cfg.seed))
    opt = Adam(policy.params, cfg.lr)
    log: list[dict[str, float]] = []
    for it in range(cfg.iterations):
        rollouts = collect(policy, cfg, it)
        direction = adpg_direction(policy, rollouts)
        norm = float(np.sqrt(sum(float(np.sum(g * g)) for g in direction)))
        opt.step(policy.params, direction)
        log.append(summarize(it, rollouts, norm))
        if progress:
            progress(log[-1])
    log.append(summarize(cfg.iterations, collect(policy, cfg, cfg.iterations), float("nan")))
    if progress:
        progress(log[-1])
    return TrainResult(policy, log, time.perf_counter() - wall)


def write_log_csv(log: list[dict[str, float]], path: str | Path) -> None:
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=LOG_COLUMNS, lineterminator="\n")
        w.writeheader()
        for row in log:
            w.writerow({k: (int(row[k]) if k in ("iteration", "decisions") else f"{row[k]:.6g}") for k in LOG_COLUMNS})


def _fit_after_start(ax, it: list[float], ys: list[float]) -> None:
    """Fit a linear panel's y-range to iterations >= 1 and mark an off-scale iteration 0.

    The untrained policy's start (reward -350, RTT inflation 21 in the example's log, against
    -3..-5 and 1..2 afterwards) would otherwise flatten the whole curve onto one line.
    """
    rest = [y for i, y in zip(it, ys, strict=True) if i >= 1 and math.isfinite(y)]
    if len(rest) < 2 or not it or it[0] != 0 or not math.isfinite(ys[0]):
        return
    lo, hi = min(rest), max(rest)
    pad = 0.08 * (hi - lo) or 0.05 * abs(hi) or 0.05
    lo, hi = lo - pad, hi + pad
    y0 = ys[0]
    if lo <= y0 <= hi:
        return
    ax.set_ylim(lo, hi)
    above = y0 > hi
    edge = hi if above else lo
    ax.plot([0], [edge], marker="^" if above else "v", color="tab:red", ms=7, clip_on=False, zorder=5)
    ax.set_title(f"{ax.get_title()}\n(iteration 0: {y0:.3g}, off scale {'▲' if above else '▼'})", fontsize=10)


def log_figure(log: list[dict[str, float]]) -> Figure:
    """Training curves, 2 x 2 panels; iteration 0 shown off scale where it would flatten a panel."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    it = [r["iteration"] for r in log]
    fig, axes = plt.subplots(2, 2, figsize=(9, 6), layout="constrained")
    panels = [
        ("mean_abs_delta", "|mean delta| per flow"),
        ("reward", "reward (-delta^2)"),
        ("goodput", "goodput (converged half)"),
        ("rtt_inflation", "mean RTT inflation"),
    ]
    for ax, (key, title) in zip(axes.ravel(), panels, strict=True):
        ys = [r[key] for r in log]
        ax.plot(it, ys, marker=".", lw=1)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("iteration")
        ax.grid(alpha=0.3)
        if key != "mean_abs_delta":  # log scale: spans the outlier already
            _fit_after_start(ax, it, ys)
    axes[0, 0].set_yscale("log")
    fig.suptitle("rlcc-train: ADPG on the training scenarios")
    return fig


def plot_log(log: list[dict[str, float]], path: str | Path) -> Path:
    """Save ``log_figure`` as a PNG (Agg backend, no display needed); returns the file written."""
    import matplotlib.pyplot as plt

    from rlcc.simulator.plot import save_figure

    fig = log_figure(log)
    save_figure(fig, path, dpi=100)
    plt.close(fig)
    return Path(path)
