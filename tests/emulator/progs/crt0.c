/* Minimal start-up for emulator test programs: sp is set by the loader (top of RAM),
 * main's return value goes to a0 and the program ends with ecall. */
int main(void);
__attribute__((section(".text.start"), naked, noreturn)) void _start(void) {
    __asm__ volatile(
        ".option push\n.option norelax\nla gp, __global_pointer$\n.option pop\n"
        "call main\n"
        "ecall\n"
        "1: j 1b\n");
}
