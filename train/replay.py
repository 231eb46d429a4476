"""Experience replay for the multi-agent DDQN (ACC, paper section 3.4).

Each switch keeps a LOCAL ring buffer of its own transitions; a larger GLOBAL buffer pools them.
:meth:`MultiReplay.exchange` periodically copies a uniform sample of every local buffer into the
global one and a uniform sample of the global buffer into every local one, so agents at different
switches learn from each other's parts of the network.
"""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass
class Batch:
    """Transitions (s, a, r, s', done): states (N, width) float32, actions (N,) int64."""

    s: np.ndarray
    a: np.ndarray
    r: np.ndarray
    s2: np.ndarray
    done: np.ndarray

    def __len__(self) -> int:
        return len(self.a)


class ReplayBuffer:
    """A fixed-capacity ring buffer: once full, each new transition overwrites the oldest."""

    def __init__(self, capacity: int, width: int) -> None:
        if capacity < 1:
            raise ValueError("replay capacity must be >= 1")
        self.capacity = capacity
        self.s = np.zeros((capacity, width), np.float32)
        self.s2 = np.zeros((capacity, width), np.float32)
        self.a = np.zeros(capacity, np.int64)
        self.r = np.zeros(capacity, np.float64)
        self.done = np.zeros(capacity, bool)
        self.size = 0
        self.head = 0  # next slot to write

    def __len__(self) -> int:
        return self.size

    def add(self, batch: Batch) -> None:
        """Append every transition of ``batch`` in order (the last ``capacity`` survive)."""
        n = len(batch)
        if n == 0:
            return
        if n > self.capacity:
            batch = self._slice(batch, slice(n - self.capacity, n))
            n = self.capacity
        idx = (self.head + np.arange(n)) % self.capacity
        self.s[idx], self.a[idx], self.r[idx], self.s2[idx], self.done[idx] = batch.s, batch.a, batch.r, batch.s2, batch.done
        self.head = int((self.head + n) % self.capacity)
        self.size = min(self.size + n, self.capacity)

    def sample(self, rng: np.random.Generator, n: int) -> Batch:
        """``n`` transitions drawn uniformly with replacement (empty buffer: an empty batch)."""
        idx = rng.integers(0, self.size, n) if self.size else np.zeros(0, np.int64)
        return self.take(idx)

    def take(self, idx: np.ndarray) -> Batch:
        return Batch(self.s[idx].copy(), self.a[idx].copy(), self.r[idx].copy(), self.s2[idx].copy(), self.done[idx].copy())

    def contents(self) -> Batch:
        """Every stored transition, oldest first."""
        start = self.head if self.size == self.capacity else 0
        return self.take((start + np.arange(self.size)) % self.capacity)

    @staticmethod
    def _slice(b: Batch, sl: slice) -> Batch:
        return Batch(b.s[sl], b.a[sl], b.r[sl], b.s2[sl], b.done[sl])


class MultiReplay:
    """Local buffers keyed by switch id (created on first use) plus one global buffer."""

    def __init__(self, width: int, local_capacity: int, global_capacity: int) -> None:
        self.width, self.local_capacity = width, local_capacity
        self.local: dict[int, ReplayBuffer] = {}
        self.glob = ReplayBuffer(global_capacity, width)

    def buffer(self, switch: int) -> ReplayBuffer:
        if switch not in self.local:
            self.local[switch] = ReplayBuffer(self.local_capacity, self.width)
        return self.local[switch]

    def exchange(self, rng: np.random.Generator, up: int, down: int) -> None:
        """Copy ``up`` uniform samples of each local buffer into the global one, then ``down``
        uniform samples of the global buffer into each local one (switches in id order)."""
        for sw in sorted(self.local):
            if len(self.local[sw]):
                self.glob.add(self.local[sw].sample(rng, up))
        if not len(self.glob):
            return
        for sw in sorted(self.local):
            self.local[sw].add(self.glob.sample(rng, down))
