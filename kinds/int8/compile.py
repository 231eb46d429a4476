"""``rlcc-compile --backend int8``: the network itself as integer firmware (``rlcc.fxp.int8_net``).

Writes into OUT atomically, like the tree backend: ``spec.json``, ``model.rlcc.json`` (the int8
network), ``NAME.c/.h/.rlcc.json``, ``verify.json``, ``closed_loop.png``, ``report.json``/``report.md``
(the firmware's numbers first, fidelity, Table I device cost with cycles per decision on the verify profile and on ``EXTRA_PROFILES``,
closed loop and the fidelity gate). Same exit codes as the tree backend.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path
from typing import Any, Callable

from rlcc import formats as fmt
from rlcc.cli.backends import OUT_MARKER, Outcome, check_name, closed_loop_figure, generate_c, verify_into
from rlcc.kinds.int8.codegen import generate
from rlcc.codegen.sdk_flavours import DEFAULT_FLAVOUR, SdkChoice
from rlcc.kinds.int8 import report as int8_report
from rlcc.kinds.int8.distill import check_on_suite, compile_int8
from rlcc.distill.pipeline import CompileOptions
from rlcc.errors import BadInputError
from rlcc.fxp.int8_net import check_state_fits
from rlcc.recurrent import load_policy
from rlcc.simulator.scenarios import DEFAULT_DECISION_LATENCY_US
from rlcc.spec import ObservationSpec
from rlcc.targets import TARGETS
from rlcc.verify.glance import nic_section
from rlcc.verify.provenance import remember as remember_compile

EXTRA_PROFILES = ("generic5",)  # Table I also reports cycles on these (besides the verify profile)


def compile_int8_outcome(model: Path, spec: ObservationSpec | None, stage: Path, options: CompileOptions, *,
                         sdk: SdkChoice, name: str, run_verify: bool, target: str, budget_ns: float | None,
                         budget_cycles: int | None, jobs: int, log: Callable[[str], None], progress, start: float) -> Outcome:
    """Calibrate, quantize, generate, verify and check the int8 network; files into ``stage``."""
    check_name(name)
    if sdk.flavour.name != DEFAULT_FLAVOUR:  # the generator refuses it too; say so before the work
        raise BadInputError(f"--backend int8 generates C for the {DEFAULT_FLAVOUR} SDK only, not --sdk {sdk.flavour.name}")
    policy = load_policy(model, spec)
    if policy.spec.recurrent is not None:  # before minutes of calibration, not after
        check_state_fits(policy.spec.recurrent.state[0].size, (policy.spec.history - 1) * policy.spec.n_features,
                         functools.partial(global_state_price, TARGETS[target].default_profile))
    result = compile_int8(policy, options, log, jobs, progress)
    stage.mkdir(parents=True, exist_ok=True)
    (stage / "spec.json").write_text(policy.spec.to_json())
    (stage / OUT_MARKER).write_text(result.model.to_json())
    source = {"policy": policy.path.name, "policy_sha256": result.model.provenance["source_sha256"], "backend": "int8"}
    recipe = {"backend": "int8", "options": options.to_dict(), "spec": spec.to_dict() if spec is not None else None}
    paths = generate_c(lambda: generate(result.model, stage, name=name, source_info=source, sdk=sdk, recipe=recipe),
                       name, log, progress)
    remember_compile(paths)
    def measure_profiles(v) -> None:
        device = {"profiles": [_profile_row(v.profile, target, v.rtt_cycles, v.worst_case_ns)]}
        device["profiles"] += [_measure_profile(paths["c"], prof) for prof in EXTRA_PROFILES]
        result.report.device = device

    verdict, failure = (verify_into(stage, paths["c"], name=name, target=target, budget_ns=budget_ns,
                                    budget_cycles=budget_cycles, seed=options.seed, log=log, progress=progress,
                                    then=measure_profiles)
                        if run_verify else (None, None))
    latency_us = verdict.worst_case_ns / 1e3 if verdict is not None else DEFAULT_DECISION_LATENCY_US
    result = check_on_suite(result, policy, options, latency_us, log, jobs, progress)
    teacher = policy if getattr(policy, "recurrent", False) else policy.factor  # as in the closed-loop tables
    plot = closed_loop_figure(stage, teacher, result.model, options, log, progress)
    r = result.report
    (stage / "report.json").write_text(int8_report.to_json(r))
    (stage / "report.md").write_text(int8_report.to_markdown(
        r, nic_section(verdict, r.gate.headline, (r.device or {}).get("profiles", ()), plot)))
    cycles = "" if verdict is None else f", {verdict.rtt_cycles['max']} cycles ({verdict.worst_case_ns:g} ns) per decision"
    gate = r.gate
    return Outcome(
        "int8", stage, verdict, failure, gate.passed, preview=gate.preview,
        gate_line=f"rlcc-compile: {gate.console_line()}",
        wrote_line=(f"rlcc-compile: wrote {stage}: int8 {r.network}, {r.sizes['macs']} MACs, {r.sizes['constant_bytes']} B "
                    f"constants, state {r.sizes['state_bytes']} B{cycles}; factor RMSE vs teacher "
                    f"{r.fidelity['rmse_vs_teacher']:.4f} ({time.perf_counter() - start:.1f}s)"))


def _profile_row(profile: str, target: str, rtt: dict[str, Any], worst_ns: float) -> dict[str, Any]:
    return {"profile": profile, "target": target, "rtt_cycles_max": int(rtt["max"]), "rtt_cycles_mean": rtt["mean"],
            "worst_case_ns": worst_ns}


def _measure_profile(firmware_c: Path, profile: str) -> dict[str, Any]:
    """RTT-decision cycles of the firmware on its manifest's vectors under another cycle profile
    (built for the target of the profile's XLEN)."""
    from rlcc.codegen import manifest as manifest_io
    from rlcc.emulator.cycle_model import load_profile
    from rlcc.verify.check import manifest_path_for
    from rlcc.verify.firmware_run import firmware_build

    prof = load_profile(profile)
    t = next(x for x in TARGETS.values() if x.xlen == prof.xlen)
    _, _, vectors = manifest_io.load(str(manifest_path_for(firmware_c)))
    with firmware_build(firmware_c, t, prof, None) as fw:
        cycles = fw.run(vectors)["cycles"]
    rtt = cycles[(vectors.event[:, fmt.EV_ATTR] & 0xFF) == fmt.EVENT_RTT]
    return _profile_row(prof.name, t.name, {"max": int(rtt.max()), "mean": round(float(rtt.mean()), 3)},
                        round(int(rtt.max()) * 1e9 / prof.clock_hz, 3))




def global_state_price(profile: str, words: int) -> str:
    """The per-decision cost of ``words`` state words in global memory on ``profile``
    (``emulator/profiles``): one load (with its use stall) and one store each."""
    from rlcc.emulator.cycle_model import load_profile

    prof = load_profile(profile)
    k = prof.costs
    cycles = words * (k["load"] + k["load_use_stall"] + k["store"])
    return f"about {cycles} cycles, {cycles * 1e9 / prof.clock_hz:.0f} ns, on profile {prof.name}, plus the address computation"
