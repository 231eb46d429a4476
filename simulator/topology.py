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

import collections
import dataclasses
from pathlib import Path
from typing import Any, Mapping

import networkx as nx
import numpy as np

from rlcc import textio
from rlcc.errors import BadInputError
from rlcc.simulator.params import LINE_RATE_GBPS, MAX_BYTES, PACKET_BYTES

# Size limits, each bounding memory (measured: bench/bench_limits.py, docs/simulator.md):
MAX_NODES = 100_000
MAX_CABLES = 1_000_000  # two directed links each
MAX_PATH_LINKS = 16  # links on one flow's path (hosts included): the (flows x 16) path table
MAX_ROUTE_WORK = 2 * 10**8  # (switches with hosts + overridden hosts) x (switches + switch links): ~10 s of searches
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
        H, S = self.n_hosts, len(self.switches)
        out = self.link_src >= H
        down = out & (self.link_dst < H)
        up = out & ~down
        dsum = np.bincount(self.link_src[down] - H, weights=self.link_gbps[down], minlength=S)
        usum = np.bincount(self.link_src[up] - H, weights=self.link_gbps[up], minlength=S)
        both = (dsum > 0) & (usum > 0)  # rates are positive: a sum > 0 iff the switch has such links
        return float(max(1.0, (dsum[both] / usum[both]).max(initial=1.0)))

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
    if len(cables) > MAX_CABLES:
        raise BadInputError(f"invalid topology: {len(cables)} links, more than the limit {MAX_CABLES}")
    dups = [n for n, k in collections.Counter(names).items() if k > 1]
    if dups:
        raise BadInputError(f"invalid topology: node name {min(dups)!r} is used twice")
    if len(hosts) < 2:
        raise BadInputError("invalid topology: need at least 2 hosts")
    if not switches:
        raise BadInputError("invalid topology: need at least 1 switch")
    index = {n: i for i, n in enumerate(names)}
    src, dst, gbps, delay = [], [], [], []
    lo, hi = LINE_RATE_GBPS
    for a, b, rate, d in cables:
        for end in (a, b):
            if end not in index:
                raise BadInputError(f"invalid topology: link {a}-{b} names unknown node {end!r}")
        if a == b:
            raise BadInputError(f"invalid topology: link {a}-{b} connects a node to itself")
        if index[a] < len(hosts) and index[b] < len(hosts):
            raise BadInputError(f"invalid topology: link {a}-{b} joins two hosts (hosts connect to switches)")
        if not (_number(rate) and lo <= rate <= hi):
            raise BadInputError(f"invalid topology: link {a}-{b} has rate_gbps {rate!r}: must be in [{lo:g}, {hi:g}]")
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
    parts = _components(len(names), src_a, np.array(dst, np.int64))
    if len(parts) > 1:
        parts.sort(key=len)
        raise BadInputError(f"invalid topology: disconnected ({len(parts)} parts; e.g. {names[parts[0][0]]} "
                            f"cannot reach {names[parts[-1][0]]})")
    if not (_number(buffer_bytes) and PACKET_BYTES[0] <= buffer_bytes <= MAX_BYTES):
        raise BadInputError(f"invalid topology: buffer_bytes must be in [{PACKET_BYTES[0]}, 2^40] (at least one "
                            f"packet), got {buffer_bytes!r}")
    topo = Topology(name, tuple(hosts), tuple(switches), src_a, np.array(dst, np.int64), np.array(gbps),
                    np.array(delay), np.full(len(switches), float(buffer_bytes)), _routes(routes, index, len(hosts)))
    Routing(topo)  # loops, dead ends and hosts without a path are input errors, found now
    return topo


def _components(n: int, src: np.ndarray, dst: np.ndarray) -> list[np.ndarray]:
    """Connected components (sorted node indices each) of ``n`` nodes joined by links src -> dst
    (both directions present), by breadth-first search in O(nodes + links) memory."""
    order = np.argsort(src, kind="stable")
    to, ptr = dst[order], np.searchsorted(src[order], np.arange(n + 1))
    label = np.full(n, -1, np.int64)
    parts = []
    for seed in range(n):
        if label[seed] >= 0:
            continue
        label[seed] = len(parts)
        frontier, members = np.array([seed]), [np.array([seed])]
        while frontier.size:
            nb = to[_ranges(ptr[frontier], ptr[frontier + 1])]
            nb = np.unique(nb[label[nb] < 0])
            label[nb] = len(parts)
            members.append(nb)
            frontier = nb
        parts.append(np.sort(np.concatenate(members)))
    return parts


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
    nodes = hosts_per_leaf * leaves + leaves + (spines if leaves > 1 else 0)
    cables = hosts_per_leaf * leaves + (leaves * spines * links_per_pair if leaves > 1 else 0)
    if nodes > MAX_NODES or cables > MAX_CABLES:
        raise BadInputError(f"invalid topology: this fat-tree has {nodes} nodes and {cables} links; the limits are "
                            f"{MAX_NODES} nodes and {MAX_CABLES} links")
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
    if len(data["links"]) > MAX_CABLES:
        raise BadInputError(f"invalid topology in {source}: {len(data['links'])} links, more than the limit {MAX_CABLES}")
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
    ECMP) unless the topology's ``routes`` override them. Hosts never forward.

    Compact, O(nodes + links) memory: a host has one uplink, so the shortest next links toward
    host d are those toward its switch, then its downlink. They come from one breadth-first search
    per destination switch, run when a path needs them, never a node x host table. Overrides are a
    sparse (switch, host) table; shortest paths cannot loop, so only overridden hosts are checked."""

    def __init__(self, topo: Topology) -> None:
        self.topo = topo
        H, N = topo.n_hosts, topo.n_nodes
        src, dst = topo.link_src, topo.link_dst
        self.attach = dst[topo.host_uplink()]  # (hosts,) each host's switch
        self.down = np.full(H, -1, np.int64)  # (hosts,) the link from that switch to the host
        to_host = np.flatnonzero(dst < H)
        self.down[dst[to_host]] = to_host
        sw = np.flatnonzero((src >= H) & (dst >= H))  # switch-to-switch links, by source then id
        sw = sw[np.argsort(src[sw], kind="stable")]
        self._sw_links, self._sw_src, self._sw_dst = sw, src[sw], dst[sw]
        self._sw_ptr = np.searchsorted(self._sw_src, np.arange(N + 1))
        out = np.argsort(src, kind="stable")  # every link, by source then id
        self._out_links, self._out_ptr = out, np.searchsorted(src[out], np.arange(N + 1))
        self._slot = np.zeros(N, np.int64)  # scratch of ``_dist``
        targets = {d for table in topo.routes.values() for d in table}
        work = (len(np.unique(self.attach)) + len(targets)) * (len(topo.switches) + len(sw))
        if work > MAX_ROUTE_WORK:
            raise BadInputError(
                f"invalid topology: routing searches (switches with hosts + overridden hosts) x (switches + "
                f"switch links) = {work:.3g} steps, more than the limit {MAX_ROUTE_WORK:.0e}")
        self._compile_routes()
        for d in sorted(targets):
            self._check_loops(d)

    def _compile_routes(self) -> None:
        """``routes`` as sorted keys (switch x hosts + host) with their next links (flat, CSR)."""
        topo, H = self.topo, self.topo.n_hosts
        keys, links = [], []
        for d, s, nxt in sorted((d, s, nxt) for s, table in topo.routes.items() for d, nxt in table.items()):
            allowed = set(nxt)
            if any(v < H and v != d for v in allowed):
                raise BadInputError(f"invalid topology: route of {topo.node_name(s)} toward {topo.hosts[d]} "
                                    f"goes to another host (hosts do not forward)")
            mine = self._out_links[self._out_ptr[s]: self._out_ptr[s + 1]]
            missing = allowed - set(topo.link_dst[mine].tolist())
            if missing:
                raise BadInputError(f"invalid topology: route of {topo.node_name(s)} toward {topo.hosts[d]} "
                                    f"names {topo.node_name(min(missing))}, which is not its neighbour")
            keys.append(s * H + d)
            links.append(mine[np.isin(topo.link_dst[mine], sorted(allowed))])
        self._ov_keys = np.array(keys, np.int64)  # sorted: (d, s) order is not key order
        order = np.argsort(self._ov_keys, kind="stable")
        self._ov_keys = self._ov_keys[order]
        self._ov_count = np.array([len(links[i]) for i in order], np.int64)
        self._ov_ptr = np.concatenate([[0], np.cumsum(self._ov_count)[:-1]]).astype(np.int64)
        self._ov_flat = np.concatenate([links[i] for i in order]) if keys else np.zeros(0, np.int64)

    def _dist(self, a: int) -> np.ndarray:
        """(nodes,) switch hops from every switch to switch ``a`` (hosts -1); cables are symmetric."""
        dist = np.full(self.topo.n_nodes, -1, np.int64)
        dist[a] = 0
        frontier, k = np.array([a], np.int64), 0
        while frontier.size:
            k += 1
            nb = self._sw_dst[_ranges(self._sw_ptr[frontier], self._sw_ptr[frontier + 1])]
            nb = nb[dist[nb] < 0]
            pos = np.arange(len(nb))
            self._slot[nb] = pos
            frontier = nb[self._slot[nb] == pos]  # each node once (its last occurrence), no sort
            dist[frontier] = k
        return dist

    def _toward(self, a: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Shortest next links toward switch ``a``: (flat link ids, count and start per node)."""
        dist = self._dist(a)
        ok = dist[self._sw_dst] == dist[self._sw_src] - 1
        count = np.bincount(self._sw_src[ok], minlength=self.topo.n_nodes)
        return self._sw_links[ok], count, np.cumsum(count) - count

    def _overrides(self, node: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(mask, row) of the (node, host) pairs with an override."""
        if not self._ov_keys.size:
            return np.zeros(len(node), bool), np.zeros(len(node), np.int64)
        key = node * self.topo.n_hosts + dst
        row = np.minimum(np.searchsorted(self._ov_keys, key), len(self._ov_keys) - 1)
        return self._ov_keys[row] == key, row

    def _check_loops(self, d: int) -> None:
        """No next-hop cycle toward host ``d`` (Kahn's algorithm over the switches, by levels)."""
        topo, H, N = self.topo, self.topo.n_hosts, self.topo.n_nodes
        cand, count, start = self._toward(int(self.attach[d]))
        u = np.repeat(np.arange(N), count)
        v = topo.link_dst[cand]
        over = np.flatnonzero(self._ov_keys % H == d)
        ou = np.repeat(self._ov_keys[over] // H, self._ov_count[over])
        ov = topo.link_dst[self._ov_flat[_ranges(self._ov_ptr[over], self._ov_ptr[over] + self._ov_count[over])]]
        keep = ~np.isin(u, ou)  # an overridden switch's own next links replace its shortest ones
        u, v = np.concatenate([u[keep], ou[ov >= H]]), np.concatenate([v[keep], ov[ov >= H]])
        order = np.argsort(u, kind="stable")
        u, v = u[order], v[order]
        ptr = np.searchsorted(u, np.arange(N + 1))
        indeg = np.bincount(v, minlength=N)
        frontier = np.flatnonzero(indeg == 0)
        while frontier.size:
            nb = v[_ranges(ptr[frontier], ptr[frontier + 1])]
            indeg -= np.bincount(nb, minlength=N)
            frontier = np.unique(nb[indeg[nb] == 0])
        if indeg.any():
            cyc = indeg > 0
            g = nx.DiGraph(list(zip(u[cyc[u] & cyc[v]].tolist(), v[cyc[u] & cyc[v]].tolist())))
            cycle = nx.find_cycle(g)
            names = " -> ".join(topo.node_name(a) for a, _ in cycle) + f" -> {topo.node_name(cycle[0][0])}"
            raise BadInputError(f"invalid topology: routing loop toward host {topo.hosts[d]}: {names}")

    def paths(self, src: np.ndarray, dst: np.ndarray, flow_ids: np.ndarray, seed: int) -> np.ndarray:
        """(F, longest path) link ids of each flow's path from host ``src`` to host ``dst`` (padded
        with -1): the host's uplink, then one ECMP choice per switch by a seeded per-flow hash.
        Flows are walked per destination switch; a path longer than ``MAX_PATH_LINKS`` is an error."""
        topo = self.topo
        src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
        out = np.full((len(src), MAX_PATH_LINKS), -1, np.int64)
        out[:, 0] = topo.host_uplink()[src]
        target = self.attach[dst]
        order = np.argsort(target, kind="stable")
        heads = np.flatnonzero(np.diff(target[order], prepend=-1))
        width = 1
        for i in np.split(order, heads[1:]) if len(order) else ():
            a = int(target[i[0]])
            cand, count, start = self._toward(a)
            node, d = topo.link_dst[out[i, 0]], dst[i]
            hop = 1
            while i.size:
                if hop == MAX_PATH_LINKS:
                    raise BadInputError(f"invalid topology: the path from host {topo.hosts[src[i[0]]]} to host "
                                        f"{topo.hosts[d[0]]} crosses more than {MAX_PATH_LINKS} links")
                h = _hash(flow_ids[i], node, seed)
                chosen = np.empty(len(i), np.int64)
                last = node == a
                chosen[last] = self.down[d[last]]
                r = ~last
                n = node[r]
                chosen[r] = cand[start[n] + (h[r] % count[n].astype(np.uint64)).astype(np.int64)]
                hit, row = self._overrides(node, d)
                if hit.any():
                    row = row[hit]
                    pick = (h[hit] % self._ov_count[row].astype(np.uint64)).astype(np.int64)
                    chosen[hit] = self._ov_flat[self._ov_ptr[row] + pick]
                out[i, hop] = chosen
                node = topo.link_dst[chosen]
                live = node != d
                i, node, d = i[live], node[live], d[live]
                hop += 1
            width = max(width, hop)
        return np.ascontiguousarray(out[:, :width])


def pinned_links(topo: Topology, src: np.ndarray, dst: np.ndarray, paths: Any) -> np.ndarray:
    """(F, longest path) link ids of explicitly pinned paths (padded with -1), as ``Routing.paths``
    returns them: ``paths[i]`` names flow i's nodes from its host ``src[i]`` to its host ``dst[i]``
    (another simulator's routing, reproduced exactly). Between two nodes joined by parallel cables a
    path takes the first. Every path is checked: cables, endpoints, no loops, no forwarding host."""
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    if not isinstance(paths, (list, tuple)) or len(paths) != len(src):
        n = len(paths) if isinstance(paths, (list, tuple)) else type(paths).__name__
        raise BadInputError(f"invalid scenario: paths must list one path per flow ({len(src)}), got {n}")
    index = {n: i for i, n in enumerate(topo.hosts + topo.switches)}
    link: dict[tuple[int, int], int] = {}
    for i in range(topo.n_links - 1, -1, -1):  # the first of parallel links wins
        link[(int(topo.link_src[i]), int(topo.link_dst[i]))] = i
    out = np.full((len(src), MAX_PATH_LINKS), -1, np.int64)
    width = 1
    for f, path in enumerate(paths):
        where = f"invalid scenario: paths[{f}]"
        if not isinstance(path, (list, tuple)) or not all(isinstance(n, str) for n in path):
            raise BadInputError(f"{where} must be a list of node names")
        if len(path) < 3 or len(path) > MAX_PATH_LINKS + 1:
            raise BadInputError(f"{where} must name 3 to {MAX_PATH_LINKS + 1} nodes (host, switches, host), got {len(path)}")
        unknown = [n for n in path if n not in index]
        if unknown:
            raise BadInputError(f"{where} names unknown node {unknown[0]!r}")
        nodes = [index[n] for n in path]
        if nodes[0] != src[f] or nodes[-1] != dst[f]:
            raise BadInputError(f"{where} must run from the flow's host {topo.hosts[src[f]]} to its destination "
                                f"{topo.hosts[dst[f]]}, got {path[0]} to {path[-1]}")
        if len(set(nodes)) != len(nodes):
            raise BadInputError(f"{where} visits a node twice (a loop)")
        if any(topo.is_host(v) for v in nodes[1:-1]):
            raise BadInputError(f"{where} passes through a host (hosts do not forward)")
        for h, (a, b) in enumerate(zip(nodes, nodes[1:])):
            if (a, b) not in link:
                raise BadInputError(f"{where} steps {path[h]} -> {path[h + 1]}, which are not joined by a link")
            out[f, h] = link[(a, b)]
        width = max(width, len(nodes) - 1)
    return np.ascontiguousarray(out[:, :width])


def _ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The concatenation of ``arange(lo[i], hi[i])`` over i."""
    n = hi - lo
    return np.repeat(lo - np.cumsum(n) + n, n) + np.arange(int(n.sum()))


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
