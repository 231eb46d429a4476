"""Parsers of the peer's output files (formats of rlcc-peer.cc, which keeps third.cc's FCT and PFC ones).

* qlen trace: ``t_ns switch port egress_bytes`` per switch port per sample;
* flow trace: ``t_ns src dst sport snd_una_bytes rate_bps`` per live QP per sample;
* PFC: ``t_ns node node_type ifindex type`` (type 1: a PAUSE received, 0: a RESUME; third.cc's get_pfc);
* FCT: ``sip dip sport dport size_bytes start_ns fct_ns standalone_fct_ns`` (hex IPs; third.cc's qp_finish).

A malformed line raises ``PeerOutputError`` naming the file and line.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np


class PeerOutputError(ValueError):
    """A peer output file does not have the expected format."""


def _rows(path: Path, width: int, conv=int) -> list[list]:
    rows = []
    for i, line in enumerate(Path(path).read_text().splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != width:
            raise PeerOutputError(f"{path}: line {i}: expected {width} fields, got {len(parts)}")
        try:
            rows.append([conv(p) for p in parts])
        except ValueError:
            raise PeerOutputError(f"{path}: line {i}: not a number: {line.strip()!r}") from None
    return rows


@dataclasses.dataclass(frozen=True)
class QueueTrace:
    t_ns: np.ndarray  # (T,) sample times
    ports: list[tuple[int, int]]  # (switch, port) per column
    bytes: np.ndarray  # (T, ports) egress bytes

    def total(self) -> np.ndarray:
        """Bytes queued in all switch egress ports at each sample."""
        return self.bytes.sum(axis=1)


def read_qlen(path: Path) -> QueueTrace:
    a, times, ports, at = _pivot(path, 4, 2)
    out = np.zeros((len(times), len(ports)))
    out[at] = a[:, 3]
    return QueueTrace(times, ports, out)


@dataclasses.dataclass(frozen=True)
class FlowTrace:
    t_ns: np.ndarray  # (T,)
    keys: list[tuple[int, int, int]]  # (src, dst, sport) per column
    acked: np.ndarray  # (T, flows) snd_una bytes; NaN where the QP did not exist
    rate_bps: np.ndarray  # (T, flows) the QP's current rate; NaN where absent


def read_flows(path: Path) -> FlowTrace:
    a, times, keys, at = _pivot(path, 6, 3)
    acked = np.full((len(times), len(keys)), np.nan)
    rate = np.full((len(times), len(keys)), np.nan)
    acked[at] = a[:, 4]
    rate[at] = a[:, 5]
    return FlowTrace(times, keys, acked, rate)


def _pivot(path: Path, width: int, n_key: int) -> tuple[np.ndarray, np.ndarray, list[tuple[int, ...]],
                                                        tuple[np.ndarray, np.ndarray]]:
    """A file of rows "t key... values..." (``width`` integers) as a time x key table: the rows, the
    sorted sample times, the sorted keys (columns 1 .. n_key) and each row's (time index, key index)."""
    rows = _rows(path, width)
    if not rows:
        raise PeerOutputError(f"{path}: no samples")
    a = np.asarray(rows, dtype=np.int64)
    times = np.unique(a[:, 0])
    keys = sorted({tuple(int(v) for v in r) for r in a[:, 1:1 + n_key]})
    col = {k: j for j, k in enumerate(keys)}
    cj = np.array([col[tuple(int(v) for v in r)] for r in a[:, 1:1 + n_key]], dtype=np.int64)
    return a, times, keys, (np.searchsorted(times, a[:, 0]), cj)


def pfc_pauses(path: Path) -> int:
    """PAUSE frames received anywhere (type 1 lines)."""
    return sum(1 for r in _rows(path, 5) if r[4] == 1)


def last_pfc_is_resume(path: Path) -> bool:
    """The last PFC event is a RESUME (type 0) received by any device."""
    rows = _rows(path, 5)
    return bool(rows) and rows[-1][4] == 0


def read_fct(path: Path) -> list[dict]:
    out = []
    for i, line in enumerate(Path(path).read_text().splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 8:
            raise PeerOutputError(f"{path}: line {i}: expected 8 fields, got {len(parts)}")
        try:
            sip, dip = int(parts[0], 16), int(parts[1], 16)
            rest = [int(p) for p in parts[2:]]
        except ValueError:
            raise PeerOutputError(f"{path}: line {i}: not a number: {line.strip()!r}") from None
        out.append({"src": (sip >> 8) & 0xFFFF, "dst": (dip >> 8) & 0xFFFF, "sport": rest[0], "dport": rest[1],
                    "size": rest[2], "start_ns": rest[3], "fct_ns": rest[4], "standalone_ns": rest[5]})
    return out
