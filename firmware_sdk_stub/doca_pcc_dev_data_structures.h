/*
 * doca_pcc_dev_data_structures.h - rlcc's contract header: picks the DOCA PCC device data layout.
 *
 * DOCA 3.x picks its per-device data-structure header by the DPA generation it compiles for
 * (__NV_DPA: BlueField-3, ConnectX-8, ...); DOCA 2.5 had one layout. rlcc picks by RLCC_DOCA_LAYOUT,
 * which rlcc-verify --doca-layout sets from rlcc.firmware_sdk_stub.doca_layout (the one table of the
 * layouts' sizes and offsets; tests/sdk/test_doca_layouts.py checks these headers against it).
 * Without RLCC_DOCA_LAYOUT: the DOCA 2.5 layout. Every layout defines the documented type names
 * (doca_pcc_dev_event_t, doca_pcc_dev_results_t, ...) and field names the accessors of
 * doca_pcc_dev_event.h read; code that reads the event only through them builds against each.
 */
#ifndef DOCA_PCC_DEV_DATA_STRUCTURES_H_
#define DOCA_PCC_DEV_DATA_STRUCTURES_H_

#define RLCC_DOCA_LAYOUT_2_5 1
#define RLCC_DOCA_LAYOUT_BF3 2
#define RLCC_DOCA_LAYOUT_CX8 3

#ifndef RLCC_DOCA_LAYOUT
#define RLCC_DOCA_LAYOUT RLCC_DOCA_LAYOUT_2_5
#endif

#if RLCC_DOCA_LAYOUT == RLCC_DOCA_LAYOUT_2_5
#include "doca_pcc_dev_layout_2_5.h"
#elif RLCC_DOCA_LAYOUT == RLCC_DOCA_LAYOUT_BF3
#include "doca_pcc_dev_layout_bf3.h"
#elif RLCC_DOCA_LAYOUT == RLCC_DOCA_LAYOUT_CX8
#include "doca_pcc_dev_layout_cx8.h"
#else
#error "RLCC_DOCA_LAYOUT must be RLCC_DOCA_LAYOUT_2_5, RLCC_DOCA_LAYOUT_BF3 or RLCC_DOCA_LAYOUT_CX8"
#endif

#endif /* DOCA_PCC_DEV_DATA_STRUCTURES_H_ */
