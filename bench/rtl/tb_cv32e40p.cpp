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
    return tb_run_obi(
        top, mem, a,
        [&](uint32_t addr, uint64_t cycle, uint32_t &word) {
            if (addr < kBootAddr) { /* mtvec and the debug addresses sit below the boot ROM: a trap */
                std::fprintf(stderr, "trap: fetch from 0x%08x at cycle %llu\n", addr, (unsigned long long)cycle);
                return false;
            }
            word = addr >= a.base ? mem.fetch(addr) : addr - kBootAddr < 8 ? kBootRom[(addr - kBootAddr) / 4] : kNop;
            return true;
        },
        [](uint64_t) {});
}
