"""What a user's ``pip install`` gets: every module of every package folder, and every third-party
module the code imports declared in setup.cfg. (CI also installs the wheel into a new virtual
environment and runs everything from there; these tests name the culprit in a second.)"""

from __future__ import annotations

import ast
import configparser
import importlib.metadata as md
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CFG = configparser.ConfigParser()
CFG.read(ROOT / "setup.cfg")
NOT_PACKAGES = {"tests", "bench", "examples", "docs", "build"}  # folders with Python that is not installed


def package_roots() -> dict[str, Path]:
    roots = {}
    for line in CFG["options"]["package_dir"].strip().splitlines():
        name, _, folder = (p.strip() for p in line.partition("="))
        roots[name] = ROOT / folder
    return roots


def requirement_names(text: str) -> set[str]:
    return {_norm(re.split(r"[<>=!~\[; ]", line.strip(), maxsplit=1)[0]) for line in text.strip().splitlines()
            if line.strip() and not line.strip().startswith("#")}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def imported_modules(folders: list[Path], root: Path = ROOT) -> dict[str, str]:
    """Top-level module name -> first file:line importing it (absolute imports only)."""
    found: dict[str, str] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names = []
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                for name in names:
                    found.setdefault(name.split(".")[0], f"{path.relative_to(root)}:{node.lineno}")
    return found


def undeclared(folders: list[Path], declared: set[str], local: set[str], root: Path = ROOT) -> list[str]:
    dists = md.packages_distributions()
    problems = []
    for module, where in imported_modules(folders, root).items():
        if module in sys.stdlib_module_names or module in local or module == "rlcc":
            continue
        owners = {_norm(d) for d in dists.get(module, [])}
        if not owners:
            problems.append(f"{module} ({where}): not installed, so not declared")
        elif not owners & declared:
            problems.append(f"{module} ({where}): from {sorted(owners)}, not declared")
    return problems


def test_every_python_folder_is_a_package():
    roots = package_roots()
    mapped = {p.resolve() for p in roots.values()}
    for top in sorted(p for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if top.name in NOT_PACKAGES or not any(top.rglob("*.py")):
            continue
        assert top.resolve() in mapped, f"{top.name}/ holds Python but is not in setup.cfg's package_dir"
    for root in roots.values():
        for folder in {p.parent for p in root.rglob("*.py")}:
            assert (folder / "__init__.py").exists(), f"{folder.relative_to(ROOT)} has modules but no __init__.py: a wheel leaves it out"


def discovered_packages() -> set[str]:
    """Every folder below a package_dir root holding an __init__.py, as a dotted name."""
    found = set()
    for name, root in package_roots().items():
        for init in root.rglob("__init__.py"):
            found.add(".".join((name, *init.parent.relative_to(root).parts)))
    return found


def package_list_drift(listed: set[str], found: set[str]) -> str:
    """What to change in setup.cfg's ``packages`` so it equals the folders (empty: nothing). The
    list stays explicit because static tools read it; this keeps it derived in effect."""
    lines = [f"  add {name}  (a folder with an __init__.py; a wheel would leave it out)" for name in sorted(found - listed)]
    lines += [f"  remove {name}  (no such folder under package_dir)" for name in sorted(listed - found)]
    return "setup.cfg [options] packages drifted from the folders:\n" + "\n".join(lines) if lines else ""


def test_setup_cfg_lists_every_package():
    assert not (drift := package_list_drift(set(CFG["options"]["packages"].split()), discovered_packages())), drift


def test_package_list_drift_names_each_fix():
    drift = package_list_drift({"rlcc", "rlcc.gone"}, {"rlcc", "rlcc.kinds.toy"})
    assert drift.splitlines()[1:] == ["  add rlcc.kinds.toy  (a folder with an __init__.py; a wheel would leave it out)",
                                      "  remove rlcc.gone  (no such folder under package_dir)"]
    assert package_list_drift({"rlcc"}, {"rlcc"}) == ""


def test_third_party_imports_are_declared():
    """install_requires, or an optional extra other than ``test`` (ray: ``rlcc[ray]``, imported
    only by the backend that needs it)."""
    declared = requirement_names(CFG["options"]["install_requires"])
    for extra, text in CFG["options.extras_require"].items():
        if extra != "test":
            declared |= requirement_names(text)
    problems = undeclared(list(package_roots().values()), declared, set())
    assert not problems, "\n".join(problems)


def test_test_imports_are_declared():
    extras = CFG["options.extras_require"]
    declared = requirement_names(CFG["options"]["install_requires"]) | requirement_names(extras["test"])
    local = {p.stem for p in (ROOT / "tests").rglob("*.py")} | {"readme_blocks", "benchlib"}
    local |= {p.parent.name for p in (ROOT / "tests").rglob("__init__.py")}  # test-only packages (tests/kinds/toy_stump)
    problems = undeclared([ROOT / "tests"], declared, local)
    assert not problems, "\n".join(problems)


def test_an_undeclared_import_is_found(tmp_path):
    """The check above, on a module that imports something setup.cfg does not declare."""
    (tmp_path / "m.py").write_text("import numpy\nimport json\nfrom click import echo\n")
    problems = undeclared([tmp_path], {"click"}, set(), root=tmp_path)
    assert len(problems) == 1 and problems[0].startswith("numpy (m.py:1)")


def test_the_installed_package_has_every_module():
    """Run against a wheel install (CI): each source module and data file is installed."""
    dist = md.distribution("rlcc")
    files = {str(f) for f in dist.files or []}
    if not any(f.startswith("rlcc/") and f.endswith(".py") for f in files):
        pytest.skip("rlcc is an editable install here (CI checks the wheel)")
    missing = []
    for name, root in package_roots().items():
        prefix = name.replace(".", "/")
        for path in root.rglob("*.py"):
            rel = f"{prefix}/{path.relative_to(root).as_posix()}"
            if rel not in files:
                missing.append(rel)
    assert not missing, f"not in the installed package: {missing[:10]}"
