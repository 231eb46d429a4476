// ibex_tb_top.sv - Ibex (ibex_top, default "small" 2-stage configuration: RV32IMC, fast
// multi-cycle multiplier, no branch target ALU, no writeback stage, no icache) with its
// instruction and data OBI ports as plain signals, so the C++ testbench (tb_ibex.cpp) can be
// the memory. Boot address 0x0000ff00: Ibex fetches its first instruction at boot_addr + 0x80,
// where the testbench answers with a jump to rlcc's _start at 0x10000.
module ibex_tb_top (
  `include "obi_ports.svh"
  ,
  output logic [159:0] crash_dump_o, // ibex_pkg::crash_dump_t: current/next pc, last data address, exception pc and mtval
  output logic        rvfi_valid,   // built with +define+RVFI: one pulse per retired instruction
  output logic [31:0] rvfi_pc_rdata
);
  ibex_top #(
    .RV32M(ibex_pkg::RV32MFast),
    .RV32B(ibex_pkg::RV32BNone),
    .RegFile(ibex_pkg::RegFileFF),
    .BranchTargetALU(1'b0),
    .WritebackStage(1'b0),
    .ICache(1'b0),
    .BranchPredictor(1'b0),
    .SecureIbex(1'b0)
  ) u_core (
    .clk_i, .rst_ni,
    .test_en_i(1'b0),
    .ram_cfg_i('0),
    .hart_id_i(32'h0),
    .boot_addr_i(32'h0000ff00),
    .instr_req_o, .instr_gnt_i, .instr_rvalid_i, .instr_addr_o, .instr_rdata_i,
    .instr_rdata_intg_i(7'h0),
    .instr_err_i(1'b0),
    .data_req_o, .data_gnt_i, .data_rvalid_i, .data_we_o, .data_be_o, .data_addr_o, .data_wdata_o,
    .data_wdata_intg_o(),
    .data_rdata_i,
    .data_rdata_intg_i(7'h0),
    .data_err_i(1'b0),
    .irq_software_i(1'b0), .irq_timer_i(1'b0), .irq_external_i(1'b0), .irq_fast_i(15'h0), .irq_nm_i(1'b0),
    .scramble_key_valid_i(1'b0), .scramble_key_i('0), .scramble_nonce_i('0), .scramble_req_o(),
    .debug_req_i(1'b0),
    .crash_dump_o,
    .double_fault_seen_o(),
    .fetch_enable_i(ibex_pkg::IbexMuBiOn),
    .alert_minor_o(), .alert_major_internal_o(), .alert_major_bus_o(),
    .core_sleep_o(),
    .scan_rst_ni(1'b1),
    .rvfi_valid, .rvfi_pc_rdata,
    .rvfi_order(), .rvfi_insn(), .rvfi_trap(), .rvfi_halt(), .rvfi_intr(), .rvfi_mode(), .rvfi_ixl(),
    .rvfi_rs1_addr(), .rvfi_rs2_addr(), .rvfi_rs3_addr(), .rvfi_rs1_rdata(), .rvfi_rs2_rdata(), .rvfi_rs3_rdata(),
    .rvfi_rd_addr(), .rvfi_rd_wdata(), .rvfi_pc_wdata(), .rvfi_mem_addr(), .rvfi_mem_rmask(), .rvfi_mem_wmask(),
    .rvfi_mem_rdata(), .rvfi_mem_wdata(), .rvfi_ext_mip(), .rvfi_ext_nmi(), .rvfi_ext_nmi_int(), .rvfi_ext_debug_req(),
    .rvfi_ext_debug_mode(), .rvfi_ext_rf_wr_suppress(), .rvfi_ext_mcycle(), .rvfi_ext_mhpmcounters(),
    .rvfi_ext_mhpmcountersh(), .rvfi_ext_ic_scr_key_valid(), .rvfi_ext_irq_valid()
  );
endmodule
