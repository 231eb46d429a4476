"""Benchmark: rlcc's RISC-V emulator vs unicorn on the same compiled integer program.

Peers: unicorn (QEMU TCG JIT) without hooks, and unicorn with a per-instruction Python counting
hook (the fair peer for an emulator that accounts every instruction). The program is the
tree-ensemble-like loop of tests/emulator/progs/trees.c compiled with zig cc -O2.

    python bench/bench_emulator.py [--rounds 5000] [--repeat 5]

Writes bench/results/emulator.json and bench/results/emulator.md; the run before this one is kept
beside it ("previous": its figures per ISA), and the 1-minute load before and after is recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import cpu_model

ROOT = Path(__file__).resolve().parent.parent
PROGS = ROOT / "tests" / "emulator" / "progs"
RESULTS = ROOT / "bench" / "results"
BASE, SIZE = 0x10000, 4 << 20


def load1() -> float:
    return round(os.getloadavg()[0], 2)


def git_commit() -> str:
    out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False).stdout
    return out.strip()


def build(xlen: int, rounds: int, out_dir: Path) -> Path:
    from rlcc.verify.toolchain import compile_riscv

    return compile_riscv(
        [PROGS / "crt0.c", PROGS / "trees.c"],
        target="rv64imac" if xlen == 64 else "rv32imc",
        linker_script=PROGS / "link.ld",
        out_path=out_dir / f"trees{xlen}.elf",
        extra_flags=[f"-DROUNDS={rounds}"],
    )


def run_rlcc(path: Path, xlen: int, repeat: int) -> dict:
    from rlcc.emulator import Machine

    best, res, out = float("inf"), None, None
    for _ in range(repeat):
        m = Machine(xlen=xlen, profile="generic5", mem_base=BASE, mem_size=SIZE)
        elf = m.load_elf(path)
        t0 = time.perf_counter()
        res = m.run(max_instructions=1_000_000_000)
        best = min(best, time.perf_counter() - t0)
        out = m.read_mem(elf.addr("out"), 16)
    assert res is not None and res.halt_reason == "ecall"
    return {"seconds": best, "instructions": res.instret, "cycles": res.cycles, "out": out.hex()}


def run_unicorn(path: Path, xlen: int, hook: bool, repeat: int) -> dict:
    from unicorn import UC_ARCH_RISCV, UC_HOOK_CODE, UC_HOOK_INTR, UC_MODE_RISCV32, UC_MODE_RISCV64, Uc
    from unicorn import riscv_const as rc

    from rlcc.emulator.elf_loader import load_elf

    best, count, out = float("inf"), 0, None
    for _ in range(repeat):
        uc = Uc(UC_ARCH_RISCV, UC_MODE_RISCV32 if xlen == 32 else UC_MODE_RISCV64)
        uc.mem_map(BASE, SIZE)

        class Mem:
            def write_mem(self, addr: int, data: bytes) -> None:
                uc.mem_write(addr, bytes(data))

        elf = load_elf(path, Mem(), xlen, BASE, SIZE)
        uc.reg_write(rc.UC_RISCV_REG_SP, BASE + SIZE - 16)
        uc.hook_add(UC_HOOK_INTR, lambda u, intno, _: u.emu_stop())
        counter = [0]
        if hook:
            def on_code(_u, _addr, _size, _user):
                counter[0] += 1

            uc.hook_add(UC_HOOK_CODE, on_code)
        t0 = time.perf_counter()
        uc.emu_start(elf.entry, 0)
        best = min(best, time.perf_counter() - t0)
        count = counter[0]
        out = bytes(uc.mem_read(elf.addr("out"), 16))
    return {"seconds": best, "hook_count": count if hook else None, "out": out.hex()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5000, help="inference rounds in the guest program")
    ap.add_argument("--repeat", type=int, default=5, help="best-of repetitions (hooked unicorn: 1)")
    ap.add_argument("--out-dir", type=Path, default=RESULTS)
    args = ap.parse_args()

    import unicorn

    before = load1()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for xlen in (64, 32):
            path = build(xlen, args.rounds, Path(tmp))
            r = run_rlcc(path, xlen, args.repeat)
            n = r["instructions"]
            un = run_unicorn(path, xlen, hook=False, repeat=args.repeat)
            uh = run_unicorn(path, xlen, hook=True, repeat=1)
            assert r["out"] == un["out"] == uh["out"], "emulators disagree on the program output"
            # unicorn's code hook fires once per executed instruction; the ecall that stops it
            # is counted by rlcc as retired but may or may not reach the hook.
            assert abs(uh["hook_count"] - n) <= 1, (uh["hook_count"], n)
            row = {
                "isa": "rv64imac" if xlen == 64 else "rv32imc",
                "instructions": n,
                "modelled_cycles_generic5": r["cycles"],
                "rlcc_s": r["seconds"],
                "unicorn_nohook_s": un["seconds"],
                "unicorn_hook_s": uh["seconds"],
                "rlcc_mips": n / r["seconds"] / 1e6,
                "unicorn_nohook_mips": n / un["seconds"] / 1e6,
                "unicorn_hook_mips": n / uh["seconds"] / 1e6,
            }
            row["rlcc_vs_unicorn_nohook"] = row["rlcc_mips"] / row["unicorn_nohook_mips"]
            row["rlcc_vs_unicorn_hook"] = row["rlcc_mips"] / row["unicorn_hook_mips"]
            rows.append(row)
            print(
                f"{row['isa']}: {n} instr | rlcc {row['rlcc_mips']:.1f} MIPS | unicorn (no hook) "
                f"{row['unicorn_nohook_mips']:.1f} MIPS | unicorn (count hook) {row['unicorn_hook_mips']:.2f} MIPS"
            )

    machine = {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "unicorn": unicorn.__version__,
    }
    path = args.out_dir / "emulator.json"
    last = json.loads(path.read_text()) if path.is_file() else {}
    keep = ("isa", "rlcc_mips", "unicorn_nohook_mips", "rlcc_vs_unicorn_nohook")
    doc = {
        "benchmark": "trees.c (tree-ensemble-like integer loop), zig cc -O2, best of repeats; "
                     "rlcc has cycle accounting (generic5 profile) always on",
        "rounds": args.rounds,
        "machine": machine,
        "git": git_commit(),
        "load_1min_before_after": [before, load1()],
        "results": rows,
        # the run before this one, for its figures beside this run's
        "previous": {"git": last.get("git"), "load_1min_before_after": last.get("load_1min_before_after"),
                     "results": [{k: r[k] for k in keep} for r in last["results"]]} if last.get("results") else None,
    }
    prev = {r["isa"]: r for r in doc["previous"]["results"]} if doc["previous"] else {}
    args.out_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")
    md = [
        "# Emulator benchmark",
        "",
        f"Program: `tests/emulator/progs/trees.c` with ROUNDS={args.rounds} (zig cc -O2), same ELF on every "
        "emulator; outputs checked equal. Time = best of repeats of the run call only (hooked unicorn: one run).",
        "rlcc runs with the generic5 cycle model on (per-instruction cycle/class accounting, load-use detection).",
        "",
        f"Machine: {machine['cpu']}, {machine['cores']} cores, {machine['platform']}, Python {machine['python']}, "
        f"unicorn {machine['unicorn']}. 1-minute load before / after: {doc['load_1min_before_after'][0]} / "
        f"{doc['load_1min_before_after'][1]}.",
        "",
        "| ISA | instructions | rlcc MIPS | unicorn no hook MIPS | unicorn + count hook MIPS | rlcc / unicorn | rlcc / unicorn+hook "
        "| previous run: rlcc MIPS, rlcc / unicorn |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        p = prev.get(r["isa"])
        was = f"{p['rlcc_mips']:.1f}, {p['rlcc_vs_unicorn_nohook']:.2f}x" if p else "-"
        md.append(
            f"| {r['isa']} | {r['instructions']:,} | {r['rlcc_mips']:.1f} | {r['unicorn_nohook_mips']:.1f} | "
            f"{r['unicorn_hook_mips']:.2f} | {r['rlcc_vs_unicorn_nohook']:.2f}x | {r['rlcc_vs_unicorn_hook']:.0f}x | {was} |"
        )
    md.append("")
    (args.out_dir / "emulator.md").write_text("\n".join(md))
    print(f"wrote {args.out_dir / 'emulator.json'} and {args.out_dir / 'emulator.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
