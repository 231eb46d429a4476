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


DOCS = [ROOT / "README.md", ROOT / "bench" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def copies(tmp_path: Path) -> list[Path]:
    out = []
    for i, doc in enumerate(DOCS):
        dest = tmp_path / f"{i}-{doc.name}"
        dest.write_text(doc.read_text())
        out.append(dest)
    return out


def test_check_reports_a_stale_figure(tmp_path: Path) -> None:
    docs = copies(tmp_path)
    bench = docs[1]
    text = bench.read_text()
    start = text.index("<!-- bench:emulator -->")
    bench.write_text(text[:start] + text[start:].replace(" M instr/s", " G instr/s", 1))
    r = run("--check", "--docs", *map(str, docs))
    assert r.returncode == 1
    assert "-| rv64imac" in r.stdout and "+| rv64imac" in r.stdout
    assert run("--write", "--docs", *map(str, docs)).returncode == 0
    assert bench.read_text() == text


def test_missing_or_repeated_marker_is_an_error(tmp_path: Path) -> None:
    docs = copies(tmp_path)
    text = docs[1].read_text()
    docs[1].write_text(text.replace("<!-- bench:mutants -->", "", 1))
    r = run("--check", "--docs", *map(str, docs))
    assert r.returncode == 2
    assert "missing ['mutants']" in r.stderr
    start, end = text.index("<!-- bench:mutants -->"), text.index("<!-- /bench:mutants -->") + 23
    docs[1].write_text(text)
    docs[0].write_text(docs[0].read_text() + text[start:end])
    r = run("--check", "--docs", *map(str, docs))
    assert r.returncode == 2 and "repeated ['mutants']" in r.stderr
