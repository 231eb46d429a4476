"""rlcc.fxp.vectors: boundary coverage, determinism, chaining, speed, serialization."""

from __future__ import annotations

import numpy as np
from codegen_models import MODELS

from rlcc import formats as fmt
from rlcc.fxp import golden
from rlcc.fxp import vectors as FV
from rlcc.verify import generators as V


def _hits(model, vec):
    g = golden.step(model, vec.ctx_in, vec.event, vec.attr)
    rtt = (vec.event[:, fmt.EV_ATTR] & 0xFF) == fmt.EVENT_RTT
    return g.features[rtt]


def test_boundaries_hit_exactly_where_reachable():
    for name in ("tiny", "onnx_spec", "all_features", "counts_h3"):
        model = MODELS[name]
        feats = _hits(model, V.boundary_vectors(model))
        for inp, value in V.split_targets(model):
            ago = next(a for a in range(model.spec.history) for f in range(model.spec.n_features)
                       if model.spec.input_index(a, f) == inp)
            fname = model.spec.features[inp % model.spec.n_features].name
            col = feats[:, inp]
            if ago > 0 or fname == "prev_action":
                assert (col == value).any(), (name, inp, value)
            elif fname in ("rtt_inflation", "delta"):
                # RTT-derived values move in steps of a few units per ns: nearest, not exact
                assert np.abs(col - value).min() <= 64, (name, inp, value)



def test_ramp_piece_boundaries_are_boundary_vectors():
    """Both sides of every ramp piece boundary (LO - 1 / LO, CENTER - 1 / CENTER, HI / HI + 1) are
    boundary targets, and a previous-action input (a stored history or context word) is hit exactly:
    a folded ramp's cut off by one changes the term at one of these values only."""
    import dataclasses

    from rlcc.fxp.model import Ramp

    base = MODELS["onnx_spec"]
    spec = base.spec
    inp = next(spec.input_index(a, f) for a in range(spec.history) for f in range(spec.n_features)
               if spec.features[f].name == "prev_action")
    model = dataclasses.replace(base, ramps=(Ramp(inp, 64225, 65536, 66847, -333, -340, 10),))
    want = {(inp, v) for v in (64224, 64225, 65535, 65536, 66847, 66848)}
    assert set(V.ramp_targets(model)) == want
    col = _hits(model, V.boundary_vectors(model))[:, inp]
    assert all((col == v).any() for _, v in want)

def test_derived_states_are_consistent_in_random_vectors_and_extreme_in_edge_vectors():
    """A derived input reads its previous step's state from the context: random vectors store the
    state of their (mixed) history word, as a flow does; the boundary set adds decisions on valid
    histories whose state word no decision writes (0, the int32 extremes, all ones), where the
    input wraps mod 2^32."""
    import dataclasses

    from rlcc import derived as derived_vocab

    base = MODELS["onnx_spec"]
    model = dataclasses.replace(base, spec=dataclasses.replace(base.spec, derived=("delta_log_ratio",)))
    word = model.derived_word(0)
    _, prev = model.spec.derived_sources(0)
    ago, f = model.spec.locate_input(prev)
    hist = fmt.CTX_HISTORY + (ago - 1) * model.spec.n_features + f
    r = V.random_vectors(model, 2000, 4)
    stored = r.ctx_in[:, hist].astype(np.int64)
    state = derived_vocab.get("delta_log_ratio").state_value(golden.NUMPY, stored - ((stored >> 31) << 32))
    assert np.array_equal(r.ctx_in[:, word].astype(np.int64), state & 0xFFFFFFFF)
    b = V.boundary_vectors(model)
    valid_rtt = ((b.event[:, fmt.EV_ATTR] & 0xFF) == fmt.EVENT_RTT) & ((b.ctx_in[:, fmt.CTX_FLAGS] & 1) == 1)
    for w in (0, 2**31 - 1, 2**31, 2**32 - 1):
        assert (valid_rtt & (b.ctx_in[:, word] == w)).any(), w


def test_edge_cases_present():
    model = MODELS["counts_h3"]
    vec = V.boundary_vectors(model)
    etype = vec.event[:, fmt.EV_ATTR] & 0xFF
    rtt = vec.event[:, fmt.EV_TIMESTAMP] - vec.event[:, fmt.EV_RTT_REQ_SEND_TS]
    is_rtt = etype == fmt.EVENT_RTT
    assert (rtt[is_rtt] == 0).any() and (rtt[is_rtt] == 0xFFFFFFFF).any()
    assert (is_rtt & (vec.event[:, fmt.EV_RTT_REQ_SEND_TS] > vec.event[:, fmt.EV_TIMESTAMP])).any()  # wraps
    assert ((vec.ctx_in == 0).all(axis=1) & is_rtt).any() and ((vec.ctx_in == 0).all(axis=1) & ~is_rtt).any()
    cnp = etype == fmt.EVENT_CNP
    assert (cnp & ((vec.event[:, fmt.EV_COALESCED] & 0xFFFF) == 0)).any()
    assert (cnp & ((vec.ctx_out[:, fmt.CTX_COUNTS] & 0xFFFF) == fmt.COUNT_MAX)).any()
    assert (vec.rate == model.constants.rate_min).any() and (vec.rate == fmt.RATE_MAX).any()
    assert {fmt.EVENT_TX, fmt.EVENT_ACK, fmt.EVENT_NULL} <= set(etype.tolist())


def test_probe_timeout_boundaries_present():
    for name in ("tiny", "counts_h3"):
        model = MODELS[name]
        t = model.constants.probe_timeout_ns
        for wrap, vec in ((True, V.boundary_vectors(model)), (False, V.random_vectors(model, 5000, seed=2))):
            etype = vec.event[:, fmt.EV_ATTR] & 0xFF
            tx = (etype == fmt.EVENT_TX) & (vec.ctx_in[:, fmt.CTX_RATE] != 0)
            ts = vec.event[:, fmt.EV_TIMESTAMP].astype(np.int64)
            last = vec.ctx_in[:, fmt.CTX_PROBE_TS].astype(np.int64)
            elapsed = (ts - last) & 0xFFFFFFFF
            for e in (t - 1, t, t + 1):
                assert (tx & (elapsed == e)).any(), (name, e)
                assert not wrap or (tx & (elapsed == e) & (ts < last)).any(), (name, e)  # across the clock wrap
            assert set(vec.rtt_req[tx].tolist()) == {0, 1}
        vec = V.boundary_vectors(model)
        etype = vec.event[:, fmt.EV_ATTR] & 0xFF
        new_tx = (etype == fmt.EVENT_TX) & (vec.ctx_in[:, fmt.CTX_RATE] == 0)
        assert new_tx.sum() >= 3 and (vec.rtt_req[new_tx] == 1).all()


def test_sequences_lose_probes():
    """Sequences contain TX events that re-request a probe after a silence, and ones that do not."""
    model = MODELS["tiny"]
    vec = V.sequence_vectors(model, 8, 64, seed=2)
    etype = vec.event[:, fmt.EV_ATTR] & 0xFF
    tx = (etype == fmt.EVENT_TX) & (vec.ctx_in[:, fmt.CTX_RATE] != 0)
    assert (vec.rtt_req[tx] == 1).sum() >= 3 and (vec.rtt_req[tx] == 0).sum() >= 10
    assert (vec.event[:, fmt.EV_TIMESTAMP] < vec.ctx_in[:, fmt.CTX_PROBE_TS]).any()  # the clock wraps


def test_random_vectors_fast_and_deterministic():
    model = MODELS["all_features"]
    a = V.random_vectors(model, 100_000, seed=3)
    b = V.random_vectors(model, 100_000, seed=3)
    assert len(a) == 100_000 and all(np.array_equal(getattr(a, k), getattr(b, k)) for k in ("ctx_in", "event", "ctx_out"))
    assert not np.array_equal(a.ctx_in, V.random_vectors(model, 100_000, seed=4).ctx_in)


def test_sequences_are_chained():
    model = MODELS["onnx_spec"]
    n_flows, n_events = 8, 50
    vec = V.sequence_vectors(model, n_flows, n_events, seed=1)
    assert len(vec) == n_flows * n_events
    assert (vec.ctx_in[:n_flows] == 0).all()
    assert np.array_equal(vec.ctx_in[n_flows:], vec.ctx_out[:-n_flows])
    assert ((vec.rate > 0) & (vec.rate <= fmt.RATE_MAX)).all()


def test_dict_round_trip():
    model = MODELS["tiny"]
    vec = V.verification_set(model, n_random=50)[0]
    back = FV.Vectors.from_dict(vec.to_dict())
    for k in ("ctx_in", "event", "attr", "ctx_out", "rate", "rtt_req"):
        assert np.array_equal(getattr(vec, k), getattr(back, k)) and getattr(back, k).dtype == np.uint32


def test_targets_tagged_and_round_trip():
    model = MODELS["tiny"]
    vec = V.verification_set(model, n_random=50)[0]
    tags = set(vec.targets.tolist())
    assert {"boundary", "edge", "random", "sequence", "bias", "probe_timeout:T"} <= tags
    assert any(t.startswith("split:") for t in tags) and any(t.startswith("leaf:") for t in tags)
    data = vec.to_dict()
    assert data["targets"] == vec.targets.tolist()
    assert FV.Vectors.from_dict(data).targets.tolist() == vec.targets.tolist()
    del data["targets"]  # manifests written before target tags
    assert set(FV.Vectors.from_dict(data).targets.tolist()) == {""}


def test_verification_set_tags():
    model = MODELS["counts_h3"]
    vec, tags = V.verification_set(model, seed=1, n_random=500)
    assert len(tags) == len(vec) and tags.count("random") == 500 and tags.count("sequence") == 8 * 64
    assert {"probe_timeout:T-1", "probe_timeout:T", "probe_timeout:T+1", "bias"} <= set(tags)


def test_pinned_set_is_small_chained_and_in_every_manifest(tmp_path):
    """The manifest carries only the pinned set: a few chained events a replay elsewhere can check."""
    model = MODELS["tiny"]
    pinned = V.pinned_vectors(model)
    assert len(pinned) == V.PINNED_FLOWS * V.PINNED_EVENTS and set(pinned.targets.tolist()) == {"sequence"}
    assert np.array_equal(pinned.ctx_in[V.PINNED_FLOWS:], pinned.ctx_out[:-V.PINNED_FLOWS])


def test_manifest_value_out_of_range_is_bad_input(tmp_path):
    """A vector word of 2^70 is a one-line BadInputError (exit 3) naming the column, not a crash."""
    import json
    import subprocess
    from pathlib import Path

    from rlcc.codegen import manifest
    from rlcc.errors import BadInputError, ExitCode

    example = Path(__file__).resolve().parents[2] / "examples" / "firmware"
    data = json.loads((example / "firmware.rlcc.json").read_text())
    data["vectors"]["rate"][3] = 2**70
    bad = tmp_path / "firmware.rlcc.json"
    bad.write_text(json.dumps(data))
    try:
        manifest.load(str(bad))
    except BadInputError as exc:
        assert exc.exit_code == ExitCode.BAD_INPUT and "'rate'" in str(exc) and "\n" not in str(exc)
    else:
        raise AssertionError("no BadInputError")
    (tmp_path / "firmware.c").write_text((example / "firmware.c").read_text())
    proc = subprocess.run(["rlcc-verify", str(tmp_path / "firmware.c")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 3 and "'rate'" in proc.stderr and "Traceback" not in proc.stderr


def test_u32_keeps_the_low_32_bits():
    """The generators' cast to uint32 wraps like the explicit mask, at both int64 ends and across 2^32."""
    a = np.array([-1, -(2**31), 2**31, 2**32 - 1, 2**32, 2**32 + 5, 2**63 - 1, -(2**63), 0, 123], dtype=np.int64)
    assert np.array_equal(V._u32(a), (a & 0xFFFFFFFF).astype(np.uint32))
    assert V._u32([3, -3]).dtype == np.uint32 and V._u32([3, -3]).tolist() == [3, 2**32 - 3]
