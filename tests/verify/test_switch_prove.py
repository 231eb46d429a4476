"""``rlcc-verify --prove`` for switch-agent firmware (rlcc.kinds.switch_agent.prove): the z3 twin of the
golden agent against the numpy golden agent, proofs of generated firmware on both targets, C
mutants refuted with a counterexample the emulator reproduces, and the CLI's exit codes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import z3
from switch_models import paper_spec, random_ensemble

from rlcc.kinds.switch_agent.codegen import generate_switch_firmware
from rlcc.errors import ExitCode
from rlcc.kinds.switch_agent import vectors as sv
from rlcc.switch_spec import STAT_MAX
from rlcc.kinds.switch_agent import mutants as smu
from rlcc.kinds.switch_agent.prove import DEFAULT_TIMEOUT_S, prove_switch_firmware, range_precondition
from rlcc.kinds.switch_agent.firmware_run import build_switch_elf
from rlcc.kinds.switch_agent.symbolic_golden import symbolic_decision

SPEC = paper_spec()


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A 3-tree model's firmware: small enough for a proof in seconds."""
    model = random_ensemble(SPEC, seed=5, n_trees=3)
    paths = generate_switch_firmware(SPEC, model, tmp_path_factory.mktemp("swprove"), "rv64imac")
    return model, paths


def _twin(spec, model):
    ctx = [z3.BitVec(f"c{i}", 32) for i in range(sv.CTX_WORDS)]
    stats = [z3.BitVec(n, 32) for n in ("q", "t", "m", "u")]
    return ctx, stats, symbolic_decision(spec, model, ctx, *stats)


@pytest.mark.slow
@pytest.mark.parametrize("kw", [{}, dict(features=("qlen", "ecn_action"), history=4),
                                dict(features=("mark_util",), history=1, packet_bytes=9000)])
def test_symbolic_twin_equals_numpy_golden(kw):
    """The z3 twin evaluated on concrete records equals rlcc.kinds.switch_agent.vectors.expected (the
    numpy golden agent): random feature-space and raw-statistic records, saturation records and
    contexts of arbitrary u32 words (beyond every feature's range)."""
    spec = paper_spec(**kw)
    model = random_ensemble(spec, seed=7, n_trees=4)
    rng = np.random.default_rng(3)
    v = sv.concat(sv.random_records(spec, model, 24, seed=2), sv.saturation_records(spec, model))
    wild = rng.integers(0, STAT_MAX + 1, (8, sv.CTX_WORDS), dtype=np.int64)
    raw = [rng.integers(0, STAT_MAX + 1, 8, dtype=np.int64) for _ in range(4)]
    ctx_in = np.concatenate([v.ctx_in, wild])
    stats = [np.concatenate([a, b]) for a, b in zip((v.qlen_bytes, v.tx_bytes, v.marked_pkts, v.util_mul), raw)]
    want = sv.expected(spec, model, ctx_in, *stats, np.zeros(len(ctx_in), np.int64), ["t"] * len(ctx_in))
    ctx, svars, gold = _twin(spec, model)
    for i in range(len(ctx_in)):
        subst = [(w, z3.BitVecVal(int(x), 32)) for w, x in zip(ctx + svars, list(ctx_in[i]) + [int(s[i]) for s in stats])]
        ev = lambda t: z3.simplify(z3.substitute(t, *subst)).as_long()  # noqa: E731
        assert ev(gold.action) == want.action[i]
        assert [ev(t) for t in gold.ecn] == want.ecn[i].tolist()
        assert [ev(t) for t in gold.ctx] == want.ctx_out[i].tolist()
        assert [ev(t) - (ev(t) >> 31 << 32) for t in gold.scores] == want.scores[i].tolist()


@pytest.mark.slow
@pytest.mark.parametrize("target", ["rv64imac", "rv32imc"])
def test_small_model_proved(small, tmp_path, target):
    model, paths = small
    elf = build_switch_elf(paths["c"], target, tmp_path)
    r = prove_switch_firmware(elf, SPEC, model, target, timeout_s=120)
    assert r.status == "proved", r.to_dict()
    assert "action" in r.proven and len(r.proven) == 4 + sv.CTX_WORDS and r.side_conditions > 0
    assert (r.precondition is None) == (not range_precondition(SPEC, model))
    if r.precondition:
        assert r.invariant and "invariant proven" in r.invariant


def _mutant_elf(paths, tmp: Path, kind: str) -> Path:
    """``kind``: "op:" (`>=` for `>`) or "+1" / "-1" (a threshold in the C text)."""
    text = paths["c"].read_text()
    m = next(m for m in smu.c_mutants(text) if m.id.startswith(kind) or (m.id.startswith("thr:") and m.id.endswith(kind)))
    work = tmp / m.id.replace(":", "_")
    work.mkdir()
    shutil.copy(paths["h"], work / paths["h"].name)
    (work / "firmware.c").write_text(m.apply(text))
    return build_switch_elf(work / "firmware.c", "rv32imc", work)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["op:", "+1", "-1"])
def test_c_mutant_refuted_and_replayed(small, tmp_path, kind):
    """`>` -> `>=`, or a threshold +-1 in the C text: the solver's input, replayed in the emulator
    and the numpy golden agent, gives different outputs (the counterexample records both)."""
    model, paths = small
    r = prove_switch_firmware(_mutant_elf(paths, tmp_path, kind), SPEC, model, "rv32imc", timeout_s=120)
    assert r.status == "counterexample", r.to_dict()
    cex = r.counterexample
    assert cex["expected"] != cex["got"]
    assert "COUNTEREXAMPLE" in r.summary()


def _cli(*args):
    exe = Path(sys.executable).with_name("rlcc-verify")  # this tree's script, not another install's
    cmd = str(exe) if exe.is_file() else shutil.which("rlcc-verify")
    return subprocess.run([cmd, *map(str, args)], capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_cli_prove_json_and_exit_codes(small, tmp_path):
    model, paths = small
    ok = _cli(paths["c"], "--prove", "--random", 100, "--ports", 4, "--json", tmp_path / "v.json")
    assert ok.returncode == 0, ok.stderr
    assert "proof: PROVED" in ok.stdout
    proof = json.loads((tmp_path / "v.json").read_text())["proof"]
    assert proof["status"] == "proved" and proof["paths"] >= 1 and proof["seconds"] > 0
    work = tmp_path / "mutant"
    work.mkdir()
    for key in ("h", "manifest"):
        shutil.copy(paths[key], work / paths[key].name)
    text = paths["c"].read_text()
    m = next(m for m in smu.c_mutants(text) if m.id.startswith("op:"))
    (work / "firmware.c").write_text(m.apply(text))
    bad = _cli(work / "firmware.c", "--prove", "--random", 0, "--ports", 1, "--target", "rv32imc")
    assert bad.returncode == ExitCode.MISMATCH, (bad.stdout, bad.stderr)


@pytest.mark.slow
@pytest.mark.parametrize("target, min_depth", [("rv64imac", 1), ("rv64imac", 4), ("rv32imc", 4)])
def test_ten_tree_model_proved_in_budget(tmp_path, target, min_depth):
    """The shipped size: 10 trees of depth 4 (CatBoost's oblivious trees; min_depth 1: depths
    1..4), 8 classes, proved within the default budget through the abstracted leaf tables."""
    model = random_ensemble(SPEC, seed=11, min_depth=min_depth)
    assert min_depth == 1 or all(len(t.splits) == 4 for t in model.trees)
    paths = generate_switch_firmware(SPEC, model, tmp_path, target)
    r = prove_switch_firmware(build_switch_elf(paths["c"], target, tmp_path), SPEC, model, target)
    assert r.status == "proved", r.to_dict()
    assert "10 of 10 leaf table(s) checked" in r.detail and r.seconds < DEFAULT_TIMEOUT_S


@pytest.mark.slow
@pytest.mark.parametrize("seed, n_trees, min_depth", [(5, 3, 1), (11, 10, 4)])
def test_wrong_leaf_table_refuted(tmp_path, seed, n_trees, min_depth):
    """A leaf table that is not the model's (tree 0's last class made to win everywhere): the
    table check keeps that tree's leaves by content and the proof finds the counterexample (the
    emulator's decision differs), also at the shipped size."""
    model = random_ensemble(SPEC, seed=seed, n_trees=n_trees, min_depth=min_depth)
    paths = generate_switch_firmware(SPEC, model, tmp_path / "gen", "rv32imc")
    lines = paths["c"].read_text().splitlines()
    first = next(i for i, line in enumerate(lines) if "leaves_0[" in line)
    for i in range(first + 1, first + 1 + len(model.trees[0].leaves)):
        head, _, tail = lines[i].rpartition(", /* leaf")
        lines[i] = head.rsplit(",", 1)[0] + ", 2000000, /* leaf" + tail
    (tmp_path / "firmware.c").write_text("\n".join(lines) + "\n")
    shutil.copy(paths["h"], tmp_path / paths["h"].name)
    elf = build_switch_elf(tmp_path / "firmware.c", "rv32imc", tmp_path)
    r = prove_switch_firmware(elf, SPEC, model, "rv32imc", timeout_s=120)
    assert r.status == "counterexample", r.to_dict()
    assert r.counterexample["got"]["action"] == model.n_classes - 1 != r.counterexample["expected"]["action"]


def test_timeout_is_reported_not_fatal(tmp_path):
    """A budget shorter than the 10-tree model's symbolic execution: status timeout, the open
    outputs named."""
    model = random_ensemble(SPEC, seed=11)
    paths = generate_switch_firmware(SPEC, model, tmp_path, "rv64imac")
    r = prove_switch_firmware(build_switch_elf(paths["c"], "rv64imac", tmp_path), SPEC, model, "rv64imac", timeout_s=0.5)
    assert r.status == "timeout", r.to_dict()
    assert "action" in r.open and "not proven" in r.summary()
