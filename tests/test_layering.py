"""The pipeline is one-way: a stage imports only the stages below it, in the order of
tests/layers.py (core <- fxp <- ... <- cli; the README's Layout section renders it).

``kinds`` holds the model kinds (trees, int8, switch agent), each in its own folder, built from
the generic stages below; ``pipeline`` runs a compile or a verification through a kind's one
interface. ``train`` sits beside ``distill`` (it needs the simulator, not the distiller); the emulator, the
templates and the SDK stub are leaf libraries that only the core may feed. A stage that needs
something from above is a design error (move the shared thing down), so this test fails on any
import that points up or sideways, including imports inside functions.

Inside a stage the modules import each other without a cycle either (function-local imports
count: a lazy import only hides a cycle, it does not remove it), so the whole package's import
graph is acyclic and every module can be read, tested and moved knowing only what it imports.
"""

from __future__ import annotations

import ast
import configparser
from pathlib import Path

import networkx as nx
import pytest
from layers import BESIDE, CHAIN, LEAVES, LEAVES_FROM

ROOT = Path(__file__).resolve().parent.parent


def allowed(stage: str) -> set[str]:
    """Stages ``stage`` may import (besides itself)."""
    if stage in LEAVES:
        return LEAVES[stage]
    if stage in BESIDE:
        return set(CHAIN[: CHAIN.index(BESIDE[stage][0])])
    level = CHAIN.index(stage)
    below = set(CHAIN[:level])
    if level >= CHAIN.index(LEAVES_FROM):
        below |= set(LEAVES)
    below |= {name for name, (_, first_user) in BESIDE.items() if level >= CHAIN.index(first_user)}
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


def absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    """The absolute module a ``from`` import in ``module`` names (``from ..x import y`` resolved)."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if is_package else module.split(".")[:-1]
    return ".".join(package[: len(package) - node.level + 1] + ([node.module] if node.module else []))


def imports_of(path: Path, module: str = "", is_package: bool = False) -> list[tuple[int, str]]:
    """(line, module) of every import in ``path`` (the module ``module``, for relative imports),
    ``from rlcc import x`` as ``rlcc.x``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and (module or not node.level):
            base = absolute(node, module, is_package)
            if base == "rlcc":
                found += [(node.lineno, f"rlcc.{a.name}") for a in node.names]
            elif base:
                found.append((node.lineno, base))
    return found


def violations() -> list[str]:
    bad = []
    for name, folder in FOLDERS.items():
        stage = STAGE_OF[name]
        for module, (path, is_package) in stage_modules(name, ROOT / folder, recurse=stage != "core").items():
            if path.suffix != ".py":
                continue
            for line, imported in imports_of(path, module, is_package):
                target = imported_stage(imported)
                if target is not None and target != stage and target not in allowed(stage):
                    bad.append(f"{path.relative_to(ROOT)}:{line}: {stage} imports {imported} ({target})")
    return bad


def test_no_stage_imports_a_stage_above_it() -> None:
    bad = violations()
    assert not bad, "imports that point up or sideways (move the shared thing down):\n" + "\n".join(bad)


GENERIC = CHAIN[: CHAIN.index("kinds")]  # core .. verify


def test_generic_stages_know_no_model_kind() -> None:
    """The stages are generic machinery; a model kind (``rlcc.kinds``) plugs into them and the
    pipeline (``rlcc.pipeline``) drives them, so neither is ever imported from below. (The chain
    above implies this; the message here says what to do instead.)"""
    bad = [f"{path.relative_to(ROOT)}:{line}: imports {module}"
           for name, folder in FOLDERS.items() if STAGE_OF[name] in GENERIC
           for module_name, (path, is_package) in stage_modules(name, ROOT / folder, recurse=folder != "core").items()
           if path.suffix == ".py"
           for line, module in imports_of(path, module_name, is_package) if imported_stage(module) in ("kinds", "pipeline")]
    assert not bad, ("a generic stage imports a model kind or the pipeline; pass what it needs in as an argument "
                     "(the kind calls the stage, not the other way round):\n" + "\n".join(bad))


def test_every_package_is_placed_in_the_layering() -> None:
    stages = set(STAGE_OF.values())
    assert stages <= set(CHAIN) | set(LEAVES) | set(BESIDE), stages


@pytest.mark.parametrize("source, module", [("fxp", "rlcc.distill.fit"), ("simulator", "rlcc.codegen"),
                                            ("train", "rlcc.cli.main"), ("emulator", "rlcc.fxp.golden")])
def test_an_upward_import_is_detected(tmp_path, source, module) -> None:
    """The checker itself: an import pointing up is classified as not allowed."""
    assert imported_stage(module) not in allowed(source)
    probe = tmp_path / "probe.py"
    probe.write_text(f"def f():\n    import {module}\n")
    assert imports_of(probe) == [(2, module)]


def test_a_relative_upward_import_is_resolved(tmp_path) -> None:
    """``from ..codegen import x`` in ``rlcc.simulator.engine`` names ``rlcc.codegen``."""
    probe = tmp_path / "probe.py"
    probe.write_text("from ..codegen import generate\nfrom .. import verify\nfrom . import metrics\n")
    found = imports_of(probe, "rlcc.simulator.engine")
    assert found == [(1, "rlcc.codegen"), (2, "rlcc.verify"), (3, "rlcc.simulator")]
    assert {imported_stage(m) for _, m in found} == {"codegen", "verify", "simulator"}
    assert not {"codegen", "verify"} & allowed("simulator")


def extension_modules() -> set[str]:
    """The compiled extensions setup.py declares (``Extension("rlcc.emulator._rvcore", ...)``): modules
    whether or not a build put their ``.so`` in the source folder (a clean clone has none)."""
    tree = ast.parse((ROOT / "setup.py").read_text())
    return {node.args[0].value for node in ast.walk(tree)
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Extension"
            and node.args and isinstance(node.args[0], ast.Constant)}


def stage_modules(package: str, folder: Path, recurse: bool = True) -> dict[str, tuple[Path, bool]]:
    """Every module of one stage: dotted name -> (file, is a package's ``__init__``); a compiled
    extension (``_rvcore.cpython-311-x86_64-linux-gnu.so``, or one setup.py declares) is a module
    that imports nothing."""
    modules = {name: (folder / f"{name.rsplit('.', 1)[1]}.so", False) for name in extension_modules()
               if name.rsplit(".", 1)[0] == package}
    for path in sorted(p for suffix in ("*.py", "*.so", "*.pyd") for p in (folder.rglob(suffix) if recurse else folder.glob(suffix))):
        rel = path.relative_to(folder)
        parts = (*rel.parts[:-1], rel.name.split(".")[0])
        is_package = parts[-1] == "__init__"
        modules[".".join((package, *(parts[:-1] if is_package else parts)))] = (path, is_package)
    return modules


def module_imports(path: Path, module: str, is_package: bool, known: set[str]) -> list[tuple[int, str]]:
    """(line, module) of every import in ``path`` that names one of ``known``, relative ones resolved.

    ``from p import x`` is an import of the submodule ``p.x`` when there is one, else of ``p``
    itself; the implicit import of a package's ``__init__`` that importing its submodule entails
    is not an edge (it would put every re-exporting ``__init__`` in a cycle with its modules).
    """
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name in known]
        elif isinstance(node, ast.ImportFrom):
            base = absolute(node, module, is_package)
            for alias in node.names:
                target = f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                if target in known:
                    found.append((node.lineno, target))
    return found


def import_cycles(package: str, folder: Path, recurse: bool = True) -> list[str]:
    """One line per import cycle among the modules of ``folder`` (imported as ``package``):
    its modules in order, each arrow with the file:line of the import."""
    modules = stage_modules(package, folder, recurse)
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for module, (path, is_package) in modules.items():
        if path.suffix != ".py":
            continue
        for line, target in module_imports(path, module, is_package, set(modules)):
            if target != module and not graph.has_edge(module, target):
                graph.add_edge(module, target, where=f"{path.relative_to(folder.parent)}:{line}")
    cycles = []
    for component in nx.strongly_connected_components(graph):
        if len(component) > 1:
            edges = nx.find_cycle(graph.subgraph(component), source=min(component))
            steps = " -> ".join(f"{v} ({graph.edges[u, v]['where']})" for u, v in edges)
            cycles.append(f"{edges[0][0]} -> {steps}; strongly connected: {sorted(component)}")
    return sorted(cycles)


def all_import_cycles() -> list[str]:
    return [cycle for name, folder in FOLDERS.items()
            for cycle in import_cycles(name, ROOT / folder, recurse=STAGE_OF[name] != "core")]


def test_no_import_cycle_inside_a_stage() -> None:
    """Break a cycle by moving what both modules share into the lower one or a small module of its
    own, not by moving an import into a function."""
    cycles = all_import_cycles()
    assert not cycles, "import cycles inside a folder:\n" + "\n".join(cycles)


def plant(folder: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


@pytest.mark.parametrize("files", [
    {"__init__.py": "", "a.py": "from rlcc.probe.b import f\n",
     "b.py": "def f():\n    from rlcc.probe import a\n"},
    {"__init__.py": "", "a.py": "from . import b\n", "b.py": "import rlcc.probe.c\n",
     "c.py": "def g():\n    from .a import x\n"},
    {"__init__.py": "from rlcc.probe.sub.m import y\n", "sub/__init__.py": "",
     "sub/m.py": "def h():\n    from ... import probe\n    from rlcc.probe import VERSION\n"},
], ids=["function-local", "relative-three-way", "subpackage-to-init"])
def test_a_planted_cycle_is_detected(tmp_path, files) -> None:
    """The checker itself: a cycle through a lazy, a relative or a subpackage import is found."""
    cycles = import_cycles("rlcc.probe", plant(tmp_path / "probe", files))
    assert len(cycles) == 1, cycles
    assert "probe/" in cycles[0] and ".py:" in cycles[0]


def test_an_acyclic_folder_passes(tmp_path) -> None:
    """Imports of the package's ``__init__`` from a submodule, and a submodule imported by it,
    are not a cycle unless the submodule names the package itself."""
    folder = plant(tmp_path / "probe", {"__init__.py": "from rlcc.probe.a import f\n",
                                        "a.py": "from rlcc.probe.b import g\nimport json\n",
                                        "b.py": "from rlcc.probe import sub\n", "sub.py": "import rlcc.other\n"})
    assert import_cycles("rlcc.probe", folder) == []
