"""A SIGTERM during a test run interrupts the run; it is never a failure of the running test."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# A test that runs rlcc-sim in-process (click's CliRunner) while the run receives SIGTERM.
HOSTED_TEST = textwrap.dedent("""
    import os, signal, time
    from click.testing import CliRunner
    from rlcc.cli.main import simulate_command

    def test_sim_in_process(monkeypatch, tmp_path):
        def killed(*_args, **_kwargs):
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(30)
        monkeypatch.setattr("rlcc.cli.simulate.simulate", killed)
        (tmp_path / "ran").write_text("")
        result = CliRunner().invoke(simulate_command, ["many-to-one", "--flows", "2", "--duration-ms", "0.1"])
        assert result.exit_code == 0

    def test_after():
        pass
""")


def test_sigterm_interrupts_the_run_instead_of_failing_the_test(tmp_path):
    shutil.copy(REPO / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_hosted.py").write_text(HOSTED_TEST)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                           str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out  # pytest's "interrupted"
    assert "KeyboardInterrupt" in out and "FAILED" not in out and "1 failed" not in out, out
    assert "rlcc-sim: terminated" not in out, out
