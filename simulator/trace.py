"""Bounded recording of per-decision observations (for distillation sampling and ADPG training).

Each record is one decision: the exact policy input fed to the controller (``obs``), the flow id,
time, raw RTT, rate, CNP/NACK counts, the raw RL-CC ``delta`` (spec reward parameters), the
factor and the new rate. Memory is bounded by ``capacity``:

* ``stride``: keep every stride-th decision (counted over all eligible decisions);
* ``flows``: keep only these flow ids (whole per-flow sequences, as the ADPG trainer needs);
* when full: ``mode="stop"`` drops later records, ``mode="reservoir"`` keeps a uniform seeded
  sample (Algorithm R), ``mode="chunks"`` writes ``chunk_00000.npz``... to ``chunk_dir`` and
  starts over (unbounded on disk, bounded in memory).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np

from rlcc.errors import BadInputError

FIELDS: dict[str, np.dtype] = {
    "flow_id": np.dtype(np.int32),
    "time_ns": np.dtype(np.int64),
    "rtt_ns": np.dtype(np.int64),
    "rate": np.dtype(np.float64),
    "cnp_count": np.dtype(np.int32),
    "nack_count": np.dtype(np.int32),
    "delta": np.dtype(np.float64),
    "factor": np.dtype(np.float64),
    "new_rate": np.dtype(np.float64),
}
MODES = ("stop", "reservoir", "chunks")
MAX_CAPACITY = 100_000_000  # records; and their bytes (60 + 4 x observation width each):
MAX_TRACE_BYTES = 1 << 30  # the buffer is allocated at its capacity
RECORD_BYTES = sum(dt.itemsize for dt in FIELDS.values())


@dataclasses.dataclass(frozen=True)
class TraceConfig:
    capacity: int = 1_000_000
    stride: int = 1
    flows: Sequence[int] | None = None
    mode: str = "stop"
    chunk_dir: str | None = None
    seed: int = 0

    def validate(self) -> None:
        if self.capacity < 1 or self.stride < 1:
            raise BadInputError("invalid trace config: capacity and stride must be >= 1")
        if self.capacity > MAX_CAPACITY:
            raise BadInputError(f"invalid trace config: capacity must be at most {MAX_CAPACITY:.0e} records")
        if self.mode not in MODES:
            raise BadInputError(f"invalid trace config: mode must be one of {', '.join(MODES)}")
        if self.mode == "chunks" and not self.chunk_dir:
            raise BadInputError("invalid trace config: mode 'chunks' needs chunk_dir")


@dataclasses.dataclass
class Trace:
    """Recorded decisions: ``obs`` (M, width) float32 plus one 1-D array per name in ``FIELDS``."""

    obs: np.ndarray
    columns: dict[str, np.ndarray]
    input_names: list[str]
    seen: int = 0

    def __len__(self) -> int:
        return len(self.obs)

    def __getattr__(self, name: str) -> np.ndarray:
        try:
            return self.__dict__["columns"][name]
        except KeyError:
            raise AttributeError(name) from None

    def sequences(self) -> Iterator[tuple[int, np.ndarray]]:
        """(flow id, record indices in time order) per flow: per-flow (obs, delta) sequences."""
        order = np.lexsort((self.columns["time_ns"], self.columns["flow_id"]))
        ids = self.columns["flow_id"][order]
        cuts = np.flatnonzero(np.diff(ids)) + 1
        for chunk in np.split(order, cuts):
            if len(chunk):
                yield int(self.columns["flow_id"][chunk[0]]), chunk

    def save(self, path: str | Path) -> None:
        np.savez_compressed(
            path, obs=self.obs, input_names=np.array(self.input_names), seen=np.int64(self.seen), **self.columns
        )

    @classmethod
    def load(cls, path: str | Path) -> "Trace":
        with np.load(path) as z:
            return cls(
                obs=z["obs"],
                columns={k: z[k] for k in FIELDS},
                input_names=[str(s) for s in z["input_names"]],
                seen=int(z["seen"]),
            )


class TraceRecorder:
    """Fixed-capacity columnar buffer filled by the engine one decision batch at a time."""

    def __init__(self, config: TraceConfig, width: int, input_names: list[str] | None = None) -> None:
        config.validate()
        size = config.capacity * (RECORD_BYTES + 4 * width)
        if size > MAX_TRACE_BYTES:
            raise BadInputError(f"invalid trace config: capacity {config.capacity} x {RECORD_BYTES + 4 * width} bytes per "
                                f"record = {size / 2**30:.3g} GiB, more than the limit 1 GiB: lower the capacity "
                                f"(mode chunks writes the rest to disk)")
        self.config = config
        self.width = width
        self.input_names = input_names or []
        self.obs = np.zeros((config.capacity, width), np.float32)
        self.cols = {k: np.zeros(config.capacity, dt) for k, dt in FIELDS.items()}
        self.size = 0
        self.seen = 0
        self.chunks = 0
        self.rng = np.random.default_rng(config.seed)
        self.flow_mask: np.ndarray | None = None
        if config.flows is not None:
            self.flow_ids = np.asarray(config.flows, dtype=np.int64)

    def bind(self, n_flows: int) -> None:
        """Resolve the flow selection once the scenario's flow count is known."""
        if self.config.flows is not None:
            if len(self.flow_ids) and (self.flow_ids.min() < 0 or self.flow_ids.max() >= n_flows):
                raise BadInputError(f"invalid trace config: flow ids must be in 0..{n_flows - 1}")
            self.flow_mask = np.zeros(n_flows, bool)
            self.flow_mask[self.flow_ids] = True

    def add(self, obs: np.ndarray | None, **cols: np.ndarray) -> None:
        """Offer one batch of decisions; keeps those the stride/flow/capacity policy selects."""
        keep = np.ones(len(cols["flow_id"]), bool)
        if self.flow_mask is not None:
            keep &= self.flow_mask[cols["flow_id"]]
        n = int(keep.sum())
        if n == 0:
            return
        stride = self.config.stride
        index = self.seen + np.arange(n)
        self.seen += n
        sel = np.flatnonzero(keep)
        if stride > 1:
            on = index % stride == 0
            sel, index = sel[on], index[on] // stride
        if len(sel) == 0:
            return
        data_obs = obs[sel] if obs is not None and self.width else None
        data = {k: cols[k][sel] for k in FIELDS}
        self._store(data_obs, data, index)

    def _store(self, obs: np.ndarray | None, data: dict[str, np.ndarray], index: np.ndarray) -> None:
        cap, mode = self.config.capacity, self.config.mode
        free = cap - self.size
        head = min(free, len(index))
        if head:
            self._put(np.arange(self.size, self.size + head), obs, data, slice(0, head))
            self.size += head
        if head == len(index):
            return
        rest = slice(head, len(index))
        if mode == "reservoir":
            slots = (self.rng.random(len(index) - head) * (index[rest] + 1)).astype(np.int64)
            hit = slots < cap
            sub = np.arange(head, len(index))[hit]
            self._put(slots[hit], obs, data, sub)
        elif mode == "chunks":
            self.flush_chunk()
            sub_obs = obs[rest] if obs is not None else None
            self._store(sub_obs, {k: v[rest] for k, v in data.items()}, index[rest])

    def _put(self, slots: np.ndarray, obs: np.ndarray | None, data: dict[str, np.ndarray], rows) -> None:
        if obs is not None:
            self.obs[slots] = obs[rows]
        for k, v in data.items():
            self.cols[k][slots] = v[rows]

    def flush_chunk(self) -> None:
        """Write the buffer to ``chunk_dir/chunk_NNNNN.npz`` and empty it (mode 'chunks')."""
        out = Path(self.config.chunk_dir or ".")
        out.mkdir(parents=True, exist_ok=True)
        self.result().save(out / f"chunk_{self.chunks:05d}.npz")
        self.chunks += 1
        self.size = 0

    def result(self, copy: bool = True) -> Trace:
        n = self.size
        take = (lambda a: a[:n].copy()) if copy else (lambda a: a[:n])
        return Trace(
            obs=take(self.obs),
            columns={k: take(v) for k, v in self.cols.items()},
            input_names=list(self.input_names),
            seen=self.seen,
        )

    def finish(self) -> Trace:
        """The in-memory trace (views of the buffer: the recorder is done, and a copy would double
        the peak memory); in 'chunks' mode also writes the last partial chunk."""
        if self.config.mode == "chunks" and self.size:
            self.flush_chunk()
        return self.result(copy=False)
