"""The firmware engineer's view at the top of ``report.md``: verdicts, worst-case time, memory.

``report.md`` is otherwise written for the ML side (distillation, closed-loop tables). These
rows come from the verification the compile just ran (the same result as ``verify.json``), so
they are measured on the compiled C, never estimated; without verification the section says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rlcc.verify.check import VerifyResult

TITLE = "## Firmware at a glance"
NOT_VERIFIED = "not verified (--no-verify): run `rlcc-verify` on the C for cycles, sizes and bit-exactness"


def table(rows: Sequence[tuple[str, Any]]) -> list[str]:
    return ["| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows]


def clock(profile: str, target: str, clock_hz: float) -> str:
    return f"{target}, profile {profile} @ {clock_hz / 1e9:.2f} GHz"


def _bit_exact(bit_exact: bool, vectors: int, mismatches: int) -> str:
    return f"yes, on {vectors:,} vectors" if bit_exact else f"NO: {mismatches} of {vectors:,} vectors differ"


def _profiles(first: str) -> list[str]:
    """The verified profile, then the other shipped ones worth comparing."""
    return [first] + [p for p in ("dpa", "generic5", "ibex") if p != first]


def digest(v: Any) -> list[tuple[str, Any]]:
    """The manifest's sha256, the value a pipeline pins with ``rlcc-verify --expect-sha256``."""
    if v.provenance is None:
        return []
    return [("firmware digest (sha256 of the manifest; `rlcc-verify --expect-sha256`)", f"`{v.provenance.firmware_digest}`")]


def _plot(plot: tuple[str, str] | None) -> list[str]:
    if plot is None:
        return []
    name, caption = plot
    return ["", f"![teacher vs firmware in closed loop]({name})", "", f"[`{name}`]({name}): {caption}."]


def nic_section(v: VerifyResult | None, gate: str, profiles: Sequence[dict[str, Any]] = (),
                plot: tuple[str, str] | None = None) -> list[str]:
    """Rows for a PCC (NIC) firmware: ``gate`` is the fidelity verdict in words; ``profiles``:
    extra ``{profile, target, rtt_cycles_max, worst_case_ns}`` measurements (int8 backend);
    ``plot``: (file name, caption) of the closed-loop figure."""
    rows: list[tuple[str, Any]] = [("fidelity gate (closed loop vs teacher)", gate)]
    if v is None:
        rows.append(("firmware", NOT_VERIFIED))
    else:
        b = v.budget
        rows += [
            ("bit-exact vs the golden model", _bit_exact(v.bit_exact, v.vectors, v.mismatches)),
            (f"worst-case event, {clock(v.profile, v.target, v.clock_hz)}",
             f"{int(v.cycles['max'])} cycles = {v.worst_case_ns:.1f} ns; budget {b.cycles} cycles ({b.ns:.0f} ns): "
             + (f"OK, headroom {100 * v.to_dict()['budget']['headroom']:.0f}%" if v.within_budget else "EXCEEDED")),
            ("RTT decision (the policy's event), max / mean cycles", f"{int(v.rtt_cycles['max'])} / {v.rtt_cycles['mean']:.1f}"),
        ]
        rows += [(f"worst-case RTT decision, {p['target']}, profile {p['profile']}",
                  f"{p['rtt_cycles_max']} cycles = {p['worst_case_ns']:.1f} ns")
                 for p in profiles if (p["profile"], p["target"]) != (v.profile, v.target)]
        rows += [
            ("code / read-only data / data", f"{v.size['code']} / {v.size['rodata']} / {v.size['data']} B"),
            ("per-flow context", f"{v.context_bytes} of 48 B"),
        ]
        if v.stack.get("high_water_bytes") is not None:
            rows.append(("stack (high-water mark)", f"{v.stack['high_water_bytes']} of {v.stack['size_bytes']} B"))
        rows += digest(v)
    note = ("From the compile's verification in the RISC-V emulator (`verify.json`); other cycle profiles: "
            f"`rlcc-verify {v.firmware} --profile {','.join(_profiles(v.profile))}`.") if v is not None else ""
    return ["", TITLE, ""] + table(rows) + ([] if not note else ["", note]) + _plot(plot)
