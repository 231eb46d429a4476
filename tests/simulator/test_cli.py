"""rlcc-sim command line: metrics table, JSON, plot, trace, and one-line errors with exit 3."""

from __future__ import annotations

import json

from click.testing import CliRunner

from rlcc.cli.simulate import simulate_command
from rlcc.simulator import Trace


def _invoke(*args: str):
    return CliRunner().invoke(simulate_command, list(args))


def test_many_to_one_prints_metrics_and_writes_plot_and_trace(tmp_path):
    png, npz = tmp_path / "run.png", tmp_path / "t.npz"
    r = _invoke("many-to-one", "--flows", "16", "--controller", "policy", "--policy", "examples/synthetic_mlp.onnx",
                "--duration-ms", "1", "--initial-rate", "0.0625", "--plot", str(png), "--trace", str(npz))
    assert r.exit_code == 0, r.output
    assert "goodput" in r.output and "queue_delay_p99_us" in r.output
    assert png.stat().st_size > 1000
    assert Trace.load(npz).obs.shape[1] == 4


def test_json_output_and_other_scenarios(tmp_path):
    r = _invoke("all-to-all", "--hosts", "4", "--duration-ms", "0.5", "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["metrics"]["goodput"] > 0
    r = _invoke("long-short", "--short-flows", "4", "--duration-ms", "1", "--controller", "dcqcn", "--json")
    assert json.loads(r.output)["metrics"]["short_completed"] >= 0
    f = tmp_path / "s.json"
    f.write_text(json.dumps({"kind": "many-to-one", "flows": 4, "duration_ms": 0.5}))
    assert _invoke("run", str(f), "--quiet").exit_code == 0


def test_bad_input_is_one_line_and_exit_3(tmp_path):
    for args in (
        ["many-to-one", "--flows", "-4"],
        ["many-to-one", "--line-rate-gbps", "0"],
        ["many-to-one", "--controller", "cubic"],
        ["many-to-one", "--controller", "policy"],
        ["many-to-one", "--controller", "policy", "--policy", str(tmp_path / "missing.onnx")],
    ):
        r = _invoke(*args)
        assert r.exit_code == 3, (args, r.output)
        assert r.output.startswith("rlcc-sim: error: ") and r.output.count("\n") == 1, r.output
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert _invoke("run", str(bad)).exit_code == 3
