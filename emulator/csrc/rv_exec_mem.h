/* Handlers of the loads and stores, the memory ops of RV_FWD_OPS (see rv_exec_ops.h): included
 * with each operand source, and again, with threaded dispatch, with SP_SAMPLE() empty for the
 * accesses whose sp the block builder knows was already sampled. No include guard, on purpose. */
H(LB) LOAD(int8_t, 1);
H(LH) LOAD(int16_t, 2);
H(LW) LOAD(int32_t, 4);
H(LBU) LOADU(uint8_t, 1);
H(LHU) LOADU(uint16_t, 2);
H(SB) STORE(uint8_t, 1);
H(SH) STORE(uint16_t, 2);
H(SW) STORE(uint32_t, 4);
#if XLEN == 64
H(LD) LOAD(int64_t, 8);
H(LWU) LOADU(uint32_t, 4);
H(SD) STORE(uint64_t, 8);
#endif
