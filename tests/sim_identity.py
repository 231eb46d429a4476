"""Bit-for-bit comparison of two simulator runs, for the tests that hold a C loop to its Python
reference (tests/simulator: the one-port kernel, the topology paths, Swift's loop)."""

from __future__ import annotations

import numpy as np

TIMING = ("wall_s", "sim_speed")  # the only values two identical runs may differ in


def bits(x) -> bytes:
    """The exact bytes of a value (dtype and shape included): equal bits, not close floats."""
    a = np.ascontiguousarray(np.asarray(x))
    return str((a.dtype, a.shape)).encode() + a.tobytes()


def assert_runs_identical(a, b) -> None:
    """Two SimResults agree bit for bit: metrics (but timing), series, per-flow arrays and trace."""
    for m_a, m_b in ((a.metrics, b.metrics), (a.metrics_full, b.metrics_full)):
        assert m_a.keys() == m_b.keys()
        for key in m_a:
            if key not in TIMING:
                assert bits(m_a[key]) == bits(m_b[key]), key
    for part in ("series", "flows"):
        pa, pb = getattr(a, part), getattr(b, part)
        assert pa.keys() == pb.keys()
        for key in pa:
            assert bits(pa[key]) == bits(pb[key]), f"{part}.{key}"
    assert (a.trace is None) == (b.trace is None)
    if a.trace is not None:
        assert bits(a.trace.obs) == bits(b.trace.obs)
        for key, col in a.trace.columns.items():
            assert bits(col) == bits(b.trace.columns[key]), f"trace.{key}"


def blas_order_refresh(self) -> None:
    """``PathFabric._refresh`` before ``fabric.host_sums``: the BLAS products (monkeypatch it in to
    reproduce runs from before; tests/simulator/test_fabric_sums.py bounds the difference)."""
    cap = self.host_cap
    scale = cap / np.maximum(self.host_sum, cap)
    if self.pfc is not None:
        scale = scale * self.host_on
    if (scale != self.host_scale).any():
        self.host_base = self.host_base + self.host_scale * (self.time - self.host_ref)
        self.host_ref = self.time
        self.host_scale = scale
    load = self.host_scale @ self.host_queue_rate
    load[self.n_queues] = 0.0
    self.link_load = np.maximum(load, 0.0, out=load)
    self.send_rate = float(self.host_scale @ self.host_sum)
    self._inflow = None
    self._dirty = False
