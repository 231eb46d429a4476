"""The packet-level peer's ECMP choices, predicted, so rlcc can pin its flows to the same paths.

The peer's switches (ns-3 ``switch-node.cc`` ``SwitchNode::GetOutDev``) hash each packet's
{sip, dip, sport | dport << 16} (three host-order uint32 words, little-endian bytes on x86) with
MurmurHash3 x86_32, seeded with the switch's ns-3 node id, and take next hop ``hash % count``
from the next hops in the order the driver added them. Our driver ``rlcc-peer.cc`` numbers nodes
as the topology file does (hosts, then switches), addresses host n as ``11.(n >> 8).(n & 255).1``
(``HostAddress``), gives each (src, dst) pair's flows source ports from 10000 (``peer_sport``) and
builds the next hops by a breadth-first search from every destination host over each node's
neighbours in node-id order (``InstallRouting``): node v's next hops toward a host are the
neighbours u one hop closer, in the order the search dequeued them, one entry per cable.
"""

from __future__ import annotations

import struct
from collections import deque

import numpy as np

from rlcc.simulator import topology as topo

FIRST_SPORT = 10000  # rlcc-peer.cc: per (src, dst) pair, the first flow's source port
_C1, _C2, _MASK = 0xCC9E2D51, 0x1B873593, 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3 x86_32 (Austin Appleby's public algorithm) of ``data``."""
    h = int(seed) & _MASK
    n = len(data) // 4
    for (k,) in struct.iter_unpack("<I", data[: 4 * n]):
        k = _rotl((k * _C1) & _MASK, 15) * _C2 & _MASK
        h = (_rotl(h ^ k, 13) * 5 + 0xE6546B64) & _MASK
    tail = data[4 * n:]
    if tail:
        k = int.from_bytes(tail, "little")
        h ^= _rotl((k * _C1) & _MASK, 15) * _C2 & _MASK
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    return h ^ (h >> 16)


def host_address(node: int) -> int:
    """rlcc-peer.cc ``HostAddress(node).Get()``: 11.x.y.1 as a host-order uint32."""
    return (11 << 24) | ((node & 0xFFFF) << 8) | 1


def peer_sport(src: np.ndarray, dst: np.ndarray) -> list[int]:
    """Each flow's source port in the peer: its rank among its (src, dst) pair's flows, from 10000."""
    seen: dict[tuple[int, int], int] = {}
    out = []
    for a, b in zip(np.asarray(src).tolist(), np.asarray(dst).tolist()):
        k = seen.get((a, b), 0)
        seen[(a, b)] = k + 1
        out.append(FIRST_SPORT + k)
    return out


def next_hops(t: topo.Topology, root: int) -> list[list[int]]:
    """Per node, its next hops toward host ``root`` in the peer's table order (see module doc)."""
    neighbours: list[list[int]] = [[] for _ in range(t.n_nodes)]
    for a, b in zip(t.link_src[0::2].tolist(), t.link_dst[0::2].tolist()):  # cables in file order
        neighbours[a].append(b)
        neighbours[b].append(a)
    for lst in neighbours:
        lst.sort()  # stable: parallel cables keep file order
    hops = [-1] * t.n_nodes
    via: list[list[int]] = [[] for _ in range(t.n_nodes)]
    hops[root] = 0
    frontier = deque([root])
    while frontier:
        u = frontier.popleft()
        for v in neighbours[u]:
            if hops[v] < 0:
                hops[v] = hops[u] + 1
                if not t.is_host(v):  # hosts do not forward
                    frontier.append(v)
            if hops[v] == hops[u] + 1:
                via[v].append(u)
    return via


def peer_paths(t: topo.Topology, src: np.ndarray, dst: np.ndarray, dport: int) -> tuple[tuple[str, ...], ...]:
    """Each flow's node path (names) through the peer's ECMP, flows given as (src, dst) host ids."""
    tables: dict[int, list[list[int]]] = {}
    out = []
    for (a, b), sport in zip(zip(np.asarray(src).tolist(), np.asarray(dst).tolist()), peer_sport(src, dst)):
        via = tables.setdefault(b, next_hops(t, b))
        key = struct.pack("<III", host_address(a), host_address(b), (sport | (dport << 16)) & _MASK)
        path, node = [a], a
        while node != b:
            hops = via[node]
            node = hops[murmur3_32(key, node) % len(hops)] if not t.is_host(node) else hops[0]
            path.append(node)
        out.append(tuple(t.node_name(v) for v in path))
    return tuple(out)
