/* The two interpreter instantiations (RV32 and RV64) plus decode-cache invalidation. */
#include <string.h>
#include "rv.h"

/* Forget decoded slots overlapping [off, off + n): any instruction starting up to 2 bytes before. */
static void rv_invalidate(rv_state *s, uint64_t off, uint64_t n) {
    uint64_t first = off >> 1, last = (off + n - 1) >> 1;
    if (first > 0) first--;
    for (uint64_t i = first; i <= last; i++) s->dc[i].op = OP_UNDECODED;
}

#define XLEN 32
#define ureg_t uint32_t
#define sreg_t int32_t
#define RUN_FN rv_run32
#include "rv_exec_body.h"
#undef XLEN
#undef RUN_FN
#undef ureg_t
#undef sreg_t

#define XLEN 64
#define ureg_t uint64_t
#define sreg_t int64_t
#define RUN_FN rv_run64
#include "rv_exec_body.h"
