"""The compile report as typed records: what ``rlcc-compile`` measured, section by section.

``rlcc.distill.pipeline`` fills them, ``rlcc.distill.report`` renders them (``report.json`` is
their ``dataclasses.asdict``, ``report.md`` the readable view), the CLI prints from them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rlcc.fxp.quantize import QuantizeStats

from rlcc.distill.closed_loop import ClosedLoop
from rlcc.distill.gate import FidelityVerdict
from rlcc.distill.window import WindowChoice


@dataclasses.dataclass(frozen=True)
class Fidelity:
    """Open-loop fidelity on a sample set (``rlcc.distill.evaluate.fidelity``)."""

    samples: int
    float_vs_teacher_rmse: float
    float_vs_teacher_max_abs: float
    fixed_vs_teacher_rmse: float
    fixed_vs_teacher_max_abs: float
    fixed_vs_float_max_lsb: float  # threshold/leaf quantization alone: same device integers
    path_changed_fraction: float
    fixed_vs_float_end_to_end_max_lsb: float  # device integer features vs the spec's float ones
    fixed_vs_float_end_to_end_mean_lsb: float
    path_changed_fraction_end_to_end: float


@dataclasses.dataclass(frozen=True)
class Probe:
    """One cell of the explainability probe: factor for (previous, current) network state."""

    previous: str
    current: str
    teacher: float
    float_trees: float
    fixed_point: float


@dataclasses.dataclass(frozen=True)
class Sizes:
    state_bytes: int
    context_bytes: int
    state_fits_context: bool
    model_constant_bytes: int
    trees: int
    depths: list[int]
    splits: int
    leaves: int
    operations: int
    paper_operations: int


@dataclasses.dataclass(frozen=True)
class Teacher:
    path: str
    input_names: list[str]
    clamped_fraction: float  # visited states whose factor the spec's clamp cut
    factor_range: dict[str, Any] | None


@dataclasses.dataclass(frozen=True)
class Fit:
    trees_requested: int
    trees_budget: int
    trees: int
    depth: int
    budget_ops: int
    constant_teacher: bool
    # Ramps around the teacher's equilibrium (rlcc.distill.equilibrium): one dict per ramp (input
    # name, center, interval, slopes), and why there are none when empty.
    ramps: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    ramps_note: str = ""


@dataclasses.dataclass(frozen=True)
class Dataset:
    train: int
    held_out: int
    train_by_origin: dict[str, int]
    train_by_scenario: dict[str, int]


@dataclasses.dataclass(frozen=True)
class Round:
    """One fit of the on-policy/DAgger sequence, with a cheap steady-state closed loop."""

    round: int
    kind: str
    held_out: Fidelity
    on_policy_before_refit: Fidelity | None
    closed_loop: ClosedLoop


@dataclasses.dataclass(frozen=True)
class Helped:
    scenario: str
    closed_loop_gap_round0: float
    closed_loop_gap_final: float
    held_out_rmse_round0: float
    held_out_rmse_final: float
    closed_loop_improved: bool


@dataclasses.dataclass(frozen=True)
class Dagger:
    rounds: list[Round]
    helped: Helped | None


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One candidate model of the final fit and its closed-loop validation score."""

    name: str
    settings: dict[str, Any]
    score: float  # worst normalized excess over the validation suite (<= 1: within the bar)
    worst: str  # which check gave it


@dataclasses.dataclass(frozen=True)
class Selection:
    suite: list[str]  # validation scenarios, disjoint from the closed-loop tables below
    candidates: list[Candidate]
    chosen: str


@dataclasses.dataclass(frozen=True)
class EscalationAttempt:
    attempt: int  # 1 = the default compile
    what: str
    verdict: str  # the gate's headline
    worst: str  # the check furthest beyond (or closest to) the bar
    kept: bool


@dataclasses.dataclass(frozen=True)
class Escalation:
    """What a compile tried after the gate missed (``rlcc.distill.escalate``)."""

    budget: float  # default compiles' worth of work allowed
    attempts: list[EscalationAttempt]
    stopped: str  # why it stopped


@dataclasses.dataclass(frozen=True)
class CompileReport:
    teacher: Teacher
    options: dict[str, Any]
    dataset: Dataset
    fit: Fit
    quantization: QuantizeStats
    fidelity: Fidelity
    closed_loop: ClosedLoop  # startup transient
    closed_loop_steady: ClosedLoop
    explainability: list[Probe]
    sizes: Sizes
    dagger: Dagger
    selection: Selection | None
    gate: FidelityVerdict
    # The reduced suite on both topologies, the fixed point at its measured decision latency
    # (rlcc-compile adds it after verification; None with --no-verify or before).
    closed_loop_suite: ClosedLoop | None = None
    suite_latency_us: float | None = None
    # A recurrent teacher's window student: the window chosen on held-out decisions (None otherwise).
    window: WindowChoice | None = None
    # What the compile tried after the gate missed (None: the default compile passed, or was not judged).
    escalation: Escalation | None = None
    # Which scales and regimes training, validation and the gate covered (rlcc.distill.coverage).
    coverage: list[dict[str, Any]] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON data; the gate adds its derived verdicts (``passed`` per check and overall)."""
        def plain(v: Any) -> Any:
            return [plain(x) for x in v] if isinstance(v, list) else dataclasses.asdict(v) if dataclasses.is_dataclass(v) else v

        out = {f.name: plain(getattr(self, f.name)) for f in dataclasses.fields(self) if f.name != "gate"}
        out["gate"] = self.gate.to_dict()
        return out
