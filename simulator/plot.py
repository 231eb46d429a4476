"""Rates and queue over time as a PNG (matplotlib, Agg backend: no display needed).

The legend sits to the right of the axes, outside them, so it never hides a flow's curve. The
engine records the rates of at most ``SERIES_FLOWS`` evenly spaced flows; the legend and the title
say how many of all flows are drawn. ``save_figure`` writes any rlcc figure without timestamps or
version strings, so equal figures give byte-identical files.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rlcc.errors import BadInputError
from rlcc.simulator.engine import SimResult

if TYPE_CHECKING:
    from matplotlib.figure import Figure


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_path(path: str | Path) -> Path:
    """The file a plot to ``path`` is written to: ``.png`` appended when there is no suffix (as
    matplotlib does); a suffix matplotlib cannot write is bad input, found before the run."""
    path = Path(path)
    if not path.suffix:
        return path.with_name(path.name + ".png")
    fmt = path.suffix[1:].lower()
    supported = _pyplot().figure().canvas.get_supported_filetypes()
    _pyplot().close("all")
    if fmt not in supported:
        raise BadInputError(f"cannot write --plot {path}: unknown image format .{fmt} (use one of "
                            f"{', '.join('.' + f for f in sorted(supported))})")
    return path


def flows_shown(result: SimResult) -> str:
    """"8 of 64 flows shown" (or "all 4 flows shown"): how many flows' rates the plot draws."""
    shown, total = len(result.series["flow_ids"]), len(result.flows["sent_bytes"])
    return f"all {total} flows shown" if shown == total else f"{shown} of {total} flows shown (evenly spaced ids)"


def result_figure(result: SimResult) -> Figure:
    """Per-flow rates and offered load (log scale) above the egress queue, legend outside."""
    plt = _pyplot()
    s = result.series
    fig, (ax_r, ax_q) = plt.subplots(2, 1, sharex=True, figsize=(10, 6), layout="constrained")
    for j, fid in enumerate(s["flow_ids"]):
        ax_r.plot(s["t_us"], s["rates"][:, j], lw=0.8, label=f"flow {fid}")
    ax_r.plot(s["t_us"], s["load"], color="k", lw=1.0, label="offered load\n(all flows)")
    ax_r.set_yscale("log")
    ax_r.set_ylabel("rate (fraction of line rate)")
    shown = flows_shown(result)
    ax_r.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                title=shown.replace(" (", "\n("), title_fontsize=7)
    ax_q.plot(s["t_us"], s["queue_us"], color="tab:red", lw=0.8)
    ax_q.set_ylabel("queue (us at line rate)")
    ax_q.set_xlabel("time (us)")
    fig.suptitle(f"{result.scenario.kind}, {result.controller}: {shown}")
    return fig


# Keys that would put the time or matplotlib's version into a file, per format.
_NO_METADATA = {"png": {"Software": None}, "pdf": {"Creator": None, "Producer": None, "CreationDate": None},
                "svg": {"Creator": None, "Date": None}, "eps": {"Creator": None}, "ps": {"Creator": None}}


def save_figure(fig: Figure, path: str | Path, dpi: int = 110) -> Path:
    """Save ``fig`` without timestamps or version strings (byte-identical files for equal figures)."""
    import matplotlib

    path = Path(path)
    meta = _NO_METADATA.get(path.suffix[1:].lower())
    with matplotlib.rc_context({"svg.hashsalt": "rlcc"}):  # SVG element ids: fixed, not random
        fig.savefig(path, dpi=dpi, **({"metadata": meta} if meta else {}))
    return path


def plot_result(result: SimResult, path: str | Path) -> Path:
    """Save ``result_figure`` to ``path``; returns the file written."""
    out = plot_path(path)
    fig = result_figure(result)
    save_figure(fig, out)
    _pyplot().close(fig)
    return out
