"""Layout of the SDK stub's harness tables, Python side (the one place Python restates it).

The C side is ``pcc_harness.h``; ``tests/sdk/test_harness_layout.py`` compiles it and checks
every size, offset and constant below, so the two cannot drift.

Input table (written into ``rlcc_harness_in`` of a bare-metal ELF, or a file for the hosted
``harness_host``)::

    offset 0     header      {magic u32, version u32, count u32, n_param_cmds u32}   16 B
    offset 16    param_cmds  8 x {port, slot, param_id_base, n, values[32]} u32      8 x 144 B
    offset 1168  records     count x {ctx_in u32[12], event u32[8], attr u32, flags u32}  88 B

Output table (``rlcc_harness_out``)::

    offset 0     header   {magic, version, count, status, disable_event_mask, n_param_cmds,
                           capacity, reserved, param_status[8]} u32                     64 B
    offset 64    records  count x {ctx_out u32[12], rate u32, rtt_req u32,
                                   cycles u64, instret u64}                             72 B

All little-endian. ``flags`` bit 0 (``REC_CHAIN_CTX``): use the previous record's ctx_out
instead of ctx_in. Everything is vectorized with numpy structured dtypes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from rlcc import formats
from rlcc.errors import BadInputError, EmulationError

IN_MAGIC = 0x49434C52  # "RLCI"
OUT_MAGIC = 0x4F434C52  # "RLCO"
VERSION = 1
DEFAULT_MAX_RECORDS = 4096  # RLCC_HARNESS_MAX_RECORDS default of the bare-metal build
MAX_PARAM_CMDS = 8

# SDK sizes the tables depend on (pcc_sdk.h; checked by the test)
NUM_SLOTS = 8
NUM_PORTS = 4
NUM_PARAMS = 32
NUM_COUNTERS = 16

REC_CHAIN_CTX = 1

STATUS_NOT_RUN = 0
STATUS_DONE = 1
STATUS_BAD_MAGIC = 2
STATUS_BAD_VERSION = 3
STATUS_TOO_MANY_RECORDS = 4
STATUS_TOO_MANY_PARAM_CMDS = 5
STATUS_NAMES = {
    STATUS_NOT_RUN: "not run",
    STATUS_DONE: "done",
    STATUS_BAD_MAGIC: "bad input magic",
    STATUS_BAD_VERSION: "bad input version",
    STATUS_TOO_MANY_RECORDS: "more records than the table capacity",
    STATUS_TOO_MANY_PARAM_CMDS: "too many parameter commands",
}
PARAM_CMD_UNUSED = 0xFFFFFFFF
PARAM_OK = 0
PARAM_FAIL = 1

# Symbols of a bare-metal harness ELF
SYM_IN = "rlcc_harness_in"
SYM_OUT = "rlcc_harness_out"
SYM_CAPACITY = "rlcc_harness_capacity"
SYM_ENTRY = "_start"
SYM_HALT = "_rlcc_halt"  # address of the final ebreak

_U4 = "<u4"
IN_HEADER_DTYPE = np.dtype(
    [("magic", _U4), ("version", _U4), ("count", _U4), ("n_param_cmds", _U4)]
)
PARAM_CMD_DTYPE = np.dtype(
    [
        ("port", _U4),
        ("slot", _U4),
        ("param_id_base", _U4),
        ("n", _U4),
        ("values", _U4, (NUM_PARAMS,)),
    ]
)
IN_PREFIX_DTYPE = np.dtype([("hdr", IN_HEADER_DTYPE), ("param_cmds", PARAM_CMD_DTYPE, (MAX_PARAM_CMDS,))])
IN_RECORD_DTYPE = np.dtype(
    [
        ("ctx_in", _U4, (formats.CTX_WORDS,)),
        ("event", _U4, (formats.EVENT_WORDS,)),
        ("attr", _U4),
        ("flags", _U4),
    ]
)
OUT_HEADER_DTYPE = np.dtype(
    [
        ("magic", _U4),
        ("version", _U4),
        ("count", _U4),
        ("status", _U4),
        ("disable_event_mask", _U4),
        ("n_param_cmds", _U4),
        ("capacity", _U4),
        ("reserved", _U4),
        ("param_status", _U4, (MAX_PARAM_CMDS,)),
    ]
)
OUT_RECORD_DTYPE = np.dtype(
    [
        ("ctx_out", _U4, (formats.CTX_WORDS,)),
        ("rate", _U4),
        ("rtt_req", _U4),
        ("cycles", "<u8"),
        ("instret", "<u8"),
    ]
)

IN_HEADER_SIZE = IN_HEADER_DTYPE.itemsize  # 16
PARAM_CMD_SIZE = PARAM_CMD_DTYPE.itemsize  # 144
IN_PREFIX_SIZE = IN_PREFIX_DTYPE.itemsize  # 1168 = offset of the first input record
IN_RECORD_SIZE = IN_RECORD_DTYPE.itemsize  # 88
OUT_HEADER_SIZE = OUT_HEADER_DTYPE.itemsize  # 64 = offset of the first output record
OUT_RECORD_SIZE = OUT_RECORD_DTYPE.itemsize  # 72


def field_offsets(dtype: np.dtype) -> dict[str, int]:
    """Byte offset of every (top-level) field of a structured dtype."""
    assert dtype.fields is not None
    return {name: int(dtype.fields[name][1]) for name in dtype.names or ()}


def input_nbytes(count: int) -> int:
    return IN_PREFIX_SIZE + count * IN_RECORD_SIZE


def output_nbytes(count: int) -> int:
    return OUT_HEADER_SIZE + count * OUT_RECORD_SIZE


def capacity_from_in_symbol_size(size: int) -> int:
    """Records a bare-metal table holds, from the size of the ``rlcc_harness_in`` symbol."""
    return (size - IN_PREFIX_SIZE) // IN_RECORD_SIZE


# ---- building records --------------------------------------------------------------------


def new_records(count: int) -> np.ndarray:
    """``count`` zeroed input records (IN_RECORD_DTYPE); fill ctx_in/event/attr/flags."""
    return np.zeros(count, dtype=IN_RECORD_DTYPE)


def event_attr_word(event_type, subtype=0, port=0, flags=0):
    """Word 0 of an event record {type:8, subtype:8, port:8, flags:8}; vectorized."""
    t = np.asarray(event_type, dtype=np.uint32) & 0xFF
    s = np.asarray(subtype, dtype=np.uint32) & 0xFF
    p = np.asarray(port, dtype=np.uint32) & 0xFF
    f = np.asarray(flags, dtype=np.uint32) & 0xFF
    w = t | (s << np.uint32(8)) | (p << np.uint32(16)) | (f << np.uint32(24))
    return w.astype(np.uint32) if w.ndim else int(w)


def attr_word(slot, overloaded=False):
    """The ``pcc_attr_t`` word: slot in bits 0..3, overload flag bit 4; vectorized."""
    s = np.asarray(slot, dtype=np.uint32) & np.uint32(formats.ATTR_SLOT_MASK)
    o = np.where(np.asarray(overloaded, dtype=bool), np.uint32(formats.ATTR_OVERLOAD_BIT), np.uint32(0))
    w = (s | o).astype(np.uint32)
    return w if w.ndim else int(w)


@dataclass(frozen=True)
class ParamCmd:
    """A host parameter write applied after user_init: params[base + i] = values[i]."""

    slot: int
    param_id_base: int
    values: Sequence[int]
    port: int = 0


def pack_input(records: np.ndarray, param_cmds: Iterable[ParamCmd] = (), *, count: int | None = None) -> bytes:
    """Serialize an input table (header + parameter commands + records) to bytes.

    ``records`` must have dtype IN_RECORD_DTYPE (see :func:`new_records`). ``count`` overrides
    the header's record count (for negative tests only).
    """
    records = np.ascontiguousarray(records)
    if records.dtype != IN_RECORD_DTYPE:
        raise BadInputError(f"records must have dtype IN_RECORD_DTYPE, got {records.dtype}")
    cmds = list(param_cmds)
    if len(cmds) > MAX_PARAM_CMDS:
        raise BadInputError(f"at most {MAX_PARAM_CMDS} parameter commands, got {len(cmds)}")
    prefix = np.zeros((), dtype=IN_PREFIX_DTYPE)
    prefix["hdr"]["magic"] = IN_MAGIC
    prefix["hdr"]["version"] = VERSION
    prefix["hdr"]["count"] = len(records) if count is None else count
    prefix["hdr"]["n_param_cmds"] = len(cmds)
    for i, c in enumerate(cmds):
        vals = list(c.values)
        if len(vals) > NUM_PARAMS:
            raise BadInputError(f"parameter command {i}: at most {NUM_PARAMS} values")
        pc = prefix["param_cmds"][i]
        pc["port"], pc["slot"], pc["param_id_base"], pc["n"] = c.port, c.slot, c.param_id_base, len(vals)
        pc["values"][: len(vals)] = np.asarray(vals, dtype=np.uint64).astype(np.uint32)
    return prefix.tobytes() + records.tobytes()


def unpack_input(buf: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Inverse of :func:`pack_input`: (prefix as a 0-d IN_PREFIX_DTYPE array, records)."""
    if len(buf) < IN_PREFIX_SIZE:
        raise BadInputError("input table shorter than its header")
    prefix = np.frombuffer(buf, dtype=IN_PREFIX_DTYPE, count=1)[0]
    n = int(prefix["hdr"]["count"])
    recs = np.frombuffer(buf, dtype=IN_RECORD_DTYPE, count=n, offset=IN_PREFIX_SIZE)
    return prefix, recs


@dataclass(frozen=True)
class OutputTable:
    header: np.void  # one OUT_HEADER_DTYPE element
    records: np.ndarray  # OUT_RECORD_DTYPE, len == header["count"]

    @property
    def status(self) -> int:
        return int(self.header["status"])

    @property
    def disable_event_mask(self) -> int:
        return int(self.header["disable_event_mask"])

    @property
    def param_status(self) -> list[int]:
        return [int(s) for s in self.header["param_status"][: int(self.header["n_param_cmds"])]]


def unpack_output(buf: bytes, *, check: bool = True) -> OutputTable:
    """Parse an output table (header + header.count records; extra bytes are ignored).

    With ``check`` (default) raises EmulationError unless magic/version match and
    status is STATUS_DONE (i.e. the firmware ran the whole table).
    """
    if len(buf) < OUT_HEADER_SIZE:
        raise EmulationError("harness output shorter than its header")
    hdr = np.frombuffer(buf, dtype=OUT_HEADER_DTYPE, count=1)[0]
    if check:
        if int(hdr["magic"]) != OUT_MAGIC or int(hdr["version"]) != VERSION:
            raise EmulationError(
                f"harness output has magic {int(hdr['magic']):#x} version {int(hdr['version'])}: "
                "the harness did not run"
            )
        st = int(hdr["status"])
        if st != STATUS_DONE:
            raise EmulationError(f"harness status {st} ({STATUS_NAMES.get(st, 'unknown')})")
    n = int(hdr["count"])
    if len(buf) < output_nbytes(n):
        raise EmulationError(f"harness output holds fewer than its {n} records")
    recs = np.frombuffer(buf, dtype=OUT_RECORD_DTYPE, count=n, offset=OUT_HEADER_SIZE)
    return OutputTable(header=hdr, records=recs)


def table_symbols(elf_path: str | Path) -> dict[str, tuple[int, int]]:
    """{name: (address, size)} of the harness symbols (SYM_*) of a bare-metal harness ELF."""
    return elf_symbols(elf_path, {SYM_IN, SYM_OUT, SYM_CAPACITY, SYM_ENTRY, SYM_HALT}, "a harness ELF")


def elf_symbols(elf_path: str | Path, wanted: set[str], what: str) -> dict[str, tuple[int, int]]:
    """{name: (address, size)} of the ``wanted`` symbols; BadInputError naming ``what`` if any is missing."""
    from elftools.elf.elffile import ELFFile

    found: dict[str, tuple[int, int]] = {}
    with open(elf_path, "rb") as fh:
        symtab = ELFFile(fh).get_section_by_name(".symtab")
        if symtab is None:
            raise BadInputError(f"{elf_path}: no symbol table")
        for sym in symtab.iter_symbols():
            if sym.name in wanted:
                found[sym.name] = (int(sym["st_value"]), int(sym["st_size"]))
    missing = wanted - set(found)
    if missing:
        raise BadInputError(f"{elf_path}: not {what}, missing symbols {sorted(missing)}")
    return found
