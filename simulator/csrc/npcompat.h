/* What the simulator's C loops share with numpy: the buffer formats they accept and numpy's own
 * rounding and clipping, so that their results are bit-identical to the Python loops'. */
#ifndef RLCC_NPCOMPAT_H
#define RLCC_NPCOMPAT_H

#include <Python.h>
#include <math.h>
#include <string.h>

/* A buffer of element type ``want``: 'd' float64, 'f' float32, '?' bool, else int64. */
static int check_format(const Py_buffer *b, char want) {
    const char *f = b->format ? b->format : "B";
    if (*f == '<' || *f == '=' || *f == '@') f++;
    switch (want) {
    case 'd': return strcmp(f, "d") == 0 && b->itemsize == 8;
    case 'f': return strcmp(f, "f") == 0 && b->itemsize == 4;
    case '?': return strcmp(f, "?") == 0 && b->itemsize == 1;
    default: return (strcmp(f, "l") == 0 || strcmp(f, "q") == 0) && b->itemsize == 8;
    }
}

/* np.rint (round half to even) without libm's nearbyint, a call per element on x86-64 without
 * SSE4.1: adding and removing 2^52 rounds in the default rounding mode (|x| >= 2^52 is whole). */
static inline double rint_even(double x) {
    const double big = 4503599627370496.0; /* 2^52 */
    if (!(fabs(x) < big)) return x;
    return x >= 0 ? (x + big) - big : (x - big) + big;
}

static inline double clip(double x, double lo, double hi) { /* np.clip: max, then min */
    x = x < lo ? lo : x;
    return x > hi ? hi : x;
}

#endif /* RLCC_NPCOMPAT_H */
