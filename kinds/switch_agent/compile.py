"""`rlcc-compile` of a switch agent (an ONNX Q-network carrying an ``rlcc.switch_agent`` spec).

Samples the teacher in closed loop (DCQCN hosts, incast and trace workloads, single switch and
leaf-spine), distills its argmax into an integer CatBoost multiclass classifier under the device
budget, generates C for the switch SDK stub, verifies it bit for bit in the RISC-V emulator
(cycles per decision and per monitoring interval over ``--ports`` ports) and gates on the
closed-loop comparison with the teacher. Files in OUT: ``spec.json``, ``model.rlcc.json`` (the
classifier), ``catboost.json``, ``report.json``, ``report.md`` (the firmware's numbers first), ``NAME.c/.h/.rlcc.json``,
``verify.json``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Callable

import click
from rlcc.cli.backends import OUT_MARKER, check_name, preview_warning
from rlcc.kinds.switch_agent.codegen import generate_switch_firmware
from rlcc.kinds.switch_agent import report as switch_report
from rlcc.kinds.switch_agent.distill import (
    SwitchCompileResult,
    SwitchFidelityBar,
    compile_switch_agent,
    switch_options,
    switch_recipe,
)
from rlcc.errors import BuildError, EmulationError, ExitCode
from rlcc.switch_policy import QNetPolicy
from rlcc.kinds.switch_agent.glance import switch_section
from rlcc.verify.provenance import remember as remember_compile
from rlcc.kinds.switch_agent.check import SwitchVerifyResult, summary, verify_switch_firmware


@dataclasses.dataclass
class SwitchOutcome:
    directory: Path
    result: SwitchCompileResult
    verdict: SwitchVerifyResult | None
    failure: BuildError | EmulationError | None


def compile_switch(model: Path, stage: Path, *, trees: int, depth: int, dagger_rounds: int, seed: int, quick: bool,
                   target: str, ports: int, budget_us: float | None, name: str, run_verify: bool,
                   bar: SwitchFidelityBar, log: Callable[[str], None]) -> SwitchOutcome:
    check_name(name)
    teacher = QNetPolicy(model)
    recipe = switch_recipe(trees, depth, dagger_rounds, seed, quick)
    options = dataclasses.replace(switch_options(recipe), bar=bar)
    result = compile_switch_agent(teacher, options, log)
    stage.mkdir(parents=True, exist_ok=True)
    spec = teacher.spec
    (stage / "spec.json").write_text(spec.to_json() + "\n")
    (stage / OUT_MARKER).write_text(json.dumps(result.model.to_dict(), sort_keys=True) + "\n")
    (stage / "catboost.json").write_text(result.fit.catboost_json + "\n")
    source = {"policy": teacher.path.name, "policy_sha256": hashlib.sha256(teacher.model_bytes).hexdigest()}
    paths = generate_switch_firmware(spec, result.model, stage, target=target, name=name, source_info=source,
                                     recipe=recipe)
    remember_compile(paths)
    verdict, failure = None, None
    if run_verify:
        log(f"verifying {name}.c on {target} in the emulator ({ports} ports per interval)")
        try:
            verdict = verify_switch_firmware(paths["c"], target=target, n_ports=ports, budget_us=budget_us, seed=seed)
            verdict.firmware = f"{name}.c"
            (stage / "verify.json").write_text(json.dumps(verdict.to_dict(), sort_keys=True, indent=1) + "\n")
        except (BuildError, EmulationError) as exc:
            failure = exc
    data = switch_report.to_dict(spec, result, {"verify": summary(verdict)} if verdict is not None else None)
    (stage / "report.json").write_text(switch_report.to_json(data))
    (stage / "report.md").write_text(switch_report.to_markdown(data, switch_section(verdict, result.gate_headline)))
    return SwitchOutcome(stage, result, verdict, failure)


def finish_switch(o: SwitchOutcome, out: Path, accept_fidelity: bool, quiet: bool, start: float) -> None:
    """Print the outcome and exit with the NIC path's codes (6/7 build/emulator, 4, 5, 8)."""
    r, m = o.result, o.result.model
    click.echo(f"rlcc-compile: wrote {out}: switch agent, {len(m.trees)} trees, {m.n_operations} ops; "
               f"{'held-out' if r.holdout_scenarios else 'training'} agreement {r.holdout_agreement:.4f} "
               f"({time.perf_counter() - start:.1f}s)")
    worst = r.worst
    if not quiet:
        click.echo(f"rlcc-compile: fidelity {'' if r.preview else 'gate '}{r.gate_headline}"
                   + (f": worst {worst.scenario} {worst.metric} teacher {worst.teacher:.3g} firmware {worst.firmware:.3g} "
                      f"(tolerance {worst.tolerance:.3g})" if worst else ""))
    if o.failure is not None:
        raise o.failure
    v = o.verdict
    if v is not None:
        if not quiet or not v.passed:
            click.echo(summary(v))
        if not v.bit_exact:
            click.echo(f"rlcc-compile: error: firmware differs from the golden model on {v.mismatches + v.interval_mismatches} vectors", err=True)
            sys.exit(int(ExitCode.MISMATCH))
        if not v.within_budget:
            click.echo(f"rlcc-compile: error: a {v.n_ports}-port interval takes {v.interval_us:.2f} us > budget {v.budget_us:g} us", err=True)
            sys.exit(int(ExitCode.BUDGET))
    if r.preview:
        preview_warning("rlcc-compile", not r.gate_passed, quiet, accept_fidelity)
        return
    if not r.gate_passed and not accept_fidelity:
        click.echo("rlcc-compile: error: the firmware misses the fidelity bar vs its teacher (report.md, 'Fidelity gate'); "
                   "--accept-fidelity to ship it anyway", err=True)
        sys.exit(int(ExitCode.FIDELITY))
