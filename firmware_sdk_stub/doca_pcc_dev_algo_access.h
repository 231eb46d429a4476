/*
 * doca_pcc_dev_algo_access.h - rlcc's contract header for DOCA PCC algorithm registration and
 * parameter/counter access (subset).
 *
 * Names, signatures and semantics follow the public DOCA 2.5 header doca_pcc_dev_algo_access.h
 * ([H] in doca_pcc_dev.h). An algorithm has an index (algo_idx, 0 .. DOCA_PCC_DEV_MAX_NUM_ALGOS - 1)
 * and is mapped per port to a slot (algo_slot, the PPCC command's "algo_slot"); parameters and
 * counters are per port and slot, their defaults and limits per algorithm. rlcc's implementation
 * of these library functions is doca_pcc_dev_stub.c.
 */
#ifndef DOCA_PCC_DEV_ALGO_ACCESS_H_
#define DOCA_PCC_DEV_ALGO_ACCESS_H_

#include "doca_pcc_dev.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Metadata of an algorithm: its id, version and description string [H]. */
struct doca_pcc_dev_algo_meta_data {
    uint32_t algo_id;
    uint32_t algo_major_version;
    uint32_t algo_minor_version;
    uint32_t algo_desc_size; /* bytes of the NUL-terminated description */
    uint64_t algo_desc_addr; /* its address */
};

/* Register algorithm algo_idx: metadata and room for param_num parameters and counter_num counters.
 * Once per algorithm, in doca_pcc_dev_user_init. FAIL if an argument is out of range. */
doca_pcc_dev_error_t doca_pcc_dev_algo_init_metadata(uint32_t algo_idx, const struct doca_pcc_dev_algo_meta_data *user_def,
                                                     uint32_t param_num, uint32_t counter_num);

/* Register parameter param_id of algo_idx: default, max and min (enforced by the set function),
 * permissions (1: the host may update it) and a description string. FAIL if out of range. */
doca_pcc_dev_error_t doca_pcc_dev_algo_init_param(uint32_t algo_idx, uint32_t param_id, uint32_t default_value,
                                                  uint32_t max_value, uint32_t min_value, uint32_t permissions,
                                                  uint32_t param_desc_size, uint64_t param_desc_addr);

/* Register counter counter_id of algo_idx. FAIL if out of range. */
doca_pcc_dev_error_t doca_pcc_dev_algo_init_counter(uint32_t algo_idx, uint32_t counter_id, uint32_t max_value,
                                                    uint32_t permissions, uint32_t counter_desc_size,
                                                    uint64_t counter_desc_addr);

/* Map algo_idx to algo_slot on port portid (after its parameters are registered): allocates the
 * port's parameters, initialized to the registered defaults, and counters; algo_en 1 enables it. */
doca_pcc_dev_error_t doca_pcc_dev_init_algo_slot(uint32_t portid, uint32_t algo_slot, uint32_t algo_idx, uint32_t algo_en);

/* Number of counters / parameters of the algorithm in (port_num, algo_slot). */
uint32_t doca_pcc_dev_get_counters_num(uint32_t port_num, uint32_t algo_slot);
uint32_t doca_pcc_dev_get_algo_params_num(uint32_t port_num, uint32_t algo_slot);

/* The counter / current parameter array of (port_num, algo_slot). */
uint32_t *doca_pcc_dev_get_counters(uint32_t port_num, uint32_t algo_slot);
uint32_t *doca_pcc_dev_get_algo_params(uint32_t port_num, uint32_t algo_slot);

/* The algorithm index mapped to (port_num, algo_slot). */
uint32_t doca_pcc_dev_get_algo_index(uint32_t port_num, uint32_t algo_slot);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_PCC_DEV_ALGO_ACCESS_H_ */
