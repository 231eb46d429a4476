"""The RISC-V targets rlcc builds firmware for: one record per target, the one source of its
name, register width, default cycle profile and compiler flags.

The SDK stub, the cross-compiler driver, verification, the proof, the cycle-budget fit, the CLI
choices and the benchmarks all read these records instead of restating them.
"""

from __future__ import annotations

import dataclasses

from rlcc.errors import BadInputError


@dataclasses.dataclass(frozen=True)
class Target:
    name: str  # the ISA string users pass (--target)
    xlen: int  # register width in bits
    default_profile: str  # emulator/profiles/<name>.json used when no --profile is given
    zig_triple: str  # zig/clang -target
    zig_cpu: str  # zig/clang -mcpu (without +zbb)
    gcc_abi: str  # gcc -mabi
    code_model: str | None  # -mcmodel (RV64 links at 0x80000000: medany)
    zbb_capable: bool  # may use Zbb when the cycle profile's core has it

    def uses_zbb(self, profile_has_zbb: bool) -> bool:
        """Whether firmware for this target is built with Zbb on a core whose profile has it."""
        return self.zbb_capable and profile_has_zbb

    def compiler_flags(self, zbb: bool = False, gcc_style: bool = False) -> list[str]:
        """Architecture flags for zig's clang (default) or a gcc-style cross compiler."""
        if gcc_style:
            flags = [f"-march={self.name}{'_zbb' if zbb else ''}", f"-mabi={self.gcc_abi}"]
        else:
            flags = ["-target", self.zig_triple, f"-mcpu={self.zig_cpu}{'+zbb' if zbb else ''}"]
        return flags + ([f"-mcmodel={self.code_model}"] if self.code_model else [])


RV64IMAC = Target("rv64imac", 64, "dpa", "riscv64-freestanding-none", "generic_rv64+m+a+c", "lp64", "medany", True)
RV32IMC = Target("rv32imc", 32, "generic5", "riscv32-freestanding-none", "generic_rv32+m+c", "ilp32", None, False)

TARGETS: dict[str, Target] = {t.name: t for t in (RV64IMAC, RV32IMC)}
TARGET_NAMES: tuple[str, ...] = tuple(TARGETS)
DEFAULT_TARGET: Target = RV64IMAC


def get_target(target: str | Target) -> Target:
    """The record for a target name (a record passes through); BadInputError for unknown names."""
    if isinstance(target, Target):
        return target
    try:
        return TARGETS[target]
    except (KeyError, TypeError):
        raise BadInputError(f"unknown target {target!r}; expected one of {', '.join(TARGET_NAMES)}") from None
