"""Recurrent teachers in closed loop: per-flow state, recorded labels, and the student's window."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from rlcc.distill import sampling, window
from rlcc.distill.fit import FitConfig
from rlcc.distill.sampling import Recorder, Samples, float_inputs
from rlcc.recurrent import load_policy
from rlcc.simulator.controllers import FactorController
from rlcc.simulator.controllers.recurrent import RecurrentController, teacher_controller
from rlcc.simulator.engine import simulate
from rlcc.simulator.scenarios import ManyToOne
from rlcc.spec import Feature, ObservationSpec

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "rlcc_lstm.onnx"
STEP_SPEC = ObservationSpec(features=(Feature("prev_action", offset=-1.0), Feature("delta", scale=10.0)), history=1)


class Leaky:
    """A one-value recurrent policy with obvious semantics: s' = 0.5 s + delta, y = tanh(-s')."""

    recurrent = True
    spec = STEP_SPEC

    def initial_state(self, n: int) -> np.ndarray:
        return np.full((n, 1), 0.25, np.float32)

    def step_raw(self, x, state):
        s = 0.5 * np.asarray(state, np.float64)[:, 0] + np.asarray(x, np.float64)[:, 1]
        return np.tanh(-s), s[:, None].astype(np.float32)


class Spy:
    """Records every decision the wrapped controller takes, in call order."""

    def __init__(self, inner) -> None:
        self.inner, self.spec, self.initial_rate = inner, inner.spec, inner.initial_rate
        self.batchable = inner.batchable
        self.calls: list[tuple] = []

    def reset(self, *a) -> None:
        self.inner.reset(*a)

    def block_counts(self, cnp, nack) -> None:
        if hasattr(self.inner, "block_counts"):
            self.inner.block_counts(cnp, nack)

    def decide(self, batch):
        d = self.inner.decide(batch)
        self.calls.append((batch.flow_ids.copy(), batch.first.copy(), batch.obs.copy(), d.factors.copy()))
        return d


def sequential_replay(policy, calls, cols) -> np.ndarray:
    """The factors a per-flow, one-decision-at-a-time loop gives on the recorded inputs (the oracle)."""
    state: dict[int, np.ndarray] = defaultdict(lambda: policy.initial_state(1))
    out = []
    for ids, first, obs, _ in calls:
        for i, flow in enumerate(ids):
            if first[i]:
                state[flow] = policy.initial_state(1)
            y, state[flow] = policy.step_raw(obs[i : i + 1, cols], state[flow])
            out.append(policy.spec.output_to_factor(y)[0])
    return np.array(out)


@pytest.mark.parametrize("block_steps", [0, None])
def test_controller_keeps_each_flows_state_like_a_sequential_loop(block_steps):
    window_spec = dataclasses.replace(STEP_SPEC, history=3)
    spy = Spy(RecurrentController(Leaky(), window_spec))
    result = simulate(ManyToOne(flows=8, duration_ms=4, seed=3, initial_rate=1 / 8), spy, block_steps=block_steps)
    assert result.metrics_full["decisions"] > 500
    got = np.concatenate([c[3] for c in spy.calls])
    cols = [window_spec.input_index(0, f) for f in range(2)]
    np.testing.assert_allclose(got, sequential_replay(Leaky(), spy.calls, cols), rtol=1e-6)
    assert sum(c[1].sum() for c in spy.calls) == 8  # one reset per flow


def test_block_and_step_loops_agree_for_a_recurrent_onnx_teacher():
    policy = load_policy(EXAMPLE)
    runs = [simulate(ManyToOne(flows=16, duration_ms=3, seed=1), RecurrentController(policy), block_steps=b).metrics_full
            for b in (0, None)]
    assert runs[0]["decisions"] == runs[1]["decisions"] and runs[0]["goodput"] == runs[1]["goodput"]


def test_teacher_controller_dispatches_on_recurrence():
    policy = load_policy(EXAMPLE).windowed(2)
    assert isinstance(teacher_controller(policy.factor, policy.spec), RecurrentController)
    assert isinstance(teacher_controller(lambda x: np.ones(len(x)), policy.spec), FactorController)


def test_recorded_labels_are_the_teachers_own_actions_or_a_shadows():
    """Teacher drives: labels = its factors. Another controller drives: labels = a shadow run of
    the teacher over the same decisions (checked against the sequential replay)."""
    policy = load_policy(EXAMPLE).windowed(2)
    cols = [policy.spec.input_index(0, f) for f in range(2)]
    rec = Recorder(RecurrentController(policy, policy.spec), policy.spec, 10**6, seed=0, teacher=policy.factor)
    spy = Spy(rec)
    simulate(ManyToOne(flows=4, duration_ms=3, initial_rate=0.25), spy)
    assert rec.label_driver and rec.size == sum(len(c[0]) for c in spy.calls)
    np.testing.assert_array_equal(rec.label[: rec.size], np.concatenate([c[3] for c in spy.calls]))

    driver = Spy(FactorController(lambda x: np.full(len(x), 0.99), policy.spec))
    rec = Recorder(driver, policy.spec, 10**6, seed=0, teacher=policy.factor)
    simulate(ManyToOne(flows=4, duration_ms=3, initial_rate=0.25), rec)
    assert rec.shadow is not None and np.all(np.concatenate([c[3] for c in driver.calls]) == 0.99)
    np.testing.assert_allclose(rec.label[: rec.size], sequential_replay(policy, driver.calls, cols), rtol=1e-6)


def test_sub_window_equals_recomputing_the_shorter_window_from_raw():
    spec = dataclasses.replace(STEP_SPEC, history=4)
    rng = np.random.default_rng(0)
    raw = np.stack([rng.uniform(8000, 40000, (50, 4)), rng.uniform(0.01, 1, (50, 4)), rng.uniform(0.8, 1.25, (50, 4)),
                    np.zeros((50, 4)), np.zeros((50, 4))], axis=2)
    s = Samples(float_inputs(spec, raw), raw, np.zeros(50), np.zeros(50, np.int8), np.zeros(50, np.int16),
                np.arange(50), ("x",))
    for k in (1, 2, 3):
        sub = window.sub_window(s, spec, k)
        np.testing.assert_array_equal(sub.obs, float_inputs(dataclasses.replace(spec, history=k), raw[:, :k]))


@pytest.mark.parametrize("lag, expect", [(0, 1), (2, 3)])
def test_window_choice_finds_the_memory_the_labels_need(lag, expect):
    """Labels that read the delta ``lag`` steps ago need a window of ``lag + 1``; longer windows
    do not help, so the shortest adequate one is chosen."""
    spec = dataclasses.replace(STEP_SPEC, history=4)
    rng = np.random.default_rng(lag)
    n = 4000
    raw = np.stack([rng.uniform(8000, 40000, (n, 4)), rng.uniform(0.01, 1, (n, 4)), np.ones((n, 4)),
                    np.zeros((n, 4)), np.zeros((n, 4))], axis=2)
    obs = float_inputs(spec, raw)
    label = 1.0 + 0.2 * np.tanh(obs[:, spec.input_index(lag, 1)])
    s = Samples(obs, raw, label, np.zeros(n, np.int8), np.zeros(n, np.int16), np.arange(n), ("x",))
    train, held = sampling.split_holdout(s, 0.25, 0)
    choice = window.choose(train, held, spec, lambda sp: sp, FitConfig(trees=10, depth=4))
    assert choice.k == expect and [c.k for c in choice.candidates] == [1, 2, 3, 4]
    assert window.max_window(STEP_SPEC) == 4 and choice.candidates[0].context_bytes == window.FIXED_CTX_BYTES


@pytest.mark.slow
def test_compiling_the_lstm_example_gives_verified_deterministic_window_trees(tmp_path):
    """rlcc-compile on the recurrent example: window chosen and reported, firmware bit-exact in the
    emulator, and the same bytes on a second run."""
    import json

    from click.testing import CliRunner

    from rlcc.cli.main import compile_command

    outs = []
    for run in ("a", "b"):
        out = tmp_path / run
        res = CliRunner().invoke(compile_command, [str(EXAMPLE), "-o", str(out), "--quick", "--accept-fidelity", "-q"])
        assert res.exit_code == 0, res.output
        outs.append(out)
    report = json.loads((outs[0] / "report.json").read_text())
    w = report["window"]
    assert 1 <= w["k"] <= w["max_k"] == window.max_window(STEP_SPEC) and len(w["candidates"]) == w["max_k"]
    assert json.loads((outs[0] / "model.rlcc.json").read_text())["spec"]["history"] == w["k"]
    assert "recurrent" in json.loads((outs[0] / "spec.json").read_text())  # the teacher's own spec
    assert "## Window (recurrent teacher)" in (outs[0] / "report.md").read_text()
    verdict = json.loads((outs[0] / "verify.json").read_text())
    assert verdict["bit_exact"] and verdict["passed"]
    for name in ("firmware.c", "model.rlcc.json", "report.json"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes(), name
