"""``--backend auto``: compile with every selectable kind and keep the cheapest that qualifies
(fewest worst-case cycles per event, bit-exact, within the budget, inside the fidelity bar)."""

from __future__ import annotations

import dataclasses
import json
import shutil
import tempfile
from pathlib import Path

from rlcc.errors import BadInputError
from rlcc.kinds import registry
from rlcc.kinds.base import CompileRequest, Outcome, RunContext


def compile_auto(request: CompileRequest, stage: Path, run: RunContext) -> Outcome:
    """Compile with every selectable kind beside ``stage``, keep the cheapest qualifying one in ``stage``."""
    outcomes = []
    names = registry.selectable()
    with tempfile.TemporaryDirectory(dir=stage.parent, prefix=f".{stage.name}.auto.") as tmp:
        for name in names:
            run.log(f"--backend auto: compiling with the {name} backend")
            try:
                outcomes.append(registry.get(name).compile_into(request, Path(tmp) / name, run))
            except BadInputError as exc:
                if name == names[0]:
                    raise  # the default backend's bad input is the command's
                outcomes.append(Outcome(name, None, reason=str(exc).split(": ", 1)[-1]))
        chosen, why = choose(outcomes)
        run.log(f"--backend auto: {why}")
        shutil.copytree(chosen.directory, stage, dirs_exist_ok=True)
        record_choice(stage, outcomes, chosen, why)
    return dataclasses.replace(chosen, directory=stage,
                               wrote_line=chosen.wrote_line.replace(str(chosen.directory), str(stage)))


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


def _gate_word(o: Outcome) -> str:
    if o.gate_passed:
        return "passed"
    return "would miss (preview)" if o.preview else "FAILED"


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
