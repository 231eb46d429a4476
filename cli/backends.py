"""What one rlcc-compile backend produced, how the command ends on it, and ``--backend auto``'s choice.

Each backend (``trees``: distilled boosted trees; ``int8``: the network itself as integer code)
writes its files into a directory and returns an :class:`Outcome`; :func:`finish` prints the
result lines and exits with the documented code (the same for every backend). ``auto`` runs
every backend that applies and keeps the cheapest (fewest worst-case cycles per decision) that
is bit-exact, within the cycle budget and inside the fidelity bar (:func:`choose`).
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any, Callable

import click
from rlcc.codegen.context import check_firmware_name
from rlcc.errors import BadInputError, BuildError, EmulationError, ExitCode
from rlcc.verify.check import VerifyResult, verify_firmware
from rlcc.verify.report import summary, write_json

BACKENDS = ("trees", "int8", "auto")  # the first is the default
OUT_MARKER = "model.rlcc.json"  # in every OUT (written before the C): --force replaces only such directories


def check_name(name: str) -> str:
    """``--name``: a C identifier (``check_firmware_name``) whose manifest NAME.rlcc.json is not OUT's model file."""
    check_firmware_name(name, "--name")
    if f"{name}.rlcc.json" == OUT_MARKER:
        raise BadInputError(f"--name {name!r} is reserved: {name}.rlcc.json would overwrite the compiled model {OUT_MARKER}")
    return name


@dataclasses.dataclass
class Outcome:
    """One backend's compile: its output directory, verification and fidelity verdicts."""

    backend: str
    directory: Path | None  # None: the backend does not apply to this policy (``reason``)
    verdict: VerifyResult | None = None
    failure: BuildError | EmulationError | None = None
    gate_passed: bool = False
    preview: bool = False  # --quick: the fidelity gate is reported, not judged (never exits 8)
    gate_line: str = ""  # "fidelity gate passed: worst ..." (printed unless quiet)
    wrote_line: str = ""  # "wrote OUT: ..." (always printed)
    reason: str = ""

    @property
    def cycles(self) -> int | None:
        """Worst-case cycles of any event (the budget's measure), when verified."""
        return None if self.verdict is None else int(self.verdict.cycles["max"])

    @property
    def qualifies(self) -> bool:
        v = self.verdict
        return v is not None and self.failure is None and v.bit_exact and v.within_budget and self.gate_passed

    def describe(self) -> dict[str, Any]:
        v = self.verdict
        return {"backend": self.backend, "applies": self.directory is not None, "reason": self.reason,
                "worst_case_cycles": self.cycles, "worst_case_ns": None if v is None else v.worst_case_ns,
                "bit_exact": None if v is None else v.bit_exact, "within_budget": None if v is None else v.within_budget,
                "fidelity_gate_passed": self.gate_passed if self.directory is not None else None,
                "qualifies": self.qualifies}


def choose(outcomes: list[Outcome]) -> tuple[Outcome, str]:
    """The cheapest qualifying outcome and why; without one, the first backend's (it fails as alone)."""
    ok = [o for o in outcomes if o.qualifies]
    if ok:
        best = min(ok, key=lambda o: o.cycles)
        others = [o for o in outcomes if o is not best]
        why = f"{best.backend}: {best.cycles} cycles per decision, within the budget and the fidelity bar"
        why += "".join(f"; {o.backend}: {_why_not(o, best)}" for o in others)
        return best, why
    return outcomes[0], "no backend is bit-exact, within the budget and inside the fidelity bar: " + "; ".join(
        f"{o.backend}: {_why_not(o, None)}" for o in outcomes)


def _why_not(o: Outcome, best: Outcome | None) -> str:
    if o.directory is None:
        return f"does not apply ({o.reason})"
    problems = []
    if o.failure is not None:
        problems.append(f"verification failed ({o.failure})")
    elif o.verdict is not None and not o.verdict.bit_exact:
        problems.append("not bit-exact")
    elif o.verdict is not None and not o.verdict.within_budget:
        problems.append(f"{o.cycles} cycles, over the budget of {o.verdict.budget.cycles}")
    if not o.gate_passed:
        problems.append("misses the fidelity bar")
    if problems:
        return ", ".join(problems)
    return f"{o.cycles} cycles, {o.cycles / best.cycles:.1f}x the chosen backend's" if best else "qualifies"


def record_choice(directory: Path, outcomes: list[Outcome], chosen: Outcome, why: str) -> None:
    """Append the choice to the chosen output's report.md and report.json."""
    md = directory / "report.md"
    rows = ["", "## Backend choice (`--backend auto`)", "",
            f"Chosen: **{chosen.backend}** — {why}.", "",
            "| backend | worst-case cycles | ns | bit-exact | within budget | fidelity gate |", "|---|---|---|---|---|---|"]
    for o in outcomes:
        d = o.describe()
        if not d["applies"]:
            rows.append(f"| {o.backend} | - | - | - | - | does not apply: {o.reason} |")
            continue
        rows.append(f"| {o.backend} | {d['worst_case_cycles']} | {d['worst_case_ns']} | {d['bit_exact']} | "
                    f"{d['within_budget']} | {_gate_word(o)} |")
    md.write_text(md.read_text() + "\n".join(rows) + "\n")
    rj = directory / "report.json"
    data = json.loads(rj.read_text())
    data["backend_choice"] = {"chosen": chosen.backend, "why": why, "candidates": [o.describe() for o in outcomes]}
    rj.write_text(json.dumps(data, sort_keys=True, indent=1, allow_nan=True) + "\n")


def generate_c(run: Callable[[], dict[str, Path]], name: str, log: Callable[[str], None], progress) -> dict[str, Path]:
    """``run`` (the code generator: C, header and the manifest's golden vectors, seconds of work)
    as a stage of its own, so a log does not go quiet while it runs."""
    log(f"generating {name}.c and the golden test vectors")
    with progress(f"generating {name}.c and the golden test vectors", "step") as bar:
        bar.add(1)
        paths = run()
        bar.advance(1)
    return paths


def closed_loop_figure(stage: Path, teacher: Any, model: Any, options: Any, log: Callable[[str], None],
                       progress) -> tuple[str, str]:
    """Write ``closed_loop_plot.FILE_NAME`` into ``stage``; (file name, caption) for report.md."""
    from rlcc.distill import closed_loop_plot

    log(f"closed loop: plotting teacher vs firmware over time ({closed_loop_plot.FILE_NAME})")
    with progress("closed loop: teacher vs firmware over time", "sim-ms") as bar:
        caption = closed_loop_plot.write(stage / closed_loop_plot.FILE_NAME, teacher, model, options, bar)
    return closed_loop_plot.FILE_NAME, caption


def _gate_word(o: Outcome) -> str:
    if o.gate_passed:
        return "passed"
    return "would miss (preview)" if o.preview else "FAILED"


def verify_into(stage: Path, firmware_c: Path, *, name: str, target: str, budget_ns: float | None,
                budget_cycles: int | None, seed: int, log: Callable[[str], None], progress,
                then: Callable[[VerifyResult], None] | None = None) -> tuple[VerifyResult | None, BuildError | EmulationError | None]:
    """Verify the generated C in the emulator and write ``stage/verify.json``; a build or emulator
    failure is returned (reported after OUT is in place, like a mismatch). ``then`` runs on the
    verdict (more measurements), inside the same failure handling."""
    log(f"verifying {name}.c on {target} in the emulator")
    try:
        with progress(f"verifying {name}.c on {target}", "step") as bar:
            verdict = verify_firmware(firmware_c, target=target, budget_ns=budget_ns, budget_cycles=budget_cycles,
                                      seed=seed, stage=bar)
        if then is not None:
            then(verdict)
    except (BuildError, EmulationError) as exc:
        return None, exc
    verdict.firmware = f"{name}.c"
    write_json(verdict, stage / "verify.json")
    return verdict, None


def preview_warning(command: str, missed: bool, quiet: bool, accepted: bool) -> None:
    """The one stderr line of a --quick compile; under --quiet only where a full compile would
    have failed (missed the bar without --accept-fidelity)."""
    if quiet and (accepted or not missed):
        return
    what = "would miss the fidelity bar; " if missed else ""
    click.echo(f"{command}: warning: --quick is a preview: {what}fidelity is not judged for shipping "
               f"(exit 0; compile without --quick for the verdict)", err=True)


def finish(o: Outcome, accept_fidelity: bool, quiet: bool) -> None:
    """Print the outcome and exit with its code: build/emulator failure, mismatch 4, budget 5,
    fidelity 8 (a --quick preview: 0 and a warning)."""
    click.echo(o.wrote_line)
    if not quiet and o.gate_line:
        click.echo(o.gate_line)
    if o.failure is not None:
        raise o.failure
    v = o.verdict
    if v is not None:
        if not quiet or not (v.bit_exact and v.within_budget):
            click.echo(summary(v))
        if not v.bit_exact:
            click.echo(f"rlcc-compile: error: firmware differs from the golden model on {v.mismatches} vectors", err=True)
            sys.exit(int(ExitCode.MISMATCH))
        if not v.within_budget:
            click.echo(f"rlcc-compile: error: worst-case event {v.cycles['max']} cycles > budget {v.budget.cycles}", err=True)
            sys.exit(int(ExitCode.BUDGET))
    if o.preview:
        preview_warning("rlcc-compile", not o.gate_passed, quiet, accept_fidelity)
        return
    if not o.gate_passed and not accept_fidelity:
        what = "the int8 network" if o.backend == "int8" else "the firmware"
        click.echo(f"rlcc-compile: error: {what} misses the fidelity bar vs its teacher (report.md, "
                   "'Fidelity gate'); --accept-fidelity to ship it anyway", err=True)
        sys.exit(int(ExitCode.FIDELITY))
