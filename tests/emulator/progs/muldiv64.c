#include <stdint.h>
volatile uint64_t out[6];
int main(void) {
    uint64_t s = 0x9E3779B97F4A7C15ull, acc_m = 0, acc_d = 0, acc_r = 0;
    int64_t acc_s = 0;
    for (int i = 0; i < 400; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t a = s, b = (s >> (i % 61)) | 1u;
        int64_t sa = (int64_t)a, sb = (int64_t)(b >> (i % 5)) * ((i & 1) ? -1 : 1);
        acc_m += a * b;
        acc_d ^= a / b;
        acc_r += a % b;
        if (sb != 0) acc_s += sa / sb + sa % sb;
#ifdef __SIZEOF_INT128__
        acc_m ^= (uint64_t)(((unsigned __int128)a * b) >> 64) >> 1;
#else
        acc_m ^= (uint64_t)((uint32_t)(a >> 32) * (uint64_t)(uint32_t)(b >> 32)) >> 1;
#endif
    }
    out[0] = acc_m; out[1] = acc_d; out[2] = acc_r; out[3] = (uint64_t)acc_s;
    out[4] = (uint64_t)(INT64_MIN / -1 == INT64_MIN); out[5] = s;
    return (int)(acc_m & 0x3f);
}
