"""Cycle budget for distillation: does a candidate ensemble's firmware fit N cycles per event?

Used by ``rlcc-compile --budget-cycles`` as the fitter's ``FitsBudget`` predicate, so the
largest prefix of boosted trees whose generated C meets the budget on the emulator is kept. The
probe runs what the final check runs (the manifest's pinned vectors and ``rlcc-verify``'s own
set, same seed): the firmware's cost depends on the input (its searches branch), so a smaller
probe could pass a prefix that the final check then finds over the budget.
"""

from __future__ import annotations

import tempfile

from rlcc.codegen import generate
from rlcc.tree_ir import FitsBudget, FloatEnsemble
from rlcc.fxp.quantize import quantize
from rlcc.fxp.vectors import concat
from rlcc.verify.generators import pinned_vectors, verification_set
from rlcc.spec import ObservationSpec
from rlcc.targets import DEFAULT_TARGET
from rlcc.verify.firmware_run import run_firmware


def worst_case_cycles(ensemble: FloatEnsemble, spec: ObservationSpec, target: str = DEFAULT_TARGET.name,
                      profile: str | None = None, seed: int = 0) -> int:
    """Worst cycles per event of the firmware generated for ``ensemble`` over the vectors
    ``rlcc-verify --seed`` runs on it (its manifest's pinned vectors and the default verification set)."""
    model, _ = quantize(ensemble, spec)
    pinned = pinned_vectors(model)
    vectors = concat(pinned, verification_set(model, seed)[0])
    with tempfile.TemporaryDirectory(prefix="rlcc-budget-") as work:
        out = run_firmware(generate(model, work, vectors=pinned)["c"], vectors, target, profile)
    return int(out["cycles"].max())


def cycle_budget(spec: ObservationSpec, budget_cycles: int, target: str = DEFAULT_TARGET.name, profile: str | None = None,
                 seed: int = 0) -> FitsBudget:
    """A predicate: True when the ensemble's firmware worst case is within ``budget_cycles``
    (over the vectors the compile's own verification, with ``seed``, runs)."""

    def fits(ensemble: FloatEnsemble) -> bool:
        return worst_case_cycles(ensemble, spec, target, profile, seed) <= budget_cycles

    return fits
