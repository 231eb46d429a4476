"""Build the packet-level peer of bench/peer_ns3: ns-3 with the HPCC RDMA/qbb models plus our driver.

Source: github.com/aliyun/ns-3-alibabacloud (ns-3.36, CMake; the network backend of SimAI; the
same RDMA/qbb/switch-MMU models as the HPCC paper's alibaba-edu/High-Precision-Congestion-Control).
Get it and export a work tree outside this repository, e.g.

    git clone https://github.com/aliyun/ns-3-alibabacloud /work/ns3-src
    python bench/peer_ns3/build.py /work/ns3-src --build-dir /work/ns3-build

The HPCC repository's own tree (ns-3.17, waf 1.7, needs a Python 2 interpreter: --python2) is built
the same way and is the fallback peer where ns-3-alibabacloud crashes (see README):

    git clone https://github.com/alibaba-edu/High-Precision-Congestion-Control /work/hpcc-src
    python bench/peer_ns3/build.py /work/hpcc-src --build-dir /work/hpcc-build --python2 python2.7

Only the modules the driver needs are built (point-to-point, applications, internet and their
dependencies; examples, tests, Python bindings off; warnings not errors), niced, with -j2 at most.
The driver ``rlcc-peer.cc`` (next to this script) is copied into the source's ``simulation/scratch/``
(no model or build file is changed). Writes ``BUILD_DIR/build-info.json`` (source commit when the
source is a git checkout, wall seconds and whether the build directory was fresh or an
incremental rebuild, the binary's path) and prints the binary's path.
Not run in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "rlcc-peer.cc"
MODULES = "point-to-point;applications;internet"
CMAKE_FLAGS = (
    "-G", "Ninja", f"-DNS3_ENABLED_MODULES={MODULES}",
    "-DNS3_EXAMPLES=OFF", "-DNS3_TESTS=OFF", "-DNS3_WARNINGS_AS_ERRORS=OFF", "-DNS3_PYTHON_BINDINGS=OFF",
    # SimAI builds this tree with --enable-mtp; the point-to-point module's remote channels need it.
    "-DNS3_MTP=ON", "-DNS3_GTK3=OFF", "-DNS3_SQLITE=OFF", "-DNS3_GSL=OFF", "-DNS3_VISUALIZER=OFF",
    "-DNS3_EMU=OFF", "-DNS3_TAP=OFF",
    # libpoint-to-point uses MtpInterface but does not link libmtp; keep libmtp in the driver's
    # link (g++ links --as-needed by default here, which drops it: "undefined reference to
    # ns3::MtpInterface::g_e_inCriticalSection").
    "-DCMAKE_EXE_LINKER_FLAGS=-Wl,--no-as-needed",
)
TARGET = "scratch_rlcc-peer"
# RdmaHw::SendPacketComplete (rdma-hw.cc) is declared int and flows off its end. g++ at -O1 and
# above turns that into __builtin_unreachable and the release build crashes on the first sent
# packet (SIGSEGV in Object::DoDelete under SendPacketComplete); SimAI builds this tree as debug
# (-O0), where the missing return is harmless. So rdma-hw.cc alone is compiled at -O0, set from a
# CMake project include (no file of the tree is edited).
O0_INCLUDE = """cmake_language(DEFER CALL set_source_files_properties
  "${CMAKE_SOURCE_DIR}/src/point-to-point/model/rdma-hw.cc"
  TARGET_DIRECTORY libpoint-to-point-obj PROPERTIES COMPILE_OPTIONS "-O0")
"""


def find_binary(build_dir: Path) -> Path | None:
    """The built driver (CMake names it ns3.<version>-rlcc-peer[-<profile>], waf rlcc-peer)."""
    hits = sorted((build_dir / "out" / "scratch").glob("ns3*-rlcc-peer*")) + \
        [p for p in [build_dir / "out" / "scratch" / "rlcc-peer"] if p.is_file()]
    return hits[0] if hits else None


WAF_MODULES = "point-to-point,applications,internet"
# g++ 12 on 2013-era ns-3.17: C++11, and its old idioms accepted (-fpermissive), warnings off.
WAF_CXXFLAGS = "-std=c++11 -O2 -fpermissive -w"


def build_waf(src: Path, build_dir: Path, jobs: int, commit: str | None, python2: str) -> dict:
    """The HPCC repository's ns-3.17 tree: waf configure (optimized, only the needed modules) + build."""
    sim = src / "simulation"
    shutil.copyfile(DRIVER, sim / "scratch" / DRIVER.name)
    out = build_dir / "out"
    fresh = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "CXXFLAGS": WAF_CXXFLAGS}
    nice = ["nice", "-n", "15"]
    t0 = time.time()
    subprocess.run(nice + [*python2.split(), "waf", "configure", "-d", "optimized", f"--out={out}",
                           f"--enable-modules={WAF_MODULES}", "--disable-examples", "--disable-tests", "--disable-python"],
                   cwd=sim, env=env, check=True)
    subprocess.run(nice + [*python2.split(), "waf", "build", f"-j{jobs}"], cwd=sim, env=env, check=True)
    wall = time.time() - t0
    binary = find_binary(build_dir)
    if binary is None:
        raise SystemExit(f"build.py: error: the build finished but no rlcc-peer binary is under {out}")
    return {"source": "github.com/alibaba-edu/High-Precision-Congestion-Control", "source_path": str(src),
            "source_commit": commit or source_commit(src), "build_seconds": round(wall, 1), "fresh_build": fresh,
            "binary": str(binary), "lib_dir": str(out), "modules": WAF_MODULES, "jobs": jobs,
            "build_type": f"waf optimized, CXXFLAGS {WAF_CXXFLAGS}"}


def source_commit(src: Path) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def build(src: Path, build_dir: Path, jobs: int, commit: str | None, build_type: str = "release",
          python2: str = "python2") -> dict:
    sim = src / "simulation"
    if not (sim / "src" / "point-to-point" / "model" / "rdma-hw.cc").is_file():
        raise SystemExit(f"build.py: error: {src} is neither ns-3-alibabacloud nor the HPCC repository "
                         "(no simulation/src/point-to-point/model/rdma-hw.cc)")
    if not (sim / "CMakeLists.txt").is_file():
        return record(build_dir, build_waf(src, build_dir, jobs, commit, python2))
    shutil.copyfile(DRIVER, sim / "scratch" / DRIVER.name)
    (build_dir / "out").mkdir(parents=True, exist_ok=True)
    nice = ["nice", "-n", "15"]
    fresh = not (build_dir / "cmake" / "CMakeCache.txt").exists()
    include = build_dir / "rdma-hw-O0.cmake"
    include.write_text(O0_INCLUDE)
    t0 = time.time()
    subprocess.run(nice + ["cmake", "-S", str(sim), "-B", str(build_dir / "cmake"),
                           f"-DNS3_OUTPUT_DIRECTORY={build_dir / 'out'}",
                           f"-DCMAKE_PROJECT_INCLUDE={include}", f"-DCMAKE_BUILD_TYPE={build_type}", *CMAKE_FLAGS], check=True)
    subprocess.run(nice + ["cmake", "--build", str(build_dir / "cmake"), "-j", str(jobs), "--target", TARGET], check=True)
    wall = time.time() - t0
    binary = find_binary(build_dir)
    if binary is None:
        raise SystemExit(f"build.py: error: the build finished but no rlcc-peer binary is under {build_dir / 'out'}")
    info = {"source": "github.com/aliyun/ns-3-alibabacloud", "source_path": str(src),
            "source_commit": commit or source_commit(src), "build_seconds": round(wall, 1),
            "fresh_build": fresh, "binary": str(binary),
            "modules": MODULES, "jobs": jobs, "build_type": build_type}
    return record(build_dir, info)


def record(build_dir: Path, info: dict) -> dict:
    """Write BUILD_DIR/build-info.json. An incremental rebuild of the same source keeps what the
    earlier record knew: the source commit (when this run could not read it) and the fresh build's
    wall time (``fresh_build_seconds``)."""
    path = build_dir / "build-info.json"
    try:
        before = json.loads(path.read_text())
    except (OSError, ValueError):
        before = {}
    if before.get("source_path") == info["source_path"]:
        if info["source_commit"] is None:
            info["source_commit"] = before.get("source_commit")
        if not info["fresh_build"]:
            fresh = before.get("fresh_build_seconds") or (before["build_seconds"] if before.get("fresh_build") else None)
            if fresh is not None:
                info["fresh_build_seconds"] = fresh
    path.write_text(json.dumps(info, indent=2) + "\n")
    return info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", type=Path, help="ns-3-alibabacloud or HPCC-repository work tree (the directory holding simulation/)")
    ap.add_argument("--build-dir", type=Path, required=True, help="where to build (outside this repository)")
    ap.add_argument("--jobs", type=int, default=2, choices=(1, 2))
    ap.add_argument("--commit", help="the source's commit, when the work tree is not a git checkout")
    ap.add_argument("--build-type", choices=("debug", "release"), default="release",
                    help="release (-O3, rdma-hw.cc at -O0; default) or debug (-O0 throughout, as SimAI builds it)")
    ap.add_argument("--python2", default="python2", help="Python 2 command for the HPCC repository's waf")
    args = ap.parse_args(argv)
    build_dir = args.build_dir.resolve()
    if HERE.parents[1] in (build_dir, *build_dir.parents):
        ap.error("--build-dir must be outside the repository")
    try:
        info = build(args.source.resolve(), build_dir, args.jobs, args.commit, args.build_type, args.python2)
    except subprocess.CalledProcessError as e:
        print(f"build.py: error: {' '.join(map(str, e.cmd[:4]))} ... failed with exit code {e.returncode}", file=sys.stderr)
        return 6
    print(json.dumps(info, indent=2))
    return 0


if __name__ == "__main__":
    os.umask(0o022)
    sys.exit(main())
