/* Handlers of the ops that can take an operand from a local instead of the register file
 * (rv_exec_body.h includes this file once with RS1/RS2 from x[] and, with threaded dispatch, once
 * with RS1 and once with RS2 from acc, the last result, and from lacc, the block's last load:
 * RV_ALU_OPS lists them; the loads and stores, which can take one from acc, are in
 * rv_exec_mem.h). W(v) writes rd and acc. No include guard, on purpose. */
H(LUI) W(IMM); NEXT();
H(AUIPC) W(PC + IMM); NEXT();
H(BEQ) BRANCH(RS1 == RS2);
H(BNE) BRANCH(RS1 != RS2);
H(BLT) BRANCH((sreg_t)RS1 < (sreg_t)RS2);
H(BGE) BRANCH((sreg_t)RS1 >= (sreg_t)RS2);
H(BLTU) BRANCH(RS1 < RS2);
H(BGEU) BRANCH(RS1 >= RS2);
H(ADDI) W(RS1 + IMM); NEXT();
H(SLTI) W((sreg_t)RS1 < (sreg_t)IMM); NEXT();
H(SLTIU) W(RS1 < IMM); NEXT();
H(XORI) W(RS1 ^ IMM); NEXT();
H(ORI) W(RS1 | IMM); NEXT();
H(ANDI) W(RS1 & IMM); NEXT();
H(SLLI) W(RS1 << d->imm); NEXT();
H(SRLI) W(RS1 >> d->imm); NEXT();
H(SRAI) W((ureg_t)((sreg_t)RS1 >> d->imm)); NEXT();
H(ADD) W(RS1 + RS2); NEXT();
H(SUB) W(RS1 - RS2); NEXT();
H(SLL) W(RS1 << (RS2 & (XLEN - 1))); NEXT();
H(SLT) W((sreg_t)RS1 < (sreg_t)RS2); NEXT();
H(SLTU) W(RS1 < RS2); NEXT();
H(XOR) W(RS1 ^ RS2); NEXT();
H(SRL) W(RS1 >> (RS2 & (XLEN - 1))); NEXT();
H(SRA) W((ureg_t)((sreg_t)RS1 >> (RS2 & (XLEN - 1)))); NEXT();
H(OR) W(RS1 | RS2); NEXT();
H(AND) W(RS1 & RS2); NEXT();
H(MUL) W(RS1 * RS2); NEXT();
#if XLEN == 64
H(ADDIW) W(SX32((uint32_t)RS1 + (uint32_t)d->imm)); NEXT();
H(SLLIW) W(SX32((uint32_t)RS1 << d->imm)); NEXT();
H(SRLIW) W(SX32((uint32_t)RS1 >> d->imm)); NEXT();
H(SRAIW) W(SX32((int32_t)RS1 >> d->imm)); NEXT();
H(ADDW) W(SX32((uint32_t)RS1 + (uint32_t)RS2)); NEXT();
H(SUBW) W(SX32((uint32_t)RS1 - (uint32_t)RS2)); NEXT();
H(SLLW) W(SX32((uint32_t)RS1 << (RS2 & 31))); NEXT();
H(SRLW) W(SX32((uint32_t)RS1 >> (RS2 & 31))); NEXT();
H(SRAW) W(SX32((int32_t)RS1 >> (RS2 & 31))); NEXT();
H(MULW) W(SX32((uint32_t)RS1 * (uint32_t)RS2)); NEXT();
#endif
