"""Switch-agent firmware (templates/switch_agent.c.j2) against the golden agent in the emulator:
bit-exact on both targets over random, boundary, leaf, saturation and closed-loop vectors; the
SDK dispatcher's 48-port interval; mutants caught; rlcc-verify's dispatch and exit codes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from switch_models import paper_spec, random_ensemble

from rlcc.kinds.switch_agent.codegen import generate_switch_firmware
from rlcc.errors import EmulationError, ExitCode
from rlcc.firmware_sdk_stub import switch_layout as sl
from rlcc.kinds.switch_agent import vectors as sv
from rlcc.fxp.switch_agent import collect
from rlcc.switch_spec import STAT_MAX, UTIL_ONE
from rlcc.kinds.switch_agent import mutants as smu
from rlcc.kinds.switch_agent.check import verify_switch_firmware
from rlcc.kinds.switch_agent.firmware_run import switch_build

SPEC = paper_spec()


@pytest.fixture(scope="module")
def fw(tmp_path_factory):
    model = random_ensemble(SPEC, seed=11)
    paths = generate_switch_firmware(SPEC, model, tmp_path_factory.mktemp("swfw"), "rv64imac")
    return SPEC, model, paths


@pytest.mark.parametrize("target", ["rv64imac", "rv32imc"])
def test_bit_exact_and_interval_cycles(fw, target):
    spec, model, paths = fw
    r = verify_switch_firmware(paths["c"], target=target, random_count=1000, n_intervals=3)
    assert r.bit_exact, r.mismatch_examples[:1]
    assert r.passed and r.source_matches_manifest
    cov = r.coverage
    assert cov["split_values_hit"] == cov["split_values"] > 0
    assert cov["leaves_reached"] == cov["leaves_reachable"] > 0
    # one interval = 48 decisions plus the dispatcher's reads and writes: bounded both ways
    assert 48 * r.decision_cycles["min"] < r.interval_cycles["min"] <= r.interval_cycles["max"] < 48 * (r.decision_cycles["max"] + 300)
    d = r.to_dict()
    assert d["interval"]["ports"] == 48 and d["budget"]["us"] == spec.interval_us


@pytest.mark.parametrize("kw", [dict(history=1), dict(features=("qlen", "ecn_action"), history=4),
                                dict(features=("mark_util",), history=8, packet_bytes=9000, initial_action=5)])
def test_spec_variants_bit_exact(tmp_path, kw):
    """History 1 (no stored features), subsets without utilization / without the action feature,
    the longest window: each compiles with -Werror (no unused helpers) and matches."""
    spec = paper_spec(**kw)
    model = random_ensemble(spec, seed=3, n_trees=6)
    paths = generate_switch_firmware(spec, model, tmp_path, "rv32imc")
    r = verify_switch_firmware(paths["c"], random_count=400, n_intervals=2, n_ports=8)
    assert r.bit_exact, r.mismatch_examples[:1]


def test_collector_inverse_hits_targets():
    """Boundary values of derived features are produced through statistics (oracle: collect)."""
    rng = np.random.default_rng(5)
    n = 3000
    a = np.r_[rng.integers(0, UTIL_ONE + 1, n), 0, 1, UTIL_ONE - 1, UTIL_ONE]
    b = np.r_[rng.integers(0, UTIL_ONE + 1, n), UTIL_ONE, UTIL_ONE - 1, 1, 0]
    tx, pkts, mul = sv.invert_utils(SPEC, rng, a, b)
    assert tx.max() <= STAT_MAX and pkts.max() <= STAT_MAX and mul.max() <= STAT_MAX
    f = collect(SPEC, np.zeros(len(a)), tx, pkts, np.zeros(len(a), np.int64), mul)
    assert np.array_equal(f[:, 1], a) and np.array_equal(f[:, 2], b)


def test_saturation_vectors_saturate():
    model = random_ensemble(SPEC, seed=1, n_trees=2)
    v = sv.saturation_records(SPEC, model)
    f = v.window[:, -SPEC.n_features:]
    assert f[:, 0].max() == STAT_MAX  # qlen 2^32-1
    assert (f[:, 1] == UTIL_ONE).sum() >= 2  # utilization above 1.0 clamps
    over = v.marked_pkts * SPEC.packet_bytes > STAT_MAX
    assert over.any() and (~over).any()


def test_threshold_and_leaf_mutants_caught_by_boundary_vectors(fw):
    """Every threshold +-1 (an inclusive `>=` is the -1 mutant) changes an output on the boundary
    vectors; every entry of every reachable leaf changes a score on the leaf vectors."""
    spec, model, _ = fw
    thr = smu.model_mutants(spec, model, leaves=False)
    rep = smu.mutation_report(spec, model, sv.boundary_records(spec, model), thr)
    assert rep["survived"] == 0 and rep["killed"] >= len(thr) - rep["equivalent"] > 0, rep
    leaves = [m for m in smu.model_mutants(spec, model) if m.id.startswith("leaf")]
    rep = smu.mutation_report(spec, model, sv.leaf_records(spec, model), leaves)
    assert rep["survived"] == 0 and rep["killed"] > 0, rep


@pytest.mark.slow
def test_c_mutants_caught_in_emulator(fw):
    """`>=` for `>`, a threshold off by one and a leaf entry off by one in the C are caught by the
    emulator check on the boundary and leaf vectors alone."""
    spec, model, paths = fw
    vectors = sv.concat(sv.boundary_records(spec, model), sv.leaf_records(spec, model))
    text = paths["c"].read_text()
    muts = smu.c_mutants(text)
    picks = [next(m for m in muts if m.id.startswith(kind)) for kind in ("op:", "thr:", "leaf:")]
    picks.append(next(m for m in muts if m.id.startswith("thr:") and m.id.endswith("+1")))
    for m in picks:
        assert m.apply(text) != text
        assert smu.run_c_mutant(paths["c"], m, spec, model, vectors, "rv32imc"), m.id


def test_harness_rejects_bad_interval_shape(fw):
    spec, model, paths = fw
    recs = sl.new_records(5)
    with switch_build(paths["c"], "rv32imc") as b:
        with pytest.raises(EmulationError, match="status"):
            b.runner().run(recs, sl.MODE_INTERVAL, n_ports=2, n_queues=1)


def test_flag_values_match_harness():
    assert (sv.FLAG_CHAIN, sv.FLAG_INIT, sv.NO_ACTION, sv.CTX_WORDS) == \
        (sl.REC_CHAIN_CTX, sl.REC_INIT, sl.NO_ACTION, sl.CTX_WORDS)


def _cli(*args):
    exe = Path(sys.executable).with_name("rlcc-verify")  # this tree's script, not another install's
    cmd = str(exe) if exe.is_file() else shutil.which("rlcc-verify")
    return subprocess.run([cmd, *map(str, args)], capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_cli_dispatch_and_exit_codes(fw, tmp_path):
    spec, model, paths = fw
    ok = _cli(paths["c"], "--random", 200, "--json", tmp_path / "v.json")
    assert ok.returncode == 0, ok.stderr
    assert "cycles/interval for 48 ports" in ok.stdout and "PASS" in ok.stdout
    data = json.loads((tmp_path / "v.json").read_text())
    assert data["schema"] == "rlcc.verify.switch/1" and data["bit_exact"] and data["interval"]["ports"] == 48
    assert _cli(paths["c"], "--random", 200, "--budget-us", 0.5, "-q").returncode == ExitCode.BUDGET
    assert _cli(paths["c"], "--random", 200, "--ports", 4, "--budget-us", 100).returncode == 0
    assert _cli(paths["c"], "--full-load").returncode == ExitCode.BAD_INPUT

    work = tmp_path / "edited"
    work.mkdir()
    for key in ("h", "manifest"):
        (work / paths[key].name).write_text(paths[key].read_text())
    text = paths["c"].read_text()
    cases = {
        ExitCode.MISMATCH: next(m for m in smu.c_mutants(text) if m.id.startswith("op:")).apply(text),
        ExitCode.BUILD: text.replace("return action;", "return action"),
        ExitCode.EMULATION: text.replace("    action = ", "    *(volatile uint32_t *)4u = 1u;\n    action = ", 1),
    }
    for code, edited in cases.items():
        (work / "firmware.c").write_text(edited)
        proc = _cli(work / "firmware.c", "--random", 100, "-q")
        assert proc.returncode == code, (code, proc.stdout, proc.stderr)
    manifest = json.loads(paths["manifest"].read_text())
    manifest["spec"]["history"] = 99
    (work / "firmware.rlcc.json").write_text(json.dumps(manifest))
    assert _cli(work / "firmware.c").returncode == ExitCode.BAD_INPUT


@pytest.mark.slow
def test_every_c_mutant_killed_or_equivalent(tmp_path):
    """rlcc-verify --mutants on a small model: every threshold +-1, `>=` and leaf mutant of the C is
    caught by the verification vectors, or equivalent by construction (a never-true split, an
    unreachable leaf)."""
    spec = paper_spec()
    model = random_ensemble(spec, seed=21, n_trees=3)
    paths = generate_switch_firmware(spec, model, tmp_path, "rv32imc")
    r = verify_switch_firmware(paths["c"], random_count=300, n_intervals=1, n_ports=4, mutants=True)
    m = r.mutants
    assert m["survived"] == 0 and m["killed"] > 0 and m["mutants"] == m["killed"] + m["equivalent"], m
