"""Rates and queue over time as a PNG (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from pathlib import Path

from rlcc.simulator.engine import SimResult


def plot_result(result: SimResult, path: str | Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = result.series
    fig, (ax_r, ax_q) = plt.subplots(2, 1, sharex=True, figsize=(9, 6))
    for j, fid in enumerate(s["flow_ids"]):
        ax_r.plot(s["t_us"], s["rates"][:, j], lw=0.8, label=f"flow {fid}")
    ax_r.plot(s["t_us"], s["load"], color="k", lw=1.0, label="offered load")
    ax_r.set_yscale("log")
    ax_r.set_ylabel("rate (fraction of line rate)")
    ax_r.legend(fontsize=7, ncol=3, loc="lower right")
    ax_q.plot(s["t_us"], s["queue_us"], color="tab:red", lw=0.8)
    ax_q.set_ylabel("queue (us at line rate)")
    ax_q.set_xlabel("time (us)")
    fig.suptitle(f"{result.scenario.kind}, {result.controller}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
