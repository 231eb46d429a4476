"""`rlcc-compile`: ONNX policy -> closed-loop samples -> CatBoost trees -> exact fixed-point model
-> C firmware -> verification in the RISC-V emulator.

Writes into OUT atomically: ``spec.json``, ``model.rlcc.json`` (the FxModel), ``catboost.json``,
``report.json``, ``report.md`` (the firmware's numbers first), ``closed_loop.png`` (teacher vs
firmware over time), ``NAME.c/.h/.rlcc.json`` and ``verify.json``. After verification the
closed loop runs once more on the simulator's reduced suite (single switch and fat-tree), the
firmware deciding in the worst-case time rlcc-verify measured; the fidelity gate covers it too.
That is the tree backend (the default; recurrent teachers distill to window trees). ``--backend
int8`` compiles the network itself (``rlcc.kinds.int8``); ``--backend auto`` runs every backend and
keeps the cheapest that qualifies (``rlcc.pipeline.auto``). This module maps flags to a
``CompileRequest``; ``rlcc.pipeline.compile`` does the work through the model's kind.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rlcc import formats as fmt
from rlcc.cli.common import PORTS, POSITIVE_FLOAT, bad_input_option, guarded, standalone
from rlcc.codegen.sdk_flavours import DEFAULT_FLAVOUR, FLAVOUR_NAMES
from rlcc.distill.fit import DEFAULT_BUDGET_OPS, DEFAULT_DEPTH, DEFAULT_TREES
from rlcc.distill.escalate import DEFAULT_BUDGET as ESCALATION_BUDGET
from rlcc.distill.gate import FidelityBar
from rlcc.distill.pipeline import DEFAULT_CANDIDATES, DEFAULT_SAMPLES, EQUILIBRIUM_MODES, QUICK_CANDIDATES, QUICK_SAMPLES
from rlcc.distill.select import CANDIDATE_GRID
from rlcc.errors import ExitCode
from rlcc.kinds.base import CompileRequest, Outcome, RunContext
from rlcc.kinds.pcc import check_name
from rlcc.kinds.switch_agent.check import DEFAULT_PORTS
from rlcc.kinds.trees.kind import TREE_STYLES
from rlcc.parallel import default_jobs
from rlcc.pipeline.compile import backends, compile_to
from rlcc.progress import for_stderr
from rlcc.targets import DEFAULT_TARGET, TARGET_NAMES
from rlcc.verify.check import DEFAULT_BUDGET_NS


class BackendChoice(click.Choice):
    """``--backend``: the registered kinds at parse time (a kind registered after import is listed)."""

    def __init__(self) -> None:
        super().__init__(backends())

    def convert(self, value, param, ctx):  # noqa: ANN001 - click's signature
        self.choices = backends()
        return super().convert(value, param, ctx)


@click.command("compile")
@click.argument("model", type=click.Path(path_type=Path))
@click.option("-o", "--out", "out", type=click.Path(path_type=Path), required=True, help="Output directory (written atomically).")
@click.option("--spec", "spec_file", type=click.Path(path_type=Path), help="Observation spec JSON (overrides the one in the ONNX metadata).")
@click.option("--backend", type=BackendChoice(), default=backends()[0], show_default=True,
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
@click.option("--escalation-budget", type=click.FloatRange(0, 100), default=None,
              help=f"When the fidelity gate misses: stronger compiles (wider validation, every candidate, more on-policy "
                   f"data; report.md, 'Escalation') may add up to this many default compiles' worth of work before "
                   f"exit {int(ExitCode.FIDELITY)}; 0: none [default: {ESCALATION_BUDGET:g}].")
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
@click.option("--tree-style", type=click.Choice(TREE_STYLES), default=TREE_STYLES[0], show_default=True,
              help="Tree code: bit-parallel (each input bucketed once, split-bit words ORed), branch-free index per tree, or nested if-else (identical results).")
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
@click.option("--nic-cores", type=click.IntRange(1, 1024), default=None,
              help="Closed-loop check: run the firmware on each sending host's decision processor with this many cores "
                   "(RTT events queue for its threads; each decision takes the cycles verification measured) [default: off].")
@click.option("--nic-threads", type=click.IntRange(1, 256), default=None,
              help="Closed-loop check: hardware threads per NIC core (with --nic-cores; either turns the processor on) [default: 1].")
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
                    escalation_budget: float | None, accept_fidelity: bool, derived: str, equilibrium: str, seed: int, quick: bool, force: bool,
                    name: str, tree_style: str, probe_timeout_us: float | None, sdk: str, slot: int | None,
                    run_verify: bool, target: str,
                    budget_ns: float | None, ports: int, budget_cycles: int | None, nic_cores: int | None,
                    nic_threads: int | None, jobs: int | None, quiet: bool,
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
    def log(msg: str) -> None:
        if not quiet:
            click.echo(f"rlcc-compile: [{run.seconds():5.1f}s] {msg}")

    run = RunContext(log=log, progress=for_stderr(quiet, show_progress), jobs=jobs or default_jobs())
    bar = FidelityBar(goodput=max_goodput_diff, steady_pct=max_steady_pct, transient_pct=max_transient_pct,
                      drop_margin=max_drop_diff)
    request = CompileRequest(
        model=model, backend=backend, spec_file=spec_file, name=name, target=target, budget_ns=budget_ns,
        budget_cycles=budget_cycles, seed=seed, quick=quick, run_verify=run_verify, sdk=sdk, slot=slot, jobs=run.jobs,
        options={"trees": trees, "depth": depth, "budget_ops": budget_ops, "samples": samples, "scenarios": scenarios,
                 "dagger_rounds": dagger_rounds, "candidates": candidates, "bar": bar, "derived": derived,
                 "equilibrium": equilibrium, "tree_style": tree_style, "probe_timeout_us": probe_timeout_us,
                 "ports": ports, "escalation_budget": escalation_budget, "nic_cores": nic_cores,
                 "nic_threads": nic_threads})
    finish(compile_to(request, out, force, run), accept_fidelity, quiet)


def finish(o: Outcome, accept_fidelity: bool, quiet: bool) -> None:
    """Print the outcome and exit with its code: build/emulator failure 6/7, mismatch 4, budget 5,
    unsettled teacher 11, fidelity 8 (a --quick preview: 0 and a warning)."""
    click.echo(o.wrote_line)
    if not quiet and o.gate_line:
        click.echo(o.gate_line)
    if o.failure is not None:
        raise o.failure
    if o.verdict is not None and (not quiet or not (o.bit_exact and o.within_budget)):
        click.echo(o.summary)
    code = o.exit_code(accept_fidelity)
    if code == ExitCode.MISMATCH:
        _fail(o.mismatch, code)
    if code == ExitCode.BUDGET:
        _fail(o.over_budget, code)
    if o.preview:
        missed = not o.gate_passed
        if not quiet or (missed and not accept_fidelity):
            what = "would miss the fidelity bar; " if missed else ""
            click.echo(f"rlcc-compile: warning: --quick is a preview: {what}fidelity is not judged for shipping "
                       f"(exit 0; compile without --quick for the verdict)", err=True)
        return
    if code == ExitCode.UNSETTLED:
        _fail("the teacher does not settle, so the firmware's fidelity to it is not judged (report.md, 'Fidelity "
              "gate'); --accept-fidelity to ship it anyway", code)
    if code == ExitCode.FIDELITY:
        _fail(f"{o.fidelity_subject} misses the fidelity bar vs its teacher (report.md, 'Fidelity gate'); "
              "--accept-fidelity to ship it anyway", code)


def _fail(line: str, code: ExitCode) -> None:
    click.echo(f"rlcc-compile: error: {line}", err=True)
    sys.exit(int(code))


standalone(compile_command)
