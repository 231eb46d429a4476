"""``closed_loop.png``: teacher vs firmware over time on one scenario of the closed-loop check.

The report's tables give converged-window means; a firmware engineer also wants to see that the
compiled controller moves like its teacher (no extra oscillation, same queue). The scenario is
the steady-state table's middle size (flows from their fair share, the equilibrium the gate's
tightest bar judges), run exactly as in that table, so the figure and the table agree. The PNG
is byte-deterministic: seeded runs, no timestamp or software tag in its metadata.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rlcc.distill import evaluate
from rlcc.progress import Stage
from rlcc.simulator.controllers.compiled import GoldenController
from rlcc.simulator.controllers.recurrent import teacher_controller
from rlcc.simulator.engine import simulate

FILE_NAME = "closed_loop.png"
COLORS = {"teacher": "tab:blue", "firmware": "tab:orange"}


def scenario_of(eval_flows: tuple[int, ...], steady_duration_ms: float, seed: int):
    """The representative scenario: the steady-state table's middle size."""
    n = eval_flows[len(eval_flows) // 2]
    return evaluate.eval_scenario(n, steady_duration_ms, seed, evaluate.STEADY)


def write(path: Path, teacher: Any, model: Any, options: Any, stage: Stage | None = None) -> str:
    """Run teacher and firmware (``model`` through the golden model) on the scenario, save the
    figure to ``path``; returns its caption (for report.md). ``stage`` advances per run (cost-weighted ms)."""
    sc = scenario_of(tuple(options.eval_flows), options.steady_duration_ms, options.seed)
    stage = stage or Stage()
    controllers = {"teacher": ("teacher", lambda: teacher_controller(teacher, model.spec, "teacher")),
                   "firmware": ("fixed_point", lambda: GoldenController(model))}
    costs = {who: evaluate.run_cost(sc.duration_ms, evaluate.STEADY, key) for who, (key, _) in controllers.items()}
    stage.add(sum(costs.values()))
    runs = {}
    for who, (_, make) in controllers.items():
        runs[who] = simulate(sc, make())
        stage.advance(costs[who])
    name = f"steady many-to-one:{sc.flows}"
    title = f"{name}, {sc.duration_ms:g} ms from the fair share, seed {sc.seed}"
    _save(path, runs, title, sc.network.line_rate_gbps)
    return (f"teacher vs firmware (the fixed point through the golden model) in closed loop on {title}, "
            "the run behind the steady-state table's row")


def _save(path: Path, runs: dict[str, Any], title: str, line_rate_gbps: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_q, ax_r) = plt.subplots(2, 1, sharex=True, figsize=(8, 5), layout="constrained")
    for who, r in runs.items():
        s = r.series
        t_ms = s["t_us"] / 1e3
        ax_q.plot(t_ms, s["queue_us"], lw=0.9, color=COLORS[who], label=who)
        ax_r.plot(t_ms, s["rates"][:, 0] * line_rate_gbps, lw=0.9, color=COLORS[who], label=who)
    ax_q.set_ylabel("switch queue (us at line rate)")
    ax_r.set_ylabel(f"rate of flow {int(runs['teacher'].series['flow_ids'][0])} (Gb/s)")
    ax_r.set_xlabel("time (ms)")
    for ax in (ax_q, ax_r):
        ax.set_ylim(bottom=0)
        ax.set_xlim(left=0)
        ax.grid(alpha=0.3)
    fig.suptitle(title, fontsize=10)
    fig.legend(*ax_q.get_legend_handles_labels(), loc="outside lower center", ncols=2, fontsize=9)  # off the data
    fig.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(fig)
