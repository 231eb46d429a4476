"""rlcc-verify on faulty firmware (issue 12): stack overflow, slow vs runaway handlers, a stray
ebreak; the runner's stack high-water mark; mismatch lines that name the differing field."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from rlcc.codegen import generate
from rlcc.errors import ExitCode
from rlcc.fxp.model import FxModel
from verify_models import small_model
from rlcc.verify.build import build_harness_elf
from rlcc.verify.check import Budget, VerifyResult
from rlcc.verify.report import summary
from rlcc.verify.runner import HarnessRunner, records_from_vectors



def model() -> FxModel:
    return small_model(4)


@pytest.fixture(scope="module")
def firmware(tmp_path_factory) -> Path:
    return generate(model(), tmp_path_factory.mktemp("fw"))["c"]


def with_prologue(firmware: Path, tmp_path: Path, code: str) -> Path:
    """A copy of the firmware whose user_algo starts with ``code``."""
    text = firmware.read_text()
    edited, n = re.subn(r"(void user_algo\([^)]*\)\n\{\n)", lambda m: m.group(1) + f"    {code}\n", text, count=1)
    assert n == 1, "generated C defines user_algo with its brace on the next line"
    out = tmp_path / "firmware.c"
    out.write_text(edited)
    (tmp_path / "firmware.h").write_text(firmware.with_suffix(".h").read_text())
    return out


def verify(firmware: Path, c_file: Path, *args: object) -> subprocess.CompletedProcess:
    """rlcc-verify of the edited ``c_file`` with a manifest that records it (a consistent edit: these
    tests are about faults and budgets, not about files that disagree with their manifest)."""
    data = json.loads(firmware.with_name("firmware.rlcc.json").read_text())
    data["files"]["c"]["sha256"] = hashlib.sha256(c_file.read_bytes()).hexdigest()
    manifest = c_file.with_name("firmware.rlcc.json")
    manifest.write_text(json.dumps(data))
    cmd = ["rlcc-verify", str(c_file), "--manifest", str(manifest), "--random", "0", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def last_line(proc: subprocess.CompletedProcess) -> str:
    return proc.stderr.strip().splitlines()[-1]


@pytest.mark.slow
def test_huge_stack_frame_is_a_stack_overflow(firmware, tmp_path):
    # a 3.4 MB frame, 53x the linker's 64 KiB stack (indexed at run time so it is really allocated)
    c = with_prologue(firmware, tmp_path, "volatile uint8_t big[3400000]; big[(uintptr_t)ev % sizeof big] = 1u;")
    proc = verify(firmware, c)
    assert proc.returncode == int(ExitCode.EMULATION), proc.stdout + proc.stderr
    assert re.search(r"stack overflow at pc 0x[0-9a-f]+ in user_algo \(sp 0x[0-9a-f]+", last_line(proc))


@pytest.mark.slow
def test_slow_but_finishing_firmware_is_over_budget(firmware, tmp_path):
    # ~100k instructions per event: measured, not a fault
    c = with_prologue(firmware, tmp_path, "{ volatile uint32_t spin; for (spin = 0u; spin < 25000u; spin++) { } }")
    proc = verify(firmware, c)
    assert proc.returncode == int(ExitCode.BUDGET), proc.stdout + proc.stderr
    assert "budget" in last_line(proc)
    cycles = int(re.search(r"cycles/event min (\d+)", proc.stdout).group(1))
    assert cycles > 100_000


@pytest.mark.slow
def test_runaway_firmware_hits_the_instruction_limit(firmware, tmp_path):
    c = with_prologue(firmware, tmp_path, "{ volatile uint32_t spin = 0u; while (spin == 0u) { } }")
    proc = verify(firmware, c)
    assert proc.returncode == int(ExitCode.EMULATION), proc.stdout + proc.stderr
    assert "instruction limit" in last_line(proc) and "in user_algo" in last_line(proc)


@pytest.mark.slow
def test_stray_ebreak_is_reported_where_it_happened(firmware, tmp_path):
    c = with_prologue(firmware, tmp_path, '__asm__ volatile("ebreak");')
    proc = verify(firmware, c)
    assert proc.returncode == int(ExitCode.EMULATION), proc.stdout + proc.stderr
    assert re.search(r"firmware executed ebreak at pc 0x[0-9a-f]+ in user_algo", last_line(proc))
    assert "not run" not in proc.stderr


@pytest.mark.slow
@pytest.mark.parametrize("target,xlen", [("rv64imac", 64), ("rv32imc", 32)])
def test_runner_measures_stack_high_water(firmware, tmp_path, target, xlen):
    from rlcc.verify.generators import random_vectors

    elf = build_harness_elf(firmware, target, tmp_path, capacity=64)
    runner = HarnessRunner(elf, xlen, "generic5")
    assert runner.stack_size_bytes == 64 << 10 and runner.stack_high_water_bytes is None
    runner.run(records_from_vectors(random_vectors(model(), 100, 1)))
    assert runner.stack_high_water_bytes is not None
    assert 32 <= runner.stack_high_water_bytes < 4096


def result(**fields: object) -> VerifyResult:
    """A VerifyResult for summary tests; fields this file does not know (added later) are None."""
    stats = {"min": 1, "mean": 1.0, "max": 1, "p99": 1}
    base = dict(
        firmware="fw.c", target="rv64imac", profile="dpa", clock_hz=1_800_000_000, vectors=10, mismatches=0,
        mismatch_examples=[], disable_mask_ok=True, cycles=stats, rtt_cycles=stats, instructions=stats,
        worst_case={"cycles": 1}, budget=Budget(cycles=3600, ns=2000.0, full_load=False, hw_threads=1),
        size={"code": 1, "rodata": 1, "data": 0}, context_bytes=28, source_matches_manifest=True,
    )  # fmt: skip
    base |= fields
    required = [f.name for f in dataclasses.fields(VerifyResult) if f.default is dataclasses.MISSING
                and f.default_factory is dataclasses.MISSING]  # fmt: skip
    return VerifyResult(**({n: None for n in required} | base))


def test_summary_names_the_differing_context_word():
    ctx = list(range(12))
    got_ctx = ctx.copy()
    got_ctx[5] = 0x1F41
    example = {
        "index": 7,
        "event_type": "RTT",
        "inputs": {},
        "expected": {"rate": 1636, "rtt_req": 0, "ctx_out": ctx},
        "got": {"rate": 1636, "rtt_req": 0, "ctx_out": got_ctx},
    }
    r = result(mismatches=1, mismatch_examples=[example])
    line = [ln for ln in summary(r).splitlines() if ln.startswith("mismatch #7")][0]
    assert "ctx[5] expected 0x5 got 0x1f41" in line and "rate" not in line


def test_summary_shows_stack_use_when_reported(monkeypatch):
    r = result()
    d = r.to_dict() | {"stack": {"high_water_bytes": 416, "size_bytes": 65536}}
    monkeypatch.setattr(VerifyResult, "to_dict", lambda self: d)
    assert "stack: 416 of 65536 B used (1%)" in summary(r)


@pytest.mark.slow
def test_runner_threads_give_what_one_thread_gives(firmware, tmp_path):
    """run(threads=n) splits the batches over n emulators: same outputs, high-water mark and error."""
    from rlcc.errors import EmulationError
    from rlcc.verify.generators import random_vectors

    records = records_from_vectors(random_vectors(model(), 1000, 1))  # 16 batches of 64
    elf = build_harness_elf(firmware, "rv32imc", tmp_path / "ok", capacity=64)
    one, three = HarnessRunner(elf, 32, "generic5"), HarnessRunner(elf, 32, "generic5")
    out = one.run(records)
    assert np.array_equal(three.run(records, threads=3), out)
    assert three.stack_high_water_bytes == one.stack_high_water_bytes is not None
    assert np.array_equal(three.run(records[:100], threads=3), out[:100])  # fewer batches than threads

    c = with_prologue(firmware, tmp_path, 'if (attr.raw == 0x1234u) __asm__ volatile("ebreak");')
    bad = build_harness_elf(c, "rv32imc", tmp_path / "bad", capacity=64)
    marked = records.copy()
    marked["attr"][[950, 500]] = 0x1234  # in the third and the second of three runs of batches
    errors = []
    for threads in (1, 3):
        with pytest.raises(EmulationError) as e:
            HarnessRunner(bad, 32, "generic5").run(marked, threads=threads)
        errors.append(str(e.value))
    assert "during record 500" in errors[0] and errors[1] == errors[0]
