"""The cycle model against real RTL cycle counts, on every run without Verilator.

tests/emulator/fixtures/rtl_<core>.* were recorded by ``bench/bench_cycle_model.py --fixture``:
the rv32imc harness ELF of the bundled example, 256 input records spread over the benchmark's
vector set, and the per-event cycles the firmware measured with the core's own cycle CSR in a
Verilator simulation of the core's RTL. The emulator with that core's profile must reproduce
them exactly: all three profiles are exact on the benchmark's events (PicoRV32 since its look-ahead
fetch is modelled, ``branch_lookahead_misaligned``). Also here: the profile checks (missing/negative/unknown costs, zero clock) exit 3
naming the field.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from rlcc.emulator.cycle_model import load_profile, profile_from_dict
from rlcc.errors import BadInputError
from rlcc.verify.runner import HarnessRunner

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CORES = ("ibex", "cv32e40p", "picorv32")


def _fixture(core: str) -> tuple[dict, Path, np.ndarray, np.ndarray]:
    stem = FIXTURES / f"rtl_{core}"
    meta = json.loads(stem.with_suffix(".json").read_text())
    data = np.load(stem.with_suffix(".npz"))
    return meta, stem.with_suffix(".elf"), data["records"], data["rtl_cycles"]


@pytest.mark.parametrize("core", CORES)
def test_emulator_matches_rtl_cycles(core):
    meta, elf, records, rtl = _fixture(core)
    assert hashlib.sha256(elf.read_bytes()).hexdigest() == meta["elf_sha256"]
    assert meta["profile"] == core and len(records) == len(rtl) == meta["records"]
    emu = HarnessRunner(elf, 32, load_profile(core)).run(records)["cycles"].astype(np.int64)
    off = np.flatnonzero(emu != rtl)
    assert off.size == 0, f"{core}: {off.size} records differ; first {int(off[0])}: emulator {emu[off[0]]} vs RTL {rtl[off[0]]}"


def test_fixture_covers_several_event_paths():
    for core in CORES:
        _, _, _, rtl = _fixture(core)
        assert len(np.unique(rtl)) >= 5  # not one path repeated: RTT, probe/timer, boundary paths


@pytest.mark.parametrize("core", CORES)
def test_validated_profiles_say_so(core):
    p = load_profile(core)
    assert p.validation.startswith("validated against RTL") and "bench/bench_cycle_model.py" in p.validation


def _doc(**costs_override) -> dict:
    doc = json.loads((load_profile("ibex").path).read_text())
    doc["costs"].update(costs_override)
    return doc


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda d: d["costs"].pop("load"), "load"),
        (lambda d: d["costs"].update(store=-1), "store"),
        (lambda d: d["costs"].update(mulh_extra=-2), "mulh_extra"),
        (lambda d: d["costs"].update(fpu=3), "fpu"),
        (lambda d: d.update(clock_hz=0), "clock_hz"),
        (lambda d: d.update(validation=""), "validation"),
    ],
)
def test_bad_profile_names_the_field(mutate, field):
    doc = _doc()
    mutate(doc)
    with pytest.raises(BadInputError, match=field):
        profile_from_dict(doc, "bad.json")


def test_optional_costs_default_to_the_classic_model():
    doc = _doc()
    zero = ("mulh_extra", "jalr_extra", "jalr_dep_stall", "jalr_dep_link_extra", "jalr_load_dep2_stall", "div_clz",
            "misaligned_target", "misaligned_fetch", "branch_lookahead_misaligned")
    for k in (*zero, "div_by_zero"):
        doc["costs"].pop(k, None)
    p = profile_from_dict(doc)
    assert p.costs["div_by_zero"] == p.costs["div"]
    assert all(p.costs[k] == 0 for k in zero)


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda d: d["costs"].pop("alu"), "alu"),
        (lambda d: d["costs"].update(jump=-1), "jump"),
        (lambda d: d["costs"].update(branch=1), "branch"),
        (lambda d: d.update(clock_hz=0), "clock_hz"),
    ],
)
def test_rlcc_verify_bad_profile_exits_3_naming_the_field(tmp_path, mutate, field):
    from click.testing import CliRunner

    from rlcc.cli.verify import verify_command

    doc = _doc()
    mutate(doc)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    fw = Path(__file__).resolve().parents[2] / "examples" / "firmware" / "firmware.c"
    for profile in (str(bad), f"dpa,{bad}"):  # also as a further profile of the list
        r = CliRunner().invoke(verify_command, [str(fw), "--profile", profile, "--random", "0"])
        assert r.exit_code == 3, r.output
        assert field in r.output


@pytest.mark.slow
def test_rlcc_verify_names_profile_and_status_and_spread():
    from click.testing import CliRunner

    from rlcc.cli.verify import verify_command

    fw = Path(__file__).resolve().parents[2] / "examples" / "firmware" / "firmware.c"
    r = CliRunner().invoke(verify_command, [str(fw), "--profile", "dpa,ibex", "--random", "0", "--budget-ns", "1e6"])
    assert r.exit_code == 0, r.output
    assert "cycle model: profile dpa, not validated against RTL" in r.output
    assert "ibex (rv32imc @ 0.50 GHz, validated against RTL):" in r.output
