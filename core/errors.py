"""Exit codes and the error types that map to them (the one table the CLIs and README share)."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """Process exit codes of every rlcc command. Documented in README.md ("Exit codes")."""

    OK = 0
    INTERNAL = 1  # unexpected failure inside rlcc (a bug: please report)
    USAGE = 2  # bad command line (click's own usage errors also exit 2)
    BAD_INPUT = 3  # invalid model, spec, scenario, manifest or other input file
    MISMATCH = 4  # verification: firmware output differs from the golden model
    BUDGET = 5  # verification: decision latency exceeds the budget
    BUILD = 6  # cross-compilation of the firmware failed
    EMULATION = 7  # the firmware faulted in the emulator (illegal instruction, bad access, hang)
    FIDELITY = 8  # rlcc-compile: the firmware misses the closed-loop fidelity bar vs its teacher
    PROVENANCE = 9  # verification: firmware, manifest and policy do not match (hashes, --policy, --expect-sha256)
    UNPROVEN = 10  # verification: --require proven, and the equivalence proof did not complete
    UNSETTLED = 11  # rlcc-compile: the teacher itself does not settle, so fidelity to it cannot be judged


EXIT_CODE_MEANINGS: dict[ExitCode, str] = {
    ExitCode.OK: "success",
    ExitCode.INTERNAL: "internal error (a bug in rlcc)",
    ExitCode.USAGE: "bad command line",
    ExitCode.BAD_INPUT: "bad input (model, spec, scenario, manifest, file)",
    ExitCode.MISMATCH: "verification mismatch (firmware != golden model)",
    ExitCode.BUDGET: "decision-latency budget exceeded",
    ExitCode.BUILD: "firmware build (cross-compilation) failed",
    ExitCode.EMULATION: "firmware faulted in the emulator",
    ExitCode.FIDELITY: "firmware misses the closed-loop fidelity bar vs its teacher (rlcc-compile)",
    ExitCode.PROVENANCE: "firmware is not what its manifest, --policy or --expect-sha256 says (rlcc-verify)",
    ExitCode.UNPROVEN: "--require proven: the equivalence proof did not complete (rlcc-verify)",
    ExitCode.UNSETTLED: "the teacher itself does not settle (limit cycle): fidelity to it is not judged (rlcc-compile)",
}


class RlccError(Exception):
    """An error with a one-line message and the exit code the CLI should use."""

    exit_code: ExitCode = ExitCode.INTERNAL

    def __init__(self, message: str, exit_code: ExitCode | None = None) -> None:
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class BadInputError(RlccError):
    """The user's input (model, spec, config, file) is invalid."""

    exit_code = ExitCode.BAD_INPUT


class ProvenanceError(RlccError):
    """The firmware's files disagree with their manifest, or with the reviewed policy or digest."""

    exit_code = ExitCode.PROVENANCE


class BuildError(RlccError):
    """Cross-compiling the firmware failed."""

    exit_code = ExitCode.BUILD


class EmulationError(RlccError):
    """The emulated program faulted: illegal instruction, bad memory access, step limit."""

    exit_code = ExitCode.EMULATION
