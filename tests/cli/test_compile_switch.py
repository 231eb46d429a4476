"""rlcc-compile of a switch agent: verified firmware, byte-identical reruns, bad input exit 3."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from switch_teacher import default_spec, rule_qnet  # noqa: E402

FILES = ("firmware.c", "firmware.h", "firmware.rlcc.json", "report.md", "report.json", "verify.json", "model.rlcc.json")


def compile_(model: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(["rlcc-compile", str(model), "-o", str(out), "--quick", *extra], capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def teacher(tmp_path_factory) -> Path:
    return rule_qnet(tmp_path_factory.mktemp("teacher") / "acc.onnx")


@pytest.mark.slow
def test_compile_verifies_and_is_byte_identical(teacher, tmp_path):
    a, b = compile_(teacher, tmp_path / "a"), compile_(teacher, tmp_path / "b")
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    assert "bit-exact" in a.stdout and "48 port" in a.stdout
    for f in FILES:
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes(), f
    v = json.loads((tmp_path / "a" / "verify.json").read_text())
    assert v["kind"] == "switch_agent" and v["bit_exact"] and v["interval"]["ports"] == 48
    # --quick: a preview (exit 0 above, one warning); the report opens with the firmware's numbers.
    gate = json.loads((tmp_path / "a" / "report.json").read_text())["gate"]
    assert gate["verdict"] == "preview" and gate["headline"].startswith("preview (--quick)")
    assert a.stderr.count("--quick is a preview") == 1
    md = (tmp_path / "a" / "report.md").read_text()
    top = md[:md.index("## Closed loop")]
    assert f"| fidelity gate (closed loop vs teacher) | {gate['headline']} |" in top
    assert (f"| worst-case monitoring interval, 48 ports | {v['interval']['cycles']['max']} cycles = "
            f"{v['interval']['us']['max']:.2f} us") in top
    assert f"| code / read-only data / data | {v['size']['code']} / {v['size']['rodata']} / {v['size']['data']} B |" in top
    # The shipped firmware is what rlcc-verify accepts on its own, on both targets.
    for target in ("rv64imac", "rv32imc"):
        r = subprocess.run(["rlcc-verify", str(tmp_path / "a" / "firmware.c"), "--target", target, "-q"],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stdout + r.stderr
    # Anchored to the policy: recompiled from the Q-network (an empty compile cache), byte-identical.
    r = subprocess.run(["rlcc-verify", str(tmp_path / "a" / "firmware.c"), "--policy", str(teacher), "--random", "0"],
                       capture_output=True, text=True, timeout=600,
                       env={**os.environ, "RLCC_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0 and "anchored to the policy" in r.stdout and "recompiled in" in r.stdout, r.stdout + r.stderr


@pytest.mark.slow
def test_budget_exit_5(teacher, tmp_path):
    r = compile_(teacher, tmp_path / "o", "--budget-ns", "1000")  # 48 ports in 1 us: impossible
    assert r.returncode == 5 and "budget" in r.stderr


@pytest.mark.slow
@pytest.mark.parametrize("make, needle", [
    (lambda p: rule_qnet(p, out_width=7), "output width 7 does not match the action table's 8"),
    (lambda p: rule_qnet(p, default_spec(interval_us=0.5)), "'interval_us'"),
])
def test_bad_models_exit_3_and_write_nothing(make, needle, tmp_path):
    try:
        model = make(tmp_path / "bad.onnx")
    except Exception as exc:  # the spec itself refuses to exist: same message through the CLI below
        assert needle in str(exc)
        return
    r = compile_(model, tmp_path / "out")
    assert r.returncode == 3 and needle in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_duplicate_templates_in_metadata_exit_3(teacher, tmp_path):
    import onnx

    from rlcc.switch_spec import METADATA_KEY

    model = onnx.load(str(teacher))
    prop = next(p for p in model.metadata_props if p.key == METADATA_KEY)
    data = json.loads(prop.value)
    data["actions"][1] = dict(data["actions"][0])
    prop.value = json.dumps(data)
    bad = tmp_path / "dup.onnx"
    onnx.save(model, str(bad))
    r = compile_(bad, tmp_path / "out")
    assert r.returncode == 3 and "duplicates actions[0]" in r.stderr and "Traceback" not in r.stderr


def sim(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["rlcc-sim", "trace", "--controller", "dcqcn", "--hosts", "8", "--duration-ms", "2", *args],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_rlcc_sim_runs_teacher_firmware_and_static(teacher, tmp_path):
    out = tmp_path / "fw"
    assert compile_(teacher, out, "--no-verify").returncode == 0
    runs = {name: sim("--ecn-agent", str(path), "--json") for name, path in
            (("teacher", teacher), ("firmware", out), ("manifest", out / "firmware.rlcc.json"))}
    runs["static"] = sim("--ecn-agent", str(teacher), "--ecn-static", "7", "--json")
    metrics = {}
    for name, r in runs.items():
        assert r.returncode == 0, r.stderr
        metrics[name] = {k: v for k, v in json.loads(r.stdout)["metrics"].items() if k not in ("wall_s", "sim_speed")}
        assert "acc_queue_kb_mean" in metrics[name]
    assert metrics["firmware"] == metrics["manifest"]
    # A 640 KB Kmin everywhere lets the queue build far beyond what the shallow-queue teacher keeps.
    assert metrics["static"]["acc_queue_kb_mean"] > metrics["teacher"]["acc_queue_kb_mean"]


@pytest.mark.slow
def test_rlcc_sim_interval_below_step_and_bad_static_exit_3(tmp_path):
    model = rule_qnet(tmp_path / "fast.onnx", default_spec(interval_us=6.0))
    r = sim("--ecn-agent", str(model), "--dt-ns", "8000", "--base-rtt-us", "20")
    assert r.returncode == 3 and "below the simulator step" in r.stderr and "Traceback" not in r.stderr
    r = sim("--ecn-static", "1")
    assert r.returncode == 3 and "--ecn-static needs --ecn-agent" in r.stderr
    r = sim("--ecn-agent", str(model), "--ecn-static", "99")
    assert r.returncode == 3 and "--ecn-static must be in 0..7" in r.stderr
