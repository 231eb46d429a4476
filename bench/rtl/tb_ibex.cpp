/*
 * tb_ibex.cpp - Verilator testbench for Ibex (ibex_tb_top.sv).
 * Both OBI ports are zero-wait memories: a request is granted in the cycle it is made and its
 * response (rvalid, rdata) arrives in the next cycle, the minimum latency Ibex's docs describe for
 * the instruction and data interfaces. Arguments and exit codes: tb_mem.h.
 */
#include "Vibex_tb_top.h"
#include "verilated.h"
#include "tb_mem.h"

static const uint32_t kBootJumpAddr = 0x0000ff80; /* boot_addr + 0x80 */
static const uint32_t kJalPlus0x80 = 0x0800006f;  /* jal x0, +0x80 (to 0x10000) */
static const uint32_t kNop = 0x00000013;          /* what the prefetcher reads past the boot jump */

int main(int argc, char **argv)
{
    TbArgs a = tb_parse(argc, argv);
    TbMem mem(a);
    TbTrace trace;
    VerilatedContext ctx;
    Vibex_tb_top top(&ctx);
    top.clk_i = 0;
    top.rst_ni = 1; /* a falling reset edge: Ibex's flops reset asynchronously, some on a gated clock */
    top.eval();
    top.rst_ni = 0;
    top.instr_gnt_i = 0;
    top.instr_rvalid_i = 0;
    top.data_gnt_i = 0;
    top.data_rvalid_i = 0;
    return tb_run_obi(
        top, mem, a,
        [&](uint32_t addr, uint64_t, uint32_t &word) {
            if (addr < kBootJumpAddr) { /* a trap: the harness never takes one */
                std::fprintf(stderr, "trap: exception pc 0x%08x mtval 0x%08x\n", top.crash_dump_o[1], top.crash_dump_o[0]);
                return false;
            }
            word = addr == kBootJumpAddr ? kJalPlus0x80 : addr < a.base ? kNop : mem.fetch(addr);
            return true;
        },
        [&](uint64_t cycle) { if (top.rvfi_valid) trace.retire(cycle, top.rvfi_pc_rdata); });
}
