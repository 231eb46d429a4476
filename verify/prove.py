"""``rlcc-verify --prove``: equivalence of the compiled event handler with the golden model for all inputs.

The proof is decomposed where the solver cannot go (wide products inside the square root):

1. **handler** — the ``user_algo`` machine code of the harness ELF, symbolically executed
   (``rlcc.verify.symexec``) from the RAM image after ``user_init``, with every context word,
   every event word and the attribute word symbolic, against ``rlcc.fxp.golden.event_core`` on
   z3 bit-vectors. The firmware's out-of-line ``sqrt_rate`` and the golden model's square root
   are the same uninterpreted function, so this part holds whatever that function is. Also
   proven: no fault (every table load aligned and inside its table), no store outside the
   context, results and stack, callee-saved registers and sp restored.
2. **sqrt_rate contract** — the function alone, symbolically: returns, restores sp and the
   callee-saved registers, stores only into its own stack frame, and its result depends on
   its argument only.
3. **sqrt_rate values** — run in the emulator for every rate 0 .. 2^20 (every rate the firmware
   can store: proven in part 4) and compared with exact integer square roots; rates above 2^20,
   which only a corrupted context holds, are sampled.
4. **reachable rates** — from a zeroed or valid context (rate <= 2^20) every event leaves a rate
   in [rate_min, 2^20], so parts 1 + 3 cover every context the firmware itself produces.
5. **signed log** — with derived inputs, the state of the log ratio, ``rlcc_signed_log``
   (slog(d); the ratio is this step's minus the previous step's, kept in the context; abstracted
   in part 1 as one uninterpreted slog), symbolically alone: exact for all 32-bit arguments (the
   log as ``rlcc.derived.slog_int``, within the 21 bits its abstraction gives it).
6. **trees' and ramps' sums** — with ramps, the firmware sums the bias and leaves
   (``<name>_tree_sum``) and the ramps' terms (``<name>_ramp_sum``) out of line, each from a
   pointer to the input array. Part 1 abstracts each as one uninterpreted function of the array's
   words (read from the handler's stack at the call), and the golden model's ensemble sum as the
   32-bit sum of the same two functions of its inputs, so the factor is no longer a bit-level
   match of two differently grouped adder chains. Each sum is proven alone: for all input words,
   with every other byte around the array unknown, it returns the golden partial sum (so it reads
   the array only), stores only below its stack pointer and restores its frame. Both call
   nothing. The ramps' sum computes every ramp inline; each ramp reads one input, so it is proven
   term by term: per input, the firmware's addends on it minus the golden ramp terms on it are
   the same for every value as for zero, and the two sums agree at all-zero inputs (one-input
   proofs instead of one over four inputs, which times out).

The wide products (RTT inflation, delta's penalty, the rate update) are inline: part 1 reads an
RV64 ``mul`` of two 32-bit values, and an RV32 ``mul`` / ``mulhu`` pair, as one opaque product of
the two 32-bit operands, the one the golden model takes, so the solver matches products by their
operands instead of multiplying. It states at each application what is true of the exact product:
commutativity, and ranges (below ``(2^32 - 1) * (2^31 - 1)`` when an operand is below 2^31, since
the golden model reads a product near 2^63 plus the carry as negative; below ``(2^31 - 1) * 2^20``
for an operand below 2^31 times a square root, which keeps delta's penalty in one RV32 word).

A satisfying assignment of part 1 is replayed in the emulator and the numpy golden model;
if the two agree there the model relied on an impossible square root, the true value is added
as a lemma and the solver runs again (counterexample-guided refinement). After two such rounds a
search with the context's rate fixed (its square root one known value, the products exact) looks
for a difference confined to a narrow range of a product, then the products and the square root
are stated exactly at every application.

Where each piece lives: ``prove_image`` (the ELF after start-up, its regions, the calling
convention), ``prove_abstractions`` (the uninterpreted functions and what the solver may assume
of them), ``prove_handler`` (part 1), ``prove_parts`` (parts 2 to 6), ``prove_solver`` (z3 queries
under a deadline); this module loads the NIC harness and runs the parts in order. The
``--prove-timeout`` budget is the handler's (part 1); when it runs out there, the verdict is
"not proven (timeout)" whatever the other parts say, so they are not run.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

from rlcc.codegen.context import SLOG_FUNCTION, SQRT_FUNCTION
from rlcc.emulator.cycle_model import Profile
from rlcc.firmware_sdk_stub import harness_layout as hl
from rlcc.fxp.model import FxModel
from rlcc.fxp.vectors import Vectors
from rlcc.targets import get_target
from rlcc.verify.prove_handler import HANDLER_SYMBOL, prove_handler
from rlcc.verify.prove_image import ElfImage, load_after_start
from rlcc.verify.prove_parts import (SAMPLED_RATES, ProofPart, reachable_rates, slog_part, sqrt_contract,
                                     sqrt_values, sum_parts)

# the DOCA adapter's "event laid out in advance" pointer (harness_doca.c): NULL after init, so the
# handler lays the symbolic event out itself and the proof covers the layout and byte order too
PREPARED_SYMBOL = "rlcc_doca_prepared_for"


@dataclasses.dataclass
class ProofResult:
    status: str  # proven | counterexample | timeout | unsupported | failed
    parts: list[ProofPart]
    seconds: float
    counterexample: Vectors | None = None

    @property
    def assurance(self) -> str:
        """The one-line statement of what was established."""
        if self.status == "proven":
            sampled = next((p for p in self.parts if p.name == "sqrt_rate values"), None)
            tail = f"; {sampled.detail}" if sampled else ""
            return f"proven equivalent for all inputs{tail}"
        if self.status == "counterexample":
            return "NOT equivalent: the solver found an input where firmware and golden model differ"
        bad = [p for p in self.parts if p.status not in ("proven", "exhaustive", "sampled")]
        return f"not proven ({', '.join(f'{p.name}: {p.status}' for p in bad)})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "assurance": self.assurance,
            "seconds": round(self.seconds, 3),
            "parts": [p.to_dict() for p in self.parts],
            "counterexample": None if self.counterexample is None else self.counterexample.to_dict(),
        }



def load_after_init(elf: Path, xlen: int, profile: str | Profile, zbb: bool | None) -> ElfImage:
    """The harness ELF in the emulator after user_init (an empty table), plus its memory map; the
    proof's scratch RAM is in the middle of the (empty) input table."""
    in_addr, in_size = hl.table_symbols(elf)[hl.SYM_IN]
    return load_after_start(elf, xlen, profile, zbb, in_addr, hl.pack_input(hl.new_records(0)),
                            in_addr + in_size // 2 - 256, ("pcc_params", PREPARED_SYMBOL))


def prove_firmware(elf: Path, model: FxModel, target: str, timeout_s: float = 120.0, profile: str | None = None,
                   zbb: bool | None = None, sampled_rates: int = SAMPLED_RATES, seed: int = 0, jobs: int = 2) -> ProofResult:
    """Prove (or refute) that ``elf``'s ``user_algo`` computes ``golden.step`` for all inputs."""
    t0 = time.monotonic()
    t = get_target(target)
    xlen = t.xlen
    img = load_after_init(Path(elf), xlen, profile or t.default_profile, bool(zbb) and t.zbb_capable)
    parts: list[ProofPart] = []
    if SQRT_FUNCTION not in img.symbols or HANDLER_SYMBOL not in img.symbols:
        missing = SQRT_FUNCTION if HANDLER_SYMBOL in img.symbols else HANDLER_SYMBOL
        parts.append(ProofPart("handler", "unsupported", 0.0, f"no out-of-line '{missing}' in the ELF (regenerate the C with this rlcc)"))
        return ProofResult("unsupported", parts, time.monotonic() - t0)
    handler, cex = prove_handler(img, model, xlen, timeout_s, jobs)
    parts.append(handler)
    if handler.status == "counterexample":
        return ProofResult("counterexample", parts, time.monotonic() - t0, cex)
    if handler.status == "timeout":  # the budget is spent and the verdict cannot be "proven" any more
        parts.append(ProofPart("other parts", "timeout", 0.0, "not run: the handler's proof used the whole --prove-timeout budget"))
        return ProofResult("timeout", parts, time.monotonic() - t0)
    parts.append(sqrt_contract(img, xlen))
    parts.append(sqrt_values(img, xlen, sampled_rates, seed))
    if SLOG_FUNCTION in img.symbols:
        parts.append(slog_part(img, xlen))
    parts.extend(sum_parts(img, xlen, model))
    parts.append(reachable_rates(model))
    ok = all(p.status in ("proven", "exhaustive", "sampled") for p in parts)
    failed = [p.status for p in parts if p.status in ("failed", "counterexample")]
    status = "proven" if ok else ("failed" if failed else ("timeout" if any(p.status == "timeout" for p in parts) else "unsupported"))
    return ProofResult(status, parts, time.monotonic() - t0)
