"""End-to-end: ADPG on a tiny scenario, reproducibility, export, CLI and the LSTM variant."""

from __future__ import annotations

import dataclasses

import numpy as np
import onnxruntime as ort
import pytest
from click.testing import CliRunner

from rlcc.errors import BadInputError
from rlcc.train.config import TrainConfig
from rlcc.train.export import export_mlp
from rlcc.train.trainer import train

TINY = TrainConfig(
    iterations=6,
    scenarios=({"kind": "many-to-one", "flows": 2, "duration_ms": 2.0, "network": {"buffer_bytes": 500_000}},),
)


@pytest.fixture(scope="module")
def tiny_run():
    return train(TINY)


def test_training_moves_abs_delta_toward_zero(tiny_run):
    first, last = tiny_run.log[0]["mean_abs_delta"], tiny_run.log[-1]["mean_abs_delta"]
    assert np.isfinite(first) and np.isfinite(last)
    assert last < 0.5 * first, (first, last)


def test_same_seed_gives_byte_identical_onnx(tiny_run, tmp_path):
    cfg = dataclasses.replace(TINY, iterations=2)
    spec = cfg.observation_spec()
    export_mlp(train(cfg).policy, spec, tmp_path / "a.onnx")
    export_mlp(train(cfg).policy, spec, tmp_path / "b.onnx")
    assert (tmp_path / "a.onnx").read_bytes() == (tmp_path / "b.onnx").read_bytes()


def test_config_round_trip_and_errors():
    assert TrainConfig.from_dict(TINY.to_dict()) == TINY
    with pytest.raises(BadInputError, match="unknown key"):
        TrainConfig.from_dict({"learning_rate": 1})
    with pytest.raises(BadInputError):
        TrainConfig.from_dict({"scenarios": [{"kind": "nope"}]})


def test_cli_writes_model_config_and_log(tmp_path):
    from rlcc.cli.train import train_command
    from rlcc.policy import OnnxPolicy

    cfg_path = tmp_path / "cfg.json"
    cfg_path.write_text(dataclasses.replace(TINY, iterations=1).to_json())
    out = tmp_path / "p.onnx"
    res = CliRunner().invoke(train_command, ["--config", str(cfg_path), "--out", str(out), "--log-dir", str(tmp_path / "log"), "--quiet"])
    assert res.exit_code == 0, res.output
    assert OnnxPolicy(out).spec.input_width == 4
    assert TrainConfig.from_file(tmp_path / "p.train.json").iterations == 1
    assert (tmp_path / "log" / "train_log.csv").read_text().startswith("iteration,")
    assert (tmp_path / "log" / "train_log.png").stat().st_size > 0
    assert f"wrote plot: {tmp_path / 'log' / 'train_log.png'}\n" in res.stderr
    bad = CliRunner().invoke(train_command, ["--config", str(tmp_path / "missing.json"), "--out", str(out)])
    assert bad.exit_code == 3


def test_lstm_export_has_explicit_state_and_is_rejected_by_onnx_policy(tmp_path):
    from rlcc.policy import OnnxPolicy
    from rlcc.train.lstm import Lstm, export_lstm

    spec = TINY.observation_spec()
    lstm = Lstm.init(spec.n_features, 8, np.random.default_rng(0), out_scale=1.0)
    path = tmp_path / "lstm.onnx"
    export_lstm(lstm, spec, path)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert [i.name for i in sess.get_inputs()] == ["obs", "h_in", "c_in"]
    assert [o.name for o in sess.get_outputs()] == ["action", "h_out", "c_out"]
    x = np.array([[0.0, 0.5], [0.1, -2.0]], np.float32)
    h = np.zeros((2, 8), np.float32)
    y, h2, c2 = sess.run(None, {"obs": x, "h_in": h, "c_in": h})
    ry, rh, rc, _ = lstm.step(x.astype(np.float64), h.astype(np.float64), h.astype(np.float64))
    np.testing.assert_allclose(y[:, 0], ry, atol=1e-5)
    np.testing.assert_allclose(h2, rh, atol=1e-5)
    np.testing.assert_allclose(c2, rc, atol=1e-5)
    with pytest.raises(BadInputError):
        OnnxPolicy(path)
