/* Instruction decoder: 32-bit RV32/RV64 IMA + Zbb + Zicsr counter reads, and the C extension
 * expanded into the same decoded form (len = 2). Anything not recognised -> OP_ILLEGAL. */
#include "rv.h"

static inline int32_t sext(uint32_t v, int bits) {
    return (int32_t)(v << (32 - bits)) >> (32 - bits);
}

static inline uint32_t bit(uint32_t v, int b) { return (v >> b) & 1u; }
static inline uint32_t bits(uint32_t v, int hi, int lo) { return (v >> lo) & ((1u << (hi - lo + 1)) - 1u); }

/* Per-op facts the decoder attaches to the decoded form, generated from rv_ops.h. */
#define CLS_OF(o, name, cls, fmt) [OP_##o] = CLS_##cls,
static const uint8_t op_cls[OP_COUNT] = {RV_OPS(CLS_OF)};
#undef CLS_OF
#define FMT_OF(o, name, cls, fmt) [OP_##o] = FMT_##fmt,
static const uint8_t op_fmt[OP_COUNT] = {RV_OPS(FMT_OF)};
#undef FMT_OF
#define USES(f, name, rs1, rs2, rd) [FMT_##f] = {rs1, rs2, rd},
static const uint8_t fmt_uses[FMT_COUNT][3] = {RV_FORMATS(USES)}; /* reads rs1, reads rs2, writes rd */
#undef USES

/* The RV64 atomics are decoded as their .w op plus this distance. */
#define W_TO_D (OP_LR_D - OP_LR_W)
_Static_assert(OP_SC_D - OP_SC_W == W_TO_D && OP_AMOSWAP_D - OP_AMOSWAP_W == W_TO_D &&
               OP_AMOADD_D - OP_AMOADD_W == W_TO_D && OP_AMOXOR_D - OP_AMOXOR_W == W_TO_D &&
               OP_AMOAND_D - OP_AMOAND_W == W_TO_D && OP_AMOOR_D - OP_AMOOR_W == W_TO_D &&
               OP_AMOMIN_D - OP_AMOMIN_W == W_TO_D && OP_AMOMAX_D - OP_AMOMAX_W == W_TO_D &&
               OP_AMOMINU_D - OP_AMOMINU_W == W_TO_D && OP_AMOMAXU_D - OP_AMOMAXU_W == W_TO_D,
               "rv_ops.h: the .d atomics must follow the .w ones in the same order");

#define SET(o, d_, s1, s2, im) do { d->op = (o); d->rd = (uint8_t)(d_); d->rs1 = (uint8_t)(s1); \
    d->rs2 = (uint8_t)(s2); d->imm = (int32_t)(im); } while (0)
#define ILLEGAL() do { SET(OP_ILLEGAL, 0, 0, 0, 0); return; } while (0)

static void decode32(uint32_t w, int xlen, int zbb, rv_dinsn *d) {
    const uint32_t opc = w & 0x7f, rd = bits(w, 11, 7), f3 = bits(w, 14, 12);
    const uint32_t rs1 = bits(w, 19, 15), rs2 = bits(w, 24, 20), f7 = bits(w, 31, 25);
    const int32_t imm_i = (int32_t)w >> 20;
    const int32_t imm_s = sext((bits(w, 31, 25) << 5) | bits(w, 11, 7), 12);
    const int32_t imm_b = sext((bit(w, 31) << 12) | (bit(w, 7) << 11) | (bits(w, 30, 25) << 5) |
                               (bits(w, 11, 8) << 1), 13);
    const int32_t imm_u = (int32_t)(w & 0xfffff000u);
    const int32_t imm_j = sext((bit(w, 31) << 20) | (bits(w, 19, 12) << 12) | (bit(w, 20) << 11) |
                               (bits(w, 30, 21) << 1), 21);
    const int rv64 = xlen == 64;
    switch (opc) {
    case 0x37: SET(OP_LUI, rd, 0, 0, imm_u); return;
    case 0x17: SET(OP_AUIPC, rd, 0, 0, imm_u); return;
    case 0x6f: SET(OP_JAL, rd, 0, 0, imm_j); return;
    case 0x67:
        if (f3 != 0) ILLEGAL();
        SET(OP_JALR, rd, rs1, 0, imm_i); return;
    case 0x63: {
        static const uint8_t ops[8] = {OP_BEQ, OP_BNE, OP_ILLEGAL, OP_ILLEGAL, OP_BLT, OP_BGE, OP_BLTU, OP_BGEU};
        if (ops[f3] == OP_ILLEGAL) ILLEGAL();
        SET(ops[f3], 0, rs1, rs2, imm_b); return;
    }
    case 0x03: {
        static const uint8_t ops[8] = {OP_LB, OP_LH, OP_LW, OP_LD, OP_LBU, OP_LHU, OP_LWU, OP_ILLEGAL};
        uint8_t o = ops[f3];
        if (o == OP_ILLEGAL || (!rv64 && (o == OP_LD || o == OP_LWU))) ILLEGAL();
        SET(o, rd, rs1, 0, imm_i); return;
    }
    case 0x23: {
        static const uint8_t ops[8] = {OP_SB, OP_SH, OP_SW, OP_SD, OP_ILLEGAL, OP_ILLEGAL, OP_ILLEGAL, OP_ILLEGAL};
        uint8_t o = ops[f3];
        if (o == OP_ILLEGAL || (!rv64 && o == OP_SD)) ILLEGAL();
        SET(o, 0, rs1, rs2, imm_s); return;
    }
    case 0x13: {
        const uint32_t shmask = rv64 ? 0x3f : 0x1f;
        const uint32_t f6 = bits(w, 31, 26), imm12 = bits(w, 31, 20);
        switch (f3) {
        case 0: SET(OP_ADDI, rd, rs1, 0, imm_i); return;
        case 2: SET(OP_SLTI, rd, rs1, 0, imm_i); return;
        case 3: SET(OP_SLTIU, rd, rs1, 0, imm_i); return;
        case 4: SET(OP_XORI, rd, rs1, 0, imm_i); return;
        case 6: SET(OP_ORI, rd, rs1, 0, imm_i); return;
        case 7: SET(OP_ANDI, rd, rs1, 0, imm_i); return;
        case 1:
            if ((rv64 ? f6 == 0 : f7 == 0)) { SET(OP_SLLI, rd, rs1, 0, bits(w, 25, 20) & shmask); return; }
            if (zbb) {
                switch (imm12) {
                case 0x600: SET(OP_CLZ, rd, rs1, 0, 0); return;
                case 0x601: SET(OP_CTZ, rd, rs1, 0, 0); return;
                case 0x602: SET(OP_CPOP, rd, rs1, 0, 0); return;
                case 0x604: SET(OP_SEXT_B, rd, rs1, 0, 0); return;
                case 0x605: SET(OP_SEXT_H, rd, rs1, 0, 0); return;
                }
            }
            ILLEGAL();
        case 5:
            if ((rv64 ? f6 == 0 : f7 == 0)) { SET(OP_SRLI, rd, rs1, 0, bits(w, 25, 20) & shmask); return; }
            if ((rv64 ? f6 == 0x10 : f7 == 0x20)) { SET(OP_SRAI, rd, rs1, 0, bits(w, 25, 20) & shmask); return; }
            if (zbb) {
                if ((rv64 ? f6 == 0x18 : f7 == 0x30)) { SET(OP_RORI, rd, rs1, 0, bits(w, 25, 20) & shmask); return; }
                if (imm12 == 0x287) { SET(OP_ORC_B, rd, rs1, 0, 0); return; }
                if (imm12 == (rv64 ? 0x6b8u : 0x698u)) { SET(OP_REV8, rd, rs1, 0, 0); return; }
            }
            ILLEGAL();
        }
        ILLEGAL();
    }
    case 0x1b: {
        if (!rv64) ILLEGAL();
        const uint32_t imm12 = bits(w, 31, 20);
        switch (f3) {
        case 0: SET(OP_ADDIW, rd, rs1, 0, imm_i); return;
        case 1:
            if (f7 == 0) { SET(OP_SLLIW, rd, rs1, 0, rs2); return; }
            if (zbb && imm12 == 0x600) { SET(OP_CLZW, rd, rs1, 0, 0); return; }
            if (zbb && imm12 == 0x601) { SET(OP_CTZW, rd, rs1, 0, 0); return; }
            if (zbb && imm12 == 0x602) { SET(OP_CPOPW, rd, rs1, 0, 0); return; }
            ILLEGAL();
        case 5:
            if (f7 == 0) { SET(OP_SRLIW, rd, rs1, 0, rs2); return; }
            if (f7 == 0x20) { SET(OP_SRAIW, rd, rs1, 0, rs2); return; }
            if (zbb && f7 == 0x30) { SET(OP_RORIW, rd, rs1, 0, rs2); return; }
            ILLEGAL();
        }
        ILLEGAL();
    }
    case 0x33: {
        uint8_t o = OP_ILLEGAL;
        if (f7 == 0) {
            static const uint8_t ops[8] = {OP_ADD, OP_SLL, OP_SLT, OP_SLTU, OP_XOR, OP_SRL, OP_OR, OP_AND};
            o = ops[f3];
        } else if (f7 == 0x20) {
            static const uint8_t ops[8] = {OP_SUB, OP_ILLEGAL, OP_ILLEGAL, OP_ILLEGAL, OP_XNOR, OP_SRA, OP_ORN, OP_ANDN};
            o = ops[f3];
            if (!zbb && (o == OP_XNOR || o == OP_ORN || o == OP_ANDN)) o = OP_ILLEGAL;
        } else if (f7 == 0x01) {
            static const uint8_t ops[8] = {OP_MUL, OP_MULH, OP_MULHSU, OP_MULHU, OP_DIV, OP_DIVU, OP_REM, OP_REMU};
            o = ops[f3];
        } else if (zbb && f7 == 0x05) {
            static const uint8_t ops[8] = {OP_ILLEGAL, OP_ILLEGAL, OP_ILLEGAL, OP_ILLEGAL, OP_MIN, OP_MINU, OP_MAX, OP_MAXU};
            o = ops[f3];
        } else if (zbb && f7 == 0x30) {
            o = f3 == 1 ? OP_ROL : f3 == 5 ? OP_ROR : OP_ILLEGAL;
        } else if (zbb && !rv64 && f7 == 0x04 && f3 == 4 && rs2 == 0) {
            SET(OP_ZEXT_H, rd, rs1, 0, 0); return;
        }
        if (o == OP_ILLEGAL) ILLEGAL();
        SET(o, rd, rs1, rs2, 0); return;
    }
    case 0x3b: {
        if (!rv64) ILLEGAL();
        uint8_t o = OP_ILLEGAL;
        if (f7 == 0) o = f3 == 0 ? OP_ADDW : f3 == 1 ? OP_SLLW : f3 == 5 ? OP_SRLW : OP_ILLEGAL;
        else if (f7 == 0x20) o = f3 == 0 ? OP_SUBW : f3 == 5 ? OP_SRAW : OP_ILLEGAL;
        else if (f7 == 0x01) {
            static const uint8_t ops[8] = {OP_MULW, OP_ILLEGAL, OP_ILLEGAL, OP_ILLEGAL, OP_DIVW, OP_DIVUW, OP_REMW, OP_REMUW};
            o = ops[f3];
        } else if (zbb && f7 == 0x30) o = f3 == 1 ? OP_ROLW : f3 == 5 ? OP_RORW : OP_ILLEGAL;
        else if (zbb && f7 == 0x04 && f3 == 4 && rs2 == 0) { SET(OP_ZEXT_H, rd, rs1, 0, 0); return; }
        if (o == OP_ILLEGAL) ILLEGAL();
        SET(o, rd, rs1, rs2, 0); return;
    }
    case 0x0f:
        if (f3 == 0 || f3 == 1) { SET(OP_FENCE, 0, 0, 0, 0); return; }
        ILLEGAL();
    case 0x73:
        if (w == 0x00000073u) { SET(OP_ECALL, 0, 0, 0, 0); return; }
        if (w == 0x00100073u) { SET(OP_EBREAK, 0, 0, 0, 0); return; }
        if (f3 == 0 || f3 == 4) ILLEGAL();
        {
            /* Only reads of the user counters: csrrs/csrrc with rs1 = x0, csrrsi/csrrci with uimm = 0.
             * The counters are read-only, so any write form is illegal. */
            const uint32_t csr = bits(w, 31, 20);
            if (!(f3 == 2 || f3 == 3 || f3 == 6 || f3 == 7) || rs1 != 0) ILLEGAL();
            int ok = csr == CSR_CYCLE || csr == CSR_TIME || csr == CSR_INSTRET;
            if (!rv64) ok = ok || csr == CSR_CYCLEH || csr == CSR_TIMEH || csr == CSR_INSTRETH;
            if (!ok) ILLEGAL();
            SET(OP_CSRR, rd, 0, 0, csr); return;
        }
    case 0x2f: {
        const uint32_t f5 = bits(w, 31, 27);
        int dbl;
        if (f3 == 2) dbl = 0;
        else if (f3 == 3 && rv64) dbl = 1;
        else ILLEGAL();
        uint8_t o;
        switch (f5) {
        case 0x02: if (rs2 != 0) ILLEGAL(); SET(dbl ? OP_LR_D : OP_LR_W, rd, rs1, 0, 0); return;
        case 0x03: o = OP_SC_W; break;
        case 0x01: o = OP_AMOSWAP_W; break;
        case 0x00: o = OP_AMOADD_W; break;
        case 0x04: o = OP_AMOXOR_W; break;
        case 0x0c: o = OP_AMOAND_W; break;
        case 0x08: o = OP_AMOOR_W; break;
        case 0x10: o = OP_AMOMIN_W; break;
        case 0x14: o = OP_AMOMAX_W; break;
        case 0x18: o = OP_AMOMINU_W; break;
        case 0x1c: o = OP_AMOMAXU_W; break;
        default: ILLEGAL();
        }
        if (dbl) o = (uint8_t)(o + W_TO_D);
        SET(o, rd, rs1, rs2, 0); return;
    }
    default:
        ILLEGAL();
    }
}

/* Expand a 16-bit instruction into the equivalent 32-bit decoded form. */
static void decode16(uint32_t h, int xlen, rv_dinsn *d) {
    const int rv64 = xlen == 64;
    const uint32_t q = h & 3, f3 = bits(h, 15, 13);
    const uint32_t rd = bits(h, 11, 7), rs2 = bits(h, 6, 2);
    const uint32_t rdp = 8 + bits(h, 4, 2), rs1p = 8 + bits(h, 9, 7);
    const int32_t imm6 = sext((bit(h, 12) << 5) | bits(h, 6, 2), 6);
    const uint32_t sh6 = (bit(h, 12) << 5) | bits(h, 6, 2);
    if (q == 0) {
        switch (f3) {
        case 0: {
            uint32_t u = (bits(h, 12, 11) << 4) | (bits(h, 10, 7) << 6) | (bit(h, 6) << 2) | (bit(h, 5) << 3);
            if (u == 0) ILLEGAL(); /* includes the all-zero word */
            SET(OP_ADDI, rdp, 2, 0, u); return;
        }
        case 2: {
            uint32_t u = (bits(h, 12, 10) << 3) | (bit(h, 6) << 2) | (bit(h, 5) << 6);
            SET(OP_LW, rdp, rs1p, 0, u); return;
        }
        case 3:
            if (!rv64) ILLEGAL(); /* c.flw: no F */
            SET(OP_LD, rdp, rs1p, 0, (bits(h, 12, 10) << 3) | (bits(h, 6, 5) << 6)); return;
        case 6: {
            uint32_t u = (bits(h, 12, 10) << 3) | (bit(h, 6) << 2) | (bit(h, 5) << 6);
            SET(OP_SW, 0, rs1p, rdp, u); return;
        }
        case 7:
            if (!rv64) ILLEGAL(); /* c.fsw */
            SET(OP_SD, 0, rs1p, rdp, (bits(h, 12, 10) << 3) | (bits(h, 6, 5) << 6)); return;
        default: ILLEGAL(); /* c.fld, reserved, c.fsd */
        }
    }
    if (q == 1) {
        switch (f3) {
        case 0: SET(OP_ADDI, rd, rd, 0, imm6); return; /* c.addi / c.nop / hints */
        case 1:
            if (rv64) {
                if (rd == 0) ILLEGAL();
                SET(OP_ADDIW, rd, rd, 0, imm6); return;
            }
            __attribute__((fallthrough)); /* c.jal (RV32) */
        case 5: {
            int32_t off = sext((bit(h, 12) << 11) | (bit(h, 11) << 4) | (bits(h, 10, 9) << 8) | (bit(h, 8) << 10) |
                               (bit(h, 7) << 6) | (bit(h, 6) << 7) | (bits(h, 5, 3) << 1) | (bit(h, 2) << 5), 12);
            SET(OP_JAL, f3 == 1 ? 1 : 0, 0, 0, off); return;
        }
        case 2: SET(OP_ADDI, rd, 0, 0, imm6); return; /* c.li */
        case 3:
            if (rd == 2) {
                int32_t im = sext((bit(h, 12) << 9) | (bit(h, 6) << 4) | (bit(h, 5) << 6) | (bits(h, 4, 3) << 7) |
                                  (bit(h, 2) << 5), 10);
                if (im == 0) ILLEGAL();
                SET(OP_ADDI, 2, 2, 0, im); return;
            } else {
                int32_t im = sext((bit(h, 12) << 17) | (bits(h, 6, 2) << 12), 18);
                if (im == 0) ILLEGAL();
                SET(OP_LUI, rd, 0, 0, im); return;
            }
        case 4: {
            const uint32_t f2 = bits(h, 11, 10);
            if (f2 == 0 || f2 == 1) {
                if (!rv64 && bit(h, 12)) ILLEGAL();
                SET(f2 == 0 ? OP_SRLI : OP_SRAI, rs1p, rs1p, 0, sh6); return;
            }
            if (f2 == 2) { SET(OP_ANDI, rs1p, rs1p, 0, imm6); return; }
            const uint32_t f = bits(h, 6, 5);
            if (!bit(h, 12)) {
                static const uint8_t ops[4] = {OP_SUB, OP_XOR, OP_OR, OP_AND};
                SET(ops[f], rs1p, rs1p, rdp, 0); return;
            }
            if (!rv64 || f >= 2) ILLEGAL();
            SET(f == 0 ? OP_SUBW : OP_ADDW, rs1p, rs1p, rdp, 0); return;
        }
        case 6:
        case 7: {
            int32_t off = sext((bit(h, 12) << 8) | (bits(h, 11, 10) << 3) | (bits(h, 6, 5) << 6) | (bits(h, 4, 3) << 1) |
                               (bit(h, 2) << 5), 9);
            SET(f3 == 6 ? OP_BEQ : OP_BNE, 0, rs1p, 0, off); return;
        }
        }
    }
    if (q == 2) {
        switch (f3) {
        case 0:
            if (!rv64 && bit(h, 12)) ILLEGAL();
            SET(OP_SLLI, rd, rd, 0, sh6); return;
        case 2:
            if (rd == 0) ILLEGAL();
            SET(OP_LW, rd, 2, 0, (bit(h, 12) << 5) | (bits(h, 6, 4) << 2) | (bits(h, 3, 2) << 6)); return;
        case 3:
            if (!rv64 || rd == 0) ILLEGAL(); /* c.flwsp on RV32 */
            SET(OP_LD, rd, 2, 0, (bit(h, 12) << 5) | (bits(h, 6, 5) << 3) | (bits(h, 4, 2) << 6)); return;
        case 4:
            if (!bit(h, 12)) {
                if (rs2 == 0) {
                    if (rd == 0) ILLEGAL();
                    SET(OP_JALR, 0, rd, 0, 0); return; /* c.jr */
                }
                SET(OP_ADD, rd, 0, rs2, 0); return; /* c.mv */
            }
            if (rs2 == 0) {
                if (rd == 0) { SET(OP_EBREAK, 0, 0, 0, 0); return; }
                SET(OP_JALR, 1, rd, 0, 0); return; /* c.jalr */
            }
            SET(OP_ADD, rd, rd, rs2, 0); return; /* c.add */
        case 6:
            SET(OP_SW, 0, 2, rs2, (bits(h, 12, 9) << 2) | (bits(h, 8, 7) << 6)); return;
        case 7:
            if (!rv64) ILLEGAL(); /* c.fswsp */
            SET(OP_SD, 0, 2, rs2, (bits(h, 12, 10) << 3) | (bits(h, 9, 7) << 6)); return;
        default: ILLEGAL(); /* c.fldsp, c.fsdsp */
        }
    }
    ILLEGAL();
}

void rv_decode(uint32_t raw, int xlen, int zbb, rv_dinsn *d) {
    d->raw = raw;
    if ((raw & 3) == 3) {
        d->len = 4;
        decode32(raw, xlen, zbb, d);
    } else {
        d->len = 2;
        decode16(raw & 0xffff, xlen, d);
    }
    const uint8_t *use = fmt_uses[op_fmt[d->op]]; /* fields the op does not use read as x0 */
    if (!use[0]) d->rs1 = 0;
    if (!use[1]) d->rs2 = 0;
    if (!use[2] || d->rd == 0) d->rd = RV_SINK;
    d->cls = op_cls[d->op];
}
