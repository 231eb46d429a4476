/*
 * doca_pcc_dev_stub.h - rlcc's stand-in for the DOCA PCC library side (doca_pcc_dev_stub.c): what
 * the harness adapter (harness_doca.c) needs beyond the public API. Not part of DOCA.
 */
#ifndef RLCC_DOCA_PCC_DEV_STUB_H
#define RLCC_DOCA_PCC_DEV_STUB_H

#include "doca_pcc_dev_algo_access.h"

/* A host parameter write as the library handles a PPCC command: each value within the registered
 * [min, max] of its parameter and the parameter writable, else FAIL without calling the user; then
 * doca_pcc_dev_user_set_algo_params with the slot's current parameter array. */
doca_pcc_dev_error_t rlcc_doca_stub_set_params(uint32_t port_num, uint32_t algo_slot, uint32_t param_id_base,
                                               uint32_t param_num, const uint32_t *new_param_values, uint32_t *params);

#endif /* RLCC_DOCA_PCC_DEV_STUB_H */
