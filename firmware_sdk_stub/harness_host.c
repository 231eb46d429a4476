/*
 * harness_host.c - hosted (gcc/clang, libc) build of the rlcc harness:
 *
 *     harness_host IN OUT       (IN / OUT may be "-" for stdin / stdout)
 *
 * IN is the binary input table (pcc_harness.h; rlcc.firmware_sdk_stub.harness_layout
 * .pack_input writes it) of any record count (no compile-time capacity); OUT receives the
 * output table of the same count (header + records). cycles/instret are 0 on a host.
 * Exit status: 0 if the table ran (status DONE), 2 on a usage/IO error, 3 on a bad table.
 * Meant for bit-exact comparison with the bare-metal build, also under
 * -fsanitize=address,undefined.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcc_harness.h"

static unsigned char *read_all(FILE *f, size_t *len)
{
    size_t cap = 1u << 16, n = 0;
    unsigned char *buf = malloc(cap);
    if (buf == NULL) {
        return NULL;
    }
    for (;;) {
        size_t got;
        if (n == cap) {
            unsigned char *nb;
            cap *= 2u;
            nb = realloc(buf, cap);
            if (nb == NULL) {
                free(buf);
                return NULL;
            }
            buf = nb;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0u) {
            break;
        }
    }
    if (ferror(f)) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    FILE *fin, *fout;
    unsigned char *raw;
    size_t len = 0, nrec, out_bytes;
    rlcc_in_prefix_t prefix;
    rlcc_in_record_t *recs = NULL;
    rlcc_out_header_t *oh;
    rlcc_out_record_t *orecs;
    unsigned char *obuf;
    int rc = 0;

    if (argc != 3) {
        fprintf(stderr, "usage: %s IN OUT  (\"-\" = stdin/stdout)\n", argv[0]);
        return 2;
    }
    fin = strcmp(argv[1], "-") == 0 ? stdin : fopen(argv[1], "rb");
    if (fin == NULL) {
        perror(argv[1]);
        return 2;
    }
    raw = read_all(fin, &len);
    if (fin != stdin) {
        fclose(fin);
    }
    if (raw == NULL) {
        fprintf(stderr, "harness_host: cannot read input\n");
        return 2;
    }
    if (len < sizeof(prefix)) {
        fprintf(stderr, "harness_host: input shorter than the table header\n");
        free(raw);
        return 3;
    }
    memcpy(&prefix, raw, sizeof(prefix));
    nrec = (len - sizeof(prefix)) / sizeof(rlcc_in_record_t);
    if ((size_t)prefix.hdr.count > nrec) {
        fprintf(stderr, "harness_host: header count %u but only %zu records in input\n",
                (unsigned)prefix.hdr.count, nrec);
        free(raw);
        return 3;
    }
    nrec = prefix.hdr.count;
    /* aligned copy of the records (raw + 1168 is 8-aligned anyway, but do not rely on it) */
    recs = malloc(nrec ? nrec * sizeof(rlcc_in_record_t) : 1u);
    out_bytes = sizeof(rlcc_out_header_t) + nrec * sizeof(rlcc_out_record_t);
    obuf = calloc(1, out_bytes);
    if (recs == NULL || obuf == NULL) {
        fprintf(stderr, "harness_host: out of memory\n");
        free(raw);
        free(recs);
        free(obuf);
        return 2;
    }
    if (nrec) {
        memcpy(recs, raw + sizeof(prefix), nrec * sizeof(rlcc_in_record_t));
    }
    free(raw);
    oh = (rlcc_out_header_t *)(void *)obuf;
    orecs = (rlcc_out_record_t *)(void *)(obuf + sizeof(rlcc_out_header_t));

    rlcc_harness_run(&prefix, recs, (uint32_t)nrec, oh, orecs);
    if (oh->status != RLCC_STATUS_DONE) {
        fprintf(stderr, "harness_host: table rejected, status %u\n", (unsigned)oh->status);
        rc = 3;
    }

    fout = strcmp(argv[2], "-") == 0 ? stdout : fopen(argv[2], "wb");
    if (fout == NULL) {
        perror(argv[2]);
        rc = 2;
    } else {
        if (fwrite(obuf, 1, out_bytes, fout) != out_bytes) {
            fprintf(stderr, "harness_host: write failed\n");
            rc = 2;
        }
        if (fout != stdout) {
            if (fclose(fout) != 0) {
                rc = 2;
            }
        } else {
            fflush(stdout);
        }
    }
    free(recs);
    free(obuf);
    return rc;
}
