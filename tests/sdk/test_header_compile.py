"""The SDK header and every runtime/harness/example source compile warning-free with
-Wall -Wextra -Werror -Wconversion -std=c11 -pedantic for the host (zig clang always; gcc and
clang too when installed) and zig clang for riscv32/riscv64 freestanding; the helpers need no
compiler_rt/libc symbols on RISC-V."""

from __future__ import annotations

import pytest
from elftools.elf.elffile import ELFFile

from rlcc import firmware_sdk_stub as sdk

USE_ALL = r"""
#include "pcc_sdk.h"
#include "pcc_harness.h"
uint64_t t_mult(uint32_t a, uint32_t b) { return pcc_mult(a, b); }
uint32_t t_fxp_mult(uint32_t a, uint32_t b) { return pcc_fxp_mult(a, b); }
uint32_t t_recip(uint32_t a) { return pcc_fxp_recip(a); }
int32_t t_log2(uint32_t a) { return pcc_fxp_log2(a); }
uint32_t t_pow2(int32_t a) { return pcc_fxp_pow2(a); }
uint32_t t_fls(uint32_t a) { return pcc_fls(a); }
uint32_t t_isqrt(uint64_t a) { return pcc_isqrt64(a); }
uint32_t t_rtt(const pcc_event_t *e) { return pcc_rtt_ns(e); }
uint32_t t_acc(const pcc_event_t *e) {
    return pcc_ev_type(e) + pcc_ev_subtype(e) + pcc_ev_port(e) + pcc_ev_flags(e) + pcc_ev_flow_tag(e)
         + pcc_ev_sn(e) + pcc_ev_rtt_req_recv_ts(e) + pcc_ev_rtt_resp_send_ts(e) + pcc_ev_tx_sent_units(e)
         + pcc_ev_tx_sent_packets(e) + pcc_ev_tx_flow_id(e) + pcc_ev_first_ts(e) + pcc_ev_first_sn(e)
         + pcc_ev_coalesced(e);
}
uint32_t t_attr(pcc_attr_t a) { return pcc_attr_slot(a) + (pcc_attr_overloaded(a) ? 1u : 0u); }
uint64_t t_counters(void) { pcc_fence(); pcc_printf("x %u", 1u); return pcc_rdcycle() + pcc_rdinstret(); }
"""

SOURCES = ["pcc_runtime.c", "harness_core.c", "harness.c"]


@pytest.fixture(scope="module")
def use_all_src(sdk_build_dir):
    p = sdk_build_dir / "use_all.c"
    p.write_text(USE_ALL)
    return p


@pytest.mark.parametrize("cc", ["zig", "gcc", "clang"])
def test_host_pedantic(cc, use_all_src, sdk_build_dir, sdkt):
    srcs = [use_all_src] + [sdk.SDK_DIR / s for s in SOURCES + ["harness_host.c"]] + [sdk.example_source()]
    for s in srcs:
        sdkt.compile_ok([*sdkt.host_cc(cc), *sdkt.WARN, "-pedantic", "-O2", f"-I{sdk.SDK_DIR}", "-c", s,
                         "-o", sdk_build_dir / f"host_{cc}.o"])


@pytest.mark.parametrize("target", ["rv32imc", "rv64imac"])
def test_riscv_freestanding(target, use_all_src, sdk_build_dir, sdkt):
    srcs = [use_all_src, sdk.example_source()] + [sdk.SDK_DIR / s for s in SOURCES]
    for s in srcs:
        obj = sdk_build_dir / f"{target}_{s.stem}.o"
        sdkt.compile_ok([*sdkt.zig_cc(target), "-O2", "-ffreestanding", *sdkt.WARN, f"-I{sdk.SDK_DIR}",
                         "-c", s, "-o", obj])
        with open(obj, "rb") as fh:
            syms = ELFFile(fh).get_section_by_name(".symtab").iter_symbols()
            undef = {x.name for x in syms if x["st_shndx"] == "SHN_UNDEF" and x.name}
        # only references between our own files are allowed (no __udivdi3, memcpy, float helpers)
        allowed = {"user_algo", "user_init", "user_set_algo_params", "pcc_params", "pcc_counters",
                   "pcc_stub_now_ns", "rlcc_harness_run", "pcc_host_set_params"}
        assert undef <= allowed, (s.name, undef - allowed)


def test_sdk_paths():
    assert sdk.header_path().is_file()
    for t in sdk.TARGETS:
        assert all(p.is_file() for p in sdk.runtime_sources(t))
    assert sdk.linker_script("rv32imc").is_file() and sdk.linker_script("rv64imac").is_file()
    from rlcc.errors import BadInputError

    with pytest.raises(BadInputError):
        sdk.runtime_sources("armv7")
    with pytest.raises(BadInputError):
        sdk.linker_script("host")
