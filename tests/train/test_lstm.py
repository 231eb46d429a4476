"""The recurrent policy trained with ADPG: BPTT gradient, fixed point, training, export, config."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from click.testing import CliRunner

from rlcc.errors import BadInputError
from rlcc.recurrent import RecurrentPolicy, load_policy
from rlcc.train.config import TrainConfig
from rlcc.train.export import export_policy
from rlcc.train.lstm import MAX_HIDDEN, MAX_STATE_VALUES, Lstm, LstmStepper, export_lstm, lstm_from_onnx
from rlcc.train.trainer import train

TINY = TrainConfig(
    iterations=6,
    lstm_pre=(4,),
    scenarios=({"kind": "many-to-one", "flows": 2, "duration_ms": 2.0, "network": {"buffer_bytes": 500_000}},),
).with_arch("lstm")


def _random_lstm(rng: np.random.Generator, pre: tuple[int, ...]) -> Lstm:
    lstm = Lstm.init(2, 4, rng, pre, out_scale=1.0)
    lstm.b[:] = rng.normal(size=lstm.b.shape)
    lstm.b[8:12] = 0.0  # the g block (gate order i, f, g, o; hidden 4)
    return lstm


@pytest.mark.parametrize("pre", [(), (5,), (5, 3)], ids=str)
def test_bptt_policy_gradient_matches_finite_differences(pre):
    """grad of sum_t dy_t * pi(o_1..o_t) over three flows of different lengths, against central
    differences of the plain forward run of each flow on its own (no padding, no caches)."""
    rng = np.random.default_rng(3)
    lstm = _random_lstm(rng, pre)
    bounds = [(0, 7), (7, 10), (10, 16)]
    obs, dy = rng.normal(size=(16, 2)), rng.normal(size=16)

    def objective() -> float:
        total = 0.0
        for a, b in bounds:
            h = c = np.zeros((1, 4))
            for t in range(a, b):
                y, h, c, _ = lstm.step(obs[t : t + 1], h, c)
                total += dy[t] * y[0]
        return total

    grads = lstm.weighted_grads(obs, dy, bounds)
    eps = 1e-6
    for p, g in zip(lstm.params, grads, strict=True):
        flat, gflat = p.reshape(-1), g.reshape(-1)
        for k in range(len(flat)):
            old = flat[k]
            flat[k] = old + eps
            up = objective()
            flat[k] = old - eps
            down = objective()
            flat[k] = old
            expected = 0.0 if p is lstm.b and 8 <= k < 12 else (up - down) / (2 * eps)
            assert abs(expected - gflat[k]) < 1e-7, (k, expected, gflat[k])


def test_zero_input_and_state_is_an_exact_fixed_point():
    """No bias except the i/f/o gates: delta 0, prev_action 1 from the reset state gives factor 1."""
    lstm = _random_lstm(np.random.default_rng(4), (6,))
    y, h, c, _ = lstm.step(np.zeros((3, 2)), np.zeros((3, 4)), np.zeros((3, 4)))
    assert np.all(y == 0.0) and np.all(h == 0.0) and np.all(c == 0.0)


@pytest.fixture(scope="module")
def tiny_run():
    return train(TINY)


def test_adpg_lstm_training_moves_abs_delta_toward_zero(tiny_run):
    first, last = tiny_run.log[0]["mean_abs_delta"], tiny_run.log[-1]["mean_abs_delta"]
    assert isinstance(tiny_run.policy, Lstm)
    assert np.isfinite(first) and np.isfinite(last)
    assert last < 0.5 * first, (first, last)


def test_same_seed_gives_byte_identical_lstm_onnx(tmp_path):
    cfg = dataclasses.replace(TINY, iterations=2)
    spec = cfg.observation_spec()
    export_policy(train(cfg).policy, spec, tmp_path / "a.onnx")
    export_policy(train(cfg).policy, spec, tmp_path / "b.onnx")
    assert (tmp_path / "a.onnx").read_bytes() == (tmp_path / "b.onnx").read_bytes()
    export_policy(train(dataclasses.replace(cfg, seed=1)).policy, spec, tmp_path / "c.onnx")
    assert (tmp_path / "c.onnx").read_bytes() != (tmp_path / "a.onnx").read_bytes()


def test_onnx_step_equals_numpy_step_via_recurrent_policy(tiny_run, tmp_path):
    """The exported graph, run by rlcc.recurrent over a sequence with carried state, is the numpy cell."""
    spec = TINY.observation_spec()
    path = tmp_path / "lstm.onnx"
    export_lstm(tiny_run.policy, spec, path)
    policy = load_policy(path)
    assert isinstance(policy, RecurrentPolicy)
    assert policy.spec.history == 1 and [t.size for t in policy.spec.recurrent.state] == [8, 8]
    numpy_stepper = LstmStepper(tiny_run.policy, spec)
    rng = np.random.default_rng(5)
    s_onnx, s_np = policy.initial_state(4), numpy_stepper.initial_state(4)
    for _ in range(12):
        x = rng.normal(0, 0.5, size=(4, 2)).astype(np.float32)
        y_onnx, s_onnx = policy.step_raw(x, s_onnx)
        y_np, s_np = numpy_stepper.step_raw(x, s_np)
        np.testing.assert_allclose(y_onnx, y_np, atol=1e-5)
        np.testing.assert_allclose(s_onnx, s_np, atol=1e-5)
    back, back_spec = lstm_from_onnx(path)
    assert back_spec == policy.spec
    for a, b in zip(back.params, tiny_run.policy.params, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_recurrent_probe_is_the_same_for_numpy_and_onnx(tiny_run, tmp_path):
    from rlcc.train.probe import explain_policy, explain_table_recurrent

    spec = TINY.observation_spec()
    export_lstm(tiny_run.policy, spec, tmp_path / "lstm.onnx")
    a = explain_policy(load_policy(tmp_path / "lstm.onnx"))
    b = explain_table_recurrent(LstmStepper(tiny_run.policy, spec))
    for prev in a:
        for cur in a[prev]:
            assert a[prev][cur] == pytest.approx(b[prev][cur], abs=1e-5)
    assert a["on target"]["on target"] == 1.0


def test_lstm_config_errors_and_round_trip():
    assert TrainConfig.from_dict(TINY.to_dict()) == TINY
    assert TINY.observation_spec().history == 1
    assert 2 * MAX_HIDDEN <= MAX_STATE_VALUES
    with pytest.raises(BadInputError, match="lstm_hidden"):
        dataclasses.replace(TINY, lstm_hidden=MAX_HIDDEN + 1)
    with pytest.raises(BadInputError, match="history to 1"):
        dataclasses.replace(TrainConfig(), arch="lstm")
    with pytest.raises(BadInputError, match="arch"):
        TrainConfig(arch="gru")
    with pytest.raises(BadInputError, match="lstm_pre"):
        TrainConfig.from_dict({"lstm_pre": 3})


def test_cli_arch_lstm_writes_a_recurrent_policy(tmp_path):
    from rlcc.cli.train import train_command

    cfg_path = tmp_path / "cfg.json"
    cfg_path.write_text(dataclasses.replace(TrainConfig(), iterations=1, scenarios=TINY.scenarios).to_json())
    out = tmp_path / "p.onnx"
    res = CliRunner().invoke(train_command, ["--config", str(cfg_path), "--out", str(out), "--arch", "lstm", "--quiet"])
    assert res.exit_code == 0, res.output
    assert isinstance(load_policy(out), RecurrentPolicy)
    written = TrainConfig.from_file(tmp_path / "p.train.json")
    assert written.arch == "lstm" and written.observation_spec().history == 1
