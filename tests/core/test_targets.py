"""The Target record is the one source of target facts: flags, register width, default profile."""

from __future__ import annotations

import pytest

from rlcc.emulator.cycle_model import load_profile
from rlcc.errors import BadInputError
from rlcc.targets import DEFAULT_TARGET, TARGET_NAMES, TARGETS, get_target


def test_names_and_lookup() -> None:
    assert set(TARGET_NAMES) == {"rv64imac", "rv32imc"} and DEFAULT_TARGET.name in TARGET_NAMES
    assert get_target("rv32imc").xlen == 32 and get_target(TARGETS["rv64imac"]) is TARGETS["rv64imac"]
    with pytest.raises(BadInputError, match="unknown target 'rv128'"):
        get_target("rv128")


@pytest.mark.parametrize("name", TARGET_NAMES)
def test_each_target_has_a_loadable_default_profile(name: str) -> None:
    assert load_profile(get_target(name).default_profile).name == get_target(name).default_profile


def test_flags_follow_the_isa() -> None:
    rv64, rv32 = TARGETS["rv64imac"], TARGETS["rv32imc"]
    assert rv64.compiler_flags(zbb=True) == ["-target", "riscv64-freestanding-none", "-mcpu=generic_rv64+m+a+c+zbb",
                                             "-mcmodel=medany"]
    assert rv32.compiler_flags(gcc_style=True) == ["-march=rv32imc", "-mabi=ilp32"]
    assert rv64.uses_zbb(True) and not rv64.uses_zbb(False) and not rv32.uses_zbb(True)


def test_cli_offers_exactly_the_targets() -> None:
    from rlcc.cli.main import compile_command, verify_command

    for command in (compile_command, verify_command):
        option = next(p for p in command.params if p.name == "target")
        assert tuple(option.type.choices) == TARGET_NAMES and option.default == DEFAULT_TARGET.name
