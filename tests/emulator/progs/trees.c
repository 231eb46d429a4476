/* Tree-ensemble-like integer inference loop (the kind of code rlcc generates). */
#include <stdint.h>
#ifndef ROUNDS
#define ROUNDS 20
#endif
#define NTREES 16
#define DEPTH 6
#define NFEAT 8
#define NNODES ((1 << DEPTH) - 1)
static int32_t thr[NTREES][NNODES];
static uint8_t feat[NTREES][NNODES];
static int32_t leaf[NTREES][1 << DEPTH];
volatile int32_t out[4];
static uint32_t rng = 1u;
static uint32_t next(void) { rng = rng * 1664525u + 1013904223u; return rng; }
static int32_t predict(const int32_t *x) {
    int64_t acc = 0;
    for (int t = 0; t < NTREES; t++) {
        unsigned n = 0;
        for (int d = 0; d < DEPTH; d++) n = 2 * n + 1 + (x[feat[t][n]] > thr[t][n]);
        acc += leaf[t][n - NNODES];
    }
    return (int32_t)((acc * 3) >> 2);
}
int main(void) {
    for (int t = 0; t < NTREES; t++) {
        for (int i = 0; i < NNODES; i++) { thr[t][i] = (int32_t)(next() >> 12) - 0x80000; feat[t][i] = (uint8_t)(next() % NFEAT); }
        for (int i = 0; i < (1 << DEPTH); i++) leaf[t][i] = (int32_t)(next() >> 16) - 0x8000;
    }
    int32_t x[NFEAT], sum = 0, mx = INT32_MIN;
    uint32_t h = 0;
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < NFEAT; i++) x[i] = (int32_t)(next() >> 12) - 0x80000;
        int32_t y = predict(x);
        sum += y; h = h * 31u + (uint32_t)y; if (y > mx) mx = y;
    }
    out[0] = sum; out[1] = (int32_t)h; out[2] = mx; out[3] = ROUNDS;
    return 0;
}
