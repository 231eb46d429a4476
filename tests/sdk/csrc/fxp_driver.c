/* Hosted driver for the fixed-point helper tests: fxp_driver FUNC < in.bin > out.bin.
 * Input: little-endian uint64 values (pairs a,b for two-argument functions, low 32 bits used
 * for 32-bit arguments); output: one uint64 per call (signed results sign-extended). */
#include <stdio.h>
#include <string.h>
#include "pcc_sdk.h"

int main(int argc, char **argv)
{
    uint64_t v[2], r;
    const char *f;
    int two;
    if (argc != 2) return 2;
    f = argv[1];
    two = strcmp(f, "mult") == 0 || strcmp(f, "fxp_mult") == 0;
    for (;;) {
        if (fread(v, 8, two ? 2u : 1u, stdin) != (two ? 2u : 1u)) break;
        if (strcmp(f, "mult") == 0) r = pcc_mult((uint32_t)v[0], (uint32_t)v[1]);
        else if (strcmp(f, "fxp_mult") == 0) r = pcc_fxp_mult((uint32_t)v[0], (uint32_t)v[1]);
        else if (strcmp(f, "recip") == 0) r = pcc_fxp_recip((uint32_t)v[0]);
        else if (strcmp(f, "log2") == 0) r = (uint64_t)(int64_t)pcc_fxp_log2((uint32_t)v[0]);
        else if (strcmp(f, "pow2") == 0) r = (uint64_t)(int64_t)pcc_fxp_pow2((int32_t)(uint32_t)v[0]);
        else if (strcmp(f, "fls") == 0) r = pcc_fls((uint32_t)v[0]);
        else if (strcmp(f, "isqrt") == 0) r = pcc_isqrt64(v[0]);
        else return 2;
        fwrite(&r, 8, 1, stdout);
    }
    return 0;
}
