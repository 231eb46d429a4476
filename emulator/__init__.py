"""rlcc.emulator: RISC-V (RV32IMC / RV64IMAC + Zbb) interpreter with a data-driven cycle model.

The hot loop is C (``_rvcore``); this package adds ELF loading, cycle profiles and a Python API.
"""

from .decode import Decoded, decode
from .cycle_model import COST_KEYS, Profile, list_profiles, load_profile, profile_from_dict
from .elf_loader import LoadedElf, Symbol, load_elf
from .machine import (
    ABI_NAMES,
    DEFAULT_MAX_INSTRUCTIONS,
    DEFAULT_MEM_BASE,
    DEFAULT_MEM_SIZE,
    FAULT_KINDS,
    EmulationFault,
    Machine,
    RunResult,
)

__all__ = [
    "ABI_NAMES",
    "COST_KEYS",
    "DEFAULT_MAX_INSTRUCTIONS",
    "DEFAULT_MEM_BASE",
    "DEFAULT_MEM_SIZE",
    "Decoded",
    "FAULT_KINDS",
    "EmulationFault",
    "LoadedElf",
    "Machine",
    "Profile",
    "RunResult",
    "Symbol",
    "decode",
    "list_profiles",
    "load_elf",
    "load_profile",
    "profile_from_dict",
]
