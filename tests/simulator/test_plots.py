"""Figures the CLIs write: legends outside the data, the training plot not flattened by
iteration 0, and every PNG's path printed."""

from __future__ import annotations

import csv
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest
from click.testing import CliRunner
from matplotlib.figure import Figure
from rlcc.cli.simulate import simulate_command
from rlcc.simulator import ManyToOne, simulate
from rlcc.simulator.controllers import ConstantRate
from rlcc.simulator.plot import result_figure
from rlcc.train.trainer import log_figure


def legend_problems(fig: Figure) -> list[str]:
    """Legends that overlap any axes' data area or stick out of the figure (rendered extents)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)
    frame = fig.bbox
    problems = []
    for leg in legends:
        box = leg.get_window_extent(renderer)
        for ax in fig.axes:
            if box.overlaps(ax.get_window_extent(renderer)):
                problems.append(f"legend overlaps axes {ax.get_title() or ax.get_ylabel()!r}")
        if not (frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1):
            problems.append("legend outside the figure")
    return problems


@pytest.fixture(scope="module")
def sim_result():
    return simulate(ManyToOne(flows=16, duration_ms=0.2), ConstantRate(1 / 16))


def test_the_check_catches_a_legend_inside_the_axes(sim_result):
    fig = result_figure(sim_result)
    fig.axes[0].legend(loc="lower right")  # the old placement, over the flows' curves
    assert legend_problems(fig)
    plt.close(fig)


def test_simulator_legend_does_not_cover_data(sim_result):
    fig = result_figure(sim_result)
    assert fig.axes[0].get_legend() is not None
    assert legend_problems(fig) == []
    plt.close(fig)


def test_training_plot_is_not_flattened_by_iteration_0():
    with open("examples/training/train_log.csv") as fh:
        log = [{k: float(v) for k, v in row.items()} for row in csv.DictReader(fh)]
    fig = log_figure(log)
    assert legend_problems(fig) == []
    panels = {ax.get_title().splitlines()[0]: ax for ax in fig.axes}
    for title, key in (("reward (-delta^2)", "reward"), ("mean RTT inflation", "rtt_inflation")):
        ax = panels[title]
        lo, hi = ax.get_ylim()
        rest = [r[key] for r in log[1:]]
        assert lo <= min(rest) and max(rest) <= hi
        assert not lo <= log[0][key] <= hi
        assert (hi - lo) < 0.1 * (max(rest + [log[0][key]]) - min(rest + [log[0][key]]))
        assert "iteration 0" in ax.get_title()
    assert "iteration 0" not in panels["goodput (converged half)"].get_title()  # 1.0 is on scale
    plt.close(fig)


def test_rlcc_sim_prints_where_each_file_went(tmp_path):
    args = ["many-to-one", "--flows", "4", "--duration-ms", "0.2", "--json",
            "--plot", str(tmp_path / "run"), "--trace", str(tmp_path / "t")]
    r = CliRunner().invoke(simulate_command, args)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["metrics"]["goodput"] > 0  # stdout stays JSON
    assert r.stderr.splitlines() == [f"wrote trace: {tmp_path / 't.npz'}", f"wrote plot: {tmp_path / 'run.png'}"]
    assert (tmp_path / "run.png").read_bytes()[:4] == b"\x89PNG"


def test_rlcc_sim_refuses_an_unknown_image_format_before_the_run(tmp_path):
    r = CliRunner().invoke(simulate_command, ["many-to-one", "--plot", str(tmp_path / "run.v1")])
    assert r.exit_code == 3
    assert r.output.startswith("rlcc-sim: error: cannot write --plot") and "unknown image format .v1" in r.output


def test_the_plot_says_how_many_flows_it_draws(sim_result):
    fig = result_figure(sim_result)
    assert "8 of 16 flows shown" in fig.get_suptitle()
    legend = fig.axes[0].get_legend()
    assert legend.get_title().get_text().startswith("8 of 16 flows shown")
    assert sum(t.get_text().startswith("flow ") for t in legend.get_texts()) == 8
    plt.close(fig)
    few = simulate(ManyToOne(flows=4, duration_ms=0.1), ConstantRate(0.25))
    fig = result_figure(few)
    assert "all 4 flows shown" in fig.get_suptitle()
    plt.close(fig)


@pytest.mark.parametrize("suffix", ["png", "pdf", "svg"])
def test_plots_are_byte_identical(sim_result, tmp_path, suffix):
    from rlcc.simulator.plot import plot_result

    a, b = plot_result(sim_result, tmp_path / f"a.{suffix}"), plot_result(sim_result, tmp_path / f"b.{suffix}")
    assert a.read_bytes() == b.read_bytes()
    stamps = {"png": [b"Software"], "pdf": [b"CreationDate", b"Matplotlib"], "svg": [b"<dc:date>", b"Matplotlib v"]}
    assert not [s for s in stamps[suffix] if s in a.read_bytes()]  # no time, no version string
