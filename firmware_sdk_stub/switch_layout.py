"""Layout of the switch SDK stub's harness tables, Python side (``switch_harness.h`` is the C side;
``tests/sdk/test_switch_sdk.py`` compiles it and checks every size, offset and constant here).

Input: header {magic, version, count, mode, n_ports, n_queues, reserved[2]} (32 B), then records
{port, queue, util_mul, flags, qlen_bytes, tx_bytes, marked_pkts, reserved, ctx_in u32[32]} (160 B).
Output: header {magic, version, count, status, capacity, reserved[3]} (32 B), then records
{ctx_out u32[32], kmin_bytes, kmax_bytes, pmax_q16, action, cycles u64, instret u64,
scores i32[64]} (416 B). Little-endian.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rlcc.errors import BadInputError, EmulationError
from rlcc.switch_spec import FEATURES, MAX_ACTIONS, MAX_HISTORY
from rlcc.firmware_sdk_stub.harness_layout import elf_symbols

IN_MAGIC = 0x49575352  # "RSWI"
OUT_MAGIC = 0x4F575352  # "RSWO"
VERSION = 1
DEFAULT_MAX_RECORDS = 2048
CTX_WORDS = 32  # SW_CTX_WORDS: >= 1 + (MAX_HISTORY - 1) x features
MAX_FEATURES = len(FEATURES)
MAX_PORTS = 64
MAX_QUEUES = 8

MODE_DECISION = 0
MODE_INTERVAL = 1
REC_CHAIN_CTX = 1
REC_INIT = 2
NO_ACTION = 0xFFFFFFFF

STATUS_NOT_RUN, STATUS_DONE, STATUS_BAD_MAGIC, STATUS_BAD_VERSION = 0, 1, 2, 3
STATUS_TOO_MANY_RECORDS, STATUS_BAD_SHAPE, STATUS_SDK_ERROR = 4, 5, 6
STATUS_NAMES = {
    STATUS_NOT_RUN: "not run", STATUS_DONE: "done", STATUS_BAD_MAGIC: "bad input magic",
    STATUS_BAD_VERSION: "bad input version", STATUS_TOO_MANY_RECORDS: "more records than the table capacity",
    STATUS_BAD_SHAPE: "records do not form whole port x queue intervals", STATUS_SDK_ERROR: "an SDK call failed",
}

SYM_IN = "sw_harness_in"
SYM_OUT = "sw_harness_out"
SYM_HALT = "_rlcc_halt"

assert CTX_WORDS >= 1 + (MAX_HISTORY - 1) * MAX_FEATURES

_U4 = "<u4"
IN_HEADER_DTYPE = np.dtype([("magic", _U4), ("version", _U4), ("count", _U4), ("mode", _U4), ("n_ports", _U4),
                            ("n_queues", _U4), ("reserved", _U4, (2,))])
IN_RECORD_DTYPE = np.dtype([("port", _U4), ("queue", _U4), ("util_mul", _U4), ("flags", _U4), ("qlen_bytes", _U4),
                            ("tx_bytes", _U4), ("marked_pkts", _U4), ("reserved", _U4), ("ctx_in", _U4, (CTX_WORDS,))])
OUT_HEADER_DTYPE = np.dtype([("magic", _U4), ("version", _U4), ("count", _U4), ("status", _U4), ("capacity", _U4),
                             ("reserved", _U4, (3,))])
OUT_RECORD_DTYPE = np.dtype([("ctx_out", _U4, (CTX_WORDS,)), ("kmin_bytes", _U4), ("kmax_bytes", _U4),
                             ("pmax_q16", _U4), ("action", _U4), ("cycles", "<u8"), ("instret", "<u8"),
                             ("scores", "<i4", (MAX_ACTIONS,))])
IN_HEADER_SIZE = IN_HEADER_DTYPE.itemsize
IN_RECORD_SIZE = IN_RECORD_DTYPE.itemsize
OUT_HEADER_SIZE = OUT_HEADER_DTYPE.itemsize
OUT_RECORD_SIZE = OUT_RECORD_DTYPE.itemsize


def new_records(count: int) -> np.ndarray:
    return np.zeros(count, dtype=IN_RECORD_DTYPE)


def pack_input(records: np.ndarray, mode: int = MODE_DECISION, n_ports: int = 0, n_queues: int = 0) -> bytes:
    records = np.ascontiguousarray(records)
    if records.dtype != IN_RECORD_DTYPE:
        raise BadInputError(f"records must have dtype IN_RECORD_DTYPE, got {records.dtype}")
    hdr = np.zeros((), dtype=IN_HEADER_DTYPE)
    hdr["magic"], hdr["version"], hdr["count"] = IN_MAGIC, VERSION, len(records)
    hdr["mode"], hdr["n_ports"], hdr["n_queues"] = mode, n_ports, n_queues
    return hdr.tobytes() + records.tobytes()


def output_nbytes(count: int) -> int:
    return OUT_HEADER_SIZE + count * OUT_RECORD_SIZE


def capacity_from_in_symbol_size(size: int) -> int:
    return (size - IN_HEADER_SIZE) // IN_RECORD_SIZE


def unpack_output(buf: bytes) -> np.ndarray:
    """Output records; EmulationError unless the harness ran the whole table."""
    if len(buf) < OUT_HEADER_SIZE:
        raise EmulationError("switch harness output shorter than its header")
    hdr = np.frombuffer(buf, dtype=OUT_HEADER_DTYPE, count=1)[0]
    if int(hdr["magic"]) != OUT_MAGIC or int(hdr["version"]) != VERSION:
        raise EmulationError(f"switch harness output has magic {int(hdr['magic']):#x}: the harness did not run")
    status = int(hdr["status"])
    if status != STATUS_DONE:
        raise EmulationError(f"switch harness status {status} ({STATUS_NAMES.get(status, 'unknown')})")
    n = int(hdr["count"])
    return np.frombuffer(buf, dtype=OUT_RECORD_DTYPE, count=n, offset=OUT_HEADER_SIZE)


def table_symbols(elf_path: str | Path) -> dict[str, tuple[int, int]]:
    """{name: (address, size)} of the switch harness symbols of a bare-metal ELF."""
    return elf_symbols(elf_path, {SYM_IN, SYM_OUT, SYM_HALT}, "a switch harness ELF")
