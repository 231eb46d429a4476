"""`rlcc-compile`: ONNX policy -> closed-loop samples -> CatBoost trees -> exact fixed-point model
-> C firmware -> verification in the RISC-V emulator.

Writes into OUT atomically: ``spec.json``, ``model.rlcc.json`` (the FxModel), ``catboost.json``,
``report.json``, ``report.md`` (the firmware's numbers first), ``closed_loop.png`` (teacher vs
firmware over time), ``NAME.c/.h/.rlcc.json`` and ``verify.json``. After verification the
closed loop runs once more on the simulator's reduced suite (single switch and fat-tree), the
firmware deciding in the worst-case time rlcc-verify measured; the fidelity gate covers it too.
That is the tree backend (the default; recurrent teachers distill to window trees). ``--backend
int8`` compiles the network itself (``rlcc.kinds.int8.compile``); ``--backend auto`` runs both and
keeps the cheapest that qualifies (``rlcc.cli.backends``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import click
from rlcc import formats as fmt
from rlcc.cli.backends import BACKENDS, OUT_MARKER, Outcome, check_name, closed_loop_figure, finish, generate_c, record_choice, verify_into
from rlcc.cli.backends import choose as choose_backend
from rlcc.cli.common import PORTS, POSITIVE_FLOAT, atomic_output_dir, bad_input_option, claimed_output_dir, guarded
from rlcc.codegen import generate
from rlcc.codegen.sdk_flavours import DEFAULT_FLAVOUR, FLAVOUR_NAMES, check_param_count, choose
from rlcc.distill import report as report_mod
from rlcc.distill.fit import DEFAULT_BUDGET_OPS, DEFAULT_DEPTH, DEFAULT_TREES
from rlcc.distill.gate import FidelityBar
from rlcc.distill.select import CANDIDATE_GRID
from rlcc.parallel import default_jobs
from rlcc.distill.pipeline import (
    DEFAULT_CANDIDATES,
    DEFAULT_SAMPLES,
    QUICK_CANDIDATES,
    QUICK_SAMPLES,
    EQUILIBRIUM_MODES,
    CompileOptions,
    check_on_suite,
    compile_policy,
)
from rlcc.simulator.scenarios import DEFAULT_DECISION_LATENCY_US
from rlcc.errors import BadInputError, ExitCode
from rlcc.fxp.model import check_fits_context, model_params
from rlcc.recurrent import load_policy
from rlcc.progress import for_stderr
from rlcc.spec import ObservationSpec
from rlcc.kinds.switch_agent.distill import SwitchFidelityBar
from rlcc.switch_policy import is_switch_agent
from rlcc.targets import DEFAULT_TARGET, TARGET_NAMES
from rlcc.verify.budget import cycle_budget
from rlcc.verify.check import DEFAULT_BUDGET_NS
from rlcc.verify.glance import nic_section
from rlcc.verify.provenance import remember as remember_compile
from rlcc.kinds.switch_agent.check import DEFAULT_PORTS



@click.command("compile")
@click.argument("model", type=click.Path(path_type=Path))
@click.option("-o", "--out", "out", type=click.Path(path_type=Path), required=True, help="Output directory (written atomically).")
@click.option("--spec", "spec_file", type=click.Path(path_type=Path), help="Observation spec JSON (overrides the one in the ONNX metadata).")
@click.option("--backend", type=click.Choice(BACKENDS), default=BACKENDS[0], show_default=True,
              help="trees: distill into boosted trees (the deployed RL-CC design); int8: the network itself (MLP or "
                   "LSTM) as int8 integer code, to measure its cost and fidelity on the same core model; auto: compile "
                   "both, keep the cheapest in cycles that is bit-exact, within the budget and inside the fidelity bar "
                   "(report.md says why).")
@click.option("--trees", type=int, default=DEFAULT_TREES, show_default=True, help="Maximum number of trees.")
@click.option("--depth", type=int, default=DEFAULT_DEPTH, show_default=True, help="Depth of each oblivious tree.")
@click.option("--budget-ops", type=int, default=DEFAULT_BUDGET_OPS, show_default=True, help="Operations budget (comparisons + additions); caps the tree count.")
@click.option("--samples", type=int, default=None, help=f"Closed-loop decisions to sample [default: {DEFAULT_SAMPLES}, --quick {QUICK_SAMPLES}].")
@click.option("--scenarios", default=None, help="Sampling mix, comma list of [fat-tree/]kind:size[:duration_ms] (kinds: many-to-one, all-to-all, long-short; fat-tree/: on the 64-host fat-tree).")
@click.option("--dagger-rounds", type=int, default=None,
              help="DAgger rounds: the fixed-point model drives, the teacher labels [default: 0; switch agents: 1].")
@click.option("--candidates", type=click.IntRange(1, len(CANDIDATE_GRID)), default=None,
              help=f"Candidate students ranked in closed loop on validation incasts; 1 = no selection "
                   f"[default: {DEFAULT_CANDIDATES}, --quick {QUICK_CANDIDATES}].")
@click.option("--max-goodput-diff", type=float, default=FidelityBar.goodput, show_default=True,
              help="Fidelity gate: largest goodput difference, firmware vs teacher (fraction of line rate).")
@click.option("--max-steady-pct", type=float, default=FidelityBar.steady_pct, show_default=True,
              help="Fidelity gate: largest mean-RTT and queue-delay difference in steady state, % of the teacher's.")
@click.option("--max-transient-pct", type=float, default=FidelityBar.transient_pct, show_default=True,
              help="Fidelity gate: the same in the startup transient.")
@click.option("--max-drop-diff", type=float, default=FidelityBar.drop_margin, show_default=True,
              help="Fidelity gate: the dropped fraction of offered bytes may differ by the mode's percentage of the teacher's, and at least this much.")
@click.option("--accept-fidelity", is_flag=True,
              help=f"Exit 0 even if the firmware misses the fidelity bar (otherwise exit {int(ExitCode.FIDELITY)}; the output is written either way).")
@click.option("--derived", default="auto", show_default=True,
              help="Derived student inputs (computed on the device from the window, rlcc.derived): auto (every one the "
                   "spec's window supports), none, or a comma list of names.")
@click.option("--equilibrium", type=click.Choice(EQUILIBRIUM_MODES), default=EQUILIBRIUM_MODES[0], show_default=True,
              help="ramps: the student is linear (not a tree staircase) around the teacher's equilibrium "
                   "(rlcc.distill.equilibrium); none: trees only.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of sampling and training; same seed, same bytes.")
@click.option("--quick", is_flag=True,
              help="Preview: few samples and short simulations (smoke runs, tests). The fidelity checks are reported "
                   "as a preview, not judged: exit 0 with a warning where a full compile would exit "
                   f"{int(ExitCode.FIDELITY)}.")
@click.option("--force", is_flag=True, help="Replace OUT if it exists.")
@click.option("--name", default="firmware", show_default=True, callback=bad_input_option(check_name),
              help="Base name of the generated C files (NAME.c, NAME.h, NAME.rlcc.json) and prefix of their symbols: "
                   "a C identifier.")
@click.option("--tree-style", type=click.Choice(["oblivious", "ifelse"]), default="oblivious", show_default=True,
              help="Tree code: branch-free index + table lookup, or nested if-else (identical results).")
@click.option("--probe-timeout-us", type=float, default=None,
              help=f"RTT-probe timeout in us: a TX event re-requests a probe (rtt_req = 1) when the last request is this old "
                   f"(lost probe) [default: {fmt.PROBE_TIMEOUT_NS_DEFAULT / 1000:g}]. Stored in the model; host-settable on the device.")
@click.option("--sdk", type=click.Choice(FLAVOUR_NAMES), default=DEFAULT_FLAVOUR, show_default=True,
              help="Device API of the C: rlcc's SDK stub, or the NVIDIA DOCA PCC device API (one algorithm slot; writes INTEGRATION.md).")
@click.option("--slot", type=int, default=None, help="--sdk doca: the algorithm slot (and index), 0..7 [default: 0].")
@click.option("--verify/--no-verify", "run_verify", default=True, show_default=True, help="Verify the C in the RISC-V emulator (as rlcc-verify does).")
@click.option("--target", type=click.Choice(TARGET_NAMES), default=DEFAULT_TARGET.name, show_default=True, help="Verification target.")
@click.option("--budget-ns", type=POSITIVE_FLOAT, default=None,
              help=f"Verification decision budget in ns [default: {DEFAULT_BUDGET_NS:g}]; for a switch agent: the budget of one "
                   "monitoring interval over --ports ports [default: the spec's interval].")
@click.option("--ports", type=PORTS, default=DEFAULT_PORTS, show_default=True,
              help="Switch agents: ports one monitoring interval serves (the ACC paper's switch: 48).")
@click.option("--budget-cycles", type=int, default=None,
              help="Cycle budget per event on the target: keep the largest tree prefix whose firmware fits it (measured in the emulator), and verify against it.")
@click.option("--jobs", type=click.IntRange(1, 64), default=None,
              help="Worker processes for the simulations (outputs do not depend on it) [default: the usable CPUs, at most 8].")
@click.option("-q", "--quiet", is_flag=True, help="No stage lines and no progress bars; only the result and errors.")
@click.option("--progress/--no-progress", "show_progress", default=None,
              help="Progress bars on stderr [default: bars when stderr is a terminal, else one 'done in' line per "
                   "finished stage; nothing with --quiet or --no-progress].")
@guarded("rlcc-compile")
def compile_command(model: Path, out: Path, spec_file: Path | None, backend: str, trees: int, depth: int, budget_ops: int,
                    samples: int | None, scenarios: str | None, dagger_rounds: int | None, candidates: int | None,
                    max_goodput_diff: float, max_steady_pct: float, max_transient_pct: float, max_drop_diff: float,
                    accept_fidelity: bool, derived: str, equilibrium: str, seed: int, quick: bool, force: bool,
                    name: str, tree_style: str, probe_timeout_us: float | None, sdk: str, slot: int | None,
                    run_verify: bool, target: str,
                    budget_ns: float | None, ports: int, budget_cycles: int | None, jobs: int | None, quiet: bool,
                    show_progress: bool | None) -> None:
    """Compile MODEL (ONNX policy with an rlcc.spec) into verified firmware in OUT.

    A switch agent (an ONNX Q-network with an rlcc.switch_agent spec: ACC's ECN tuner) compiles to
    an integer tree classifier and switch-SDK firmware instead (README, "Switch agents").

    Samples the policy in closed loop in rlcc's simulator, distills it to CatBoost trees under
    the device budget, quantizes to an exact fixed-point model, generates C for the PCC SDK
    stub and verifies it bit for bit in the RISC-V emulator. OUT holds the C, its manifest,
    the fixed-point model, report.md/report.json and verify.json. Errors before the C exists
    write nothing; once it exists, a failed verification still writes OUT (to inspect the
    firmware) and exits 4 (mismatch), 5 (budget), 6 (build) or 7 (emulator fault). Firmware that
    verifies but misses the closed-loop fidelity bar vs the teacher exits 8 (--accept-fidelity: 0;
    --quick: a preview, exit 0 with a warning).
    """
    start = time.perf_counter()
    with claimed_output_dir(out, force, "-o", marker=OUT_MARKER):  # checked and locked now, not after minutes
        if is_switch_agent(model):
            _switch(model, out, force=force, trees=trees, depth=depth, dagger_rounds=1 if dagger_rounds is None else dagger_rounds,
                    seed=seed, quick=quick,
                    target=target, ports=ports, budget_ns=budget_ns, name=name, run_verify=run_verify,
                    accept_fidelity=accept_fidelity, quiet=quiet, start=start)
            return
        dagger_rounds = dagger_rounds or 0
        sdk_choice = choose(sdk, slot)
        spec = ObservationSpec.from_file(str(spec_file)) if spec_file else None
        overrides: dict[str, Any] = {k: v for k, v in (("samples", samples), ("scenarios", scenarios)) if v is not None}
        overrides["bar"] = FidelityBar(goodput=max_goodput_diff, steady_pct=max_steady_pct, transient_pct=max_transient_pct,
                                       drop_margin=max_drop_diff)
        if probe_timeout_us is not None:
            overrides["probe_timeout_ns"] = _probe_timeout_ns(probe_timeout_us)
        if budget_cycles is not None and budget_cycles <= 0:
            raise BadInputError("--budget-cycles must be positive")

        def log(msg: str) -> None:
            if not quiet:
                click.echo(f"rlcc-compile: [{time.perf_counter() - start:5.1f}s] {msg}")

        progress = for_stderr(quiet, show_progress)
        common = dict(target=target, budget_ns=budget_ns, budget_cycles=budget_cycles, name=name, sdk=sdk_choice,
                      run_verify=run_verify, jobs=jobs or default_jobs(), log=log, progress=progress, start=start)

        def trees_backend(stage: Path) -> Outcome:
            tree_overrides = dict(overrides, **({"candidates": candidates} if candidates is not None else {}))
            opts = dict(trees=trees, depth=depth, budget_ops=budget_ops, dagger_rounds=dagger_rounds, seed=seed,
                        derived=derived, equilibrium=equilibrium, **tree_overrides)
            options = CompileOptions.quick(**opts) if quick else CompileOptions(**opts)
            return _trees(model, spec, stage, options, tree_style=tree_style, **common)

        def int8_backend(stage: Path) -> Outcome:
            from rlcc.kinds.int8.compile import compile_int8_outcome

            options = CompileOptions.quick(seed=seed, **overrides) if quick else CompileOptions(seed=seed, **overrides)
            return compile_int8_outcome(model, spec, stage, options, **common)

        runners = {"trees": trees_backend, "int8": int8_backend}
        with atomic_output_dir(out, overwrite=force, marker=OUT_MARKER) as stage:
            if backend != "auto":
                outcome = runners[backend](stage)
            else:
                outcome = _auto(runners, stage, log)
        finish(dataclasses.replace(outcome, wrote_line=outcome.wrote_line.replace(str(outcome.directory), str(out))),
               accept_fidelity, quiet)


def _switch(model: Path, out: Path, *, force: bool, budget_ns: float | None, accept_fidelity: bool, quiet: bool,
            start: float, **kwargs: Any) -> None:
    from rlcc.kinds.switch_agent.compile import compile_switch, finish_switch

    def log(msg: str) -> None:
        if not quiet:
            click.echo(f"rlcc-compile: [{time.perf_counter() - start:5.1f}s] {msg}")

    with atomic_output_dir(out, overwrite=force, marker=OUT_MARKER) as stage:
        outcome = compile_switch(model, stage, budget_us=None if budget_ns is None else budget_ns / 1e3,
                                 bar=SwitchFidelityBar(), log=log, **kwargs)
    finish_switch(outcome, out, accept_fidelity, quiet, start)


def _auto(runners: dict[str, Callable[[Path], Outcome]], stage: Path, log: Callable[[str], None]) -> Outcome:
    """Compile with every backend beside ``stage``, keep the cheapest qualifying one in ``stage``."""
    outcomes = []
    with tempfile.TemporaryDirectory(dir=stage.parent, prefix=f".{stage.name}.auto.") as tmp:
        for name, run in runners.items():
            log(f"--backend auto: compiling with the {name} backend")
            try:
                outcomes.append(run(Path(tmp) / name))
            except BadInputError as exc:
                if name == next(iter(runners)):
                    raise  # the default backend's bad input is the command's
                outcomes.append(Outcome(name, None, reason=str(exc).split(": ", 1)[-1]))
        chosen, why = choose_backend(outcomes)
        log(f"--backend auto: {why}")
        shutil.copytree(chosen.directory, stage, dirs_exist_ok=True)
        record_choice(stage, outcomes, chosen, why)
    return dataclasses.replace(chosen, directory=stage, wrote_line=chosen.wrote_line.replace(str(chosen.directory), str(stage)))


def _trees(model: Path, spec: ObservationSpec | None, stage: Path, options: CompileOptions, *, tree_style: str,
           target: str, budget_ns: float | None, budget_cycles: int | None, name: str, sdk, run_verify: bool, jobs: int,
           log: Callable[[str], None], progress, start: float) -> Outcome:
    """The tree backend: sample, distill, quantize, generate, verify, check on the suite; files into ``stage``."""
    check_name(name)
    policy = load_policy(model, spec)
    check_fits_context(policy.spec)  # before minutes of sampling, not after
    check_param_count(sdk, len(model_params(policy.spec)))
    options.validate()
    student = options.student_spec(policy.spec)  # a --derived the window cannot feed fails here, before the work
    fits = cycle_budget(student, budget_cycles, target) if budget_cycles is not None else None
    result = compile_policy(policy, options, log, fits, jobs=jobs, progress=progress)
    stage.mkdir(parents=True, exist_ok=True)
    (stage / "spec.json").write_text(policy.spec.to_json())
    (stage / OUT_MARKER).write_text(result.model.to_json())
    (stage / "catboost.json").write_text(result.fit.catboost_json or "{}\n")
    source = {"policy": policy.path.name, "policy_sha256": hashlib.sha256(policy.model_bytes).hexdigest()}
    recipe = {"backend": "trees", "options": options.to_dict(), "spec": spec.to_dict() if spec is not None else None,
              "budget_cycles": budget_cycles, "target": target if budget_cycles is not None else None}
    paths = generate_c(lambda: generate(result.model, stage, name=name, tree_style=tree_style, source_info=source, sdk=sdk,
                                        recipe=recipe), name, log, progress)
    remember_compile(paths)
    verdict, failure = (verify_into(stage, paths["c"], name=name, target=target, budget_ns=budget_ns,
                                    budget_cycles=budget_cycles, seed=options.seed, log=log, progress=progress)
                        if run_verify else (None, None))
    # The closed loop on both topologies, the firmware deciding in the time it was measured to take.
    latency_us = verdict.worst_case_ns / 1e3 if verdict is not None else DEFAULT_DECISION_LATENCY_US
    result = check_on_suite(result, policy, options, latency_us, log, jobs, progress)
    plot = closed_loop_figure(stage, policy.factor, result.model, options, log, progress)
    (stage / "report.json").write_text(report_mod.to_json(result.report))
    constant = report_mod.constant_policy_note(result.model)
    glance = nic_section(verdict, result.report.gate.headline, plot=plot)
    (stage / "report.md").write_text(report_mod.to_markdown(result.report, ["", f"**Note: {constant}.**", *glance]
                                                            if constant else glance))
    f, s, gate = result.report.fidelity, result.report.sizes, result.report.gate
    return Outcome(
        "trees", stage, verdict, failure, gate.passed, preview=gate.preview,
        gate_line=f"rlcc-compile: {gate.console_line()}",
        wrote_line=(f"rlcc-compile: wrote {stage}: {s.trees} trees, {s.operations} ops, state {s.state_bytes} B; "
                    f"RMSE vs teacher {f.float_vs_teacher_rmse:.4f}, quantization path changes "
                    f"{f.path_changed_fraction:.4f} ({time.perf_counter() - start:.1f}s)" + (f"; {constant}" if constant else "")))


def _probe_timeout_ns(probe_timeout_us: float) -> int:
    ns = probe_timeout_us * 1000.0
    if not math.isfinite(ns) or not 1 <= round(ns) <= fmt.PROBE_TIMEOUT_NS_MAX:
        raise BadInputError(f"--probe-timeout-us must be between 0.001 and {fmt.PROBE_TIMEOUT_NS_MAX / 1000:g} us")
    return int(round(ns))
