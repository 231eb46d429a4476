"""rlcc-compile --sdk/--slot bad input: an unknown flavour is a usage error (exit 2, click's
choice), a slot out of range or --slot without --sdk doca is bad input (exit 3, one line), both
before any compiling and without writing OUT."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from rlcc.cli.main import compile_command
from rlcc.errors import ExitCode

MODEL = Path(__file__).resolve().parents[2] / "examples" / "rlcc_mlp.onnx"


@pytest.mark.parametrize("args, code, message", [
    (["--sdk", "nvidia"], ExitCode.USAGE, "'nvidia' is not one of 'stub', 'doca'"),
    (["--sdk", "doca", "--slot", "8"], ExitCode.BAD_INPUT, "--slot 8 is out of range: DOCA PCC user algorithm slots are 0..7"),
    (["--sdk", "doca", "--slot", "15"], ExitCode.BAD_INPUT, "--slot 15 is out of range"),
    (["--sdk", "doca", "--slot", "-1"], ExitCode.BAD_INPUT, "--slot -1 is out of range"),
    (["--slot", "1"], ExitCode.BAD_INPUT, "--slot applies to --sdk doca only"),
])
def test_bad_sdk_options(tmp_path, args, code, message):
    out = tmp_path / "out"
    result = CliRunner().invoke(compile_command, [str(MODEL), "-o", str(out), "-q", *args])
    assert result.exit_code == int(code), result.output
    assert message in result.output
    if code == ExitCode.BAD_INPUT:
        errors = [line for line in result.output.splitlines() if line.strip()]
        assert len(errors) == 1 and errors[0].startswith("rlcc-compile: error: "), result.output
    assert not out.exists()
