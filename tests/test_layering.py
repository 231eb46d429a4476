"""The pipeline is one-way: a stage imports only the stages below it.

    core (spec, formats, tree IR, errors) <- fxp <- simulator <- distill <- codegen <- verify <- kinds
        <- pipeline <- cli

``kinds`` holds the model kinds (trees, int8, switch agent), each in its own folder, built from
the generic stages below; ``pipeline`` runs a compile or a verification through a kind's one
interface. ``train`` sits beside ``distill`` (it needs the simulator, not the distiller); the emulator, the
templates and the SDK stub are leaf libraries that only the core may feed. A stage that needs
something from above is a design error (move the shared thing down), so this test fails on any
import that points up or sideways, including imports inside functions.
"""

from __future__ import annotations

import ast
import configparser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHAIN = ("core", "fxp", "simulator", "distill", "codegen", "verify", "kinds", "pipeline", "cli")
LEAVES = {"emulator": {"core"}, "templates": set(), "firmware_sdk_stub": {"core"}}


def allowed(stage: str) -> set[str]:
    """Stages ``stage`` may import (besides itself)."""
    if stage in LEAVES:
        return LEAVES[stage]
    if stage == "train":
        return set(CHAIN[: CHAIN.index("distill")])
    below = set(CHAIN[: CHAIN.index(stage)])
    if stage in ("codegen", "verify", "kinds", "pipeline", "cli"):
        below |= set(LEAVES)
    if stage in ("kinds", "pipeline", "cli"):
        below.add("train")
    return below


def package_folders() -> dict[str, str]:
    """Import name (``rlcc.fxp``) -> folder (``fxp``), from setup.cfg's package_dir."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    pairs = [line.split("=") for line in cfg["options"]["package_dir"].strip().splitlines()]
    return {name.strip(): folder.strip() for name, folder in pairs}


FOLDERS = package_folders()
STAGE_OF = {name: ("core" if folder == "core" else folder) for name, folder in FOLDERS.items()}


def imported_stage(module: str) -> str | None:
    """The stage an ``rlcc...`` module belongs to (longest package prefix), else None."""
    parts = module.split(".")
    if parts[0] != "rlcc":
        return None
    for n in range(len(parts), 0, -1):
        name = ".".join(parts[:n])
        if name in STAGE_OF:
            return STAGE_OF[name]
    return None


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import in ``path``, ``from rlcc import x`` as ``rlcc.x``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "rlcc":
                found += [(node.lineno, f"rlcc.{a.name}") for a in node.names]
            else:
                found.append((node.lineno, node.module))
    return found


def violations() -> list[str]:
    bad = []
    for name, folder in FOLDERS.items():
        stage = STAGE_OF[name]
        files = (ROOT / folder).rglob("*.py") if stage != "core" else (ROOT / folder).glob("*.py")
        for path in files:
            for line, module in imports_of(path):
                target = imported_stage(module)
                if target is not None and target != stage and target not in allowed(stage):
                    bad.append(f"{path.relative_to(ROOT)}:{line}: {stage} imports {module} ({target})")
    return bad


def test_no_stage_imports_a_stage_above_it() -> None:
    assert violations() == []


def test_every_package_is_placed_in_the_layering() -> None:
    stages = set(STAGE_OF.values())
    assert stages <= set(CHAIN) | set(LEAVES) | {"train"}, stages


@pytest.mark.parametrize("source, module", [("fxp", "rlcc.distill.fit"), ("simulator", "rlcc.codegen"),
                                            ("train", "rlcc.cli.main"), ("emulator", "rlcc.fxp.golden")])
def test_an_upward_import_is_detected(tmp_path, source, module) -> None:
    """The checker itself: an import pointing up is classified as not allowed."""
    assert imported_stage(module) not in allowed(source)
    probe = tmp_path / "probe.py"
    probe.write_text(f"def f():\n    import {module}\n")
    assert imports_of(probe) == [(2, module)]
