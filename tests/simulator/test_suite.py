"""`rlcc-sim suite`: the paper's evaluation for a set of controllers, and its bad input."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from rlcc.cli.simulate import simulate_command
from rlcc.errors import BadInputError
from rlcc.simulator.suite import ControllerSpec, firmware_latency_us, load_firmware, reduced_suite, run_suite
from rlcc.simulator.suite_report import normalize


@pytest.mark.slow
def test_reduced_suite_writes_tables_and_plots(tmp_path, repo):
    out = tmp_path / "suite"
    res = CliRunner().invoke(simulate_command, ["suite", "--suite", "reduced", "--backend", "serial",
                                                "--controller", "swift", "--controller", "hpcc",
                                                "--controller", f"fw={repo / 'examples' / 'firmware'}", "-o", str(out), "-q"])
    assert res.exit_code == 0, res.output
    md = (out / "suite.md").read_text()
    assert "Table IV" in md and "Table V" in md
    data = json.loads((out / "suite.json").read_text())
    assert data["controllers"] == ["swift", "hpcc", "fw"]
    points = reduced_suite(0)
    assert len(data["runs"]) == 3 * len(points)
    assert {r["topology"] for r in data["runs"]} == {"fat-tree", "single-switch"}
    assert len(list(out.glob("*.png"))) == len({(p.family, p.topology) for p in points})
    fw = [r for r in data["runs"] if r["controller"] == "fw"]
    # the firmware runs at the worst-case decision time rlcc-verify measured
    want = firmware_latency_us(repo / "examples" / "firmware" / "verify.json")
    assert want < 1.0 and all(r["metrics"]["decision_latency_us"] == pytest.approx(want) for r in fw)
    again = CliRunner().invoke(simulate_command, ["suite", "--suite", "reduced", "--controller", "swift", "-o", str(out)])
    assert again.exit_code == 2 and "--force" in again.output


@pytest.mark.slow
def test_suite_on_ray_equals_the_serial_run(repo):
    """Same suite, serially and on a local 2-CPU Ray: identical results (every job carries its seed)."""
    ctl = [ControllerSpec.parse("dcqcn"), ControllerSpec.parse(f"teacher={repo / 'examples' / 'rlcc_mlp.onnx'}")]
    a = run_suite(ctl, "reduced", (1,), progress=False)
    b = run_suite(ctl, "reduced", (1,), backend="ray", num_cpus=2, progress=False)
    assert json.dumps(normalize(a), sort_keys=True) == json.dumps(normalize(b), sort_keys=True)


@pytest.mark.parametrize("text,needle", [
    ("bbr", "unknown controller 'bbr'"),
    ("x=/no/such.onnx", "does not exist"),
    ("x=README.md", "neither an .onnx policy nor a firmware"),
    ("=swift", "expected NAME or NAME=PATH"),
])
def test_bad_controllers_are_one_line_errors(text, needle):
    with pytest.raises(BadInputError, match=needle):
        ControllerSpec.parse(text)


def test_bad_suite_input_exits_3(tmp_path):
    res = CliRunner().invoke(simulate_command, ["suite", "--controller", "bbr", "-o", str(tmp_path / "o")])
    assert res.exit_code == 3 and "unknown controller" in res.output
    assert not (tmp_path / "o").exists()
    res = CliRunner().invoke(simulate_command, ["suite", "--controller", "swift", "--seeds", "a", "-o", str(tmp_path / "o")])
    assert res.exit_code == 2


def test_firmware_without_a_verify_report_runs_at_the_default_latency(tmp_path, repo):
    fw = tmp_path / "fw"
    fw.mkdir()
    (fw / "firmware.rlcc.json").write_text((repo / "examples" / "firmware" / "firmware.rlcc.json").read_text())
    assert load_firmware(str(fw)).decision_latency_us == 1.0
    (fw / "verify.json").write_text("{}")
    with pytest.raises(BadInputError, match="budget.worst_case_ns"):
        load_firmware(str(fw))


def test_int8_firmware_runs_as_its_integer_network_at_its_measured_latency(repo):
    """An int8 firmware directory (``bench/bench_table1.py``'s) loads as an Int8NetController at
    its verify.json time; a spec's latency override replaces that time."""
    from rlcc.simulator.controllers.compiled import Int8NetController

    fw = repo / "bench" / "results" / "table1" / "mlp_int8"
    ctl = load_firmware(str(fw), "int8")
    assert isinstance(ctl, Int8NetController) and ctl.decision_latency_us == firmware_latency_us(fw / "verify.json") > 1.0
    spec = ControllerSpec("x", "firmware", str(fw), latency_us=17.0)
    assert spec.build().decision_latency_us == 17.0 and spec.build().name == "x"


@pytest.mark.parametrize("args,needle", [
    (["many-to-one", "--topology", "{topo}"], "invalid topology: host b has no link"),
    (["trace", "--cdf", "{cdf}", "--duration-ms", "1"], "line 3: cdf 40 is below the previous cdf 60"),
    (["all-to-all", "--leaves", "3"], "--leaves needs --topology"),
    (["osu", "--topology", "fat-tree", "--hosts", "65"], "65 hosts do not fit the topology's 64"),
])
def test_fabric_bad_input_is_one_line_and_exit_3(tmp_path, args, needle):
    topo = tmp_path / "t.json"
    topo.write_text(json.dumps({"hosts": ["a", "b"], "switches": ["s"],
                                "links": [{"a": "a", "b": "s", "rate_gbps": 100, "delay_ns": 1}]}))
    cdf = tmp_path / "bad.cdf"
    cdf.write_text("# size cdf%\n1000 60\n2000 40\n3000 100\n")
    res = CliRunner().invoke(simulate_command, [a.format(topo=topo, cdf=cdf) for a in args])
    assert res.exit_code == 3, res.output
    assert needle in res.output and len(res.output.strip().splitlines()) == 1
