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
    for (int i = 0; i < 4; i++) { top.clk_i = 1; top.eval(); top.clk_i = 0; top.eval(); }
    top.rst_ni = 1;
    bool i_pending = false, d_pending = false;
    uint32_t i_data = 0, d_data = 0;
    uint64_t cycle = 0;
    while (!mem.done()) {
        if (cycle >= a.max_cycles) { std::fprintf(stderr, "cycle limit %llu reached\n", (unsigned long long)a.max_cycles); return 3; }
        top.clk_i = 0;
        /* responses to last cycle's granted requests */
        top.instr_rvalid_i = i_pending;
        top.instr_rdata_i = i_data;
        top.data_rvalid_i = d_pending;
        top.data_rdata_i = d_data;
        top.eval();
        top.instr_gnt_i = top.instr_req_o;
        top.data_gnt_i = top.data_req_o;
        top.eval();
        i_pending = top.instr_req_o;
        if (i_pending) {
            uint32_t addr = top.instr_addr_o & ~3u;
            if (addr < kBootJumpAddr) { /* a trap: the harness never takes one */
                std::fprintf(stderr, "trap: exception pc 0x%08x mtval 0x%08x\n", top.crash_dump_o[1], top.crash_dump_o[0]);
                return 5;
            }
            i_data = addr == kBootJumpAddr ? kJalPlus0x80 : addr < a.base ? kNop : mem.fetch(addr);
        }
        d_pending = top.data_req_o;
        if (d_pending) {
            if (top.data_we_o) { mem.write(top.data_addr_o, top.data_wdata_o, top.data_be_o); d_data = 0; }
            else d_data = mem.read(top.data_addr_o);
        }
        top.clk_i = 1;
        top.eval();
        cycle++;
        if (top.rvfi_valid) trace.retire(cycle, top.rvfi_pc_rdata);
    }
    mem.dump(a);
    std::printf("cycles %llu\n", (unsigned long long)cycle);
    top.final();
    return 0;
}
