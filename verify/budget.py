"""Cycle budget for distillation: does a candidate ensemble's firmware fit N cycles per event?

Used by ``rlcc-compile --budget-cycles`` as the fitter's ``FitsBudget`` predicate, so the
largest prefix of boosted trees whose generated C meets the budget on the emulator is kept.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from rlcc.codegen import generate
from rlcc.tree_ir import FitsBudget, FloatEnsemble
from rlcc.emulator.cycle_model import load_profile
from rlcc.fxp.quantize import quantize
from rlcc.fxp.vectors import boundary_vectors, concat, random_vectors
from rlcc.spec import ObservationSpec
from rlcc.verify.check import DEFAULT_PROFILE, TARGET_XLEN
from rlcc.verify.build import build_harness_elf
from rlcc.verify.runner import HarnessRunner, records_from_vectors

PROBE_RANDOM_VECTORS = 2000


def worst_case_cycles(ensemble: FloatEnsemble, spec: ObservationSpec, target: str = "rv64imac", profile: str | None = None) -> int:
    """Worst cycles per event of the firmware generated for ``ensemble`` (boundary + random vectors)."""
    model, _ = quantize(ensemble, spec)
    prof = load_profile(profile or DEFAULT_PROFILE[target])
    vectors = concat(boundary_vectors(model), random_vectors(model, PROBE_RANDOM_VECTORS, 1))
    zbb = prof.zbb and target == "rv64imac"
    with tempfile.TemporaryDirectory(prefix="rlcc-budget-") as work:
        paths = generate(model, work, vectors=vectors)
        elf = build_harness_elf(paths["c"], target, Path(work), zbb=zbb)
        out = HarnessRunner(elf, TARGET_XLEN[target], prof, zbb=zbb).run(records_from_vectors(vectors))
    return int(out["cycles"].max())


def cycle_budget(spec: ObservationSpec, budget_cycles: int, target: str = "rv64imac", profile: str | None = None) -> FitsBudget:
    """A predicate: True when the ensemble's firmware worst case is within ``budget_cycles``."""

    def fits(ensemble: FloatEnsemble) -> bool:
        return worst_case_cycles(ensemble, spec, target, profile) <= budget_cycles

    return fits
