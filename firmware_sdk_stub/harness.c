/*
 * harness.c - bare-metal (rv32imc / rv64imac) harness: the input and output tables live at
 * the linker symbols rlcc_harness_in / rlcc_harness_out. A runner (emulator) writes the input
 * table into memory before starting at _start, and reads the output table when the program
 * reaches the ebreak at _rlcc_halt (crt0.S). rlcc_harness_in sits in the NOLOAD section
 * .rlcc_in, which crt0 does not clear; rlcc_harness_out is ordinary .bss.
 * rlcc_harness_capacity holds RLCC_HARNESS_MAX_RECORDS (also readable from the symbol sizes).
 */
#include "pcc_harness.h"

typedef struct rlcc_harness_in_table {
    rlcc_in_prefix_t prefix;
    rlcc_in_record_t rec[RLCC_HARNESS_MAX_RECORDS];
} rlcc_harness_in_table_t;

typedef struct rlcc_harness_out_table {
    rlcc_out_header_t hdr;
    rlcc_out_record_t rec[RLCC_HARNESS_MAX_RECORDS];
} rlcc_harness_out_table_t;

__attribute__((section(".rlcc_in"), used, aligned(8))) rlcc_harness_in_table_t rlcc_harness_in;
__attribute__((used, aligned(8))) rlcc_harness_out_table_t rlcc_harness_out;
__attribute__((section(".rodata.rlcc_harness_capacity"), used)) const uint32_t rlcc_harness_capacity = RLCC_HARNESS_MAX_RECORDS;

void rlcc_main(void);

void rlcc_main(void)
{
    rlcc_harness_run(&rlcc_harness_in.prefix, rlcc_harness_in.rec, RLCC_HARNESS_MAX_RECORDS,
                     &rlcc_harness_out.hdr, rlcc_harness_out.rec);
}
