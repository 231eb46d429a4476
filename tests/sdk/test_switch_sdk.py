"""switch_sdk.h / switch_harness.h (C) agree with rlcc.switch_spec and
rlcc.firmware_sdk_stub.switch_layout (Python): a hosted program prints the headers' constants,
sizes and offsets; the RISC-V targets assert the same sizes; the stub and harness compile with
the SDK tests' strict warnings (incl. -Wconversion)."""

from __future__ import annotations

import pytest

from rlcc import firmware_sdk_stub as sdk
from rlcc import switch_spec as ss
from rlcc.firmware_sdk_stub import switch_layout as sl

STRUCTS = {
    "sw_harness_in_header_t": sl.IN_HEADER_DTYPE,
    "sw_harness_in_record_t": sl.IN_RECORD_DTYPE,
    "sw_harness_out_header_t": sl.OUT_HEADER_DTYPE,
    "sw_harness_out_record_t": sl.OUT_RECORD_DTYPE,
}
# C field path of every Python field (nested structs in C, flat in Python)
C_FIELDS = {"qlen_bytes": "stats.qlen_bytes", "tx_bytes": "stats.tx_bytes", "marked_pkts": "stats.marked_pkts",
            "kmin_bytes": "ecn.kmin_bytes", "kmax_bytes": "ecn.kmax_bytes", "pmax_q16": "ecn.pmax_q16"}
CONSTS = {
    # device formats: the one source is rlcc.switch_spec
    "SW_STAT_MAX": ss.STAT_MAX, "SW_UTIL_FRAC_BITS": ss.UTIL_FRAC_BITS, "SW_UTIL_ONE": ss.UTIL_ONE,
    "SW_UTIL_MUL_SHIFT": ss.UTIL_MUL_SHIFT, "SW_PMAX_FRAC_BITS": ss.PMAX_FRAC_BITS, "SW_PMAX_ONE": ss.PMAX_ONE,
    "SW_MAX_ACTIONS": ss.MAX_ACTIONS, "SW_MAX_HISTORY": ss.MAX_HISTORY, "SW_MAX_FEATURES": len(ss.FEATURES),
    # harness layout
    "SW_CTX_WORDS": sl.CTX_WORDS, "SW_MAX_PORTS": sl.MAX_PORTS, "SW_MAX_QUEUES": sl.MAX_QUEUES,
    "SW_HARNESS_IN_MAGIC": sl.IN_MAGIC, "SW_HARNESS_OUT_MAGIC": sl.OUT_MAGIC, "SW_HARNESS_VERSION": sl.VERSION,
    "SW_HARNESS_MAX_RECORDS": sl.DEFAULT_MAX_RECORDS, "SW_MODE_DECISION": sl.MODE_DECISION,
    "SW_MODE_INTERVAL": sl.MODE_INTERVAL, "SW_REC_CHAIN_CTX": sl.REC_CHAIN_CTX, "SW_REC_INIT": sl.REC_INIT,
    "SW_NO_ACTION": sl.NO_ACTION, "SW_STATUS_DONE": sl.STATUS_DONE, "SW_STATUS_BAD_SHAPE": sl.STATUS_BAD_SHAPE,
    "SW_STATUS_TOO_MANY_RECORDS": sl.STATUS_TOO_MANY_RECORDS, "SW_STATUS_SDK_ERROR": sl.STATUS_SDK_ERROR,
}


def _c_field(name: str) -> str:
    return C_FIELDS.get(name, name)


def _program() -> str:
    lines = ["#include <stdio.h>", "#include <stddef.h>", '#include "switch_harness.h"',
             '#define P(n, v) printf("%s=%llu\\n", n, (unsigned long long)(v))', "int main(void) {"]
    for s, dt in STRUCTS.items():
        lines.append(f'P("sizeof.{s}", sizeof({s}));')
        for f in dt.names:
            lines.append(f'P("offsetof.{s}.{f}", offsetof({s}, {_c_field(f)}));')
    lines += [f'P("{c}", {c});' for c in CONSTS] + ["return 0; }"]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def c_layout(sdk_build_dir, sdkt) -> dict[str, int]:
    src = sdk_build_dir / "switch_layout_dump.c"
    src.write_text(_program())
    exe = sdkt.build_host([src], sdk_build_dir / "switch_layout_dump", sanitize=False)
    return {k: int(v) for k, v in (line.split("=") for line in sdkt.run([exe]).stdout.split())}


def test_constants_match_python(c_layout):
    for c, v in CONSTS.items():
        assert c_layout[c] == v, c
    assert sl.CTX_WORDS >= 1 + (ss.MAX_HISTORY - 1) * len(ss.FEATURES)


def test_layout_matches_python(c_layout):
    for s, dt in STRUCTS.items():
        assert c_layout[f"sizeof.{s}"] == dt.itemsize, s
        for f in dt.names:
            assert c_layout[f"offsetof.{s}.{f}"] == dt.fields[f][1], (s, f)


@pytest.mark.parametrize("target", ["rv32imc", "rv64imac"])
def test_stub_compiles_strict_on_riscv(target, sdk_build_dir, sdkt):
    """The stub's services, dispatcher and harness build with -Wconversion; the struct sizes hold."""
    src = sdk_build_dir / f"switch_sizes_{target}.c"
    asserts = ["#include <stddef.h>", '#include "switch_harness.h"']
    for s, dt in STRUCTS.items():
        asserts.append(f'_Static_assert(sizeof({s}) == {dt.itemsize}u, "size {s}");')
    src.write_text("\n".join(asserts + ["int rlcc_switch_layout_dummy;"]) + "\n")
    for c in [src, sdk.SDK_DIR / "switch_runtime.c", sdk.SDK_DIR / "switch_harness.c"]:
        sdkt.compile_ok([*sdkt.zig_cc(target), "-O2", "-ffreestanding", *sdkt.WARN, f"-I{sdk.SDK_DIR}", "-c", c,
                         "-o", sdk_build_dir / f"{c.stem}.{target}.o"])
