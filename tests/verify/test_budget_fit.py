"""rlcc-compile --budget-cycles keeps the largest tree prefix whose firmware fits the budget."""

from __future__ import annotations

import json

from click.testing import CliRunner
import pytest

from rlcc.cli.compile import compile_command
from rlcc.fxp.model import FxModel

QUICK = ["--accept-fidelity", "--quick", "--samples", "1500", "--scenarios", "many-to-one:2:8,many-to-one:16:12"]


@pytest.mark.slow
def test_cycle_budget_shrinks_the_ensemble_to_fit(tmp_path, example_policy):
    full, tight = tmp_path / "FULL", tmp_path / "TIGHT"
    assert CliRunner().invoke(compile_command, [str(example_policy), "-o", str(full), *QUICK]).exit_code == 0
    worst_full = json.loads((full / "verify.json").read_text())["cycles"]["max"]
    budget = worst_full - 20  # forces dropping trees (two trees cost one lookup: each is worth a few cycles)
    result = CliRunner().invoke(compile_command, [str(example_policy), "-o", str(tight), *QUICK, "--budget-cycles", str(budget)])
    assert result.exit_code == 0, result.output
    verdict = json.loads((tight / "verify.json").read_text())
    assert verdict["passed"] and verdict["cycles"]["max"] <= budget
    assert verdict["budget"]["cycles"] == budget
    n_full = len(FxModel.from_file(str(full / "model.rlcc.json")).trees)
    n_tight = len(FxModel.from_file(str(tight / "model.rlcc.json")).trees)
    assert 0 < n_tight < n_full
    assert "cycle budget kept the largest prefix" in (tight / "report.md").read_text()
