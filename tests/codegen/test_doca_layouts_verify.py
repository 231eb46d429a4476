"""One DOCA-flavour C file, verified bit-exact against each DOCA device layout: `rlcc-compile --quick
--sdk doca`, then `rlcc-verify --doca-layout 2.5|bf3|cx8` passes. A harness that lays the event out
in the wrong byte order or at a wrong offset (a layout table that disagrees with the contract
headers) fails verification; bad --doca-layout input is a one-line error with its exit code."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import re

import pytest
from click.testing import CliRunner
from codegen_build import ZIG_TARGET, compile_ok
from codegen_models import MODELS
from hostcc import host_cc

from rlcc import firmware_sdk_stub as sdk
from rlcc.cli.main import verify_command
from rlcc.codegen import generate
from rlcc.codegen import sdk_flavours as fl
from rlcc.errors import ExitCode
from rlcc.firmware_sdk_stub import doca_layout as dl

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "examples" / "rlcc_mlp.onnx"


@pytest.fixture(scope="module")
def doca_firmware(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("doca_layouts") / "out"
    p = subprocess.run(["rlcc-compile", str(MODEL), "-o", str(out), "--quick", "--sdk", "doca", "--no-verify", "-q"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return out / "firmware.c"


WARN = ["-Wall", "-Wextra", "-Werror", "-Wconversion", "-pedantic", "-std=c11"]


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> dict[str, Path]:
    model = MODELS["onnx_spec"]
    return generate(model, tmp_path_factory.mktemp("doca_gen"), name="fw", sdk=fl.choose("doca", 4))


def test_generated_c_reads_the_event_through_accessors_only(generated):
    """No field of the event is named in the C: the accessors are the only layout-dependent code."""
    text = generated["c"].read_text()
    assert "doca_pcc_dev_get_ev_attr(event)" in text and "doca_pcc_dev_get_timestamp(event)" in text
    assert not re.search(r"\bevent\s*->", text), re.search(r"\bevent\s*->.*", text).group(0)


@pytest.mark.parametrize("target", ["host", *ZIG_TARGET])
@pytest.mark.parametrize("layout", dl.LAYOUT_NAMES)
def test_one_c_file_builds_against_every_layout(generated, tmp_path, layout, target):
    flags = [] if target == "host" else [*ZIG_TARGET[target], "-ffreestanding"]
    compile_ok([*host_cc("zig"), *flags, *WARN, f"-DRLCC_DOCA_LAYOUT={dl.LAYOUTS[layout].c_macro}", "-O2",
                f"-I{sdk.SDK_DIR}", f"-I{generated['c'].parent}", "-c", generated["c"], "-o", tmp_path / "fw.o"])


@pytest.mark.slow
@pytest.mark.parametrize("layout", dl.LAYOUT_NAMES)
def test_verify_passes_on_every_layout(doca_firmware, layout):
    p = subprocess.run(["rlcc-verify", str(doca_firmware), "--doca-layout", layout, "--random", "100"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert f"DOCA layout {layout}" in p.stdout and "bit-exact" in p.stdout and "rlcc-verify: PASS" in p.stdout


WRONG = {
    "little-endian words": lambda lay: dataclasses.replace(lay, big_endian=False),
    "sn and timestamp swapped": lambda lay: dataclasses.replace(lay, sn=lay.timestamp, timestamp=lay.sn),
    "ev_spec_attr one word early": lambda lay: dataclasses.replace(lay, spec=lay.spec - 4, timestamp=lay.spec + 12),
    "rate read from probe_type_slot": lambda lay: dataclasses.replace(lay, rate=8),
}


@pytest.mark.slow
@pytest.mark.parametrize("wrong", WRONG)
def test_a_wrong_harness_layout_fails(doca_firmware, monkeypatch, wrong):
    """The adapter lays the event out from the table; a table entry off from the header the firmware
    was compiled against makes outputs differ (exit 4 in the CLI), it is never silently accepted."""
    from rlcc.verify.check import verify_firmware

    bad = WRONG[wrong](dl.LAYOUTS["bf3"])
    monkeypatch.setitem(dl.LAYOUTS, "bad", dataclasses.replace(bad, name="bad"))
    result = verify_firmware(doca_firmware, random_count=20, doca_layout="bad")
    assert not result.bit_exact and result.mismatches > result.vectors // 2, wrong


def test_unknown_layout_is_a_usage_error(tmp_path):
    fw = tmp_path / "firmware.c"
    fw.write_text("/* */\n")
    result = CliRunner().invoke(verify_command, [str(fw), "--doca-layout", "bf4"])
    assert result.exit_code == int(ExitCode.USAGE), result.output
    assert "'bf4' is not one of '2.5', 'bf3', 'cx8'" in result.output


def _one_error_line(result, message: str) -> None:
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("rlcc-verify: error: ") and message in lines[0], result.output


def test_layout_for_stub_firmware_is_bad_input(tmp_path):
    fw = tmp_path / "firmware.c"
    fw.write_text("/* stub-flavour firmware */\n")
    (tmp_path / "firmware.rlcc.json").write_text(json.dumps({"format": "rlcc.firmware/1"}))
    result = CliRunner().invoke(verify_command, [str(fw), "--doca-layout", "cx8"])
    assert result.exit_code == int(ExitCode.BAD_INPUT), result.output
    _one_error_line(result, "--doca-layout applies to --sdk doca firmware only; this is stub firmware")


def test_layout_for_switch_firmware_is_bad_input(tmp_path):
    fw = tmp_path / "agent.c"
    fw.write_text("/* switch agent */\n")
    (tmp_path / "agent.rlcc.json").write_text(json.dumps({"kind": "switch_agent"}))
    result = CliRunner().invoke(verify_command, [str(fw), "--doca-layout", "bf3"])
    assert result.exit_code == int(ExitCode.BAD_INPUT), result.output
    _one_error_line(result, "--doca-layout: not supported for switch-agent firmware")
