"""ACC training: the Q-network, Double DQN, replay exchange, the learning agent and `rlcc-train --algo acc`."""

from __future__ import annotations

import numpy as np
import pytest

from rlcc.switch_policy import QNetPolicy
from rlcc.switch_spec import SwitchAgentSpec, paper_templates
from rlcc.train.ddqn import Ddqn, DdqnParams, double_q_targets
from rlcc.train.qnet import QNet, qnet_to_onnx
from rlcc.train.replay import Batch, MultiReplay, ReplayBuffer


def _batch(ids: np.ndarray, width: int = 2) -> Batch:
    """Transitions tagged by id: s = s' = [id, id], a = id, r = id."""
    ids = np.asarray(ids)
    s = np.repeat(ids[:, None], width, axis=1).astype(np.float32)
    return Batch(s, ids.astype(np.int64), ids.astype(np.float64), s.copy(), np.zeros(len(ids), bool))


def test_qnet_backward_matches_finite_differences():
    rng = np.random.default_rng(0)
    net = QNet.init([5, 7, 6, 3], rng, out_scale=1.0)
    for b in net.biases:
        b[...] = rng.normal(0, 0.3, b.shape)
    x, dq = rng.normal(size=(9, 5)), rng.normal(size=(9, 3))
    grads = net.backward(net.forward(x)[1], dq)
    eps = 1e-6
    for p, g in zip(net.params, grads, strict=True):
        assert g.shape == p.shape
        for idx in [tuple(0 for _ in p.shape), tuple(s - 1 for s in p.shape), tuple(s // 2 for s in p.shape)]:
            old = p[idx]
            p[idx] = old + eps
            up = float(np.sum(dq * net(x)))
            p[idx] = old - eps
            down = float(np.sum(dq * net(x)))
            p[idx] = old
            assert abs((up - down) / (2 * eps) - g[idx]) < 1e-5


def test_onnx_export_loads_as_qnet_policy_and_matches_numpy(tmp_path):
    spec = SwitchAgentSpec(actions=paper_templates())
    rng = np.random.default_rng(1)
    net = QNet.init([spec.input_width, 16, 16, spec.n_actions], rng, out_scale=1.0)
    for b in net.biases:
        b[...] = rng.normal(0, 0.5, b.shape)
    qnet_to_onnx(net, spec, tmp_path / "q.onnx")
    pol = QNetPolicy(tmp_path / "q.onnx")
    assert pol.spec == spec
    x = rng.uniform(0, 1, (257, spec.input_width)).astype(np.float32)
    np.testing.assert_allclose(pol.q_values(x), net(x), atol=1e-5, rtol=1e-5)
    qnet_to_onnx(net, spec, tmp_path / "r.onnx")
    assert (tmp_path / "q.onnx").read_bytes() == (tmp_path / "r.onnx").read_bytes()


def test_double_q_target_on_a_hand_example():
    q_eval = np.array([[1.0, 3.0, 2.0], [5.0, 0.0, 4.0]])  # eval picks action 1, then action 0
    q_target = np.array([[10.0, 20.0, 30.0], [7.0, 8.0, 9.0]])  # target's own max would be 30 and 9
    y = double_q_targets(q_eval, q_target, np.array([0.5, -1.0]), np.array([False, True]), gamma=0.5)
    np.testing.assert_allclose(y, [0.5 + 0.5 * 20.0, -1.0])


def test_replay_ring_keeps_the_newest_transitions():
    buf = ReplayBuffer(4, 2)
    buf.add(_batch(np.arange(3)))
    buf.add(_batch(np.arange(3, 6)))
    assert len(buf) == 4
    np.testing.assert_array_equal(buf.contents().a, [2, 3, 4, 5])
    buf.add(_batch(np.arange(10, 16)))  # more than the capacity at once
    np.testing.assert_array_equal(buf.contents().a, [12, 13, 14, 15])


def test_replay_exchange_moves_local_samples_up_and_global_samples_down():
    rng = np.random.default_rng(0)
    mr = MultiReplay(width=2, local_capacity=100, global_capacity=1000)
    mr.buffer(0).add(_batch(np.arange(0, 10)))
    mr.buffer(3).add(_batch(np.arange(100, 110)))
    mr.exchange(rng, up=5, down=4)
    g = mr.glob.contents().a
    assert len(g) == 10  # 5 from each local
    assert np.sum(g < 100) == 5 and np.sum(g >= 100) == 5
    for sw, own in ((0, set(range(0, 10))), (3, set(range(100, 110)))):
        local = mr.buffer(sw).contents().a
        assert len(local) == 14
        assert set(local[:10]) == own  # its own experience is kept, in order
        assert set(local[10:]) <= set(g)  # the 4 new ones come from the global pool
    # a switch that has seen nothing yet receives global experience too
    mr.buffer(7)
    mr.exchange(rng, up=1, down=3)
    assert len(mr.buffer(7)) == 3


@pytest.mark.slow
def test_ddqn_converges_to_value_iteration_q_on_a_tiny_mdp():
    """Offline DDQN on uniform transitions of a random 5-state, 3-action MDP; the oracle is
    value iteration on the known model."""
    rng = np.random.default_rng(0)
    n_s, n_a, gamma = 5, 3, 0.8
    p = rng.dirichlet(np.full(n_s, 0.5), size=(n_s, n_a))
    r = rng.uniform(0, 1, (n_s, n_a))
    q_star = np.zeros((n_s, n_a))
    for _ in range(500):
        q_star = r + gamma * p @ q_star.max(axis=1)
    n = 20_000
    s, a = rng.integers(0, n_s, n), rng.integers(0, n_a, n)
    cum = np.cumsum(p[s, a], axis=1)
    s2 = np.minimum((rng.random(n)[:, None] > cum).sum(axis=1), n_s - 1)
    eye = np.eye(n_s, dtype=np.float32)
    buf = ReplayBuffer(n, n_s)
    buf.add(Batch(eye[s], a, r[s, a], eye[s2], np.zeros(n, bool)))
    agent = Ddqn(QNet.init([n_s, 32, n_a], np.random.default_rng(1)),
                 DdqnParams(gamma=gamma, lr=3e-3, batch=128, target_every=100))
    before = np.abs(agent.eval(eye) - q_star).max()
    for _ in range(4000):
        agent.update(buf.sample(rng, 128))
    q = agent.eval(eye)
    assert before > 3.0
    assert np.abs(q - q_star).max() < 0.12, (q, q_star)
    np.testing.assert_array_equal(q.argmax(axis=1), q_star.argmax(axis=1))


def _stats(qlen, tx, action, util, avg):
    from rlcc.simulator.switch_agent import IntervalStats

    n = len(qlen)
    return IntervalStats(time_ns=0.0, qlen_bytes=np.array(qlen, np.int64), tx_bytes=np.array(tx, np.int64),
                         marked_pkts=np.zeros(n, np.int64), action=np.array(action, np.int64),
                         avg_qlen_bytes=np.array(avg, float), util=np.array(util, float))


def test_learner_stores_rewarded_transitions_of_busy_queues_in_their_switch_replay():
    """Two switches, three queues; queue 1 idle. The stored reward is the paper's eq. 2 computed by hand."""
    from rlcc.simulator.switch_agent import QueueInfo
    from rlcc.train.acc import AccLearner, LearnerParams
    from rlcc.train.replay import MultiReplay

    spec = SwitchAgentSpec(actions=paper_templates())
    net = QNet.init([spec.input_width, 8, spec.n_actions], np.random.default_rng(0))
    learner = AccLearner(spec, Ddqn(net, DdqnParams()), MultiReplay(spec.input_width, 100, 100),
                         LearnerParams(min_replay=10**9, exchange_every=10**9), np.random.default_rng(1))
    learner.reset(QueueInfo.build(spec, np.array([0, 0, 1]), np.full(3, 100.0)), np.random.default_rng(2))
    learner.epsilon = 0.0
    s0 = spec.normalize(learner.window)
    acts = learner.on_interval(_stats([30_000, 0, 500_000], [1_000_000, 0, 1_250_000], [0, 0, 0], [0.8, 0.0, 1.0],
                                      [25_000.0, 0.0, 700_000.0]))
    np.testing.assert_array_equal(acts, np.argmax(net(spec.normalize(learner.window)), axis=1))
    b0, b1 = learner.replay.buffer(0).contents(), learner.replay.buffer(1).contents()
    assert len(b0) == 1 and len(b1) == 1  # the idle queue 1 stored nothing
    # 25 KB average queue: first level E(n) = 20 KB * 2^n >= 25 KB is n = 1 -> D = 0.9
    scale = 1.0 - learner.ddqn.p.gamma  # the replay holds (1 - gamma) * r
    assert b0.r[0] == pytest.approx(scale * (0.7 * 0.8 + 0.3 * 0.9))
    # 700 KB: 20 KB * 2^6 = 1280 KB is the first level above -> D = 0.4
    assert b1.r[0] == pytest.approx(scale * (0.7 * 1.0 + 0.3 * 0.4))
    np.testing.assert_array_equal(b0.s[0], s0[0])
    np.testing.assert_array_equal(b1.s2[0], spec.normalize(learner.window)[2])


SMOKE = {
    "episodes": 2,
    "min_replay": 16,
    "scenarios": [
        {"kind": "long-short", "short_flows": 4, "short_bytes": 30_000, "burst_start_frac": 0.05, "duration_ms": 1.0},
        {"kind": "trace", "hosts": 4, "cdf": "hadoop", "load": 0.5, "duration_ms": 1.0},
    ],
}


def test_cli_acc_smoke_run_is_deterministic_and_loadable(tmp_path):
    import json

    from click.testing import CliRunner

    from rlcc.cli.train import train_command

    cfg = tmp_path / "acc.json"
    cfg.write_text(json.dumps(SMOKE))
    outs = []
    for name in ("a", "b"):
        out = tmp_path / f"{name}.onnx"
        res = CliRunner().invoke(train_command, ["--algo", "acc", "--config", str(cfg), "--out", str(out), "--quiet"])
        assert res.exit_code == 0, res.output
        outs.append(out)
    assert outs[0].read_bytes() == outs[1].read_bytes()
    record = json.loads((tmp_path / "a.train.json").read_text())
    assert record["algo"] == "acc" and len(record["episodes"]) == 2
    assert record["episodes"][1]["epsilon"] < record["episodes"][0]["epsilon"]
    assert all(np.isfinite(e["reward"]) and 0 < e["reward"] <= 1 for e in record["episodes"])
    assert record["episodes"][1]["updates"] > 0
    spec = QNetPolicy(outs[0]).spec
    assert spec.actions == paper_templates()
    assert spec.actions[spec.initial_action].kmin_bytes == max(a.kmin_bytes for a in spec.actions)  # deepest first
    # the record is itself a config: the same run again
    res = CliRunner().invoke(train_command, ["--algo", "acc", "--config", str(tmp_path / "a.train.json"),
                                             "--out", str(tmp_path / "c.onnx"), "--quiet"])
    assert res.exit_code == 0, res.output
    assert (tmp_path / "c.onnx").read_bytes() == outs[0].read_bytes()


@pytest.mark.parametrize("bad", [
    {"episodes": -1},
    {"gamma": 1.5},
    {"hidden": []},
    {"no_such_key": 1},
    {"scenarios": [{"kind": "nope"}]},
    {"spec": {"rlcc_switch_agent": 1, "actions": []}},
])
def test_cli_acc_bad_config_exits_3(tmp_path, bad):
    import json

    from click.testing import CliRunner

    from rlcc.cli.train import train_command

    cfg = tmp_path / "bad.json"
    cfg.write_text(json.dumps(bad))
    res = CliRunner().invoke(train_command, ["--algo", "acc", "--config", str(cfg), "--out", str(tmp_path / "m.onnx")])
    assert res.exit_code == 3, res.output
    assert "error:" in res.output
    assert not (tmp_path / "m.onnx").exists()


def test_cli_acc_rejects_adpg_options(tmp_path):
    from click.testing import CliRunner

    from rlcc.cli.train import train_command

    res = CliRunner().invoke(train_command, ["--algo", "acc", "--iterations", "3", "--out", str(tmp_path / "m.onnx")])
    assert res.exit_code == 3


def test_exploring_queues_hold_their_random_template():
    from rlcc.simulator.switch_agent import QueueInfo
    from rlcc.train.acc import AccLearner, LearnerParams
    from rlcc.train.replay import MultiReplay

    spec = SwitchAgentSpec(actions=paper_templates())
    net = QNet.init([spec.input_width, 8, spec.n_actions], np.random.default_rng(0))

    def run(hold: float, epsilon: float) -> np.ndarray:
        learner = AccLearner(spec, Ddqn(net, DdqnParams()), MultiReplay(spec.input_width, 100, 100),
                             LearnerParams(min_replay=10**9, explore_hold=hold), np.random.default_rng(1))
        learner.reset(QueueInfo.build(spec, np.zeros(64, np.int64), np.full(64, 100.0)), np.random.default_rng(2))
        learner.epsilon = epsilon
        acts, prev = [], np.zeros(64, np.int64)
        for k in range(6):
            prev = learner.on_interval(_stats([1000 * k] * 64, [10_000] * 64, prev, [0.5] * 64, [500.0] * 64))
            acts.append(prev)
        return np.array(acts)

    held = run(hold=1e9, epsilon=1.0)
    assert (held == held[0]).all() and len(np.unique(held[0])) > 4  # random per queue, then kept
    dither = run(hold=1.0, epsilon=1.0)
    assert (dither != dither[0]).any(axis=0).mean() > 0.9  # plain epsilon-greedy redraws every interval


def test_evaluate_acc_reports_reward_and_switch_metrics():
    from rlcc.simulator.switch_agent import StaticEcn
    from rlcc.train.acc_eval import evaluate_acc, static_agents

    spec = SwitchAgentSpec(actions=paper_templates())
    statics = static_agents(spec)
    assert [a.spec.initial_action for a in statics] == list(range(spec.n_actions))  # each in force from t = 0
    sc = {"kind": "incast", "senders": 4, "flows_per_sender": 1, "min_bytes": 20_000, "max_bytes": 20_000,
          "duration_ms": 1.0}
    (row,) = evaluate_acc(StaticEcn(spec, 0), [sc])
    # 4 x 20 KB at line rate into one port: 80 KB drain in 6.4 us, all flows finish; reward in (0, 1]
    assert row["unfinished"] == 0 and row["flows"] == 4
    assert 0 < row["reward"] <= 1
    assert np.isfinite(row["mice_slowdown_mean"]) and np.isnan(row["elephant_slowdown_mean"])
