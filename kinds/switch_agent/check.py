"""Verify switch-agent firmware against its manifest's golden agent in the emulator.

Per-decision records (boundary, leaf, saturation, random and closed-loop chained vectors,
``rlcc.kinds.switch_agent.vectors``) run one ``sw_agent_on_interval`` each; every output (context,
action, ECN template, class scores) must equal the golden agent's bit for bit. Then the SDK's
dispatcher runs whole monitoring intervals over ``n_ports`` queues (also compared), and the
worst interval's cycles at the profile clock are held against the budget (the spec's
monitoring interval unless ``budget_us`` is given).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable

import numpy as np

from rlcc import textio
from rlcc.class_trees import ClassEnsemble
from rlcc.codegen.manifest import sha256_text
from rlcc.kinds.switch_agent.codegen import load_switch_manifest, model_sha256
from rlcc.errors import BadInputError
from rlcc.firmware_sdk_stub import switch_layout as sl
from rlcc.kinds.switch_agent import vectors as sv
from rlcc.switch_spec import SwitchAgentSpec
from rlcc.targets import DEFAULT_TARGET
from rlcc.verify.check import VectorRun, assurance_level
from rlcc.verify.provenance import Provenance, Rebuild, establish
from rlcc.verify.check import check_random_count, check_seed
from rlcc.kinds.switch_agent.firmware_run import SwitchBuild, switch_build
from rlcc.kinds.switch_agent.mutants import run_c_mutation_analysis
from rlcc.kinds.switch_agent.prove import DEFAULT_TIMEOUT_S, proof_line, prove_switch_firmware
from rlcc.kinds.switch_agent.records import example, mismatches, to_records

DEFAULT_PORTS = 48  # the paper's switch
DEFAULT_RANDOM = 4000
DEFAULT_INTERVALS = 4  # dispatcher intervals run (chained) for the per-interval cycles
MAX_EXAMPLES = 5
SCHEMA = "rlcc.verify.switch/1"


def _stats(values: np.ndarray) -> dict[str, float]:
    if len(values) == 0:
        return {"min": 0, "mean": 0.0, "max": 0}
    return {"min": int(values.min()), "mean": round(float(values.mean()), 3), "max": int(values.max())}


def interval_vectors(spec: SwitchAgentSpec, model: ClassEnsemble, n_ports: int, n_intervals: int,
                     seed: int = 0) -> tuple[sv.SwitchVectors, np.ndarray]:
    """Golden records of ``n_intervals`` chained intervals of ``n_ports`` queues, in the
    dispatcher's order (interval-major), and the permutation from the per-port chains."""
    chains = sv.chain_records(spec, model, n_ports, n_intervals, seed)
    per = n_intervals + 1
    init = sv.expected(spec, model, chains.ctx_in[::per], *(a[::per] for a in (chains.qlen_bytes, chains.tx_bytes,
                       chains.marked_pkts, chains.util_mul)), chains.flags[::per], chains.tags[::per])
    keep = np.flatnonzero(chains.flags != sv.FLAG_INIT)  # port-major: port p's intervals p*n .. p*n+n-1
    ctx_in = chains.ctx_in[keep].copy()
    first = np.arange(n_ports) * n_intervals
    ctx_in[first] = init.ctx_out  # the first interval starts from the queue's bring-up context
    flags = np.full(len(keep), sv.FLAG_CHAIN, np.int64)
    flags[first] = 0
    golden = sv.expected(spec, model, ctx_in, chains.qlen_bytes[keep], chains.tx_bytes[keep], chains.marked_pkts[keep],
                         chains.util_mul[keep], flags, ["interval"] * len(keep))
    order = (np.arange(n_intervals)[:, None] + np.arange(n_ports)[None, :] * n_intervals).reshape(-1)
    fields = {f.name: getattr(golden, f.name) for f in dataclasses.fields(golden)}
    reordered = {k: (tuple(np.asarray(val)[order]) if k == "tags" else val[order]) for k, val in fields.items()}
    return sv.SwitchVectors(**reordered), order


def interval_records(v: sv.SwitchVectors, n_ports: int) -> np.ndarray:
    recs = to_records(v)
    j = np.arange(len(v))
    recs["port"], recs["queue"] = j % n_ports, 0
    return recs


@dataclasses.dataclass
class SwitchVerifyResult(VectorRun):
    """Everything rlcc-verify reports on switch-agent firmware (``to_dict``: schema ``SCHEMA``)."""

    decision_cycles: dict[str, float]
    decision_instructions: dict[str, float]
    n_ports: int
    intervals: int
    interval_mismatches: int
    interval_cycles: dict[str, float]
    budget_us: float
    budget_source: str
    size: dict[str, int]
    coverage: dict[str, int]
    source_matches_manifest: bool
    mutants: dict[str, Any] | None = None  # rlcc.kinds.switch_agent.mutants.run_c_mutation_analysis with mutants=True
    proof: dict[str, Any] | None = None  # rlcc.kinds.switch_agent.prove.SwitchProofResult.to_dict() with prove=True
    provenance: Provenance | None = None  # what the verdict is anchored to (rlcc.verify.provenance)

    @property
    def anchored(self) -> bool:
        return self.provenance is None or self.provenance.ok

    @property
    def proof_failed(self) -> bool:
        """The prover found a counterexample the emulator reproduces (or a broken side condition)."""
        return self.proof is not None and self.proof["status"] in ("counterexample", "failed")

    @property
    def bit_exact(self) -> bool:
        return self.mismatches == 0 and self.interval_mismatches == 0

    @property
    def mutants_survived(self) -> int:
        return 0 if self.mutants is None else int(self.mutants["survived"])

    @property
    def interval_us(self) -> float:
        return self.interval_cycles["max"] / self.clock_hz * 1e6

    @property
    def within_budget(self) -> bool:
        return self.interval_us <= self.budget_us

    @property
    def passed(self) -> bool:
        return self.bit_exact and self.within_budget and not self.proof_failed and self.anchored

    def to_dict(self) -> dict[str, Any]:
        us = lambda c: round(c / self.clock_hz * 1e6, 4)  # noqa: E731
        return {
            "schema": SCHEMA, "kind": "switch_agent", "firmware": self.firmware, "target": self.target,
            "profile": self.profile, "clock_hz": self.clock_hz, "bit_exact": self.bit_exact, "vectors": self.vectors,
            "mismatches": self.mismatches, "mismatch_examples": self.mismatch_examples,
            "decision_cycles": self.decision_cycles, "decision_instructions": self.decision_instructions,
            "decision_us": {"mean": us(self.decision_cycles["mean"]), "max": us(self.decision_cycles["max"])},
            "interval": {"ports": self.n_ports, "queues_per_port": 1, "intervals": self.intervals,
                         "mismatches": self.interval_mismatches, "cycles": self.interval_cycles,
                         "us": {"mean": us(self.interval_cycles["mean"]), "max": us(self.interval_cycles["max"])}},
            "budget": {"us": self.budget_us, "source": self.budget_source, "worst_interval_us": round(self.interval_us, 4),
                       "headroom": round(1.0 - self.interval_us / self.budget_us, 4), "within": self.within_budget},
            "size": self.size, "coverage": self.coverage, "source_matches_manifest": self.source_matches_manifest,
            "mutants": self.mutants, "proof": self.proof, "passed": self.passed,
            "assurance_level": assurance_level(self.proof),
            "provenance": self.provenance.to_dict() if self.provenance is not None else None,
        }


def check_build(fw: SwitchBuild, spec: SwitchAgentSpec, model: ClassEnsemble, vectors: sv.SwitchVectors,
                n_ports: int, n_intervals: int, seed: int) -> dict[str, Any]:
    """Run decisions and dispatcher intervals on a built firmware; the raw comparison results."""
    runner = fw.runner()
    out = runner.run(to_records(vectors))
    bad = mismatches(vectors, out, model.n_classes)
    iv, _ = interval_vectors(spec, model, n_ports, n_intervals, seed)
    iout = runner.run(interval_records(iv, n_ports), sl.MODE_INTERVAL, n_ports, 1)
    ibad = mismatches(iv, iout, model.n_classes, with_scores=False)
    decided = vectors.action != sv.NO_ACTION
    return {"out": out, "bad": bad, "interval_bad": ibad, "decision_cycles": out["cycles"][decided],
            "decision_instret": out["instret"][decided], "interval_cycles": iout["cycles"][::n_ports]}


def verify_switch_firmware(firmware_c: Path, manifest: Path | None = None, target: str | None = None,
                           profile: str | None = None, cc: str | None = None, n_ports: int = DEFAULT_PORTS,
                           budget_us: float | None = None, random_count: int = DEFAULT_RANDOM, seed: int = 0,
                           n_intervals: int = DEFAULT_INTERVALS, mutants: bool = False, prove: bool = False,
                           prove_timeout_s: float | None = None, policy: Path | None = None,
                           expect_sha256: str | None = None, jobs: int = 1,
                           log: Callable[[str], None] = lambda _m: None,
                           rebuilders: Mapping[str, Rebuild] | None = None) -> SwitchVerifyResult:
    """Build, run and compare (module docstring); ``mutants``: also build and run every C mutant
    (``rlcc.kinds.switch_agent.mutants``) on the same vectors; ``prove``: also prove the decision equal
    to the golden agent for all inputs (``rlcc.kinds.switch_agent.prove``); ``policy``/``expect_sha256``:
    the trust root (``rlcc.verify.provenance``)."""
    check_random_count(random_count)
    check_seed(seed)
    firmware_c = Path(firmware_c)
    if not firmware_c.is_file():
        raise BadInputError(f"{firmware_c}: no such file")
    manifest = Path(manifest) if manifest else firmware_c.with_name(firmware_c.stem + ".rlcc.json")
    raw, spec, model = load_switch_manifest(manifest)
    if not 1 <= n_ports <= sl.MAX_PORTS:
        raise BadInputError(f"--ports must be in 1..{sl.MAX_PORTS}, got {n_ports}")
    if budget_us is not None and budget_us <= 0:
        raise BadInputError("budgets must be positive")
    if prove_timeout_s is not None and prove_timeout_s <= 0:
        raise BadInputError("--prove-timeout must be positive")
    target = target or raw.get("target") or DEFAULT_TARGET.name
    provenance = establish(raw, manifest, firmware_c, model_sha256(model), policy, expect_sha256, jobs, log,
                           rebuilders=rebuilders)
    vectors = sv.verification_set(spec, model, seed, random_count)
    with switch_build(firmware_c, target, profile, cc) as fw:
        size = fw.footprint()
        res = check_build(fw, spec, model, vectors, n_ports, n_intervals, seed)
        prof = fw.profile
        proof = None
        if prove:
            proof = prove_switch_firmware(fw.elf, spec, model, fw.target.name, prove_timeout_s or DEFAULT_TIMEOUT_S,
                                          profile=fw.profile, zbb=fw.zbb).to_dict()
    mutation = None
    if mutants:
        mutation = run_c_mutation_analysis(firmware_c, spec, model, vectors, target, profile)
    bad = res["bad"]
    text = textio.read_bytes(firmware_c, "firmware", textio.MAX_TEXT_BYTES).decode("utf-8", "replace")
    return SwitchVerifyResult(
        firmware=str(firmware_c), target=target, profile=prof.name, clock_hz=prof.clock_hz, vectors=len(vectors),
        mismatches=len(bad), mismatch_examples=[example(vectors, i, res["out"], model.n_classes) for i in bad[:MAX_EXAMPLES]],
        decision_cycles=_stats(res["decision_cycles"]), decision_instructions=_stats(res["decision_instret"]),
        n_ports=n_ports, intervals=n_intervals, interval_mismatches=len(res["interval_bad"]),
        interval_cycles=_stats(res["interval_cycles"]),
        budget_us=float(budget_us if budget_us is not None else spec.interval_us),
        budget_source="--budget-us" if budget_us is not None else "spec interval_us",
        size=size, coverage=sv.boundary_coverage(spec, model, vectors),
        source_matches_manifest=sha256_text(text) == raw.get("files", {}).get("c", {}).get("sha256"),
        mutants=mutation, proof=proof, provenance=provenance,
    )


def summary(r: SwitchVerifyResult) -> str:
    d = r.to_dict()
    c, iv, b, cov = r.decision_cycles, d["interval"], d["budget"], r.coverage
    lines = [
        f"switch agent: target {r.target}, profile {r.profile} @ {r.clock_hz / 1e9:.2f} GHz",
        f"vectors {r.vectors} + {r.intervals} dispatcher interval(s) x {r.n_ports} port(s): "
        + ("bit-exact" if r.bit_exact else f"{r.mismatches} + {r.interval_mismatches} MISMATCHES"),
        f"cycles/decision mean {c['mean']:.1f} max {c['max']} ({d['decision_us']['max']:.3f} us)",
        f"cycles/interval for {r.n_ports} ports mean {iv['cycles']['mean']:.0f} max {iv['cycles']['max']}"
        f" = {iv['us']['max']:.2f} us; budget {b['us']:g} us ({b['source']}): {'OK' if b['within'] else 'EXCEEDED'}"
        f", headroom {100 * b['headroom']:.0f}%",
        f"boundary coverage: split values {cov['split_values_hit']}/{cov['split_values']}, leaves "
        f"{cov['leaves_reached']}/{cov['leaves_reachable']} reachable",
        f"size: code {r.size['code']} B, read-only data {r.size['rodata']} B, data {r.size['data']} B",
    ]
    if r.mutants is not None:
        m = r.mutants
        lines.append(f"mutants: {m['mutants']} built, {m['killed']} killed, {m['equivalent']} equivalent, "
                     f"{m['survived']} survived ({m['wall_s']:.0f} s)"
                     + (f": {', '.join(m['survivors'][:6])}" if m["survivors"] else ""))
    if r.proof is not None:
        lines.append(proof_line(r.proof))
    lines.append("assurance: " + ("proven for all inputs" if r.to_dict()["assurance_level"] == "proven"
                                  else f"sampled: {r.vectors:,} vectors"))
    if r.provenance is not None:
        lines.append(f"provenance: {r.provenance.statement}")
    for ex in d["mismatch_examples"]:
        lines.append(f"mismatch #{ex['index']} ({ex['tag']}): expected action {ex['expected']['action']} "
                     f"ecn {ex['expected']['ecn']}, got action {ex['got']['action']} ecn {ex['got']['ecn']}")
    return "\n".join(lines)
