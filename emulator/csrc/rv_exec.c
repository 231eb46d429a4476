/* The two interpreter instantiations (RV32 and RV64) plus the block cache they share. */
#include <stdlib.h>
#include <string.h>
#include "rv.h"

/* Pool growth stops here: a guest with more decoded code than this starts the cache over. */
#define RV_MAX_RECS (1u << 22)

int rv_blocks_init(rv_state *s) {
    s->blk_of = calloc(s->size / 2, sizeof *s->blk_of);
    s->code_gran = calloc(s->size / 8 + 1, 1);
    s->cap_recs = 4096;
    s->cap_blks = 1024;
    s->recs = malloc(s->cap_recs * sizeof *s->recs);
    s->blks = malloc(s->cap_blks * sizeof *s->blks);
    s->dirty = malloc(s->cap_blks * sizeof *s->dirty);
    s->nrecs = s->nblks = s->ndirty = 0;
    s->temp_recs = s->temp_blks = UINT32_MAX;
    s->code_lo = s->size;
    s->code_hi = 0;
    return s->blk_of && s->code_gran && s->recs && s->blks && s->dirty ? 0 : -1;
}

void rv_blocks_free(rv_state *s) {
    free(s->blk_of);
    free(s->code_gran);
    free(s->recs);
    free(s->blks);
    free(s->dirty);
    s->dirty = NULL;
    s->blk_of = NULL;
    s->code_gran = NULL;
    s->recs = NULL;
    s->blks = NULL;
}

void rv_blocks_fold(rv_state *s) {
    for (uint32_t i = 0; i < s->ndirty; i++) {
        rv_blk *b = &s->blks[s->dirty[i]];
        for (int c = 0; c < CLS_COUNT; c++) s->cls_count[c] += b->execs * b->cls_n[c];
        b->execs = 0;
    }
    s->ndirty = 0;
}

void rv_blocks_flush(rv_state *s) {
    rv_blocks_fold(s);
    for (uint32_t i = 0; i < s->nblks; i++) s->blk_of[s->blks[i].off >> 1] = 0;
    if (s->code_lo < s->code_hi) memset(s->code_gran + (s->code_lo >> 3), 0, ((s->code_hi - 1) >> 3) - (s->code_lo >> 3) + 1);
    s->nrecs = s->nblks = 0;
    if (s->temp_recs != UINT32_MAX) s->temp_recs = s->temp_blks = 0;
    s->code_lo = s->size;
    s->code_hi = 0;
}

int rv_code_hit(const rv_state *s, uint64_t off, uint64_t n) {
    if (n == 0 || off >= s->code_hi || off + n <= s->code_lo) return 0;
    for (uint64_t g = off >> 3; g <= (off + n - 1) >> 3; g++)
        if (s->code_gran[g]) return 1;
    return 0;
}

/* Room for one more block of up to RV_MAX_BLOCK records plus its fall-through record; when the
 * pools cannot grow, every block is dropped (the caller holds no record pointers then). */
static void rv_blocks_reserve(rv_state *s) {
    if (s->nrecs + RV_MAX_BLOCK + 1 > s->cap_recs) {
        rv_rec *r = s->cap_recs < RV_MAX_RECS ? realloc(s->recs, 2 * (size_t)s->cap_recs * sizeof *r) : NULL;
        if (r) {
            s->recs = r;
            s->cap_recs *= 2;
        } else {
            rv_blocks_flush(s);
        }
    }
    if (s->nblks + 1 > s->cap_blks) {
        rv_blk *b = realloc(s->blks, 2 * (size_t)s->cap_blks * sizeof *b);
        if (b) s->blks = b;
        uint32_t *dl = b ? realloc(s->dirty, 2 * (size_t)s->cap_blks * sizeof *dl) : NULL;
        if (dl) {
            s->dirty = dl;
            s->cap_blks *= 2;
        } else {
            rv_blocks_flush(s);
        }
    }
}

/* Handlers are reached by computed goto. With GCC, starting every label on a 64-byte line (a
 * handler's fetch then starts a line of its own) made bench_emulator.py's program about 8%
 * faster on both XLENs than the default alignment, and faster than 16 or 32 bytes; setup.py asks
 * clang for the same with -mllvm -align-all-nofallthru-blocks=6. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("align-labels=64")
#endif

/* The handler tables of one interpreter instantiation, for its block builder (rv_exec_body.h). */
typedef struct {
    const void *const *op;      /* by op, operands from x[] */
    const void *const *fwd[2];  /* rs1 / rs2 from acc; NULL entries: no such handler */
    const void *const *nosp[3]; /* loads and stores without the sp sample: operands from x[], rs1 / rs2 from acc */
    const void *const *lfwd[2]; /* rs1 / rs2 from lacc (the block's last load) */
    const void *fuse_slli_add[2];       /* slli + add reading its result as rs1 / rs2 */
    const void *const *fuse_add_load;   /* add + a load (by the load's op) addressed by its result */
} rv_handlers;

#define XLEN 32
#define ureg_t uint32_t
#define sreg_t int32_t
#define RUN_FN rv_run32
#define BUILD_FN rv_build32
#include "rv_exec_body.h"
#undef XLEN
#undef RUN_FN
#undef BUILD_FN
#undef ureg_t
#undef sreg_t

#define XLEN 64
#define ureg_t uint64_t
#define sreg_t int64_t
#define RUN_FN rv_run64
#define BUILD_FN rv_build64
#include "rv_exec_body.h"
