"""The toy kind: one oblivious tree of depth 2, no candidate selection, no ramps. Everything else
(sampling, lowering, C, verification, the closed-loop gate, --policy recompiles) is the generic
machinery the kinds share; the kind says only how its student is shaped."""

from __future__ import annotations

import dataclasses

from rlcc.kinds.base import CompileRequest
from rlcc.kinds.trees.kind import TreesJob, TreesKind

STUMP = {"trees": 1, "depth": 2, "candidates": 1, "equilibrium": "none", "derived": "none"}


class StumpKind(TreesKind):
    name = "stump"

    def prepare(self, request: CompileRequest) -> TreesJob:
        return super().prepare(dataclasses.replace(request, options={**request.options, **STUMP}))
