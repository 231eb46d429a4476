"""--backend auto: the cheapest backend that is bit-exact, within the budget and inside the fidelity bar."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from rlcc.kinds.base import Outcome
from rlcc.pipeline.auto import choose
from rlcc.cli.main import compile_command

ROOT = Path(__file__).resolve().parents[2]


def outcome(backend: str, cycles: int, *, exact: bool = True, budget: int = 3600, gate: bool = True) -> Outcome:
    verdict = SimpleNamespace(cycles={"max": cycles}, bit_exact=exact, within_budget=cycles <= budget,
                              worst_case_ns=cycles / 1.8, budget=SimpleNamespace(cycles=budget))
    return Outcome(backend, Path(backend), verdict, None, gate, cycles=cycles, worst_case_ns=cycles / 1.8)


def test_the_cheapest_qualifying_backend_wins_and_the_others_say_why():
    chosen, why = choose([outcome("trees", 900), outcome("int8", 2400)])
    assert chosen.backend == "trees" and "int8: 2400 cycles, 2.7x the chosen backend's" in why
    chosen, why = choose([outcome("trees", 900, gate=False), outcome("int8", 2400)])
    assert chosen.backend == "int8" and "trees: misses the fidelity bar" in why
    chosen, why = choose([outcome("trees", 900, gate=False), outcome("int8", 4200)])
    assert chosen.backend == "trees" and why.startswith("no backend") and "int8: 4200 cycles, over the budget of 3600" in why
    chosen, why = choose([outcome("trees", 900), Outcome("int8", None, reason="unsupported op 'Conv'")])
    assert chosen.backend == "trees" and "int8: does not apply (unsupported op 'Conv')" in why
    chosen, _ = choose([outcome("trees", 900, exact=False), outcome("int8", 2400)])
    assert chosen.backend == "int8"


@pytest.mark.slow
def test_auto_compiles_both_and_records_the_choice(tmp_path):
    out = tmp_path / "auto"
    res = CliRunner().invoke(compile_command, [str(ROOT / "examples" / "rlcc_mlp.onnx"), "-o", str(out), "--backend",
                                               "auto", "--quick", "--accept-fidelity", "-q"])
    assert res.exit_code == 0, res.output
    report = json.loads((out / "report.json").read_text())
    choice = report["backend_choice"]
    assert [c["backend"] for c in choice["candidates"]] == ["trees", "int8"]
    chosen = next(c for c in choice["candidates"] if c["backend"] == choice["chosen"])
    qualifying = [c for c in choice["candidates"] if c["qualifies"]]
    assert not qualifying or chosen["worst_case_cycles"] == min(c["worst_case_cycles"] for c in qualifying)
    manifest = json.loads((out / "firmware.rlcc.json").read_text())
    assert manifest.get("backend", "trees") == choice["chosen"]
    assert "## Backend choice (`--backend auto`)" in (out / "report.md").read_text()
    assert not [p for p in tmp_path.iterdir() if p.name != "auto"]  # the other backend's files are gone
