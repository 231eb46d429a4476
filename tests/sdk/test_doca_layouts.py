"""The contract header of each DOCA device layout (doca_pcc_dev_layout_*.h, picked by
RLCC_DOCA_LAYOUT) agrees with the one table of the layouts (rlcc.firmware_sdk_stub.doca_layout):
sizes, offsets, the port field's width and the limits, by a host-compiled offsetof/sizeof probe;
and the accessors read a big-endian event laid out from the table's offsets back to its values."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from hostcc import host_cc  # noqa: E402

from rlcc import firmware_sdk_stub as sdk  # noqa: E402
from rlcc import formats as fmt  # noqa: E402
from rlcc.firmware_sdk_stub import doca_layout as dl  # noqa: E402

WARN = ["-Wall", "-Wextra", "-Werror", "-Wconversion", "-pedantic", "-std=c11"]
RISCV = {
    "rv32imc": ["-target", "riscv32-freestanding-none", "-mcpu=generic_rv32+m+c", "-ffreestanding"],
    "rv64imac": ["-target", "riscv64-freestanding-none", "-mcpu=generic_rv64+m+a+c", "-mcmodel=medany", "-ffreestanding"],
}


def _qpn_expr(layout: dl.DocaLayout) -> str:
    """Where the contract header keeps the QP number word (the table's ``qpn``)."""
    if layout.name == "2.5":
        return "offsetof(doca_pcc_dev_event_t, ev_spec_attr.roce_tx.cntrs) + 4u"
    if layout.name == "bf3":
        return "offsetof(doca_pcc_dev_event_t, ev_spec_attr.roce_tx.extra)"
    return "offsetof(doca_pcc_dev_event_t, ev_dword2)"


def _probe(layout: dl.DocaLayout) -> str:
    """Static assertions of every number the table holds for ``layout``."""
    eq = {
        "sizeof(doca_pcc_dev_event_t)": layout.event_bytes,
        "offsetof(doca_pcc_dev_event_t, ev_attr)": layout.ev_attr,
        "offsetof(doca_pcc_dev_event_t, flow_tag)": layout.flow_tag,
        "offsetof(doca_pcc_dev_event_t, sn)": layout.sn,
        "offsetof(doca_pcc_dev_event_t, timestamp)": layout.timestamp,
        "offsetof(doca_pcc_dev_event_t, ev_spec_attr)": layout.spec,
        "sizeof(doca_pcc_dev_event_spec_attr_t)": 16,
        "offsetof(doca_pcc_dev_event_t, ev_spec_attr.ack_nack_cnp.extra)": layout.spec_words[2],
        "offsetof(doca_pcc_dev_event_t, ev_spec_attr.ack_nack_cnp.first_sn)": layout.spec_words[1],
        _qpn_expr(layout): layout.qpn,
        "sizeof(doca_pcc_dev_results_t)": layout.results_bytes,
        "offsetof(doca_pcc_dev_results_t, rate)": layout.rate,
        "offsetof(doca_pcc_dev_results_t, rtt_req)": layout.rtt_req,
        "sizeof(doca_pcc_dev_algo_ctxt_t)": fmt.CTX_BYTES,
        "DOCA_PCC_DEV_MAX_NUM_PARAMS_PER_ALGO": layout.max_params,
        "DOCA_PCC_DEV_MAX_NUM_COUNTERS_PER_ALGO": layout.max_counters,
    }
    lines = ["#include <stddef.h>", '#include "doca_pcc_dev_event.h"', '#include "doca_pcc_dev_algo_access.h"']
    lines += [f'_Static_assert(({k}) == {v}u, "{k}");' for k, v in eq.items()]
    return "\n".join(lines) + "\n"


def _cc(args: list) -> None:
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    assert p.returncode == 0, f"{' '.join(map(str, args))}\n{p.stdout}\n{p.stderr}"


@pytest.mark.parametrize("target", ["host", *RISCV])
@pytest.mark.parametrize("name", dl.LAYOUT_NAMES)
def test_header_matches_the_table(tmp_path, name, target):
    layout = dl.LAYOUTS[name]
    src = tmp_path / "probe.c"
    src.write_text(_probe(layout))
    _cc([*host_cc("zig"), *RISCV.get(target, []), *WARN, f"-DRLCC_DOCA_LAYOUT={layout.c_macro}", f"-I{sdk.SDK_DIR}",
         "-c", src, "-o", tmp_path / "probe.o"])


def test_a_table_that_disagrees_fails_the_probe(tmp_path):
    """The probe has teeth: the BlueField-3 numbers do not hold for the DOCA 2.5 header."""
    src = tmp_path / "probe.c"
    src.write_text(_probe(dl.LAYOUTS["bf3"]))
    p = subprocess.run([*host_cc("zig"), *WARN, "-DRLCC_DOCA_LAYOUT=RLCC_DOCA_LAYOUT_2_5", f"-I{sdk.SDK_DIR}", "-c",
                        str(src), "-o", str(tmp_path / "probe.o")], capture_output=True, text=True)
    assert p.returncode != 0 and "sizeof(doca_pcc_dev_event_t)" in p.stderr


def _event_bytes(layout: dl.DocaLayout, words: dict[int, int]) -> bytes:
    """An event record with ``words`` (byte offset -> value) in the device's (big-endian) order."""
    buf = bytearray(layout.event_bytes)
    for off, value in words.items():
        struct.pack_into(">I", buf, off, value)
    return bytes(buf)


@pytest.mark.parametrize("name", dl.LAYOUT_NAMES)
def test_accessors_read_a_big_endian_event(tmp_path, name):
    """Every accessor returns the value the table's offset holds, byte-swapped from network order;
    the port field is as wide as the table says."""
    layout = dl.LAYOUTS[name]
    port_mask = (1 << layout.port_bits) - 1
    attr = 0x5A000000 | (0xFF << 16) | (0x34 << 8) | fmt.EVENT_RTT  # flags 0x5A, port 0xFF, subtype 0x34
    values = {layout.ev_attr: attr, layout.flow_tag: 0x01020304, layout.sn: 0xA0B0C0D0, layout.timestamp: 0xDEADBEEF,
              layout.spec_words[0]: 0x11223344, layout.spec_words[1]: 0x55667788, layout.spec_words[2]: 0x9900AABB}
    if layout.qpn not in values:
        values[layout.qpn] = 0x00ABCDEF
    raw = _event_bytes(layout, values)
    checks = {
        "doca_pcc_dev_get_ev_attr(e).ev_type": fmt.EVENT_RTT,
        "doca_pcc_dev_get_ev_attr(e).ev_subtype": 0x34,
        "doca_pcc_dev_get_ev_attr(e).port_num": 0xFF & port_mask,
        "doca_pcc_dev_get_ev_attr(e).flags": 0x5A,
        "doca_pcc_dev_get_flowtag(e)": 0x01020304,
        "doca_pcc_dev_get_sn(e)": 0xA0B0C0D0,
        "doca_pcc_dev_get_timestamp(e)": 0xDEADBEEF,
        "doca_pcc_dev_get_rtt_req_send_timestamp(e)": 0x11223344,
        "doca_pcc_dev_get_rtt_req_recv_timestamp(e)": 0x55667788,
        "doca_pcc_dev_get_rtt_resp_send_timestamp(e)": 0x9900AABB,
        "doca_pcc_dev_get_roce_first_timestamp(e)": 0x11223344,
        "doca_pcc_dev_get_roce_ack_first_sn(e)": 0x55667788,
        "doca_pcc_dev_get_ack_nack_cnp_extra(e).num_coalesced": 0xAABB,
        "doca_pcc_dev_get_roce_tx_cntrs(e).sent_pkts": 0x5566,
        "doca_pcc_dev_get_flow_qpn(e)": values[layout.qpn] & 0xFFFFFF,
    }
    body = "\n".join(f"    if ((uint32_t)({expr}) != {want}u) {{ return {i + 1}; }}" for i, (expr, want) in enumerate(checks.items()))
    src = tmp_path / "main.c"
    src.write_text('#include "doca_pcc_dev_event.h"\n'
                   f"static union {{ doca_pcc_dev_event_t ev; unsigned char b[{layout.event_bytes}]; }} u = {{ .b = {{"
                   + ", ".join(str(b) for b in raw) + "} };\n"
                   "int main(void) {\n    doca_pcc_dev_event_t *e = &u.ev;\n" + body + "\n    return 0;\n}\n")
    exe = tmp_path / "acc"
    _cc([*host_cc("zig"), *WARN, f"-DRLCC_DOCA_LAYOUT={layout.c_macro}", f"-I{sdk.SDK_DIR}", src, "-o", exe])
    p = subprocess.run([str(exe)])
    assert p.returncode == 0, f"check {p.returncode}: {list(checks)[p.returncode - 1]}"


def test_unknown_layout_macro_is_refused(tmp_path):
    src = tmp_path / "x.c"
    src.write_text('#include "doca_pcc_dev.h"\n')
    p = subprocess.run([*host_cc("zig"), "-std=c11", "-DRLCC_DOCA_LAYOUT=7", f"-I{sdk.SDK_DIR}", "-c", str(src),
                        "-o", str(tmp_path / "x.o")], capture_output=True, text=True)
    assert p.returncode != 0 and "RLCC_DOCA_LAYOUT must be" in p.stderr


def test_adapter_needs_the_layout(tmp_path):
    """harness_doca.c refuses to build without the table's layout (the build passes it)."""
    p = subprocess.run([*host_cc("zig"), "-std=c11", "-DRLCC_DOCA_SLOT=0u", f"-I{sdk.SDK_DIR}", "-c",
                        str(sdk.SDK_DIR / "harness_doca.c"), "-o", str(tmp_path / "a.o")], capture_output=True, text=True)
    assert p.returncode != 0 and "define the DOCA layout" in p.stderr


def test_table_is_consistent():
    """Word-aligned offsets inside their records, the general words distinct, the same C fits all."""
    for layout in dl.LAYOUTS.values():
        general = [layout.ev_attr, layout.flow_tag, layout.sn, layout.timestamp]
        offs = general + list(layout.spec_words) + [layout.qpn]
        assert all(o % 4 == 0 and 0 <= o <= layout.event_bytes - 4 for o in offs), layout.name
        assert len(set(general + list(layout.spec_words))) == 8, layout.name
        assert {layout.rate, layout.rtt_req} <= set(range(0, layout.results_bytes, 4)), layout.name
    assert dl.MIN_MAX_PARAMS == dl.LAYOUTS["2.5"].max_params
    with pytest.raises(Exception, match="unknown DOCA layout 'bf4'; expected one of 2.5, bf3, cx8"):
        dl.get_layout("bf4")
