"""The suite's start modes: steady families at line rate (the paper's bring-up) or fair share, with
bring-up and steady losses reported apart, and go-back-N's resent packets."""

from __future__ import annotations

import pytest

from rlcc.errors import BadInputError
from rlcc.simulator.scenarios import ManyToOne, TopologyConfig
from rlcc.simulator.suite import FAIR_SHARE, FAT_TREE, LINE_RATE, SUITE_DEFAULTS, ControllerSpec, Job, Point, run_job, run_suite
from rlcc.simulator.params import GO_BACK_N

POINT = Point("many-to-one", FAT_TREE, "64 flows", 64, ManyToOne(flows=64, duration_ms=1.0, topology=TopologyConfig()),
              True)


def test_line_rate_start_loses_at_bring_up_and_splits_the_count():
    ctl = ControllerSpec.parse("dcqcn")
    line = run_job(Job(POINT, ctl, start=LINE_RATE, loss_recovery=GO_BACK_N))["metrics"]
    fair = run_job(Job(POINT, ctl, start=FAIR_SHARE, loss_recovery=GO_BACK_N))["metrics"]
    assert line["drops_bringup_per_flow"] + line["drops_steady_per_flow"] == pytest.approx(line["drops_per_flow"])
    assert line["drops_bringup_per_flow"] > 100 * max(fair["drops_per_flow"], 1.0)  # 64 x line rate overflows the buffer
    assert line["drops_steady_per_flow"] < line["drops_bringup_per_flow"]
    # go-back-N resends every NACKed packet (a flow's fluid remainder under one packet is never NACKed)
    assert line["resent_per_flow"] >= line["drops_per_flow"] - 1.0
    none = run_job(Job(POINT, ctl, start=LINE_RATE, loss_recovery="none"))["metrics"]
    assert "resent_per_flow" not in none and none["drops_per_flow"] == line["drops_per_flow"]  # accounting only
    assert none["goodput"] >= line["goodput"]


def test_suite_defaults_and_bad_modes():
    assert SUITE_DEFAULTS == {"full": (LINE_RATE, GO_BACK_N), "reduced": (FAIR_SHARE, "none")}
    with pytest.raises(BadInputError, match="unknown start 'slow'"):
        run_suite([ControllerSpec.parse("swift")], "reduced", start="slow")
    with pytest.raises(BadInputError, match="unknown loss recovery 'gbn'"):
        run_suite([ControllerSpec.parse("swift")], "reduced", loss_recovery="gbn")
