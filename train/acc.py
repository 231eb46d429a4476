"""The learning ACC switch agent: DDQN on every controlled egress queue, one shared Q-network.

At the end of every monitoring interval the engine hands :class:`AccLearner` the interval's
statistics. The learner scores the action that was in force with the spec's reward (paper eq. 2)
and stores (s, a, r, s') for each busy queue in its switch's LOCAL replay (idle queues: no bytes
sent and an empty queue all interval, are skipped as in the paper's idle-queue rule: their
reward says nothing about the template), picks the next templates epsilon-greedily, and takes
``updates_per_interval`` gradient steps on minibatches drawn evenly from the local replays (all
agents share the network's parameters). Every ``exchange_every`` intervals the local and global
replays exchange samples (paper section 3.4). The replay stores ``(1 - gamma) * r``: Q is then a
discounted *average* reward in the reward's own 0..1 range whatever gamma (a long horizon is
needed: DCQCN senders take milliseconds to recover from a burst of marks), and the greedy
policy is unchanged by the scale. Exploration is temporally extended (Dabney et al., "Temporally-
extended epsilon-greedy exploration", ICLR 2021): a queue that explores holds one random template
for a geometric number of intervals (mean ``explore_hold``), so the network sees what a template
does when it persists, which single-interval dithering under a millisecond-memory CC cannot show.

:class:`RewardMeter` wraps any switch agent and accumulates the same reward over busy queues,
the evaluation's common yardstick for static templates and Q-networks.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rlcc.simulator.switch_agent import IntervalStats, QueueInfo, WindowAgent
from rlcc.switch_spec import SwitchAgentSpec
from rlcc.train.ddqn import Ddqn
from rlcc.train.replay import Batch, MultiReplay


def busy_queues(stats: IntervalStats) -> np.ndarray:
    """(Q,) bool: the queue sent bytes or held a queue during the interval."""
    return (stats.tx_bytes > 0) | (stats.qlen_bytes > 0) | (stats.avg_qlen_bytes > 0)


@dataclasses.dataclass(frozen=True)
class LearnerParams:
    updates_per_interval: int = 1
    min_replay: int = 256  # transitions in all local replays before gradient steps start
    exchange_every: int = 20  # intervals between local <-> global replay exchanges
    exchange_up: int = 64  # samples each local replay sends to the global one per exchange
    exchange_down: int = 64  # samples the global replay sends to each local one per exchange
    explore_hold: float = 1.0  # mean intervals an exploring queue keeps its random template (1: plain epsilon-greedy)


class AccLearner(WindowAgent):
    """Epsilon-greedy DDQN agent that learns while it runs (one instance across episodes)."""

    name = "acc-learner"

    def __init__(self, spec: SwitchAgentSpec, ddqn: Ddqn, replay: MultiReplay, params: LearnerParams,
                 rng: np.random.Generator) -> None:
        super().__init__(spec)
        self.ddqn, self.replay, self.p, self.train_rng = ddqn, replay, params, rng
        self.epsilon = 1.0
        self.intervals = 0  # over all episodes: drives the exchange period
        self.reset_episode_stats()

    def reset_episode_stats(self) -> None:
        self.reward_sum, self.reward_n, self.loss_sum, self.loss_n = 0.0, 0, 0.0, 0

    def reset(self, queues: QueueInfo, rng: np.random.Generator) -> None:
        super().reset(queues, rng)
        self.hold = np.zeros(queues.n_queues, np.int64)  # intervals left on an exploring queue's template
        self.held = np.zeros(queues.n_queues, np.int64)
        self.switches = np.unique(queues.switch)
        for sw in self.switches.tolist():
            self.replay.buffer(int(sw))

    def on_interval(self, stats: IntervalStats) -> np.ndarray:
        s = self.spec.normalize(self.window)
        s2 = self.spec.normalize(self.observe(stats))
        busy = busy_queues(stats)
        r = self.spec.reward(stats.util, stats.avg_qlen_bytes)
        self.reward_sum += float(r[busy].sum())
        self.reward_n += int(busy.sum())
        a = np.asarray(stats.action, np.int64)
        stored = (1.0 - self.ddqn.p.gamma) * r
        for sw in self.switches.tolist():
            keep = busy & (self.queues.switch == sw)
            if keep.any():
                self.replay.buffer(int(sw)).add(Batch(s[keep], a[keep], stored[keep], s2[keep], np.zeros(int(keep.sum()), bool)))
        self.intervals += 1
        if self.intervals % self.p.exchange_every == 0:
            self.replay.exchange(self.train_rng, self.p.exchange_up, self.p.exchange_down)
        self._learn()
        return self._act(s2)

    def _act(self, x: np.ndarray) -> np.ndarray:
        greedy = self.ddqn.greedy(x)
        n = len(greedy)
        start = (self.hold == 0) & (self.train_rng.random(n) < self.epsilon)
        self.held[start] = self.train_rng.integers(0, self.spec.n_actions, int(start.sum()))
        self.hold[start] = self.train_rng.geometric(1.0 / self.p.explore_hold, int(start.sum()))
        exploring = self.hold > 0
        self.hold[exploring] -= 1
        return np.where(exploring, self.held, greedy).astype(np.int64)

    def _learn(self) -> None:
        buffers = [b for b in self.replay.local.values() if len(b)]
        if sum(len(b) for b in buffers) < self.p.min_replay:
            return
        per = max(1, self.ddqn.p.batch // len(buffers))
        for _ in range(self.p.updates_per_interval):
            parts = [b.sample(self.train_rng, per) for b in buffers]
            batch = Batch(*(np.concatenate([getattr(p, f.name) for p in parts])
                            for f in dataclasses.fields(Batch)))
            self.loss_sum += self.ddqn.update(batch)
            self.loss_n += 1


class RewardMeter(WindowAgent):
    """Delegates every decision to ``inner`` and sums the spec's reward over busy queue-intervals."""

    def __init__(self, inner: WindowAgent) -> None:
        super().__init__(inner.spec)
        self.inner = inner
        self.name = inner.name
        self.total, self.count = 0.0, 0

    def reset(self, queues: QueueInfo, rng: np.random.Generator) -> None:
        super().reset(queues, rng)
        self.inner.reset(queues, rng)

    def on_interval(self, stats: IntervalStats) -> np.ndarray:
        busy = busy_queues(stats)
        self.total += float(self.spec.reward(stats.util, stats.avg_qlen_bytes)[busy].sum())
        self.count += int(busy.sum())
        return self.inner.on_interval(stats)

    @property
    def mean_reward(self) -> float:
        return self.total / self.count if self.count else float("nan")
