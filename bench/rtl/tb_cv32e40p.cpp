/*
 * tb_cv32e40p.cpp - Verilator testbench for CV32E40P (cv32e40p_tb_top.sv).
 * Both OBI ports are zero-wait memories: a request is granted in the cycle it is made and its
 * response (rvalid, rdata) arrives in the next cycle ("zero stall on the instruction-side and
 * data-side memory interface", the assumption of the CV32E40P cycle-count table). Arguments and
 * exit codes: tb_mem.h (no retirement trace: cv32e40p_top has no RVFI port).
 */
#include "Vcv32e40p_tb_top.h"
#include "verilated.h"
#include "tb_mem.h"

/* Boot ROM below RAM: CV32E40P resets mcountinhibit to inhibit the counters, so the platform
 * enables them before jumping to rlcc's _start (the firmware only reads them). */
static const uint32_t kBootAddr = 0x0000ff00;
static const uint32_t kBootRom[2] = {0x32001073u,  /* csrw mcountinhibit, zero */
                                     0x0fc0006fu}; /* jal zero, 0x10000 */
static const uint32_t kNop = 0x00000013u;            /* what the prefetcher reads past the ROM */

int main(int argc, char **argv)
{
    TbArgs a = tb_parse(argc, argv);
    TbMem mem(a);
    VerilatedContext ctx;
    Vcv32e40p_tb_top top(&ctx);
    top.clk_i = 0;
    top.rst_ni = 1; /* a falling reset edge for the asynchronously reset flops */
    top.instr_gnt_i = 0;
    top.instr_rvalid_i = 0;
    top.data_gnt_i = 0;
    top.data_rvalid_i = 0;
    top.eval();
    top.rst_ni = 0;
    for (int i = 0; i < 4; i++) { top.clk_i = 1; top.eval(); top.clk_i = 0; top.eval(); }
    top.rst_ni = 1;
    bool i_pending = false, d_pending = false;
    uint32_t i_data = 0, d_data = 0;
    uint64_t cycle = 0;
    while (!mem.done()) {
        if (cycle >= a.max_cycles) { std::fprintf(stderr, "cycle limit %llu reached\n", (unsigned long long)a.max_cycles); return 3; }
        top.clk_i = 0;
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
            if (addr < kBootAddr) { /* mtvec and the debug addresses sit below the boot ROM: a trap */
                std::fprintf(stderr, "trap: fetch from 0x%08x at cycle %llu\n", addr, (unsigned long long)cycle);
                return 5;
            }
            i_data = addr >= a.base ? mem.fetch(addr) : addr - kBootAddr < 8 ? kBootRom[(addr - kBootAddr) / 4] : kNop;
        }
        d_pending = top.data_req_o;
        if (d_pending) {
            if (top.data_we_o) { mem.write(top.data_addr_o, top.data_wdata_o, top.data_be_o); d_data = 0; }
            else d_data = mem.read(top.data_addr_o);
        }
        top.clk_i = 1;
        top.eval();
        cycle++;
    }
    mem.dump(a);
    std::printf("cycles %llu\n", (unsigned long long)cycle);
    top.final();
    return 0;
}
