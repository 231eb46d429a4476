"""What the kinds that compile a PCC policy (an ONNX policy with an ``rlcc.spec``) into NIC
firmware for the PCC SDK share: the same event handlers, manifest format and verification
(``rlcc.verify.check``); each such kind says only what differs (``support``: its vectors,
whether it can be proven, how to recompile it).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Callable

import numpy as np

from rlcc.codegen import manifest as manifest_io
from rlcc.codegen.context import check_firmware_name
from rlcc.codegen.generate import TREES, Lowering, generate
from rlcc.emulator.cycle_model import Profile, load_profile
from rlcc.errors import BadInputError, BuildError, EmulationError
from rlcc.fxp.vectors import Vectors, concat
from rlcc.verify.generators import pinned_vectors, verification_set
from rlcc.kinds.base import Log, ModelKind, RunContext, VerifyOutcome, VerifyRequest
from rlcc.targets import TARGETS
from rlcc.verify.check import ModelSupport, VerifyResult, verify_firmware
from rlcc.verify.firmware_run import firmware_build
from rlcc.verify import report as verify_report

OUT_MARKER = "model.rlcc.json"  # in every OUT (written before the C): --force replaces only such directories


def check_name(name: str) -> str:
    """``--name``: a C identifier (``check_firmware_name``) whose manifest NAME.rlcc.json is not OUT's model file."""
    check_firmware_name(name, "--name")
    if f"{name}.rlcc.json" == OUT_MARKER:
        raise BadInputError(f"--name {name!r} is reserved: {name}.rlcc.json would overwrite the compiled model {OUT_MARKER}")
    return name


def generate_firmware(model: Any, out_dir: Path, *, lowering: Lowering = TREES, **kwargs: Any) -> dict[str, Path]:
    """``rlcc.codegen.generate`` with the pinned vectors the manifest carries (``pinned_vectors``)."""
    return generate(model, out_dir, lowering=lowering, vectors=pinned_vectors(model), **kwargs)


class PccKind(ModelKind):
    """Base of the PCC-firmware kinds; ``support`` is the kind's part of the PCC check."""

    support: ModelSupport

    def owns_manifest(self, raw: dict[str, Any]) -> bool:
        """A PCC manifest (no ``kind``: that key marks other devices' firmware) whose model is this
        kind's: ``backend`` for a non-tree device model, else the recipe's backend (trees by default)."""
        if "kind" in raw:
            return False
        recipe = raw.get("compile") if isinstance(raw.get("compile"), dict) else {}
        return raw.get("backend", recipe.get("backend", "trees")) == self.name


    @staticmethod
    def check_nic_request(request: Any) -> None:
        """``--nic-cores/--nic-threads`` need the verification's measured cycles: refused before the work."""
        if (request.option("nic_cores") or request.option("nic_threads")) and not request.run_verify:
            raise BadInputError("--nic-cores/--nic-threads run the closed-loop check on the firmware's measured cycles: "
                                "drop --no-verify")

    @staticmethod
    def suite_nic(request: Any, stage: Path) -> Any:
        """The decision processor the closed-loop check runs the firmware on (None: off, the default):
        ``--nic-cores`` x ``--nic-threads`` threads per NIC at the cycles and clock ``stage/verify.json`` records."""
        cores, threads = request.option("nic_cores"), request.option("nic_threads")
        if cores is None and threads is None:
            return None
        from rlcc.simulator.nic import NicConfig, verify_cycles  # heavy: see closed_loop_figure

        cycles, clock = verify_cycles(stage / "verify.json")
        cfg = NicConfig(cores=cores or 1, threads=threads or 1, decision_cycles=cycles, clock_hz=clock)
        cfg.validate()
        return cfg

    def verify_into(self, stage: Path, firmware_c: Path, request: Any, run: RunContext,
                    then: Callable[[VerifyResult], None] | None = None) -> tuple[VerifyResult | None, BuildError | EmulationError | None]:
        """Verify the generated C and write ``stage/verify.json``; a build or emulator failure is
        returned. ``then`` runs on the verdict (more measurements), inside the same failure handling."""
        name, target = request.name, request.target
        run.log(f"verifying {name}.c on {target} in the emulator")
        try:
            with run.progress(f"verifying {name}.c on {target}", "step") as bar:
                verdict = verify_firmware(firmware_c, target=target, budget_ns=request.budget_ns,
                                          budget_cycles=request.budget_cycles, seed=request.seed, stage=bar,
                                          support=self.support)
            if then is not None:
                then(verdict)
        except (BuildError, EmulationError) as exc:
            return None, exc
        verdict.firmware = f"{name}.c"
        verify_report.write_json(verdict, stage / "verify.json")
        return verdict, None

    @staticmethod
    def closed_loop_figure(stage: Path, teacher: Any, model: Any, options: Any, run: RunContext) -> tuple[str, str]:
        """Write ``closed_loop_plot.FILE_NAME`` into ``stage``; (file name, caption) for report.md."""
        from rlcc.distill import closed_loop_plot  # heavy: the simulator; rlcc-verify does not load it

        run.log(f"closed loop: plotting teacher vs firmware over time ({closed_loop_plot.FILE_NAME})")
        with run.progress("closed loop: teacher vs firmware over time", "sim-ms") as bar:
            caption = closed_loop_plot.write(stage / closed_loop_plot.FILE_NAME, teacher, model, options, bar)
        return closed_loop_plot.FILE_NAME, caption

    @staticmethod
    def verification_lines(v: VerifyResult | None) -> dict[str, Any]:
        """The Outcome fields every PCC kind words alike."""
        if v is None:
            return {}
        return {"summary": verify_report.summary(v), "cycles": int(v.cycles["max"]), "worst_case_ns": v.worst_case_ns,
                "mismatch": f"firmware differs from the golden model on {v.mismatches} vectors",
                "over_budget": f"worst-case event {v.cycles['max']} cycles > budget {v.budget.cycles}"}

    # ---- rlcc-verify ----------------------------------------------------------------------------------
    def verify(self, request: VerifyRequest, log: Log) -> VerifyOutcome:
        opts = request.options
        names = list(request.profiles) or [TARGETS[request.target].default_profile]
        primary = load_profile(names[0])
        others = [load_profile(n) for n in names[1:]]
        result = verify_firmware(
            request.firmware, manifest=request.manifest, target=request.target,
            profile=names[0] if request.profiles else None, cc=request.cc, budget_cycles=opts.get("budget_cycles"),
            budget_ns=request.budget_ns, full_load=bool(opts.get("full_load")), random_count=request.random_count,
            seed=request.seed, prove=request.prove, prove_timeout_s=request.prove_timeout_s, mutants=request.mutants,
            jobs=request.jobs, progress=request.progress, policy=request.policy, expect_sha256=request.expect_sha256,
            log=log, doca_layout=opts.get("doca_layout"), support=dataclasses.replace(self.support, rebuilders=request.rebuilders))
        spread = [self.worst_case_under(request, prof) for prof in others]
        failed_proof = result.proof["assurance"] if result.proof_failed else ""
        mutants = result.mutants["survived"] if result.mutants is not None else 0
        return VerifyOutcome(
            result=result,
            summary=[verify_report.summary(result), verify_report.profile_line(primary),
                     *verify_report.spread_lines(result, primary, spread)],
            proof_error=failed_proof,
            mismatch="" if result.bit_exact else
            f"{result.mismatches} of {result.vectors} vectors differ from the golden model",
            provenance=result.provenance,
            over_budget="" if result.within_budget else
            f"worst-case event takes {result.cycles['max']} cycles, budget {result.budget.cycles}",
            mutants=f"{mutants} mutant(s) survive the vectors" if mutants else "",
            proof=result.proof, level=result.assurance_level,
            write_json=lambda path: verify_report.write_json(result, path, primary, spread),
            write_junit=lambda path: verify_report.write_junit(result, path))

    def cycles_under(self, firmware_c: Path, manifest: Path, prof: Profile, target: str, seed: int, n_random: int,
                     cc: str | None = None, doca_layout: str | None = None) -> tuple[Vectors, np.ndarray, str]:
        """(vectors, cycles per vector, target) of the firmware under cycle profile ``prof`` on the
        vectors verification runs (pinned + the kind's + boundary + ``n_random`` random + sequence),
        built for the target of the profile's XLEN (``target`` when it matches)."""
        t = TARGETS[target]
        if t.xlen != prof.xlen:
            t = next(x for x in TARGETS.values() if x.xlen == prof.xlen)
        _, model, pinned = manifest_io.load(str(manifest))
        vectors = concat(pinned, verification_set(model, seed, n_random, self.support.model_vectors)[0])
        with firmware_build(firmware_c, t, prof, cc, doca_layout=doca_layout) as fw:
            return vectors, fw.run(vectors)["cycles"], t.name

    def worst_case_under(self, request: VerifyRequest, prof: Profile) -> dict[str, Any]:
        """Worst-case cycles and ns of the firmware on the vectors verification ran, under cycle
        profile ``prof``: the spread a user sees with ``--profile dpa,ibex,...``."""
        _, cycles, target = self.cycles_under(request.firmware, request.manifest, prof, request.target, request.seed,
                                              request.random_count, request.cc, request.options.get("doca_layout"))
        worst = int(np.max(cycles))
        return {"profile": prof.name, "target": target, "clock_hz": prof.clock_hz, "worst_case_cycles": worst,
                "worst_case_ns": round(worst * 1e9 / prof.clock_hz, 1), "validation": prof.validation}
