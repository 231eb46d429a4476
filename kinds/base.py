"""The one interface a model kind implements, and the requests and outcomes it speaks in.

A model kind (the distilled trees, the int8 network, ACC's switch agent, ...) is everything that
differs between compiling one kind of policy and another: how its policy is loaded, sampled and
fitted, how the fit is lowered to a device model and C, how that C is verified, how the firmware
is checked in closed loop and reported. The stages below (``core`` ... ``verify``) hold the
generic machinery; a kind composes them. ``rlcc.pipeline`` runs every kind through the same
steps (:meth:`ModelKind.compile_into` is the template), so adding a kind is one folder under
``kinds/`` plus one registration line (``rlcc.kinds.register``).
"""

from __future__ import annotations

import abc
import dataclasses
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable, ClassVar

from rlcc.errors import BuildError, EmulationError, ExitCode
from rlcc.progress import Progress, silent
from rlcc.verify.provenance import Rebuild, remember

Log = Callable[[str], None]


@dataclasses.dataclass(frozen=True)
class CompileRequest:
    """What ``rlcc-compile`` was asked: the generic part, plus ``options`` (the flags a kind reads;
    a flag the user left at its default is absent, so each kind applies its own default)."""

    model: Path
    backend: str | None = None  # None: the kind the model file declares, else the default PCC kind
    spec_file: Path | None = None
    name: str = "firmware"
    target: str = "rv64imac"
    budget_ns: float | None = None
    budget_cycles: int | None = None
    seed: int = 0
    quick: bool = False
    run_verify: bool = True
    sdk: str = "stub"
    slot: int | None = None
    jobs: int = 1
    options: dict[str, Any] = dataclasses.field(default_factory=dict)

    def option(self, key: str, default: Any = None) -> Any:
        """The flag's value, or ``default`` when it was not given (absent or None)."""
        value = self.options.get(key)
        return default if value is None else value


@dataclasses.dataclass
class RunContext:
    """How a run reports: stage lines (``log``), progress bars, worker processes, its start time."""

    log: Log = lambda _m: None
    progress: Progress = silent
    jobs: int = 1
    start: float = dataclasses.field(default_factory=time.perf_counter)

    def seconds(self) -> float:
        return time.perf_counter() - self.start


@dataclasses.dataclass
class Outcome:
    """One kind's compile: its output directory, verification and fidelity verdicts, and the
    lines the command prints (each kind words its own numbers; the exit codes are shared)."""

    backend: str
    directory: Path | None  # None: the kind does not apply to this policy (``reason``)
    verdict: Any = None  # the kind's verification result (``bit_exact``, ``within_budget``)
    failure: BuildError | EmulationError | None = None
    gate_passed: bool = False
    preview: bool = False  # --quick: the fidelity gate is reported, not judged (never exits 8)
    unsettled: bool = False  # the teacher itself does not settle: the gate is not judged (exit 11)
    gate_line: str = ""  # "fidelity gate passed: worst ..." (printed unless quiet)
    wrote_line: str = ""  # "wrote OUT: ..." (always printed)
    reason: str = ""
    summary: str = ""  # the verification summary (printed unless quiet, or when it failed)
    mismatch: str = ""  # the error line when the C is not bit-exact
    over_budget: str = ""  # the error line when it exceeds its budget
    cycles: int | None = None  # worst-case cycles of any event (``--backend auto`` compares them)
    worst_case_ns: float | None = None
    fidelity_subject: str = "the firmware"

    @property
    def bit_exact(self) -> bool:
        return self.verdict is None or bool(self.verdict.bit_exact)

    @property
    def within_budget(self) -> bool:
        return self.verdict is None or bool(self.verdict.within_budget)

    @property
    def qualifies(self) -> bool:
        v = self.verdict
        return v is not None and self.failure is None and v.bit_exact and v.within_budget and self.gate_passed

    def exit_code(self, accept_fidelity: bool) -> ExitCode:
        """The command's exit: mismatch 4, budget 5, unsettled teacher 11, fidelity 8 (a preview or
        --accept-fidelity: 0)."""
        if not self.bit_exact:
            return ExitCode.MISMATCH
        if not self.within_budget:
            return ExitCode.BUDGET
        if self.unsettled and not self.preview and not accept_fidelity:
            return ExitCode.UNSETTLED
        if not self.preview and not self.gate_passed and not accept_fidelity:
            return ExitCode.FIDELITY
        return ExitCode.OK

    def describe(self) -> dict[str, Any]:
        v = self.verdict
        return {"backend": self.backend, "applies": self.directory is not None, "reason": self.reason,
                "worst_case_cycles": self.cycles, "worst_case_ns": self.worst_case_ns,
                "bit_exact": None if v is None else v.bit_exact, "within_budget": None if v is None else v.within_budget,
                "fidelity_gate_passed": self.gate_passed if self.directory is not None else None,
                "qualifies": self.qualifies}


@dataclasses.dataclass(frozen=True)
class VerifyRequest:
    """What ``rlcc-verify`` was asked; ``options`` holds the flags only some kinds read
    (--full-load, --budget-cycles, --junit, --doca-layout, --ports, --budget-us, extra --profile names)."""

    firmware: Path
    manifest: Path
    target: str
    profiles: tuple[str, ...] = ()  # empty: the target's default profile
    cc: str | None = None
    budget_ns: float | None = None
    random_count: int = 100_000
    seed: int = 0
    prove: bool = False
    prove_timeout_s: float = 120.0
    mutants: bool = False
    jobs: int = 1
    policy: Path | None = None
    expect_sha256: str | None = None
    progress: bool = False
    options: dict[str, Any] = dataclasses.field(default_factory=dict)
    rebuilders: Mapping[str, Rebuild] = dataclasses.field(default_factory=dict)  # every kind's, for --policy


@dataclasses.dataclass
class VerifyOutcome:
    """A kind's verification, reduced to what the command reports: the result (its ``to_dict``
    for --json), the summary lines, and the failures in the order the command checks them."""

    result: Any
    summary: list[str]
    proof_error: str = ""  # a counterexample (exit 4)
    mismatch: str = ""  # not bit-exact (exit 4)
    provenance: Any = None  # rlcc.verify.provenance.Provenance (exit 9 when not ok)
    over_budget: str = ""  # exit 5
    mutants: str = ""  # surviving mutants (exit 4)
    proof: dict[str, Any] | None = None
    level: str = "sampled"
    write_json: Callable[[Path], None] | None = None
    write_junit: Callable[[Path], None] | None = None

    def failures(self) -> list[tuple[ExitCode, str]]:
        """(exit code, error line) of every failed check, in the order the command reports them."""
        prov = self.provenance
        found = [(ExitCode.MISMATCH, self.proof_error), (ExitCode.MISMATCH, self.mismatch),
                 (ExitCode.PROVENANCE, prov.error if prov is not None and not prov.ok else ""),
                 (ExitCode.BUDGET, self.over_budget), (ExitCode.MISMATCH, self.mutants)]
        return [(code, line) for code, line in found if line]


@dataclasses.dataclass
class Attempt:
    """One compile of a job into ``directory`` (OUT's staging directory, or a scratch directory
    inside it for an escalation), up to its closed-loop check."""

    job: Any
    checked: Any  # what ``closed_loop`` returned
    verdict: Any
    failure: BuildError | EmulationError | None
    directory: Path
    what: str  # "default compile" or the escalation rung's words
    seconds: float


ATTEMPT_PREFIX = ".attempt-"  # scratch directories of escalation attempts inside the staging directory


class ModelKind(abc.ABC):
    """A model kind's plug-in. ``compile_into`` runs the steps every kind goes through; a kind
    provides the steps. Attributes: ``name`` (its manifest/recipe backend and ``--backend``
    value), ``selectable`` (listed in ``--backend``; a kind that a model file declares itself,
    like the switch agent, is found by :meth:`detects` instead)."""

    name: ClassVar[str]
    selectable: ClassVar[bool] = True

    # ---- which inputs are this kind's ------------------------------------------------------------
    def detects(self, model: Path) -> bool:
        """True if ``model`` declares itself to be this kind (then ``--backend`` does not apply)."""
        return False

    @abc.abstractmethod
    def owns_manifest(self, raw: dict[str, Any]) -> bool:
        """True if the firmware manifest ``raw`` was written by this kind."""

    # ---- compile: the steps ------------------------------------------------------------------------
    @abc.abstractmethod
    def prepare(self, request: CompileRequest) -> Any:
        """Load the policy and its spec and check everything that can fail before the work
        (minutes of sampling must not end on a bad flag). Returns the kind's job."""

    @abc.abstractmethod
    def fit(self, job: Any, run: RunContext) -> Any:
        """Sample the teacher, fit the student and lower it to the device model (the kind's result)."""

    @abc.abstractmethod
    def write_model(self, job: Any, result: Any, stage: Path) -> None:
        """Write the device model and its spec (``model.rlcc.json`` first: it marks OUT as rlcc's)."""

    @abc.abstractmethod
    def generate(self, job: Any, result: Any, stage: Path) -> dict[str, Path]:
        """Write the C, header and manifest; returns {"c", "h", "manifest", ...} -> path."""

    @abc.abstractmethod
    def verify_compiled(self, job: Any, result: Any, paths: dict[str, Path], stage: Path,
                        run: RunContext) -> tuple[Any, BuildError | EmulationError | None]:
        """Verify the generated C (writes ``stage/verify.json``); a build or emulator failure is
        returned, to be reported after OUT is in place."""

    @abc.abstractmethod
    def closed_loop(self, job: Any, result: Any, verdict: Any, stage: Path, run: RunContext) -> Any:
        """Check the firmware against its teacher in closed loop (the fidelity gate); the result with it."""

    @abc.abstractmethod
    def report(self, job: Any, result: Any, verdict: Any, failure: BuildError | EmulationError | None,
               stage: Path, run: RunContext) -> Outcome:
        """Write report.json/report.md and return the outcome with the kind's wording."""

    def recipe(self, job: Any) -> dict[str, Any]:
        """How to compile the same model again (the manifest's ``compile`` entry)."""
        return {"backend": self.name}

    # ---- escalation: trying harder when the closed-loop check misses ------------------------------
    def escalation(self, job: Any, tried: list[Attempt]) -> tuple[str, Any] | None:
        """The next, stronger job to try after ``tried`` (the default compile first), as (its
        description, the job), or None to stop. Default: never (one attempt)."""
        return None

    def rank(self, attempt: Attempt) -> Any:
        """Sort key of an attempt (smaller is better) when there were several."""
        return 0

    def note_attempts(self, kept: Attempt, tried: list[Attempt]) -> Any:
        """``kept.checked`` with the record of every attempt, for the report."""
        return kept.checked

    def compile_into(self, request: CompileRequest, stage: Path, run: RunContext) -> Outcome:
        """Every step of a compile, files into ``stage`` (the template every kind runs): the
        default attempt, then the kind's escalation while it offers one; the best attempt's files
        end up in ``stage``."""
        job = self.prepare(request)
        tried = [self._attempt(request, job, stage, run, "default compile")]
        while (step := self.escalation(job, tried)) is not None:
            what, harder = step
            run.log(f"fidelity gate missed: trying harder, attempt {len(tried) + 1}: {what}")
            tried.append(self._attempt(request, harder, stage / f"{ATTEMPT_PREFIX}{len(tried)}", run, what))
        kept = min(tried, key=self.rank) if len(tried) > 1 else tried[0]
        if len(tried) > 1:
            run.log(f"kept attempt {tried.index(kept) + 1} of {len(tried)} ({kept.what})")
            _keep_files(kept, stage)
        checked = self.note_attempts(kept, tried)
        return self.report(kept.job, checked, kept.verdict, kept.failure, stage, run)

    def _attempt(self, request: CompileRequest, job: Any, stage: Path, run: RunContext, what: str) -> Attempt:
        start = time.perf_counter()
        result = self.fit(job, run)
        stage.mkdir(parents=True, exist_ok=True)
        self.write_model(job, result, stage)
        name = request.name
        run.log(f"generating {name}.c and the golden test vectors")
        with run.progress(f"generating {name}.c and the golden test vectors", "step") as bar:
            bar.add(1)
            paths = self.generate(job, result, stage)
            bar.advance(1)
        remember(paths)
        verdict, failure = (self.verify_compiled(job, result, paths, stage, run) if request.run_verify
                            else (None, None))
        checked = self.closed_loop(job, result, verdict, stage, run)
        return Attempt(job, checked, verdict, failure, stage, what, time.perf_counter() - start)

    # ---- verify and anchor ---------------------------------------------------------------------------
    def refused_verify_flags(self) -> tuple[tuple[str, str], ...]:
        """(request option, flag) pairs of ``rlcc-verify`` this kind does not read (refused, not ignored)."""
        return ()

    @abc.abstractmethod
    def verify(self, request: VerifyRequest, log: Log) -> VerifyOutcome:
        """``rlcc-verify`` of this kind's firmware."""

    @abc.abstractmethod
    def rebuild(self, policy: Path, raw: dict[str, Any], jobs: int, log: Log, progress: Progress) -> dict[str, Path]:
        """Recompile ``policy`` with the manifest's recipe (``rlcc-verify --policy``); the files ``generate`` wrote."""



def _keep_files(kept: Attempt, stage: Path) -> None:
    """Make ``stage`` hold the kept attempt's files only (its own, or moved up from its scratch
    directory) and remove every attempt's scratch directory."""
    if kept.directory != stage:
        for p in stage.iterdir():
            if not p.name.startswith(ATTEMPT_PREFIX):
                shutil.rmtree(p) if p.is_dir() else p.unlink()
        for p in kept.directory.iterdir():
            p.rename(stage / p.name)
    for p in stage.iterdir():
        if p.name.startswith(ATTEMPT_PREFIX):
            shutil.rmtree(p)
