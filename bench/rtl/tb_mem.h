/*
 * tb_mem.h - the memory model and run convention shared by rlcc's Verilator testbenches.
 *
 * Usage: <tb> IMAGE BASE SIZE STATUS_ADDR OUT_ADDR OUT_NBYTES OUT_FILE MAX_CYCLES [FETCH_IMAGE]
 *   IMAGE       raw RAM image from BASE (the ELF's PT_LOAD segments with the harness input table
 *               already written, exactly what rlcc's emulator runs); the rest of RAM is zero
 *   STATUS_ADDR address of the harness output header's status word: the run ends at the first
 *               store of RLCC_STATUS_DONE (1) there, i.e. after the last record was written
 *   OUT_ADDR, OUT_NBYTES  the output table, written to OUT_FILE when the run ends
 *   FETCH_IMAGE what the instruction port reads instead of IMAGE (same length; for a core
 *               that names a counter CSR differently, see rtl_run.py); data accesses see IMAGE
 * Exit status: 0 done, 2 bad arguments or image, 3 cycle limit, 4 access outside RAM, 5 trap.
 * With RLCC_TB_TRACE=<file> set, the testbench writes "<cycle> <pc>" (hex) per retired instruction
 * (from the core's RVFI port) to <file>: per-instruction timing for diagnosing the cycle model.
 * Prints "cycles <n>" (clock cycles from reset release to the status store) on stdout.
 */
#ifndef RLCC_TB_MEM_H
#define RLCC_TB_MEM_H

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

struct TbArgs {
    const char *image, *out_file, *fetch_image;
    uint32_t base, size, status_addr, out_addr, out_nbytes;
    uint64_t max_cycles;
};

static TbArgs tb_parse(int argc, char **argv)
{
    if (argc != 9 && argc != 10) {
        std::fprintf(stderr, "usage: %s IMAGE BASE SIZE STATUS_ADDR OUT_ADDR OUT_NBYTES OUT_FILE MAX_CYCLES [FETCH_IMAGE]\n", argv[0]);
        std::exit(2);
    }
    TbArgs a;
    a.image = argv[1];
    a.base = (uint32_t)std::strtoul(argv[2], nullptr, 0);
    a.size = (uint32_t)std::strtoul(argv[3], nullptr, 0);
    a.status_addr = (uint32_t)std::strtoul(argv[4], nullptr, 0);
    a.out_addr = (uint32_t)std::strtoul(argv[5], nullptr, 0);
    a.out_nbytes = (uint32_t)std::strtoul(argv[6], nullptr, 0);
    a.out_file = argv[7];
    a.max_cycles = std::strtoull(argv[8], nullptr, 0);
    a.fetch_image = argc == 10 ? argv[9] : argv[1];
    return a;
}

/* Word-addressed RAM with byte strobes serving the instruction (fetch) and data (read/write) ports. */
class TbMem {
public:
    TbMem(const TbArgs &a) : base_(a.base), bytes_(a.size, 0), fetch_(a.size, 0), status_addr_(a.status_addr)
    {
        load(a.image, bytes_);
        load(a.fetch_image, fetch_);
    }
    uint32_t read(uint32_t addr) const { return word(bytes_, addr); }
    uint32_t fetch(uint32_t addr) const { return word(fetch_, addr); }
    void write(uint32_t addr, uint32_t data, uint32_t strb)
    {
        uint32_t off = check(addr & ~3u);
        for (int i = 0; i < 4; i++)
            if (strb & (1u << i)) bytes_[off + i] = fetch_[off + i] = (uint8_t)(data >> (8 * i));
        if ((addr & ~3u) == status_addr_ && (strb & 1u) && (data & 0xffu) == 1u) done_ = true;
    }
    bool done() const { return done_; }
    void dump(const TbArgs &a) const
    {
        FILE *f = std::fopen(a.out_file, "wb");
        if (!f) { std::perror(a.out_file); std::exit(2); }
        std::fwrite(&bytes_[check(a.out_addr)], 1, a.out_nbytes, f);
        std::fclose(f);
    }

private:
    static void load(const char *path, std::vector<uint8_t> &dst)
    {
        FILE *f = std::fopen(path, "rb");
        if (!f) { std::perror(path); std::exit(2); }
        size_t n = std::fread(dst.data(), 1, dst.size(), f);
        std::fclose(f);
        if (n == 0) { std::fprintf(stderr, "%s: empty image\n", path); std::exit(2); }
    }
    uint32_t word(const std::vector<uint8_t> &src, uint32_t addr) const
    {
        uint32_t v;
        std::memcpy(&v, &src[check(addr & ~3u)], 4);
        return v;
    }
    uint32_t check(uint32_t addr) const
    {
        uint32_t off = addr - base_;
        if (off >= bytes_.size()) {
            std::fprintf(stderr, "access outside RAM at 0x%08x\n", addr);
            std::exit(4);
        }
        return off;
    }
    uint32_t base_;
    std::vector<uint8_t> bytes_, fetch_;
    uint32_t status_addr_;
    bool done_ = false;
};

/* Per-retirement trace (RLCC_TB_TRACE), or nothing when the variable is unset. */
class TbTrace {
public:
    TbTrace() { const char *p = std::getenv("RLCC_TB_TRACE"); f_ = p ? std::fopen(p, "w") : nullptr; }
    ~TbTrace() { if (f_) std::fclose(f_); }
    void retire(uint64_t cycle, uint32_t pc) { if (f_) std::fprintf(f_, "%llx %x\n", (unsigned long long)cycle, pc); }

private:
    FILE *f_;
};

/* The end of a run: the output table, the cycle count on stdout, exit code 0. */
template <class Top>
static int tb_finish(Top &top, TbMem &mem, const TbArgs &a, uint64_t cycle)
{
    mem.dump(a);
    std::printf("cycles %llu\n", (unsigned long long)cycle);
    top.final();
    return 0;
}

/* A core with OBI instruction and data ports (Ibex, CV32E40P), held in reset by the caller: four
 * reset cycles, then run to the harness's done store on zero-wait memories (a request is granted in
 * the cycle it is made and answered, rvalid + rdata, in the next). fetch(addr, cycle, word) gives
 * the word at a word-aligned instruction address, or prints the trap and returns false;
 * retired(cycle) runs after every rising edge. Returns the exit code (0, 3 cycle limit, 5 trap). */
template <class Top, class Fetch, class Retired>
static int tb_run_obi(Top &top, TbMem &mem, const TbArgs &a, Fetch fetch, Retired retired)
{
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
        if (i_pending && !fetch(top.instr_addr_o & ~3u, cycle, i_data)) return 5;
        d_pending = top.data_req_o;
        if (d_pending) {
            if (top.data_we_o) { mem.write(top.data_addr_o, top.data_wdata_o, top.data_be_o); d_data = 0; }
            else d_data = mem.read(top.data_addr_o);
        }
        top.clk_i = 1;
        top.eval();
        cycle++;
        retired(cycle);
    }
    return tb_finish(top, mem, a, cycle);
}

#endif
