"""The distilled-trees kind (the deployed RL-CC design and the default): the teacher sampled in
closed loop, distilled to oblivious CatBoost trees under the device budget, quantized to an
exact fixed-point model (``rlcc.fxp.model``) and generated as branch-free integer C for the PCC
SDK (stub or DOCA). Recurrent teachers distill to window trees.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlcc import formats as fmt
from rlcc.codegen.context import TREE_STYLES
from rlcc.codegen.sdk_flavours import SdkChoice, check_param_count, choose, from_manifest
from rlcc.errors import BadInputError
from rlcc.fxp.model import check_fits_context, model_params
from rlcc.kinds.base import Attempt, CompileRequest, Log, Outcome, RunContext
from rlcc.kinds.pcc import OUT_MARKER, PccKind, check_name, generate_firmware
from rlcc.progress import Progress
from rlcc.recurrent import load_policy
from rlcc.spec import ObservationSpec
from rlcc.verify.budget import cycle_budget
from rlcc.verify.check import ModelSupport
from rlcc.verify.glance import nic_section
from rlcc.verify.provenance import source_info

if TYPE_CHECKING:
    from rlcc.distill.pipeline import CompileOptions, CompileResult

# Request options that map one to one onto CompileOptions fields.
OPTION_FIELDS = ("trees", "depth", "budget_ops", "samples", "scenarios", "dagger_rounds", "candidates", "derived",
                 "equilibrium")


@dataclasses.dataclass
class TreesJob:
    request: CompileRequest
    policy: Any
    spec: ObservationSpec | None  # the --spec override (None: the ONNX metadata's)
    options: CompileOptions
    sdk: SdkChoice
    tree_style: str
    fits: Any
    escalation_budget: float | None  # default compiles' worth of work the escalation may add (None: the default)


def compile_options(request: CompileRequest, base: dict[str, Any] | None = None) -> CompileOptions:
    """The request's CompileOptions: the flags given, --quick's smaller defaults, the fidelity bar."""
    # heavy: the distiller and the simulator load in ~0.5 s; imported on use so that rlcc-verify does not load them
    from rlcc.distill.pipeline import CompileOptions

    o = request.options
    kw: dict[str, Any] = dict(base or {}, seed=request.seed)
    kw.update({k: o[k] for k in OPTION_FIELDS if o.get(k) is not None})
    if o.get("bar") is not None:
        kw["bar"] = o["bar"]
    if o.get("probe_timeout_us") is not None:
        kw["probe_timeout_ns"] = probe_timeout_ns(o["probe_timeout_us"])
    kw.setdefault("dagger_rounds", 0)
    return CompileOptions.quick(**kw) if request.quick else CompileOptions(**kw)


def probe_timeout_ns(probe_timeout_us: float) -> int:
    ns = probe_timeout_us * 1000.0
    if not math.isfinite(ns) or not 1 <= round(ns) <= fmt.PROBE_TIMEOUT_NS_MAX:
        raise BadInputError(f"--probe-timeout-us must be between 0.001 and {fmt.PROBE_TIMEOUT_NS_MAX / 1000:g} us")
    return int(round(ns))


def load_request_policy(request: CompileRequest) -> tuple[Any, ObservationSpec | None]:
    spec = ObservationSpec.from_file(str(request.spec_file)) if request.spec_file else None
    return load_policy(request.model, spec), spec


class TreesKind(PccKind):
    name = "trees"
    support = ModelSupport()  # the PCC check's defaults are the trees' (observable vectors, proofs, mutants)

    def prepare(self, request: CompileRequest) -> TreesJob:
        check_name(request.name)
        sdk = choose(request.sdk, request.slot)
        if request.budget_cycles is not None and request.budget_cycles <= 0:
            raise BadInputError("--budget-cycles must be positive")
        self.check_nic_request(request)
        options = compile_options(request)
        tree_style = request.option("tree_style", TREE_STYLES[0])
        policy, spec = load_request_policy(request)
        check_fits_context(policy.spec)  # before minutes of sampling, not after
        check_param_count(sdk, len(model_params(policy.spec)))
        options.validate()
        student = options.student_spec(policy.spec)  # a --derived the window cannot feed fails here
        fits = (cycle_budget(student, request.budget_cycles, request.target, seed=request.seed)
                if request.budget_cycles is not None else None)
        budget = request.option("escalation_budget")
        if budget is not None and not (isinstance(budget, (int, float)) and 0 <= budget <= 100):
            raise BadInputError(f"--escalation-budget must be 0..100 default compiles, got {budget}")
        return TreesJob(request, policy, spec, options, sdk, tree_style, fits, budget)

    def fit(self, job: TreesJob, run: RunContext) -> CompileResult:
        from rlcc.distill.pipeline import compile_policy  # heavy: see compile_options

        return compile_policy(job.policy, job.options, run.log, job.fits, jobs=run.jobs, progress=run.progress)

    def write_model(self, job: TreesJob, result: CompileResult, stage: Path) -> None:
        (stage / "spec.json").write_text(job.policy.spec.to_json())
        (stage / OUT_MARKER).write_text(result.model.to_json())
        (stage / "catboost.json").write_text(result.fit.catboost_json or "{}\n")

    def recipe(self, job: TreesJob) -> dict[str, Any]:
        r = job.request
        return {"backend": self.name, "options": job.options.to_dict(),
                "spec": job.spec.to_dict() if job.spec is not None else None,
                "budget_cycles": r.budget_cycles, "target": r.target if r.budget_cycles is not None else None}

    def generate(self, job: TreesJob, result: CompileResult, stage: Path) -> dict[str, Path]:
        source = {"policy": job.policy.path.name, "policy_sha256": hashlib.sha256(job.policy.model_bytes).hexdigest()}
        return generate_firmware(result.model, stage, name=job.request.name, tree_style=job.tree_style, source_info=source,
                        sdk=job.sdk, recipe=self.recipe(job))

    def verify_compiled(self, job: TreesJob, result: CompileResult, paths: dict[str, Path], stage: Path,
                        run: RunContext):
        return self.verify_into(stage, paths["c"], job.request, run)

    def closed_loop(self, job: TreesJob, result: CompileResult, verdict: Any, stage: Path, run: RunContext) -> Any:
        # The closed loop on both topologies, the firmware deciding in the time it was measured to take.
        from rlcc.distill.pipeline import check_on_suite  # heavy: see compile_options
        from rlcc.simulator.scenarios import DEFAULT_DECISION_LATENCY_US

        latency_us = verdict.worst_case_ns / 1e3 if verdict is not None else DEFAULT_DECISION_LATENCY_US
        result = check_on_suite(result, job.policy, job.options, latency_us, run.log, run.jobs, run.progress,
                                self.suite_nic(job.request, stage) if verdict is not None else None)
        return result, self.closed_loop_figure(stage, job.policy.factor, result.model, job.options, run)

    # ---- escalation (rlcc.distill.escalate): stronger compiles after a judged miss ------------------
    def escalation(self, job: TreesJob, tried: list[Attempt]) -> tuple[str, TreesJob] | None:
        from rlcc.distill import escalate  # heavy: see compile_options

        if job.request.quick:
            return None
        rung = escalate.next_rung(job.options, [_gate(a) for a in tried], _budget(job))
        return None if rung is None else (rung.name, dataclasses.replace(job, options=rung.options))

    def rank(self, attempt: Attempt) -> Any:
        from rlcc.distill import escalate  # heavy: see compile_options

        return escalate.rank(_gate(attempt))

    def note_attempts(self, kept: Attempt, tried: list[Attempt]) -> Any:
        from rlcc.distill import escalate  # heavy: see compile_options

        result, plot = kept.checked
        rec = escalate.record(tried[0].job.options, [_gate(a) for a in tried], [a.what for a in tried],
                              tried.index(kept), _budget(tried[0].job))
        return dataclasses.replace(result, report=dataclasses.replace(result.report, escalation=rec)), plot

    def report(self, job: TreesJob, checked: Any, verdict: Any, failure: Any, stage: Path, run: RunContext) -> Outcome:
        from rlcc.distill import report as report_mod  # heavy: see compile_options

        result, plot = checked
        (stage / "report.json").write_text(report_mod.to_json(result.report))
        constant = report_mod.constant_policy_note(result.model)
        glance = nic_section(verdict, result.report.gate.headline, plot=plot)
        (stage / "report.md").write_text(report_mod.to_markdown(result.report, ["", f"**Note: {constant}.**", *glance]
                                                                if constant else glance))
        f, s, gate = result.report.fidelity, result.report.sizes, result.report.gate
        return Outcome(
            self.name, stage, verdict, failure, gate.passed, preview=gate.preview, unsettled=gate.unsettled,
            gate_line=f"rlcc-compile: {gate.console_line()}",
            wrote_line=(f"rlcc-compile: wrote {stage}: {s.trees} trees, {s.operations} ops, state {s.state_bytes} B; "
                        f"RMSE vs teacher {f.float_vs_teacher_rmse:.4f}, quantization path changes "
                        f"{f.path_changed_fraction:.4f} ({run.seconds():.1f}s)" + (f"; {constant}" if constant else "")),
            **self.verification_lines(verdict))

    def rebuild(self, policy: Path, raw: dict[str, Any], jobs: int, log: Log, progress: Progress) -> dict[str, Path]:
        from rlcc.distill.pipeline import CompileOptions, compile_policy  # heavy: see compile_options

        recipe = raw["compile"]
        options = CompileOptions.from_dict(recipe.get("options"))
        spec = ObservationSpec.from_dict(recipe["spec"]) if recipe.get("spec") is not None else None
        teacher = load_policy(policy, spec)
        budget = recipe.get("budget_cycles")
        fits = (cycle_budget(options.student_spec(teacher.spec), int(budget), str(recipe.get("target")), seed=options.seed)
                if budget else None)
        result = compile_policy(teacher, options, log, fits, jobs=jobs, progress=progress, measure=False)
        return generate_firmware(result.model, policy.parent / "out", name=raw["name"], tree_style=raw["tree_style"],
                        source_info=source_info(policy), sdk=from_manifest(raw), recipe=recipe)




def _gate(attempt: Attempt) -> Any:
    """An attempt's fidelity verdict (``closed_loop`` returned (result, plot))."""
    return attempt.checked[0].report.gate


def _budget(job: TreesJob) -> float:
    from rlcc.distill.escalate import DEFAULT_BUDGET  # heavy: see compile_options

    return DEFAULT_BUDGET if job.escalation_budget is None else float(job.escalation_budget)
