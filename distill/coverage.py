"""Where a compile looked: the scales and regimes covered by training, candidate validation and
the fidelity gate, and what none of them checked, so a user sees where the firmware is untested.

Derived from the compile options and the scenario definitions alone (no simulation), so the
report's section is exact and deterministic.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

GATE_STAGE = "fidelity gate"
TOPOLOGIES = ("single switch", "fat-tree")
STARTS = ("line rate", "fair share")


def describe(scenario: Any) -> tuple[str, str, str, int]:
    """(topology, pattern, start, flows) of a simulator scenario."""
    topology = TOPOLOGIES[0] if scenario.topology is None else TOPOLOGIES[1]
    start = STARTS[0] if scenario.initial_rate is None else STARTS[1]
    return topology, scenario.kind, start, int(scenario.n_flows)


def rows(stages: Sequence[tuple[str, Iterable[Any]]]) -> list[dict[str, Any]]:
    """One row per (stage, topology, pattern, start) with the sorted flow counts it covered."""
    out: list[dict[str, Any]] = []
    for stage, scenarios in stages:
        groups: dict[tuple[str, str, str], set[int]] = {}
        for sc in scenarios:
            topology, pattern, start, flows = describe(sc)
            groups.setdefault((topology, pattern, start), set()).add(flows)
        for (topology, pattern, start), flows in sorted(groups.items()):
            out.append({"stage": stage, "topology": topology, "pattern": pattern, "start": start,
                        "flows": sorted(flows)})
    return out


def gaps(table: list[dict[str, Any]], gate_stage: str = GATE_STAGE) -> list[str]:
    """What the gate did not check: regimes (topology x many-to-one/all-to-all x start) absent
    from it, and the flow counts beyond its largest, each with whether training saw them."""
    gate = [r for r in table if r["stage"] == gate_stage]
    seen = {(r["topology"], r["pattern"], r["start"]) for r in gate}
    trained = {(r["topology"], r["pattern"], r["start"]) for r in table if r["stage"] != gate_stage}
    out = []
    for topology in TOPOLOGIES:
        for pattern in ("many-to-one", "all-to-all"):
            for start in STARTS:
                key = (topology, pattern, start)
                if key not in seen:
                    out.append(f"{pattern} on the {topology} from {start}"
                               + (" (seen in training or validation only)" if key in trained else ""))
    incasts = [r for r in table if r["pattern"] == "many-to-one"]
    top = max((max(r["flows"]) for r in incasts if r["stage"] == gate_stage), default=0)
    beyond = sorted({n for r in incasts if r["stage"] != gate_stage for n in r["flows"] if n > top})
    out.append(f"incasts of more than {top} flows" + (f" (training or validation reached {beyond[-1]})" if beyond else ""))
    return out
