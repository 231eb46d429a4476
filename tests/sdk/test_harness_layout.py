"""pcc_harness.h (C) and rlcc.firmware_sdk_stub.harness_layout (Python) describe the same
tables: compile the header hosted and for both RISC-V targets' type sizes, print every size,
offset and constant, compare. Also pack/unpack round trips."""

from __future__ import annotations

import numpy as np
import pytest

from rlcc import formats
from rlcc.errors import BadInputError, EmulationError
from rlcc.firmware_sdk_stub import SDK_DIR
from rlcc.firmware_sdk_stub import harness_layout as hl

STRUCTS = {
    "rlcc_in_header_t": (hl.IN_HEADER_DTYPE, ["magic", "version", "count", "n_param_cmds"]),
    "rlcc_param_cmd_t": (hl.PARAM_CMD_DTYPE, ["port", "slot", "param_id_base", "n", "values"]),
    "rlcc_in_prefix_t": (hl.IN_PREFIX_DTYPE, ["hdr", "param_cmds"]),
    "rlcc_in_record_t": (hl.IN_RECORD_DTYPE, ["ctx_in", "event", "attr", "flags"]),
    "rlcc_out_header_t": (
        hl.OUT_HEADER_DTYPE,
        ["magic", "version", "count", "status", "disable_event_mask", "n_param_cmds", "capacity", "reserved", "param_status"],
    ),
    "rlcc_out_record_t": (hl.OUT_RECORD_DTYPE, ["ctx_out", "rate", "rtt_req", "cycles", "instret"]),
}
CONSTS = {
    "RLCC_HARNESS_IN_MAGIC": hl.IN_MAGIC,
    "RLCC_HARNESS_OUT_MAGIC": hl.OUT_MAGIC,
    "RLCC_HARNESS_VERSION": hl.VERSION,
    "RLCC_HARNESS_MAX_RECORDS": hl.DEFAULT_MAX_RECORDS,
    "RLCC_HARNESS_MAX_PARAM_CMDS": hl.MAX_PARAM_CMDS,
    "RLCC_REC_CHAIN_CTX": hl.REC_CHAIN_CTX,
    "RLCC_STATUS_NOT_RUN": hl.STATUS_NOT_RUN,
    "RLCC_STATUS_DONE": hl.STATUS_DONE,
    "RLCC_STATUS_BAD_MAGIC": hl.STATUS_BAD_MAGIC,
    "RLCC_STATUS_BAD_VERSION": hl.STATUS_BAD_VERSION,
    "RLCC_STATUS_TOO_MANY_RECORDS": hl.STATUS_TOO_MANY_RECORDS,
    "RLCC_STATUS_TOO_MANY_PARAM_CMDS": hl.STATUS_TOO_MANY_PARAM_CMDS,
    "RLCC_PARAM_CMD_UNUSED": hl.PARAM_CMD_UNUSED,
    "PCC_OK": hl.PARAM_OK,
    "PCC_FAIL": hl.PARAM_FAIL,
    "PCC_NUM_SLOTS": hl.NUM_SLOTS,
    "PCC_NUM_PORTS": hl.NUM_PORTS,
    "PCC_NUM_PARAMS": hl.NUM_PARAMS,
    "PCC_NUM_COUNTERS": hl.NUM_COUNTERS,
}


def _program() -> str:
    lines = ['#include <stdio.h>', '#include <stddef.h>', '#include "pcc_harness.h"',
             '#define P(n, v) printf("%s=%llu\\n", n, (unsigned long long)(v))', "int main(void) {"]
    for s, (_, fields) in STRUCTS.items():
        lines.append(f'P("sizeof.{s}", sizeof({s}));')
        for f in fields:
            lines.append(f'P("offsetof.{s}.{f}", offsetof({s}, {f}));')
    for c in CONSTS:
        lines.append(f'P("{c}", {c});')
    lines += ["return 0; }"]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def c_layout(sdk_build_dir, sdkt) -> dict[str, int]:
    src = sdk_build_dir / "layout_dump.c"
    src.write_text(_program())
    exe = sdkt.build_host([src], sdk_build_dir / "layout_dump", sanitize=False)
    out = sdkt.run([exe]).stdout
    return {k: int(v) for k, v in (line.split("=") for line in out.split())}


def test_struct_sizes_and_offsets(c_layout):
    for s, (dt, fields) in STRUCTS.items():
        assert c_layout[f"sizeof.{s}"] == dt.itemsize, s
        offs = hl.field_offsets(dt)
        assert list(offs) == fields, s
        for f in fields:
            assert c_layout[f"offsetof.{s}.{f}"] == offs[f], (s, f)
    assert hl.IN_PREFIX_SIZE == c_layout["sizeof.rlcc_in_prefix_t"]
    assert hl.IN_RECORD_DTYPE["ctx_in"].itemsize == formats.CTX_BYTES
    assert hl.IN_RECORD_DTYPE["event"].itemsize == formats.EVENT_BYTES


def test_constants(c_layout):
    for c, v in CONSTS.items():
        assert c_layout[c] == v, c


@pytest.mark.parametrize("target", ["rv32imc", "rv64imac"])
def test_riscv_sizes_agree(target, sdk_build_dir, sdkt):
    """The same layout on the 32- and 64-bit targets: _Static_asserts on the exact Python sizes."""
    src = sdk_build_dir / f"layout_{target}.c"
    asserts = ['#include <stddef.h>', '#include "pcc_harness.h"']
    for s, (dt, _fields) in STRUCTS.items():
        asserts.append(f'_Static_assert(sizeof({s}) == {dt.itemsize}u, "size {s}");')
        for f, off in hl.field_offsets(dt).items():
            asserts.append(f'_Static_assert(offsetof({s}, {f}) == {off}u, "off {s}.{f}");')
    asserts.append("int rlcc_layout_dummy;")
    src.write_text("\n".join(asserts) + "\n")
    sdkt.compile_ok([*sdkt.zig_cc(target), "-ffreestanding", *sdkt.WARN, f"-I{SDK_DIR}", "-c", src,
                     "-o", sdk_build_dir / f"layout_{target}.o"])


def test_pack_unpack_roundtrip():
    r = hl.new_records(1000)
    rng = np.random.default_rng(7)
    r["ctx_in"] = rng.integers(0, 1 << 32, size=(1000, 12), dtype=np.uint64).astype(np.uint32)
    r["event"] = rng.integers(0, 1 << 32, size=(1000, 8), dtype=np.uint64).astype(np.uint32)
    r["attr"] = hl.attr_word(np.arange(1000) % 16, np.arange(1000) % 3 == 0)
    r["flags"] = np.arange(1000) % 2
    cmds = [hl.ParamCmd(slot=1, param_id_base=2, values=[5, 6, 7], port=3)]
    buf = hl.pack_input(r, cmds)
    assert len(buf) == hl.input_nbytes(1000)
    prefix, back = hl.unpack_input(buf)
    assert np.array_equal(back, r)
    assert int(prefix["hdr"]["magic"]) == hl.IN_MAGIC and int(prefix["hdr"]["n_param_cmds"]) == 1
    pc = prefix["param_cmds"][0]
    assert (int(pc["port"]), int(pc["slot"]), int(pc["param_id_base"]), int(pc["n"])) == (3, 1, 2, 3)
    assert pc["values"][:4].tolist() == [5, 6, 7, 0]
    assert int(r["attr"][3]) == 3 | formats.ATTR_OVERLOAD_BIT and int(r["attr"][1]) == 1


def test_event_attr_word():
    assert hl.event_attr_word(formats.EVENT_TX, 2, 1, formats.TX_FLAG_RTT_REQ_SENT) == 0x04010203
    w = hl.event_attr_word(np.array([6, 3]), flags=np.array([0, 7]))
    assert w.tolist() == [6, 0x07000003]


def test_pack_rejects_and_unpack_checks():
    with pytest.raises(BadInputError):
        hl.pack_input(np.zeros(3, dtype=np.uint32))
    with pytest.raises(BadInputError):
        hl.pack_input(hl.new_records(1), [hl.ParamCmd(0, 0, [1])] * (hl.MAX_PARAM_CMDS + 1))
    with pytest.raises(EmulationError):
        hl.unpack_output(bytes(hl.output_nbytes(1)))  # zeros: the harness never ran
    hdr = np.zeros((), dtype=hl.OUT_HEADER_DTYPE)
    hdr["magic"], hdr["version"], hdr["status"], hdr["count"] = hl.OUT_MAGIC, hl.VERSION, hl.STATUS_TOO_MANY_RECORDS, 0
    with pytest.raises(EmulationError, match="capacity"):
        hl.unpack_output(hdr.tobytes())
    assert hl.unpack_output(hdr.tobytes(), check=False).status == hl.STATUS_TOO_MANY_RECORDS


def test_pack_one_million_records():
    r = hl.new_records(1_000_000)
    r["event"][:, 0] = formats.EVENT_RTT
    buf = hl.pack_input(r)
    assert len(buf) == hl.input_nbytes(1_000_000)
