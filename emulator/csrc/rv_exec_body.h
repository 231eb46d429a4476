/* Interpreter loop body (deliberately no include guard), instantiated twice by rv_exec.c: XLEN = 32 and XLEN = 64.
 * Needs: XLEN, ureg_t, sreg_t, RUN_FN. Registers are cached in a local array; the decode cache
 * has one rv_dinsn per 2-byte RAM slot, filled lazily and invalidated by stores into code. */

#define SX32(v) ((ureg_t)(sreg_t)(int32_t)(v)) /* sign-extend a 32-bit value to XLEN */
#define IMM ((ureg_t)(sreg_t)d->imm)
#define RS1 (x[d->rs1])
#define RS2 (x[d->rs2])
#define NEXT() do { pc += d->len; } while (0)
#define FAULT(kind, a) do { fk = (kind); fa = (uint64_t)(a); goto fault; } while (0)
#define CHECK_TARGET(t) do { if (RV_UNLIKELY((uint64_t)(ureg_t)((t) - base) >= size)) \
    FAULT(FAULT_JUMP_OUT_OF_RANGE, (t)); } while (0)
#define BRANCH(cond) do { if (cond) { ureg_t t_ = pc + IMM; CHECK_TARGET(t_); pc = t_; \
    cycles += taken_delta; n_taken++; redirected = 1; } else NEXT(); } while (0)
/* One compare per memory access in the common case: only a new lowest sp is checked against the guard. */
#define STACK_CHECK() do { if (RV_UNLIKELY(x[2] < sp_min)) { \
    if (x[2] < stack_lo) { FAULT(FAULT_STACK_OVERFLOW, x[2]); } \
    sp_min = x[2]; } } while (0)
#define EA(n, oor, mis) \
    STACK_CHECK(); \
    ureg_t a_ = RS1 + IMM; uint64_t o_ = (ureg_t)(a_ - base); \
    if (RV_UNLIKELY(o_ > size - (n))) FAULT(oor, a_); \
    if (RV_UNLIKELY(a_ & ((n) - 1))) FAULT(mis, a_)
#define LOAD(T, n) do { EA(n, FAULT_LOAD_OUT_OF_RANGE, FAULT_LOAD_MISALIGNED); T v_; \
    memcpy(&v_, mem + o_, n); x[d->rd] = (ureg_t)(sreg_t)v_; ld_rd = d->rd; NEXT(); } while (0)
#define LOADU(T, n) do { EA(n, FAULT_LOAD_OUT_OF_RANGE, FAULT_LOAD_MISALIGNED); T v_; \
    memcpy(&v_, mem + o_, n); x[d->rd] = (ureg_t)v_; ld_rd = d->rd; NEXT(); } while (0)
#define INVAL(o, n) do { if (RV_UNLIKELY((o) < s->code_hi && (o) + (n) > s->code_lo)) \
    rv_invalidate(s, (o), (n)); } while (0)
#define STORE(T, n) do { EA(n, FAULT_STORE_OUT_OF_RANGE, FAULT_STORE_MISALIGNED); T v_ = (T)RS2; \
    memcpy(mem + o_, &v_, n); INVAL(o_, n); NEXT(); } while (0)
#define AMO_EA(n) \
    STACK_CHECK(); \
    ureg_t a_ = RS1; uint64_t o_ = (ureg_t)(a_ - base); \
    if (RV_UNLIKELY(o_ > size - (n))) FAULT(FAULT_AMO_OUT_OF_RANGE, a_); \
    if (RV_UNLIKELY(a_ & ((n) - 1))) FAULT(FAULT_AMO_MISALIGNED, a_)
/* Read-modify-write: old value -> rd, f(old, rs2) -> memory. T is the signed memory type. */
#define AMO(T, n, expr) do { AMO_EA(n); T old; memcpy(&old, mem + o_, n); T src = (T)RS2; \
    T nv = (expr); (void)src; memcpy(mem + o_, &nv, n); INVAL(o_, n); x[d->rd] = (ureg_t)(sreg_t)old; \
    NEXT(); } while (0)
/* LR/SC (single hart): sc succeeds iff the reservation is for this address and the memory still
 * holds the value lr read; every sc clears the reservation. UT is the unsigned memory type. */
#define LR(T, UT, n) do { AMO_EA(n); T v_; memcpy(&v_, mem + o_, n); \
    s->resv_valid = 1; s->resv_addr = a_; s->resv_val = (UT)v_; x[d->rd] = (ureg_t)(sreg_t)v_; NEXT(); } while (0)
#define SC(UT, n) do { AMO_EA(n); UT cur_; memcpy(&cur_, mem + o_, n); \
    if (s->resv_valid && s->resv_addr == a_ && s->resv_val == cur_) { \
        UT v_ = (UT)RS2; memcpy(mem + o_, &v_, n); INVAL(o_, n); x[d->rd] = 0; \
    } else x[d->rd] = 1; \
    s->resv_valid = 0; NEXT(); } while (0)
/* The cases of one width of the A extension: SFX W or D, T/UT the signed/unsigned memory type. */
#define ATOMIC_CASES(SFX, T, UT, n) \
    case OP_LR_##SFX: LR(T, UT, n); break; \
    case OP_SC_##SFX: SC(UT, n); break; \
    case OP_AMOSWAP_##SFX: AMO(T, n, src); break; \
    case OP_AMOADD_##SFX: AMO(T, n, (T)((UT)old + (UT)src)); break; \
    case OP_AMOXOR_##SFX: AMO(T, n, old ^ src); break; \
    case OP_AMOAND_##SFX: AMO(T, n, old & src); break; \
    case OP_AMOOR_##SFX: AMO(T, n, old | src); break; \
    case OP_AMOMIN_##SFX: AMO(T, n, old < src ? old : src); break; \
    case OP_AMOMAX_##SFX: AMO(T, n, old > src ? old : src); break; \
    case OP_AMOMINU_##SFX: AMO(T, n, (UT)old < (UT)src ? old : src); break; \
    case OP_AMOMAXU_##SFX: AMO(T, n, (UT)old > (UT)src ? old : src); break;

int RUN_FN(rv_state *s, uint64_t max_instret) {
    ureg_t x[RV_NREGS];
    for (int i = 0; i < RV_NREGS; i++) x[i] = (ureg_t)s->x[i];
    x[0] = 0;
    ureg_t pc = (ureg_t)s->pc;
    const ureg_t base = (ureg_t)s->base;
    const uint64_t size = s->size;
    uint8_t *const mem = s->mem;
    rv_dinsn *const dc = s->dc;
    uint64_t cycles = s->cycles, instret = s->instret, cyc0 = cycles;
    uint64_t cls_cost[CLS_COUNT];
#define CLS_COST(c, name, key) cls_cost[CLS_##c] = s->cost[key];
    RV_CLASSES(CLS_COST)
#undef CLS_COST
    const uint64_t taken_delta = (uint64_t)((int64_t)s->cost[COST_BRANCH_TAKEN] - (int64_t)s->cost[COST_BRANCH_NOT_TAKEN]);
    const uint64_t stall = s->cost[COST_LOAD_USE_STALL];
    const uint64_t mulh_extra = s->cost[COST_MULH_EXTRA], jalr_extra = s->cost[COST_JALR_EXTRA];
    const uint64_t mis_target = s->cost[COST_MISALIGNED_TARGET], mis_fetch = s->cost[COST_MISALIGNED_FETCH];
    int redirected = s->redirected, redirected_prev = 0;
    const uint64_t divz_delta = (uint64_t)((int64_t)s->cost[COST_DIV_BY_ZERO] - (int64_t)s->cost[COST_DIV]);
    const uint64_t div_clz = s->cost[COST_DIV_CLZ], jalr_dep = s->cost[COST_JALR_DEP_STALL];
    const uint64_t jalr_dep_link = s->cost[COST_JALR_DEP_LINK_EXTRA];
    unsigned last_rd = s->last_rd, rd_prev = RV_SINK;
    uint64_t cls_count[CLS_COUNT];
    for (int i = 0; i < CLS_COUNT; i++) cls_count[i] = s->cls_count[i];
    uint64_t n_taken = s->n_taken, n_stalls = s->n_stalls;
    unsigned ld_rd = s->ld_rd, ld_prev = 0;
    const ureg_t stack_lo = (ureg_t)s->stack_lo;
    ureg_t sp_min = (ureg_t)s->sp_min;
    int halt = HALT_NONE, fk = FAULT_NONE;
    uint64_t fa = 0;
    rv_dinsn *d = NULL;

    for (;;) {
        const uint64_t off = (ureg_t)(pc - base);
        if (RV_UNLIKELY(off >= size)) { d = NULL; FAULT(FAULT_FETCH_OUT_OF_RANGE, pc); }
        if (RV_UNLIKELY(off & 1)) { d = NULL; FAULT(FAULT_FETCH_MISALIGNED, pc); }
        if (RV_UNLIKELY(instret >= max_instret)) { halt = HALT_LIMIT; break; }
        d = &dc[off >> 1];
        if (RV_UNLIKELY(d->op == OP_UNDECODED)) {
            uint16_t lo;
            memcpy(&lo, mem + off, 2);
            uint32_t raw = lo;
            if ((lo & 3) == 3) {
                if (off + 4 > size) { d = NULL; FAULT(FAULT_FETCH_OUT_OF_RANGE, pc); }
                uint16_t hi;
                memcpy(&hi, mem + off + 2, 2);
                raw |= (uint32_t)hi << 16;
            }
            rv_decode(raw, XLEN, s->zbb, d);
            if (off < s->code_lo) s->code_lo = off;
            if (off + d->len > s->code_hi) s->code_hi = off + d->len;
        }
        cyc0 = cycles;
        ld_prev = ld_rd; /* kept so a faulting instruction can take its stall back */
        if (ld_rd) {
            if (d->rs1 == ld_rd || d->rs2 == ld_rd) { cycles += stall; n_stalls++; }
            ld_rd = 0;
        }
        cycles += cls_cost[d->cls];
        cls_count[d->cls]++;
        redirected_prev = redirected;
        if ((pc & 2) && d->len == 4) cycles += mis_fetch + (redirected ? mis_target : 0);
        redirected = 0;
        rd_prev = last_rd;
        last_rd = d->rd;
        if (RV_UNLIKELY(d->cls == CLS_DIV) && (divz_delta || div_clz)) {
            uint64_t b_ = (ureg_t)x[d->rs2];
            int w_ = XLEN;
            if (d->op == OP_DIVW || d->op == OP_DIVUW || d->op == OP_REMW || d->op == OP_REMUW) { b_ = (uint32_t)b_; w_ = 32; }
            if (b_ == 0) cycles += divz_delta;
            else cycles += div_clz * (uint64_t)(__builtin_clzll(b_) - (64 - w_));
        }

        switch ((enum rv_op)d->op) {
        case OP_LUI: x[d->rd] = IMM; NEXT(); break;
        case OP_AUIPC: x[d->rd] = pc + IMM; NEXT(); break;
        case OP_JAL: { ureg_t t = pc + IMM; CHECK_TARGET(t); x[d->rd] = pc + d->len; pc = t; redirected = 1; last_rd = RV_SINK; break; }
        case OP_JALR: { cycles += jalr_extra + (d->rs1 == rd_prev ? jalr_dep + (d->rd == d->rs1 ? jalr_dep_link : 0) : 0);
            last_rd = RV_SINK; ureg_t t = (RS1 + IMM) & ~(ureg_t)1; CHECK_TARGET(t); x[d->rd] = pc + d->len; pc = t; redirected = 1; break; }
        case OP_BEQ: BRANCH(RS1 == RS2); break;
        case OP_BNE: BRANCH(RS1 != RS2); break;
        case OP_BLT: BRANCH((sreg_t)RS1 < (sreg_t)RS2); break;
        case OP_BGE: BRANCH((sreg_t)RS1 >= (sreg_t)RS2); break;
        case OP_BLTU: BRANCH(RS1 < RS2); break;
        case OP_BGEU: BRANCH(RS1 >= RS2); break;
        case OP_LB: LOAD(int8_t, 1); break;
        case OP_LH: LOAD(int16_t, 2); break;
        case OP_LW: LOAD(int32_t, 4); break;
        case OP_LBU: LOADU(uint8_t, 1); break;
        case OP_LHU: LOADU(uint16_t, 2); break;
        case OP_SB: STORE(uint8_t, 1); break;
        case OP_SH: STORE(uint16_t, 2); break;
        case OP_SW: STORE(uint32_t, 4); break;
        case OP_ADDI: x[d->rd] = RS1 + IMM; NEXT(); break;
        case OP_SLTI: x[d->rd] = (sreg_t)RS1 < (sreg_t)IMM; NEXT(); break;
        case OP_SLTIU: x[d->rd] = RS1 < IMM; NEXT(); break;
        case OP_XORI: x[d->rd] = RS1 ^ IMM; NEXT(); break;
        case OP_ORI: x[d->rd] = RS1 | IMM; NEXT(); break;
        case OP_ANDI: x[d->rd] = RS1 & IMM; NEXT(); break;
        case OP_SLLI: x[d->rd] = RS1 << d->imm; NEXT(); break;
        case OP_SRLI: x[d->rd] = RS1 >> d->imm; NEXT(); break;
        case OP_SRAI: x[d->rd] = (ureg_t)((sreg_t)RS1 >> d->imm); NEXT(); break;
        case OP_ADD: x[d->rd] = RS1 + RS2; NEXT(); break;
        case OP_SUB: x[d->rd] = RS1 - RS2; NEXT(); break;
        case OP_SLL: x[d->rd] = RS1 << (RS2 & (XLEN - 1)); NEXT(); break;
        case OP_SLT: x[d->rd] = (sreg_t)RS1 < (sreg_t)RS2; NEXT(); break;
        case OP_SLTU: x[d->rd] = RS1 < RS2; NEXT(); break;
        case OP_XOR: x[d->rd] = RS1 ^ RS2; NEXT(); break;
        case OP_SRL: x[d->rd] = RS1 >> (RS2 & (XLEN - 1)); NEXT(); break;
        case OP_SRA: x[d->rd] = (ureg_t)((sreg_t)RS1 >> (RS2 & (XLEN - 1))); NEXT(); break;
        case OP_OR: x[d->rd] = RS1 | RS2; NEXT(); break;
        case OP_AND: x[d->rd] = RS1 & RS2; NEXT(); break;
        case OP_FENCE: NEXT(); break;
        case OP_ECALL: halt = HALT_ECALL; s->halt_pc = pc; NEXT(); instret++; goto out;
        case OP_EBREAK: halt = HALT_EBREAK; s->halt_pc = pc; NEXT(); instret++; goto out;
        case OP_CSRR: {
            uint64_t v;
            switch (d->imm) {
            case CSR_CYCLE: v = cyc0; break;
            case CSR_INSTRET: v = instret; break;
            case CSR_TIME: v = (uint64_t)((unsigned __int128)cyc0 * s->timebase_hz / s->clock_hz); break;
            case CSR_CYCLEH: v = cyc0 >> 32; break;
            case CSR_INSTRETH: v = instret >> 32; break;
            default: v = (uint64_t)((unsigned __int128)cyc0 * s->timebase_hz / s->clock_hz) >> 32; break;
            }
            x[d->rd] = (ureg_t)v;
            NEXT();
            break;
        }
        /* M */
        case OP_MUL: x[d->rd] = RS1 * RS2; NEXT(); break;
#if XLEN == 32
        case OP_MULH: cycles += mulh_extra; x[d->rd] = (ureg_t)(((int64_t)(int32_t)RS1 * (int64_t)(int32_t)RS2) >> 32); NEXT(); break;
        case OP_MULHSU: cycles += mulh_extra; x[d->rd] = (ureg_t)(((int64_t)(int32_t)RS1 * (int64_t)(uint64_t)RS2) >> 32); NEXT(); break;
        case OP_MULHU: cycles += mulh_extra; x[d->rd] = (ureg_t)(((uint64_t)RS1 * (uint64_t)RS2) >> 32); NEXT(); break;
#else
        case OP_MULH: cycles += mulh_extra; x[d->rd] = (ureg_t)(((__int128)(int64_t)RS1 * (__int128)(int64_t)RS2) >> 64); NEXT(); break;
        case OP_MULHSU: cycles += mulh_extra; x[d->rd] = (ureg_t)(((__int128)(int64_t)RS1 * (__int128)(uint64_t)RS2) >> 64); NEXT(); break;
        case OP_MULHU: cycles += mulh_extra; x[d->rd] = (ureg_t)(((unsigned __int128)RS1 * (unsigned __int128)RS2) >> 64); NEXT(); break;
#endif
        case OP_DIV: {
            sreg_t a = (sreg_t)RS1, b = (sreg_t)RS2;
            x[d->rd] = b == 0 ? (ureg_t)-1 : (b == -1 && RS1 == (ureg_t)1 << (XLEN - 1)) ? RS1 : (ureg_t)(a / b);
            NEXT(); break;
        }
        case OP_DIVU: x[d->rd] = RS2 == 0 ? (ureg_t)-1 : RS1 / RS2; NEXT(); break;
        case OP_REM: {
            sreg_t a = (sreg_t)RS1, b = (sreg_t)RS2;
            x[d->rd] = b == 0 ? RS1 : (b == -1) ? 0 : (ureg_t)(a % b);
            NEXT(); break;
        }
        case OP_REMU: x[d->rd] = RS2 == 0 ? RS1 : RS1 % RS2; NEXT(); break;
        /* A (W forms; valid on both XLENs) */
        ATOMIC_CASES(W, int32_t, uint32_t, 4)
        /* Zbb */
        case OP_ANDN: x[d->rd] = RS1 & ~RS2; NEXT(); break;
        case OP_ORN: x[d->rd] = RS1 | ~RS2; NEXT(); break;
        case OP_XNOR: x[d->rd] = ~(RS1 ^ RS2); NEXT(); break;
        case OP_CLZ: { ureg_t v = RS1; x[d->rd] = v ? (ureg_t)(XLEN == 64 ? __builtin_clzll(v) : __builtin_clz((uint32_t)v)) : XLEN; NEXT(); break; }
        case OP_CTZ: { ureg_t v = RS1; x[d->rd] = v ? (ureg_t)__builtin_ctzll(v) : XLEN; NEXT(); break; }
        case OP_CPOP: x[d->rd] = (ureg_t)__builtin_popcountll(RS1); NEXT(); break;
        case OP_MAX: x[d->rd] = (sreg_t)RS1 > (sreg_t)RS2 ? RS1 : RS2; NEXT(); break;
        case OP_MAXU: x[d->rd] = RS1 > RS2 ? RS1 : RS2; NEXT(); break;
        case OP_MIN: x[d->rd] = (sreg_t)RS1 < (sreg_t)RS2 ? RS1 : RS2; NEXT(); break;
        case OP_MINU: x[d->rd] = RS1 < RS2 ? RS1 : RS2; NEXT(); break;
        case OP_SEXT_B: x[d->rd] = (ureg_t)(sreg_t)(int8_t)RS1; NEXT(); break;
        case OP_SEXT_H: x[d->rd] = (ureg_t)(sreg_t)(int16_t)RS1; NEXT(); break;
        case OP_ZEXT_H: x[d->rd] = RS1 & 0xffff; NEXT(); break;
        case OP_ROL: { unsigned sh = RS2 & (XLEN - 1); ureg_t v = RS1;
            x[d->rd] = sh ? (v << sh) | (v >> (XLEN - sh)) : v; NEXT(); break; }
        case OP_ROR: { unsigned sh = RS2 & (XLEN - 1); ureg_t v = RS1;
            x[d->rd] = sh ? (v >> sh) | (v << (XLEN - sh)) : v; NEXT(); break; }
        case OP_RORI: { unsigned sh = (unsigned)d->imm; ureg_t v = RS1;
            x[d->rd] = sh ? (v >> sh) | (v << (XLEN - sh)) : v; NEXT(); break; }
        case OP_REV8: x[d->rd] = XLEN == 64 ? (ureg_t)__builtin_bswap64(RS1) : (ureg_t)__builtin_bswap32((uint32_t)RS1); NEXT(); break;
        case OP_ORC_B: { ureg_t v = RS1, r = 0;
            for (int i = 0; i < XLEN; i += 8) if ((v >> i) & 0xff) r |= (ureg_t)0xff << i;
            x[d->rd] = r; NEXT(); break; }
#if XLEN == 64
        case OP_LD: LOAD(int64_t, 8); break;
        case OP_LWU: LOADU(uint32_t, 4); break;
        case OP_SD: STORE(uint64_t, 8); break;
        case OP_ADDIW: x[d->rd] = SX32((uint32_t)RS1 + (uint32_t)d->imm); NEXT(); break;
        case OP_SLLIW: x[d->rd] = SX32((uint32_t)RS1 << d->imm); NEXT(); break;
        case OP_SRLIW: x[d->rd] = SX32((uint32_t)RS1 >> d->imm); NEXT(); break;
        case OP_SRAIW: x[d->rd] = SX32((int32_t)RS1 >> d->imm); NEXT(); break;
        case OP_ADDW: x[d->rd] = SX32((uint32_t)RS1 + (uint32_t)RS2); NEXT(); break;
        case OP_SUBW: x[d->rd] = SX32((uint32_t)RS1 - (uint32_t)RS2); NEXT(); break;
        case OP_SLLW: x[d->rd] = SX32((uint32_t)RS1 << (RS2 & 31)); NEXT(); break;
        case OP_SRLW: x[d->rd] = SX32((uint32_t)RS1 >> (RS2 & 31)); NEXT(); break;
        case OP_SRAW: x[d->rd] = SX32((int32_t)RS1 >> (RS2 & 31)); NEXT(); break;
        case OP_MULW: x[d->rd] = SX32((uint32_t)RS1 * (uint32_t)RS2); NEXT(); break;
        case OP_DIVW: {
            int32_t a = (int32_t)RS1, b = (int32_t)RS2;
            x[d->rd] = b == 0 ? (ureg_t)-1 : (b == -1 && a == INT32_MIN) ? SX32(a) : SX32(a / b);
            NEXT(); break;
        }
        case OP_DIVUW: { uint32_t a = (uint32_t)RS1, b = (uint32_t)RS2;
            x[d->rd] = b == 0 ? (ureg_t)-1 : SX32(a / b); NEXT(); break; }
        case OP_REMW: {
            int32_t a = (int32_t)RS1, b = (int32_t)RS2;
            x[d->rd] = b == 0 ? SX32(a) : b == -1 ? 0 : SX32(a % b);
            NEXT(); break;
        }
        case OP_REMUW: { uint32_t a = (uint32_t)RS1, b = (uint32_t)RS2;
            x[d->rd] = b == 0 ? SX32(a) : SX32(a % b); NEXT(); break; }
        ATOMIC_CASES(D, int64_t, uint64_t, 8)
        case OP_CLZW: { uint32_t v = (uint32_t)RS1; x[d->rd] = v ? (ureg_t)__builtin_clz(v) : 32; NEXT(); break; }
        case OP_CTZW: { uint32_t v = (uint32_t)RS1; x[d->rd] = v ? (ureg_t)__builtin_ctz(v) : 32; NEXT(); break; }
        case OP_CPOPW: x[d->rd] = (ureg_t)__builtin_popcount((uint32_t)RS1); NEXT(); break;
        case OP_ROLW: { unsigned sh = RS2 & 31; uint32_t v = (uint32_t)RS1;
            x[d->rd] = SX32(sh ? (v << sh) | (v >> (32 - sh)) : v); NEXT(); break; }
        case OP_RORW: { unsigned sh = RS2 & 31; uint32_t v = (uint32_t)RS1;
            x[d->rd] = SX32(sh ? (v >> sh) | (v << (32 - sh)) : v); NEXT(); break; }
        case OP_RORIW: { unsigned sh = (unsigned)d->imm; uint32_t v = (uint32_t)RS1;
            x[d->rd] = SX32(sh ? (v >> sh) | (v << (32 - sh)) : v); NEXT(); break; }
#endif
        case OP_ILLEGAL:
        default:
            FAULT(FAULT_ILLEGAL_INSTRUCTION, d->raw);
        }
        instret++;
    }
    goto out;

fault:
    halt = HALT_FAULT;
    if (d) {
        cycles = cyc0;           /* the faulting instruction does not retire */
        cls_count[d->cls]--;
        if (ld_prev && (d->rs1 == ld_prev || d->rs2 == ld_prev)) n_stalls--;
        ld_rd = ld_prev;         /* a resumed run re-executes it with the same stall */
        redirected = redirected_prev;
        last_rd = rd_prev;
    }
    s->fault_kind = fk;
    s->fault_pc = pc;
    s->fault_addr = fa;
    s->fault_insn = d ? d->raw : 0;
out:
    x[0] = 0;
    for (int i = 0; i < 32; i++) s->x[i] = x[i];
    s->x[RV_SINK] = 0;
    s->pc = pc;
    s->cycles = cycles;
    s->instret = instret;
    for (int i = 0; i < CLS_COUNT; i++) s->cls_count[i] = cls_count[i];
    s->n_taken = n_taken;
    s->n_stalls = n_stalls;
    s->ld_rd = ld_rd;
    s->redirected = redirected;
    s->last_rd = last_rd;
    s->sp_min = sp_min;
    return halt;
}

#undef SX32
#undef IMM
#undef RS1
#undef RS2
#undef NEXT
#undef FAULT
#undef CHECK_TARGET
#undef BRANCH
#undef EA
#undef STACK_CHECK
#undef LOAD
#undef LOADU
#undef INVAL
#undef STORE
#undef AMO_EA
#undef AMO
#undef LR
#undef SC
#undef ATOMIC_CASES
