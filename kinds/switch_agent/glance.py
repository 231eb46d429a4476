"""The firmware engineer's rows at the top of a switch agent's ``report.md`` (``rlcc.verify.glance``'s
layout: one decision per queue, a monitoring interval over ports)."""

from __future__ import annotations

from typing import Any

from rlcc.kinds.switch_agent.check import SwitchVerifyResult
from rlcc.verify.glance import NOT_VERIFIED, TITLE, clock, digest, table


def switch_section(v: SwitchVerifyResult | None, gate: str) -> list[str]:
    """Rows for a switch-agent firmware (one decision per queue, a monitoring interval over ports)."""
    rows: list[tuple[str, Any]] = [("fidelity gate (closed loop vs teacher)", gate)]
    if v is None:
        rows.append(("firmware", NOT_VERIFIED))
    else:
        rows += [
            ("bit-exact vs the golden model",
             f"yes, on {v.vectors:,} decisions and {v.intervals} intervals x {v.n_ports} ports" if v.bit_exact else
             f"NO: {v.mismatches} decisions and {v.interval_mismatches} intervals differ"),
            (f"worst-case decision (one queue), {clock(v.profile, v.target, v.clock_hz)}",
             f"{int(v.decision_cycles['max'])} cycles = {v.decision_cycles['max'] * 1e9 / v.clock_hz:.1f} ns"),
            (f"worst-case monitoring interval, {v.n_ports} ports",
             f"{int(v.interval_cycles['max'])} cycles = {v.interval_us:.2f} us; budget {v.budget_us:g} us: "
             + ("OK" if v.within_budget else "EXCEEDED")),
            ("code / read-only data / data", f"{v.size['code']} / {v.size['rodata']} / {v.size['data']} B"),
        ] + digest(v)
    note = "From the compile's verification in the RISC-V emulator (`verify.json`)." if v is not None else ""
    return ["", TITLE, ""] + table(rows) + ([] if not note else ["", note])
