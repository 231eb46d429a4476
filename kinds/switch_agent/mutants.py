"""Mutation analysis of switch-agent firmware: do the verification vectors catch one-datum bugs?

Two levels, as for the NIC path (``rlcc.verify.mutate``):

- model mutants (:func:`model_mutants`): a split threshold plus/minus one (``x >= t`` is
  ``x > t - 1``, so an inclusive comparison is the -1 mutant) or one leaf entry plus/minus one;
  :func:`mutation_report` replays the vectors' inputs through the mutated golden agent, in Python,
  so every mutant of a model is checked in well under a second;
- C mutants (:func:`c_mutants`): the same edits plus ``>`` -> ``>=`` made in the generated C text
  (named constants ``THR_t_k``, tables ``leaves_t``), built and run in the emulator by
  :func:`run_c_mutant`.

A threshold mutant whose split can never be true either way (threshold at or above the feature's
largest value) and a leaf mutant of an unreachable leaf are equivalent by construction.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import time
from pathlib import Path

import numpy as np

from rlcc import textio
from rlcc.class_trees import ClassEnsemble, ClassTree, IntSplit
from rlcc.kinds.switch_agent import vectors as sv
from rlcc.switch_spec import SwitchAgentSpec
from rlcc.verify.mutants import evaluate_all, mutant_folder
from rlcc.kinds.switch_agent.records import mismatches, to_records
from rlcc.kinds.switch_agent.firmware_run import switch_build
from rlcc.kinds.switch_agent.codegen import LEAVES_PER_ROW

_THR_RE = re.compile(r"^#define (\w*?THR_(\d+)_(\d+)) UINT32_C\((\d+)\)")
_COND_RE = re.compile(r"(x\[\w+\]) > (\w*?THR_(\d+)_(\d+)\))")
_LEAVES_RE = re.compile(r"^static const int32_t \w*?leaves_(\d+)\[")
_NUM_RE = re.compile(r"-?\d+")


@dataclasses.dataclass(frozen=True)
class ModelMutant:
    id: str
    model: ClassEnsemble
    equivalent: bool  # no input can tell it from the original


def _replace_split(model: ClassEnsemble, t: int, k: int, threshold: int) -> ClassEnsemble:
    trees = list(model.trees)
    splits = list(trees[t].splits)
    splits[k] = IntSplit(splits[k].input, threshold)
    trees[t] = ClassTree(tuple(splits), trees[t].leaves)
    return dataclasses.replace(model, trees=tuple(trees))


def _replace_leaf(model: ClassEnsemble, t: int, leaf: int, c: int, delta: int) -> ClassEnsemble:
    trees = list(model.trees)
    rows = [list(r) for r in trees[t].leaves]
    rows[leaf][c] += delta
    trees[t] = ClassTree(trees[t].splits, tuple(tuple(r) for r in rows))
    return dataclasses.replace(model, trees=tuple(trees))


def model_mutants(spec: SwitchAgentSpec, model: ClassEnsemble, leaves: bool = True) -> list[ModelMutant]:
    fmax = np.tile(spec.feature_max(), spec.history)
    reachable = {tuple(int(x) for x in tag.split(":")[1:])
                 for tag in (s.replace("leaf:t", "leaf:") for s in sv.leaf_windows(spec, model, np.random.default_rng(0))[1])}
    out = []
    for t, tree in enumerate(model.trees):
        for k, s in enumerate(tree.splits):
            for d in (-1, 1):
                thr = s.threshold + d
                if thr < -1:
                    continue
                never = min(thr, s.threshold) >= fmax[s.input]
                out.append(ModelMutant(f"thr:t{t}:l{k}:{d:+d}", _replace_split(model, t, k, thr), bool(never)))
        if leaves:
            for leaf in range(len(tree.leaves)):
                for c in range(model.n_classes):
                    out.append(ModelMutant(f"leaf:t{t}:{leaf}:c{c}:+1", _replace_leaf(model, t, leaf, c, 1),
                                           (t, leaf) not in reachable))
    return out


def killed(spec: SwitchAgentSpec, mutant: ClassEnsemble, v: sv.SwitchVectors) -> bool:
    """Whether the mutated golden agent's outputs differ from ``v``'s on ``v``'s inputs."""
    m = sv.expected(spec, mutant, v.ctx_in, v.qlen_bytes, v.tx_bytes, v.marked_pkts, v.util_mul, v.flags, v.tags)
    return bool(np.any(m.ctx_out != v.ctx_out) or np.any(m.action != v.action) or np.any(m.scores != v.scores))


def mutation_report(spec: SwitchAgentSpec, model: ClassEnsemble, v: sv.SwitchVectors,
                    mutants: list[ModelMutant] | None = None) -> dict[str, object]:
    """Kills, equivalents and survivors (ids) of the model mutants on vectors ``v``."""
    mutants = model_mutants(spec, model) if mutants is None else mutants
    kills = {m.id: killed(spec, m.model, v) for m in mutants}
    equivalent = [m.id for m in mutants if m.equivalent and not kills[m.id]]
    survived = [m.id for m in mutants if not m.equivalent and not kills[m.id]]
    return {"mutants": len(mutants), "killed": sum(kills.values()), "equivalent": len(equivalent),
            "survived": len(survived), "survivors": survived}


# ---- C-level mutants -----------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class CMutant:
    id: str
    line: int  # 0-based line of the .c file
    mutated: str

    def apply(self, text: str) -> str:
        lines = text.split("\n")
        lines[self.line] = self.mutated
        return "\n".join(lines)


def c_mutants(text: str) -> list[CMutant]:
    """Threshold +-1, ``>`` -> ``>=`` and first-entry leaf +1 mutants of generated switch-agent C."""
    out: list[CMutant] = []
    tree = None
    row = 0
    for n, line in enumerate(text.split("\n")):
        m = _THR_RE.match(line)
        if m:
            for d in (-1, 1):
                value = int(m.group(4)) + d
                if value >= 0:
                    mutated = line.replace(f"UINT32_C({m.group(4)})", f"UINT32_C({value})", 1)
                    out.append(CMutant(f"thr:t{m.group(2)}:l{m.group(3)}:{d:+d}", n, mutated))
        c = _COND_RE.search(line)
        if c:
            out.append(CMutant(f"op:t{c.group(3)}:l{c.group(4)}", n, line.replace(f"{c.group(1)} > ", f"{c.group(1)} >= ", 1)))
        lm = _LEAVES_RE.match(line)
        if lm:
            tree, row = int(lm.group(1)), 0
            continue
        if tree is not None:
            if line.startswith("};"):
                tree = None
                continue
            num = _NUM_RE.search(line)
            if num:
                mutated = line[: num.start()] + str(int(num.group()) + 1) + line[num.end() :]
                out.append(CMutant(f"leaf:t{tree}:row{row}:+1", n, mutated))
                row += 1
    return out


def run_c_mutant(firmware_c: Path, mutant: CMutant, spec: SwitchAgentSpec, model: ClassEnsemble,
                 vectors: sv.SwitchVectors, target: str, profile: str | None = None) -> bool:
    """Build the mutated C beside a copy of its header and run ``vectors``: True when caught."""
    firmware_c = Path(firmware_c)
    header = firmware_c.with_suffix(".h")
    files = {firmware_c.name: mutant.apply(textio.read_text(firmware_c, "firmware")),
             header.name: textio.read_text(header, "firmware header")}
    with mutant_folder(files) as work, switch_build(work / firmware_c.name, target, profile) as fw:
        out = fw.runner().run(to_records(vectors))
    return len(mismatches(vectors, out, model.n_classes)) > 0


def model_id(c_id: str, n_classes: int, per_row: int) -> str:
    """The model mutant a C mutant equals (``op`` is the threshold -1 mutant; a leaf line holds
    ``per_row`` entries of one leaf, the mutant edits its first)."""
    kind, *rest = c_id.split(":")
    if kind == "op":
        return f"thr:{rest[0]}:{rest[1]}:-1"
    if kind == "leaf":
        lines_per_leaf = -(-n_classes // per_row)
        row = int(rest[1][3:])
        return f"leaf:{rest[0]}:{row // lines_per_leaf}:c{(row % lines_per_leaf) * per_row}:+1"
    return c_id


def run_c_mutation_analysis(firmware_c: Path, spec: SwitchAgentSpec, model: ClassEnsemble, vectors: sv.SwitchVectors,
                            target: str, profile: str | None = None, jobs: int = 1) -> dict[str, object]:
    """Every C mutant built and run on ``vectors`` (over ``jobs`` processes): killed, equivalent
    (by construction) or survived."""
    t0 = time.monotonic()
    equivalent_ids = {m.id for m in model_mutants(spec, model) if m.equivalent}
    muts = c_mutants(textio.read_text(firmware_c, "firmware"))
    caught = evaluate_all(functools.partial(run_c_mutant, firmware_c, spec=spec, model=model, vectors=vectors,
                                            target=target, profile=profile), muts, jobs)
    kills, equivalent, survivors = 0, 0, []
    for m, killed_it in zip(muts, caught):
        if killed_it:
            kills += 1
        elif model_id(m.id, model.n_classes, LEAVES_PER_ROW) in equivalent_ids:
            equivalent += 1
        else:
            survivors.append(m.id)
    return {"mutants": len(muts), "killed": kills, "equivalent": equivalent, "survived": len(survivors),
            "survivors": survivors, "wall_s": round(time.monotonic() - t0, 1)}
