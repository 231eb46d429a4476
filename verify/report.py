"""Write verification results for people (a summary) and for CI systems (JSON, JUnit XML)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from rlcc.emulator.cycle_model import Profile
from rlcc.verify.check import VerifyResult


def summary(r: VerifyResult) -> str:
    """A short human-readable summary (a few lines)."""
    d = r.to_dict()
    b = d["budget"]
    lines = [
        f"target {r.target}, profile {r.profile} @ {r.clock_hz / 1e9:.2f} GHz"
        + (f", DOCA layout {r.doca_layout}" if r.doca_layout is not None else ""),
        f"vectors {r.vectors}: {'bit-exact' if r.bit_exact else f'{r.mismatches} MISMATCHES'}"
        + ("" if r.disable_mask_ok else " (event mask differs from manifest)"),
        f"cycles/event min {r.cycles['min']} mean {r.cycles['mean']:.1f} max {r.cycles['max']}"
        f" (RTT decisions: mean {r.rtt_cycles['mean']:.1f} max {r.rtt_cycles['max']})",
        f"worst case {r.worst_case['cycles']} cycles = {b['worst_case_ns']:.1f} ns"
        f"{' under full hw-thread load' if b['full_load'] else ''}; budget {b['cycles']} cycles"
        f" ({b['ns']:.0f} ns): {'OK' if b['within'] else 'EXCEEDED'}"
        + (f", headroom {100 * b['headroom']:.0f}%" if b["headroom"] is not None else ""),
        f"size: code {r.size['code']} B, read-only data {r.size['rodata']} B, data {r.size['data']} B;"
        f" per-flow context {r.context_bytes} of 48 B",
    ]
    stack = d.get("stack")  # {"high_water_bytes", "size_bytes"} from HarnessRunner, when check.py provides it
    if stack and stack.get("high_water_bytes") is not None and stack.get("size_bytes"):
        hw, size = stack["high_water_bytes"], stack["size_bytes"]
        lines.append(f"stack: {hw} of {size} B used ({100 * hw / size:.0f}%)")
    cov = d.get("coverage") or {}
    if cov.get("note"):
        lines.append(f"coverage: {cov['note']}")
    elif cov:
        parts = [f"{k} {cov[k]['observable']}/{cov[k]['targets']}" for k in ("splits", "leaves", "other") if k in cov]
        lines.append(f"observable coverage of one-datum mutants: {', '.join(parts)}"
                     + (f"; missed: {', '.join(cov['missed'][:6])}" if cov.get("missed") else ""))
    if d.get("mutants"):
        lines.append(f"mutants: {d['mutants'].get('summary') or _mutant_line(d['mutants'])}")
    if d.get("proof"):
        for part in d["proof"]["parts"]:
            lines.append(f"proof {part['part']}: {part['status']} ({part['seconds']:.1f} s) - {part['detail']}")
    lines.append(f"assurance: {r.assurance}")
    if r.provenance is not None:
        lines.append(f"provenance: {r.provenance.statement}")
    for ex in d["mismatch_examples"]:
        lines.append(f"mismatch #{ex['index']} ({ex['event_type']}): {mismatch_fields(ex['expected'], ex['got'])}")
    return "\n".join(lines)


def _mutant_line(m: dict[str, Any]) -> str:
    rate = m.get("kill_rate")
    return (f"{m['mutants']} built, {m['killed']} killed, {m['equivalent']} equivalent, {m['survived']} survived"
            + (f" (kill rate {100 * rate:.1f}%)" if rate is not None else "") + f", {m['wall_s']:.0f} s")


def mismatch_fields(expected: dict[str, Any], got: dict[str, Any], limit: int = 4) -> str:
    """Only the outputs that differ, e.g. "ctx[5] expected 0x1f40 got 0x1f41" (context words in hex)."""
    diffs = [f"{k} expected {expected[k]} got {got[k]}" for k in ("rate", "rtt_req") if expected[k] != got[k]]
    diffs += [
        f"ctx[{i}] expected {a:#x} got {b:#x}"
        for i, (a, b) in enumerate(zip(expected["ctx_out"], got["ctx_out"]))
        if a != b
    ]
    if not diffs:
        return "outputs equal (the example was recorded for another difference)"
    more = len(diffs) - limit
    return "; ".join(diffs[:limit]) + (f"; and {more} more" if more > 0 else "")


def validation_status(profile: Profile) -> str:
    """The first clause of the profile's ``validation`` text ('validated against RTL' or 'not
    validated against RTL'); the rest says how."""
    return _status(profile.validation)


def _status(text: str) -> str:
    return text.split(":", 1)[0].split(" (", 1)[0].strip()


def profile_line(profile: Profile) -> str:
    """The cycle profile and how far its numbers can be trusted; the details are in its file."""
    where = f" (see 'validation' in {profile.path.name})" if profile.path is not None else ""
    return f"cycle model: profile {profile.name}, {validation_status(profile)}{where}"


def spread_lines(r: VerifyResult, primary: Profile, spread: list[dict[str, Any]]) -> list[str]:
    """One line per extra profile: the worst case in cycles and ns, beside the gating profile's."""
    if not spread:
        return []
    ns = r.worst_case["cycles"] * 1e9 / primary.clock_hz
    lines = [f"worst case under other profiles (gating: {primary.name} {r.worst_case['cycles']} cycles = {ns:.1f} ns):"]
    for s in spread:
        status = _status(s["validation"])
        lines.append(f"  {s['profile']} ({s['target']} @ {s['clock_hz'] / 1e9:.2f} GHz, {status}):"
                     f" {s['worst_case_cycles']} cycles = {s['worst_case_ns']:.1f} ns")
    return lines


def write_json(r: VerifyResult, path: Path, profile: Profile | None = None, spread: list[dict[str, Any]] | None = None) -> None:
    """The ``rlcc.verify/1`` document; with extra profiles (``--profile a,b``) also ``profile_spread``
    and ``profile_validation`` (left out otherwise, so the default document is unchanged)."""
    d = r.to_dict()
    if spread:
        d["profile_spread"] = spread
        d["profile_validation"] = profile.validation if profile is not None else None
    Path(path).write_text(json.dumps(d, indent=2, sort_keys=True) + "\n")


def write_junit(r: VerifyResult, path: Path) -> None:
    """Three test cases, ``bit_exact``, ``decision_budget`` and ``provenance``, in one suite."""
    d = r.to_dict()
    suite = ET.Element(
        "testsuite",
        name=f"rlcc-verify {Path(r.firmware).name} {r.target}",
        tests="3",
        failures=str(int(not r.bit_exact) + int(not r.within_budget) + int(not r.anchored)),
        errors="0",
    )
    case = ET.SubElement(suite, "testcase", classname="rlcc.verify", name="bit_exact")
    if not r.bit_exact:
        ET.SubElement(case, "failure", message=f"{r.mismatches} of {r.vectors} vectors differ from the golden model").text = (
            json.dumps(d["mismatch_examples"], indent=1)
        )
    case = ET.SubElement(suite, "testcase", classname="rlcc.verify", name="decision_budget")
    if not r.within_budget:
        ET.SubElement(
            case, "failure", message=f"worst case {r.cycles['max']} cycles > budget {r.budget.cycles}"
        ).text = json.dumps(d["worst_case"], indent=1)
    case = ET.SubElement(suite, "testcase", classname="rlcc.verify", name="provenance")
    if not r.anchored:
        ET.SubElement(case, "failure", message=r.provenance.statement)
    ET.ElementTree(suite).write(path, encoding="utf-8", xml_declaration=True)
