"""One description of the peer comparison's scenarios, written out for both simulators.

Each ``PeerScenario`` (N->1 incast on one switch, or all-to-all on a 2-tier leaf-spine) becomes
(a) the packet-level peer's three inputs in the formats of the HPCC repository's
``simulation/scratch/third.cc`` (alibaba-edu/High-Precision-Congestion-Control @ 9f4be2a; our driver
``rlcc-peer.cc`` reads them the same way): a topology file, a flow file and a ``KEY value`` config
file; and (b) an rlcc-sim ``Scenario`` plus its controller.

Shared parameters are the peer's own run settings at 100 Gb/s (``simulation/run.py --bw 100`` and
``simulation/mix/config.txt``): 1 us links, 1000 B payload, 32 MB switch buffer, ECN at 100G
Kmin 400 KB / Kmax 1600 KB / Pmax 0.2, DCQCN ``--cc dcqcn`` and HPCC ``--cc hp`` settings. The base
RTT T both sides use is the peer's ``maxRtt`` (2 x propagation + one 1000 B serialization per hop,
``third.cc``'s pairRtt): HPCC's T and DCQCN's fluid RTT probe are set to it in rlcc.

Where rlcc-sim has no counterpart of a peer mechanism, or models it in fluid form rather than per
packet, it is listed in ``RLCC_DIFFERS`` with what rlcc does instead (reported with the results).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

import ecmp
from rlcc.simulator import AllToAll, Dcqcn, DcqcnParams, Hpcc, HpccParams, ManyToOne, Network, TopologyConfig
from rlcc.simulator.params import PfcParams
from rlcc.simulator import topology as topo
from rlcc.simulator.scenarios import Scenario

LINE_GBPS = 100
LINK_DELAY_NS = 1000
PAYLOAD_BYTES = 1000  # PACKET_PAYLOAD_SIZE
BUFFER_MB = 32  # BUFFER_SIZE (MB of 2^20 bytes, switch-mmu ConfigBufferSize)
KMIN_KB, KMAX_KB, PMAX = 400, 1600, 0.2  # KMIN_MAP / KMAX_MAP / PMAX_MAP at 100G (KB of 1000 B, switch-mmu.cc)
LONG_FLOW_BYTES = 10**12  # long-lived: never finishes within a run
QLEN_SAMPLE_NS = 1000
FLOW_SAMPLE_NS = 5000
DPORT = 100  # every flow's destination port in the flow file (the repo's)
CONTROLLERS = ("dcqcn", "hpcc")

# Per-controller peer settings: run.py at --bw 100 (mode 1 "dcqcn", mode 3 "hp" with --utgt 95, --mi 0).
PEER_CC = {
    "dcqcn": {"CC_MODE": 1, "ALPHA_RESUME_INTERVAL": 1, "RATE_DECREASE_INTERVAL": 4, "RP_TIMER": 300,
              "EWMA_GAIN": 0.00390625, "FAST_RECOVERY_TIMES": 1, "RATE_AI": "20Mb/s", "RATE_HAI": "200Mb/s",
              "MIN_RATE": "1000Mb/s", "HAS_WIN": 0, "VAR_WIN": 0, "FAST_REACT": 0, "U_TARGET": 0.95,
              "MI_THRESH": 0, "INT_MULTI": 1, "ACK_HIGH_PRIO": 1},
    "hpcc": {"CC_MODE": 3, "ALPHA_RESUME_INTERVAL": 1, "RATE_DECREASE_INTERVAL": 4, "RP_TIMER": 300,
             "EWMA_GAIN": 0.00390625, "FAST_RECOVERY_TIMES": 1, "RATE_AI": "40Mb/s", "RATE_HAI": "40Mb/s",
             "MIN_RATE": "1000Mb/s", "HAS_WIN": 1, "VAR_WIN": 1, "FAST_REACT": 1, "U_TARGET": 0.95,
             "MI_THRESH": 0, "INT_MULTI": 4, "ACK_HIGH_PRIO": 0},
}
PEER_COMMON = {"ENABLE_QCN": 1, "USE_DYNAMIC_PFC_THRESHOLD": 1, "PACKET_PAYLOAD_SIZE": PAYLOAD_BYTES,
               "CLAMP_TARGET_RATE": 0, "DCTCP_RATE_AI": "1000Mb/s", "L2_CHUNK_SIZE": 4000, "L2_ACK_INTERVAL": 1,
               "L2_BACK_TO_ZERO": 0, "GLOBAL_T": 1, "MULTI_RATE": 0, "SAMPLE_FEEDBACK": 0, "RATE_BOUND": 1,
               "BUFFER_SIZE": BUFFER_MB, "ENABLE_TRACE": 0}

# Peer mechanisms rlcc-sim lacks or models in fluid form, and what it does (reported with every result).
RLCC_DIFFERS = {
    "PFC (USE_DYNAMIC_PFC_THRESHOLD, headroom 3 x link BDP, PAUSE_TIME)":
        "rlcc's lossless mode with the same dynamic thresholds (PfcParams defaults, from switch-mmu.cc); a pause "
        "reaches the upstream 2 x the link delay after the crossing and holds until RESUME (no PAUSE_TIME expiry); "
        "store-and-forward one time step per hop",
    "HAS_WIN / VAR_WIN (HPCC's inflight window bound = maxBdp x rate / line rate)":
        "fluid: rlcc sends at min(R, max(W, one packet) / (base RTT + current path queueing)), re-evaluated every step",
    "FAST_REACT (HPCC per-ACK reaction between per-RTT updates)":
        "per step rather than per ACK: U from the INT of half a base RTT ago, W = Wc eta / U + W_AI",
    "INT_MULTI / INT quantization (128 B tx, 80 B qlen units)": "rlcc's telemetry is exact",
    "L2_CHUNK_SIZE / L2_ACK_INTERVAL (ACK per packet, go-back-N on loss)":
        "no ACK path in rlcc: a DCQCN CNP (an ACK's flag in the peer) reaches the sender one base RTT after "
        "the sending that caused it (DcqcnParams.feedback_delay_us), not per packet",
    "per-packet ECN marking at dequeue-time queue": "rlcc marks the fluid at the step-start queue",
}

# Wire bytes of a data packet beyond its payload (rdma-hw.cc GetNxtPacket: payload, SeqTs header,
# UdpHeader, Ipv4Header, PppHeader; qbb-net-device.cc TransmitStart serializes p->GetSize()): PPP
# 14 (ppp-header.cc PppHeader::GetStaticSize, an Ethernet-sized header), IPv4 20 (ipv4-header.cc
# m_headerSize 5 x 4), UDP 8 (udp-header.cc), the SeqTs header's seq + pg (ns-3-alibabacloud's
# SimpleSeqTsHeader: uint64 + uint16; the HPCC repo's SeqTsHeader: 6) and its embedded IntHeader
# (int-header.cc GetStaticSize: HPCC's NORMAL mode maxHop 5 x 8-byte IntHop + 2-byte nhop = 42,
# whatever the path's hop count; NONE for DCQCN, rlcc-peer.cc SetModelDefaults).
PPP_BYTES, IPV4_BYTES, UDP_BYTES = 14, 20, 8
SEQ_TS_BYTES = {"ns-3-alibabacloud": 8 + 2, "hpcc-repo": 4 + 2}
INT_BYTES = {"dcqcn": 0, "hpcc": 5 * 8 + 2, "rl": 0}
# The tree each controller's peer rows come from: ns-3-alibabacloud's HPCC crashes (PEER_KNOWN_ISSUES),
# so HPCC rows are the fallback's (the HPCC repository's tree).
ROWS_TREE = {"dcqcn": "ns-3-alibabacloud", "hpcc": "hpcc-repo", "rl": "ns-3-alibabacloud"}


def header_bytes(cc: str, tree: str | None = None) -> int:
    """Per-packet header bytes of ``cc``'s data packets in ``tree`` (default: the tree its rows come
    from): 52 for DCQCN in ns-3-alibabacloud, 90 for HPCC in the HPCC repository."""
    return PPP_BYTES + IPV4_BYTES + UDP_BYTES + SEQ_TS_BYTES[tree or ROWS_TREE[cc]] + INT_BYTES[cc]


# Known failures of the peer itself (diagnosed with gdb; attached to a failed run they explain).
PEER_PFC_RESUME_ISSUE = (
    "a device crashed on a PFC RESUME: qbb-net-device.cc QbbNetDevice::Resume(qIndex) looks up "
    "m_rdmaEQ->GetQp(qIndex) (the SimAI fork's NVLS check), the priority (3) used as an index into the "
    "device's QP group, out of range on a switch port (no QPs) or a host with fewer than 4 QPs: SIGSEGV "
    "in RdmaQueuePairGroup::Get (gdb)")
PEER_KNOWN_ISSUES = {
    "hpcc": "ns-3-alibabacloud's HPCC (CC_MODE 3) corrupts its own data packets: switch-node.cc "
            "SwitchNotifyDequeue writes the INT hop at PPP + IP + UDP + 6 bytes (the HPCC repo's 6-byte "
            "SeqTs: 32-bit seq + pg), but this tree's SeqTs is 10 bytes (custom-header.cc: 64-bit seq + pg), "
            "so PushHop overwrites seq and pg; the receiver echoes the garbage pg (136) in a NACK and the "
            "switch indexes BEgressQueue::m_queues[136]: SIGSEGV in the first microseconds",
}


@dataclasses.dataclass(frozen=True)
class PeerScenario:
    """One comparison scenario. ``kind``: ``incast`` (``flows`` over ``hosts`` senders into one
    receiver on one switch) or ``all-to-all`` (``hosts`` on a leaf-spine of ``leaves`` leaves and
    ``spines`` spines, one flow per ordered pair). ``start``: ``line`` (flows start at line rate,
    both simulators' default) or ``fair`` (at rlcc's fair share of the most loaded link)."""

    kind: str
    flows: int
    hosts: int
    start: str = "line"
    duration_ms: float = 10.0
    leaves: int = 4
    spines: int = 2
    link_delay_ns: int = LINK_DELAY_NS  # every cable's propagation delay (``rl_scenario`` sets the policy's base RTT)

    @property
    def name(self) -> str:
        if self.kind == "incast":
            return f"incast-{self.flows}x{self.hosts}h-{self.start}"
        return f"a2a-{self.hosts}h-{self.leaves}l{self.spines}s-{self.start}"

    def topology(self) -> topo.Topology:
        """The network as an rlcc topology (used for the peer's file on both kinds)."""
        buf = BUFFER_MB * 1024 * 1024
        if self.kind == "incast":
            return topo.star(self.hosts + 1, LINE_GBPS, self.link_delay_ns, buf)
        return topo.fat_tree(self.hosts // self.leaves, self.leaves, self.spines, 1, LINE_GBPS, LINE_GBPS,
                             self.link_delay_ns, buf)

    @property
    def hops(self) -> int:
        """Links on the longest host-to-host path."""
        return 2 if self.kind == "incast" else 4

    @property
    def base_rtt_ns(self) -> float:
        """The peer's maxRtt: 2 x propagation + one payload serialization per hop."""
        return 2 * self.hops * self.link_delay_ns + self.hops * PAYLOAD_BYTES * 8 / LINE_GBPS

    def network(self, cc: str | None = None) -> Network:
        """The shared network; with a controller, its data packets' header bytes (``header_bytes``)."""
        return Network(line_rate_gbps=float(LINE_GBPS), base_rtt_us=self.base_rtt_ns / 1e3,
                       buffer_bytes=BUFFER_MB * 1024 * 1024, packet_bytes=PAYLOAD_BYTES,
                       ecn_kmin_bytes=KMIN_KB * 1000, ecn_kmax_bytes=KMAX_KB * 1000, ecn_pmax=PMAX, dt_ns=500.0,
                       header_bytes=header_bytes(cc) if cc else 0, pfc=PfcParams())

    def rlcc_scenario(self, cc: str | None = None) -> Scenario:
        """The rlcc-sim scenario (``cc``: the controller, whose packets' headers the network carries).
        Incast: the single switch as a star topology (rlcc's HPCC needs per-hop telemetry, which only
        the topology fabric stamps; the star reproduces the single switch,
        ``test_star_topology_reproduces_the_single_switch``); all-to-all: the fat-tree, each flow
        pinned to the path the peer's ECMP hash gives it (``ecmp.peer_paths``)."""
        net = self.network(cc)
        if self.kind == "incast":
            star = TopologyConfig(kind="star", hosts=self.hosts + 1, link_delay_ns=float(self.link_delay_ns))
            sc: Scenario = ManyToOne(flows=self.flows, hosts=self.hosts, duration_ms=self.duration_ms, network=net,
                                     topology=star)
        else:
            sc = AllToAll(hosts=self.hosts, duration_ms=self.duration_ms, network=net, topology=self._fat_tree())
            table = sc.placed_table()
            sc = dataclasses.replace(sc, paths=ecmp.peer_paths(self.topology(), table.host, table.dst, DPORT))
        if self.start == "fair":
            sc = dataclasses.replace(sc, initial_rate=sc.fair_rate())
        return sc

    def _fat_tree(self) -> TopologyConfig:
        return TopologyConfig(kind="fat-tree", hosts_per_leaf=self.hosts // self.leaves, leaves=self.leaves,
                              spines=self.spines, links_per_pair=1, link_delay_ns=float(self.link_delay_ns))

    def start_fraction(self) -> float:
        """Initial rate as a fraction of line rate (0: line rate, the peer's default)."""
        return 0.0 if self.start == "line" else float(self.rlcc_scenario().initial_rate)

    def flow_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(src, dst) peer node ids per flow, in rlcc's flow order (incast: receiver is node 0)."""
        if self.kind == "incast":
            src = 1 + np.arange(self.flows) % self.hosts
            return src, np.zeros(self.flows, np.int64)
        table = AllToAll(hosts=self.hosts, network=self.network(), topology=self._fat_tree()).placed_table()
        return table.host.astype(np.int64), table.dst.astype(np.int64)

    def receivers(self) -> int:
        return 1 if self.kind == "incast" else self.hosts


def controller(name: str, sc: PeerScenario):
    """The rlcc controller with the peer's settings (what maps; the rest is in RLCC_DIFFERS). DCQCN runs
    the peer's Mellanox rules (rdma-hw.cc, see ``DcqcnParams``): hyper increase on the timer stage
    alone, CLAMP_TARGET_RATE, timers from the first CNP, alpha and cuts on their own timers; its CNPs
    come back one base RTT after the sending that caused them (the peer's mark-to-ACK loop)."""
    cc = PEER_CC[name]
    gbps = lambda s: float(s.removesuffix("Mb/s")) / 1000  # noqa: E731
    min_rate = gbps(cc["MIN_RATE"]) / LINE_GBPS
    if name == "dcqcn":
        return Dcqcn(DcqcnParams(g=cc["EWMA_GAIN"], alpha_timer_us=cc["ALPHA_RESUME_INTERVAL"], timer_us=cc["RP_TIMER"],
                                 byte_counter=float("inf"), fast_recovery_steps=cc["FAST_RECOVERY_TIMES"],
                                 rate_ai_gbps=gbps(cc["RATE_AI"]), rate_hai_gbps=gbps(cc["RATE_HAI"]),
                                 cnp_interval_us=cc["RATE_DECREASE_INTERVAL"], min_rate=min_rate, tick_us=1.0,
                                 initial_alpha=1.0, hyper_on_timer_alone=True,
                                 clamp_target=bool(PEER_COMMON["CLAMP_TARGET_RATE"]), timers_from_first_cnp=True,
                                 decrease_on_timer=True, feedback_delay_us=sc.base_rtt_ns / 1e3))
    return Hpcc(HpccParams(eta=cc["U_TARGET"], max_stage=cc["MI_THRESH"], rate_ai_gbps=gbps(cc["RATE_AI"]),
                           min_rate=min_rate))


def topology_text(t: topo.Topology) -> str:
    """third.cc's topology file: ``nodes switches links``, the switch ids, one line per cable."""
    n_nodes = len(t.hosts) + len(t.switches)
    pairs = [(int(a), int(b), float(g), float(d)) for a, b, g, d in
             zip(t.link_src[0::2], t.link_dst[0::2], t.link_gbps[0::2], t.link_delay_ns[0::2])]
    lines = [f"{n_nodes} {len(t.switches)} {len(pairs)}",
             " ".join(str(len(t.hosts) + i) for i in range(len(t.switches)))]
    lines += [f"{a} {b} {g:g}Gbps {d / 1e6:g}ms 0" for a, b, g, d in pairs]
    return "\n".join(lines) + "\n"


def flow_text(sc: PeerScenario) -> str:
    """third.cc's flow file: count, then ``src dst pg dport size start_s`` (priority group 3, as the repo's)."""
    src, dst = sc.flow_pairs()
    lines = [str(len(src))] + [f"{s} {d} 3 {DPORT} {LONG_FLOW_BYTES} 0" for s, d in zip(src, dst)]
    return "\n".join(lines) + "\n"


def config_text(sc: PeerScenario, cc: str, files: dict[str, Path]) -> str:
    """The peer's config: PEER_COMMON + PEER_CC[cc] + ECN maps + files + our driver's monitor keys."""
    rate = LINE_GBPS * 10**9
    kv: dict[str, object] = {**PEER_COMMON, **PEER_CC[cc]}
    kv.update({"KMIN_MAP": f"1 {rate} {KMIN_KB}", "KMAX_MAP": f"1 {rate} {KMAX_KB}", "PMAX_MAP": f"1 {rate} {PMAX}",
               "SIMULATOR_STOP_TIME": f"{sc.duration_ms / 1e3:g}", "INIT_RATE_FRACTION": f"{sc.start_fraction():.9g}",
               "QLEN_MON_INTERVAL_NS": QLEN_SAMPLE_NS, "FLOW_MON_INTERVAL_NS": FLOW_SAMPLE_NS})
    kv.update({k: str(v) for k, v in files.items()})
    return "".join(f"{k} {v}\n" for k, v in kv.items())


PEER_FILES = ("TOPOLOGY_FILE", "FLOW_FILE", "FCT_OUTPUT_FILE", "PFC_OUTPUT_FILE", "QLEN_TRACE_FILE", "FLOW_TRACE_FILE")


def write_peer_inputs(sc: PeerScenario, cc: str, out_dir: Path) -> Path:
    """Write the peer's topology, flow and config files under ``out_dir``; returns the config path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {k: out_dir / name for k, name in zip(PEER_FILES, ("topology.txt", "flow.txt", "fct.txt", "pfc.txt",
                                                               "qlen.txt", "flows.txt"))}
    files["TOPOLOGY_FILE"].write_text(topology_text(sc.topology()))
    files["FLOW_FILE"].write_text(flow_text(sc))
    cfg = out_dir / "config.txt"
    cfg.write_text(config_text(sc, cc, files))
    return cfg


SCENARIOS = (
    PeerScenario("incast", 8, 8, "line"), PeerScenario("incast", 8, 8, "fair"),
    PeerScenario("incast", 64, 8, "line"), PeerScenario("incast", 64, 64, "fair"),
    PeerScenario("incast", 64, 64, "line"),
    PeerScenario("all-to-all", 240, 16, "line", duration_ms=5.0, leaves=4, spines=2),
    PeerScenario("all-to-all", 240, 16, "fair", duration_ms=5.0, leaves=4, spines=2),
)
LARGE = (PeerScenario("incast", 512, 64, "line"),)


# ---- the RL firmware in the peer (rlcc-peer.cc CC_MODE 11; compare.py --controllers rl) -------------

RL = "rl"
RL_CC_MODE = 11  # no rdma-hw.cc code path reacts to it: only the firmware changes the QPs' rates
# Paced at the firmware's rate alone (no HPCC window), no INT, ACKs ahead of data as for DCQCN.
PEER_CC[RL] = {"CC_MODE": RL_CC_MODE, "HAS_WIN": 0, "VAR_WIN": 0, "INT_MULTI": 1, "ACK_HIGH_PRIO": 1}


# How the RL rows' two sides differ beyond RLCC_DIFFERS (reported with the results when they run).
RL_DIFFERS = {
    "RTT probe (peer: walked hop by hop, each egress queue read when the probe reaches it)":
        "rlcc's probe returns after base RTT + the path's queueing delay at its send time",
    "decision latency (peer: the firmware's verified worst case, 361 ns for the bundled one, exact)":
        "rlcc applies a decision whole steps later (dt 500 ns: 361 ns -> 500 ns); the teacher row uses "
        "rlcc's default 1 us",
    "pacing (peer: RdmaHw paces whole packets at the QP rate; 8 synchronised flows queue ~8 packets)":
        "rlcc's fluid sends smoothly at the rate",
}


def rl_scenario(sc: PeerScenario, base_rtt_ns: float) -> PeerScenario:
    """``sc`` with the link delay that makes its base RTT (``base_rtt_ns``: 2 x hops x delay + one payload
    serialization per hop) equal a policy's reward base RTT, e.g. 8000 ns on the 2-hop incast: 1960 ns links."""
    serialization = sc.hops * PAYLOAD_BYTES * 8 / LINE_GBPS
    delay = (base_rtt_ns - serialization) / (2 * sc.hops)
    if delay <= 0 or delay != int(delay):
        raise ValueError(f"{sc.name}: no whole-ns link delay gives a {base_rtt_ns:g} ns base RTT "
                         f"({sc.hops} hops, {serialization:g} ns serialization)")
    return dataclasses.replace(sc, link_delay_ns=int(delay))


@dataclasses.dataclass(frozen=True)
class RlPeer:
    """What the peer's firmware mode needs beyond the scenario: the firmware's shared library
    (firmware_lib.py), each flow's first-probe phase (ns after its start; rlcc's engine phases), the
    device clock offset and the decision latency (those of rlcc's golden controller), the context
    words every flow starts with (None: zeroed, the firmware starts the flow itself) and the QPs'
    rate before the first decision (None: the scenario's ``start_fraction``)."""

    library: Path
    phases_ns: np.ndarray
    clock_offset_ns: int
    decision_latency_ns: int
    seed_ctx: tuple[int, ...] | None = None
    init_rate_fraction: float | None = None


def rl_config_lines(rl: RlPeer, phase_file: Path, decision_file: Path) -> str:
    """The firmware mode's keys (rlcc-peer.cc file comment); a repeated key (INIT_RATE_FRACTION) overrides."""
    kv: dict[str, object] = {"RL_FIRMWARE_LIB": rl.library, "RL_PHASE_FILE": phase_file,
                             "RL_CLOCK_OFFSET_NS": rl.clock_offset_ns, "RL_DECISION_LATENCY_NS": rl.decision_latency_ns,
                             "RL_DECISION_FILE": decision_file}
    if rl.seed_ctx is not None:
        kv["RL_SEED_CTX"] = " ".join(str(int(w)) for w in rl.seed_ctx)
    if rl.init_rate_fraction is not None:
        kv["INIT_RATE_FRACTION"] = f"{rl.init_rate_fraction:.9g}"
    return "".join(f"{k} {v}\n" for k, v in kv.items())


def write_rl_peer_inputs(sc: PeerScenario, rl: RlPeer, out_dir: Path) -> Path:
    """``write_peer_inputs`` for the firmware mode, plus the phase file and the firmware keys."""
    if len(rl.phases_ns) != sc.flows:
        raise ValueError(f"{sc.name}: {len(rl.phases_ns)} probe phases for {sc.flows} flows")
    cfg = write_peer_inputs(sc, RL, out_dir)
    phases = out_dir / "phases.txt"
    phases.write_text("".join(f"{p:.3f}\n" for p in np.asarray(rl.phases_ns, dtype=np.float64)))
    with cfg.open("a") as f:
        f.write(rl_config_lines(rl, phases, out_dir / "decisions.txt"))
    return cfg
