"""What a run is made of before any traffic: the network's parameters, the per-flow table, and
the physical limits every config is checked against (one ``BadInputError`` line naming the limit).

Scenarios, topologies, flow-size CDFs and the fabrics all build on these, so they sit below all of
them.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Callable, Mapping

import numpy as np

from rlcc.errors import BadInputError

MAX_FLOWS = 1 << 20
# Sane physical ranges: beyond them the fluid model overflows (NaN metrics) or is meaningless.
LINE_RATE_GBPS = (1e-3, 1e5)  # 1 Mb/s .. 100 Tb/s (also host_rate_gbps)
BASE_RTT_US = (0.1, 1e6)  # 100 ns .. 1 s, as the spec's reward.base_rtt_ns
PACKET_BYTES = (64, 1 << 16)
MAX_BYTES = 1 << 40  # buffer, ECN thresholds and short-flow sizes
GO_BACK_N = "go-back-n"
LOSS_RECOVERY = ("none", GO_BACK_N)  # ``Network.loss_recovery`` values


@dataclasses.dataclass(frozen=True)
class PfcParams:
    """Lossless mode: one PFC priority class, pause thresholds per switch ingress port.

    An ingress port's bytes in its switch's shared buffer (the bytes that entered through it and
    still wait in any egress queue) at or above XOFF make the switch send PAUSE upstream; at or
    below XON it sends RESUME. Static: ``xoff_bytes`` and ``xon_bytes`` (both set) on those bytes.
    Dynamic (both None), as the HPCC ns-3 switch MMU (switch-mmu.cc) with
    USE_DYNAMIC_PFC_THRESHOLD: a port's shared bytes are its bytes above ``reserve_bytes``; it
    pauses when they reach XOFF = ``alpha`` x (buffer - every port's headroom and reserve - the
    switch's shared bytes) and resumes when they are 0 or ``resume_offset_bytes`` below XOFF.
    ``headroom_bytes`` per port, None: 3 x the port's link BDP (rate x one-way delay), as the peer
    configures it. The upstream stops (and restarts) 2 x the link's propagation delay after the
    crossing: the frame's trip up plus the last bytes' trip down; what arrives meanwhile is the
    headroom. The buffer still drops what overflows it (headroom too small).
    """

    xoff_bytes: int | None = None
    xon_bytes: int | None = None
    alpha: float = 0.125  # the peer's pfc_a_shift 3: 1/8
    headroom_bytes: int | None = None
    reserve_bytes: int = 4096  # switch-mmu.cc: reserve = 4 x 1024 per port
    resume_offset_bytes: int = 3072  # switch-mmu.cc: resume_offset = 3 x 1024

    @property
    def dynamic(self) -> bool:
        return self.xoff_bytes is None

    def validate(self) -> None:
        if (self.xoff_bytes is None) != (self.xon_bytes is None):
            raise BadInputError("invalid scenario: network.pfc needs both xoff_bytes and xon_bytes, or neither (dynamic)")
        if self.xoff_bytes is not None:
            check_range(self.xoff_bytes, 1, MAX_BYTES, "network.pfc.xoff_bytes")
            check_range(self.xon_bytes, 0, self.xoff_bytes - 1, "network.pfc.xon_bytes", "(below xoff_bytes)")
        check_range(self.alpha, 0, 1e3, "network.pfc.alpha", low_open=True)
        if self.headroom_bytes is not None:
            check_range(self.headroom_bytes, 0, MAX_BYTES, "network.pfc.headroom_bytes")
        check_range(self.reserve_bytes, 0, MAX_BYTES, "network.pfc.reserve_bytes")
        check_range(self.resume_offset_bytes, 0, MAX_BYTES, "network.pfc.resume_offset_bytes")


@dataclasses.dataclass(frozen=True)
class Network:
    """Link, buffer, ECN and time-step parameters (defaults: 100G RoCE fabric, see README).

    ``header_bytes``: bytes of headers each ``packet_bytes`` payload carries on the wire (0: the
    fluid is payload only). Rates, link capacities, queues, buffers, ECN thresholds and telemetry
    are wire bytes (what a NIC pacer, a switch MMU and INT count); only payload accounting scales
    by ``payload_fraction`` = P / (P + H): a flow of ``size_bytes`` payload finishes after
    size / fraction wire bytes, goodput and per-flow delivered rates report payload, and a
    saturated link delivers capacity x P / (P + H) payload. Packet counts (CNPs, drops) are of
    wire packets of P + H bytes.

    ``pfc``: lossless mode (``PfcParams``); None: the lossy shared buffer.
    ``loss_recovery``: what a drop costs the sender. ``"none"``: only the dropped bytes are lost
    (an ideal selective repeat). ``"go-back-n"``: RoCE's NIC loss recovery (the ns-3 peer does it
    too): a NACK makes the sender resend from the lost PSN, so every byte it sent after the lost
    packet until the NACK arrived is sent again and the receiver discards the ones that arrived
    out of order. Accounting only (``FlowState.go_back``): the NIC keeps sending at its rate, so
    queues and drops are unchanged; delivered bytes, goodput and FCTs exclude the discarded bytes.
    Default ``"none"``: every recorded result stays as it was; the suite's loss tables turn it on.
    """

    line_rate_gbps: float = 100.0
    base_rtt_us: float = 8.0
    buffer_bytes: int = 32_000_000
    packet_bytes: int = 1024
    ecn_kmin_bytes: int = 100_000
    ecn_kmax_bytes: int = 400_000
    ecn_pmax: float = 0.2
    host_rate_gbps: float | None = None
    dt_ns: float = 1000.0
    header_bytes: int = 0
    pfc: PfcParams | None = None
    loss_recovery: str = "none"

    @property
    def go_back_n(self) -> bool:
        return self.loss_recovery == GO_BACK_N

    @property
    def bytes_per_ns(self) -> float:
        return self.line_rate_gbps / 8.0

    @property
    def wire_packet_bytes(self) -> int:
        """One packet on the wire: payload + headers."""
        return self.packet_bytes + self.header_bytes

    @property
    def payload_fraction(self) -> float:
        """Payload bytes per wire byte, P / (P + H): exactly 1.0 without headers."""
        return self.packet_bytes / self.wire_packet_bytes

    @property
    def payload_bytes_per_ns(self) -> float:
        """A line rate's payload throughput."""
        return self.bytes_per_ns * self.payload_fraction

    @property
    def base_rtt_ns(self) -> float:
        return self.base_rtt_us * 1000.0

    @property
    def host_cap(self) -> float:
        """A host NIC's line rate as a fraction of the switch port rate."""
        return 1.0 if self.host_rate_gbps is None else self.host_rate_gbps / self.line_rate_gbps

    def validate(self) -> None:
        check_range(self.line_rate_gbps, *LINE_RATE_GBPS, "network.line_rate_gbps")
        check_range(self.base_rtt_us, *BASE_RTT_US, "network.base_rtt_us")
        check_range(self.packet_bytes, *PACKET_BYTES, "network.packet_bytes")
        check_range(self.buffer_bytes, self.packet_bytes, MAX_BYTES, "network.buffer_bytes",
                  "(it must hold at least one packet of network.packet_bytes)")
        check_positive(self.dt_ns, "network.dt_ns")
        check_range(self.header_bytes, 0, PACKET_BYTES[1], "network.header_bytes")
        if self.loss_recovery not in LOSS_RECOVERY:
            raise BadInputError(f"invalid scenario: network.loss_recovery must be one of {', '.join(LOSS_RECOVERY)}, "
                                f"got {_shown(self.loss_recovery)}")
        if self.host_rate_gbps is not None:
            check_range(self.host_rate_gbps, *LINE_RATE_GBPS, "network.host_rate_gbps")
        check_range(self.ecn_kmax_bytes, 0, MAX_BYTES, "network.ecn_kmax_bytes")
        if not 0 <= self.ecn_kmin_bytes <= self.ecn_kmax_bytes:
            raise BadInputError("invalid scenario: need 0 <= network.ecn_kmin_bytes <= network.ecn_kmax_bytes")
        if not 0 <= self.ecn_pmax <= 1:
            raise BadInputError("invalid scenario: network.ecn_pmax must be in [0, 1]")
        if self.pfc is not None:
            self.pfc.validate()
        if self.dt_ns > self.base_rtt_ns / 2:
            raise BadInputError("invalid scenario: network.dt_ns must be at most half the base RTT")


@dataclasses.dataclass(frozen=True)
class FlowTable:
    """Per-flow arrays the engine runs: sender host, egress port, start time and size."""

    host: np.ndarray  # int32 (N,)
    port: np.ndarray  # int32 (N,)
    start_ns: np.ndarray  # float64 (N,)
    size_bytes: np.ndarray  # float64 (N,), inf for long-lived flows
    n_hosts: int
    n_ports: int
    dst: np.ndarray | None = None  # int32 (N,): receiving host (topologies; single switch: None)
    epoch: np.ndarray | None = None  # int32 (N,): flows of epoch e start when epoch e-1 has finished

    @property
    def n_flows(self) -> int:
        return len(self.host)


def _finite(value: int | float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int beyond the float range (JSON allows any size)
        return False


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 24 else text[:20] + "..."


def check_positive(value: Any, name: str) -> None:
    """``value`` a positive finite number, else one line naming the field."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not _finite(value) or value <= 0:
        raise BadInputError(f"invalid scenario: {name} must be a positive finite number, got {_shown(value)}")


def check_range(value: Any, lo: float, hi: float, name: str, why: str = "", low_open: bool = False) -> None:
    """``value`` a finite number in [lo, hi] (``(lo, hi]`` with ``low_open``), else one line naming the limits."""
    number = not isinstance(value, bool) and isinstance(value, (int, float))
    if number and _finite(value) and (lo < value if low_open else lo <= value) and value <= hi:
        return
    interval = f"{'(' if low_open else '['}{lo:g}, {hi:g}]"
    raise BadInputError(f"invalid scenario: {name} must be in {interval}{' ' + why if why else ''}, got {_shown(value)}")


def check_count(value: Any, name: str) -> None:
    """``value`` an integer in 1..MAX_FLOWS (hosts, flows, bursts), else one line naming the field."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_FLOWS:
        raise BadInputError(f"invalid scenario: {name} must be an integer in 1..{MAX_FLOWS}, got {_shown(value)}")


def fields_from_json(cls: type, data: Any, where: str, nested: Mapping[str, Callable[[Any], Any]] | None = None,
                     what: str = "an object") -> dict[str, Any]:
    """The JSON object ``data`` as keyword arguments of the dataclass ``cls``: keys among its fields,
    each value of its field's type (``check_type``), ``nested`` fields converted by their function;
    else one line naming ``where`` (e.g. "network.pfc")."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    if not isinstance(data, Mapping):
        raise BadInputError(f"invalid scenario: {where} must be {what} with keys among {', '.join(fields)}, "
                            f"got {_shown(data)}")
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise BadInputError(f"invalid scenario: unknown key(s) in {where}: {', '.join(unknown)}")
    nested = nested or {}
    out = {}
    for name, value in data.items():
        if name in nested:
            out[name] = nested[name](value)
        else:
            check_type(value, fields[name].type, f"{where}.{name}")
            out[name] = value
    return out


def check_type(value: Any, annotation: str, name: str) -> None:
    """``value`` of a JSON field matches the dataclass field's annotation (as a string), else one line."""
    if value is None and "None" in annotation:
        return
    if annotation.startswith("str"):
        if not isinstance(value, str):
            raise BadInputError(f"invalid scenario: {name} must be a string, got {_shown(value)}")
        return
    if annotation == "bool":
        if not isinstance(value, bool):
            raise BadInputError(f"invalid scenario: {name} must be true or false, got {_shown(value)}")
        return
    if "int" in annotation and "float" not in annotation:
        ok = (isinstance(value, int) and not isinstance(value, bool)) or (value is None and "None" in annotation)
    else:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok:
        raise BadInputError(f"invalid scenario: {name} has invalid value {_shown(value)}")
