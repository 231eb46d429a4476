"""``rlcc-compile --nic-cores/--nic-threads``: the closed-loop check runs the firmware on the NIC
decision processor at the cycles its own verification measured (``simulator/nic.py``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

POLICY = Path(__file__).resolve().parents[2] / "examples" / "rlcc_mlp.onnx"


def compile_(out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(["rlcc-compile", str(POLICY), "-o", str(out), "--quick", "--jobs", "1", *extra],
                          capture_output=True, text=True, timeout=900)


@pytest.mark.slow
def test_quick_compile_checks_the_firmware_on_the_decision_processor(tmp_path):
    p = compile_(tmp_path / "out", "--nic-cores", "1", "--nic-threads", "2")
    assert p.returncode == 0, p.stderr
    verify = json.loads((tmp_path / "out" / "verify.json").read_text())
    cycles = verify["cycles"]["max"] * verify["budget"]["hw_threads_sharing"]
    assert (f"firmware decides on each NIC's 1 x 2 decision threads, {cycles} cycles at "
            f"{verify['clock_hz'] / 1e9:g} GHz per decision") in p.stdout
    assert json.loads((tmp_path / "out" / "report.json").read_text())["closed_loop_suite"] is not None


def test_nic_check_needs_the_verification(tmp_path):
    p = compile_(tmp_path / "out", "--nic-cores", "2", "--no-verify")
    assert p.returncode == 3 and p.stderr.strip().splitlines() == [
        "rlcc-compile: error: --nic-cores/--nic-threads run the closed-loop check on the firmware's measured cycles: "
        "drop --no-verify"]
    assert not (tmp_path / "out").exists()


def test_nic_flags_are_validated(tmp_path):
    p = compile_(tmp_path / "out", "--nic-threads", "0")
    assert p.returncode == 2 and "--nic-threads" in p.stderr and "Traceback" not in p.stderr
