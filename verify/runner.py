"""Run harness records through firmware in rlcc's RISC-V emulator, in capacity-sized batches."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from rlcc.emulator import Machine
from rlcc.emulator.cycle_model import Profile
from rlcc.errors import EmulationError
from rlcc.firmware_sdk_stub import harness_layout as hl
from rlcc.fxp.vectors import Vectors

# A record (one user_algo call, or the start-up before the first) that runs this many
# instructions without finishing is a runaway (exit 7). Anything that finishes below it is
# measured, so slow firmware shows up as a budget failure with its real cycle count.
RUNAWAY_INSTRUCTIONS_PER_RECORD = 10_000_000
# Progress (the output table's record count) is checked between slices of this many instructions.
_SLICE_INSTRUCTIONS = RUNAWAY_INSTRUCTIONS_PER_RECORD // 4
_OUT_COUNT_OFFSET = hl.OUT_HEADER_DTYPE.fields["count"][1]


def records_from_vectors(v: Vectors) -> np.ndarray:
    """Harness input records (IN_RECORD_DTYPE) for test vectors' (ctx_in, event, attr)."""
    recs = hl.new_records(len(v))
    recs["ctx_in"], recs["event"], recs["attr"] = v.ctx_in, v.event, v.attr
    return recs


class HarnessRunner:
    """Loads a harness ELF once and replays batches of input records through it.

    After :meth:`run`, ``stack_high_water_bytes`` is the deepest stack use of any record (bytes
    below ``__stack_top`` reached by sp at a memory access) and ``stack_size_bytes`` the linker's
    stack size; both are None for an ELF without the SDK's stack symbols.
    """

    def __init__(self, elf: Path, xlen: int, profile: str | Profile, zbb: bool | None = None) -> None:
        self._args = (elf, xlen, profile, zbb)
        self._helpers: list[HarnessRunner] = []  # one per extra thread of run(threads=...)
        self.machine = Machine(xlen=xlen, profile=profile, zbb=zbb)
        loaded = self.machine.load_elf(elf)
        self.entry = loaded.entry
        symbols = hl.table_symbols(elf)
        self.in_addr, in_size = symbols[hl.SYM_IN]
        self.out_addr, _ = symbols[hl.SYM_OUT]
        self.halt_addr, _ = symbols[hl.SYM_HALT]
        self.capacity = hl.capacity_from_in_symbol_size(in_size)
        bounds = self.machine.stack_bounds
        self.stack_size_bytes: int | None = None if bounds is None else bounds[1] - bounds[0]
        self.stack_high_water_bytes: int | None = None
        self._image = self.machine.read_mem(self.machine.mem_base, self.machine.mem_size)

    def run(self, records: np.ndarray, threads: int = 1) -> np.ndarray:
        """Output records (OUT_RECORD_DTYPE) for input records (IN_RECORD_DTYPE), in order.

        Each batch starts from the pristine loaded image, so batches are independent; records
        chained with REC_CHAIN_CTX must not straddle batches (callers keep them whole).
        ``threads`` > 1 runs contiguous runs of batches on that many emulators at once (the core
        releases the GIL); the outputs, and the error raised, are the same as with one.
        Raises EmulationError on a guest fault (including stack overflow), a runaway record, or
        a stray ecall/ebreak.
        """
        starts = list(range(0, len(records), self.capacity))
        groups = max(1, min(threads, len(starts)))
        while len(self._helpers) < groups - 1:
            self._helpers.append(HarnessRunner(*self._args))
        runners = [self, *self._helpers[: groups - 1]]
        share = -(-len(starts) // groups)
        work = [(r, starts[i * share:(i + 1) * share]) for i, r in enumerate(runners)]
        if groups == 1:
            results = [self._run_batches(records, work[0][1])]
        else:
            with ThreadPoolExecutor(groups) as pool:
                results = list(pool.map(lambda job: job[0]._run_batches(records, job[1]), work))
        for _, error in results:  # the first failing batch's error, as a sequential run raises it
            if error is not None:
                raise error
        highs = [r.stack_high_water_bytes for r in runners if r.stack_high_water_bytes is not None]
        self.stack_high_water_bytes = max(highs) if highs else None
        outs = [o for group, _ in results for o in group]
        return np.concatenate(outs) if outs else np.zeros(0, dtype=hl.OUT_RECORD_DTYPE)

    def _run_batches(self, records: np.ndarray, starts: list[int]) -> tuple[list[np.ndarray], EmulationError | None]:
        """Output tables of the batches starting at ``starts``, up to the first that fails, and its error."""
        outs = []
        self.stack_high_water_bytes = None
        m = self.machine
        for start in starts:
            batch = records[start : start + self.capacity]
            m.write_mem(m.mem_base, self._image)
            m.write_mem(self.in_addr, hl.pack_input(batch))
            m.pc = self.entry
            m.set_reg(2, m.stack_top)
            try:
                self._run_batch(start)
            except EmulationError as e:
                return outs, e
            raw = m.read_mem(self.out_addr, hl.output_nbytes(len(batch)))
            table = hl.unpack_output(raw)
            if len(table.records) != len(batch):
                return outs, EmulationError(f"harness processed {len(table.records)} of {len(batch)} records")
            outs.append(table.records.copy())
        return outs, None

    def _records_done(self) -> int:
        return self.machine.read_u32(self.out_addr + _OUT_COUNT_OFFSET)

    def _run_batch(self, start: int) -> None:
        """Run one batch to the harness's final ebreak, in slices, watching per-record progress."""
        m = self.machine
        done, idle = self._records_done(), 0
        while True:
            r = m.run(max_instructions=_SLICE_INSTRUCTIONS, limit_ok=True)
            if r.stack_high_water_bytes is not None:
                self.stack_high_water_bytes = max(self.stack_high_water_bytes or 0, r.stack_high_water_bytes)
            if r.halt_reason != "limit":
                break
            now = self._records_done()
            if now != done:
                done, idle = now, 0
                continue
            idle += r.instret
            if idle >= RUNAWAY_INSTRUCTIONS_PER_RECORD:
                raise EmulationError(
                    f"instruction limit: record {start + done} ran {idle} instructions without finishing"
                    f" (runaway limit {RUNAWAY_INSTRUCTIONS_PER_RECORD} per record), now at pc {m.pc:#x}"
                    f"{self._where(m.pc)}"
                )
        if r.halt_reason == "ebreak" and r.halt_pc == self.halt_addr:
            return
        pc = r.halt_pc if r.halt_pc is not None else r.pc
        done = self._records_done()  # the record it stopped in (the count was last read at a slice's end)
        raise EmulationError(
            f"firmware executed {r.halt_reason} at pc {pc:#x}{self._where(pc)} during record {start + done}"
            " (only the harness's final ebreak may stop the program)"
        )

    def _where(self, pc: int) -> str:
        name = self.machine.symbolize(pc)
        return f" in {name}" if name else ""
