"""``rlcc-compile`` end to end: pick the model's kind, run its steps into a staging directory
that becomes OUT atomically, and return the outcome (the CLI prints it and exits on it).

Errors before the C exists write nothing; once it exists, a failed verification still writes
OUT (to inspect the firmware), and the outcome carries the failure.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from rlcc.kinds import registry
from rlcc.kinds.base import CompileRequest, Outcome, RunContext
from rlcc.kinds.pcc import OUT_MARKER
from rlcc.pipeline.auto import compile_auto
from rlcc.pipeline.outdir import atomic_output_dir, claimed_output_dir

AUTO = "auto"


def backends() -> list[str]:
    """``--backend`` values: the selectable kinds (the first is the default) and ``auto``."""
    return registry.selectable() + [AUTO]


def compile_to(request: CompileRequest, out: Path, force: bool, run: RunContext) -> Outcome:
    """Compile ``request`` into OUT (checked and locked now, not after minutes of work)."""
    with claimed_output_dir(out, force, "-o", marker=OUT_MARKER):
        declared = registry.declared_by(request.model)
        with atomic_output_dir(out, overwrite=force, marker=OUT_MARKER) as stage:
            if declared is None and (request.backend or registry.default().name) == AUTO:
                outcome = compile_auto(request, stage, run)
            else:
                kind = declared or registry.get(request.backend or registry.default().name)
                outcome = kind.compile_into(request, stage, run)
    return dataclasses.replace(outcome, directory=out,
                               wrote_line=outcome.wrote_line.replace(str(outcome.directory), str(out)))
