/* Shared definitions of the rlcc RISC-V interpreter core: decoded-instruction form, opcodes,
 * cycle classes, halt/fault codes and the machine state. */
#ifndef RLCC_RV_H
#define RLCC_RV_H

#include <stdint.h>
#include <stddef.h>

#define RV_LIKELY(x) __builtin_expect(!!(x), 1)
#define RV_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Index 32 of the register file is a write sink: decode maps rd == x0 to it, so x[0] stays 0. */
#define RV_SINK 32
#define RV_NREGS 33

/* Cycle classes: index into the cost table handed over from the JSON profile (cycle_model.py).
 * Branches are charged branch_not_taken; a taken branch adds (branch_taken - branch_not_taken). */
enum rv_cls {
    CLS_ALU = 0,
    CLS_BRANCH,
    CLS_JUMP,
    CLS_LOAD,
    CLS_STORE,
    CLS_MUL,
    CLS_DIV,
    CLS_CSR,
    CLS_ATOMIC,
    CLS_SYSTEM, /* ecall, ebreak, fence: charged like alu */
    CLS_COUNT
};

/* Order of the cost tuple passed to Core.set_costs (exported as _rvcore.COST_KEYS). */
enum rv_cost {
    COST_ALU = 0,
    COST_BRANCH_TAKEN,
    COST_BRANCH_NOT_TAKEN,
    COST_JUMP,
    COST_LOAD,
    COST_LOAD_USE_STALL,
    COST_STORE,
    COST_MUL,
    COST_DIV,
    COST_CSR,
    COST_ATOMIC,
    COST_COUNT
};

enum rv_halt { HALT_NONE = 0, HALT_ECALL, HALT_EBREAK, HALT_FAULT, HALT_LIMIT };

enum rv_fault {
    FAULT_NONE = 0,
    FAULT_FETCH_OUT_OF_RANGE,
    FAULT_FETCH_MISALIGNED,
    FAULT_ILLEGAL_INSTRUCTION,
    FAULT_LOAD_OUT_OF_RANGE,
    FAULT_LOAD_MISALIGNED,
    FAULT_STORE_OUT_OF_RANGE,
    FAULT_STORE_MISALIGNED,
    FAULT_AMO_OUT_OF_RANGE,
    FAULT_AMO_MISALIGNED,
    FAULT_JUMP_OUT_OF_RANGE,
    FAULT_STACK_OVERFLOW, /* a load/store/AMO executed while sp was below stack_lo */
    FAULT_COUNT
};

enum rv_op {
    OP_UNDECODED = 0,
    OP_ILLEGAL,
    /* RV32I / RV64I */
    OP_LUI, OP_AUIPC, OP_JAL, OP_JALR,
    OP_BEQ, OP_BNE, OP_BLT, OP_BGE, OP_BLTU, OP_BGEU,
    OP_LB, OP_LH, OP_LW, OP_LD, OP_LBU, OP_LHU, OP_LWU,
    OP_SB, OP_SH, OP_SW, OP_SD,
    OP_ADDI, OP_SLTI, OP_SLTIU, OP_XORI, OP_ORI, OP_ANDI, OP_SLLI, OP_SRLI, OP_SRAI,
    OP_ADD, OP_SUB, OP_SLL, OP_SLT, OP_SLTU, OP_XOR, OP_SRL, OP_SRA, OP_OR, OP_AND,
    OP_ADDIW, OP_SLLIW, OP_SRLIW, OP_SRAIW, OP_ADDW, OP_SUBW, OP_SLLW, OP_SRLW, OP_SRAW,
    OP_FENCE, OP_ECALL, OP_EBREAK, OP_CSRR,
    /* M */
    OP_MUL, OP_MULH, OP_MULHSU, OP_MULHU, OP_DIV, OP_DIVU, OP_REM, OP_REMU,
    OP_MULW, OP_DIVW, OP_DIVUW, OP_REMW, OP_REMUW,
    /* A */
    OP_LR_W, OP_SC_W, OP_AMOSWAP_W, OP_AMOADD_W, OP_AMOXOR_W, OP_AMOAND_W, OP_AMOOR_W,
    OP_AMOMIN_W, OP_AMOMAX_W, OP_AMOMINU_W, OP_AMOMAXU_W,
    OP_LR_D, OP_SC_D, OP_AMOSWAP_D, OP_AMOADD_D, OP_AMOXOR_D, OP_AMOAND_D, OP_AMOOR_D,
    OP_AMOMIN_D, OP_AMOMAX_D, OP_AMOMINU_D, OP_AMOMAXU_D,
    /* Zbb */
    OP_ANDN, OP_ORN, OP_XNOR, OP_CLZ, OP_CTZ, OP_CPOP, OP_CLZW, OP_CTZW, OP_CPOPW,
    OP_MAX, OP_MAXU, OP_MIN, OP_MINU, OP_SEXT_B, OP_SEXT_H, OP_ZEXT_H,
    OP_ROL, OP_ROR, OP_RORI, OP_ROLW, OP_RORW, OP_RORIW, OP_REV8, OP_ORC_B,
    OP_COUNT
};

/* CSR numbers of the user-level counters (Zicntr). */
#define CSR_CYCLE 0xC00
#define CSR_TIME 0xC01
#define CSR_INSTRET 0xC02
#define CSR_CYCLEH 0xC80
#define CSR_TIMEH 0xC81
#define CSR_INSTRETH 0xC82

/* One decoded instruction; the decode cache holds one per 2-byte slot of RAM. */
typedef struct {
    uint8_t op;  /* enum rv_op; OP_UNDECODED = slot not decoded yet (or invalidated by a store) */
    uint8_t rd;  /* RV_SINK when the architectural rd is x0 */
    uint8_t rs1; /* 0 when the instruction does not read rs1 (used by the load-use check) */
    uint8_t rs2; /* 0 when the instruction does not read rs2 */
    int32_t imm; /* sign-extended immediate; CSR number for OP_CSRR */
    uint32_t raw; /* instruction word as fetched (16-bit forms zero-extended) */
    uint8_t len;  /* 2 or 4 */
    uint8_t cls;  /* enum rv_cls */
    uint8_t pad[2];
} rv_dinsn;

typedef struct {
    int xlen;            /* 32 or 64 */
    int zbb;             /* Zbb encodings legal */
    uint64_t base, size; /* RAM [base, base + size) */
    uint8_t *mem;
    rv_dinsn *dc;              /* size / 2 entries */
    uint64_t code_lo, code_hi; /* offsets spanned by decoded slots (store invalidation filter) */
    uint64_t x[RV_NREGS];
    uint64_t pc;
    uint64_t cycles, instret;
    uint32_t cost[COST_COUNT];
    uint64_t clock_hz, timebase_hz;
    uint64_t cls_count[CLS_COUNT];
    uint64_t n_taken, n_stalls;
    unsigned ld_rd; /* destination of the previous instruction if it was a load, else 0 */
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

int rv_run32(rv_state *s, uint64_t max_instret);
int rv_run64(rv_state *s, uint64_t max_instret);

#endif
