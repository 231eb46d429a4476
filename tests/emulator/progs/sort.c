#include <stdint.h>
#define N 600
int32_t data[N];
volatile uint32_t out[4];
static void quicksort(int32_t *a, int lo, int hi) {
    while (lo < hi) {
        int32_t p = a[(lo + hi) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (a[i] < p) i++;
            while (a[j] > p) j--;
            if (i <= j) { int32_t t = a[i]; a[i] = a[j]; a[j] = t; i++; j--; }
        }
        if (j - lo < hi - i) { quicksort(a, lo, j); lo = i; } else { quicksort(a, i, hi); hi = j; }
    }
}
int main(void) {
    uint32_t s = 0xC0FFEEu;
    for (int i = 0; i < N; i++) { s ^= s << 13; s ^= s >> 17; s ^= s << 5; data[i] = (int32_t)s >> (i % 7); }
    quicksort(data, 0, N - 1);
    uint32_t ok = 1, h = 2166136261u;
    for (int i = 0; i < N; i++) {
        if (i && data[i - 1] > data[i]) ok = 0;
        h = (h ^ (uint32_t)data[i]) * 16777619u;
    }
    out[0] = ok; out[1] = h; out[2] = (uint32_t)data[0]; out[3] = (uint32_t)data[N - 1];
    return ok ? 0 : 1;
}
