"""README figures stay equal to the results files behind them (bench/readme_tables.py --check)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "readme_tables.py"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=ROOT, capture_output=True, text=True, check=False)


def test_readme_matches_results() -> None:
    r = run("--check")
    assert r.returncode == 0, f"{r.stderr}\n{r.stdout}"


def test_check_reports_a_stale_figure(tmp_path: Path) -> None:
    text = (ROOT / "README.md").read_text()
    start = text.index("<!-- bench:emulator -->")
    stale = text[:start] + text[start:].replace(" M instr/s", " G instr/s", 1)
    readme = tmp_path / "README.md"
    readme.write_text(stale)
    r = run("--check", "--readme", str(readme))
    assert r.returncode == 1
    assert "-| rv64imac" in r.stdout and "+| rv64imac" in r.stdout
    assert run("--write", "--readme", str(readme)).returncode == 0
    assert readme.read_text() == text


def test_missing_marker_is_an_error(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text((ROOT / "README.md").read_text().replace("<!-- bench:mutants -->", "", 1))
    r = run("--check", "--readme", str(readme))
    assert r.returncode == 2
    assert "missing ['mutants']" in r.stderr
