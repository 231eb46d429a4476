/* Interpreter loop body (deliberately no include guard), instantiated twice by rv_exec.c: XLEN = 32
 * and XLEN = 64. Needs: XLEN, ureg_t, sreg_t, RUN_FN, BUILD_FN. Registers are cached in a local array.
 *
 * Execution is by pre-decoded blocks (rv.h rv_blk/rv_rec): a block is decoded once, with the
 * cycle model's static costs folded in (class costs, misaligned_fetch, mulh_extra, jalr_extra and
 * the load-use stalls between its own instructions), and cached by start address. Entering a
 * block charges its static cycles and instructions at once (its class counts are folded in from
 * its entry count at the end of the run, rv_blocks_fold) plus the dynamic terms of its first
 * record (a load-use stall on the load that ended the previous block, or misaligned_target after
 * a redirect); taken branches (with branch_lookahead_misaligned), divides and a jalr that depends on the previous block's last
 * instruction are charged as they execute. A fault or a store into code mid-block takes back what
 * the unexecuted rest was charged, so every counter is what one-instruction-at-a-time accounting
 * gives, at every instruction boundary. Handlers are reached by threaded dispatch (computed goto)
 * where the compiler has it, else by a switch; with threaded dispatch an instruction that reads
 * the result of the one before it in its block gets it from acc, a host register, one that reads
 * the value of the block's last load from further back gets it from lacc (a scalar: on the
 * benchmark machine reading it back was faster than reading the indexed register file), a load
 * or store whose sp
 * the block already sampled skips the stack guard's sample, slli + add and add + load pairs run
 * in one handler, and a block remembers the block that followed it (CHAIN). */

#if defined(__GNUC__) && !defined(RV_NO_THREADED)
#define RV_THREADED 1
#endif

#define SX32(v) ((ureg_t)(sreg_t)(int32_t)(v)) /* sign-extend a 32-bit value to XLEN */
#define IMM ((ureg_t)(sreg_t)d->imm)
#define RS1 (x[d->rs1])
#define RS2 (x[d->rs2])
#define PC ((ureg_t)(base + d->off))
#ifdef RV_THREADED
#define H(o) L_##o:
#define DISPATCH() goto *d->h
#else
#define H(o) case OP_##o:
#define DISPATCH() goto exec
#endif
#define NEXT() do { d++; DISPATCH(); } while (0)
/* Write rd; acc keeps the value for a next instruction that reads it (rv_exec_ops.h). */
#define W(v) do { acc = (ureg_t)(v); x[d->rd] = acc; } while (0)
#define FAULT(kind, a) do { fk = (kind); fa = (uint64_t)(a); goto fault; } while (0)
#define CHECK_TARGET(t) do { if (RV_UNLIKELY((uint64_t)(ureg_t)((t) - base) >= size)) \
    FAULT(FAULT_JUMP_OUT_OF_RANGE, (t)); } while (0)
/* Leaving a block (pc is set): straight into the block that followed it last time when that one
 * starts at pc and fits under the instruction limit, else through the block map. */
#define CHAIN(k) do { const uint32_t nb_ = b->succ[k]; \
    if (RV_LIKELY(nb_ != 0) && nb_ <= s->nblks && s->blks[nb_ - 1].off == (uint64_t)(ureg_t)(pc - base) && \
        instret + s->blks[nb_ - 1].n <= max_instret) { bi = nb_; goto enter; } \
    link = (uint32_t)(b - s->blks) + 1; link_k = (k); goto dispatch; } while (0)
/* Leaving a block by its last instruction (branch or jump). */
#define EXIT_BLOCK(redir) do { ld_rd = 0; ld2_rd = 0; last_rd = RV_SINK; redirected = (redir); CHAIN(redir); } while (0)
#define BRANCH(cond) do { if (cond) { ureg_t t_ = PC + IMM; CHECK_TARGET(t_); pc = t_; \
    cycles += taken_delta + (b->ft_mis ? lookahead_mis : 0); n_taken++; EXIT_BLOCK(1); } \
    pc = PC + d->len; EXIT_BLOCK(0); } while (0)
/* A divider's dynamic cost from its divisor (before rd is written: rd may be rs2). */
#define DIV_COST(b, w) do { if (divz_delta | div_clz) { uint64_t b_ = (b); \
    cycles += b_ == 0 ? divz_delta : div_clz * (uint64_t)(__builtin_clzll(b_) - (64 - (w))); } } while (0)
/* One compare per memory access in the common case: only a new lowest sp is checked against the guard. */
#define STACK_CHECK() do { if (RV_UNLIKELY(x[2] < sp_min)) { \
    if (x[2] < stack_lo) { FAULT(FAULT_STACK_OVERFLOW, x[2]); } \
    sp_min = x[2]; } } while (0)
/* A load's or store's sp sample; empty in the handlers the builder picks when the block already
 * sampled this sp (rv_exec_mem.h). */
#define SP_SAMPLE() STACK_CHECK()
#define EA(n, oor, mis) \
    SP_SAMPLE(); \
    ureg_t a_ = RS1 + IMM; uint64_t o_ = (ureg_t)(a_ - base); \
    if (RV_UNLIKELY(o_ > size - (n))) FAULT(oor, a_); \
    if (RV_UNLIKELY(a_ & ((n) - 1))) FAULT(mis, a_)
/* A load also leaves its value in lacc, for the _L handlers (threaded dispatch only). */
#ifdef RV_THREADED
#define KEEP_LOADED() (lacc = acc)
#else
#define KEEP_LOADED() ((void)0)
#endif
/* A load reads at memb + a_ (= mem + o_ once checked), so o_ is off its result's path. */
#define LOAD(T, n) do { EA(n, FAULT_LOAD_OUT_OF_RANGE, FAULT_LOAD_MISALIGNED); T v_; \
    memcpy(&v_, (const void *)(memb + a_), n); W((sreg_t)v_); KEEP_LOADED(); NEXT(); } while (0)
#define LOADU(T, n) do { EA(n, FAULT_LOAD_OUT_OF_RANGE, FAULT_LOAD_MISALIGNED); T v_; \
    memcpy(&v_, (const void *)(memb + a_), n); W(v_); KEEP_LOADED(); NEXT(); } while (0)
/* After a store of n <= 8 aligned bytes at o (one granule): into decoded code, leave the block. */
#define STORED(o) do { if (RV_UNLIKELY(code_gran[(o) >> 3])) goto code_written; } while (0)
#define STORE(T, n) do { EA(n, FAULT_STORE_OUT_OF_RANGE, FAULT_STORE_MISALIGNED); T v_ = (T)RS2; \
    memcpy(mem + o_, &v_, n); STORED(o_); NEXT(); } while (0)
#define AMO_EA(n) \
    STACK_CHECK(); \
    ureg_t a_ = RS1; uint64_t o_ = (ureg_t)(a_ - base); \
    if (RV_UNLIKELY(o_ > size - (n))) FAULT(FAULT_AMO_OUT_OF_RANGE, a_); \
    if (RV_UNLIKELY(a_ & ((n) - 1))) FAULT(FAULT_AMO_MISALIGNED, a_)
/* Read-modify-write: old value -> rd, f(old, rs2) -> memory. T is the signed memory type. */
#define AMO(T, n, expr) do { AMO_EA(n); T old; memcpy(&old, mem + o_, n); T src = (T)RS2; \
    T nv = (expr); (void)src; memcpy(mem + o_, &nv, n); x[d->rd] = (ureg_t)(sreg_t)old; \
    STORED(o_); NEXT(); } while (0)
/* LR/SC (single hart): sc succeeds iff the reservation is for this address and the memory still
 * holds the value lr read; every sc clears the reservation. UT is the unsigned memory type. */
#define LR(T, UT, n) do { AMO_EA(n); T v_; memcpy(&v_, mem + o_, n); \
    s->resv_valid = 1; s->resv_addr = a_; s->resv_val = (UT)v_; x[d->rd] = (ureg_t)(sreg_t)v_; NEXT(); } while (0)
#define SC(UT, n) do { AMO_EA(n); UT cur_; memcpy(&cur_, mem + o_, n); \
    int ok_ = s->resv_valid && s->resv_addr == a_ && s->resv_val == cur_; s->resv_valid = 0; \
    if (ok_) { UT v_ = (UT)RS2; memcpy(mem + o_, &v_, n); x[d->rd] = 0; STORED(o_); } \
    else x[d->rd] = 1; \
    NEXT(); } while (0)
/* The handlers of one width of the A extension: SFX W or D, T/UT the signed/unsigned memory type. */
#define ATOMIC_HANDLERS(SFX, T, UT, n) \
    H(LR_##SFX) LR(T, UT, n); \
    H(SC_##SFX) SC(UT, n); \
    H(AMOSWAP_##SFX) AMO(T, n, src); \
    H(AMOADD_##SFX) AMO(T, n, (T)((UT)old + (UT)src)); \
    H(AMOXOR_##SFX) AMO(T, n, old ^ src); \
    H(AMOAND_##SFX) AMO(T, n, old & src); \
    H(AMOOR_##SFX) AMO(T, n, old | src); \
    H(AMOMIN_##SFX) AMO(T, n, old < src ? old : src); \
    H(AMOMAX_##SFX) AMO(T, n, old > src ? old : src); \
    H(AMOMINU_##SFX) AMO(T, n, (UT)old < (UT)src ? old : src); \
    H(AMOMAXU_##SFX) AMO(T, n, (UT)old > (UT)src ? old : src);

/* The ops of rv_exec_mem.h (X(OP)) and of rv_exec_ops.h plus those (RV_FWD_OPS); the *64 lists
 * only on RV64. */
/* The loads with their LOAD macro and memory type (X(OP, M, T, n)), for the fused handlers. */
#if XLEN == 64
#define RV_LOAD_FORMS(X) X(LB, LOAD, int8_t, 1) X(LH, LOAD, int16_t, 2) X(LW, LOAD, int32_t, 4) \
    X(LBU, LOADU, uint8_t, 1) X(LHU, LOADU, uint16_t, 2) X(LD, LOAD, int64_t, 8) X(LWU, LOADU, uint32_t, 4)
#else
#define RV_LOAD_FORMS(X) X(LB, LOAD, int8_t, 1) X(LH, LOAD, int16_t, 2) X(LW, LOAD, int32_t, 4) \
    X(LBU, LOADU, uint8_t, 1) X(LHU, LOADU, uint16_t, 2)
#endif
/* The first of a fused pair: an ALU result to rd and acc, then on to the second record. */
#define FUSED_FIRST(v) do { acc = (ureg_t)(v); x[d->rd] = acc; d++; } while (0)
#define RV_MEM_OPS(X) X(LB) X(LH) X(LW) X(LBU) X(LHU) X(SB) X(SH) X(SW)
#define RV_MEM_OPS64(X) X(LD) X(LWU) X(SD)
#define RV_ALU_OPS(X) X(LUI) X(AUIPC) X(BEQ) X(BNE) X(BLT) X(BGE) X(BLTU) X(BGEU) \
    X(ADDI) X(SLTI) X(SLTIU) X(XORI) X(ORI) X(ANDI) \
    X(SLLI) X(SRLI) X(SRAI) X(ADD) X(SUB) X(SLL) X(SLT) X(SLTU) X(XOR) X(SRL) X(SRA) X(OR) X(AND) X(MUL)
#define RV_ALU_OPS64(X) X(ADDIW) X(SLLIW) X(SRLIW) X(SRAIW) X(ADDW) X(SUBW) X(SLLW) X(SRLW) X(SRAW) X(MULW)
#define RV_FWD_OPS(X) RV_ALU_OPS(X) RV_MEM_OPS(X)
#define RV_FWD_OPS64(X) RV_ALU_OPS64(X) RV_MEM_OPS64(X)

/* Decode the block at RAM offset off (even, < size) of at most maxlen (1..RV_MAX_BLOCK)
 * instructions into the pools; returns its index in s->blks, or -1 when its first instruction
 * cannot be fetched. Costs are the profile's at build time (set_costs drops every block). */
static int BUILD_FN(rv_state *s, uint64_t off, unsigned maxlen, const rv_handlers *hs) {
    static const uint8_t cls_key[CLS_COUNT] = {
#define CLS_KEY(c, name, key) key,
        RV_CLASSES(CLS_KEY)
#undef CLS_KEY
    };
    rv_blocks_reserve(s);
    const uint64_t size = s->size;
    rv_blk *b = &s->blks[s->nblks];
    rv_rec *const r0 = &s->recs[s->nrecs];
    rv_rec *r = r0;
    memset(b, 0, sizeof *b);
    b->off = off;
    b->first = s->nrecs;
    uint64_t o = off, scyc = 0;
    unsigned n = 0;
    int ends = 0;
    int sp_sampled = 0; /* an earlier load, store or AMO of the block sampled the current sp */
    unsigned lrd = RV_SINK; /* destination of the block's last load while it still holds lacc's value (RV_SINK: none) */
    while (n < maxlen && !ends) {
        if (o >= size) break;
        uint16_t lo;
        memcpy(&lo, s->mem + o, 2);
        uint32_t raw = lo;
        if ((lo & 3) == 3) {
            if (o + 4 > size) break;
            uint16_t hi;
            memcpy(&hi, s->mem + o + 2, 2);
            raw |= (uint32_t)hi << 16;
        }
        rv_dinsn di;
        memset(&di, 0, sizeof di);
        rv_decode(raw, XLEN, s->zbb, &di);
        r->h = NULL;
        if (hs) {
            int src = 0; /* operands from x[]; 1: rs1 from acc, 2: rs2 from acc */
            if (n > 0 && hs->fwd[0][r[-1].op] && r[-1].rd != RV_SINK) { /* the previous record leaves its result in acc */
                if (di.rs1 == r[-1].rd && hs->fwd[0][di.op]) src = 1;
                else if (di.rs2 == r[-1].rd && hs->fwd[1][di.op]) src = 2;
            }
            r->h = src ? hs->fwd[src - 1][di.op] : hs->op[di.op];
            if (sp_sampled && hs->nosp[src][di.op]) r->h = hs->nosp[src][di.op];
            if (!src && lrd != RV_SINK) { /* an operand loaded earlier in the block is still in lacc */
                if (di.rs1 == lrd && hs->lfwd[0][di.op]) r->h = hs->lfwd[0][di.op];
                else if (di.rs2 == lrd && hs->lfwd[1][di.op]) r->h = hs->lfwd[1][di.op];
            }
        }
        if (hs && n > 0 && r[-1].h == hs->op[r[-1].op] && r[-1].rd != RV_SINK) { /* fuse with the record before */
            const rv_rec *p = &r[-1];
            if (p->op == OP_SLLI && di.op == OP_ADD && (di.rs1 == p->rd || di.rs2 == p->rd))
                r[-1].h = hs->fuse_slli_add[di.rs1 == p->rd ? 0 : 1];
            else if (p->op == OP_ADD && di.rs1 == p->rd && hs->fuse_add_load[di.op])
                r[-1].h = hs->fuse_add_load[di.op];
        }
        if (di.cls == CLS_LOAD) lrd = di.rd;
        else if (di.rd == lrd) lrd = RV_SINK;
        /* Its sp sample comes before its write of rd (lw sp, 0(sp)). */
        sp_sampled = (sp_sampled || di.cls == CLS_LOAD || di.cls == CLS_STORE || di.cls == CLS_ATOMIC) && di.rd != 2;
        r->off = (uint32_t)o;
        r->imm = di.imm;
        r->raw = di.raw;
        r->op = di.op;
        r->rd = di.rd;
        r->rs1 = di.rs1;
        r->rs2 = di.rs2;
        r->len = di.len;
        r->cls = di.cls;
        r->idx = (uint8_t)n;
        r->stall = n > 0 && r[-1].cls == CLS_LOAD && (r->rs1 == r[-1].rd || r->rs2 == r[-1].rd);
        uint64_t c = s->cost[cls_key[di.cls]];
        if ((o & 2) && di.len == 4) c += s->cost[COST_MISALIGNED_FETCH];
        if (di.op == OP_MULH || di.op == OP_MULHSU || di.op == OP_MULHU) c += s->cost[COST_MULH_EXTRA];
        if (di.op == OP_JALR) c += s->cost[COST_JALR_EXTRA];
        if (r->stall) c += s->cost[COST_LOAD_USE_STALL];
        r->pre = (uint32_t)scyc;
        scyc += c;
        b->cls_n[di.cls]++;
        b->nstall += r->stall;
        for (uint64_t g = o >> 3; g <= (o + di.len - 1) >> 3; g++) s->code_gran[g] = 1;
        if (o < s->code_lo) s->code_lo = o;
        if (o + di.len > s->code_hi) s->code_hi = o + di.len;
        ends = di.cls == CLS_BRANCH || di.cls == CLS_JUMP || (di.cls == CLS_SYSTEM && di.op != OP_FENCE);
        o += di.len;
        n++;
        r++;
    }
    if (n == 0) return -1;
    if (!ends) { /* fall-through record */
        memset(r, 0, sizeof *r);
        r->h = hs ? hs->op[OP_UNDECODED] : NULL;
        r->off = (uint32_t)o;
        r->op = OP_UNDECODED;
        r->idx = (uint8_t)n;
        r->pre = (uint32_t)scyc;
        r++;
    }
    b->n = n;
    b->scyc = scyc;
    b->mis0 = (r0->off & 2) && r0->len == 4; /* base is a multiple of 8 */
    if (ends && r[-1].cls == CLS_BRANCH && (o & 2) && o + 2 <= size) {
        /* The fall-through's first halfword shapes this block's cost. It shares a granule with the
         * branch (o = 2 mod 4), so a store there already drops the block; write_mem needs the span. */
        b->ft_mis = (s->mem[o] & 3) == 3;
        if (o + 2 > s->code_hi) s->code_hi = o + 2;
    }
    s->nrecs += (uint32_t)(r - r0);
    return (int)s->nblks++;
}

int RUN_FN(rv_state *s, uint64_t max_instret) {
#ifdef RV_THREADED
#define LABEL_OF(o, name, cls, fmt) &&L_##o,
    static const void *const labels[OP_COUNT] = {RV_OPS(LABEL_OF)};
#undef LABEL_OF
#define FWD1(o) [OP_##o] = &&L_##o##_F1,
#define FWD2(o) [OP_##o] = &&L_##o##_F2,
#define LFWD1(o) [OP_##o] = &&L_##o##_L1,
#define LFWD2(o) [OP_##o] = &&L_##o##_L2,
#define NOSP0(o) [OP_##o] = &&L_##o##_N0,
#define NOSP1(o) [OP_##o] = &&L_##o##_N1,
#define NOSP2(o) [OP_##o] = &&L_##o##_N2,
#if XLEN == 64
    static const void *const fwd1[OP_COUNT] = {RV_FWD_OPS(FWD1) RV_FWD_OPS64(FWD1)};
    static const void *const fwd2[OP_COUNT] = {RV_FWD_OPS(FWD2) RV_FWD_OPS64(FWD2)};
    static const void *const nosp0[OP_COUNT] = {RV_MEM_OPS(NOSP0) RV_MEM_OPS64(NOSP0)};
    static const void *const nosp1[OP_COUNT] = {RV_MEM_OPS(NOSP1) RV_MEM_OPS64(NOSP1)};
    static const void *const nosp2[OP_COUNT] = {RV_MEM_OPS(NOSP2) RV_MEM_OPS64(NOSP2)};
    static const void *const lfwd1[OP_COUNT] = {RV_ALU_OPS(LFWD1) RV_ALU_OPS64(LFWD1)};
    static const void *const lfwd2[OP_COUNT] = {RV_ALU_OPS(LFWD2) RV_ALU_OPS64(LFWD2)};
#else
    static const void *const fwd1[OP_COUNT] = {RV_FWD_OPS(FWD1)};
    static const void *const fwd2[OP_COUNT] = {RV_FWD_OPS(FWD2)};
    static const void *const nosp0[OP_COUNT] = {RV_MEM_OPS(NOSP0)};
    static const void *const nosp1[OP_COUNT] = {RV_MEM_OPS(NOSP1)};
    static const void *const nosp2[OP_COUNT] = {RV_MEM_OPS(NOSP2)};
    static const void *const lfwd1[OP_COUNT] = {RV_ALU_OPS(LFWD1)};
    static const void *const lfwd2[OP_COUNT] = {RV_ALU_OPS(LFWD2)};
#endif
#undef FWD1
#undef FWD2
#undef NOSP0
#undef NOSP1
#undef NOSP2
#undef LFWD1
#undef LFWD2
#define FUSE_ADD(o, M, T, n) [OP_##o] = &&L_FUSE_ADD_##o,
    static const void *const fuse_add[OP_COUNT] = {RV_LOAD_FORMS(FUSE_ADD)};
#undef FUSE_ADD
    static const rv_handlers handlers = {labels, {fwd1, fwd2}, {nosp0, nosp1, nosp2}, {lfwd1, lfwd2},
                                         {&&L_FUSE_SLLI_ADD1, &&L_FUSE_SLLI_ADD2}, fuse_add};
    const rv_handlers *const hs = &handlers;
#else
    const rv_handlers *const hs = NULL;
#endif
    ureg_t x[RV_NREGS];
    for (int i = 0; i < RV_NREGS; i++) x[i] = (ureg_t)s->x[i];
    x[0] = 0;
    ureg_t pc = (ureg_t)s->pc;
    const ureg_t base = (ureg_t)s->base;
    const uint64_t size = s->size;
    uint8_t *const mem = s->mem;
    const uintptr_t memb = (uintptr_t)mem - (uintptr_t)base; /* host address of guest address 0 (never dereferenced) */
    const uint8_t *const code_gran = s->code_gran;
    uint64_t cycles = s->cycles, instret = s->instret;
    const uint64_t taken_delta = (uint64_t)((int64_t)s->cost[COST_BRANCH_TAKEN] - (int64_t)s->cost[COST_BRANCH_NOT_TAKEN]);
    const uint64_t stall = s->cost[COST_LOAD_USE_STALL];
    const uint64_t mis_target = s->cost[COST_MISALIGNED_TARGET];
    const uint64_t lookahead_mis = s->cost[COST_BRANCH_LOOKAHEAD_MISALIGNED];
    const uint64_t divz_delta = (uint64_t)((int64_t)s->cost[COST_DIV_BY_ZERO] - (int64_t)s->cost[COST_DIV]);
    const uint64_t div_clz = s->cost[COST_DIV_CLZ], jalr_dep = s->cost[COST_JALR_DEP_STALL];
    const uint64_t jalr_dep_link = s->cost[COST_JALR_DEP_LINK_EXTRA], jalr_load2 = s->cost[COST_JALR_LOAD_DEP2_STALL];
    int redirected = s->redirected, red_in = 0;
    unsigned last_rd = s->last_rd, last_in = RV_SINK;
    unsigned ld_rd = s->ld_rd, ld_in = 0, ld2_rd = s->ld2_rd, ld2_in = 0;
    uint64_t n_taken = s->n_taken, n_stalls = s->n_stalls;
    const ureg_t stack_lo = (ureg_t)s->stack_lo;
    ureg_t sp_min = (ureg_t)s->sp_min;
    int halt = HALT_NONE, fk = FAULT_NONE;
    uint64_t fa = 0;
    rv_blk *b = NULL;
    const rv_rec *d = NULL, *first = NULL;
    uint64_t entry_dyn = 0; /* dynamic cycles charged at entry for the first record */
    ureg_t acc = 0;         /* the last value written by a handler of rv_exec_ops.h or rv_exec_mem.h */
#ifdef RV_THREADED
    ureg_t lacc = 0;        /* the last value loaded by a handler of rv_exec_mem.h */
#endif
    unsigned entry_stall = 0;
    uint32_t bi = 0;                  /* 1 + index of the block being entered */
    uint32_t link = 0, link_k = 0;    /* the block left through the map, and how (CHAIN) */

dispatch: {
        const uint64_t off = (ureg_t)(pc - base);
        d = NULL;
        if (RV_UNLIKELY(off >= size)) FAULT(FAULT_FETCH_OUT_OF_RANGE, pc);
        if (RV_UNLIKELY(off & 1)) FAULT(FAULT_FETCH_MISALIGNED, pc);
        if (RV_UNLIKELY(instret >= max_instret)) { halt = HALT_LIMIT; goto out; }
        bi = s->blk_of[off >> 1];
        int cached = 1;
        if (RV_UNLIKELY(bi == 0 || instret + s->blks[bi - 1].n > max_instret)) {
            /* Near the instruction limit, a block that stops at it is built but not cached. */
            const uint64_t left = max_instret - instret;
            const int temp = left < RV_MAX_BLOCK;
            if (temp && s->temp_recs == UINT32_MAX) { s->temp_recs = s->nrecs; s->temp_blks = s->nblks; }
            int nb = BUILD_FN(s, off, temp ? (unsigned)left : RV_MAX_BLOCK, hs);
            if (nb < 0) FAULT(FAULT_FETCH_OUT_OF_RANGE, pc);
            bi = (uint32_t)nb + 1;
            if (!temp) s->blk_of[off >> 1] = bi;
            cached = !temp;
        }
        if (link && cached && link <= s->nblks) s->blks[link - 1].succ[link_k] = bi;
        link = 0;
    }
enter: {
        b = &s->blks[bi - 1];
        d = first = &s->recs[b->first];
        ld_in = ld_rd;
        ld2_in = ld2_rd;
        red_in = redirected;
        last_in = last_rd;
        entry_dyn = 0;
        entry_stall = 0;
        if (ld_rd && (d->rs1 == ld_rd || d->rs2 == ld_rd)) { entry_dyn = stall; entry_stall = 1; }
        if (redirected && b->mis0) entry_dyn += mis_target;
        cycles += b->scyc + entry_dyn;
        instret += b->n;
        n_stalls += b->nstall + entry_stall;
        if (RV_UNLIKELY(b->execs++ == 0)) s->dirty[s->ndirty++] = bi - 1;
    }

#ifdef RV_THREADED
    DISPATCH();
#else
exec:
    switch ((enum rv_op)d->op) {
#endif
    H(UNDECODED) { /* fall-through record: the block ended without a jump */
        const rv_rec *p = d - 1;
        ld2_rd = p > first ? (p[-1].cls == CLS_LOAD ? p[-1].rd : 0u) : ld_in;
        ld_rd = p->cls == CLS_LOAD ? p->rd : 0;
        last_rd = p->rd;
        redirected = 0;
        pc = PC;
        CHAIN(0);
    }
    H(JAL) { ureg_t t = PC + IMM; CHECK_TARGET(t); x[d->rd] = PC + d->len; pc = t; EXIT_BLOCK(1); }
    H(JALR) {
        ureg_t t = (RS1 + IMM) & ~(ureg_t)1;
        CHECK_TARGET(t);
        const unsigned prev = d == first ? last_in : d[-1].rd;
        if (d->rs1 == prev) {
            cycles += jalr_dep + (d->rd == d->rs1 ? jalr_dep_link : 0);
        } else if (jalr_load2) {
            const unsigned two = d - first >= 2 ? (d[-2].cls == CLS_LOAD ? d[-2].rd : 0u) : d == first ? ld2_in : ld_in;
            if (two && d->rs1 == two) cycles += jalr_load2;
        }
        x[d->rd] = PC + d->len;
        pc = t;
        EXIT_BLOCK(1);
    }
#include "rv_exec_ops.h"
#include "rv_exec_mem.h"
#ifdef RV_THREADED
    /* The same handlers with an operand from acc: the builder picks them for an instruction that
     * reads the destination of the one just before it in the block. */
#undef H
#undef RS1
#define H(o) L_##o##_F1:
#define RS1 acc
#include "rv_exec_ops.h"
#include "rv_exec_mem.h"
    /* Fused pairs, the address computations RISC-V cores fuse: slli + add and add + load, the
     * second reading the first's result. One handler runs both: the first's result goes to rd and
     * acc, d steps to the second record (its faults and counts are its own), and the second runs
     * as its acc-operand handler would, without a dispatch in between. */
    L_FUSE_SLLI_ADD1: FUSED_FIRST(x[d->rs1] << d->imm); W(RS1 + RS2); NEXT();
#define FUSE_ADD_LOAD(o, M, T, n) L_FUSE_ADD_##o: FUSED_FIRST(x[d->rs1] + x[d->rs2]); M(T, n);
    RV_LOAD_FORMS(FUSE_ADD_LOAD)
#undef FUSE_ADD_LOAD
#undef H
#undef RS1
#undef RS2
#define H(o) L_##o##_F2:
#define RS1 (x[d->rs1])
#define RS2 acc
#include "rv_exec_ops.h"
#include "rv_exec_mem.h"
    L_FUSE_SLLI_ADD2: FUSED_FIRST(x[d->rs1] << d->imm); W(RS1 + RS2); NEXT();
    /* The loads and stores once more, without the sp sample, in the same three operand sources. */
#undef SP_SAMPLE
#define SP_SAMPLE() do { } while (0)
#undef H
#undef RS2
#define H(o) L_##o##_N0:
#define RS2 (x[d->rs2])
#include "rv_exec_mem.h"
#undef H
#undef RS1
#define H(o) L_##o##_N1:
#define RS1 acc
#include "rv_exec_mem.h"
#undef H
#undef RS1
#undef RS2
#define H(o) L_##o##_N2:
#define RS1 (x[d->rs1])
#define RS2 acc
#include "rv_exec_mem.h"
    /* rv_exec_ops.h once more with an operand from lacc: the builder picks these for an
     * instruction that reads the destination of an earlier load of the block (not the one just
     * before it) that nothing wrote since. */
#undef H
#undef RS2
#undef RS1
#define H(o) L_##o##_L1:
#define RS1 lacc
#define RS2 (x[d->rs2])
#include "rv_exec_ops.h"
#undef H
#undef RS1
#undef RS2
#define H(o) L_##o##_L2:
#define RS1 (x[d->rs1])
#define RS2 lacc
#include "rv_exec_ops.h"
#undef H
#undef RS2
#define H(o) L_##o:
#define RS2 (x[d->rs2])
#endif
    H(FENCE) NEXT();
    H(ECALL) halt = HALT_ECALL; goto halted;
    H(EBREAK) halt = HALT_EBREAK; goto halted;
    H(CSRR) {
        /* rdcycle/rdinstret see the instructions retired before this one: take back what the
         * block's entry charged for it and the records after it. */
        const uint64_t cyc0 = cycles - (b->scyc - d->pre) - (d == first ? entry_dyn : 0);
        const uint64_t ret0 = instret - (b->n - d->idx);
        uint64_t v;
        switch (d->imm) {
        case CSR_CYCLE: v = cyc0; break;
        case CSR_INSTRET: v = ret0; break;
        case CSR_TIME: v = (uint64_t)((unsigned __int128)cyc0 * s->timebase_hz / s->clock_hz); break;
        case CSR_CYCLEH: v = cyc0 >> 32; break;
        case CSR_INSTRETH: v = ret0 >> 32; break;
        default: v = (uint64_t)((unsigned __int128)cyc0 * s->timebase_hz / s->clock_hz) >> 32; break;
        }
        x[d->rd] = (ureg_t)v;
        NEXT();
    }
    /* M */
#if XLEN == 32
    H(MULH) x[d->rd] = (ureg_t)(((int64_t)(int32_t)RS1 * (int64_t)(int32_t)RS2) >> 32); NEXT();
    H(MULHSU) x[d->rd] = (ureg_t)(((int64_t)(int32_t)RS1 * (int64_t)(uint64_t)RS2) >> 32); NEXT();
    H(MULHU) x[d->rd] = (ureg_t)(((uint64_t)RS1 * (uint64_t)RS2) >> 32); NEXT();
#else
    H(MULH) x[d->rd] = (ureg_t)(((__int128)(int64_t)RS1 * (__int128)(int64_t)RS2) >> 64); NEXT();
    H(MULHSU) x[d->rd] = (ureg_t)(((__int128)(int64_t)RS1 * (__int128)(uint64_t)RS2) >> 64); NEXT();
    H(MULHU) x[d->rd] = (ureg_t)(((unsigned __int128)RS1 * (unsigned __int128)RS2) >> 64); NEXT();
#endif
    H(DIV) {
        DIV_COST(RS2, XLEN);
        sreg_t a = (sreg_t)RS1, v = (sreg_t)RS2;
        x[d->rd] = v == 0 ? (ureg_t)-1 : (v == -1 && RS1 == (ureg_t)1 << (XLEN - 1)) ? RS1 : (ureg_t)(a / v);
        NEXT();
    }
    H(DIVU) DIV_COST(RS2, XLEN); x[d->rd] = RS2 == 0 ? (ureg_t)-1 : RS1 / RS2; NEXT();
    H(REM) {
        DIV_COST(RS2, XLEN);
        sreg_t a = (sreg_t)RS1, v = (sreg_t)RS2;
        x[d->rd] = v == 0 ? RS1 : (v == -1) ? 0 : (ureg_t)(a % v);
        NEXT();
    }
    H(REMU) DIV_COST(RS2, XLEN); x[d->rd] = RS2 == 0 ? RS1 : RS1 % RS2; NEXT();
    /* A (W forms; valid on both XLENs) */
    ATOMIC_HANDLERS(W, int32_t, uint32_t, 4)
    /* Zbb */
    H(ANDN) x[d->rd] = RS1 & ~RS2; NEXT();
    H(ORN) x[d->rd] = RS1 | ~RS2; NEXT();
    H(XNOR) x[d->rd] = ~(RS1 ^ RS2); NEXT();
    H(CLZ) { ureg_t v = RS1; x[d->rd] = v ? (ureg_t)(XLEN == 64 ? __builtin_clzll(v) : __builtin_clz((uint32_t)v)) : XLEN; NEXT(); }
    H(CTZ) { ureg_t v = RS1; x[d->rd] = v ? (ureg_t)__builtin_ctzll(v) : XLEN; NEXT(); }
    H(CPOP) x[d->rd] = (ureg_t)__builtin_popcountll(RS1); NEXT();
    H(MAX) x[d->rd] = (sreg_t)RS1 > (sreg_t)RS2 ? RS1 : RS2; NEXT();
    H(MAXU) x[d->rd] = RS1 > RS2 ? RS1 : RS2; NEXT();
    H(MIN) x[d->rd] = (sreg_t)RS1 < (sreg_t)RS2 ? RS1 : RS2; NEXT();
    H(MINU) x[d->rd] = RS1 < RS2 ? RS1 : RS2; NEXT();
    H(SEXT_B) x[d->rd] = (ureg_t)(sreg_t)(int8_t)RS1; NEXT();
    H(SEXT_H) x[d->rd] = (ureg_t)(sreg_t)(int16_t)RS1; NEXT();
    H(ZEXT_H) x[d->rd] = RS1 & 0xffff; NEXT();
    H(ROL) { unsigned sh = RS2 & (XLEN - 1); ureg_t v = RS1;
        x[d->rd] = sh ? (v << sh) | (v >> (XLEN - sh)) : v; NEXT(); }
    H(ROR) { unsigned sh = RS2 & (XLEN - 1); ureg_t v = RS1;
        x[d->rd] = sh ? (v >> sh) | (v << (XLEN - sh)) : v; NEXT(); }
    H(RORI) { unsigned sh = (unsigned)d->imm; ureg_t v = RS1;
        x[d->rd] = sh ? (v >> sh) | (v << (XLEN - sh)) : v; NEXT(); }
    H(REV8) x[d->rd] = XLEN == 64 ? (ureg_t)__builtin_bswap64(RS1) : (ureg_t)__builtin_bswap32((uint32_t)RS1); NEXT();
    H(ORC_B) { ureg_t v = RS1, r = 0;
        for (int i = 0; i < XLEN; i += 8) if ((v >> i) & 0xff) r |= (ureg_t)0xff << i;
        x[d->rd] = r; NEXT(); }
#if XLEN == 64
    H(DIVW) {
        DIV_COST((uint32_t)RS2, 32);
        int32_t a = (int32_t)RS1, v = (int32_t)RS2;
        x[d->rd] = v == 0 ? (ureg_t)-1 : (v == -1 && a == INT32_MIN) ? SX32(a) : SX32(a / v);
        NEXT();
    }
    H(DIVUW) { DIV_COST((uint32_t)RS2, 32); uint32_t a = (uint32_t)RS1, v = (uint32_t)RS2;
        x[d->rd] = v == 0 ? (ureg_t)-1 : SX32(a / v); NEXT(); }
    H(REMW) {
        DIV_COST((uint32_t)RS2, 32);
        int32_t a = (int32_t)RS1, v = (int32_t)RS2;
        x[d->rd] = v == 0 ? SX32(a) : v == -1 ? 0 : SX32(a % v);
        NEXT();
    }
    H(REMUW) { DIV_COST((uint32_t)RS2, 32); uint32_t a = (uint32_t)RS1, v = (uint32_t)RS2;
        x[d->rd] = v == 0 ? SX32(a) : SX32(a % v); NEXT(); }
    ATOMIC_HANDLERS(D, int64_t, uint64_t, 8)
    H(CLZW) { uint32_t v = (uint32_t)RS1; x[d->rd] = v ? (ureg_t)__builtin_clz(v) : 32; NEXT(); }
    H(CTZW) { uint32_t v = (uint32_t)RS1; x[d->rd] = v ? (ureg_t)__builtin_ctz(v) : 32; NEXT(); }
    H(CPOPW) x[d->rd] = (ureg_t)__builtin_popcount((uint32_t)RS1); NEXT();
    H(ROLW) { unsigned sh = RS2 & 31; uint32_t v = (uint32_t)RS1;
        x[d->rd] = SX32(sh ? (v << sh) | (v >> (32 - sh)) : v); NEXT(); }
    H(RORW) { unsigned sh = RS2 & 31; uint32_t v = (uint32_t)RS1;
        x[d->rd] = SX32(sh ? (v >> sh) | (v << (32 - sh)) : v); NEXT(); }
    H(RORIW) { unsigned sh = (unsigned)d->imm; uint32_t v = (uint32_t)RS1;
        x[d->rd] = SX32(sh ? (v >> sh) | (v << (32 - sh)) : v); NEXT(); }
#endif
#if XLEN == 32
    /* RV64-only ops never decode on RV32; their handlers exist for the label table. */
    H(LD) H(LWU) H(SD) H(ADDIW) H(SLLIW) H(SRLIW) H(SRAIW) H(ADDW) H(SUBW) H(SLLW) H(SRLW) H(SRAW)
    H(MULW) H(DIVW) H(DIVUW) H(REMW) H(REMUW) H(LR_D) H(SC_D) H(AMOSWAP_D) H(AMOADD_D) H(AMOXOR_D)
    H(AMOAND_D) H(AMOOR_D) H(AMOMIN_D) H(AMOMAX_D) H(AMOMINU_D) H(AMOMAXU_D) H(CLZW) H(CTZW) H(CPOPW)
    H(ROLW) H(RORW) H(RORIW)
#endif
    H(ILLEGAL)
#ifndef RV_THREADED
    default:
#endif
        FAULT(FAULT_ILLEGAL_INSTRUCTION, d->raw);
#ifndef RV_THREADED
    }
#endif

halted: /* ecall/ebreak: retired; pc after it so run() can resume */
    s->halt_pc = PC;
    pc = PC + d->len;
    ld_rd = 0;
    ld2_rd = 0;
    last_rd = RV_SINK;
    redirected = 0;
    goto out;

code_written: /* d stored into decoded code: retire it, take back the rest of the block, drop every block */
    {
        const rv_rec *e = d + 1;
        cycles -= b->scyc - e->pre;
        instret -= b->n - e->idx;
        for (const rv_rec *r = e; r < first + b->n; r++) { s->cls_count[r->cls]--; n_stalls -= r->stall; }
        ld_rd = 0;
        ld2_rd = 0;
        last_rd = d->rd;
        redirected = 0;
        pc = PC + d->len;
        rv_blocks_flush(s);
        goto dispatch;
    }

fault:
    halt = HALT_FAULT;
    if (d) { /* the faulting instruction and the rest of its block do not retire */
        cycles -= (b->scyc - d->pre) + (d == first ? entry_dyn : 0);
        instret -= b->n - d->idx;
        for (const rv_rec *r = d; r < first + b->n; r++) { s->cls_count[r->cls]--; n_stalls -= r->stall; }
        if (d == first) {
            n_stalls -= entry_stall;
            ld_rd = ld_in; /* a resumed run re-executes it with the same stall */
            ld2_rd = ld2_in;
            redirected = red_in;
            last_rd = last_in;
        } else {
            ld_rd = d[-1].cls == CLS_LOAD ? d[-1].rd : 0;
            ld2_rd = d - first >= 2 ? (d[-2].cls == CLS_LOAD ? d[-2].rd : 0u) : ld_in;
            redirected = 0;
            last_rd = d[-1].rd;
        }
        pc = PC;
    }
    s->fault_kind = fk;
    s->fault_pc = pc;
    s->fault_addr = fa;
    s->fault_insn = d ? d->raw : 0;
out:
    rv_blocks_fold(s);
    if (s->temp_recs != UINT32_MAX) { /* forget the blocks cut short by the instruction limit */
        s->nrecs = s->temp_recs;
        s->nblks = s->temp_blks;
        s->temp_recs = s->temp_blks = UINT32_MAX;
    }
    x[0] = 0;
    for (int i = 0; i < 32; i++) s->x[i] = x[i];
    s->x[RV_SINK] = 0;
    s->pc = pc;
    s->cycles = cycles;
    s->instret = instret;
    s->n_taken = n_taken;
    s->n_stalls = n_stalls;
    s->ld_rd = ld_rd;
    s->ld2_rd = ld2_rd;
    s->redirected = redirected;
    s->last_rd = last_rd;
    s->sp_min = sp_min;
    return halt;
}

#undef RV_THREADED
#undef SX32
#undef IMM
#undef RS1
#undef RS2
#undef PC
#undef H
#undef DISPATCH
#undef NEXT
#undef W
#undef FAULT
#undef CHECK_TARGET
#undef EXIT_BLOCK
#undef CHAIN
#undef BRANCH
#undef DIV_COST
#undef STACK_CHECK
#undef SP_SAMPLE
#undef FUSED_FIRST
#undef RV_LOAD_FORMS
#undef KEEP_LOADED
#undef EA
#undef LOAD
#undef LOADU
#undef STORED
#undef STORE
#undef AMO_EA
#undef AMO
#undef LR
#undef SC
#undef ATOMIC_HANDLERS
