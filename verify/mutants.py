"""Mutation analysis: does verification catch off-by-one bugs in the firmware it checks?

Each mutant from :mod:`rlcc.verify.mutate` is compiled like the real firmware and replayed
through the verification vectors in the emulator. A mutant is *killed* when any output (rate,
rtt_req, the context out) differs from the golden model or it faults or hangs; *stillborn*
when it does not compile; *equivalent* when a prover shows no input tells it apart; else it
*survived*, a bug verification would have shipped. A survivor is first checked at the golden
level: a threshold/leaf/bias/clamp/probe-timeout mutant whose model counterpart
``rlcc.verify.observable`` shows unobservable by an exhaustive search (e.g. a leaf every input of
which saturates the factor clamp) is reported equivalent with that reason
(``golden_equivalence=False`` turns this off); the others go to the prover, if one is given.
Each mutant first runs against the few vectors that exercise the code it changed (built for
it, or picked from the golden trace), then, if it survives those, against the whole set.

    report = run_mutation_analysis(Path("out/firmware.c"), None, "rv64imac")
    print(report.summary()); json.dump(report.to_dict(), fh)
"""

from __future__ import annotations

import dataclasses
import functools
import multiprocessing
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from rlcc import textio
from rlcc import firmware_sdk_stub as sdk
from rlcc import formats as fmt
from rlcc.codegen import manifest as manifest_io
from rlcc.codegen.context import RUNTIME_HEADER
from rlcc.errors import BadInputError, BuildError, EmulationError, ExitCode, RlccError
from rlcc.fxp import golden
from rlcc.fxp.model import FxModel
from rlcc.fxp.vectors import Vectors, concat, expected
from rlcc.parallel import Runner, can_fork
from rlcc.verify.generators import boundary_vectors, random_vectors
from rlcc.verify.firmware_run import build_in, firmware_build, resolve
from rlcc.verify.mutate import KINDS, Mutant, generate_mutants
from rlcc.verify.runner import HarnessRunner, records_from_vectors

SCHEMA = "rlcc.mutants/1"
DEFAULT_RANDOM = 100_000
TARGETED_MAX = 1024  # vectors in a mutant's first, targeted run
OUTPUTS = ("rate", "rtt_req", "ctx_out")
STATUSES = ("killed", "equivalent", "survived", "stillborn")
Prover = Callable[[Path, FxModel, str], Any]
M = TypeVar("M")
R = TypeVar("R")


@dataclasses.dataclass
class MutantResult:
    """What happened to one mutant. ``reason``: the outputs that differed, "fault", "hang",
    the compiler error (stillborn) or the prover's status (survived / equivalent)."""

    mutant: Mutant
    status: str
    reason: str = ""
    phase: str = ""  # "targeted", "full" or "proof": the vector set that killed it
    vector: dict[str, Any] | None = None  # the killing vector when a proof found it
    seconds: float = 0.0

    def brief(self) -> dict[str, Any]:
        m = self.mutant
        out: dict[str, Any] = {"id": m.id, "description": m.description, "file": m.file, "line": m.line}
        if self.reason:
            out["reason"] = self.reason
        return out


@dataclasses.dataclass
class MutationReport:
    """All mutants' outcomes for one firmware and target; ``to_dict`` is schema ``rlcc.mutants/1``."""

    firmware: str
    target: str
    profile: str
    vectors: int
    files: dict[str, str]  # "c"/"h" -> file name, for survivors' locations
    results: list[MutantResult]
    wall_s: float

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.results)

    @property
    def kill_rate(self) -> float | None:
        """killed / (mutants - equivalent - stillborn); None when no mutant could be killed."""
        n = len(self.results) - self.count("equivalent") - self.count("stillborn")
        return self.count("killed") / n if n else None

    @property
    def passed(self) -> bool:
        """True when verification caught every mutant it could (no survivor)."""
        return self.count("survived") == 0

    def _located(self, status: str) -> list[dict[str, Any]]:
        out = []
        for r in self.results:
            if r.status == status:
                d = r.brief()
                d["file"] = self.files.get(d["file"], d["file"])
                out.append(d)
        return out

    def to_dict(self) -> dict[str, Any]:
        by_kind: dict[str, dict[str, int]] = {}
        for r in self.results:
            k = by_kind.setdefault(r.mutant.kind, {"mutants": 0, **{s: 0 for s in STATUSES}})
            k["mutants"] += 1
            k[r.status] += 1
        rate = self.kill_rate
        proofs = [{**r.brief(), "vector": r.vector} for r in self.results if r.phase == "proof"]
        return {
            "schema": SCHEMA,
            "firmware": self.firmware,
            "target": self.target,
            "profile": self.profile,
            "vectors": self.vectors,
            "mutants": len(self.results),
            "killed": self.count("killed"),
            "equivalent": self.count("equivalent"),
            "survived": self.count("survived"),
            "stillborn": self.count("stillborn"),
            "kill_rate": None if rate is None else round(rate, 6),
            "wall_s": round(self.wall_s, 3),
            "by_kind": {k: by_kind[k] for k in KINDS if k in by_kind},
            "survivors": self._located("survived"),
            "equivalent_list": self._located("equivalent"),
            "stillborn_list": self._located("stillborn"),
            "killed_by_proof": proofs,
        }

    def summary(self) -> str:
        rate = self.kill_rate
        pct = "n/a" if rate is None else f"{100 * rate:.1f}%"
        return (f"{self.target}: {len(self.results)} mutants, {self.count('killed')} killed, "
                f"{self.count('equivalent')} equivalent, {self.count('survived')} survived, "
                f"{self.count('stillborn')} stillborn; kill rate {pct} ({self.vectors} vectors, {self.wall_s:.1f} s)")


def _take(v: Vectors, idx: np.ndarray) -> Vectors:
    return Vectors(*(getattr(v, f.name)[idx] for f in dataclasses.fields(Vectors)))


def default_vectors(model: FxModel, shipped: Vectors, seed: int = 0, n_random: int = DEFAULT_RANDOM) -> Vectors:
    """The manifest's vectors plus the verification set: ``rlcc.verify.generators.verification_set``
    when this rlcc has it, else boundary + ``n_random`` random vectors."""
    try:
        from rlcc.verify.generators import verification_set  # type: ignore[attr-defined]
    except ImportError:
        return concat(shipped, boundary_vectors(model, seed), random_vectors(model, n_random, seed + 1))
    extra, _targets = verification_set(model, seed, n_random)
    return concat(shipped, extra)


def _differences(v: Vectors, out: np.ndarray) -> tuple[np.ndarray, str]:
    """Indices of vectors whose outputs differ, and which outputs differed."""
    bad = {
        "rate": out["rate"] != v.rate,
        "rtt_req": out["rtt_req"] != v.rtt_req,
        "ctx_out": np.any(out["ctx_out"] != v.ctx_out, axis=1),
    }
    idx = np.flatnonzero(bad["rate"] | bad["rtt_req"] | bad["ctx_out"])
    return idx, ",".join(k for k in OUTPUTS if bad[k].any())


def _vector_dict(v: Vectors, i: int, out: np.ndarray | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {
        "ctx_in": v.ctx_in[i].tolist(), "event": v.event[i].tolist(), "attr": int(v.attr[i]),
        "expected": {"rate": int(v.rate[i]), "rtt_req": int(v.rtt_req[i]), "ctx_out": v.ctx_out[i].tolist()},
    }
    if out is not None:
        d["got"] = {"rate": int(out["rate"][i]), "rtt_req": int(out["rtt_req"][i]), "ctx_out": out["ctx_out"][i].tolist()}
    return d


class _Targeting:
    """Picks, per mutant, the vectors of the full set that exercise the mutated code: those
    built for it (``rlcc.verify.observable`` target tags), then those whose golden trace passes
    through it (policy inputs near the threshold, the leaf taken, the event type)."""

    def __init__(self, model: FxModel, v: Vectors) -> None:
        g = golden.step(model, v.ctx_in, v.event, v.attr)
        etype = v.event[:, fmt.EV_ATTR] & 0xFF
        self.rtt = etype == fmt.EVENT_RTT
        self.tx = (etype == fmt.EVENT_TX) & (v.ctx_in[:, fmt.CTX_RATE] != 0)
        self.x, self.leaf = g.features, g.leaf_index
        self.tags = np.asarray(v.targets, dtype=str)

    @staticmethod
    def tag_prefix(m: Mutant) -> str | None:
        """The observable-target id prefix of vectors built to expose ``m``."""
        if m.kind in ("thr", "op"):
            return f"split:t{m.tree}:l{m.level}:"
        if m.kind == "leaf":
            return f"leaf:t{m.tree}:{m.leaf}"
        if m.kind == "round" and m.id in ("round:nearest", "round:ceil"):
            return "rate_round"
        if m.kind == "ramp":
            return m.id
        return {"bias": "bias", "clamp": m.id.split(":")[0] + ":", "probe": "probe_timeout:"}.get(m.kind)

    def select(self, m: Mutant) -> np.ndarray:
        mask = self.tx if m.kind == "probe" else self.rtt.copy()
        if m.kind in ("thr", "op") and m.input is not None and 0 <= m.input < self.x.shape[1] and m.threshold is not None:
            mask &= np.abs(self.x[:, m.input] - m.threshold) <= 2  # a +-1 threshold or >= differs only here
        elif m.kind == "leaf" and m.tree is not None and m.tree < self.leaf.shape[1]:
            mask &= self.leaf[:, m.tree] == m.leaf
        prefix = self.tag_prefix(m)
        built = np.flatnonzero(np.char.startswith(self.tags, prefix)) if prefix and len(self.tags) else np.zeros(0, np.int64)
        return np.unique(np.concatenate([built, np.flatnonzero(mask)[:TARGETED_MAX]]))


@dataclasses.dataclass
class _Job:
    """Everything a worker needs, shared read-only by all mutants of one run."""

    sources: dict[str, str]
    names: dict[str, str]
    target: str
    profile: Any
    cc: str | None
    zbb: bool
    model: FxModel
    vectors: Vectors
    targeting: _Targeting
    prover: Prover | None
    unobservable: dict[str, str]  # mutant id -> why its model edit is invisible
    doca_layout: str | None = None  # --sdk doca firmware: the device layout it is built against
    # one proof at a time across the workers (each proof runs its own processes on the budget)
    prover_lock: Any = dataclasses.field(default_factory=lambda: multiprocessing.get_context(
        "fork" if can_fork() else None).Lock())


def _replay(runner: HarnessRunner, v: Vectors) -> tuple[str, dict[str, Any] | None]:
    """("" if the firmware matches golden on ``v``, else why it does not; first bad vector)."""
    if len(v) == 0:
        return "", None
    try:
        out = runner.run(records_from_vectors(v))
    except EmulationError as exc:
        hang = getattr(exc, "kind", "") == "limit" or str(exc).startswith("instruction limit")
        return ("hang" if hang else "fault"), None
    idx, which = _differences(v, out)
    return (which, _vector_dict(v, int(idx[0]), out)) if len(idx) else ("", None)


@contextmanager
def mutant_folder(files: dict[str, str]) -> Iterator[Path]:
    """A temporary folder holding ``files`` ({file name: text}): where one mutant is built."""
    with tempfile.TemporaryDirectory(prefix="rlcc-mutant-") as tmp:
        work = Path(tmp)
        for name, text in files.items():
            (work / name).write_text(text, encoding="utf-8")
        yield work


def evaluate_all(evaluate: Callable[[M], R], mutants: Sequence[M], jobs: int = 1, progress: bool = False,
                 desc: str = "mutants") -> list[R]:
    """``[evaluate(m) for m in mutants]`` over ``jobs`` processes (``rlcc.parallel``: each forked,
    so ``evaluate`` may hold unpicklable state), with a bar on a terminal when ``progress``."""
    with _progress(len(mutants), progress, desc) as advance:
        return Runner(jobs).map(evaluate, mutants, on_done=advance, pickled=False)


def _evaluate(m: Mutant, job: _Job) -> MutantResult:
    t0 = time.perf_counter()
    with mutant_folder({job.names[key]: text for key, text in m.apply(job.sources).items()}) as work:
        try:
            fw = build_in(work, work / job.names["c"], job.target, job.profile, job.cc, doca_layout=job.doca_layout)
        except BuildError as exc:
            return MutantResult(m, "stillborn", str(exc), seconds=time.perf_counter() - t0)
        elf, runner = fw.elf, fw.runner()
        for phase, idx in (("targeted", job.targeting.select(m)), ("full", None)):
            reason, _ = _replay(runner, job.vectors if idx is None else _take(job.vectors, idx))
            if reason:
                return MutantResult(m, "killed", reason, phase, seconds=time.perf_counter() - t0)
        result = MutantResult(m, "survived")
        if m.id in job.unobservable:
            result = MutantResult(m, "equivalent", job.unobservable[m.id])
        elif job.prover is not None:
            result = _prove(m, job, elf, runner)
    result.seconds = time.perf_counter() - t0
    return result


def _prove(m: Mutant, job: _Job, elf: Path, runner: HarnessRunner) -> MutantResult:
    """Ask the prover about a survivor; a counterexample counts only if the emulator confirms it."""
    with job.prover_lock:
        res = job.prover(elf, job.model, job.target)
    status = str(getattr(res, "status", "unsupported"))
    if status == "proven":
        return MutantResult(m, "equivalent", "prover: proven")
    cex = getattr(res, "counterexample", None)
    if status == "counterexample" and cex is not None and len(cex):
        v = expected(job.model, cex.ctx_in, cex.event, cex.attr)  # golden outputs, not the prover's
        reason, vector = _replay(runner, v)
        if reason:
            return MutantResult(m, "killed", reason, "proof", vector or _vector_dict(v, 0))
        return MutantResult(m, "survived", "counterexample not confirmed by the emulator")
    return MutantResult(m, "survived", f"prover: {status}")


def _coverage_id(m: Mutant) -> str | None:
    """The ``rlcc.verify.observable.coverage`` id of the model edit a C mutant makes, if it is one."""
    name, _, rest = m.id.partition(":")
    if m.kind == "thr":
        return f"split:t{m.tree}:l{m.level}:thr{rest.rsplit(':', 1)[1]}"
    if m.kind == "ramp" and "_cut:" in m.id:
        # A folded ramp's LO - 1 (HI) cut moved outward puts one more input value, LO - 1 (HI + 1),
        # in the linear piece: the term changes there alone, exactly where the same outward edit of
        # the ramp's LO (HI) first shows, and nowhere else that edit is invisible: that edit's
        # witness kills it and its proof of invisibility covers it. The center cut has none.
        _, i, role, _ = m.id.split(":")
        return {"lo_cut": f"ramp:{i}:lo:-1", "hi_cut": f"ramp:{i}:hi:+1"}.get(role)
    if m.kind in ("leaf", "bias", "ramp"):
        return m.id
    if name in ("clamp_min", "clamp_max", "probe_timeout"):
        return f"{name}:thr{rest}"
    return None


def _unobservable_edits(model: FxModel, mutants: list[Mutant]) -> dict[str, str]:
    """Mutant id -> why no input can observe its model edit (exhaustive search), for the mutants
    whose model counterpart ``rlcc.verify.observable`` proves invisible."""
    edits = {m.id: cid for m in mutants if (cid := _coverage_id(m))}
    if not edits:
        return {}
    try:
        from rlcc.verify.observable import killed_by, observable_vectors
    except ImportError:
        return {}
    proven = {u["target"]: u["reason"] for u in observable_vectors(model).unobservable if u.get("exhaustive")}
    out = {}
    for mid, cid in edits.items():
        try:
            targets = killed_by(model, cid)
        except (KeyError, ValueError, IndexError):
            continue
        if all(t in proven for t in targets):
            why = "; ".join(dict.fromkeys(proven[t] for t in targets))
            out[mid] = f"golden model, exhaustive search (rlcc.verify.observable): {why}"
    return out


@contextmanager
def _progress(total: int, enabled: bool, desc: str) -> Iterator[Callable[[int, Any], None]]:
    """A ``Runner.map`` ``on_done`` advancing a bar on a terminal's stderr (else doing nothing)."""
    if not (enabled and sys.stderr.isatty()):
        yield lambda _i, _r: None
        return
    from tqdm import tqdm

    bar = tqdm(total=total, desc=desc, unit="mutant", file=sys.stderr)
    try:
        yield lambda _i, _r: bar.update(1)
    finally:
        bar.close()


def run_mutation_analysis(
    firmware_c: Path,
    manifest: Path | None,
    target: str,
    profile: str | None = None,
    cc: str | None = None,
    vectors: Vectors | None = None,
    prover: Prover | None = None,
    jobs: int = 2,
    progress: bool = False,
    kinds: Iterable[str] | None = None,
    golden_equivalence: bool = True,
    doca_layout: str | None = None,
) -> MutationReport:
    """Mutate ``firmware_c`` (and its header), build and verify every mutant; see the module doc.

    ``vectors`` defaults to :func:`default_vectors`; ``kinds`` limits the mutant kinds
    (:data:`rlcc.verify.mutate.KINDS`); ``golden_equivalence`` reports survivors whose model
    edit is exhaustively unobservable as equivalent (module doc); ``doca_layout`` is the DOCA device
    layout --sdk doca firmware and its mutants are built against. Raises BuildError if the original firmware does not
    build and an RlccError with exit code MISMATCH if it does not itself pass the vectors.
    """
    t0 = time.perf_counter()
    firmware_c = Path(firmware_c)
    if not firmware_c.is_file():
        raise BadInputError(f"{firmware_c}: no such file")
    _, prof, zbb = resolve(target, profile)
    manifest = Path(manifest) if manifest else firmware_c.with_name(firmware_c.stem + ".rlcc.json")
    if not manifest.is_file():
        raise BadInputError(f"{manifest}: no firmware manifest beside {firmware_c.name}")
    raw, model, shipped = manifest_io.load(str(manifest))
    header = firmware_c.with_name(raw.get("files", {}).get("h", {}).get("path") or firmware_c.stem + ".h")
    if not header.is_file():
        raise BadInputError(f"{header}: the firmware header is missing")
    v = default_vectors(model, shipped) if vectors is None else vectors

    sources = {"c": textio.read_text(firmware_c, "firmware"), "h": textio.read_text(header, "firmware header")}
    names = {"c": firmware_c.name, "h": header.name}
    runtime = firmware_c.with_name(RUNTIME_HEADER)
    if f'#include "{RUNTIME_HEADER}"' in sources["c"]:  # not inlined: the runtime's mutants edit a copy
        sources["rt"] = textio.read_text(runtime if runtime.is_file() else sdk.runtime_header(), "runtime header")
        names["rt"] = RUNTIME_HEADER
    mutants = generate_mutants(sources["c"], sources["h"], model, kinds, rt_text=sources.get("rt"))
    with firmware_build(firmware_c, target, prof, cc, doca_layout=doca_layout) as fw:
        reason, example = _replay(fw.runner(), v)
    if reason:
        raise RlccError(f"{firmware_c.name} itself fails verification on {target} ({reason} differ; e.g. {example}): "
                        "mutation analysis of wrong firmware is meaningless", ExitCode.MISMATCH)

    job = _Job(sources, names, target, prof, cc, zbb, model, v, _Targeting(model, v), prover,
               _unobservable_edits(model, mutants) if golden_equivalence else {}, doca_layout)
    results = evaluate_all(functools.partial(_evaluate, job=job), mutants, jobs, progress, target)
    return MutationReport(str(firmware_c), target, prof.name, len(v), job.names, results, time.perf_counter() - t0)
