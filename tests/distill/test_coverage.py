"""The report's coverage section (rlcc.distill.coverage): each stage's regimes and flow counts,
and what the gate did not check."""

from __future__ import annotations

from rlcc.distill import coverage
from rlcc.distill.pipeline import CompileOptions, compile_coverage
from rlcc.simulator.scenarios import AllToAll, ManyToOne


def test_rows_group_by_regime_and_gaps_name_what_the_gate_missed():
    table = coverage.rows([
        ("training", [ManyToOne(flows=2, duration_ms=1.0), ManyToOne(flows=4096, duration_ms=1.0),
                      AllToAll(hosts=8, duration_ms=1.0)]),
        (coverage.GATE_STAGE, [ManyToOne(flows=64, duration_ms=1.0), ManyToOne(flows=512, duration_ms=1.0, initial_rate=1 / 512)]),
    ])
    assert table[0] == {"stage": "training", "topology": "single switch", "pattern": "all-to-all", "start": "line rate",
                        "flows": [56]}
    assert {"stage": coverage.GATE_STAGE, "topology": "single switch", "pattern": "many-to-one", "start": "fair share",
            "flows": [512]} in table
    gaps = coverage.gaps(table)
    assert "all-to-all on the single switch from line rate (seen in training or validation only)" in gaps
    assert "many-to-one on the fat-tree from line rate" in gaps
    assert gaps[-1] == "incasts of more than 512 flows (training or validation reached 4096)"


def test_a_default_compile_covers_the_gate_flow_counts_in_both_regimes():
    o = CompileOptions()
    table = compile_coverage(o)
    gate = {(r["start"], tuple(r["flows"])) for r in table if r["stage"] == coverage.GATE_STAGE}
    assert gate == {("line rate", o.eval_flows), ("fair share", o.eval_flows)}
    validation = [r for r in table if r["stage"] == "candidate validation"]
    assert validation and all(not set(r["flows"]) & set(o.eval_flows) for r in validation)
