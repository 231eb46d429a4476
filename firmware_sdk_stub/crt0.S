/*
 * crt0.S - bare-metal start for the rlcc SDK stub (rv32 and rv64).
 * Sets sp to __stack_top, clears .bss (word by word, __bss_start/__bss_end are 8-aligned),
 * calls rlcc_main (harness.c) and stops with ebreak at _rlcc_halt.
 * .data needs no copy: the loader places every PT_LOAD segment in RAM.
 */
    .section .text.start, "ax", @progbits
    .globl _start
    .type _start, @function
_start:
    la      sp, __stack_top
    andi    sp, sp, -16
    la      t0, __bss_start
    la      t1, __bss_end
1:
    bgeu    t0, t1, 2f
    sw      zero, 0(t0)
    addi    t0, t0, 4
    j       1b
2:
    call    rlcc_main
    .globl _rlcc_halt
    .type _rlcc_halt, @function
_rlcc_halt:
    ebreak
    j       _rlcc_halt
    .size _start, . - _start
