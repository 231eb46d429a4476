"""Golden vectors of PCC firmware: (ctx_in, event, attr) -> golden (ctx_out, rate, rtt_req).

The record type (:class:`Vectors`, the manifest's ``vectors`` columns) and :func:`expected`, which
runs the golden model (:func:`rlcc.fxp.golden.step`) on inputs. The generators of inputs live
with the verifier (``rlcc.verify.generators``, ``rlcc.verify.observable``):

- :func:`rlcc.verify.observable.observable_vectors`: one vector per split boundary, reachable leaf,
  bias, clamp bound, rate rounding and probe timeout on which a one-datum edit of the firmware
  changes the output (confirmed against the mutated model); tagged with the target's id;

- :func:`rlcc.verify.generators.boundary_vectors`: every split threshold T hit at T-1, T, T+1 (history inputs set in
  the context directly, current-step inputs by inverting the integer feature formula), plus
  edge cases (RTT 0, wraparound, 0xFFFFFFFF, rate extremes, new flows, counter saturation,
  non-RTT and unknown event types) and the probe timeout of TX events (elapsed = timeout - 1,
  timeout, timeout + 1 and extremes, across the 32-bit clock wrap; new flows started by TX);
- :func:`rlcc.verify.generators.random_vectors`: random, deliberately extreme contexts and events;
- :func:`rlcc.verify.generators.sequence_vectors`: chained realistic per-flow event sequences (RTT, TX, CNP, NACK,
  ACK) with occasional silences longer than the probe timeout (lost probes).

Every vector carries a tag (``Vectors.targets``): an observable target id, ``probe_timeout:T-1``
/ ``T`` / ``T+1`` for the probe-timeout edges, or the generator ("boundary", "edge", "random",
"sequence").
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from rlcc import formats as fmt
from rlcc.errors import BadInputError
from rlcc.fxp import golden
from rlcc.fxp.model import INT32_MIN, U32_MAX, FxModel


@dataclasses.dataclass(frozen=True)
class Vectors:
    """N test vectors: inputs and the golden model's outputs (all uint32 arrays), and the target
    each vector was built to observe (``rlcc.verify.observable`` ids; "" or a generator tag)."""

    ctx_in: np.ndarray  # (N, CTX_WORDS)
    event: np.ndarray  # (N, EVENT_WORDS)
    attr: np.ndarray  # (N,)
    ctx_out: np.ndarray  # (N, CTX_WORDS)
    rate: np.ndarray  # (N,)
    rtt_req: np.ndarray  # (N,)
    targets: np.ndarray | None = None  # (N,) str; None = all ""

    def __post_init__(self) -> None:
        n = len(self.attr)
        tags = np.full(n, "", dtype=object) if self.targets is None else np.asarray(self.targets, dtype=object)
        if tags.shape != (n,):
            raise ValueError(f"{tags.shape} target tags for {n} vectors")
        object.__setattr__(self, "targets", tags)

    def __len__(self) -> int:
        return len(self.attr)

    def tagged(self, tag: str) -> "Vectors":
        """The same vectors, every one tagged ``tag``."""
        return dataclasses.replace(self, targets=np.full(len(self), tag, dtype=object))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready columns (lists of ints, target ids as strings), the manifest's ``vectors`` object."""
        cols = {name: getattr(self, name).astype(np.int64).tolist() for name in _COLUMNS}
        return {"count": len(self), **cols, "targets": [str(t) for t in self.targets]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Vectors":
        """Columns from a manifest, validated here so a malformed manifest fails at load (exit 3)
        rather than deep in verification: every column a list of the same length, rows of
        ``ctx_in``/``event``/``ctx_out`` exactly as wide as the harness records, integers in the
        32-bit range, ``count`` (when present) equal to that length. ``targets`` is optional
        (older manifests have none)."""
        if not isinstance(data, dict):
            raise BadInputError("manifest vectors: not a JSON object")
        cols = {name: _column(data, name) for name in _COLUMNS}
        lengths = {name: len(col) for name, col in cols.items()}
        n = lengths["attr"]
        uneven = {name: k for name, k in lengths.items() if k != n}
        if uneven:
            name, k = next(iter(uneven.items()))
            raise BadInputError(f"manifest vectors: '{name}' has {k} rows but 'attr' has {n}")
        count = data.get("count", n)
        if isinstance(count, bool) or not isinstance(count, int) or count != n:
            raise BadInputError(f"manifest vectors: 'count' is {count!r} but the columns hold {n} vectors")
        tags = data.get("targets")
        if tags is not None and (not isinstance(tags, list) or not all(isinstance(t, str) for t in tags)):
            raise BadInputError("manifest vectors: 'targets' must be a list of strings")
        if tags is not None and len(tags) != n:
            raise BadInputError(f"manifest vectors: 'targets' has {len(tags)} entries but the columns hold {n} vectors")
        return cls(**cols, targets=None if tags is None else np.array(tags, dtype=object))

_COLUMNS = ("ctx_in", "event", "attr", "ctx_out", "rate", "rtt_req")
_WIDTHS = {"ctx_in": fmt.CTX_WORDS, "event": fmt.EVENT_WORDS, "ctx_out": fmt.CTX_WORDS}  # others: one int a row

def _column(data: dict[str, Any], name: str) -> np.ndarray:
    """One uint32 column, (N, width) or (N,); a missing column, a row of the wrong width or type
    or a value outside int32/uint32 is a BadInputError naming the column (and row)."""
    if name not in data:
        raise BadInputError(f"manifest vectors: no '{name}' column")
    rows = data[name]
    if not isinstance(rows, list):
        raise BadInputError(f"manifest vectors: '{name}' must be a list")
    width = _WIDTHS.get(name)
    for i, row in enumerate(rows):
        if width is None:
            ok = isinstance(row, int) and not isinstance(row, bool)
        else:
            ok = isinstance(row, list) and len(row) == width and all(isinstance(x, int) and not isinstance(x, bool)
                                                                      for x in row)
        if not ok:
            shape = "an integer" if width is None else f"a list of {width} integers"
            if isinstance(row, list) and len(row) == width:
                got = "a list holding " + next(type(x).__name__ for x in row if not isinstance(x, int) or isinstance(x, bool))
            else:
                got = f"a list of {len(row)} values" if isinstance(row, list) else type(row).__name__
            raise BadInputError(f"manifest vectors: '{name}' row {i} must be {shape}, got {got}")
    try:
        col = np.asarray(rows, dtype=np.int64).reshape((len(rows), width) if width else (len(rows),))
    except OverflowError:
        raise BadInputError(f"manifest vectors: '{name}' has a value outside the 32-bit range") from None
    if col.size and (col.min() < INT32_MIN or col.max() > U32_MAX):
        raise BadInputError(f"manifest vectors: '{name}' has a value outside the 32-bit range")
    return col.astype(np.uint32)

def expected(model: FxModel, ctx_in: np.ndarray, event: np.ndarray, attr: np.ndarray | None = None) -> Vectors:
    """Vectors whose outputs are the golden model's for the given inputs."""
    ctx_in = np.asarray(ctx_in, dtype=np.uint32).reshape(-1, fmt.CTX_WORDS)
    event = np.asarray(event, dtype=np.uint32).reshape(-1, fmt.EVENT_WORDS)
    attr = np.zeros(len(ctx_in), dtype=np.uint32) if attr is None else np.asarray(attr, dtype=np.uint32)
    g = golden.step(model, ctx_in, event, attr)
    return Vectors(ctx_in.copy(), event.copy(), attr.copy(), g.ctx, g.rate, g.rtt_req)

def concat(*parts: Vectors) -> Vectors:
    """Concatenate vector sets in order."""
    return Vectors(*(np.concatenate([getattr(p, f.name) for p in parts]) for f in dataclasses.fields(Vectors)))
