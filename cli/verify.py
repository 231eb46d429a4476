"""`rlcc-verify`: check generated firmware against the golden model in the RISC-V emulator."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rlcc.cli.common import PORTS, POSITIVE_FLOAT, BoundedInt, FilePath, check_writable_file, guarded
from rlcc.errors import BadInputError, ExitCode
from rlcc.firmware_sdk_stub.doca_layout import DEFAULT_LAYOUT, LAYOUT_NAMES
from rlcc.targets import DEFAULT_TARGET, TARGET_NAMES, TARGETS
from rlcc.verify.check import (
    ASSURANCE_LEVELS,
    DEFAULT_BUDGET_NS,
    DEFAULT_PROVE_TIMEOUT_S,
    DEFAULT_RANDOM_VECTORS,
    assurance_level,
    MAX_JOBS,
    MAX_RANDOM_VECTORS,
    random_bound_text,
)
from rlcc.kinds.switch_agent.check import DEFAULT_PORTS

if TYPE_CHECKING:
    from rlcc.emulator.cycle_model import Profile


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
              help=f"Random-extreme vectors on top of the observable, boundary and manifest vectors; at most {MAX_RANDOM_VECTORS:,} ({random_bound_text()}).")
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
    from rlcc.kinds.switch_agent.codegen import KIND as SWITCH_KIND, manifest_kind
    from rlcc.verify.check import manifest_path_for

    if manifest_kind(manifest or manifest_path_for(firmware)) == SWITCH_KIND:
        unsupported = [name for name, on in (("--full-load", full_load),
                                             ("--budget-cycles", budget_cycles is not None), ("--junit", junit_path),
                                             ("--doca-layout", doca_layout))
                       if on]
        if unsupported:
            raise BadInputError(f"{', '.join(unsupported)}: not supported for switch-agent firmware")
        if json_path is not None:
            check_writable_file(json_path, "--json")
        _verify_switch(firmware, manifest, target, profile.split(",")[0].strip() if profile else None, cc, n_ports,
                       budget_us if budget_us is not None else (budget_ns / 1000.0 if budget_ns else None),
                       random_count, seed, json_path, quiet, mutants, prove, prove_timeout, policy, expect_sha256,
                       require, jobs)
        return
    from rlcc.emulator.cycle_model import load_profile
    from rlcc.verify.check import verify_firmware
    from rlcc.verify.report import profile_line, spread_lines, summary, write_json, write_junit

    for path, option in ((json_path, "--json"), (junit_path, "--junit")):
        if path is not None:
            check_writable_file(path, option)

    names = [p.strip() for p in profile.split(",")] if profile else [TARGETS[target].default_profile]
    if any(not n for n in names):
        raise BadInputError(f"--profile {profile!r}: empty profile name in the list")
    primary = load_profile(names[0])
    others = [load_profile(n) for n in names[1:]]
    result = verify_firmware(
        firmware,
        manifest=manifest,
        target=target,
        profile=names[0] if profile else None,
        cc=cc,
        budget_cycles=budget_cycles,
        budget_ns=budget_ns,
        full_load=full_load,
        random_count=random_count,
        seed=seed,
        prove=prove,
        prove_timeout_s=prove_timeout,
        mutants=mutants,
        jobs=jobs,
        progress=not quiet and sys.stderr.isatty(),
        policy=policy,
        expect_sha256=expect_sha256,
        log=_policy_log(quiet),
        doca_layout=doca_layout,
    )
    spread = [worst_case_under(firmware, manifest, prof, target, cc, random_count, seed, doca_layout) for prof in others]
    if json_path:
        write_json(result, json_path, primary, spread)
    if junit_path:
        write_junit(result, junit_path)
    if not quiet or not result.passed:
        click.echo(summary(result))
        click.echo(profile_line(primary))
        for line in spread_lines(result, primary, spread):
            click.echo(line)
    if result.proof_failed:
        click.echo(f"rlcc-verify: error: {result.proof['assurance']}", err=True)
        sys.exit(int(ExitCode.MISMATCH))
    if not result.bit_exact:
        click.echo(f"rlcc-verify: error: {result.mismatches} of {result.vectors} vectors differ from the golden model", err=True)
        sys.exit(int(ExitCode.MISMATCH))
    _exit_unless_anchored(result.provenance)
    if not result.within_budget:
        click.echo(
            f"rlcc-verify: error: worst-case event takes {result.cycles['max']} cycles, budget {result.budget.cycles}",
            err=True,
        )
        sys.exit(int(ExitCode.BUDGET))
    if result.mutants is not None and result.mutants["survived"]:
        click.echo(f"rlcc-verify: error: {result.mutants['survived']} mutant(s) survive the vectors", err=True)
        sys.exit(int(ExitCode.MISMATCH))
    _exit_unless_proven(require, result.proof)
    _pass_line(result.provenance, result.assurance_level)


def _policy_log(quiet: bool):
    """Stage lines of the --policy recompile (seconds of work) on stderr, unless --quiet."""
    return (lambda _m: None) if quiet else (lambda m: click.echo(f"rlcc-verify: --policy: {m}", err=True))


def _exit_unless_anchored(provenance: Any) -> None:
    if provenance is not None and not provenance.ok:
        click.echo(f"rlcc-verify: error: {provenance.error}", err=True)
        sys.exit(int(ExitCode.PROVENANCE))


def _exit_unless_proven(require: str, proof: dict[str, Any] | None) -> None:
    if require == "proven" and assurance_level(proof) != "proven":
        why = (proof.get("assurance") or f"not proven ({proof['status']}: {proof.get('detail')})") if proof is not None \
            else "no proof ran"
        click.echo(f"rlcc-verify: error: --require proven: {why}", err=True)
        sys.exit(int(ExitCode.UNPROVEN))


def _pass_line(provenance: Any, level: str) -> None:
    """PASS with what it rests on: the assurance level and the anchor."""
    anchor = "relative to the manifest" if provenance is None or provenance.root == "manifest" else \
        f"anchored to the {provenance.root}"
    click.echo(f"rlcc-verify: PASS ({level}, {anchor})")


def _verify_switch(firmware: Path, manifest: Path | None, target: str, profile: str | None, cc: str | None,
                   n_ports: int, budget_us: float | None, random_count: int, seed: int, json_path: Path | None,
                   quiet: bool, mutants: bool, prove: bool = False, prove_timeout: float | None = None,
                   policy: Path | None = None, expect_sha256: str | None = None, require: str = "sampled",
                   jobs: int = 1) -> None:
    """The switch-agent check (``rlcc.kinds.switch_agent.check``), with the NIC path's exit codes; a
    proof's counterexample exits 4, its timeout is reported only."""
    import json

    from rlcc.kinds.switch_agent.check import summary, verify_switch_firmware

    result = verify_switch_firmware(firmware, manifest, target, profile, cc, n_ports=n_ports, budget_us=budget_us,
                                    random_count=random_count, seed=seed, mutants=mutants, prove=prove,
                                    prove_timeout_s=prove_timeout, policy=policy, expect_sha256=expect_sha256,
                                    jobs=jobs, log=_policy_log(quiet))
    if json_path:
        json_path.write_text(json.dumps(result.to_dict(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    if not quiet or not result.passed:
        click.echo(summary(result))
    if result.proof_failed:
        click.echo(f"rlcc-verify: error: the proof failed: {result.proof['detail']}", err=True)
        sys.exit(int(ExitCode.MISMATCH))
    if not result.bit_exact:
        click.echo(f"rlcc-verify: error: {result.mismatches + result.interval_mismatches} switch-agent records differ "
                   "from the golden model", err=True)
        sys.exit(int(ExitCode.MISMATCH))
    _exit_unless_anchored(result.provenance)
    if not result.within_budget:
        click.echo(f"rlcc-verify: error: one {result.n_ports}-port interval takes {result.interval_us:.2f} us, "
                   f"budget {result.budget_us:g} us", err=True)
        sys.exit(int(ExitCode.BUDGET))
    if result.mutants_survived:
        click.echo(f"rlcc-verify: error: {result.mutants_survived} mutant(s) survive the vectors", err=True)
        sys.exit(int(ExitCode.MISMATCH))
    _exit_unless_proven(require, result.proof)
    _pass_line(result.provenance, assurance_level(result.proof))


def worst_case_under(firmware: Path, manifest: Path | None, prof: Profile, target: str, cc: str | None,
                     random_count: int, seed: int, doca_layout: str | None = None) -> dict[str, Any]:
    """Worst-case cycles and ns of ``firmware`` on the vectors verification ran, under cycle
    profile ``prof``, built for the target of the profile's XLEN (``target`` when it matches):
    the spread a user sees with ``--profile dpa,ibex,...``."""
    import numpy as np

    from rlcc.codegen import manifest as manifest_io
    from rlcc.fxp.vectors import concat, verification_set
    from rlcc.verify.check import manifest_path_for
    from rlcc.verify.firmware_run import firmware_build

    t = TARGETS[target] if TARGETS[target].xlen == prof.xlen else next(x for x in TARGETS.values() if x.xlen == prof.xlen)
    _, model, shipped = manifest_io.load(str(manifest or manifest_path_for(Path(firmware))))
    vectors = concat(shipped, verification_set(model, seed, random_count)[0])
    with firmware_build(firmware, t, prof, cc, doca_layout=doca_layout) as fw:
        cycles = fw.run(vectors)["cycles"]
    worst = int(np.max(cycles))
    return {"profile": prof.name, "target": t.name, "clock_hz": prof.clock_hz, "worst_case_cycles": worst,
            "worst_case_ns": round(worst * 1e9 / prof.clock_hz, 1), "validation": prof.validation}
