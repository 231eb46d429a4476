"""The one-line error contract of rlcc-compile, asserted alike by the CLI bad-input tests."""

from __future__ import annotations

from rlcc.errors import ExitCode


def assert_one_line(result, code: ExitCode, *fragments: str) -> str:
    """``result`` (click's CliRunner) exited ``code`` with exactly one ``rlcc-compile: error:`` line
    holding every fragment; returns that line."""
    assert result.exit_code == int(code), result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rlcc-compile: error: "), result.output
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]
