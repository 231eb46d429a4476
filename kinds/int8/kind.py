"""The int8 kind: the network itself (MLP or LSTM) as int8 integer firmware for the PCC SDK stub,
calibrated on closed-loop samples and quantized per layer (``rlcc.fxp.int8_net`` is the device
model), to measure its cost and fidelity on the same core model as the trees. Files in OUT:
``spec.json``, ``model.rlcc.json`` (the int8 network), ``NAME.c/.h/.rlcc.json``, ``verify.json``,
``closed_loop.png``, ``report.json``/``report.md`` (Table I device cost with cycles per decision
on the verify profile and on ``EXTRA_PROFILES``).
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlcc import formats as fmt
from rlcc.codegen.sdk_flavours import DEFAULT_FLAVOUR, SdkChoice, choose, from_manifest
from rlcc.emulator.cycle_model import load_profile
from rlcc.errors import BadInputError
from rlcc.fxp.int8_net import check_state_fits
from rlcc.kinds.base import CompileRequest, Log, Outcome, RunContext
from rlcc.kinds.int8.codegen import SUPPORT, generate
from rlcc.kinds.pcc import OUT_MARKER, PccKind, check_name
from rlcc.kinds.trees.kind import compile_options, load_request_policy
from rlcc.progress import Progress
from rlcc.recurrent import load_policy
from rlcc.spec import ObservationSpec
from rlcc.targets import TARGETS
from rlcc.verify.glance import nic_section
from rlcc.verify.provenance import source_info

if TYPE_CHECKING:
    from rlcc.distill.pipeline import CompileOptions
    from rlcc.kinds.int8.distill import Int8Result

EXTRA_PROFILES = ("generic5",)  # Table I also reports cycles on these (besides the verify profile)
PROFILE_RANDOM_VECTORS = 1024  # random vectors of that measurement (its worst case is the RTT decision's)
TREE_ONLY = ("trees", "depth", "budget_ops", "candidates", "derived", "equilibrium", "dagger_rounds", "tree_style")


@dataclasses.dataclass
class Int8Job:
    request: CompileRequest
    policy: Any
    spec: ObservationSpec | None
    options: CompileOptions
    sdk: SdkChoice


class Int8Kind(PccKind):
    name = "int8"
    support = SUPPORT

    def prepare(self, request: CompileRequest) -> Int8Job:
        check_name(request.name)
        self.check_nic_request(request)
        if request.sdk != DEFAULT_FLAVOUR:  # the generator refuses it too; say so before the work
            raise BadInputError(f"--backend int8 generates C for the {DEFAULT_FLAVOUR} SDK only, not --sdk {request.sdk}")
        tree_flags = {k: v for k, v in request.options.items() if k not in TREE_ONLY}
        options = compile_options(dataclasses.replace(request, options=tree_flags))
        policy, spec = load_request_policy(request)
        if policy.spec.recurrent is not None:  # before minutes of calibration, not after
            check_state_fits(policy.spec.recurrent.state[0].size, (policy.spec.history - 1) * policy.spec.n_features,
                             functools.partial(global_state_price, TARGETS[request.target].default_profile))
        return Int8Job(request, policy, spec, options, choose(request.sdk, request.slot))

    def fit(self, job: Int8Job, run: RunContext) -> Int8Result:
        # heavy: the distiller and the simulator load in ~0.5 s; imported on use so that rlcc-verify does not load them
        from rlcc.kinds.int8.distill import compile_int8

        return compile_int8(job.policy, job.options, run.log, run.jobs, run.progress)

    def write_model(self, job: Int8Job, result: Int8Result, stage: Path) -> None:
        (stage / "spec.json").write_text(job.policy.spec.to_json())
        (stage / OUT_MARKER).write_text(result.model.to_json())

    def recipe(self, job: Int8Job) -> dict[str, Any]:
        return {"backend": self.name, "options": job.options.to_dict(),
                "spec": job.spec.to_dict() if job.spec is not None else None}

    def generate(self, job: Int8Job, result: Int8Result, stage: Path) -> dict[str, Path]:
        source = {"policy": job.policy.path.name, "policy_sha256": result.model.provenance["source_sha256"],
                  "backend": self.name}
        return generate(result.model, stage, name=job.request.name, source_info=source, sdk=job.sdk,
                        recipe=self.recipe(job))

    def verify_compiled(self, job: Int8Job, result: Int8Result, paths: dict[str, Path], stage: Path, run: RunContext):
        target = job.request.target

        def measure_profiles(v: Any) -> None:
            device = {"profiles": [_profile_row(v.profile, target, v.rtt_cycles, v.worst_case_ns)]}
            device["profiles"] += [self._measure_profile(paths, prof, target) for prof in EXTRA_PROFILES]
            result.report.device = device

        return self.verify_into(stage, paths["c"], job.request, run, then=measure_profiles)

    def closed_loop(self, job: Int8Job, result: Int8Result, verdict: Any, stage: Path, run: RunContext) -> Any:
        from rlcc.kinds.int8.distill import check_on_suite  # heavy: see fit
        from rlcc.simulator.scenarios import DEFAULT_DECISION_LATENCY_US

        latency_us = verdict.worst_case_ns / 1e3 if verdict is not None else DEFAULT_DECISION_LATENCY_US
        result = check_on_suite(result, job.policy, job.options, latency_us, run.log, run.jobs, run.progress,
                                self.suite_nic(job.request, stage) if verdict is not None else None)
        teacher = job.policy if getattr(job.policy, "recurrent", False) else job.policy.factor  # as in the tables
        return result, self.closed_loop_figure(stage, teacher, result.model, job.options, run)

    def report(self, job: Int8Job, checked: Any, verdict: Any, failure: Any, stage: Path, run: RunContext) -> Outcome:
        from rlcc.kinds.int8 import report as int8_report  # heavy: see fit

        result, plot = checked
        r = result.report
        (stage / "report.json").write_text(int8_report.to_json(r))
        (stage / "report.md").write_text(int8_report.to_markdown(
            r, nic_section(verdict, r.gate.headline, (r.device or {}).get("profiles", ()), plot)))
        cycles = "" if verdict is None else f", {verdict.rtt_cycles['max']} cycles ({verdict.worst_case_ns:g} ns) per decision"
        gate = r.gate
        return Outcome(
            self.name, stage, verdict, failure, gate.passed, preview=gate.preview, unsettled=gate.unsettled,
            gate_line=f"rlcc-compile: {gate.console_line()}", fidelity_subject="the int8 network",
            wrote_line=(f"rlcc-compile: wrote {stage}: int8 {r.network}, {r.sizes['macs']} MACs, "
                        f"{r.sizes['constant_bytes']} B constants, state {r.sizes['state_bytes']} B{cycles}; factor RMSE "
                        f"vs teacher {r.fidelity['rmse_vs_teacher']:.4f} ({run.seconds():.1f}s)"),
            **self.verification_lines(verdict))

    def _measure_profile(self, paths: dict[str, Path], profile: str, target: str) -> dict[str, Any]:
        """RTT-decision cycles under another cycle profile (built for its XLEN's target), on the
        verification vectors with ``PROFILE_RANDOM_VECTORS`` random ones."""
        prof = load_profile(profile)
        vectors, cycles, built_for = self.cycles_under(paths["c"], paths["manifest"], prof, target, 0,
                                                       PROFILE_RANDOM_VECTORS)
        rtt = cycles[(vectors.event[:, fmt.EV_ATTR] & 0xFF) == fmt.EVENT_RTT]
        return _profile_row(prof.name, built_for, {"max": int(rtt.max()), "mean": round(float(rtt.mean()), 3)},
                            round(int(rtt.max()) * 1e9 / prof.clock_hz, 3))

    def rebuild(self, policy: Path, raw: dict[str, Any], jobs: int, log: Log, progress: Progress) -> dict[str, Path]:
        from rlcc.distill.pipeline import CompileOptions  # heavy: see fit
        from rlcc.kinds.int8.distill import compile_int8

        recipe = raw["compile"]
        options = CompileOptions.from_dict(recipe.get("options"))
        spec = ObservationSpec.from_dict(recipe["spec"]) if recipe.get("spec") is not None else None
        result = compile_int8(load_policy(policy, spec), options, log, jobs, progress)
        return generate(result.model, policy.parent / "out", name=raw["name"], sdk=from_manifest(raw), recipe=recipe,
                        source_info={**source_info(policy), "backend": self.name})


def _profile_row(profile: str, target: str, rtt: dict[str, Any], worst_ns: float) -> dict[str, Any]:
    return {"profile": profile, "target": target, "rtt_cycles_max": int(rtt["max"]), "rtt_cycles_mean": rtt["mean"],
            "worst_case_ns": worst_ns}




def global_state_price(profile: str, words: int) -> str:
    """The per-decision cost of ``words`` state words in global memory on ``profile``
    (``emulator/profiles``): one load (with its use stall) and one store each."""
    prof = load_profile(profile)
    k = prof.costs
    cycles = words * (k["load"] + k["load_use_stall"] + k["store"])
    return f"about {cycles} cycles, {cycles * 1e9 / prof.clock_hz:.0f} ns, on profile {prof.name}, plus the address computation"
