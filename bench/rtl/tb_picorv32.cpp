/*
 * tb_picorv32.cpp - Verilator testbench for PicoRV32 (native memory interface).
 * The memory answers every request in the cycle it is made (mem_ready combinational on
 * mem_valid): the "memory that can accommodate requests within one clock cycle" the PicoRV32
 * README's cycles-per-instruction table assumes. Arguments and exit codes: tb_mem.h.
 */
#include "Vpicorv32.h"
#include "verilated.h"
#include "tb_mem.h"

int main(int argc, char **argv)
{
    TbArgs a = tb_parse(argc, argv);
    TbMem mem(a);
    TbTrace trace;
    VerilatedContext ctx;
    Vpicorv32 top(&ctx);
    top.clk = 0;
    top.resetn = 0;
    top.mem_ready = 0;
    top.pcpi_wr = 0;
    top.pcpi_wait = 0;
    top.pcpi_ready = 0;
    top.pcpi_rd = 0;
    top.irq = 0;
    for (int i = 0; i < 4; i++) { top.clk = 1; top.eval(); top.clk = 0; top.eval(); }
    top.resetn = 1;
    uint64_t cycle = 0;
    while (!mem.done()) {
        if (cycle >= a.max_cycles) { std::fprintf(stderr, "cycle limit %llu reached\n", (unsigned long long)a.max_cycles); return 3; }
        top.clk = 0;
        top.eval();
        top.mem_ready = top.mem_valid;
        if (top.mem_valid) {
            if (top.mem_wstrb) mem.write(top.mem_addr, top.mem_wdata, top.mem_wstrb);
            else top.mem_rdata = top.mem_instr ? mem.fetch(top.mem_addr) : mem.read(top.mem_addr);
        }
        top.eval();
        top.clk = 1;
        top.eval();
        cycle++;
        if (top.rvfi_valid) trace.retire(cycle, top.rvfi_pc_rdata);
    }
    return tb_finish(top, mem, a, cycle);
}
