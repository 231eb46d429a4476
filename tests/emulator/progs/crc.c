#include <stdint.h>
volatile uint32_t result_crc;
static uint8_t buf[4096];
uint32_t crc32(const uint8_t *p, uint32_t n) {
    uint32_t c = 0xffffffffu;
    for (uint32_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0xedb88320u & -(c & 1));
    }
    return ~c;
}
int main(void) {
    uint32_t s = 12345;
    for (uint32_t i = 0; i < sizeof buf; i++) { s = s * 1103515245u + 12345u; buf[i] = (uint8_t)(s >> 16); }
    uint32_t c = 0;
    for (int r = 0; r < 4; r++) c = c * 31u + crc32(buf + r * 7, sizeof buf - (uint32_t)r * 7);
    result_crc = c;
    return (int)(c & 0x7f);
}
