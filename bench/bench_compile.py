"""Benchmark: wall and CPU time of ``rlcc-compile`` on the bundled example, per stage.

Runs the real command (default options, verification on) as a child process and reads its
stage lines (``rlcc-compile: [t] stage``) as they arrive; each line starts a stage, timed by this script's clock and the
CPU counters of the compiler's process tree (/proc: user + system, simulation workers and the
cross-compiler included), so the README's compile time comes from a results file.

    python bench/bench_compile.py [--model examples/rlcc_mlp.onnx] [--keep DIR]

Writes bench/results/compile.json. Wall time depends on other load (1-min load averages are
recorded); CPU time much less.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import tempfile
import time
from pathlib import Path

from benchlib import machine, shown

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
EXAMPLE = ROOT / "examples" / "rlcc_mlp.onnx"
LOG_LINE = re.compile(r"^rlcc-compile: (?:\[\s*[0-9.]+\s*s\]\s*)?(?P<msg>.+)$")
STAGES = (("sampling", "sampling"), ("fitting", "fitting"), ("round ", None), ("selecting", "candidate selection"),
          ("closed loop", "closed loop"),
          ("generating", "generating C"), ("verifying", "verification"), ("wrote", "writing"), ("fidelity gate", "fidelity gate"))


def stage_name(msg: str) -> str:
    """Short stage name of a progress message ("round 1: ..." keeps its number)."""
    for prefix, name in STAGES:
        if msg.startswith(prefix):
            return name or msg.split(":", 1)[0]
    return " ".join(msg.split()[:3])


def tree_cpu(pid: int) -> float | None:
    """User + system seconds of a running process and all its descendants (live ones, e.g. the
    simulation workers, and reaped ones through cutime/cstime), from /proc."""
    stats: dict[int, list[str]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stats[int(d.name)] = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
    if pid not in stats:
        return None
    tree, todo = set(), [pid]
    while todo:
        p = todo.pop()
        tree.add(p)
        todo += [c for c, f in stats.items() if int(f[1]) == p and c not in tree]
    ticks = os.sysconf("SC_CLK_TCK")
    return sum(int(stats[p][i]) for p in tree for i in (11, 12, 13, 14)) / ticks  # utime stime cutime cstime


def load1() -> float:
    return round(os.getloadavg()[0], 2)


def git_state() -> dict:
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=False).stdout

    dirty = [line[3:] for line in git("status", "--porcelain", "--untracked-files=no").splitlines()]
    return {"commit": git("rev-parse", "HEAD").strip(), "modified_files": dirty}


def run_compile(model: Path, out: Path) -> dict:
    """Run rlcc-compile, timing each progress line's stage; returns the measurement."""
    kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    # --no-progress: the stage-start log lines only (not the "done in" lines of a piped run).
    proc = subprocess.Popen(["rlcc-compile", str(model), "-o", str(out), "--accept-fidelity", "--no-progress"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    marks: list[tuple[str, str, float, float | None]] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        m = LOG_LINE.match(line.rstrip("\n"))
        if m:
            msg = m.group("msg")
            marks.append((stage_name(msg), msg, time.perf_counter() - t0, tree_cpu(proc.pid)))
    rc = proc.wait()
    wall = time.perf_counter() - t0
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (kids.ru_utime - kids0.ru_utime) + (kids.ru_stime - kids0.ru_stime)
    if rc != 0:
        raise SystemExit(f"rlcc-compile exited {rc}")
    stages = []
    for i, (name, msg, start, cpu_start) in enumerate(marks):
        end, cpu_end = (marks[i + 1][2], marks[i + 1][3]) if i + 1 < len(marks) else (wall, cpu)
        stages.append({"stage": name, "message": msg, "start_s": round(start, 2), "wall_s": round(end - start, 2),
                       "cpu_s": None if cpu_start is None or cpu_end is None else round(cpu_end - cpu_start, 2)})
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "stages": stages}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", type=Path, default=EXAMPLE)
    ap.add_argument("--keep", type=Path, help="write the compile output here (default: a temp dir)")
    ap.add_argument("--results", type=Path, default=RESULTS)
    args = ap.parse_args()
    before = load1()
    with tempfile.TemporaryDirectory(prefix="rlcc-bench-compile-") as tmp:
        out = args.keep or Path(tmp) / "out"
        run = run_compile(args.model, out)
    model = shown(args.model)
    path = args.results / "compile.json"
    last = json.loads(path.read_text()) if path.is_file() else {}
    doc = {
        "schema": "rlcc.bench.compile/1",
        "machine": machine(),
        "git": git_state(),
        "command": f"rlcc-compile {model} -o OUT",
        "load_1min_before_after": [before, load1()],
        "note": "stages start at rlcc-compile's progress lines; cpu_s is user + system time of rlcc-compile "
                "and its children (the cross-compiler of the verification)",
        **run,
        # the run before this one, for its figures beside this run's
        "previous": {k: last[k] for k in ("git", "wall_s", "cpu_s", "load_1min_before_after") if k in last} or None,
    }
    args.results.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")
    for s in run["stages"]:
        print(f"{s['stage']:>14}: {s['wall_s']:7.1f} s wall  {s['cpu_s']} s CPU")
    print(f"{'total':>14}: {run['wall_s']:7.1f} s wall  {run['cpu_s']} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
