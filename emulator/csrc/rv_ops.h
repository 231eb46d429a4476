/* The instruction facts of the interpreter in one place (X-macro tables). Everything else is
 * generated from them: enum rv_cls and enum rv_op (rv.h), the op -> class table of the decoder
 * (rv_decode.c), the class -> cost-key mapping of the interpreter (rv_exec_body.h) and the name
 * tuples exported to Python (rvcore.c: CLASS_NAMES, OP_NAMES, OP_CLASSES, OP_FORMATS).
 * The decoder (rv_decode.c: encoding -> op + operands) and the executor (rv_exec_body.h:
 * op -> semantics) stay separate; neither restates a name, class or operand format. */
#ifndef RLCC_RV_OPS_H
#define RLCC_RV_OPS_H

/* Cycle classes: X(CLASS, "name", cost key charged per retired instruction). The cost key is an
 * enum rv_cost value (rv.h); branches are charged branch_not_taken, a taken branch adds
 * (branch_taken - branch_not_taken). Order = CLASS_NAMES = Core.stats() order. */
#define RV_CLASSES(X)                             \
    X(ALU, "alu", COST_ALU)                       \
    X(BRANCH, "branch", COST_BRANCH_NOT_TAKEN)    \
    X(JUMP, "jump", COST_JUMP)                    \
    X(LOAD, "load", COST_LOAD)                    \
    X(STORE, "store", COST_STORE)                 \
    X(MUL, "mul", COST_MUL)                       \
    X(DIV, "div", COST_DIV)                       \
    X(CSR, "csr", COST_CSR)                       \
    X(ATOMIC, "atomic", COST_ATOMIC)              \
    X(SYSTEM, "system", COST_ALU) /* ecall, ebreak, fence, illegal: charged like alu */

/* Operand formats: which register fields of rv_dinsn an op uses. The decoder clears the others
 * (rs1/rs2 = 0 when not read, which the load-use check relies on; rd = RV_SINK when not written).
 *   X(FORMAT, "name", reads rs1, reads rs2, writes rd)    assembler operands */
#define RV_FORMATS(X)                                                                  \
    X(NONE, "none", 0, 0, 0) /* -                                                  */ \
    X(R, "r", 1, 1, 1)       /* rd, rs1, rs2 (AMO/SC: rd, rs2, (rs1))              */ \
    X(R1, "r1", 1, 0, 1)     /* rd, rs1 (LR: rd, (rs1))                            */ \
    X(I, "i", 1, 0, 1)       /* rd, rs1, imm (loads, jalr: rd, imm(rs1); shamt)    */ \
    X(S, "s", 1, 1, 0)       /* rs2, imm(rs1)                                      */ \
    X(B, "b", 1, 1, 0)       /* rs1, rs2, pc-relative imm                          */ \
    X(U, "u", 0, 0, 1)       /* rd, imm (upper 20 bits, already shifted)           */ \
    X(J, "j", 0, 0, 1)       /* rd, pc-relative imm                                */ \
    X(CSR, "csr", 0, 0, 1)   /* rd, CSR number (imm)                               */

/* Decoded operations: X(OP, "mnemonic", class, format). Order = enum rv_op = OP_NAMES order.
 * OP_UNDECODED must stay first (0: the fall-through record of a block); the *_D atomics must follow the
 * *_W ones in the same order (the decoder adds OP_LR_D - OP_LR_W). */
#define RV_OPS(X)                              \
    X(UNDECODED, "undecoded", ALU, NONE)       \
    X(ILLEGAL, "illegal", SYSTEM, NONE)        \
    /* RV32I / RV64I */                        \
    X(LUI, "lui", ALU, U)                      \
    X(AUIPC, "auipc", ALU, U)                  \
    X(JAL, "jal", JUMP, J)                     \
    X(JALR, "jalr", JUMP, I)                   \
    X(BEQ, "beq", BRANCH, B)                   \
    X(BNE, "bne", BRANCH, B)                   \
    X(BLT, "blt", BRANCH, B)                   \
    X(BGE, "bge", BRANCH, B)                   \
    X(BLTU, "bltu", BRANCH, B)                 \
    X(BGEU, "bgeu", BRANCH, B)                 \
    X(LB, "lb", LOAD, I)                       \
    X(LH, "lh", LOAD, I)                       \
    X(LW, "lw", LOAD, I)                       \
    X(LD, "ld", LOAD, I)                       \
    X(LBU, "lbu", LOAD, I)                     \
    X(LHU, "lhu", LOAD, I)                     \
    X(LWU, "lwu", LOAD, I)                     \
    X(SB, "sb", STORE, S)                      \
    X(SH, "sh", STORE, S)                      \
    X(SW, "sw", STORE, S)                      \
    X(SD, "sd", STORE, S)                      \
    X(ADDI, "addi", ALU, I)                    \
    X(SLTI, "slti", ALU, I)                    \
    X(SLTIU, "sltiu", ALU, I)                  \
    X(XORI, "xori", ALU, I)                    \
    X(ORI, "ori", ALU, I)                      \
    X(ANDI, "andi", ALU, I)                    \
    X(SLLI, "slli", ALU, I)                    \
    X(SRLI, "srli", ALU, I)                    \
    X(SRAI, "srai", ALU, I)                    \
    X(ADD, "add", ALU, R)                      \
    X(SUB, "sub", ALU, R)                      \
    X(SLL, "sll", ALU, R)                      \
    X(SLT, "slt", ALU, R)                      \
    X(SLTU, "sltu", ALU, R)                    \
    X(XOR, "xor", ALU, R)                      \
    X(SRL, "srl", ALU, R)                      \
    X(SRA, "sra", ALU, R)                      \
    X(OR, "or", ALU, R)                        \
    X(AND, "and", ALU, R)                      \
    X(ADDIW, "addiw", ALU, I)                  \
    X(SLLIW, "slliw", ALU, I)                  \
    X(SRLIW, "srliw", ALU, I)                  \
    X(SRAIW, "sraiw", ALU, I)                  \
    X(ADDW, "addw", ALU, R)                    \
    X(SUBW, "subw", ALU, R)                    \
    X(SLLW, "sllw", ALU, R)                    \
    X(SRLW, "srlw", ALU, R)                    \
    X(SRAW, "sraw", ALU, R)                    \
    X(FENCE, "fence", SYSTEM, NONE)            \
    X(ECALL, "ecall", SYSTEM, NONE)            \
    X(EBREAK, "ebreak", SYSTEM, NONE)          \
    X(CSRR, "csrr", CSR, CSR)                  \
    /* M */                                    \
    X(MUL, "mul", MUL, R)                      \
    X(MULH, "mulh", MUL, R)                    \
    X(MULHSU, "mulhsu", MUL, R)                \
    X(MULHU, "mulhu", MUL, R)                  \
    X(DIV, "div", DIV, R)                      \
    X(DIVU, "divu", DIV, R)                    \
    X(REM, "rem", DIV, R)                      \
    X(REMU, "remu", DIV, R)                    \
    X(MULW, "mulw", MUL, R)                    \
    X(DIVW, "divw", DIV, R)                    \
    X(DIVUW, "divuw", DIV, R)                  \
    X(REMW, "remw", DIV, R)                    \
    X(REMUW, "remuw", DIV, R)                  \
    /* A */                                    \
    X(LR_W, "lr.w", ATOMIC, R1)                \
    X(SC_W, "sc.w", ATOMIC, R)                 \
    X(AMOSWAP_W, "amoswap.w", ATOMIC, R)       \
    X(AMOADD_W, "amoadd.w", ATOMIC, R)         \
    X(AMOXOR_W, "amoxor.w", ATOMIC, R)         \
    X(AMOAND_W, "amoand.w", ATOMIC, R)         \
    X(AMOOR_W, "amoor.w", ATOMIC, R)           \
    X(AMOMIN_W, "amomin.w", ATOMIC, R)         \
    X(AMOMAX_W, "amomax.w", ATOMIC, R)         \
    X(AMOMINU_W, "amominu.w", ATOMIC, R)       \
    X(AMOMAXU_W, "amomaxu.w", ATOMIC, R)       \
    X(LR_D, "lr.d", ATOMIC, R1)                \
    X(SC_D, "sc.d", ATOMIC, R)                 \
    X(AMOSWAP_D, "amoswap.d", ATOMIC, R)       \
    X(AMOADD_D, "amoadd.d", ATOMIC, R)         \
    X(AMOXOR_D, "amoxor.d", ATOMIC, R)         \
    X(AMOAND_D, "amoand.d", ATOMIC, R)         \
    X(AMOOR_D, "amoor.d", ATOMIC, R)           \
    X(AMOMIN_D, "amomin.d", ATOMIC, R)         \
    X(AMOMAX_D, "amomax.d", ATOMIC, R)         \
    X(AMOMINU_D, "amominu.d", ATOMIC, R)       \
    X(AMOMAXU_D, "amomaxu.d", ATOMIC, R)       \
    /* Zbb */                                  \
    X(ANDN, "andn", ALU, R)                    \
    X(ORN, "orn", ALU, R)                      \
    X(XNOR, "xnor", ALU, R)                    \
    X(CLZ, "clz", ALU, R1)                     \
    X(CTZ, "ctz", ALU, R1)                     \
    X(CPOP, "cpop", ALU, R1)                   \
    X(CLZW, "clzw", ALU, R1)                   \
    X(CTZW, "ctzw", ALU, R1)                   \
    X(CPOPW, "cpopw", ALU, R1)                 \
    X(MAX, "max", ALU, R)                      \
    X(MAXU, "maxu", ALU, R)                    \
    X(MIN, "min", ALU, R)                      \
    X(MINU, "minu", ALU, R)                    \
    X(SEXT_B, "sext.b", ALU, R1)               \
    X(SEXT_H, "sext.h", ALU, R1)               \
    X(ZEXT_H, "zext.h", ALU, R1)               \
    X(ROL, "rol", ALU, R)                      \
    X(ROR, "ror", ALU, R)                      \
    X(RORI, "rori", ALU, I)                    \
    X(ROLW, "rolw", ALU, R)                    \
    X(RORW, "rorw", ALU, R)                    \
    X(RORIW, "roriw", ALU, I)                  \
    X(REV8, "rev8", ALU, R1)                   \
    X(ORC_B, "orc.b", ALU, R1)

#endif
