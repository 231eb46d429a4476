"""Cycle budget for distillation: does a candidate ensemble's firmware fit N cycles per event?

Used by ``rlcc-compile --budget-cycles`` as the fitter's ``FitsBudget`` predicate, so the
largest prefix of boosted trees whose generated C meets the budget on the emulator is kept.
"""

from __future__ import annotations

import tempfile

from rlcc.codegen import generate
from rlcc.tree_ir import FitsBudget, FloatEnsemble
from rlcc.fxp.quantize import quantize
from rlcc.fxp.vectors import concat
from rlcc.verify.generators import boundary_vectors, random_vectors
from rlcc.spec import ObservationSpec
from rlcc.targets import DEFAULT_TARGET
from rlcc.verify.firmware_run import run_firmware

PROBE_RANDOM_VECTORS = 2000


def worst_case_cycles(ensemble: FloatEnsemble, spec: ObservationSpec, target: str = DEFAULT_TARGET.name, profile: str | None = None) -> int:
    """Worst cycles per event of the firmware generated for ``ensemble`` (boundary + random vectors)."""
    model, _ = quantize(ensemble, spec)
    vectors = concat(boundary_vectors(model), random_vectors(model, PROBE_RANDOM_VECTORS, 1))
    with tempfile.TemporaryDirectory(prefix="rlcc-budget-") as work:
        out = run_firmware(generate(model, work, vectors=vectors)["c"], vectors, target, profile)
    return int(out["cycles"].max())


def cycle_budget(spec: ObservationSpec, budget_cycles: int, target: str = DEFAULT_TARGET.name, profile: str | None = None) -> FitsBudget:
    """A predicate: True when the ensemble's firmware worst case is within ``budget_cycles``."""

    def fits(ensemble: FloatEnsemble) -> bool:
        return worst_case_cycles(ensemble, spec, target, profile) <= budget_cycles

    return fits
