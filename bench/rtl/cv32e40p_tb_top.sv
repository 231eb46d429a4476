// cv32e40p_tb_top.sv - OpenHW CV32E40P (cv32e40p_top: 4-stage RV32IMC, no PULP extensions, no
// FPU) with its instruction and data OBI ports as plain signals for the C++ testbench
// (tb_cv32e40p.cpp). It boots into the testbench's two-instruction boot ROM at 0xff00, which
// enables the counters and jumps to rlcc's _start (0x10000); traps go below it.
module cv32e40p_tb_top (
  `include "obi_ports.svh"
);
  cv32e40p_top #(
    .COREV_PULP(0),
    .COREV_CLUSTER(0),
    .FPU(0),
    .ZFINX(0),
    .NUM_MHPMCOUNTERS(1)
  ) u_core (
    .clk_i, .rst_ni,
    .pulp_clock_en_i(1'b1),
    .scan_cg_en_i(1'b0),
    .boot_addr_i(32'h0000ff00),
    .mtvec_addr_i(32'h0000fd00),
    .dm_halt_addr_i(32'h0000fc00),
    .hart_id_i(32'h0),
    .dm_exception_addr_i(32'h0000fc80),
    .instr_req_o, .instr_gnt_i, .instr_rvalid_i, .instr_addr_o, .instr_rdata_i,
    .data_req_o, .data_gnt_i, .data_rvalid_i, .data_we_o, .data_be_o, .data_addr_o, .data_wdata_o, .data_rdata_i,
    .irq_i(32'h0), .irq_ack_o(), .irq_id_o(),
    .debug_req_i(1'b0), .debug_havereset_o(), .debug_running_o(), .debug_halted_o(),
    .fetch_enable_i(1'b1),
    .core_sleep_o()
  );
endmodule
