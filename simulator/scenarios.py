"""Scenarios as data: network parameters plus a traffic pattern, loadable from JSON.

A scenario only describes *what* to simulate; ``flow_table()`` turns it into per-flow arrays
(host, egress port, start time, size) that the engine consumes. Every field is validated so a
bad config fails early with one clear ``BadInputError``.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from typing import Any, ClassVar, Mapping

import numpy as np

from rlcc import textio
from rlcc.errors import BadInputError
from rlcc.simulator import topology as topo
from rlcc.simulator.flowsize import FlowSizeCdf, poisson_flows
from rlcc.simulator.nic import NicConfig
from rlcc.simulator.params import (
    LINE_RATE_GBPS, MAX_BYTES, MAX_FLOWS, FlowTable, Network, PfcParams, check_count, check_positive, check_range, check_type,
    fields_from_json,
)

MAX_DECISION_LATENCY_US = 1e6
DEFAULT_DECISION_LATENCY_US = 1.0  # a controller without its own ``decision_latency_us``
MAX_BURST_INTERVAL_US = 1e9
# Bounded work: a run costs about steps x (1 + flows / 1000) x ~10 us (2 s at a 1 us step with
# 8192 flows: 1.6e10 flow-steps, ~1 min); the limits allow runs of about an hour.
MAX_STEPS = 100_000_000
MAX_FLOW_STEPS = 10**11
DEFAULT_ALPHA = 1.0  # dynamic-threshold alpha of a topology's switches (a common shared-buffer default)


@dataclasses.dataclass(frozen=True)
class TopologyConfig:
    """Which multi-switch topology a scenario runs on (None on a scenario: the single switch).

    ``fat-tree``: ``topology.fat_tree`` (defaults: the RL-CC paper's 64 hosts, 2:1); ``star``: one
    switch as a topology; ``file``: a JSON file (``path``). Link rates default to the network's
    line rate; ``link_delay_ns`` defaults to base RTT / 8 (fat-tree: 8 us RTT across leaves) or
    base RTT / 4 (star). ``buffer_alpha``: the switches' dynamic-threshold alpha (None: none).
    ``ecmp_seed``: the ECMP hash seed (None: the scenario's seed).
    """

    kind: str = "fat-tree"
    hosts_per_leaf: int = 16
    leaves: int = 4
    spines: int = 2
    links_per_pair: int = 4
    fabric_gbps: float | None = None
    link_delay_ns: float | None = None
    hosts: int = 7
    path: str | None = None
    buffer_alpha: float | None = DEFAULT_ALPHA
    ecmp_seed: int | None = None

    KINDS: ClassVar[tuple[str, ...]] = ("fat-tree", "star", "file")

    def validate(self) -> None:
        if self.kind not in self.KINDS:
            raise BadInputError(f"invalid scenario: topology.kind must be one of {', '.join(self.KINDS)}, got {self.kind!r}")
        if self.kind == "file" and not self.path:
            raise BadInputError("invalid scenario: topology kind 'file' needs topology.path")
        if self.buffer_alpha is not None:
            check_range(self.buffer_alpha, 0, 1e6, "topology.buffer_alpha", low_open=True)
        if self.fabric_gbps is not None:
            check_range(self.fabric_gbps, *LINE_RATE_GBPS, "topology.fabric_gbps")
        if self.link_delay_ns is not None:
            check_range(self.link_delay_ns, 0, 1e9, "topology.link_delay_ns")

    def build(self, net: Network):
        """The ``topology.Topology`` (validated; cached per config and network)."""
        return _build_topology(self, net)


@functools.lru_cache(maxsize=16)
def _build_topology(cfg: TopologyConfig, net: Network):
    if cfg.kind == "fat-tree":
        delay = cfg.link_delay_ns if cfg.link_delay_ns is not None else net.base_rtt_ns / 8
        return topo.fat_tree(cfg.hosts_per_leaf, cfg.leaves, cfg.spines, cfg.links_per_pair,
                             net.host_cap * net.line_rate_gbps, cfg.fabric_gbps or net.line_rate_gbps, delay, net.buffer_bytes)
    if cfg.kind == "star":
        check_count(cfg.hosts, "topology.hosts")
        delay = cfg.link_delay_ns if cfg.link_delay_ns is not None else net.base_rtt_ns / 4
        return topo.star(cfg.hosts, net.host_cap * net.line_rate_gbps, delay, net.buffer_bytes)
    return topo.load(cfg.path)


def spread_hosts(t) -> np.ndarray:
    """A topology's hosts interleaved across their switches (leaf 0's first host, leaf 1's first,
    ...): consecutive logical hosts sit under different leaves."""
    attach = t.link_dst[t.host_uplink()]
    rank = np.zeros(t.n_hosts, np.int64)
    for sw in np.unique(attach):
        members = np.flatnonzero(attach == sw)
        rank[members] = np.arange(len(members))
    return np.lexsort((attach, rank))


@dataclasses.dataclass(frozen=True)
class Scenario:
    """Common fields of every scenario; subclasses add the traffic pattern."""

    kind: ClassVar[str] = ""
    duration_ms: float = 10.0
    seed: int = 0
    decision_latency_us: float | None = None  # None: the controller's own (default DEFAULT_DECISION_LATENCY_US)
    converged_from: float = 0.5
    initial_rate: float | None = None
    network: Network = Network()
    topology: TopologyConfig | None = None
    # True: a flow's next RTT probe leaves when its decision completes (the PCC result's rtt_req),
    # so a flow decides at most once per RTT + decision time and acts on fresh state, as a NIC
    # whose decisions take longer than an RTT does. False (default): it leaves when the previous
    # probe returns and decisions slower than an RTT pipeline (every result still lands late).
    serial_decisions: bool = False
    # Per flow (placed-table order), the node names of its path from its host to its destination:
    # pins routing to another simulator's choices (topologies only). None: ECMP by ``ecmp_seed``.
    paths: tuple[tuple[str, ...], ...] | None = None
    # Each sending host's decision processor (``nic.NicConfig``): RTT events queue for its threads and a
    # flow's next probe leaves when its decision completes (implies serial decisions; the decision
    # time is the processor's, not ``decision_latency_us``). None: no processor (the default).
    nic: NicConfig | None = None

    # Logical flow tables number ports by receiver: ``port_is_host`` scenarios (all-to-all) send
    # to logical host ``port``; the others (incasts) have one receiver, a host of its own.
    port_is_host: ClassVar[bool] = False

    @property
    def duration_ns(self) -> float:
        return self.duration_ms * 1e6

    def validate(self) -> None:
        check_positive(self.duration_ms, "duration_ms")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise BadInputError(f"invalid scenario: seed must be a non-negative integer, got {self.seed!r}")
        if self.decision_latency_us is not None:
            check_range(self.decision_latency_us, 0, MAX_DECISION_LATENCY_US, "decision_latency_us")
        if self.initial_rate is not None and not 0 < self.initial_rate <= 1:
            raise BadInputError("invalid scenario: initial_rate must be in (0, 1] (fraction of line rate)")
        if not 0 <= self.converged_from < 1:
            raise BadInputError("invalid scenario: converged_from must be in [0, 1)")
        self.network.validate()
        if self.topology is not None:
            self.topology.validate()
            self.topology.build(self.network)
        if self.duration_ns < 2 * self.network.dt_ns:
            raise BadInputError("invalid scenario: duration must cover at least two time steps")
        self._validate_traffic()
        if self.nic is not None:
            self.nic.validate()
        if self.paths is not None:
            if self.topology is None:
                raise BadInputError("invalid scenario: paths need a topology")
            table = self.placed_table()
            topo.pinned_links(self.topology.build(self.network), table.host, table.dst, self.paths)
        steps = self.duration_ns / self.network.dt_ns
        if steps > MAX_STEPS:
            raise BadInputError(
                f"invalid scenario: duration_ms / network.dt_ns gives {steps:.3g} time steps, more than the limit "
                f"{MAX_STEPS:.0e}: use a larger dt_ns or a shorter run"
            )
        if steps * self.n_flows > MAX_FLOW_STEPS:
            raise BadInputError(
                f"invalid scenario: {steps:.3g} time steps x {self.n_flows} flows = {steps * self.n_flows:.3g} "
                f"flow-steps, more than the limit {MAX_FLOW_STEPS:.0e}: use fewer flows, a larger dt_ns or a shorter run"
            )

    def _validate_traffic(self) -> None:
        """Checks of the traffic pattern's own fields (subclasses)."""

    def fair_rate(self) -> float:
        """Each flow's equal share of its most loaded link (egress port or host NIC), all flows
        counted as active: the steady-state rate of long-lived traffic, so starting there skips the
        startup transient (``initial_rate`` None: flows start at the controller's line rate)."""
        if self.topology is not None:
            from rlcc.simulator.fabric import PathFabric

            table = self.placed_table()
            fab = PathFabric(self.network, table, self.topology.build(self.network), self.ecmp_seed, None, self.paths)
            per_q = np.bincount(fab.group_queues[fab.flow_group].ravel(), minlength=fab.n_queues + 1)[:-1]
            share_q = (fab.cap[:-1] / self.network.bytes_per_ns / np.maximum(per_q, 1))[per_q > 0]
            per_host = int(np.bincount(table.host).max())
            return float(min(1.0, share_q.min(initial=1.0), self.network.host_cap / per_host))
        table = self.flow_table()
        per_port = int(np.bincount(table.port).max())
        per_host = int(np.bincount(table.host).max())
        return float(min(1.0, 1.0 / per_port, self.network.host_cap / per_host))

    @property
    def n_flows(self) -> int:
        raise NotImplementedError

    def flow_table(self) -> FlowTable:
        raise NotImplementedError

    @property
    def ecmp_seed(self) -> int:
        t = self.topology
        return self.seed if t is None or t.ecmp_seed is None else t.ecmp_seed

    def placed_table(self) -> FlowTable:
        """The flow table on the topology's hosts: ``host`` and ``dst`` are topology host indices.
        Logical hosts map to ``spread_hosts`` order; an incast's receiver is the first of them,
        its senders the hosts under other switches (all others on a star; more senders than
        hosts share hosts round-robin)."""
        t = self.topology.build(self.network)
        order = spread_hosts(t)
        table = self.flow_table()
        if self.port_is_host:
            if table.n_hosts > t.n_hosts:
                raise BadInputError(f"invalid scenario: {table.n_hosts} hosts do not fit the topology's {t.n_hosts}")
            src, dst = order[table.host], order[table.port]
        else:
            if table.n_ports != 1:
                raise BadInputError("invalid scenario: an incast on a topology needs one receiver")
            # Senders outside the receiver's switch (the paper's inter-rack tests; a star has none).
            attach = t.link_dst[t.host_uplink()]
            rest = order[1:]
            remote = rest[attach[rest] != attach[order[0]]]
            senders = remote if len(remote) else rest
            src = senders[table.host.astype(np.int64) % len(senders)]
            dst = np.full(table.n_flows, order[0])
        return dataclasses.replace(table, host=src.astype(np.int32), dst=dst.astype(np.int32), n_hosts=t.n_hosts,
                                   n_ports=t.n_hosts)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["kind"] = self.kind
        if data["network"]["pfc"] is None:  # lossy: the dict (and every file written from it) as before PFC existed
            del data["network"]["pfc"]
        if self.nic is None:  # off: the dict of a scenario without a processor is as before
            del data["nic"]
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, indent=2) + "\n"

    @staticmethod
    def from_dict(data: Any) -> "Scenario":
        """Build and validate any scenario from a JSON-style dict with a ``kind`` key."""
        if not isinstance(data, Mapping):
            raise BadInputError("invalid scenario: top level must be a JSON object")
        kind = data.get("kind")
        if kind not in SCENARIOS:
            raise BadInputError(f"invalid scenario: unknown kind {kind!r} (known: {', '.join(SCENARIOS)})")
        cls = SCENARIOS[kind]
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(fields) - {"kind"})
        if unknown:
            raise BadInputError(f"invalid scenario: unknown key(s) {', '.join(unknown)}")
        kwargs = {k: v for k, v in data.items() if k != "kind"}
        if "network" in kwargs:
            kwargs["network"] = _network_from_dict(kwargs["network"])
        if kwargs.get("topology") is not None:
            kwargs["topology"] = _topology_from_dict(kwargs["topology"])
        if kwargs.get("paths") is not None:
            kwargs["paths"] = _paths_from_json(kwargs["paths"])
        if kwargs.get("nic") is not None:
            kwargs["nic"] = NicConfig.from_dict(kwargs["nic"])
        for name, value in kwargs.items():
            if name not in ("network", "topology", "paths", "nic"):
                check_type(value, fields[name].type, name)
        scenario = cls(**kwargs)
        scenario.validate()
        return scenario

    @staticmethod
    def from_json(text: str, source: str = "scenario") -> "Scenario":
        return Scenario.from_dict(textio.parse_json(text, "scenario", source))


@dataclasses.dataclass(frozen=True)
class ManyToOne(Scenario):
    """Incast: ``flows`` long-lived flows spread round-robin over ``hosts`` senders, one egress port."""

    kind: ClassVar[str] = "many-to-one"
    flows: int = 16
    hosts: int | None = None

    @property
    def n_hosts(self) -> int:
        return self.hosts if self.hosts is not None else min(self.flows, 64)

    @property
    def n_flows(self) -> int:
        return self.flows

    def _validate_traffic(self) -> None:
        check_count(self.flows, "flows")
        if self.hosts is not None:
            check_count(self.hosts, "hosts")

    def flow_table(self) -> FlowTable:
        n, h = self.flows, self.n_hosts
        return FlowTable(
            host=(np.arange(n) % h).astype(np.int32),
            port=np.zeros(n, np.int32),
            start_ns=np.zeros(n),
            size_bytes=np.full(n, np.inf),
            n_hosts=h,
            n_ports=1,
        )


@dataclasses.dataclass(frozen=True)
class AllToAll(Scenario):
    """Every host sends ``flows_per_pair`` long-lived flows to every other host; one port per receiver."""

    kind: ClassVar[str] = "all-to-all"
    port_is_host: ClassVar[bool] = True
    hosts: int = 8
    flows_per_pair: int = 1

    @property
    def n_flows(self) -> int:
        return self.hosts * (self.hosts - 1) * self.flows_per_pair

    def _validate_traffic(self) -> None:
        check_count(self.hosts, "hosts")
        check_count(self.flows_per_pair, "flows_per_pair")
        if self.hosts < 2:
            raise BadInputError("invalid scenario: all-to-all needs at least 2 hosts")
        if self.hosts * (self.hosts - 1) * self.flows_per_pair > MAX_FLOWS:
            raise BadInputError(f"invalid scenario: more than {MAX_FLOWS} flows")

    def flow_table(self) -> FlowTable:
        h, k = self.hosts, self.flows_per_pair
        src, dst = np.nonzero(~np.eye(h, dtype=bool))
        n = len(src) * k
        return FlowTable(
            host=np.repeat(src, k).astype(np.int32),
            port=np.repeat(dst, k).astype(np.int32),
            start_ns=np.zeros(n),
            size_bytes=np.full(n, np.inf),
            n_hosts=h,
            n_ports=h,
        )


@dataclasses.dataclass(frozen=True)
class LongShort(Scenario):
    """One long flow (flow 0, host 0) plus ``bursts`` bursts of short flows, each from its own host.

    The first burst starts at ``burst_start_frac`` of the run; bursts repeat every
    ``burst_interval_us``. All flows share one egress port.
    """

    kind: ClassVar[str] = "long-short"
    short_flows: int = 16
    short_bytes: int = 64_000
    bursts: int = 1
    burst_interval_us: float = 500.0
    burst_start_frac: float = 0.5

    @property
    def n_flows(self) -> int:
        return 1 + self.short_flows * self.bursts

    def _validate_traffic(self) -> None:
        check_count(self.short_flows, "short_flows")
        check_count(self.bursts, "bursts")
        check_range(self.short_bytes, 1, MAX_BYTES, "short_bytes")
        check_range(self.burst_interval_us, 0, MAX_BURST_INTERVAL_US, "burst_interval_us", low_open=True)
        if not 0 <= self.burst_start_frac < 1:
            raise BadInputError("invalid scenario: burst_start_frac must be in [0, 1)")
        if 1 + self.short_flows * self.bursts > MAX_FLOWS:
            raise BadInputError(f"invalid scenario: more than {MAX_FLOWS} flows")

    def flow_table(self) -> FlowTable:
        m, b = self.short_flows, self.bursts
        starts = self.burst_start_frac * self.duration_ns + np.repeat(np.arange(b), m) * self.burst_interval_us * 1e3
        return FlowTable(
            host=np.concatenate([[0], 1 + np.tile(np.arange(m), b)]).astype(np.int32),
            port=np.zeros(1 + m * b, np.int32),
            start_ns=np.concatenate([[0.0], starts]),
            size_bytes=np.concatenate([[np.inf], np.full(m * b, float(self.short_bytes))]),
            n_hosts=1 + m,
            n_ports=1,
        )


@dataclasses.dataclass(frozen=True)
class OsuAllToAll(Scenario):
    """The OSU MPI all-to-all benchmark (osu_alltoall): every iteration each of ``hosts`` ranks
    sends one ``message_bytes`` message to every other rank (a finite flow each); an iteration
    starts when the previous one's last message has arrived (a blocking collective). Metric:
    ``iteration_us``, the mean iteration completion time."""

    kind: ClassVar[str] = "osu"
    port_is_host: ClassVar[bool] = True
    hosts: int = 8
    message_bytes: int = 65536
    iterations: int = 4

    @property
    def n_flows(self) -> int:
        return self.iterations * self.hosts * (self.hosts - 1)

    def _validate_traffic(self) -> None:
        check_count(self.hosts, "hosts")
        check_count(self.iterations, "iterations")
        check_range(self.message_bytes, 1, MAX_BYTES, "message_bytes")
        if self.hosts < 2:
            raise BadInputError("invalid scenario: osu needs at least 2 hosts")
        if self.n_flows > MAX_FLOWS:
            raise BadInputError(f"invalid scenario: more than {MAX_FLOWS} flows")

    def flow_table(self) -> FlowTable:
        h, it = self.hosts, self.iterations
        src, dst = np.nonzero(~np.eye(h, dtype=bool))
        per = len(src)
        epoch = np.repeat(np.arange(it), per)
        return FlowTable(
            host=np.tile(src, it).astype(np.int32),
            port=np.tile(dst, it).astype(np.int32),
            start_ns=np.where(epoch == 0, 0.0, np.inf),
            size_bytes=np.full(per * it, float(self.message_bytes)),
            n_hosts=h,
            n_ports=h,
            epoch=epoch.astype(np.int32),
        )


@dataclasses.dataclass(frozen=True)
class PoissonTrace(Scenario):
    """Trace-driven open-loop traffic: flows with sizes from a published CDF (``websearch``,
    ``hadoop`` or a CDF file) arrive as a Poisson process loading every host's NIC to ``load``,
    between random host pairs, during the first ``arrival_frac`` of the run (the rest lets them
    finish). Metrics: FCT slowdown by flow-size bucket (``rlcc.simulator.flowsize``)."""

    kind: ClassVar[str] = "trace"
    port_is_host: ClassVar[bool] = True
    hosts: int = 8
    cdf: str = "websearch"
    load: float = 0.5
    arrival_frac: float = 0.8
    max_flows: int = 200_000

    def _validate_traffic(self) -> None:
        check_count(self.hosts, "hosts")
        check_count(self.max_flows, "max_flows")
        if not isinstance(self.cdf, str) or not self.cdf:
            raise BadInputError("invalid scenario: cdf must be a CDF name (websearch, hadoop) or a file path")
        check_range(self.load, 0, 1, "load", low_open=True)
        check_range(self.arrival_frac, 0, 1, "arrival_frac", low_open=True)
        if not len(self._arrivals.src):
            raise BadInputError(f"invalid scenario: no flow arrives in {self.duration_ms * self.arrival_frac:g} ms "
                                f"(CDF {self.cdf}, load {self.load:g}): use a longer run or smaller flows")

    @functools.cached_property
    def _arrivals(self):
        return poisson_flows(self.hosts, self.load, self.network.line_rate_gbps, self.duration_ns * self.arrival_frac,
                             FlowSizeCdf.load(self.cdf), self.seed, self.max_flows)

    @property
    def n_flows(self) -> int:
        return len(self._arrivals.src)

    def flow_table(self) -> FlowTable:
        f = self._arrivals
        return FlowTable(host=f.src.astype(np.int32), port=f.dst.astype(np.int32), start_ns=np.asarray(f.start_ns, float),
                         size_bytes=np.asarray(f.size_bytes, float), n_hosts=self.hosts, n_ports=self.hosts)


@dataclasses.dataclass(frozen=True)
class Incast(Scenario):
    """Dynamic incast with finite flows (ACC's training workload): every ``burst_interval_us`` from
    t = 0, ``senders`` hosts each start ``flows_per_sender`` flows to one receiver, sizes
    log-uniform in [``min_bytes``, ``max_bytes``] (seeded), ``bursts`` times. Metrics: FCT slowdown
    (``switch_metrics``)."""

    kind: ClassVar[str] = "incast"
    senders: int = 8
    flows_per_sender: int = 2
    min_bytes: int = 10_000
    max_bytes: int = 10_000_000
    bursts: int = 1
    burst_interval_us: float = 1000.0

    @property
    def n_flows(self) -> int:
        return self.senders * self.flows_per_sender * self.bursts

    def _validate_traffic(self) -> None:
        check_count(self.senders, "senders")
        check_count(self.flows_per_sender, "flows_per_sender")
        check_count(self.bursts, "bursts")
        check_range(self.min_bytes, 1, MAX_BYTES, "min_bytes")
        check_range(self.max_bytes, self.min_bytes, MAX_BYTES, "max_bytes")
        check_range(self.burst_interval_us, 0, MAX_BURST_INTERVAL_US, "burst_interval_us", low_open=True)
        if self.n_flows > MAX_FLOWS:
            raise BadInputError(f"invalid scenario: more than {MAX_FLOWS} flows")

    def flow_table(self) -> FlowTable:
        per = self.senders * self.flows_per_sender
        n = per * self.bursts
        u = np.random.default_rng(self.seed).uniform(0.0, 1.0, n)
        lo, hi = math.log(self.min_bytes), math.log(self.max_bytes)
        return FlowTable(
            host=np.tile(np.repeat(np.arange(self.senders), self.flows_per_sender), self.bursts).astype(np.int32),
            port=np.zeros(n, np.int32),
            start_ns=np.repeat(np.arange(self.bursts) * self.burst_interval_us * 1e3, per),
            size_bytes=np.round(np.exp(lo + (hi - lo) * u)),
            n_hosts=self.senders,
            n_ports=1,
        )


SCENARIOS: dict[str, type[Scenario]] = {
    c.kind: c for c in (ManyToOne, AllToAll, LongShort, OsuAllToAll, PoissonTrace, Incast)
}


def _paths_from_json(data: Any) -> tuple[tuple[str, ...], ...]:
    """``paths`` as hashable tuples (shape checked here; nodes and links in ``validate``)."""
    if not isinstance(data, list) or not all(isinstance(p, list) and all(isinstance(n, str) for n in p) for p in data):
        raise BadInputError("invalid scenario: paths must be a list of paths, each a list of node names")
    return tuple(tuple(p) for p in data)


def _topology_from_dict(data: Any) -> TopologyConfig:
    if isinstance(data, TopologyConfig):
        return data
    return TopologyConfig(**fields_from_json(TopologyConfig, data, "topology"))


def _network_from_dict(data: Any) -> Network:
    return Network(**fields_from_json(Network, data, "network", nested={"pfc": _pfc_from_dict}))


def _pfc_from_dict(data: Any) -> PfcParams | None:
    if data is None:
        return None
    return PfcParams(**fields_from_json(PfcParams, data, "network.pfc", what="null or an object"))
