"""`rlcc-verify`: check generated firmware against the golden model in the RISC-V emulator."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

import click
from rlcc.cli.common import PORTS, POSITIVE_FLOAT, BoundedInt, FilePath, guarded, standalone
from rlcc.pipeline.outdir import check_writable_file
from rlcc.errors import BadInputError, ExitCode
from rlcc.firmware_sdk_stub.doca_layout import DEFAULT_LAYOUT, LAYOUT_NAMES
from rlcc.targets import DEFAULT_TARGET, TARGET_NAMES, TARGETS
from rlcc.verify.check import (
    ASSURANCE_LEVELS,
    DEFAULT_BUDGET_NS,
    DEFAULT_PROVE_TIMEOUT_S,
    DEFAULT_RANDOM_VECTORS,
    MAX_JOBS,
    MAX_RANDOM_VECTORS,
    manifest_path_for,
    random_bound_text,
)
from rlcc.kinds.base import VerifyRequest
from rlcc.kinds.switch_agent.check import DEFAULT_PORTS
from rlcc.pipeline.verify import verdict
from rlcc.pipeline.verify import verify as pipeline_verify


@click.command("verify")
@click.argument("firmware", type=FilePath())
@click.option("--manifest", type=FilePath(), help="Firmware manifest (default: FIRMWARE with .rlcc.json).")
@click.option("--target", type=click.Choice(TARGET_NAMES), default=DEFAULT_TARGET.name, show_default=True, help="RISC-V target to cross-compile for.")
@click.option("--profile", help="Cycle-model profile name or JSON file (default: "
              + ", ".join(f"{t.default_profile} for {t.name}" for t in TARGETS.values())
              + "); a comma-separated list also reports the worst case under the others (each on its own"
              " XLEN's target), e.g. dpa,ibex,cv32e40p,picorv32. The first profile gates the budget.")
@click.option("--cc", help="Cross-compiler command (default: clang from the ziglang wheel), e.g. riscv64-unknown-elf-gcc.")
@click.option("--budget-cycles", type=BoundedInt(1), help="Fail if any event takes more cycles than this.")
@click.option("--budget-ns", type=POSITIVE_FLOAT, help=f"Fail if any event takes longer than this at the profile clock (default {DEFAULT_BUDGET_NS:g} ns).")
@click.option("--full-load", is_flag=True, help="Budget in time with every hardware thread of the core busy.")
@click.option("--random", "random_count", type=BoundedInt(0, MAX_RANDOM_VECTORS, random_bound_text()),
              default=DEFAULT_RANDOM_VECTORS, show_default=True,
              help=f"Random-extreme vectors on top of the observable, boundary, sequence and pinned manifest vectors; at most {MAX_RANDOM_VECTORS:,} ({random_bound_text()}).")
@click.option("--policy", "policy", type=FilePath(),
              help="The reviewed ONNX policy: recompile it with the manifest's recorded options (or take this rlcc's "
                   "cached compile of it) and fail (exit 9) unless the manifest, C and header are exactly what it compiles to.")
@click.option("--expect-sha256", "expect_sha256", metavar="DIGEST",
              help="Fail (exit 9) unless the manifest's sha256 is DIGEST (it pins the C, header and model by hash): the "
                   "firmware digest a trusted run printed, for pipelines that keep the policy elsewhere.")
@click.option("--require", "require", type=click.Choice(ASSURANCE_LEVELS), default=ASSURANCE_LEVELS[0], show_default=True,
              help="Assurance the gate needs: sampled (the vectors) or proven (implies --prove; a proof that does not "
                   "complete exits 10).")
@click.option("--prove", is_flag=True, help="Also prove equivalence with the golden model for all inputs (z3; symbolic execution of the ELF).")
@click.option("--prove-timeout", type=POSITIVE_FLOAT, default=DEFAULT_PROVE_TIMEOUT_S, show_default=True, help="Seconds the proof may take; past it the result is 'not proven (timeout)'.")
@click.option("--mutants", is_flag=True, help="Run the built-in mutation analysis (off-by-one mutants of the C) and report kills and survivors.")
@click.option("--jobs", type=BoundedInt(1, MAX_JOBS), default=2, show_default=True, help="Parallel mutant builds.")
@click.option("--seed", type=BoundedInt(0), default=0, show_default=True, help="Seed of the generated vectors (boundary, random and switch-agent intervals); same seed, same vectors.")
@click.option("--json", "json_path", type=FilePath(), help="Write the result as JSON (stable schema rlcc.verify/1).")
@click.option("--junit", "junit_path", type=FilePath(), help="Write a JUnit XML report.")
@click.option("-q", "--quiet", is_flag=True, help="Print only failures.")
@click.option("--ports", "n_ports", type=PORTS, default=DEFAULT_PORTS, show_default=True,
              help="Switch-agent firmware: ports (one queue each) in the measured monitoring interval.")
@click.option("--budget-us", type=POSITIVE_FLOAT, help="Switch-agent firmware: fail if one monitoring interval over "
              "--ports ports takes longer than this (default: the spec's interval).")
@click.option("--doca-layout", type=click.Choice(LAYOUT_NAMES), default=None,
              help=f"--sdk doca firmware: the DOCA PCC device layout to build and run it against "
                   f"(DOCA {DEFAULT_LAYOUT}, or DOCA 3.x BlueField-3 / ConnectX-8; docs/doca.md) [default: {DEFAULT_LAYOUT}].")
@guarded("rlcc-verify")
def verify_command(
    firmware: Path,
    manifest: Path | None,
    target: str,
    profile: str | None,
    cc: str | None,
    budget_cycles: int | None,
    budget_ns: float | None,
    full_load: bool,
    random_count: int,
    prove: bool,
    prove_timeout: float,
    mutants: bool,
    jobs: int,
    seed: int,
    json_path: Path | None,
    junit_path: Path | None,
    quiet: bool,
    n_ports: int = DEFAULT_PORTS,
    budget_us: float | None = None,
    policy: Path | None = None,
    expect_sha256: str | None = None,
    require: str = "sampled",
    doca_layout: str | None = None,
) -> None:
    """Cross-compile FIRMWARE (C) for RISC-V, run it in rlcc's emulator on the manifest's vectors
    plus boundary and random-extreme vectors, and compare every output bit for bit with the
    golden model. Exits 4 on a mismatch (or a counterexample from --prove, or a surviving
    non-equivalent mutant with --mutants) and 5 when the worst-case event exceeds the budget.
    A switch-agent manifest ("kind": "switch_agent") runs the switch check instead: per-queue
    decisions and whole monitoring intervals over --ports ports, budget --budget-us.

    Trust: the files must match their manifest (exit 9 otherwise); without --policy or
    --expect-sha256 the verdict is relative to that manifest and says so. The verdict names the
    assurance reached: sampled (the vectors) or proven (--prove); --require proven gates on it."""
    prove = prove or require == "proven"
    for path, option in ((json_path, "--json"), (junit_path, "--junit")):
        if path is not None:
            check_writable_file(path, option)
    profiles = tuple(p.strip() for p in profile.split(",")) if profile else ()
    if any(not p for p in profiles):
        raise BadInputError(f"--profile {profile!r}: empty profile name in the list")
    request = VerifyRequest(
        firmware=firmware, manifest=manifest or manifest_path_for(firmware), target=target, profiles=profiles, cc=cc,
        budget_ns=budget_ns, random_count=random_count, seed=seed, prove=prove, prove_timeout_s=prove_timeout,
        mutants=mutants, jobs=jobs, policy=policy, expect_sha256=expect_sha256,
        progress=not quiet and sys.stderr.isatty(),
        options={"budget_cycles": budget_cycles, "full_load": full_load, "junit": junit_path, "doca_layout": doca_layout,
                 "ports": n_ports, "budget_us": budget_us})
    outcome = pipeline_verify(request, _policy_log(quiet))
    if json_path and outcome.write_json is not None:
        outcome.write_json(json_path)
    if junit_path and outcome.write_junit is not None:
        outcome.write_junit(junit_path)
    if not quiet or not outcome.result.passed:
        for line in outcome.summary:
            click.echo(line)
    code, line = verdict(outcome, require)
    if code != ExitCode.OK:
        click.echo(f"rlcc-verify: error: {line}", err=True)
        sys.exit(int(code))
    click.echo(f"rlcc-verify: {line}")


def _policy_log(quiet: bool) -> Callable[[str], None]:
    """Stage lines of the --policy recompile (seconds of work) on stderr, unless --quiet."""
    return (lambda _m: None) if quiet else (lambda m: click.echo(f"rlcc-verify: --policy: {m}", err=True))


standalone(verify_command)
