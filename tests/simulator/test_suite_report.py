"""The suite report: Table IV / V against hand-computed seed means and criteria, files written
deterministically, legends off the data, bad results refused."""

from __future__ import annotations

import copy
import json
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pytest
from rlcc.errors import BadInputError
from rlcc.simulator.suite_report import (
    Case,
    SuccessCriteria,
    Summary,
    failures,
    load_results,
    report_figures,
    write_report,
)


def steady(goodput, drops, p99, jain=1.0):
    return {"goodput": goodput, "drops_per_flow": drops, "queue_delay_p99_us": p99, "queue_delay_mean_us": p99 / 2,
            "mean_rtt_inflation": 1.5, "jain": jain, "drop_fraction": 0.0}


def long_short(bw, completed, drops):
    return {"long_flow_bw": bw, "short_completed": completed, "drops_per_flow": drops,
            "short_fct_slowdown_mean": 2.0, "short_fct_slowdown_p99": 4.0, "recovery_us": 50.0}


# (family, topology, scale, value) -> controller -> (seed 0 metrics, seed 1 metrics)
DATA = {
    ("many-to-one", "fat-tree", "32 flows", 32): {
        "a": (steady(0.95, 0.0, 20), steady(0.97, 0.2, 30)),      # mean goodput 0.96, drops 0.1, p99 25
        "b": (steady(0.99, 0.1, 10), steady(0.99, 0.1, 10)),      # drops 0.1: ties with a
        "c": (steady(0.80, 0.3, 5), steady(0.90, 0.5, 5)),        # goodput 0.85 < 0.9
    },
    ("many-to-one", "fat-tree", "128 flows", 128): {
        "a": (steady(0.92, 0.4, 50), steady(0.94, 0.6, 70)),      # drops 0.5, p99 60
        "b": (steady(0.98, 2.0, 90), steady(0.96, 3.0, 130)),     # drops 2.5 > 1, p99 110 > 100
        "c": (steady(0.95, 0.2, 40, jain=math.nan), steady(0.95, 0.4, 40)),  # drops 0.3: best
    },
    ("long-short", "single-switch", "50 short", 50): {
        "a": (long_short(0.9, 1.0, 0.0), long_short(0.9, 1.0, 0.0)),
        "b": (long_short(0.85, 1.0, 0.0), long_short(0.85, 1.0, 0.0)),
        "c": (long_short(0.7, 1.0, 0.0), long_short(0.8, 1.0, 0.0)),   # bw 0.75 < 0.8
    },
    ("long-short", "single-switch", "100 short", 100): {
        "a": (long_short(0.9, 1.0, 0.0), long_short(0.9, 1.0, 0.0)),
        "b": (long_short(0.85, 1.0, 1.0), long_short(0.85, 0.5, 2.0)),  # completed 0.75, drops 1.5
        "c": (long_short(0.9, 1.0, 0.0), long_short(0.9, 1.0, 0.0)),
    },
}


def make_results() -> dict:
    runs = []
    for (family, topology, scale, value), per in DATA.items():
        for controller, seeds in per.items():
            for seed, metrics in enumerate(seeds):
                runs.append({"family": family, "topology": topology, "scale": scale, "scale_value": value,
                             "seed": seed, "controller": controller, "metrics": dict(metrics)})
    return {"controllers": ["a", "b", "c"], "runs": runs, "settings": {"duration_ms": 1}}


def md_table(md: str, heading: str) -> dict[str, list[str]]:
    """The first Markdown table after ``heading``: header row under key "", rows by first cell."""
    lines = md.split(heading, 1)[1].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split(" | ")])
    return {"": rows[0][1:], **{r[0]: r[1:] for r in rows[2:]}}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    paths = write_report(make_results(), out)
    return out, paths, (out / "suite.md").read_text(encoding="utf-8")


def test_table_iv_seed_means_and_bold_best(report):
    _, _, md = report
    t = md_table(md, "## Table IV")
    assert t[""] == ["many-to-one: 32 flows", "many-to-one: 128 flows", "long-short: 50 short", "long-short: 100 short"]
    assert t["a"] == ["**0.1**", "0.5", "**0.0**", "**0.0**"]
    assert t["b"] == ["**0.1**", "2.5", "**0.0**", "1.5"]
    assert t["c"] == ["0.4", "**0.3**", "**0.0**", "**0.0**"]


def test_table_v_success_and_failure_footnotes(report):
    _, _, md = report
    t = md_table(md, "## Table V")
    assert t[""] == ["many-to-one", "long-short"]
    assert t["a"] == ["✓", "✓"]
    assert t["b"] == ["✗<sup>1</sup>", "✗<sup>2</sup>"]
    assert t["c"] == ["✗<sup>3</sup>", "✗<sup>4</sup>"]
    assert "1. b, many-to-one: 128 flows: drops per flow 2.5 > 1, p99 queue delay 110 us > 100 us.\n" in md
    assert "2. b, long-short: 100 short: short flows completed 0.75 < 1, drops per flow 1.5 > 1.\n" in md
    assert "3. c, many-to-one: 32 flows: goodput 0.85 < 0.9.\n" in md
    assert "4. c, long-short: 50 short: long-flow bandwidth 0.75 < 0.8.\n" in md
    assert "p99 queue delay <= 100 us, at every scale" in md  # the criterion in words


def test_family_tables_hold_the_seed_means(report):
    _, _, md = report
    lines = [line for line in md.splitlines() if line.startswith("| 128 flows | ")]
    assert lines == ["| 128 flows | a | 0.930 | 1.50 | 30.0 | 60.0 | 0.5 | 1.000 |",
                     "| 128 flows | b | 0.970 | 1.50 | 55.0 | 110.0 | 2.5 | 1.000 |",
                     "| 128 flows | c | 0.950 | 1.50 | 20.0 | 40.0 | 0.3 | nan |"]  # NaN in one seed: NaN
    assert "| 100 short | b | 0.850 | 2.00 | 4.00 | 0.750 | 50.0 | 1.5 |" in md
    assert "mean over seeds 0, 1" in md


def test_criteria_are_tunable_and_echoed(tmp_path):
    results = make_results()
    results["criteria"] = {"queue_delay_p99_us_max": 120, "long_flow_bw_min": 0.7}
    write_report(results, tmp_path)
    md = (tmp_path / "suite.md").read_text(encoding="utf-8")
    assert "1. b, many-to-one: 128 flows: drops per flow 2.5 > 1.\n" in md
    assert md_table(md, "## Table V")["c"] == ["✗<sup>3</sup>", "✓"]
    assert "p99 queue delay <= 120 us" in md and "long-flow bandwidth >= 0.7" in md
    saved = json.loads((tmp_path / "suite.json").read_text())
    assert saved["criteria"] == {**SuccessCriteria().__dict__, "queue_delay_p99_us_max": 120.0, "long_flow_bw_min": 0.7}


def test_files_written_and_json_deterministic(report, tmp_path):
    out, paths, md = report
    names = [p.name for p in paths]
    assert names == ["suite.md", "suite.json", "suite_many-to-one_fat-tree.png", "suite_long-short_single-switch.png"]
    for p in paths:
        assert p.is_file() and p.stat().st_size > 0
    assert (out / "suite_many-to-one_fat-tree.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "![many-to-one](suite_many-to-one_fat-tree.png)" in md
    write_report(make_results(), tmp_path / "again")
    assert (tmp_path / "again" / "suite.json").read_bytes() == (out / "suite.json").read_bytes()
    # suite.json reads back (NaN was written as null) to the same report
    write_report(load_results(out / "suite.json"), tmp_path / "reloaded")
    assert (tmp_path / "reloaded" / "suite.json").read_bytes() == (out / "suite.json").read_bytes()
    assert (tmp_path / "reloaded" / "suite.md").read_text(encoding="utf-8") == md
    text = (out / "suite.json").read_text()
    assert "NaN" not in text
    assert text == json.dumps(json.loads(text), sort_keys=True, indent=2) + "\n"


def test_osu_and_fct_criteria_relative_to_the_best():
    runs = []
    for controller, t, drops in [("e", None, 0.0), ("a", 100.0, 0.0), ("b", 150.0, 0.0), ("c", 151.0, 0.0),
                                 ("d", 90.0, 2.0)]:
        runs.append({"family": "osu", "topology": "fat-tree", "scale": "4096 B", "scale_value": 4096, "seed": 0,
                     "controller": controller, "metrics": {"iteration_us": t, "drops_per_flow": drops}})
    for controller, p99 in [("a", 2.0), ("b", 20.0), ("c", 20.5), ("d", None)]:
        buckets = [{"label": "<=1KB", "lo": 0.0, "hi": 1e3, "count": 0, "unfinished": 0, "median": None, "p99": None},
                   {"label": "1KB-10KB", "lo": 1e3, "hi": 1e4, "count": 5, "unfinished": 0, "median": 1.0, "p99": p99},
                   {"label": ">10KB", "lo": 1e4, "hi": None, "count": 5, "unfinished": 1, "median": 1.0, "p99": 1.0}]
        runs.append({"family": "fct", "topology": "fat-tree", "scale": "load 0.5", "scale_value": 0.5, "seed": 0,
                     "controller": controller, "metrics": {"buckets": buckets, "load": 0.5}})
    s = Summary({"controllers": ["e", "a", "b", "c", "d"], "runs": runs})
    osu, fct = Case("osu", "fat-tree"), Case("fct", "fat-tree")
    # best OSU time is d's 90 us (e's NaN is no best): a 1.11x, b 1.67x, c 1.68x; d drops too much
    assert failures(s, osu, "a") == []
    assert failures(s, osu, "e") == ["4096 B: iteration time / best missing"]
    assert failures(s, osu, "b") == ["4096 B: iteration time / best 1.67x > 1.5x"]
    assert failures(s, osu, "d") == ["4096 B: drops per flow 2 > 1"]
    # the smallest bucket has no finished flows: the next one decides; best p99 = 2.0
    assert failures(s, fct, "a") == [] and failures(s, fct, "b") == []
    assert failures(s, fct, "c") == ["load 0.5: p99 slowdown of bucket 1KB-10KB / best 10.2x > 10x"]
    assert failures(s, fct, "d") == ["load 0.5: p99 slowdown of bucket 1KB-10KB / best missing"]
    assert s.get(fct, "load 0.5", "a", "buckets")[-1]["hi"] == math.inf
    assert failures(s, fct, "e") is None  # e ran no fct


def legend_problems(fig) -> list[str]:
    """Legends overlapping any axes or sticking out of the figure (rendered extents)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)
    problems = []
    for leg in legends:
        box = leg.get_window_extent(renderer)
        problems += [f"legend over {ax.get_ylabel()!r}" for ax in fig.axes if box.overlaps(ax.get_window_extent(renderer))]
        f = fig.bbox
        if not (f.x0 <= box.x0 and box.x1 <= f.x1 and f.y0 <= box.y0 and box.y1 <= f.y1):
            problems.append("legend outside the figure")
    return problems


def test_legends_do_not_cover_data():
    figures = report_figures(make_results())
    assert len(figures) == 2
    for name, fig in figures.items():
        assert fig.legends, name
        assert legend_problems(fig) == [], name
        plt.close(fig)


def broken(edit) -> dict:
    results = copy.deepcopy(make_results())
    edit(results)
    return results


@pytest.mark.parametrize("edit, message", [
    (lambda r: r.pop("runs"), "lack runs"),
    (lambda r: r["runs"][0].pop("seed"), r"runs\[0\] lacks seed"),
    (lambda r: r["runs"][3].update(family="incast"), r"runs\[3\]: unknown family 'incast'"),
    (lambda r: r["runs"][0].update(topology="torus"), "unknown topology 'torus'"),
    (lambda r: r["runs"][0].update(controller="zz"), "controller 'zz' is not in controllers"),
    (lambda r: r["runs"][0]["metrics"].pop("goodput"), r"runs\[0\] \(many-to-one\) lacks metrics goodput"),
    (lambda r: r["runs"][0]["metrics"].update(goodput="high"), "metrics.goodput must be a number"),
    (lambda r: r["runs"].append(copy.deepcopy(r["runs"][0])), "repeats"),
    (lambda r: r["runs"][1].update(scale_value=33), "has two scale_values"),
    (lambda r: r.update(criteria={"goodput": 0.5}), "unknown criteria goodput"),
    (lambda r: r.update(extra=1), "unknown keys extra"),
    (lambda r: r.update(controllers=["a", "a"]), "unique names"),
])
def test_bad_results_are_bad_input(tmp_path, edit, message):
    with pytest.raises(BadInputError, match=message):
        write_report(broken(edit), tmp_path)
    assert not (tmp_path / "suite.json").exists()


def one_point_results(seeds=(0,)) -> dict:
    """All-to-all at one scale, two controllers tied on goodput (the reduced suite's shape)."""
    runs = [{"family": "all-to-all", "topology": "fat-tree", "scale": "240 flows", "scale_value": 240, "seed": seed,
             "controller": c, "metrics": {**steady(1.0, 0.0, p99), "mean_rtt_us": rtt, "mean_rtt_inflation": rtt / 8}}
            for seed in seeds for c, p99, rtt in (("a", 4.0, 8.4), ("b", 0.0, 6.6))]
    return {"controllers": ["a", "b"], "runs": runs}


def test_figure_titles_say_the_real_number_of_seeds():
    assert [f.get_suptitle() for f in report_figures(make_results()).values()] == [
        "many-to-one on fat-tree (mean over 2 seeds)", "long-short on single-switch (mean over 2 seeds)"]
    (fig,) = report_figures(one_point_results()).values()
    assert fig.get_suptitle() == "all-to-all on fat-tree (seed 0)"
    uneven = one_point_results((0, 1, 2))
    uneven["runs"] = uneven["runs"][:-1]  # b ran seeds 0 and 1 only
    (fig,) = report_figures(uneven).values()
    assert fig.get_suptitle() == "all-to-all on fat-tree (mean over 2-3 seeds)"
    plt.close("all")


def test_steady_panels_start_at_zero_and_ties_stay_visible():
    fig = report_figures(make_results())["suite_many-to-one_fat-tree.png"]
    for ax in fig.axes:
        assert ax.get_ylim()[0] == 0, ax.get_ylabel()
        lines = ax.get_lines()
        assert len({line.get_marker() for line in lines}) == len(lines) == 3  # a shape per controller
        assert all(line.get_markerfacecolor() == "none" for line in lines)  # hollow: one cannot hide another
        xs = [tuple(line.get_xdata()) for line in lines]
        assert len({x[0] for x in xs}) == 3  # nudged apart at the same scale
    plt.close(fig)


def test_a_single_scale_is_drawn_as_labelled_bars():
    (fig,) = report_figures(one_point_results()).values()
    for ax in fig.axes:
        assert ax.get_ylim()[0] == 0
        assert len(ax.patches) == 2 and not ax.get_lines()  # one bar per controller, no lone dots
        labels = [t.get_text() for t in ax.texts]
        assert len(labels) == 2 and all(labels), ax.get_ylabel()
    goodput = fig.axes[0]
    assert [t.get_text() for t in goodput.texts] == ["1", "1"]  # the tie is two bars, both labelled
    assert [t.get_text() for t in fig.axes[2].texts] == ["4", "0"]  # 0 is a bar with a label, not missing
    assert legend_problems(fig) == []
    plt.close(fig)


def test_rtt_inflation_header_names_its_base(tmp_path):
    write_report(one_point_results(), tmp_path)
    md = (tmp_path / "suite.md").read_text(encoding="utf-8")
    t = md_table(md, "## all-to-all")
    assert t[""][3] == "RTT / nominal base RTT (8 us)"
    assert "| 240 flows | b | 1.000 | 6.6 | 0.82 |" in md  # below 1: a path within one leaf is shorter than the nominal 8 us
    assert "not each path's own: a path within one leaf has a shorter base RTT, so values below 1 occur" in md


def _two_modes() -> dict:
    """The lossy results, plus lossless runs where b's many-to-one at 128 flows loses nothing."""
    results = make_results()
    lossless = []
    for r in copy.deepcopy(results["runs"]):
        r["loss_mode"] = "lossless"
        r["metrics"]["pfc_paused_frac"] = 0.25 if r["controller"] == "a" else 0.5
        if r["controller"] == "b" and r["scale"] == "128 flows":
            r["metrics"].update(drops_per_flow=0.0, queue_delay_p99_us=50.0)
        lossless.append(r)
    results["runs"] += lossless
    results["settings"]["controllers"] = {"a": "policy (rl.onnx)", "b": "dcqcn", "c": "swift"}
    return results


def test_table_v_per_loss_mode_beside_the_paper(tmp_path):
    write_report(_two_modes(), tmp_path)
    md = (tmp_path / "suite.md").read_text(encoding="utf-8")
    lossy = md_table(md, "## Table V: success per task (lossy buffer)")
    # a is RL-CC (paper: ✓ both), b DCQCN (paper: many-to-one ✓, long-short ✗), c Swift (✗, ✓).
    assert lossy["a"] == ["✓", "✓"]
    assert lossy["b"] == ["✗ (paper ✓)<sup>1</sup>", "✗<sup>2</sup>"]
    assert lossy["c"] == ["✗<sup>3</sup>", "✗ (paper ✓)<sup>4</sup>"]
    assert "1. b, many-to-one: the paper reports a success; here 128 flows: drops per flow 2.5 > 1" in md
    lossless_md = md.split("## Table V: success per task (lossless, PFC)", 1)[1]
    lossless = md_table(lossless_md, "✓: the controller met")
    assert lossless["b"] == ["✓", "✗<sup>1</sup>"]  # PFC: no drops at 128 flows, as the paper's DCQCN
    pfc = md_table(lossless_md, "paused by PFC")
    assert pfc["a"] == ["0.250"] * 4 and pfc["b"] == ["0.500"] * 4
    assert md_table(md, "The paper's Table V")["Swift"] == ["✗", "✓", "✗", "✓"]
    # Table IV and the family tables are the lossy runs'.
    assert "| 128 flows | b | 0.970 | 1.50 | 55.0 | 110.0 | 2.5 | 1.000 |" in md
    saved = load_results(tmp_path / "suite.json")
    assert sum(r.get("loss_mode") == "lossless" for r in saved["runs"]) == len(saved["runs"]) // 2


def test_lossy_only_results_have_no_loss_mode_and_one_table_v(report):
    _, _, md = report
    assert "## Table V: success per task\n" in md and "lossless" not in md
    assert "The paper's Table V" in md


def test_bad_loss_mode_is_refused():
    results = make_results()
    results["runs"][0]["loss_mode"] = "pfc"
    with pytest.raises(BadInputError, match=r"runs\[0\]: unknown loss_mode 'pfc'"):
        Summary(results)
