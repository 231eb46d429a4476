"""The scenario mixes a switch agent is sampled and judged on (ACC's workloads, section 4.3/5).

Incast: p senders x q flows of 10 KB..10 MB (log-uniform) to one receiver, in bursts; traces:
websearch and hadoop flow sizes, Poisson arrivals at 30..80 % load. Both on the single switch
and on a small leaf-spine (4 leaves x 4 hosts, 2 spines: every switch an agent). Evaluation runs
stop arrivals early enough for the flows to finish, so FCTs are compared on the same flows.
"""

from __future__ import annotations

from rlcc.simulator.scenarios import Incast, PoissonTrace, Scenario, TopologyConfig

LEAF_SPINE = TopologyConfig(kind="fat-tree", hosts_per_leaf=4, leaves=4, spines=2, links_per_pair=1)


def sampling(quick: bool = False, seed: int = 0) -> tuple[Scenario, ...]:
    if quick:
        return (Incast(senders=8, flows_per_sender=2, bursts=2, burst_interval_us=2000, duration_ms=4, seed=seed + 1),
                PoissonTrace(hosts=8, load=0.6, duration_ms=3, seed=seed + 2),
                PoissonTrace(hosts=16, load=0.5, duration_ms=3, topology=LEAF_SPINE, seed=seed + 3))
    incasts = [Incast(senders=p, flows_per_sender=q, bursts=3, burst_interval_us=3000, duration_ms=10, seed=seed + 10 + i)
               for i, (p, q) in enumerate([(4, 2), (8, 2), (16, 1), (32, 1), (48, 1)])]
    traces = [PoissonTrace(hosts=8, load=load, cdf=cdf, duration_ms=8, seed=seed + 20 + i)
              for i, (cdf, load) in enumerate([("websearch", 0.3), ("websearch", 0.6), ("websearch", 0.8),
                                               ("hadoop", 0.5), ("hadoop", 0.8)])]
    fabric = [PoissonTrace(hosts=16, load=0.6, duration_ms=6, topology=LEAF_SPINE, seed=seed + 30),
              PoissonTrace(hosts=16, load=0.4, cdf="hadoop", duration_ms=6, topology=LEAF_SPINE, seed=seed + 31),
              Incast(senders=12, flows_per_sender=2, bursts=2, burst_interval_us=3000, duration_ms=8, topology=LEAF_SPINE,
                     seed=seed + 32)]
    return tuple(incasts + traces + fabric)


def evaluation(quick: bool = False, seed: int = 1000) -> tuple[Scenario, ...]:
    if quick:
        return (PoissonTrace(hosts=8, load=0.5, duration_ms=3, arrival_frac=0.5, seed=seed),)
    return (
        Incast(senders=8, flows_per_sender=2, bursts=3, burst_interval_us=4000, duration_ms=16, seed=seed),
        Incast(senders=32, flows_per_sender=1, bursts=2, burst_interval_us=6000, duration_ms=16, seed=seed + 1),
        PoissonTrace(hosts=8, load=0.6, cdf="websearch", duration_ms=12, arrival_frac=0.5, seed=seed + 2),
        PoissonTrace(hosts=8, load=0.6, cdf="hadoop", duration_ms=12, arrival_frac=0.5, seed=seed + 3),
        PoissonTrace(hosts=16, load=0.6, cdf="websearch", duration_ms=10, arrival_frac=0.5, topology=LEAF_SPINE, seed=seed + 4),
    )
