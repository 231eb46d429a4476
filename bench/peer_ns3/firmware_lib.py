"""A generated firmware as a host shared library, for the packet-level peer's RL controller (CC_MODE 11).

    python bench/peer_ns3/firmware_lib.py examples/firmware/firmware.rlcc.json --work-dir /tmp/rlcc-fw-libs

compiles the manifest's ``firmware.c`` with the SDK stub's host runtime (``pcc_runtime.c``) and
``rlcc_peer_shim.c`` (next to this script: ``rlcc_peer_init``, ``rlcc_peer_event``,
``rlcc_peer_rtt_event``) into ``WORK_DIR/fw-<hash>/librlcc-firmware.so`` and prints its path.
The hash covers every source, header, flag and the compiler command, so a library is built once
per firmware and rebuilt whenever any input changes. Compiler: ``--cc`` (e.g. "gcc"), else gcc when
on PATH, else rlcc's own host compiler (zig's clang from the ziglang wheel), -Wall -Wextra -Werror.
The library's decisions are checked against rlcc's golden model in CI (tests/test_peer_ns3.py), and
rlcc-peer.cc dlopens it at run time (one peer binary, any firmware).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from rlcc import firmware_sdk_stub as sdk
from rlcc.errors import BuildError
from rlcc.verify import toolchain

HERE = Path(__file__).resolve().parent
SHIM = HERE / "rlcc_peer_shim.c"
LIB_NAME = "librlcc-firmware.so"
CFLAGS = ("-shared", "-fPIC", "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror")
SDK_HEADERS = ("pcc_sdk.h", "pcc_fxp.h", "rlcc_runtime.h")
RUNTIME = sdk.SDK_DIR / "pcc_runtime.c"


class FirmwareLibError(ValueError):
    """The manifest or its sources are unusable (bad input), or the compiler failed."""


def firmware_sources(manifest: Path) -> tuple[Path, Path]:
    """(firmware.c, firmware.h) named by a ``firmware.rlcc.json`` manifest, checked against its sha256s."""
    try:
        data = json.loads(Path(manifest).read_text())
        files = data["files"]
        out = []
        for key in ("c", "h"):
            path = Path(manifest).parent / files[key]["path"]
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            if digest != files[key]["sha256"]:
                raise FirmwareLibError(f"{path}: sha256 differs from the manifest {manifest}")
            out.append(path)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        if isinstance(exc, FirmwareLibError):
            raise
        raise FirmwareLibError(f"{manifest}: not a readable firmware manifest with files.c / files.h ({exc})") from None
    return out[0], out[1]


def compiler_command(cc: str | None = None) -> list[str]:
    """``cc`` split into words; by default gcc when on PATH, else rlcc's host compiler (zig's clang)."""
    if cc:
        return shlex.split(cc)
    if shutil.which("gcc"):
        return ["gcc"]
    try:
        return toolchain.host_compiler()
    except BuildError as exc:
        raise FirmwareLibError(f"no C compiler: no gcc on PATH and {exc}") from None


def build_library(manifest: Path, work_dir: Path, cc: str | None = None) -> Path:
    """The shared library of ``manifest``'s firmware under ``work_dir`` (built unless present)."""
    c_file, h_file = firmware_sources(manifest)
    command = compiler_command(cc)
    inputs = [c_file, h_file, RUNTIME, SHIM] + [sdk.SDK_DIR / h for h in SDK_HEADERS]
    h = hashlib.sha256(" ".join(command + list(CFLAGS)).encode())
    for p in inputs:
        h.update(p.name.encode() + b"\0" + p.read_bytes())
    out_dir = Path(work_dir) / f"fw-{h.hexdigest()[:16]}"
    lib = out_dir / LIB_NAME
    if lib.is_file():
        return lib
    if shutil.which(command[0]) is None:
        raise FirmwareLibError(f"no C compiler {command[0]!r} on PATH")
    out_dir.mkdir(parents=True, exist_ok=True)
    tmp = out_dir / f".{LIB_NAME}.{os.getpid()}"
    cmd = [*command, *CFLAGS, f"-I{c_file.parent}", *(f"-I{d}" for d in sdk.include_dirs()),
           str(c_file), str(RUNTIME), str(SHIM), "-o", str(tmp)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        tmp.unlink(missing_ok=True)
        first = (done.stderr.strip().splitlines() or ["(no output)"])[0]
        raise FirmwareLibError(f"{' '.join(command)} failed on {c_file.name} (exit {done.returncode}): {first}")
    tmp.replace(lib)  # atomic: a concurrent or interrupted build never leaves half a library
    return lib


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("manifest", type=Path, help="the firmware's .rlcc.json manifest")
    ap.add_argument("--work-dir", type=Path, default=Path("/tmp/rlcc-fw-libs"))
    ap.add_argument("--cc", default=None, help="compiler command (default: gcc, else zig's clang)")
    args = ap.parse_args(argv)
    try:
        print(build_library(args.manifest, args.work_dir, args.cc))
    except FirmwareLibError as exc:
        print(f"firmware_lib.py: error: {exc}", file=sys.stderr)
        return 3 if "failed on" not in str(exc) else 6
    return 0


if __name__ == "__main__":
    sys.exit(main())
