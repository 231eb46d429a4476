"""Multi-switch topologies: a two-level fat-tree / leaf-spine generator, a star, and JSON files.

A topology is hosts and switches joined by cables; every cable is two directed links (one per
direction, same rate and propagation delay). A switch's egress link has a queue; a host's only
link (its NIC uplink) has none: the NIC cap (``Network.host_rate_gbps``) limits it. Routing is
shortest path with per-flow ECMP (``Routing``): at every switch a flow takes one of the
equal-cost next links, chosen by a seeded hash of its flow id and the switch, as a switch hashes
a flow's 5-tuple. A file may override a switch's next hops toward some hosts (``routes``); such
routes are checked for loops and dead ends.

JSON file (every key is checked; unknown keys are errors)::

    {"hosts": ["h0", "h1", ...], "switches": ["s0", ...],
     "links": [{"a": "h0", "b": "s0", "rate_gbps": 100, "delay_ns": 1000}, ...],
     "buffer_bytes": 32000000,              # optional: every switch's shared buffer
     "routes": {"s0": {"h1": ["s1"]}}}      # optional: next-hop nodes of s0 toward h1
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Mapping

import networkx as nx
import numpy as np

from rlcc import textio
from rlcc.errors import BadInputError

MAX_NODES = 100_000
MAX_LINK_GBPS = 1e5
MAX_DELAY_NS = 1e9
_FILE_KEYS = {"hosts", "switches", "links", "buffer_bytes", "routes"}
_LINK_KEYS = {"a", "b", "rate_gbps", "delay_ns"}


@dataclasses.dataclass(frozen=True, eq=False)
class Topology:
    """Nodes (hosts first, then switches) and directed links as parallel arrays."""

    name: str
    hosts: tuple[str, ...]
    switches: tuple[str, ...]
    link_src: np.ndarray  # int64 (L,) node index
    link_dst: np.ndarray  # int64 (L,)
    link_gbps: np.ndarray  # float64 (L,)
    link_delay_ns: np.ndarray  # float64 (L,)
    buffer_bytes: np.ndarray  # float64 (switches,) shared buffer of each switch
    routes: Mapping[int, Mapping[int, tuple[int, ...]]] = dataclasses.field(default_factory=dict)

    @property
    def n_hosts(self) -> int:
        return len(self.hosts)

    @property
    def n_nodes(self) -> int:
        return len(self.hosts) + len(self.switches)

    @property
    def n_links(self) -> int:
        return len(self.link_src)

    def node_name(self, i: int) -> str:
        return self.hosts[i] if i < self.n_hosts else self.switches[i - self.n_hosts]

    def is_host(self, i: np.ndarray | int) -> np.ndarray | bool:
        return np.asarray(i) < self.n_hosts

    def host_uplink(self) -> np.ndarray:
        """(hosts,) the link out of each host (validation guarantees exactly one)."""
        out = np.full(self.n_hosts, -1, np.int64)
        src = self.link_src
        ids = np.flatnonzero(src < self.n_hosts)
        out[src[ids]] = ids
        return out

    def oversubscription(self) -> float:
        """Worst ratio, over switches, of host-facing capacity to the capacity of the switch's other
        links (1 for a star or a non-blocking fabric, 2 for the paper's 64-host fat-tree)."""
        worst = 1.0
        for s in range(self.n_hosts, self.n_nodes):
            out = self.link_src == s
            down = out & (self.link_dst < self.n_hosts)
            up = out & ~down
            if down.any() and up.any():
                worst = max(worst, float(self.link_gbps[down].sum() / self.link_gbps[up].sum()))
        return worst

    def describe(self) -> str:
        return (f"{self.name}: {self.n_hosts} hosts, {len(self.switches)} switches, {self.n_links // 2} cables, "
                f"oversubscription {self.oversubscription():g}:1")


# ---- builders -----------------------------------------------------------------------------------
def _build(name: str, hosts: list[str], switches: list[str], cables: list[tuple[str, str, float, float]],
           buffer_bytes: float, routes: Mapping[str, Mapping[str, list[str]]] | None = None) -> Topology:
    """Validate and assemble; ``cables``: (a, b, rate_gbps, delay_ns), each giving two directed links."""
    names = hosts + switches
    if len(names) > MAX_NODES:
        raise BadInputError(f"invalid topology: more than {MAX_NODES} nodes")
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})[0]
        raise BadInputError(f"invalid topology: node name {dup!r} is used twice")
    if len(hosts) < 2:
        raise BadInputError("invalid topology: need at least 2 hosts")
    if not switches:
        raise BadInputError("invalid topology: need at least 1 switch")
    index = {n: i for i, n in enumerate(names)}
    src, dst, gbps, delay = [], [], [], []
    for a, b, rate, d in cables:
        for end in (a, b):
            if end not in index:
                raise BadInputError(f"invalid topology: link {a}-{b} names unknown node {end!r}")
        if a == b:
            raise BadInputError(f"invalid topology: link {a}-{b} connects a node to itself")
        if index[a] < len(hosts) and index[b] < len(hosts):
            raise BadInputError(f"invalid topology: link {a}-{b} joins two hosts (hosts connect to switches)")
        if not (_number(rate) and 0 < rate <= MAX_LINK_GBPS):
            raise BadInputError(f"invalid topology: link {a}-{b} has rate_gbps {rate!r}: must be in (0, {MAX_LINK_GBPS:g}]")
        if not (_number(d) and 0 <= d <= MAX_DELAY_NS):
            raise BadInputError(f"invalid topology: link {a}-{b} has delay_ns {d!r}: must be in [0, {MAX_DELAY_NS:g}]")
        for u, v in ((a, b), (b, a)):
            src.append(index[u])
            dst.append(index[v])
            gbps.append(float(rate))
            delay.append(float(d))
    src_a = np.array(src, np.int64)
    degree = np.bincount(src_a, minlength=len(names))[: len(hosts)]
    for h, k in enumerate(degree):
        if k == 0:
            raise BadInputError(f"invalid topology: host {hosts[h]} has no link")
        if k > 1:
            raise BadInputError(f"invalid topology: host {hosts[h]} has {k} links (multi-homed hosts are not supported)")
    g = nx.Graph()
    g.add_nodes_from(range(len(names)))
    g.add_edges_from(zip(src, dst))
    if not nx.is_connected(g):
        parts = sorted((sorted(c) for c in nx.connected_components(g)), key=len)
        raise BadInputError(f"invalid topology: disconnected ({len(parts)} parts; e.g. {names[parts[0][0]]} "
                            f"cannot reach {names[parts[-1][0]]})")
    if not (_number(buffer_bytes) and 0 < buffer_bytes <= 1 << 40):
        raise BadInputError(f"invalid topology: buffer_bytes must be in (0, 2^40], got {buffer_bytes!r}")
    topo = Topology(name, tuple(hosts), tuple(switches), src_a, np.array(dst, np.int64), np.array(gbps),
                    np.array(delay), np.full(len(switches), float(buffer_bytes)), _routes(routes, index, len(hosts)))
    Routing(topo)  # loops, dead ends and hosts without a path are input errors, found now
    return topo


def _routes(routes: Any, index: dict[str, int], n_hosts: int) -> dict[int, dict[int, tuple[int, ...]]]:
    if routes is None:
        return {}
    if not isinstance(routes, Mapping):
        raise BadInputError("invalid topology: routes must be an object {switch: {host: [next nodes]}}")
    out: dict[int, dict[int, tuple[int, ...]]] = {}
    for sw, table in routes.items():
        if sw not in index or index[sw] < n_hosts:
            raise BadInputError(f"invalid topology: routes names {sw!r}, which is not a switch")
        if not isinstance(table, Mapping):
            raise BadInputError(f"invalid topology: routes of {sw} must be an object {{host: [next nodes]}}")
        for host, nxt in table.items():
            if host not in index or index[host] >= n_hosts:
                raise BadInputError(f"invalid topology: routes of {sw} name {host!r}, which is not a host")
            if not isinstance(nxt, list) or not nxt or not all(isinstance(n, str) and n in index for n in nxt):
                raise BadInputError(f"invalid topology: routes of {sw} toward {host} must be a non-empty list of node names")
            out.setdefault(index[sw], {})[index[host]] = tuple(index[n] for n in nxt)
    return out


def fat_tree(hosts_per_leaf: int = 16, leaves: int = 4, spines: int = 2, links_per_pair: int = 4,
             host_gbps: float = 100.0, fabric_gbps: float = 100.0, link_delay_ns: float = 1000.0,
             buffer_bytes: float = 32_000_000) -> Topology:
    """Two-level fat-tree (leaf-spine). Defaults: the RL-CC paper's 64-host cluster (Fuhrer et al.,
    section V-A: 4 ToRs x 16 hosts, 2 spines, each ToR joined to each spine by 4 x 100 Gb/s: 2:1
    oversubscribed). 1 us per link: 8 us base RTT across leaves (4 links each way), 4 us within one."""
    for v, n in ((hosts_per_leaf, "hosts_per_leaf"), (leaves, "leaves"), (spines, "spines"), (links_per_pair, "links_per_pair")):
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 4096:
            raise BadInputError(f"invalid topology: fat-tree {n} must be an integer in 1..4096, got {v!r}")
    hosts = [f"h{i}" for i in range(hosts_per_leaf * leaves)]
    leaf = [f"leaf{j}" for j in range(leaves)]
    spine = [f"spine{k}" for k in range(spines)]
    cables = [(hosts[j * hosts_per_leaf + i], leaf[j], host_gbps, link_delay_ns)
              for j in range(leaves) for i in range(hosts_per_leaf)]
    if leaves > 1:
        cables += [(leaf[j], spine[k], fabric_gbps, link_delay_ns)
                   for j in range(leaves) for k in range(spines) for _ in range(links_per_pair)]
    name = f"fat-tree {leaves}x{hosts_per_leaf} hosts, {spines} spines x {links_per_pair} links"
    return _build(name, hosts, leaf + (spine if leaves > 1 else []), cables, buffer_bytes)


def star(hosts: int, host_gbps: float = 100.0, link_delay_ns: float = 2000.0, buffer_bytes: float = 32_000_000) -> Topology:
    """One switch, ``hosts`` hosts (the single-switch model as a topology: 2 links each way, so the
    base RTT is 4 x ``link_delay_ns``)."""
    names = [f"h{i}" for i in range(hosts)]
    return _build(f"star {hosts} hosts", names, ["s0"], [(h, "s0", host_gbps, link_delay_ns) for h in names], buffer_bytes)


def from_dict(data: Any, source: str = "topology") -> Topology:
    """A topology from the JSON structure in this module's docstring."""
    if not isinstance(data, Mapping):
        raise BadInputError(f"invalid topology in {source}: top level must be a JSON object")
    unknown = sorted(set(data) - _FILE_KEYS)
    if unknown:
        raise BadInputError(f"invalid topology in {source}: unknown key(s) {', '.join(unknown)}")
    for key in ("hosts", "switches", "links"):
        if not isinstance(data.get(key), list):
            raise BadInputError(f"invalid topology in {source}: '{key}' must be a list")
    for key in ("hosts", "switches"):
        if not all(isinstance(n, str) and n for n in data[key]):
            raise BadInputError(f"invalid topology in {source}: '{key}' must be a list of non-empty names")
    cables = []
    for i, link in enumerate(data["links"]):
        if not isinstance(link, Mapping):
            raise BadInputError(f"invalid topology in {source}: links[{i}] must be an object")
        bad = sorted(set(link) - _LINK_KEYS)
        if bad:
            raise BadInputError(f"invalid topology in {source}: links[{i}] has unknown key(s) {', '.join(bad)}")
        missing = sorted(_LINK_KEYS - set(link))
        if missing:
            raise BadInputError(f"invalid topology in {source}: links[{i}] misses {', '.join(missing)}")
        cables.append((link["a"], link["b"], link["rate_gbps"], link["delay_ns"]))
    return _build(Path(source).stem, list(data["hosts"]), list(data["switches"]), cables,
                  data.get("buffer_bytes", 32_000_000), data.get("routes"))


def load(path: str | Path) -> Topology:
    data = textio.parse_json(textio.read_bytes(path, "topology file"), "topology", path)
    return from_dict(data, str(path))


# ---- routing ------------------------------------------------------------------------------------
class Routing:
    """Next links toward every host from every switch: shortest paths (equal-cost ties kept for
    ECMP) unless the topology's ``routes`` override them. Hosts never forward."""

    def __init__(self, topo: Topology) -> None:
        self.topo = topo
        H, N = topo.n_hosts, topo.n_nodes
        self.max_hops = 0
        # next_links[node][dst]: tuple of link ids (empty: none)
        nxt: list[list[tuple[int, ...]]] = [[() for _ in range(H)] for _ in range(N)]
        out_links: list[list[int]] = [[] for _ in range(N)]
        for lid, s in enumerate(topo.link_src.tolist()):
            out_links[s].append(lid)
        dst_of = topo.link_dst.tolist()
        sw_graph = nx.DiGraph()
        sw_graph.add_nodes_from(range(H, N))
        sw_graph.add_edges_from((s, d) for s, d in zip(topo.link_src.tolist(), dst_of) if s >= H and d >= H)
        reverse = sw_graph.reverse(copy=True)
        for d in range(H):
            attach = [s for s in range(H, N) if any(dst_of[lid] == d for lid in out_links[s])]
            dist = {a: 1 for a in attach}
            for node, k in nx.multi_source_dijkstra_path_length(reverse, set(attach)).items():
                dist[node] = min(dist.get(node, k + 1), k + 1)
            for s in range(H, N):
                if s in dist:
                    nxt[s][d] = tuple(lid for lid in out_links[s]
                                      if (dst_of[lid] == d) or (dst_of[lid] >= H and dist.get(dst_of[lid], -1) == dist[s] - 1))
            for s, table in topo.routes.items():
                if d in table:
                    allowed = set(table[d])
                    if any(v < H and v != d for v in allowed):
                        raise BadInputError(f"invalid topology: route of {topo.node_name(s)} toward {topo.hosts[d]} "
                                            f"goes to another host (hosts do not forward)")
                    nxt[s][d] = tuple(lid for lid in out_links[s] if dst_of[lid] in allowed)
                    missing = allowed - {dst_of[lid] for lid in out_links[s]}
                    if missing:
                        raise BadInputError(f"invalid topology: route of {topo.node_name(s)} toward {topo.hosts[d]} "
                                            f"names {topo.node_name(min(missing))}, which is not its neighbour")
        self.next_links = nxt
        self._check(out_links)

    def _check(self, out_links: list[list[int]]) -> None:
        """Every host reaches every other host; no next-hop cycle; no dead end on the way."""
        topo, H = self.topo, self.topo.n_hosts
        uplink = topo.host_uplink()
        for d in range(H):
            g = nx.DiGraph()
            for s in range(H, topo.n_nodes):
                for lid in self.next_links[s][d]:
                    v = int(topo.link_dst[lid])
                    if v >= H:
                        g.add_edge(s, v)
            try:
                cycle = nx.find_cycle(g)
            except nx.NetworkXNoCycle:
                cycle = None
            if cycle:
                names = " -> ".join(topo.node_name(u) for u, _ in cycle) + f" -> {topo.node_name(cycle[0][0])}"
                raise BadInputError(f"invalid topology: routing loop toward host {topo.hosts[d]}: {names}")
            longest = nx.dag_longest_path_length(g) if g.number_of_nodes() else 0
            self.max_hops = max(self.max_hops, longest + 2)
            for h in range(H):
                if h == d:
                    continue
                start = int(topo.link_dst[uplink[h]])
                for s in {start} | (nx.descendants(g, start) if start in g else set()):
                    if not self.next_links[s][d]:
                        where = "" if s == start else f" (dead end at {topo.node_name(s)})"
                        raise BadInputError(f"invalid topology: host {topo.hosts[h]} has no path to host {topo.hosts[d]}{where}")

    def paths(self, src: np.ndarray, dst: np.ndarray, flow_ids: np.ndarray, seed: int) -> np.ndarray:
        """(F, max_hops) link ids of each flow's path from host ``src`` to host ``dst`` (padded
        with -1): the host's uplink, then one ECMP choice per switch by a seeded per-flow hash."""
        topo = self.topo
        F = len(src)
        out = np.full((F, self.max_hops), -1, np.int64)
        link = topo.host_uplink()[src]
        out[:, 0] = link
        node = topo.link_dst[link]
        live = node != dst
        # next-link table as a padded array: (nodes, hosts, width) with counts
        width = max((len(x) for row in self.next_links for x in row), default=1)
        table = np.full((topo.n_nodes, topo.n_hosts, width), -1, np.int64)
        count = np.zeros((topo.n_nodes, topo.n_hosts), np.int64)
        for n, row in enumerate(self.next_links):
            for d, links in enumerate(row):
                if links:
                    table[n, d, : len(links)] = links
                    count[n, d] = len(links)
        for hop in range(1, self.max_hops):
            if not live.any():
                break
            i = np.flatnonzero(live)
            n, d = node[i], dst[i]
            pick = _hash(flow_ids[i], n, seed) % count[n, d].astype(np.uint64)
            chosen = table[n, d, pick.astype(np.int64)]
            out[i, hop] = chosen
            node[i] = topo.link_dst[chosen]
            live[i] = node[i] != d
        return out


def _hash(flow: np.ndarray, node: np.ndarray, seed: int) -> np.ndarray:
    """A per-(flow, switch, seed) 64-bit mix (splitmix64 finalizer): the ECMP hash."""
    with np.errstate(over="ignore"):
        x = (flow.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)) ^ (node.astype(np.uint64) << np.uint64(32)) \
            ^ np.uint64(seed & 0xFFFFFFFF) * np.uint64(0xD1B54A32D192ED03)
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x


def _number(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, float)) and np.isfinite(v)
