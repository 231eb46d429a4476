/* Shared definitions of the rlcc RISC-V interpreter core: decoded-instruction form, halt/fault
 * codes, cost keys and the machine state. Ops, cycle classes and operand formats: rv_ops.h. */
#ifndef RLCC_RV_H
#define RLCC_RV_H

#include <stdint.h>
#include <stddef.h>

#define RV_LIKELY(x) __builtin_expect(!!(x), 1)
#define RV_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Index 32 of the register file is a write sink: decode maps rd == x0 to it, so x[0] stays 0. */
#define RV_SINK 32
#define RV_NREGS 33

#include "rv_ops.h"

/* Order of the cost tuple passed to Core.set_costs (exported as _rvcore.COST_KEYS): X(KEY, "name"). */
#define RV_COSTS(X)                            \
    X(ALU, "alu")                              \
    X(BRANCH_TAKEN, "branch_taken")            \
    X(BRANCH_NOT_TAKEN, "branch_not_taken")    \
    X(JUMP, "jump")                            \
    X(LOAD, "load")                            \
    X(LOAD_USE_STALL, "load_use_stall")        \
    X(STORE, "store")                          \
    X(MUL, "mul")                              \
    X(DIV, "div")                              \
    X(CSR, "csr")                              \
    X(ATOMIC, "atomic")                        \
    X(MULH_EXTRA, "mulh_extra")                \
    X(MISALIGNED_TARGET, "misaligned_target")  \
    X(MISALIGNED_FETCH, "misaligned_fetch")    \
    X(JALR_EXTRA, "jalr_extra")                \
    X(DIV_BY_ZERO, "div_by_zero")              \
    X(DIV_CLZ, "div_clz")                      \
    X(JALR_DEP_STALL, "jalr_dep_stall")        \
    X(JALR_DEP_LINK_EXTRA, "jalr_dep_link_extra") \
    X(JALR_LOAD_DEP2_STALL, "jalr_load_dep2_stall") \
    X(BRANCH_LOOKAHEAD_MISALIGNED, "branch_lookahead_misaligned")
/* The last ten are effects of validated cores: mulh_extra on mulh/mulhsu/mulhu on top of mul;
 * jalr_extra on jalr on top of jump; jalr_dep_stall when a jalr reads the destination of the
 * instruction just before it (not a jump's link register: that is written early), plus
 * jalr_dep_link_extra when that jalr also writes the register it reads (auipc ra; jalr ra, x(ra));
 * jalr_load_dep2_stall when a jalr reads the destination of a load two instructions before it (the
 * one in between not writing that register; lw ra; addi sp; ret);
 * div_by_zero replaces div when the divisor (its low 32 bits for the
 * *w forms) is zero, otherwise div_clz is added per leading zero bit of the divisor (an early-out
 * divider); cycle_model.py sets div_by_zero to div when a profile omits it and the others to 0,
 * the model older profiles were written for; misaligned_target when a taken branch or a jump
 * lands on a 32-bit instruction at an address = 2 mod 4 (two fetch words before it can issue);
 * misaligned_fetch on every 32-bit instruction at an address = 2 mod 4; branch_lookahead_misaligned
 * when a branch is taken whose fall-through instruction is such an instruction (a core that fetches
 * the fall-through before the branch resolves has read its second word for nothing). */

/* Halt codes of rv_run32/64 (exported as _rvcore.HALT_NAMES). */
#define RV_HALTS(X) X(NONE, "none") X(ECALL, "ecall") X(EBREAK, "ebreak") X(FAULT, "fault") X(LIMIT, "limit")

/* Fault kinds (exported as _rvcore.FAULT_NAMES). */
#define RV_FAULTS(X)                                \
    X(NONE, "none")                                 \
    X(FETCH_OUT_OF_RANGE, "fetch_out_of_range")     \
    X(FETCH_MISALIGNED, "fetch_misaligned")         \
    X(ILLEGAL_INSTRUCTION, "illegal_instruction")   \
    X(LOAD_OUT_OF_RANGE, "load_out_of_range")       \
    X(LOAD_MISALIGNED, "load_misaligned")           \
    X(STORE_OUT_OF_RANGE, "store_out_of_range")     \
    X(STORE_MISALIGNED, "store_misaligned")         \
    X(AMO_OUT_OF_RANGE, "amo_out_of_range")         \
    X(AMO_MISALIGNED, "amo_misaligned")             \
    X(JUMP_OUT_OF_RANGE, "jump_out_of_range")       \
    X(STACK_OVERFLOW, "stack_overflow") /* a load/store/AMO executed while sp was below stack_lo */

#define RV_ENUM_COST(k, name) COST_##k,
#define RV_ENUM_HALT(k, name) HALT_##k,
#define RV_ENUM_FAULT(k, name) FAULT_##k,
#define RV_ENUM_CLS(c, name, cost) CLS_##c,
#define RV_ENUM_FMT(f, name, rs1, rs2, rd) FMT_##f,
#define RV_ENUM_OP(o, name, cls, fmt) OP_##o,
enum rv_cost { RV_COSTS(RV_ENUM_COST) COST_COUNT };
enum rv_halt { RV_HALTS(RV_ENUM_HALT) HALT_COUNT };
enum rv_fault { RV_FAULTS(RV_ENUM_FAULT) FAULT_COUNT };
enum rv_cls { RV_CLASSES(RV_ENUM_CLS) CLS_COUNT };
enum rv_fmt { RV_FORMATS(RV_ENUM_FMT) FMT_COUNT };
enum rv_op { RV_OPS(RV_ENUM_OP) OP_COUNT };
#undef RV_ENUM_COST
#undef RV_ENUM_HALT
#undef RV_ENUM_FAULT
#undef RV_ENUM_CLS
#undef RV_ENUM_FMT
#undef RV_ENUM_OP
_Static_assert(OP_UNDECODED == 0, "OP_UNDECODED (a block's fall-through record) must stay op 0");
_Static_assert(OP_COUNT <= 256, "rv_dinsn.op is a uint8_t");

/* CSR numbers of the user-level counters (Zicntr). */
#define CSR_CYCLE 0xC00
#define CSR_TIME 0xC01
#define CSR_INSTRET 0xC02
#define CSR_CYCLEH 0xC80
#define CSR_TIMEH 0xC81
#define CSR_INSTRETH 0xC82

/* One decoded instruction, as the decoder returns it. */
typedef struct {
    uint8_t op;  /* enum rv_op */
    uint8_t rd;  /* RV_SINK when the architectural rd is x0 */
    uint8_t rs1; /* 0 when the instruction does not read rs1 (used by the load-use check) */
    uint8_t rs2; /* 0 when the instruction does not read rs2 */
    int32_t imm; /* sign-extended immediate; CSR number for OP_CSRR */
    uint32_t raw; /* instruction word as fetched (16-bit forms zero-extended) */
    uint8_t len;  /* 2 or 4 */
    uint8_t cls;  /* enum rv_cls */
    uint8_t pad[2];
} rv_dinsn;

/* Most instructions in one pre-decoded block (rv_rec.idx is a uint8_t). */
#define RV_MAX_BLOCK 64

/* One instruction of a pre-decoded block (rv_exec_body.h): the decoded form plus what the block
 * builder folded in. A block is a run of records ending at a branch, jump, ecall/ebreak or illegal
 * instruction, or, after RV_MAX_BLOCK instructions or before a fetch that would fault, at a
 * fall-through record (op OP_UNDECODED, idx = n, off = the next instruction's). */
typedef struct {
    const void *h;   /* handler address (threaded dispatch), NULL in the switch build */
    int32_t imm;
    uint32_t pre;    /* static cycles of the block's records before this one */
    uint32_t raw;
    uint32_t off;    /* RAM offset of this instruction (RAM is at most 4 GiB) */
    uint8_t op, rd, rs1, rs2;
    uint8_t len, cls;
    uint8_t idx;     /* position in the block */
    uint8_t stall;   /* 1: reads the destination of the load just before it (static load-use stall) */
} rv_rec;

/* Header of a pre-decoded block; its static cycles are charged at entry, its class counts when
 * rv_blocks_fold adds execs times cls_n (at the end of a run and before a flush), the dynamic terms
 * (a load-use stall or misaligned_target on its first record, taken branches, divides, jalr
 * dependences on the first record) as they happen. */
typedef struct {
    uint64_t off;       /* RAM offset of the first instruction */
    uint32_t first, n;  /* first record in rv_state.recs; instructions (fall-through record excluded) */
    uint64_t scyc;      /* static cycles of all n instructions */
    uint32_t nstall;    /* static load-use stalls */
    uint8_t mis0;       /* the first record is a 32-bit instruction at an address = 2 mod 4 */
    uint8_t ft_mis;     /* the block ends with a branch whose fall-through instruction is one too */
    uint64_t execs;     /* entries not yet folded into rv_state.cls_count */
    uint32_t succ[2];   /* 1 + index of the block last entered after this one falls through (0) or
                         * jumps (1), 0: none; checked against the new pc before use */
    uint32_t cls_n[CLS_COUNT]; /* instructions per cycle class */
} rv_blk;

typedef struct {
    int xlen;            /* 32 or 64 */
    int zbb;             /* Zbb encodings legal */
    uint64_t base, size; /* RAM [base, base + size) */
    uint8_t *mem;
    /* Block cache: blk_of[off / 2] = 1 + index in blks of the block starting at off (0: none);
     * code_gran[off / 8] != 0 when the 8-byte granule holds part of a decoded instruction, so a
     * store there drops every block (self-modifying code). Records and headers are pools. */
    uint32_t *blk_of;
    uint8_t *code_gran;
    rv_rec *recs;
    rv_blk *blks;
    uint32_t *dirty;    /* blocks with execs > 0 (cap_blks entries) */
    uint32_t nrecs, cap_recs, nblks, cap_blks, ndirty;
    uint32_t temp_recs, temp_blks; /* pool sizes before the first unregistered block of a run (UINT32_MAX: none) */
    uint64_t code_lo, code_hi; /* offsets spanned by decoded instructions (write_mem's filter) */
    uint64_t x[RV_NREGS];
    uint64_t pc;
    uint64_t cycles, instret;
    uint32_t cost[COST_COUNT];
    uint64_t clock_hz, timebase_hz;
    uint64_t cls_count[CLS_COUNT];
    uint64_t n_taken, n_stalls;
    unsigned ld_rd; /* destination of the previous instruction if it was a load, else 0 */
    unsigned ld2_rd; /* the same for the instruction before that (jalr_load_dep2_stall) */
    int redirected; /* the previous instruction was a taken branch or a jump (misaligned_target) */
    unsigned last_rd; /* destination of the previous non-jump instruction (RV_SINK: none; jalr_dep_stall) */
    int resv_valid;
    uint64_t resv_addr, resv_val;
    /* Stack guard: sp is sampled at every load/store/AMO; sp < stack_lo there is a stack
     * overflow (stack_lo = 0: no guard). sp_min is the lowest sp sampled (the high-water mark). */
    uint64_t stack_lo, sp_min;
    uint64_t halt_pc; /* address of the ecall/ebreak that ended the last run */
    /* Fault of the last run. */
    int fault_kind;
    uint64_t fault_pc, fault_addr;
    uint32_t fault_insn;
} rv_state;

/* Decode one instruction word (raw16 for compressed forms, detected from the low bits). */
void rv_decode(uint32_t raw, int xlen, int zbb, rv_dinsn *d);

/* Block cache (rv_exec.c): allocate the pools (0, or -1 when out of memory); drop every block;
 * does [off, off + n) hold part of a decoded instruction? */
int rv_blocks_init(rv_state *s);
void rv_blocks_free(rv_state *s);
void rv_blocks_flush(rv_state *s);
void rv_blocks_fold(rv_state *s);
int rv_code_hit(const rv_state *s, uint64_t off, uint64_t n);

int rv_run32(rv_state *s, uint64_t max_instret);
int rv_run64(rv_state *s, uint64_t max_instret);

#endif
