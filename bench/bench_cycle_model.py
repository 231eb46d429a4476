"""Benchmark: rlcc's cycle model against RTL simulation (Verilator) of real RISC-V cores.

For each validated core (bench/rtl/cores.py: PicoRV32 and Ibex, profiles emulator/profiles/<core>.json):

1. takes the core's RTL from ``--<core> PATH`` (a checkout) or clones the pinned commit from its
   git URL (``--<core> URL``, default the upstream repository) into ``--cache``;
2. builds the Verilator model with its testbench (bench/rtl/tb_<core>.cpp): needs ``verilator``
   (Debian/Ubuntu: ``apt-get install verilator``) and a C++ compiler;
3. builds the bundled example (examples/firmware/firmware.c) into the rv32imc harness ELF exactly
   as ``rlcc-verify --target rv32imc`` does, and runs the manifest's vectors plus the verifier's
   observable, boundary and ``--random`` random vectors on the RTL and on rlcc's emulator with
   the core's profile: per-event cycle error (emulator - RTL) / RTL, max / mean / p99 of its
   magnitude, the signed extremes and the number of under-estimated events;
4. runs the per-class microbenchmarks (bench/rtl/microbench.py) the same way;
5. with ``--fixture``, records per-event RTL cycles of a fixed vector set, with the ELF and the
   input records, under tests/emulator/fixtures/ (checked on every CI run without Verilator by
   tests/emulator/test_cycle_rtl.py).

    python bench/bench_cycle_model.py [--picorv32 PATH|URL] [--ibex PATH|URL] [--random 10000] [--fixture]

Writes bench/results/cycle_model.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from benchlib import cpu_model

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench" / "rtl"))

import cores  # noqa: E402
import microbench  # noqa: E402
from rtl_run import run_on_rtl  # noqa: E402

RESULTS = ROOT / "bench" / "results"
FIXTURES = ROOT / "tests" / "emulator" / "fixtures"
EXAMPLE_C = ROOT / "examples" / "firmware" / "firmware.c"
TARGET = "rv32imc"
FIXTURE_RECORDS = 256  # every k-th vector of the benchmark set, so every event path is in it


def error_stats(emu: np.ndarray, rtl: np.ndarray) -> dict:
    """Per-event relative error (emu - rtl) / rtl: magnitude max/mean/p99 (percent), signed extremes."""
    rel = (emu.astype(float) - rtl) / rtl
    mag = np.abs(rel)
    return {
        "events": int(len(rel)),
        "max_abs_pct": round(100 * float(mag.max()), 3),
        "mean_abs_pct": round(100 * float(mag.mean()), 3),
        "p99_abs_pct": round(100 * float(np.percentile(mag, 99)), 3),
        "mean_signed_pct": round(100 * float(rel.mean()), 3),
        "min_signed_pct": round(100 * float(rel.min()), 3),
        "under_estimated_events": int((rel < 0).sum()),
        "exact_events": int((rel == 0).sum()),
        "rtl_cycles": {"min": int(rtl.min()), "mean": round(float(rtl.mean()), 2), "max": int(rtl.max())},
        "emulator_cycles": {"min": int(emu.min()), "mean": round(float(emu.mean()), 2), "max": int(emu.max())},
    }


def bench_core(core: cores.Core, rtl_dir: Path, build_dir: Path, work: Path, random_count: int, jobs: int,
               fixture: bool) -> dict:
    from rlcc.codegen import manifest as manifest_io
    from rlcc.emulator.cycle_model import load_profile
    from rlcc.fxp.vectors import concat
    from rlcc.verify.generators import verification_set
    from rlcc.verify.firmware_run import build_in
    from rlcc.firmware_sdk_stub import harness_layout as hl
    from rlcc.verify.runner import records_from_vectors

    exe, build_s = cores.build(core, rtl_dir, build_dir, jobs)
    profile = load_profile(core.name)
    _, model, shipped = manifest_io.load(str(EXAMPLE_C.with_suffix(".rlcc.json")))
    vectors = concat(shipped, verification_set(model, 0, random_count)[0])
    records = records_from_vectors(vectors)
    fw = build_in(work / core.name, _copy_example(work / core.name), TARGET, profile)
    alias = core.counter_csr_alias
    rtl_out, info = run_on_rtl(exe, fw.elf, records, alias_counters=alias)
    t0 = time.perf_counter()
    emu_out = fw.runner().run(records)
    emu_s = time.perf_counter() - t0
    for k in ("rate", "rtt_req", "ctx_out", "instret"):
        if not np.array_equal(rtl_out[k], emu_out[k]):
            raise RuntimeError(f"{core.name}: RTL and emulator outputs differ in {k}: the runs are not comparable")
    rtl_c, emu_c = rtl_out["cycles"].astype(np.int64), emu_out["cycles"].astype(np.int64)
    result = {
        "core": core.name, "git_url": core.git_url, "commit": core.commit, "config": core.config,
        "profile": str(profile.path.relative_to(ROOT)), "clock_hz": profile.clock_hz,
        "verilator_build_s": round(build_s, 1),
        "rtl_sim": {"events": len(records), "clock_cycles": int(info["cycles"]), "wall_s": round(info["wall_s"], 2),
                    "cycles_per_s": round(info["cycles"] / info["wall_s"])},
        "emulator_wall_s": round(emu_s, 3),
        "outputs_identical": True,
        "per_event": error_stats(emu_c, rtl_c),
        "worst_case_ns": {"rtl": round(int(rtl_c.max()) * 1e9 / profile.clock_hz, 1),
                          "emulator": round(int(emu_c.max()) * 1e9 / profile.clock_hz, 1)},
        "microbench": microbenchmarks(core, exe, work / core.name / "micro", profile),
    }
    if fixture:
        step = max(1, len(records) // FIXTURE_RECORDS)
        pick = np.arange(0, len(records), step)[:FIXTURE_RECORDS]
        write_fixture(core, fw.elf, records[pick], rtl_c[pick], profile.name, hl)
    return result


def _copy_example(dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for p in EXAMPLE_C.parent.glob("firmware.*"):
        shutil.copy(p, dest / p.name)
    return dest / EXAMPLE_C.name


def microbenchmarks(core: cores.Core, exe: Path, work: Path, profile) -> dict:
    """{class: {rtl, emulator, error_pct, rtl_/model_cycles_per_copy, body_error_pct}} of one record per
    class; the body figures subtract the empty body's cycles (the harness's own overhead) first."""
    from rlcc.firmware_sdk_stub import harness_layout as hl
    from rlcc.verify.firmware_run import build_in

    work.mkdir(parents=True, exist_ok=True)
    recs = hl.new_records(2)  # the second record runs with warm state (the first pays nothing extra here)
    out, empty, empty_emu = {}, None, None
    for name in microbench.CLASSES:
        fw = build_in(work, microbench.write_firmware(name, work), TARGET, profile)
        rtl = int(run_on_rtl(exe, fw.elf, recs, alias_counters=core.counter_csr_alias)[0]["cycles"][1])
        emu = int(fw.runner().run(recs)["cycles"][1])
        if name == "empty":
            empty, empty_emu = rtl, emu
        body_rtl, body_emu = rtl - empty, emu - empty_emu
        out[name] = {"rtl": rtl, "emulator": emu, "error_pct": round(100 * (emu - rtl) / rtl, 3),
                     "rtl_cycles_per_copy": round(body_rtl / microbench.REPEAT, 3),
                     "model_cycles_per_copy": round(body_emu / microbench.REPEAT, 3),
                     "body_error_pct": round(100 * (body_emu - body_rtl) / body_rtl, 3) if body_rtl else 0.0}
    return out


def write_fixture(core: cores.Core, elf: Path, records: np.ndarray, rtl_cycles: np.ndarray, profile: str, hl) -> None:
    """tests/emulator/fixtures/rtl_<core>.{elf,npz,json}: the ELF, input records and RTL cycles."""
    FIXTURES.mkdir(parents=True, exist_ok=True)
    stem = FIXTURES / f"rtl_{core.name}"
    shutil.copy(elf, stem.with_suffix(".elf"))
    np.savez_compressed(stem.with_suffix(".npz"), records=records, rtl_cycles=rtl_cycles.astype(np.int64))
    meta = {"core": core.name, "commit": core.commit, "config": core.config, "profile": profile, "target": TARGET,
            "elf_sha256": hashlib.sha256(elf.read_bytes()).hexdigest(), "records": int(len(records)),
            "source": "bench/bench_cycle_model.py --fixture (RTL cycles from the core's cycle CSR in the harness)"}
    stem.with_suffix(".json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for c in cores.CORES.values():
        ap.add_argument(f"--{c.name}", metavar="PATH|URL", help=f"RTL checkout or git URL (default {c.git_url} @ {c.commit[:12]})")
    ap.add_argument("--cores", default=",".join(cores.CORES), help="comma-separated cores to run")
    ap.add_argument("--random", type=int, default=10000, help="random vectors on top of manifest/observable/boundary ones")
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "rlcc-rtl", help="clones and builds")
    ap.add_argument("--jobs", type=int, default=1, help="parallel C++ compile jobs for Verilator")
    ap.add_argument("--fixture", action="store_true", help="also rewrite the CI fixture under tests/emulator/fixtures/")
    ap.add_argument("--out", type=Path, default=RESULTS / "cycle_model.json")
    args = ap.parse_args(argv)
    verilator = subprocess.run(["verilator", "--version"], capture_output=True, text=True).stdout.strip() if shutil.which("verilator") else None
    if verilator is None:
        print("bench_cycle_model: verilator not found; install it (Debian/Ubuntu: apt-get install verilator)", file=sys.stderr)
        return 2
    results = []
    with tempfile.TemporaryDirectory(prefix="rlcc-cm-") as work:
        for name in args.cores.split(","):
            core = cores.CORES[name]
            rtl_dir = cores.ensure_rtl(core, getattr(args, name), args.cache)
            print(f"{name}: RTL {rtl_dir}", file=sys.stderr)
            r = bench_core(core, rtl_dir, args.cache / "build", Path(work), args.random, args.jobs, args.fixture)
            pe = r["per_event"]
            print(f"{name}: {pe['events']} events, error max {pe['max_abs_pct']}% mean {pe['mean_abs_pct']}%"
                  f" p99 {pe['p99_abs_pct']}%, under-estimated {pe['under_estimated_events']}", file=sys.stderr)
            results.append(r)
    doc = {"schema": "rlcc.bench.cycle_model/1", "machine": {"cpu": cpu_model(), "python": platform.python_version()},
           "verilator": verilator, "target": TARGET, "firmware": str(EXAMPLE_C.relative_to(ROOT)),
           "random_vectors": args.random, "microbench_repeat": microbench.REPEAT, "cores": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
