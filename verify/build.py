"""Build firmware C into a bare-metal harness ELF for the emulator, and measure its footprint."""

from __future__ import annotations

from pathlib import Path

from elftools.elf.elffile import ELFFile

from rlcc import firmware_sdk_stub as sdk
from rlcc.codegen.sdk_flavours import SdkChoice, for_firmware
from rlcc.verify.toolchain import compile_riscv

DEFAULT_CAPACITY = 4096  # harness records per emulator run


def build_harness_elf(
    firmware_c: Path,
    target: str,
    workdir: Path,
    cc: str | None = None,
    zbb: bool = False,
    capacity: int = DEFAULT_CAPACITY,
    flavour: SdkChoice | None = None,
) -> Path:
    """Link ``firmware_c`` with the SDK stub runtime and table-driven harness for ``target``.

    ``flavour``: the firmware's SDK flavour (default: from the manifest beside ``firmware_c``); a
    flavour other than the stub adds its harness adapter (``--sdk doca``: harness_doca.c and
    doca_pcc_dev_stub.c, which map the harness's calls onto the DOCA entry points).
    """
    firmware_c = Path(firmware_c)
    flavour = flavour or for_firmware(firmware_c)
    adapter = [sdk.SDK_DIR / name for name in flavour.flavour.adapter_sources]
    return compile_riscv(
        [firmware_c, *adapter, *sdk.runtime_sources(target)],
        target=target,
        include_dirs=[firmware_c.parent, *sdk.include_dirs()],
        linker_script=sdk.linker_script(target),
        out_path=Path(workdir) / f"{firmware_c.stem}.{target}.elf",
        cc=cc,
        zbb=zbb,
        extra_flags=[f"-DRLCC_HARNESS_MAX_RECORDS={capacity}", *flavour.build_defines()],
    )


def firmware_footprint(firmware_c: Path, target: str, workdir: Path, cc: str | None = None, zbb: bool = False) -> dict[str, int]:
    """Bytes of code (.text), constants (.rodata/.srodata) and data (.data/.bss) of the firmware alone.

    Compiled to an object file on its own so the SDK runtime and harness are not counted.
    """
    firmware_c = Path(firmware_c)
    obj = compile_riscv(
        [firmware_c],
        target=target,
        include_dirs=[firmware_c.parent, *sdk.include_dirs()],
        out_path=Path(workdir) / f"{firmware_c.stem}.{target}.o",
        cc=cc,
        zbb=zbb,
        extra_flags=["-c"],
    )
    return section_sizes(obj)


def section_sizes(path: Path) -> dict[str, int]:
    """Bytes of code (.text*), constants (.rodata*, .srodata*) and data (.data/.sdata/.bss/.sbss*) of an ELF."""
    sizes = {"code": 0, "rodata": 0, "data": 0}
    with open(path, "rb") as fh:
        for sec in ELFFile(fh).iter_sections():
            name = sec.name
            if name.startswith(".text"):
                sizes["code"] += sec["sh_size"]
            elif name.startswith((".rodata", ".srodata")):
                sizes["rodata"] += sec["sh_size"]
            elif name.startswith((".data", ".sdata", ".bss", ".sbss")):
                sizes["data"] += sec["sh_size"]
    return sizes
