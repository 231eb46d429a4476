"""README figures stay equal to the results files behind them (bench/readme_tables.py --check)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

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


def readme_blocks():
    """bench/readme_blocks.py as a module (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location("readme_blocks", ROOT / "bench" / "readme_blocks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def layout_tree(tmp_path: Path) -> Path:
    """A copy of what the layout block reads: setup.cfg, .gitignore, tests/layers.py, each folder's __init__.py."""
    for rel in ["setup.cfg", ".gitignore", "tests/layers.py", *(str(p.relative_to(ROOT)) for p in ROOT.glob("*/__init__.py"))]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text((ROOT / rel).read_text())
    for folder in ("bench", "docs", "examples", "build", "rlcc.egg-info"):
        (tmp_path / folder).mkdir(exist_ok=True)
    return tmp_path


def test_layout_rows_come_from_package_dir_and_docstrings(tmp_path: Path, monkeypatch) -> None:
    rb = readme_blocks()
    monkeypatch.setattr(rb, "ROOT", layout_tree(tmp_path))
    (tmp_path / "kinds" / "__init__.py").write_text('"""rlcc.kinds: toy kinds, one folder each."""\n')
    rows = [line for line in rb.layout().splitlines() if line.startswith("| `")]
    assert "| `kinds/` | `rlcc.kinds` | toy kinds, one folder each |" in rows
    folders = [r.split("`")[1] for r in rows]
    assert folders[:9] == [f"{s}/" for s in rb.layer_chain().CHAIN]
    assert "build/" not in folders and "rlcc.egg-info/" not in folders and "docs/" in folders


@pytest.mark.parametrize("change, message", [
    (lambda root: (root / "plugins").mkdir(), "['plugins'] without a row"),
    (lambda root: (root / "fxp" / "__init__.py").write_text('"""rlcc.fxp."""\n'), "fxp/__init__.py: its docstring"),
])
def test_layout_refuses_an_undescribed_folder(tmp_path: Path, monkeypatch, change, message) -> None:
    """A new top-level folder, or a package without a description, stops the render (exit 2)."""
    rb = readme_blocks()
    monkeypatch.setattr(rb, "ROOT", layout_tree(tmp_path))
    change(tmp_path)
    with pytest.raises(rb.SourceError, match=re.escape(message)):
        rb.layout()
