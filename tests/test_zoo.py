"""The policy zoo (examples/zoo): the catalogue spans what the issue asks for, every policy loads
as a teacher, and the policies are rebuilt byte-identically from their recipe."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from pathlib import Path

import pytest

from rlcc.recurrent import load_policy

ZOO = Path(__file__).resolve().parents[1] / "examples" / "zoo"
ENTRIES = json.loads((ZOO / "zoo.json").read_text())["policies"]


def _maker():
    spec = importlib.util.spec_from_file_location("make_zoo", ZOO / "make_zoo.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_catalogue_spans_users_policies():
    assert len(ENTRIES) >= 12 and len({e["name"] for e in ENTRIES}) == len(ENTRIES)
    maker = _maker()
    specs = {e["name"]: maker.spec_of(e) for e in ENTRIES}
    mlps = [e for e in ENTRIES if e.get("config", {}).get("arch", "mlp") == "mlp" and e["made_by"] == "adpg"]
    assert {specs[e["name"]].history for e in mlps} >= {1, 2, 3, 4}
    assert {e["config"].get("activation", "relu") for e in mlps} == {"relu", "tanh"}
    assert {e["config"].get("bias", False) for e in mlps} == {True, False}
    assert {len(e["config"].get("hidden", [12, 12])) for e in mlps} == {1, 2}
    widths = [w for e in mlps for w in e["config"].get("hidden", [12, 12])]
    assert min(widths) <= 8 and max(widths) >= 64
    maps = {(s.action.type, s.action.map if s.action.type == "tanh" else "-") for s in specs.values()}
    assert {("tanh", "asymmetric"), ("tanh", "linear"), ("factor", "-")} <= maps
    assert len({(s.reward.target, s.reward.beta) for s in specs.values()}) >= 3
    assert any(set(s.feature_names) - {"prev_action", "delta"} for s in specs.values())
    assert {e["made_by"] for e in ENTRIES} == {"adpg", "analytic"}
    assert any(e.get("config", {}).get("arch") == "lstm" for e in ENTRIES)
    iterations = [e["config"]["iterations"] for e in mlps]
    assert min(iterations) <= 20 and max(iterations) >= 100  # under- and well-trained
    assert sum("hard" in e for e in ENTRIES) >= 2


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_every_policy_loads_as_a_teacher(entry):
    policy = load_policy(ZOO / f"{entry['name']}.onnx", None)
    spec = policy.step_spec if getattr(policy, "recurrent", False) else policy.spec
    assert dataclasses.replace(spec, recurrent=None) == _maker().spec_of(entry)


def test_hand_designed_policies_rebuild_byte_identically(tmp_path, monkeypatch):
    maker = _maker()
    monkeypatch.setattr(maker, "HERE", tmp_path)
    for e in ENTRIES:
        if e["made_by"] == "analytic":
            maker.make(e)
            assert (tmp_path / f"{e['name']}.onnx").read_bytes() == (ZOO / f"{e['name']}.onnx").read_bytes(), e["name"]


@pytest.mark.slow
def test_a_trained_policy_rebuilds_byte_identically(tmp_path, monkeypatch):
    maker = _maker()
    monkeypatch.setattr(maker, "HERE", tmp_path)
    entry = min((e for e in ENTRIES if e["made_by"] == "adpg"), key=lambda e: e["config"]["iterations"])
    maker.make(entry)
    for suffix in (".onnx", ".train.json"):
        name = entry["name"] + suffix
        assert (tmp_path / name).read_bytes() == (ZOO / name).read_bytes(), name
