"""rlcc-sim bad input: scenario values out of sane physical ranges, unbounded work, unwritable
outputs (checked before simulating) and a closed stdout; one line, exit 3 (141 for the pipe)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from click.testing import CliRunner

import rlcc.simulator
from rlcc.cli.simulate import simulate_command
from rlcc.errors import BadInputError
from rlcc.simulator import ManyToOne, Network, Scenario


def _invoke(*args) -> object:
    return CliRunner().invoke(simulate_command, [str(a) for a in args])


def _assert_bad_input(result, *fragments: str) -> None:
    assert result.exit_code == 3, result.output
    assert result.output.startswith("rlcc-sim: error: ") and result.output.count("\n") == 1, result.output
    for fragment in fragments:
        assert fragment in result.output, result.output


@pytest.fixture
def no_simulation(monkeypatch):
    def refuse(*_args, **_kwargs):
        raise AssertionError("the simulation ran")

    monkeypatch.setattr(rlcc.simulator, "simulate", refuse)


def test_network_that_is_not_an_object_names_the_allowed_keys(tmp_path):
    f = tmp_path / "s.json"
    f.write_text(json.dumps({"kind": "many-to-one", "network": "fast"}))
    _assert_bad_input(_invoke("run", f), "network must be an object", "line_rate_gbps", "dt_ns", "'fast'")
    _assert_bad_input(_invoke("run", f, "--dt-ns", "500"), "network must be an object")


SCENARIO_FILES = [
    ({"network": {"line_rate_gbps": 1e308}}, "network.line_rate_gbps must be in [0.001, 100000]"),
    ({"network": {"host_rate_gbps": 1e308}}, "network.host_rate_gbps must be in [0.001, 100000]"),
    ({"network": {"base_rtt_us": 1e308}}, "network.base_rtt_us must be in [0.1, 1e+06]"),
    ({"network": {"buffer_bytes": 10**400}}, "network.buffer_bytes must be in"),
    ({"network": {"buffer_bytes": 1000, "packet_bytes": 1500}}, "must hold at least one packet"),
    ({"network": {"packet_bytes": 10**9}}, "network.packet_bytes must be in [64, 65536]"),
    ({"network": {"ecn_kmin_bytes": 0, "ecn_kmax_bytes": 10**400}}, "network.ecn_kmax_bytes"),
    ({"decision_latency_us": 1e308}, "decision_latency_us must be in [0, 1e+06]"),
    ({"duration_ms": 1e308}, "time steps, more than the limit 1e+08"),
    ({"duration_ms": 10**400}, "duration_ms must be a positive finite number, got 10000"),
    ({"network": {"dt_ns": 0.001}}, "1e+10 time steps, more than the limit 1e+08"),
    ({"flows": 1 << 20, "duration_ms": 1000}, "flow-steps, more than the limit 1e+11"),
]


@pytest.mark.parametrize("fields, message", SCENARIO_FILES)
def test_scenario_values_beyond_sane_limits_are_refused_naming_the_limit(tmp_path, no_simulation, fields, message):
    f = tmp_path / "s.json"
    f.write_text(json.dumps({"kind": "many-to-one", **fields}))
    _assert_bad_input(_invoke("run", f), message)


def test_long_short_values_beyond_limits(no_simulation):
    with pytest.raises(BadInputError, match="burst_interval_us must be in"):
        Scenario.from_dict({"kind": "long-short", "burst_interval_us": 1e308})
    with pytest.raises(BadInputError, match="short_bytes must be in"):
        Scenario.from_dict({"kind": "long-short", "short_bytes": 10**400})


def test_engine_refuses_unbounded_work_too(monkeypatch):
    from rlcc.simulator import engine

    monkeypatch.setattr(engine._Run, "run", lambda *_a, **_k: pytest.fail("1e10 steps started"))
    with pytest.raises(BadInputError, match="more than the limit"):
        rlcc.simulator.simulate(ManyToOne(flows=2, network=Network(dt_ns=0.001)), rlcc.simulator.make_controller("swift"))


@pytest.mark.parametrize("args, message", [
    (["--line-rate-gbps", "1e308"], "network.line_rate_gbps must be in [0.001, 100000]"),
    (["--line-rate-gbps", "nan"], "--line-rate-gbps must be a finite number > 0"),
    (["--duration-ms", "inf"], "--duration-ms must be a finite number > 0"),
    (["--decision-latency-us", "-1"], "--decision-latency-us must be a finite number >= 0"),
    (["--dt-ns", "0.001"], "more than the limit 1e+08"),
    (["--buffer-bytes", "100"], "must hold at least one packet"),
    (["--trace", "t.npz", "--trace-capacity", str(10**12)], "capacity must be at most 1e+08"),
])
def test_command_line_values_beyond_limits(tmp_path, no_simulation, args, message):
    _assert_bad_input(_invoke("many-to-one", "--flows", "2", *[a.replace("t.npz", str(tmp_path / "t.npz")) for a in args]),
                      message)


def test_unwritable_trace_and_plot_are_refused_before_simulating(tmp_path, no_simulation):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    _assert_bad_input(_invoke("many-to-one", "--trace", blocker / "t.npz"), "cannot write --trace", "not a directory")
    _assert_bad_input(_invoke("many-to-one", "--trace", tmp_path / "missing" / "t"), "no such directory")
    (tmp_path / "d.png").mkdir()
    _assert_bad_input(_invoke("many-to-one", "--plot", tmp_path / "d.png"), "cannot write --plot", "is a directory")
    _assert_bad_input(_invoke("many-to-one", "--plot", blocker / "p.png"), "cannot write --plot")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.png", "file"]


def test_closed_stdout_ends_quietly_with_141(tmp_path):
    """``rlcc-sim ... | head -1`` used to end with 'internal error: BrokenPipeError' (exit 1)."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before rlcc-sim writes its first line
    try:
        proc = subprocess.run(["rlcc-sim", "many-to-one", "--flows", "2", "--duration-ms", "0.1"],
                              stdout=write_end, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)
    assert proc.returncode == 141, proc.stderr
    assert proc.stderr == ""
