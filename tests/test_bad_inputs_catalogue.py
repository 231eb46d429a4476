"""The bad-input catalogue (tests/bad_inputs/*.json, rendered into README.md "Exit codes" by
bench/readme_tables.py): every entry names a test function that exists (read with ast, no
collection run) and an exit code rlcc documents; no class is listed twice."""

from __future__ import annotations

import ast
import functools
import json
import re
from pathlib import Path

from rlcc.cli.common import EXIT_SIGINT, EXIT_SIGPIPE, EXIT_SIGTERM
from rlcc.errors import ExitCode

REPO = Path(__file__).resolve().parents[1]
CATALOGUE = REPO / "tests" / "bad_inputs"
KEYS = {"class", "example", "exit", "test"}
EXIT_CODES = {int(c) for c in ExitCode} | {EXIT_SIGINT, EXIT_SIGPIPE, EXIT_SIGTERM}


@functools.lru_cache(maxsize=None)
def _functions(path: Path) -> frozenset[str]:
    """``name`` of every module-level function and ``Class::name`` of every method in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names |= {f"{node.name}::{f.name}" for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return frozenset(names)


def _exit_codes(value) -> list[int]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    return [int(x) for x in re.findall(r"\d+", value)] if isinstance(value, str) else []


def problems(catalogue: dict[str, object], root: Path = REPO) -> list[str]:
    """What is wrong with ``catalogue`` ({area: parsed JSON}); empty when every entry holds."""
    found, seen = [], {}
    for area, entries in sorted(catalogue.items()):
        if not isinstance(entries, list):
            found.append(f"{area}: not a JSON list")
            continue
        for i, entry in enumerate(entries):
            where = f"{area}[{i}]"
            if not isinstance(entry, dict) or set(entry) != KEYS:
                found.append(f"{where}: keys must be {sorted(KEYS)}")
                continue
            if not all(isinstance(entry[k], str) and entry[k].strip() for k in ("class", "example", "test")):
                found.append(f"{where}: class, example and test must be non-empty strings")
                continue
            if entry["class"] in seen:
                found.append(f"{where}: class {entry['class']!r} already listed at {seen[entry['class']]}")
            seen[entry["class"]] = where
            codes = _exit_codes(entry["exit"])
            if not codes or any(c not in EXIT_CODES for c in codes):
                found.append(f"{where}: exit {entry['exit']!r} is not a documented code {sorted(EXIT_CODES)}")
            path, _, name = entry["test"].partition("::")
            file = root / path
            if not path.startswith("tests/") or not name or "[" in name:
                found.append(f"{where}: test {entry['test']!r} must be tests/...py::function (no parameters)")
            elif not file.is_file():
                found.append(f"{where}: {path} does not exist")
            elif name not in _functions(file) or not name.split("::")[-1].startswith("test"):
                found.append(f"{where}: {path} has no test function {name}")
    return found


def load_catalogue() -> dict[str, object]:
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(CATALOGUE.glob("*.json"))}


def test_every_entry_names_an_existing_test_and_a_documented_exit_code():
    catalogue = load_catalogue()
    assert {"compile", "cli"} <= set(catalogue)
    assert problems(catalogue) == []


def test_the_check_catches_each_kind_of_mistake(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def test_a():\n    pass\n\nclass TestB:\n    def test_c(self):\n        pass\n")
    good = {"class": "a", "example": "`x`", "exit": 3, "test": "tests/test_x.py::test_a"}
    catalogue = {"area": [
        good,
        dict(good, **{"class": "b", "test": "tests/test_x.py::TestB::test_c", "exit": "141, silent"}),
        dict(good, **{"class": "a"}),
        dict(good, **{"class": "c", "exit": 99}),
        dict(good, **{"class": "d", "test": "tests/test_x.py::test_gone"}),
        dict(good, **{"class": "e", "test": "tests/missing.py::test_a"}),
        dict(good, **{"class": "f", "test": "tests/test_x.py::test_a[1]"}),
        {"class": "g", "exit": 3},
    ], "other": {"class": "h"}}
    found = problems(catalogue, tmp_path)
    assert found == [
        "area[2]: class 'a' already listed at area[0]",
        f"area[3]: exit 99 is not a documented code {sorted(EXIT_CODES)}",
        "area[4]: tests/test_x.py has no test function test_gone",
        "area[5]: tests/missing.py does not exist",
        "area[6]: test 'tests/test_x.py::test_a[1]' must be tests/...py::function (no parameters)",
        "area[7]: keys must be ['class', 'example', 'exit', 'test']",
        "other: not a JSON list",
    ]
