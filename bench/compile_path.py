"""The compile path's shape: which of rlcc's modules one ``rlcc-compile`` runs through, and how
often the flow comes back up to a higher layer to be sent down again.

Runs ``rlcc-compile`` of the bundled example in this process (``--quick --jobs 1``, so that every
call is seen) under ``sys.setprofile`` and records every call from one rlcc module into another.
Printed (and written to ``--json``):

* ``modules``: distinct rlcc modules that run code during the compile;
* ``climbs``: distinct down-calls, i.e. (caller module, callee module) edges whose caller sits in a
  higher layer than the callee (``core < fxp < simulator < distill < codegen < verify < kinds <
  pipeline < cli``); each is a round trip the flow climbs back up from;
* ``cli_climbs``: those whose caller is a CLI module (the CLI orchestrating stages itself).

Usage: ``python bench/compile_path.py [--json FILE]`` with the rlcc to measure installed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import rlcc

LAYERS = ("rlcc", "fxp", "simulator", "train", "distill", "codegen", "verify", "kinds", "pipeline", "cli")
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "rlcc_mlp.onnx"


def layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS.index(parts[1]) if len(parts) > 1 and parts[1] in LAYERS else 0


def trace_compile(args: list[str]) -> dict[str, set]:
    """Run the compile command with ``args`` and return {"modules", "edges"} of rlcc's modules."""
    from rlcc.cli.main import compile_command

    module_of: dict[str, str | None] = {}
    by_file = {getattr(m, "__file__", None): name for name, m in list(sys.modules.items())}

    def name_of(filename: str) -> str | None:
        if filename not in module_of:
            name = by_file.get(filename)
            if name is None:  # imported during the run
                by_file.update({getattr(m, "__file__", None): n for n, m in list(sys.modules.items())})
                name = by_file.get(filename)
            module_of[filename] = name if name and (name == "rlcc" or name.startswith("rlcc.")) else None
        return module_of[filename]

    modules: set[str] = set()
    edges: set[tuple[str, str]] = set()

    def profile(frame, event, _arg):  # noqa: ANN001 - sys.setprofile's signature
        if event != "call":
            return
        callee = name_of(frame.f_code.co_filename)
        if callee is None:
            return
        modules.add(callee)
        back = frame.f_back
        while back is not None:  # the nearest rlcc frame that called it (through library frames)
            caller = name_of(back.f_code.co_filename)
            if caller is not None:
                if caller != callee:
                    edges.add((caller, callee))
                return
            back = back.f_back

    sys.setprofile(profile)
    try:
        compile_command.main(args, standalone_mode=False)
    finally:
        sys.setprofile(None)
    return {"modules": modules, "edges": edges}


def source_commit() -> str:
    """The commit of the rlcc source tree measured (its checkout beside the ``core/`` folder)."""
    src = Path(rlcc.__file__).resolve().parents[1]
    try:
        out = subprocess.run(["git", "-C", str(src), "log", "-1", "--format=%h %s"], capture_output=True, text=True,
                             check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out[:72]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", type=Path, help="write the counts and edge lists here")
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        found = trace_compile([str(EXAMPLE), "-o", str(Path(tmp) / "OUT"), "--quick", "--jobs", "1", "-q",
                               "--accept-fidelity"])
    down = sorted((a, b) for a, b in found["edges"] if layer(a) > layer(b))
    cli = [(a, b) for a, b in down if layer(a) == LAYERS.index("cli")]
    result = {"rlcc_version": rlcc.__version__, "measured_on": source_commit(), "modules": len(found["modules"]), "climbs": len(down),
              "cli_climbs": len(cli), "cli_edges": [f"{a} -> {b}" for a, b in cli],
              "module_list": sorted(found["modules"])}
    print(f"compile path: {result['modules']} modules, {result['climbs']} climbs "
          f"({result['cli_climbs']} from the CLI)")
    for edge in result["cli_edges"]:
        print(f"  {edge}")
    if opts.json:
        opts.json.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
