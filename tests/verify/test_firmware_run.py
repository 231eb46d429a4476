"""The shared build-and-run service reproduces the shipped vectors' golden outputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rlcc.codegen import manifest as manifest_io
from rlcc.targets import TARGET_NAMES
from rlcc.verify.firmware_run import firmware_build, run_firmware

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "firmware" / "firmware.c"


@pytest.mark.parametrize("target", TARGET_NAMES)
def test_run_firmware_matches_the_manifest_vectors(target: str) -> None:
    _, _, vectors = manifest_io.load(str(EXAMPLE.with_name("firmware.rlcc.json")))
    out = run_firmware(EXAMPLE, vectors, target)
    assert np.array_equal(out["rate"], vectors.rate) and np.array_equal(out["ctx_out"], vectors.ctx_out)
    assert out["cycles"].min() > 0


def test_build_uses_the_targets_default_profile_and_zbb_rule() -> None:
    with firmware_build(EXAMPLE, "rv64imac") as fw:
        assert fw.profile.name == "dpa" and fw.zbb == fw.profile.zbb and fw.elf.is_file()
        assert fw.footprint()["code"] > 0
    assert not fw.elf.exists()  # the temporary build directory is gone after the block
