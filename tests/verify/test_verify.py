"""rlcc-verify end to end: pass, hand-edited C caught, budget gate, build failure, bad input."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from rlcc import formats as fmt
from rlcc.codegen import generate
from rlcc.errors import ExitCode
from rlcc.fxp.model import FxModel
from verify_models import small_model



def model() -> FxModel:
    return small_model(10)


@pytest.fixture(scope="module")
def firmware(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fw")
    return generate(model(), out)["c"]


def verify(*args) -> subprocess.CompletedProcess:
    return subprocess.run(["rlcc-verify", *map(str, args)], capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_generated_firmware_passes_on_both_targets(firmware, tmp_path):
    report, junit = tmp_path / "r.json", tmp_path / "r.xml"
    proc = verify(firmware, "--json", report, "--junit", junit, "--random", 5000)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(report.read_text())
    assert data["bit_exact"] is True and data["passed"] is True and data["mismatches"] == 0
    assert data["vectors"] > 5000
    assert 0 < data["cycles"]["min"] <= data["cycles"]["mean"] <= data["cycles"]["max"] <= data["budget"]["cycles"]
    assert data["worst_case"]["event_type"] == "RTT" and len(data["worst_case"]["leaves"]) == 10
    assert data["context_bytes"] <= fmt.CTX_BYTES and data["size"]["code"] > 0
    suite = ET.parse(junit).getroot()
    assert suite.get("tests") == "3" and suite.get("failures") == "0"
    rv32 = verify(firmware, "--target", "rv32imc", "--random", 2000, "-q")
    assert rv32.returncode == 0, rv32.stdout + rv32.stderr


@pytest.mark.slow
def test_threshold_off_by_one_is_a_mismatch(firmware, tmp_path):
    edited = tmp_path / "firmware.c"
    text = firmware.read_text()
    # a split threshold (oblivious, if-else) or a bucket cut (bitmask), named as the styles name them
    match = re.search(r"(#define \w*(?:THR_0_0|CUT_\d+_\d+) INT32_C\()(-?\d+)\)", text)
    assert match, "generated C names its thresholds <NAME>_THR_<tree>_<level> or <NAME>_CUT_<input>_<j>"
    edited.write_text(text.replace(match.group(0), f"{match.group(1)}{int(match.group(2)) + 1})", 1))
    (tmp_path / "firmware.h").write_text(firmware.with_suffix(".h").read_text())
    report = tmp_path / "r.json"
    proc = verify(edited, "--manifest", firmware.with_name("firmware.rlcc.json"), "--json", report, "--random", 0)
    assert proc.returncode == int(ExitCode.MISMATCH), proc.stdout + proc.stderr
    data = json.loads(report.read_text())
    assert data["bit_exact"] is False and data["mismatches"] > 0 and data["mismatch_examples"]
    assert data["source_matches_manifest"] is False


@pytest.mark.slow
def test_budget_gate(firmware):
    proc = verify(firmware, "--budget-cycles", 20, "--random", 0)
    assert proc.returncode == int(ExitCode.BUDGET)
    assert "budget" in proc.stderr.strip().splitlines()[-1]


@pytest.mark.slow
def test_build_failure_and_bad_input(firmware, tmp_path):
    broken = tmp_path / "firmware.c"
    broken.write_text(firmware.read_text() + "\nthis is not C;\n")
    (tmp_path / "firmware.h").write_text(firmware.with_suffix(".h").read_text())
    proc = verify(broken, "--manifest", firmware.with_name("firmware.rlcc.json"))
    assert proc.returncode == int(ExitCode.BUILD), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    lonely = tmp_path / "other.c"
    lonely.write_text("int x;\n")
    proc = verify(lonely)
    assert proc.returncode == int(ExitCode.BAD_INPUT) and "manifest" in proc.stderr
    proc = verify(tmp_path / "missing.c")
    assert proc.returncode == int(ExitCode.BAD_INPUT)
