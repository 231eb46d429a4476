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


def _metrics(*args: str) -> dict:
    r = _invoke(*args, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


def test_default_many_to_one_with_the_shipped_policy_is_steady_state():
    """Defaults start flows at their fair share (1/N): no drops, a queue near the policy's target,
    not the line-rate startup transient (2.5 ms queue, 88 % drops in 10 ms)."""
    out = _metrics("many-to-one", "--controller", "policy", "--policy", "examples/rlcc_mlp.onnx")
    m = out["metrics"]
    assert out["scenario"]["initial_rate"] == 1 / 16
    assert m["drop_fraction"] == 0 and m["drops_per_flow"] == 0
    assert m["goodput"] > 0.99 and m["jain"] > 0.99
    assert m["queue_delay_p99_us"] < 20 and m["mean_rtt_inflation"] < 2.5


def test_initial_rate_controller_is_the_startup_transient():
    out = _metrics("many-to-one", "--controller", "policy", "--policy", "examples/rlcc_mlp.onnx",
                   "--initial-rate", "controller", "--duration-ms", "4")
    assert out["scenario"]["initial_rate"] is None
    assert out["metrics"]["drop_fraction"] > 0.1
    r = _invoke("many-to-one", "--initial-rate", "controller", "--duration-ms", "1")
    assert "start=controller's rate" in r.output
    assert "start=fair share 0.0625" in _invoke("many-to-one", "--duration-ms", "1").output


def test_initial_rate_values():
    assert _metrics("all-to-all", "--hosts", "4", "--duration-ms", "0.5")["scenario"]["initial_rate"] == 1 / 3
    assert _metrics("long-short", "--duration-ms", "0.5")["scenario"]["initial_rate"] is None
    assert _metrics("many-to-one", "--initial-rate", "0.5", "--duration-ms", "0.5")["scenario"]["initial_rate"] == 0.5
    for bad, code in (("2", 3), ("0", 3), ("nan", 3), ("fast", 2)):
        r = _invoke("many-to-one", "--initial-rate", bad)
        assert r.exit_code == code, (bad, r.output)
        assert r.output.startswith("rlcc-sim: error: --initial-rate") and r.output.count("\n") == 1


def test_run_keeps_the_files_initial_rate(tmp_path):
    f = tmp_path / "s.json"
    f.write_text(json.dumps({"kind": "many-to-one", "flows": 4, "duration_ms": 0.5}))
    assert _metrics("run", str(f))["scenario"]["initial_rate"] is None
    assert _metrics("run", str(f), "--initial-rate", "fair")["scenario"]["initial_rate"] == 0.25
