"""Verify firmware C against its manifest's golden model in the emulator, with a latency budget."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable

import numpy as np

from rlcc import textio
from rlcc import formats as fmt
from rlcc.codegen import manifest as manifest_io
from rlcc.codegen.context import model_sha256
from rlcc.codegen.sdk_flavours import DOCA, for_firmware
from rlcc.emulator.cycle_model import Profile
from rlcc.errors import BadInputError
from rlcc.firmware_sdk_stub import harness_layout as hl
from rlcc.fxp import golden
from rlcc.fxp.model import FxModel
from rlcc.verify.observable import coverage as observable_coverage
from rlcc.fxp.vectors import Vectors, concat
from rlcc.verify.generators import ModelVectors, verification_set
from rlcc.parallel import available_cpus
from rlcc.progress import Stage
from rlcc.targets import DEFAULT_TARGET
from rlcc.verify.firmware_run import firmware_build, resolve
from rlcc.verify.provenance import Provenance, Rebuild, establish
from rlcc.verify.runner import HarnessRunner, records_from_vectors

DEFAULT_BUDGET_NS = 2000.0  # the RL-CC paper's decision-time bound (~2 us; RTT ~10 us)
DEFAULT_RANDOM_VECTORS = 100_000  # on top of the observable, boundary, sequence and pinned manifest vectors
# --random's bound: peak memory grows ~1.2 KB per random vector (NIC firmware) and ~2.3 KB per
# random record (switch agent), measured at 1,000,000 (1.17 GB and 2.27 GB peak RSS), and the
# emulation takes ~1 min per million vectors.
MAX_RANDOM_VECTORS = 1_000_000
RANDOM_VECTOR_PEAK_BYTES = 2_300  # the worse of the two paths
DEFAULT_PROVE_TIMEOUT_S = 120.0
MAX_JOBS = 64  # parallel mutant builds (--jobs): each holds a compiler and an emulator
MAX_EXAMPLES = 5
ASSURANCE_LEVELS = ("sampled", "proven")  # what --require accepts, weakest first


@dataclasses.dataclass(frozen=True)
class Budget:
    """Decision-latency budget in cycles of the profile's clock (from cycles and/or ns)."""

    cycles: int
    ns: float
    full_load: bool
    hw_threads: int

    @classmethod
    def resolve(cls, profile: Profile, budget_cycles: int | None, budget_ns: float | None, full_load: bool) -> "Budget":
        """The tighter of the given limits; the paper's 2 us bound when neither is given.

        Under ``full_load`` every hardware thread of a core is busy, so one thread gets
        ``1 / hw_threads`` of the pipeline and a time budget buys that many fewer cycles.
        """
        share = profile.hw_threads if full_load else 1
        limits = []
        if budget_cycles is not None:
            limits.append(int(budget_cycles))
        if budget_ns is not None or budget_cycles is None:
            ns = DEFAULT_BUDGET_NS if budget_ns is None else float(budget_ns)
            limits.append(int(ns * 1e-9 * profile.clock_hz) // share)
        cycles = min(limits)
        return cls(cycles=cycles, ns=cycles * share * 1e9 / profile.clock_hz, full_load=full_load, hw_threads=share)


@dataclasses.dataclass(frozen=True)
class ModelSupport:
    """What this PCC check needs from the manifest's model kind; the default is the trees'."""

    model_vectors: ModelVectors | None = None  # the kind's own vectors (None: the trees' observable set)
    unprovable: str = ""  # non-empty: no --prove/--mutants for this kind (says which kind)
    coverage_note: str = ""  # non-empty: no observable-target coverage; this note instead
    rebuilders: Mapping[str, Rebuild] = dataclasses.field(default_factory=dict)  # --policy recompiles


@dataclasses.dataclass
class VectorRun:
    """What every kind's verification reports first: the firmware, where it ran, the vectors' verdict."""

    firmware: str
    target: str
    profile: str
    clock_hz: int
    vectors: int
    mismatches: int
    mismatch_examples: list[dict[str, Any]]


@dataclasses.dataclass
class VerifyResult(VectorRun):
    """Everything rlcc-verify reports on PCC firmware; ``to_dict`` is the stable ``--json`` schema."""

    disable_mask_ok: bool
    cycles: dict[str, float]
    rtt_cycles: dict[str, float]
    instructions: dict[str, float]
    worst_case: dict[str, Any]
    budget: Budget
    size: dict[str, int]
    context_bytes: int  # bytes of the 48-byte per-flow context the firmware uses
    source_matches_manifest: bool
    coverage: dict[str, Any] = dataclasses.field(default_factory=dict)
    stack: dict[str, Any] = dataclasses.field(default_factory=dict)
    proof: dict[str, Any] | None = None  # rlcc.verify.prove.ProofResult.to_dict() with --prove
    mutants: dict[str, Any] | None = None  # rlcc.verify.mutants.MutationReport.to_dict() with --mutants
    provenance: Provenance | None = None  # what the verdict is anchored to (rlcc.verify.provenance)
    doca_layout: str | None = None  # --sdk doca firmware: the device layout it was verified against

    @property
    def bit_exact(self) -> bool:
        return self.mismatches == 0 and self.disable_mask_ok and not self.proof_failed

    @property
    def proof_failed(self) -> bool:
        """The prover found a reproducible counterexample (or a broken side condition)."""
        return self.proof is not None and self.proof["status"] in ("counterexample", "failed")

    @property
    def assurance_level(self) -> str:
        """"proven" (for all inputs) or "sampled" (the vectors only: a defect on one input in 2^32 can pass)."""
        return assurance_level(self.proof)

    @property
    def assurance(self) -> str:
        """One line: the level of assurance this run established."""
        if self.assurance_level == "proven":
            return self.proof["assurance"]
        tail = f"; proof: {self.proof['assurance']}" if self.proof is not None else " (no proof: --prove)"
        return f"sampled: {self.vectors:,} vectors{tail}"

    @property
    def anchored(self) -> bool:
        """The files match their manifest and, if asked, the pinned digest or the reviewed policy."""
        return self.provenance is None or self.provenance.ok

    @property
    def within_budget(self) -> bool:
        return self.cycles["max"] <= self.budget.cycles

    @property
    def passed(self) -> bool:
        return self.bit_exact and self.within_budget and self.anchored

    @property
    def worst_case_ns(self) -> float:
        """The worst event's time at the profile clock (ns; hw threads sharing a pipeline slow it)."""
        return round(self.cycles["max"] * self.budget.hw_threads * 1e9 / self.clock_hz, 3)

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "rlcc.verify/1",
            "firmware": self.firmware,
            **({"doca_layout": self.doca_layout} if self.doca_layout is not None else {}),
            "target": self.target,
            "profile": self.profile,
            "clock_hz": self.clock_hz,
            "bit_exact": self.bit_exact,
            "vectors": self.vectors,
            "mismatches": self.mismatches,
            "mismatch_examples": self.mismatch_examples,
            "disable_event_mask_ok": self.disable_mask_ok,
            "cycles": self.cycles,
            "rtt_decision_cycles": self.rtt_cycles,
            "instructions": self.instructions,
            "worst_case": self.worst_case,
            "budget": {
                "cycles": self.budget.cycles,
                "ns": round(self.budget.ns, 3),
                "full_load": self.budget.full_load,
                "hw_threads_sharing": self.budget.hw_threads,
                "worst_case_ns": self.worst_case_ns,
                "headroom": round(1.0 - self.cycles["max"] / self.budget.cycles, 4) if self.budget.cycles else None,
                "within": self.within_budget,
            },
            "size": self.size,
            "context_bytes": self.context_bytes,
            "source_matches_manifest": self.source_matches_manifest,
            "assurance": self.assurance,
            "assurance_level": self.assurance_level,
            "provenance": self.provenance.to_dict() if self.provenance is not None else None,
            "coverage": self.coverage,
            "stack": self.stack,
            "proof": self.proof,
            "mutants": self.mutants,
            "passed": self.passed,
        }


def assurance_level(proof: dict[str, Any] | None) -> str:
    """"proven" when the equivalence proof completed (the switch prover says "proved"), else "sampled"."""
    return "proven" if proof is not None and proof["status"] in ("proven", "proved") else "sampled"


def random_bound_text() -> str:
    """The bound of --random and the memory it implies, for help texts and errors."""
    return f"{MAX_RANDOM_VECTORS:,} random vectors take about {MAX_RANDOM_VECTORS * RANDOM_VECTOR_PEAK_BYTES / 1e9:.1f} GB of memory"


def check_random_count(random_count: int) -> None:
    """BadInputError (exit 3) unless 0 <= ``random_count`` <= MAX_RANDOM_VECTORS: checked before
    any work, so a mistyped count fails at once instead of allocating gigabytes."""
    if not 0 <= random_count <= MAX_RANDOM_VECTORS:
        raise BadInputError(f"--random must be between 0 and {MAX_RANDOM_VECTORS:,} ({random_bound_text()}), "
                            f"got {random_count:,}")


def check_seed(seed: int) -> None:
    """BadInputError (exit 3) for a negative ``seed`` (numpy's generators take seeds >= 0)."""
    if seed < 0:
        raise BadInputError(f"--seed must be >= 0, got {seed}")


def manifest_path_for(firmware_c: Path) -> Path:
    return firmware_c.with_name(firmware_c.stem + ".rlcc.json")


def _stats(values: np.ndarray) -> dict[str, float]:
    if len(values) == 0:
        return {"min": 0, "mean": 0.0, "max": 0, "p99": 0}
    return {
        "min": int(values.min()),
        "mean": round(float(values.mean()), 3),
        "max": int(values.max()),
        "p99": int(np.percentile(values, 99, method="higher")),
    }


def _example(model: FxModel, v: Vectors, i: int, out: np.ndarray) -> dict[str, Any]:
    return {
        "index": int(i),
        "event_type": fmt.EVENT_NAMES.get(int(v.event[i, fmt.EV_ATTR]) & 0xFF, "unknown"),
        "inputs": {"ctx_in": v.ctx_in[i].tolist(), "event": v.event[i].tolist(), "attr": int(v.attr[i])},
        "expected": {"rate": int(v.rate[i]), "rtt_req": int(v.rtt_req[i]), "ctx_out": v.ctx_out[i].tolist()},
        "got": {"rate": int(out["rate"][i]), "rtt_req": int(out["rtt_req"][i]), "ctx_out": out["ctx_out"][i].tolist()},
    }


def _worst_case(model: FxModel, v: Vectors, out: np.ndarray) -> dict[str, Any]:
    i = int(np.argmax(out["cycles"]))
    g = golden.step(model, v.ctx_in[i : i + 1], v.event[i : i + 1], v.attr[i : i + 1])
    etype = int(v.event[i, fmt.EV_ATTR]) & 0xFF
    case: dict[str, Any] = {
        "index": i,
        "cycles": int(out["cycles"][i]),
        "instructions": int(out["instret"][i]),
        "event_type": fmt.EVENT_NAMES.get(etype, "unknown"),
        "new_flow": bool(v.ctx_in[i, fmt.CTX_RATE] == 0),
    }
    if etype == fmt.EVENT_RTT:
        case["inputs"] = dict(zip(model.spec.input_names(), g.features[0].tolist()))
        case["leaves"] = g.leaf_index[0].tolist()
    return case


def verify_firmware(
    firmware_c: Path,
    manifest: Path | None = None,
    target: str = DEFAULT_TARGET.name,
    profile: str | None = None,
    cc: str | None = None,
    budget_cycles: int | None = None,
    budget_ns: float | None = None,
    full_load: bool = False,
    random_count: int = DEFAULT_RANDOM_VECTORS,
    seed: int = 0,
    prove: bool = False,
    prove_timeout_s: float = DEFAULT_PROVE_TIMEOUT_S,
    mutants: bool = False,
    jobs: int = 2,
    progress: bool = False,
    stage: Stage | None = None,
    policy: Path | None = None,
    expect_sha256: str | None = None,
    log: Callable[[str], None] = lambda _m: None,
    doca_layout: str | None = None,
    support: ModelSupport | None = None,
) -> VerifyResult:
    """Cross-compile ``firmware_c``, run manifest + observable + boundary + random vectors, compare
    with golden; optionally prove equivalence symbolically and run the built-in mutation analysis.
    ``stage`` advances through the steps of the vector check (vectors, build, size, emulation,
    coverage). First the files are tied to their manifest and, with ``policy`` or
    ``expect_sha256``, to the reviewed policy or a pinned digest (``rlcc.verify.provenance``;
    ``policy`` recompiles it on ``jobs`` workers unless this rlcc has it cached). ``doca_layout``:
    for --sdk doca firmware, the device layout to verify against (rlcc.firmware_sdk_stub.doca_layout;
    default DOCA 2.5). ``support``: what the manifest's model kind adds (default the trees')."""
    support = support or ModelSupport()
    check_random_count(random_count)
    check_seed(seed)
    firmware_c = Path(firmware_c)
    if not firmware_c.is_file():
        raise BadInputError(f"{firmware_c}: no such file")
    target_rec, prof, zbb = resolve(target, profile)
    choice = for_firmware(firmware_c).with_doca_layout(doca_layout)
    manifest = Path(manifest) if manifest else manifest_path_for(firmware_c)
    if not manifest.is_file():
        raise BadInputError(f"{manifest}: no firmware manifest beside {firmware_c.name} (pass --manifest)")
    raw, model, shipped = manifest_io.load(str(manifest))
    if support.model_vectors is None and not isinstance(model, FxModel):
        raise BadInputError(f"{manifest.name}: {raw.get('backend')} firmware, and these are the trees' checks (pass its "
                            "kind's support, or use rlcc.pipeline.verify, which rlcc-verify runs)")
    if budget_cycles is not None and budget_cycles <= 0 or budget_ns is not None and budget_ns <= 0:
        raise BadInputError("budgets must be positive")
    if prove_timeout_s <= 0:
        raise BadInputError("--prove-timeout must be positive")
    if support.unprovable and (prove or mutants):
        raise BadInputError(f"{manifest.name}: --prove and --mutants support tree firmware only, not {support.unprovable}")
    provenance = establish(raw, manifest, firmware_c, model_sha256(model), policy, expect_sha256, jobs, log,
                           rebuilders=support.rebuilders)
    stage = stage or Stage()
    stage.add(5)
    vectors = concat(shipped, verification_set(model, seed, random_count, support.model_vectors)[0])
    stage.advance(1)
    with firmware_build(firmware_c, target_rec, prof, cc, doca_layout=doca_layout) as fw:
        elf = fw.elf
        stage.advance(1)
        size = fw.footprint()
        stage.advance(1)
        runner = fw.runner()
        out = runner.run(records_from_vectors(vectors), threads=available_cpus())
        stage.advance(1)
        mask = _disable_mask(runner)
        stack = {"high_water_bytes": runner.stack_high_water_bytes, "size_bytes": runner.stack_size_bytes}
        proof = None
        if prove:
            from rlcc.verify.prove import prove_firmware

            proof = prove_firmware(elf, model, target, timeout_s=prove_timeout_s, profile=profile, zbb=zbb, seed=seed).to_dict()
    mutation = None
    if mutants:
        from rlcc.verify.mutants import run_mutation_analysis
        from rlcc.verify.prove import prove_firmware

        def prover(mutant_elf: Path, mutant_model: FxModel, mutant_target: str) -> Any:
            return prove_firmware(mutant_elf, mutant_model, mutant_target, timeout_s=prove_timeout_s, profile=profile,
                                  zbb=zbb, sampled_rates=0)

        mutation = run_mutation_analysis(firmware_c, manifest, target, profile=profile, cc=cc, vectors=vectors,
                                         prover=prover if prove else None, jobs=jobs, progress=progress,
                                         doca_layout=doca_layout).to_dict()

    bad = (
        (out["rate"] != vectors.rate)
        | (out["rtt_req"] != vectors.rtt_req)
        | np.any(out["ctx_out"] != vectors.ctx_out, axis=1)
    )
    bad_idx = np.flatnonzero(bad)
    rtt = (vectors.event[:, fmt.EV_ATTR] & 0xFF) == fmt.EVENT_RTT
    text = textio.read_bytes(firmware_c, "firmware", textio.MAX_TEXT_BYTES).decode("utf-8", "replace")
    expected_mask = int(raw.get("events", {}).get("disable_event_mask", mask))
    coverage = {"note": support.coverage_note} if support.coverage_note else observable_coverage(model, vectors)
    stage.advance(1)
    return VerifyResult(
        firmware=str(firmware_c),
        target=target,
        profile=prof.name,
        clock_hz=prof.clock_hz,
        vectors=len(vectors),
        mismatches=len(bad_idx),
        mismatch_examples=[_example(model, vectors, i, out) for i in bad_idx[:MAX_EXAMPLES]],
        disable_mask_ok=mask == expected_mask,
        cycles=_stats(out["cycles"]),
        rtt_cycles=_stats(out["cycles"][rtt]),
        instructions=_stats(out["instret"]),
        worst_case=_worst_case(model, vectors, out),
        budget=Budget.resolve(prof, budget_cycles, budget_ns, full_load),
        size=size,
        context_bytes=4 * model.context_words,
        source_matches_manifest=manifest_io.sha256_text(text) == raw.get("files", {}).get("c", {}).get("sha256"),
        coverage=coverage,
        stack=stack,
        proof=proof,
        mutants=mutation,
        provenance=provenance,
        doca_layout=choice.layout.name if choice.flavour.name == DOCA else None,
    )


def _disable_mask(runner: HarnessRunner) -> int:
    raw = runner.machine.read_mem(runner.out_addr, hl.OUT_HEADER_SIZE)
    return int(np.frombuffer(raw, dtype=hl.OUT_HEADER_DTYPE, count=1)[0]["disable_event_mask"])
