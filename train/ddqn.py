"""Double DQN (the ACC paper's Algorithm 1): evaluation net, periodically copied target net, replay.

Target (paper eq. 3): ``y = r + gamma * Q_target(s', argmax_a Q_eval(s', a))`` (0 after a
terminal s'); loss (eq. 4) the mean over the minibatch of Huber(y - Q_eval(s, a)) (quadratic
within ``huber`` of y, i.e. the paper's MSE there). One network serves every agent (the paper
installs the same model on every switch), so the agents' minibatches all update it.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rlcc.train.adam import Adam
from rlcc.train.qnet import QNet
from rlcc.train.replay import Batch


@dataclasses.dataclass(frozen=True)
class DdqnParams:
    gamma: float = 0.9
    lr: float = 1e-3
    batch: int = 64
    target_every: int = 200  # gradient steps between target-network copies
    huber: float = 1.0
    grad_clip: float = 10.0  # global gradient-norm bound per step


def double_q_targets(q_eval_next: np.ndarray, q_target_next: np.ndarray, r: np.ndarray, done: np.ndarray,
                     gamma: float) -> np.ndarray:
    """y = r + gamma * Q_target(s', argmax_a Q_eval(s', a)) (the eval net picks, the target net scores)."""
    pick = np.argmax(q_eval_next, axis=1)
    boot = q_target_next[np.arange(len(pick)), pick]
    return np.asarray(r, np.float64) + gamma * np.where(done, 0.0, boot)


def epsilon_at(step: int, start: float, end: float, decay: float) -> float:
    """Fast exponential decay ``end + (start - end) * decay^step``."""
    return float(end + (start - end) * decay**step)


class Ddqn:
    """The evaluation and target networks with their optimizer."""

    def __init__(self, net: QNet, params: DdqnParams) -> None:
        self.p = params
        self.eval = net
        self.target = net.copy()
        self.opt = Adam(self.eval.params, params.lr)
        self.updates = 0

    def greedy(self, x: np.ndarray) -> np.ndarray:
        return np.argmax(self.eval(x), axis=1).astype(np.int64)

    def act(self, x: np.ndarray, epsilon: float, rng: np.random.Generator) -> np.ndarray:
        """Epsilon-greedy: each row explores (uniform action) with probability ``epsilon``."""
        a = self.greedy(x)
        explore = rng.random(len(a)) < epsilon
        n_actions = self.eval.weights[-1].shape[1]
        return np.where(explore, rng.integers(0, n_actions, len(a)), a).astype(np.int64)

    def targets(self, b: Batch) -> np.ndarray:
        return double_q_targets(self.eval(b.s2), self.target(b.s2), b.r, b.done, self.p.gamma)

    def update(self, b: Batch) -> float:
        """One gradient step on ``b``; copies eval -> target every ``target_every`` steps. Returns the loss."""
        y = self.targets(b)
        q, cache = self.eval.forward(b.s)
        rows = np.arange(len(b))
        err = q[rows, b.a] - y
        h = self.p.huber
        loss = float(np.mean(np.where(np.abs(err) <= h, 0.5 * err * err, h * (np.abs(err) - 0.5 * h))))
        dq = np.zeros_like(q)
        dq[rows, b.a] = np.clip(err, -h, h) / len(b)
        grads = self.eval.backward(cache, dq)
        norm = float(np.sqrt(sum(float(np.sum(g * g)) for g in grads)))
        scale = min(1.0, self.p.grad_clip / norm) if norm > 0 else 1.0
        self.opt.step(self.eval.params, [-scale * g for g in grads])  # Adam ascends: descend the loss
        self.updates += 1
        if self.updates % self.p.target_every == 0:
            self.target.load(self.eval)
        return loss
