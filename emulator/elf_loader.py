"""Load a RISC-V ELF executable: PT_LOAD segments into guest RAM, entry point and symbol table."""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile

from rlcc.errors import BadInputError

EM_RISCV = 243


class _Memory(Protocol):
    def write_mem(self, addr: int, data: bytes) -> None: ...


@dataclass
class Symbol:
    name: str
    addr: int
    size: int
    kind: str  # "func", "object", "notype", ...


@dataclass
class LoadedElf:
    """What load_elf placed in memory: entry point, segments and symbols."""

    path: Path
    entry: int
    xlen: int
    segments: list[tuple[int, int, int]]  # (vaddr, filesz, memsz)
    symbols: dict[str, Symbol] = field(default_factory=dict)

    def addr(self, name: str) -> int:
        """Address of a symbol; BadInputError if missing."""
        try:
            return self.symbols[name].addr
        except KeyError:
            raise BadInputError(f"{self.path.name}: no symbol {name!r}") from None


def load_elf(path: str | Path, memory: _Memory, xlen: int, mem_base: int, mem_size: int) -> LoadedElf:
    """Copy the PT_LOAD segments of ``path`` into ``memory`` (bss zero-filled) and read its symbols.

    Raises BadInputError if the file is not a RISC-V ELF of the requested XLEN or a segment falls
    outside RAM [mem_base, mem_base + mem_size).
    """
    path = Path(path)
    try:
        f = path.open("rb")
    except OSError as e:
        raise BadInputError(f"cannot open ELF {path}: {e.strerror}") from None
    with f:
        try:
            elf = ELFFile(f)
        except ELFError as e:
            raise BadInputError(f"{path}: not an ELF file ({_one_line(e)})") from None
        try:
            return _load(path, elf, memory, xlen, mem_base, mem_size)
        except (ELFError, EOFError, struct.error) as e:
            # pyelftools parses lazily: a truncated or corrupt file fails only when a header,
            # segment or the symbol table is read
            raise BadInputError(f"{path}: truncated or corrupt ELF file ({_one_line(e)})") from None


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text[:200] or type(e).__name__


def _load(path: Path, elf: ELFFile, memory: _Memory, xlen: int, mem_base: int, mem_size: int) -> LoadedElf:
    if elf["e_machine"] not in ("EM_RISCV", EM_RISCV):
        raise BadInputError(f"{path}: ELF machine is {elf['e_machine']}, expected RISC-V")
    if elf.elfclass != xlen:
        raise BadInputError(f"{path}: ELF class is {elf.elfclass}-bit but the machine is RV{xlen}")
    if elf["e_type"] not in ("ET_EXEC", "ET_DYN"):
        raise BadInputError(f"{path}: ELF type {elf['e_type']} is not an executable")
    segments: list[tuple[int, int, int]] = []
    end = mem_base + mem_size
    for seg in elf.iter_segments():
        if seg["p_type"] != "PT_LOAD" or seg["p_memsz"] == 0:
            continue
        vaddr, filesz, memsz = seg["p_vaddr"], seg["p_filesz"], seg["p_memsz"]
        if vaddr < mem_base or vaddr + memsz > end:
            raise BadInputError(
                f"{path}: segment [{vaddr:#x}, {vaddr + memsz:#x}) outside RAM [{mem_base:#x}, {end:#x})"
            )
        data = seg.data()
        if len(data) != filesz:
            raise BadInputError(f"{path}: truncated ELF file (segment at {vaddr:#x} has {len(data)} of {filesz} bytes)")
        memory.write_mem(vaddr, data + bytes(memsz - filesz))
        segments.append((vaddr, filesz, memsz))
    if not segments:
        raise BadInputError(f"{path}: no loadable segments")
    symbols: dict[str, Symbol] = {}
    symtab = elf.get_section_by_name(".symtab")
    if symtab is not None:
        for sym in symtab.iter_symbols():
            if not sym.name or sym["st_shndx"] == "SHN_UNDEF":
                continue
            kind = sym["st_info"]["type"].removeprefix("STT_").lower()
            if kind in ("file", "section"):
                continue
            prev = symbols.get(sym.name)
            # prefer global definitions over local ones of the same name
            if prev is None or sym["st_info"]["bind"] == "STB_GLOBAL":
                symbols[sym.name] = Symbol(sym.name, sym["st_value"], sym["st_size"], kind)
    return LoadedElf(path=path, entry=elf["e_entry"], xlen=xlen, segments=segments, symbols=symbols)
