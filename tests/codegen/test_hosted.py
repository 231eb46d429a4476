"""Generated C, built for the host (zig cc; gcc too when installed) with the SDK stub's hosted harness, equals the golden model."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import numpy as np
import pytest
from codegen_build import bound_writes, build_host, describe, mismatches, run_host
from codegen_models import MODELS, tiny_model

from rlcc import formats as fmt
from rlcc.codegen import generate
from rlcc.codegen.manifest import load
from rlcc.firmware_sdk_stub import harness_layout as hl
from rlcc.fxp import vectors as FV
from rlcc.verify import generators as V
from rlcc.fxp.model import PARAM_RULE, param_violations


def full_vectors(model, n_random: int, seed: int) -> FV.Vectors:
    return FV.concat(V.boundary_vectors(model, seed), V.random_vectors(model, n_random, seed + 1),
                    V.sequence_vectors(model, 32, 64, seed + 2))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MODELS))
def test_bit_exact_with_golden_both_styles(name, host_exe, tmp_path):
    model = MODELS[name]
    vec = full_vectors(model, 100_000, seed=11)
    outs = {}
    for style in ("oblivious", "ifelse"):
        out = run_host(host_exe(name, style), vec, tmp_path)
        bad = mismatches(out, vec)
        assert len(bad) == 0, f"{style}: " + describe(out, vec, bad)
        outs[style] = out.records
    for field in ("ctx_out", "rate", "rtt_req"):
        assert np.array_equal(outs["oblivious"][field], outs["ifelse"][field])


@pytest.mark.slow
@pytest.mark.parametrize("cc", ["zig", "gcc"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_sanitizers_clean(name, cc, host_exe, tmp_path):
    """UBSan under zig (always); ASan + UBSan and gcc's code generation when gcc is installed."""
    model = MODELS[name]
    vec = full_vectors(model, 5_000, seed=21)
    for style in ("oblivious", "ifelse"):
        out = run_host(host_exe(name, style, sanitize=True, cc=cc), vec, tmp_path)
        bad = mismatches(out, vec)
        assert len(bad) == 0, describe(out, vec, bad)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MODELS))
def test_manifest_vectors_and_event_mask(name, generated, host_exe, tmp_path):
    paths = generated(name)
    data, model, vec = load(str(paths["manifest"]))
    assert model == MODELS[name]
    assert data["files"]["c"]["sha256"] == hashlib.sha256(paths["c"].read_bytes()).hexdigest()
    assert data["files"]["h"]["sha256"] == hashlib.sha256(paths["h"].read_bytes()).hexdigest()
    assert len(vec) == V.PINNED_FLOWS * V.PINNED_EVENTS  # the manifest's pinned set, then what verification adds
    vec = FV.concat(vec, V.verification_set(model, n_random=1024)[0])
    out = run_host(host_exe(name), vec, tmp_path)
    assert len(mismatches(out, vec)) == 0
    assert out.disable_event_mask == data["events"]["disable_event_mask"]
    enabled = set(data["events"]["enabled"])
    names = set(model.spec.feature_names)
    assert {"RTT", "TX"} <= enabled
    assert ("CNP" in enabled) == ("cnp_count" in names) and ("NACK" in enabled) == ("nack_count" in names)


@pytest.mark.slow
def test_perturbed_threshold_is_caught(generated, tmp_path):
    """Moving one threshold by one unit in the C must show up as a mismatch on boundary vectors."""
    model = MODELS["tiny"]
    src = generated("tiny")["c"].read_text()
    thr = model.trees[0].splits[0].threshold
    line = f"#define TINY_OBLIVIOUS_THR_0_0 INT32_C({thr})"
    assert line in src
    bad_c = tmp_path / "tiny_oblivious.c"
    bad_c.write_text(src.replace(line, f"#define TINY_OBLIVIOUS_THR_0_0 INT32_C({thr + 1})"))
    (tmp_path / "tiny_oblivious.h").write_text(generated("tiny")["h"].read_text())
    exe = build_host(bad_c, tmp_path / "perturbed")
    vec = V.boundary_vectors(model)
    assert len(mismatches(run_host(exe, vec, tmp_path), vec)) > 0


PROBE_RULE = "if (now - c[RLCC_CTX_PROBE_TS] >= timeout_ns) {"  # in rlcc_runtime.h, inlined here


@pytest.mark.slow
@pytest.mark.parametrize("mutant", ["off_by_one", "removed", "no_restart_on_rtt"])
def test_altered_probe_timeout_rule_is_caught(mutant, generated, tmp_path):
    """The TX probe-timeout rule, moved by one ns, dropped, or not restarted by RTT events, must
    show up as a mismatch on the boundary vectors (hosted harness) and fail rlcc-verify."""
    from rlcc.verify.check import verify_firmware

    model = MODELS["tiny"]
    paths = generate(model, tmp_path / "inlined", name="tiny_oblivious", inline_runtime=True)
    src = paths["c"].read_text()
    assert src.count(PROBE_RULE) == 1 and '#include "rlcc_runtime.h"' not in src
    restart = "    c[RLCC_CTX_PROBE_TS] = now; /* request the next probe */\n"
    assert src.count(restart) == 1
    bad_src = {
        "off_by_one": src.replace(PROBE_RULE, PROBE_RULE.replace(">=", ">")),
        "removed": src.replace(PROBE_RULE, "if (0) {\n        (void)now;\n        (void)timeout_ns;"),
        "no_restart_on_rtt": src.replace(restart, ""),
    }[mutant]
    assert bad_src != src
    bad_c = tmp_path / "tiny_oblivious.c"
    bad_c.write_text(bad_src)
    (tmp_path / "tiny_oblivious.h").write_text(paths["h"].read_text())
    exe = build_host(bad_c, tmp_path / "mutant")
    vec = V.boundary_vectors(model)
    bad = mismatches(run_host(exe, vec, tmp_path), vec)
    etype = vec.event[bad] & 0xFF
    assert len(bad) > 0
    want = fmt.EVENT_RTT if mutant == "no_restart_on_rtt" else fmt.EVENT_TX
    assert set(etype[:, fmt.EV_ATTR].tolist()) == {want}
    (tmp_path / "tiny_oblivious.rlcc.json").write_text(paths["manifest"].read_text())
    verdict = verify_firmware(bad_c, random_count=2000)
    assert not verdict.bit_exact and verdict.mismatches > 0


def _param_ids(paths) -> dict[str, int]:
    data = json.loads(paths["manifest"].read_text())
    return {p["name"]: p["id"] for p in data["parameters"]}


@pytest.mark.slow
def test_parameters_validated_and_applied(generated, host_exe, tmp_path):
    """Host parameter writes: invalid sets are refused whole; valid ones equal golden with those constants."""
    name = "onnx_spec"
    model = MODELS[name]
    ids = _param_ids(generated(name))
    c = model.constants
    new_min, new_beta, new_timeout = c.rate_min * 64, c.beta_q16 // 2, c.probe_timeout_ns // 3
    cmds = [
        hl.ParamCmd(slot=0, param_id_base=ids["CLAMP_MIN_Q16"], values=[c.clamp_max_q16 + 1]),  # min > max
        hl.ParamCmd(slot=0, param_id_base=ids["RATE_MIN"], values=[0]),
        hl.ParamCmd(slot=0, param_id_base=len(ids), values=[1]),  # unknown id
        hl.ParamCmd(slot=0, param_id_base=ids["RATE_MIN"], values=[c.rate_initial + 1]),  # above initial
        hl.ParamCmd(slot=9, param_id_base=0, values=[1]),  # no such slot
        hl.ParamCmd(slot=2, param_id_base=ids["RATE_MIN"], values=[new_min]),
        hl.ParamCmd(slot=2, param_id_base=ids["BETA_Q16"], values=[new_beta]),
        hl.ParamCmd(slot=2, param_id_base=ids["PROBE_TIMEOUT_NS"], values=[new_timeout]),
    ]
    changed = dataclasses.replace(model, constants=dataclasses.replace(c, rate_min=new_min, beta_q16=new_beta,
                                                                       probe_timeout_ns=new_timeout))
    vec = V.random_vectors(model, 5000, seed=5)
    slot = (vec.attr & 0xF) % hl.NUM_SLOTS
    golden_default = vec
    golden_changed = FV.expected(changed, vec.ctx_in, vec.event, vec.attr)
    out = run_host(host_exe(name), vec, tmp_path, param_cmds=cmds)
    assert out.param_status == [hl.PARAM_FAIL] * 5 + [hl.PARAM_OK] * 3
    pick = slot == 2
    assert pick.any() and (~pick).any()
    for field in ("ctx_out", "rate", "rtt_req"):
        want = np.where(pick.reshape((-1,) + (1,) * (getattr(vec, field).ndim - 1)),
                        getattr(golden_changed, field), getattr(golden_default, field))
        assert np.array_equal(out.records[field], want), field
    assert not np.array_equal(golden_changed.rate, golden_default.rate)
    assert not np.array_equal(golden_changed.rtt_req, golden_default.rtt_req)  # the timeout took effect
    zero = [hl.ParamCmd(slot=1, param_id_base=ids["PROBE_TIMEOUT_NS"], values=[0]),
            hl.ParamCmd(slot=1, param_id_base=ids["PROBE_TIMEOUT_NS"], values=[0xFFFFFFFF])]
    assert run_host(host_exe(name), vec, tmp_path, param_cmds=zero).param_status == [hl.PARAM_FAIL, hl.PARAM_OK]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["onnx_spec", "counts_h3"])
def test_params_valid_in_c_is_the_python_rule_table(name, generated, host_exe, tmp_path):
    """The firmware's params_valid and fxp.model.param_violations come from one table
    (PARAM_RULES): single writes at and around every bound are accepted by the C exactly when
    the Python rules accept them (each write on its own slot, the others at their defaults)."""
    model = MODELS[name]
    ids = _param_ids(generated(name))
    defaults = {k: getattr(model.constants, PARAM_RULE[k].field) for k in ids}
    writes = bound_writes(model.constants, ids)
    vec = V.random_vectors(model, 8, seed=1)
    for start in range(0, len(writes), hl.NUM_SLOTS):
        batch = writes[start:start + hl.NUM_SLOTS]
        cmds = [hl.ParamCmd(slot=i, param_id_base=ids[k], values=[v]) for i, (k, v) in enumerate(batch)]
        got = run_host(host_exe(name), vec, tmp_path, param_cmds=cmds).param_status
        want = [hl.PARAM_FAIL if param_violations({**defaults, k: v}) else hl.PARAM_OK for k, v in batch]
        assert got == want, batch


def test_generate_defaults_write_three_files(tmp_path):
    paths = generate(tiny_model(), tmp_path)
    assert sorted(p.name for p in paths.values()) == ["firmware.c", "firmware.h", "firmware.rlcc.json"]
