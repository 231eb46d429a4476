"""The DOCA flavour through the hosted harness (zig cc, UBSan): parameter handling as the DOCA
application sees it (library range check, slot/index check, all-or-nothing commit) accepts and
refuses exactly what the stub flavour does for the algorithm's slot, refuses other slots, and the
outputs after the writes equal the golden model with the new constants."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from codegen_build import WARN, bound_writes, compile_ok, run_host
from codegen_models import MODELS
from hostcc import host_cc, sanitizer_flags

from rlcc import firmware_sdk_stub as sdk
from rlcc.codegen import generate
from rlcc.codegen import sdk_flavours as fl
from rlcc.firmware_sdk_stub import harness_layout as hl
from rlcc.fxp import vectors as FV
from rlcc.verify import generators as V

SLOT = 2


def _build(paths, out, choice: fl.SdkChoice):
    adapter = [sdk.SDK_DIR / n for n in choice.flavour.adapter_sources]
    compile_ok([*host_cc("zig"), *WARN, "-O1", "-g", *sanitizer_flags("zig"), *choice.build_defines(),
                f"-I{sdk.SDK_DIR}", f"-I{paths['c'].parent}", *sdk.runtime_sources("host"), *adapter, paths["c"], "-o", out])
    return out


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    root = tmp_path_factory.mktemp("doca_host")
    model = MODELS["onnx_spec"]
    out = {}
    for choice in (fl.choose("stub"), fl.choose("doca", SLOT)):
        paths = generate(model, root / choice.flavour.name, name="fw", sdk=choice)
        out[choice.flavour.name] = (paths, _build(paths, root / f"{choice.flavour.name}_exe", choice))
    return model, out


def _ids(paths) -> dict[str, int]:
    return {p["name"]: p["id"] for p in json.loads(paths["manifest"].read_text())["parameters"]}


@pytest.mark.slow
def test_parameter_writes_match_the_stub_flavour(builds, tmp_path):
    model, out = builds
    ids = _ids(out["doca"][0])
    writes = bound_writes(model.constants, ids)
    vec = V.random_vectors(model, 4, seed=1)
    statuses = {"stub": [], "doca": []}
    for key, value in writes:  # one write per run: each is judged against the defaults
        cmd = [hl.ParamCmd(slot=SLOT, param_id_base=ids[key], values=[value])]
        for flavour, (_, exe) in out.items():
            statuses[flavour].append(run_host(exe, vec, tmp_path, param_cmds=cmd).param_status[0])
    assert statuses["doca"] == statuses["stub"]
    assert hl.PARAM_OK in statuses["doca"] and hl.PARAM_FAIL in statuses["doca"]


@pytest.mark.slow
def test_other_slots_and_indices_refused(builds, tmp_path):
    model, out = builds
    ids = _ids(out["doca"][0])
    vec = V.random_vectors(model, 4, seed=1)
    cmds = [hl.ParamCmd(slot=s, param_id_base=ids["RATE_MIN"], values=[model.constants.rate_min]) for s in (0, 1, 3, 7)]
    assert run_host(out["doca"][1], vec, tmp_path, param_cmds=cmds).param_status == [hl.PARAM_FAIL] * 4
    assert run_host(out["stub"][1], vec, tmp_path, param_cmds=cmds).param_status == [hl.PARAM_OK] * 4


@pytest.mark.slow
def test_outputs_after_writes_equal_golden(builds, tmp_path):
    model, out = builds
    ids = _ids(out["doca"][0])
    c = model.constants
    new_min, new_beta, new_timeout = c.rate_min * 64, c.beta_q16 // 2, c.probe_timeout_ns // 3
    cmds = [hl.ParamCmd(slot=SLOT, param_id_base=ids["RATE_MIN"], values=[new_min]),
            hl.ParamCmd(slot=SLOT, param_id_base=ids["BETA_Q16"], values=[new_beta]),
            hl.ParamCmd(slot=SLOT, param_id_base=ids["PROBE_TIMEOUT_NS"], values=[new_timeout])]
    changed = dataclasses.replace(model, constants=dataclasses.replace(c, rate_min=new_min, beta_q16=new_beta,
                                                                       probe_timeout_ns=new_timeout))
    vec = V.random_vectors(model, 3000, seed=5)
    vec = FV.expected(changed, vec.ctx_in, vec.event, np.full(len(vec), SLOT, dtype=np.uint32))
    for flavour, (_, exe) in out.items():
        table = run_host(exe, vec, tmp_path, param_cmds=cmds)
        assert table.param_status == [hl.PARAM_OK] * 3, flavour
        assert table.disable_event_mask == json.loads(out[flavour][0]["manifest"].read_text())["events"]["disable_event_mask"]
        for field in ("ctx_out", "rate", "rtt_req"):
            assert np.array_equal(table.records[field], getattr(vec, field)), (flavour, field)
