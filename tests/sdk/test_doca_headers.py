"""rlcc's DOCA PCC contract headers (firmware_sdk_stub/doca_pcc_dev*.h) agree with the Python
records (rlcc.codegen.sdk_flavours limits, rlcc.formats event types/flags/rate/layout) and compile
warning-free, -pedantic, hosted and for rv32/rv64, as do the library stub and harness adapter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hostcc import host_cc  # noqa: E402

from rlcc import firmware_sdk_stub as sdk  # noqa: E402
from rlcc import formats as fmt  # noqa: E402
from rlcc.codegen import sdk_flavours as fl  # noqa: E402

WARN = ["-Wall", "-Wextra", "-Werror", "-Wconversion", "-pedantic", "-std=c11"]
RISCV = {
    "rv32imc": ["-target", "riscv32-freestanding-none", "-mcpu=generic_rv32+m+c"],
    "rv64imac": ["-target", "riscv64-freestanding-none", "-mcpu=generic_rv64+m+a+c", "-mcmodel=medany"],
}


def _asserts() -> str:
    """C static assertions of every number the contract shares with Python."""
    eq = {
        "DOCA_PCC_DEV_MAX_NUM_PORTS": fl.DOCA_MAX_NUM_PORTS,
        "DOCA_PCC_DEV_MAX_NUM_USER_SLOTS": fl.DOCA_MAX_NUM_USER_SLOTS,
        "DOCA_PCC_DEV_MAX_NUM_ALGOS": fl.DOCA_MAX_NUM_ALGOS,
        "DOCA_PCC_DEV_MAX_NUM_PARAMS_PER_ALGO": fl.DOCA_MAX_NUM_PARAMS_PER_ALGO,
        "DOCA_PCC_DEV_MAX_NUM_COUNTERS_PER_ALGO": fl.DOCA_MAX_NUM_COUNTERS_PER_ALGO,
        "DOCA_PCC_DEV_ALGO_SLOT_INTERNAL": fl.DOCA_ALGO_SLOT_INTERNAL,
        "DOCA_PCC_DEV_MAX_RATE": fmt.RATE_MAX,
        "DOCA_PCC_DEV_LOG_MAX_RATE": fmt.RATE_FRAC_BITS,
        "DOCA_PCC_DEV_EVNT_NULL": fmt.EVENT_NULL,
        "DOCA_PCC_DEV_EVNT_FW": fmt.EVENT_FW,
        "DOCA_PCC_DEV_EVNT_ROCE_CNP": fmt.EVENT_CNP,
        "DOCA_PCC_DEV_EVNT_ROCE_TX": fmt.EVENT_TX,
        "DOCA_PCC_DEV_EVNT_ROCE_ACK": fmt.EVENT_ACK,
        "DOCA_PCC_DEV_EVNT_ROCE_NACK": fmt.EVENT_NACK,
        "DOCA_PCC_DEV_EVNT_RTT": fmt.EVENT_RTT,
        "DOCA_PCC_DEV_TX_FLAG_ACK_EXPECTED": fmt.TX_FLAG_ACK_EXPECTED,
        "DOCA_PCC_DEV_TX_FLAG_OVERLOADED": fmt.TX_FLAG_OVERLOADED,
        "DOCA_PCC_DEV_TX_FLAG_RTT_REQ_SENT": fmt.TX_FLAG_RTT_REQ_SENT,
        "sizeof(doca_pcc_dev_algo_ctxt_t)": fmt.CTX_BYTES,
        "sizeof(doca_pcc_dev_event_t)": fmt.EVENT_BYTES,
        "sizeof(doca_pcc_dev_results_t)": 4 * fmt.RESULT_WORDS,
        "offsetof(doca_pcc_dev_event_t, flow_tag)": 4 * fmt.EV_FLOW_TAG,
        "offsetof(doca_pcc_dev_event_t, sn)": 4 * fmt.EV_SN,
        "offsetof(doca_pcc_dev_event_t, timestamp)": 4 * fmt.EV_TIMESTAMP,
        "offsetof(doca_pcc_dev_event_t, ev_spec_attr.rtt_tstamp.req_send_timestamp)": 4 * fmt.EV_RTT_REQ_SEND_TS,
        "offsetof(doca_pcc_dev_event_t, ev_spec_attr.rtt_tstamp.req_recv_timestamp)": 4 * fmt.EV_RTT_REQ_RECV_TS,
        "offsetof(doca_pcc_dev_event_t, ev_spec_attr.rtt_tstamp.resp_send_timestamp)": 4 * fmt.EV_RTT_RESP_SEND_TS,
        "offsetof(doca_pcc_dev_event_t, ev_spec_attr.ack_nack_cnp.extra)": 4 * fmt.EV_COALESCED,
    }
    lines = ["#include <stddef.h>", '#include "doca_pcc_dev_event.h"', '#include "doca_pcc_dev_algo_access.h"']
    lines += [f'_Static_assert(({k}) == {v}u, "{k}");' for k, v in eq.items()]
    # bit-field placement: the attribute words have the stub's (rlcc.formats) bit layout
    lines += ["uint32_t check_bits(void);",
              "uint32_t check_bits(void) {",
              "    union { doca_pcc_dev_attr_t s; uint32_t w; } a = {0};",
              "    union { doca_pcc_dev_event_general_attr_t s; uint32_t w; } g = {0};",
              "    union { doca_pcc_dev_ack_nack_cnp_extra_t s; uint32_t w; } x = {0};",
              "    a.s.algo_slot = 0xFu; a.s.overload = 1u; g.s.ev_type = 0xABu; g.s.port_num = 0x12u;",
              "    x.s.num_coalesced = 0xFFFFu;",
              f"    return (uint32_t)((a.w == {fmt.ATTR_SLOT_MASK | fmt.ATTR_OVERLOAD_BIT}u) + (g.w == 0x1200ABu)"
              f" + (x.w == {fmt.COALESCED_MASK}u));",
              "}"]
    return "\n".join(lines) + "\n"


def _compile(args: list, tmp: Path) -> None:
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    assert p.returncode == 0, f"{' '.join(map(str, args))}\n{p.stdout}\n{p.stderr}"


@pytest.mark.parametrize("target", ["host", *RISCV])
def test_contract_matches_python_and_compiles(tmp_path, target):
    src = tmp_path / "check.c"
    src.write_text(_asserts())
    flags = [] if target == "host" else [*RISCV[target], "-ffreestanding"]
    cc = host_cc("zig")
    _compile([*cc, *flags, *WARN, "-O2", f"-I{sdk.SDK_DIR}", "-c", src, "-o", tmp_path / "check.o"], tmp_path)
    for name in ("doca_pcc_dev_stub.c", "harness_doca.c"):
        _compile([*cc, *flags, *WARN, "-O2", *fl.choose("doca", 3).build_defines(), f"-I{sdk.SDK_DIR}", "-c", sdk.SDK_DIR / name,
                  "-o", tmp_path / f"{name}.o"], tmp_path)


def test_bit_layout_at_run_time(tmp_path):
    """The bit fields land where rlcc.formats puts them (the adapter passes the words through)."""
    src = tmp_path / "main.c"
    src.write_text(_asserts() + "int main(void) { return check_bits() == 3u ? 0 : 1; }\n")
    exe = tmp_path / "bits"
    _compile([*host_cc("zig"), *WARN, f"-I{sdk.SDK_DIR}", src, "-o", exe], tmp_path)
    assert subprocess.run([str(exe)]).returncode == 0


def test_contract_compiles_with_gcc(tmp_path):
    cc = host_cc("gcc")
    src = tmp_path / "check.c"
    src.write_text(_asserts())
    _compile([*cc, *WARN, "-O2", f"-I{sdk.SDK_DIR}", "-c", src, "-o", tmp_path / "check.o"], tmp_path)
    for name in ("doca_pcc_dev_stub.c", "harness_doca.c"):
        _compile([*cc, *WARN, "-O2", *fl.choose("doca", 0).build_defines(), f"-I{sdk.SDK_DIR}", "-c", sdk.SDK_DIR / name,
                  "-o", tmp_path / f"{name}.o"], tmp_path)


def test_adapter_needs_its_slot(tmp_path):
    """harness_doca.c refuses to build without the slot (the build passes it from the manifest)."""
    p = subprocess.run([*host_cc("zig"), "-std=c11", f"-I{sdk.SDK_DIR}", "-c", str(sdk.SDK_DIR / "harness_doca.c"),
                        "-o", str(tmp_path / "a.o")], capture_output=True, text=True)
    assert p.returncode != 0 and "RLCC_DOCA_SLOT" in p.stderr


def test_every_declaration_cites_its_source():
    """Each contract header names the public DOCA document it follows."""
    for name in ("doca_pcc_dev.h", "doca_pcc_dev_event.h", "doca_pcc_dev_algo_access.h"):
        text = (sdk.SDK_DIR / name).read_text()
        assert "DOCA 2.5" in text and "[H]" in text, name
