"""Benchmark: mutation analysis of generated firmware: how many off-by-one mutants does
rlcc-verify's vector set kill, and what does finding out cost?

For each firmware directory (default: examples/firmware; later the seeds of a compile) and each
target, ``rlcc.verify.mutants.run_mutation_analysis`` builds every mutant (thresholds and
reachable leaves +-1, bias, clamp and probe-timeout defaults +-1, inclusive comparisons,
rounding shifts, history-shift word errors, probe-timeout test) with zig cc and replays the
default verification vectors (manifest + boundary + 100k random) in rlcc's emulator.

    python bench/bench_mutants.py [FIRMWARE_DIR ...] [--compile-seeds 1,2,3,4] [--targets rv64imac,rv32imc]
                                  [--jobs 2] [--prove]

``--compile-seeds`` compiles the example policy with those seeds first (``rlcc-compile
examples/rlcc_mlp.onnx --seed N --no-verify``, into a temporary directory); the bundled example
itself is the default seed's compile (``.ci/run`` checks it byte for byte).

Writes bench/results/mutants.json (``runs``: one entry per firmware and target).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import machine, shown

from rlcc.targets import TARGET_NAMES

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
DEFAULT_DIRS = [ROOT / "examples" / "firmware"]
POLICY = ROOT / "examples" / "rlcc_mlp.onnx"


def cpu_seconds() -> float:
    """User + system time of this process and its finished children (the compilers)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def compile_seed(seed: int, out: Path) -> Path:
    """The example policy compiled with ``seed`` into ``out`` (no verification: the bench does it)."""
    subprocess.run(["rlcc-compile", str(POLICY), "-o", str(out), "--seed", str(seed), "--no-verify", "-q", "--accept-fidelity"], check=True)
    return out


def compile_seed_of(fw_dir: Path) -> int | None:
    """The compile seed of a firmware directory: its report.json's, or the CLI default for the
    bundled example (which .ci/run proves is the default compile)."""
    report = fw_dir / "report.json"
    if report.is_file():
        return json.loads(report.read_text()).get("options", {}).get("seed")
    if fw_dir.resolve() == DEFAULT_DIRS[0].resolve():
        from rlcc.distill.pipeline import CompileOptions

        return CompileOptions().seed
    return None


def bench_one(fw_dir: Path, target: str, jobs: int, prover) -> dict:
    from rlcc.codegen import manifest as manifest_io
    from rlcc.verify.mutants import run_mutation_analysis

    c_file = fw_dir / "firmware.c"
    raw, model, _ = manifest_io.load(str(c_file.with_name("firmware.rlcc.json")))
    cpu0 = time.perf_counter(), cpu_seconds()
    report = run_mutation_analysis(c_file, None, target, prover=prover, jobs=jobs)
    wall, cpu = time.perf_counter() - cpu0[0], cpu_seconds() - cpu0[1]
    d = report.to_dict()
    seed = compile_seed_of(fw_dir)
    inside = c_file.resolve().is_relative_to(ROOT)
    return {
        "firmware": shown(c_file) if inside else f"rlcc-compile {shown(POLICY)} --seed {seed}",
        "seed": seed,
        "firmware_c_sha256": hashlib.sha256(c_file.read_bytes()).hexdigest(),
        "tree_style": raw.get("tree_style"),
        "trees": len(model.trees),
        "comparisons": sum(t.depth for t in model.trees),
        "target": target,
        "profile": d["profile"],
        "vectors": d["vectors"],
        **{k: d[k] for k in ("mutants", "killed", "equivalent", "survived", "stillborn", "kill_rate", "by_kind")},
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "ms_per_mutant_cpu": round(1000 * cpu / max(d["mutants"], 1), 1),
        "survivors": [s["id"] for s in d["survivors"]],
        "equivalent_list": [s["id"] for s in d["equivalent_list"]],
    }


def table(runs: list[dict]) -> str:
    rows = ["| firmware | target | mutants | killed | equivalent | survived | stillborn | kill rate | wall s | CPU s |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in runs:
        rate = "n/a" if r["kill_rate"] is None else f"{100 * r['kill_rate']:.1f}%"
        rows.append(f"| {r['firmware']} | {r['target']} | {r['mutants']} | {r['killed']} | {r['equivalent']} | "
                    f"{r['survived']} | {r['stillborn']} | {rate} | {r['wall_s']} | {r['cpu_s']} |")
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="*", type=Path, help="firmware directories (firmware.c/.h/.rlcc.json)")
    ap.add_argument("--compile-seeds", default="", help="comma list: compile the example policy with these seeds too")
    ap.add_argument("--targets", default=",".join(TARGET_NAMES))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--prove", action="store_true", help="send survivors to rlcc.verify.prove.prove_firmware")
    ap.add_argument("--results", type=Path, default=RESULTS)
    args = ap.parse_args()
    prover = None
    if args.prove:
        from rlcc.verify.prove import prove_firmware as prover  # type: ignore[import-not-found]

    t_start = time.perf_counter()
    runs = []
    scratch = tempfile.TemporaryDirectory(prefix="rlcc-bench-seeds-")
    dirs = list(args.dirs or DEFAULT_DIRS)
    dirs += [compile_seed(int(n), Path(scratch.name) / f"seed{n}") for n in args.compile_seeds.split(",") if n]
    for fw_dir in dirs:
        for target in args.targets.split(","):
            runs.append(bench_one(fw_dir, target, args.jobs, prover))
            r = runs[-1]
            print(f"{r['firmware']} {target}: {r['killed']}/{r['mutants']} killed, {r['survived']} survived, "
                  f"{r['wall_s']} s wall, {r['cpu_s']} s CPU", file=sys.stderr)
    doc = {
        "schema": "rlcc.bench.mutants/1",
        "machine": {**machine(),
                    "zig": subprocess.run([sys.executable, "-m", "ziglang", "version"], capture_output=True,
                                          text=True).stdout.strip()},
        "jobs": args.jobs,
        "prover": "rlcc.verify.prove.prove_firmware" if prover else None,
        "vectors": "manifest + rlcc.verify.mutants.default_vectors (boundary + 100k random, or verification_set)",
        "note": "wall_s depends on other load on the machine; cpu_s (this process + compilers) does not",
        "runs": runs,
        "bench_seconds": round(time.perf_counter() - t_start, 1),
    }
    args.results.mkdir(parents=True, exist_ok=True)
    (args.results / "mutants.json").write_text(json.dumps(doc, indent=2) + "\n")
    print(table(runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
