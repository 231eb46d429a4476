"""ACC's switch agent as a kind: an ONNX Q-network carrying an ``rlcc.switch_agent`` spec (the ECN
tuner) is sampled in closed loop (DCQCN hosts, incast and trace workloads, single switch and
leaf-spine), its argmax distilled into an integer CatBoost multiclass classifier under the device
budget, generated as C for the switch SDK stub, verified bit for bit in the RISC-V emulator
(cycles per decision and per monitoring interval over ``--ports`` ports) and gated on the
closed-loop comparison with the teacher. The model file declares the kind (no ``--backend``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlcc.distill.fit import DEFAULT_DEPTH, DEFAULT_TREES
from rlcc.errors import BadInputError, BuildError, EmulationError
from rlcc.kinds.base import CompileRequest, Log, ModelKind, Outcome, RunContext, VerifyOutcome, VerifyRequest
from rlcc.kinds.pcc import OUT_MARKER, check_name
from rlcc.kinds.switch_agent.check import DEFAULT_PORTS, SwitchVerifyResult, summary, verify_switch_firmware
from rlcc.kinds.switch_agent.codegen import KIND, generate_switch_firmware
from rlcc.kinds.switch_agent.glance import switch_section
from rlcc.progress import Progress
from rlcc.switch_policy import QNetPolicy, is_switch_agent
from rlcc.verify.check import assurance_level
from rlcc.verify.provenance import source_info

if TYPE_CHECKING:
    from rlcc.kinds.switch_agent.distill import SwitchCompileResult

DEFAULT_DAGGER_ROUNDS = 1


@dataclasses.dataclass
class SwitchJob:
    request: CompileRequest
    teacher: QNetPolicy
    recipe: dict[str, Any]
    ports: int
    budget_us: float | None


class SwitchAgentKind(ModelKind):
    name = KIND
    selectable = False  # the ONNX metadata declares it

    def detects(self, model: Path) -> bool:
        return is_switch_agent(model)

    def owns_manifest(self, raw: dict[str, Any]) -> bool:
        return raw.get("kind") == KIND

    def prepare(self, request: CompileRequest) -> SwitchJob:
        # heavy: the distiller imports the simulator (~0.5 s); imported on use so that rlcc-verify does not load it
        from rlcc.kinds.switch_agent.distill import switch_recipe

        check_name(request.name)
        if request.option("nic_cores") or request.option("nic_threads"):
            raise BadInputError("--nic-cores/--nic-threads apply to PCC firmware (the NIC's decisions), not to a switch agent")
        recipe = switch_recipe(request.option("trees", DEFAULT_TREES), request.option("depth", DEFAULT_DEPTH),
                               request.option("dagger_rounds", DEFAULT_DAGGER_ROUNDS), request.seed, request.quick)
        budget_us = None if request.budget_ns is None else request.budget_ns / 1e3
        return SwitchJob(request, QNetPolicy(request.model), recipe, request.option("ports", DEFAULT_PORTS), budget_us)

    def recipe(self, job: SwitchJob) -> dict[str, Any]:
        return job.recipe

    def fit(self, job: SwitchJob, run: RunContext) -> SwitchCompileResult:
        # heavy: see prepare
        from rlcc.kinds.switch_agent.distill import SwitchFidelityBar, compile_switch_agent, switch_options

        options = dataclasses.replace(switch_options(job.recipe), bar=SwitchFidelityBar())
        return compile_switch_agent(job.teacher, options, run.log)

    def write_model(self, job: SwitchJob, result: SwitchCompileResult, stage: Path) -> None:
        (stage / "spec.json").write_text(job.teacher.spec.to_json() + "\n")
        (stage / OUT_MARKER).write_text(json.dumps(result.model.to_dict(), sort_keys=True) + "\n")
        (stage / "catboost.json").write_text(result.fit.catboost_json + "\n")

    def generate(self, job: SwitchJob, result: SwitchCompileResult, stage: Path) -> dict[str, Path]:
        t = job.teacher
        source = {"policy": t.path.name, "policy_sha256": hashlib.sha256(t.model_bytes).hexdigest()}
        return generate_switch_firmware(t.spec, result.model, stage, target=job.request.target, name=job.request.name,
                                        source_info=source, recipe=job.recipe)

    def verify_compiled(self, job: SwitchJob, result: SwitchCompileResult, paths: dict[str, Path], stage: Path,
                        run: RunContext) -> tuple[SwitchVerifyResult | None, BuildError | EmulationError | None]:
        r = job.request
        run.log(f"verifying {r.name}.c on {r.target} in the emulator ({job.ports} ports per interval)")
        try:
            verdict = verify_switch_firmware(paths["c"], target=r.target, n_ports=job.ports, budget_us=job.budget_us,
                                             seed=r.seed)
        except (BuildError, EmulationError) as exc:
            return None, exc
        verdict.firmware = f"{r.name}.c"
        (stage / "verify.json").write_text(json.dumps(verdict.to_dict(), sort_keys=True, indent=1) + "\n")
        return verdict, None

    def closed_loop(self, job: SwitchJob, result: SwitchCompileResult, verdict: Any, stage: Path,
                    run: RunContext) -> SwitchCompileResult:
        return result  # the switch agent's closed-loop check runs inside its fit (``compile_switch_agent``)

    def report(self, job: SwitchJob, r: SwitchCompileResult, v: SwitchVerifyResult | None, failure: Any, stage: Path,
               run: RunContext) -> Outcome:
        from rlcc.kinds.switch_agent import report as switch_report  # heavy: see prepare

        data = switch_report.to_dict(job.teacher.spec, r, {"verify": summary(v)} if v is not None else None)
        (stage / "report.json").write_text(switch_report.to_json(data))
        (stage / "report.md").write_text(switch_report.to_markdown(data, switch_section(v, r.gate_headline)))
        m, worst = r.model, r.worst
        gate_line = (f"rlcc-compile: fidelity {'' if r.preview else 'gate '}{r.gate_headline}"
                     + (f": worst {worst.scenario} {worst.metric} teacher {worst.teacher:.3g} firmware {worst.firmware:.3g} "
                        f"(tolerance {worst.tolerance:.3g})" if worst else ""))
        verified = {} if v is None else {
            "summary": summary(v), "cycles": int(v.decision_cycles["max"]),
            "mismatch": f"firmware differs from the golden model on {v.mismatches + v.interval_mismatches} vectors",
            "over_budget": f"a {v.n_ports}-port interval takes {v.interval_us:.2f} us > budget {v.budget_us:g} us"}
        return Outcome(
            self.name, stage, v, failure, r.gate_passed, preview=r.preview, gate_line=gate_line,
            wrote_line=(f"rlcc-compile: wrote {stage}: switch agent, {len(m.trees)} trees, {m.n_operations} ops; "
                        f"{'held-out' if r.holdout_scenarios else 'training'} agreement {r.holdout_agreement:.4f} "
                        f"({run.seconds():.1f}s)"),
            **verified)

    def refused_verify_flags(self) -> tuple[tuple[str, str], ...]:
        return (("full_load", "--full-load"), ("budget_cycles", "--budget-cycles"), ("junit", "--junit"),
                ("doca_layout", "--doca-layout"))

    def verify(self, request: VerifyRequest, log: Log) -> VerifyOutcome:
        o = request.options
        budget_us = o.get("budget_us")
        if budget_us is None and request.budget_ns:
            budget_us = request.budget_ns / 1000.0
        result = verify_switch_firmware(
            request.firmware, request.manifest, request.target, request.profiles[0] if request.profiles else None,
            request.cc, n_ports=o.get("ports", DEFAULT_PORTS), budget_us=budget_us, random_count=request.random_count,
            seed=request.seed, mutants=request.mutants, prove=request.prove, prove_timeout_s=request.prove_timeout_s,
            policy=request.policy, expect_sha256=request.expect_sha256, jobs=request.jobs, log=log,
            rebuilders=request.rebuilders)
        return VerifyOutcome(
            result=result, summary=[summary(result)],
            proof_error=f"the proof failed: {result.proof['detail']}" if result.proof_failed else "",
            mismatch="" if result.bit_exact else
            f"{result.mismatches + result.interval_mismatches} switch-agent records differ from the golden model",
            provenance=result.provenance,
            over_budget="" if result.within_budget else
            f"one {result.n_ports}-port interval takes {result.interval_us:.2f} us, budget {result.budget_us:g} us",
            mutants=f"{result.mutants_survived} mutant(s) survive the vectors" if result.mutants_survived else "",
            proof=result.proof, level=assurance_level(result.proof),
            write_json=lambda path: path.write_text(json.dumps(result.to_dict(), indent=1, sort_keys=True) + "\n",
                                                    encoding="utf-8"))

    def rebuild(self, policy: Path, raw: dict[str, Any], jobs: int, log: Log, progress: Progress) -> dict[str, Path]:
        from rlcc.kinds.switch_agent.distill import compile_switch_agent, switch_options  # heavy: see prepare

        recipe = raw["compile"]
        teacher = QNetPolicy(policy)
        result = compile_switch_agent(teacher, switch_options(recipe), log)
        return generate_switch_firmware(teacher.spec, result.model, policy.parent / "out", target=raw["target"],
                                        name=raw["name"], source_info=source_info(policy), recipe=recipe)
