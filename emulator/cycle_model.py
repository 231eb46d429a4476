"""Cycle-model profiles: JSON files in emulator/profiles/ are the single source of truth for costs.

A profile gives per-class cycle costs (the C core charges ``costs[class]`` per retired instruction,
``branch_taken`` / ``branch_not_taken`` per branch outcome and ``load_use_stall`` extra cycles when an
instruction reads the destination of the load just before it; optionally ``OPTIONAL_COST_KEYS``,
see ``csrc/rv.h``), the clock, the hardware thread count and the ISA string, and says in ``validation`` whether and how its numbers were checked
against RTL simulation. ``rdtime`` returns ``cycles * timebase_hz // clock_hz``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from rlcc import textio
from rlcc.errors import BadInputError

from . import _rvcore

PROFILE_DIR = Path(__file__).resolve().parent / "profiles"
COST_KEYS: tuple[str, ...] = tuple(_rvcore.COST_KEYS)
# Fetch, hazard and operand effects measured on RTL (bench/bench_cycle_model.py): a profile may omit
# them; they then cost 0 (div_by_zero: div), which is the model the older profiles were written for.
OPTIONAL_COST_KEYS: tuple[str, ...] = ("mulh_extra", "jalr_extra", "jalr_dep_stall", "jalr_dep_link_extra",
                                       "jalr_load_dep2_stall", "div_by_zero", "div_clz", "misaligned_target",
                                       "misaligned_fetch", "branch_lookahead_misaligned")
NOT_VALIDATED = "not validated against RTL"
_REQUIRED = ("name", "isa", "clock_hz", "hw_threads", "costs", "sources_assumptions")
_ISA_RE = re.compile(r"^rv(32|64)([a-z]+)((?:_[a-z0-9]+)*)$")


@dataclass(frozen=True)
class Profile:
    """A validated cycle-model profile."""

    name: str
    isa: str
    clock_hz: int
    hw_threads: int
    costs: Mapping[str, int]
    sources_assumptions: str
    timebase_hz: int = 1_000_000_000
    description: str = ""
    path: Path | None = None
    extensions: frozenset[str] = field(default_factory=frozenset)
    validation: str = NOT_VALIDATED  # how the costs were checked against a real core's RTL, if at all

    @property
    def xlen(self) -> int:
        """XLEN named by the ISA string (the emulator also runs the other XLEN with these costs)."""
        return int(self.isa[2:4])

    @property
    def zbb(self) -> bool:
        return "zbb" in self.extensions

    def cost_tuple(self) -> tuple[int, ...]:
        """Costs in the order the C core expects (``_rvcore.COST_KEYS``)."""
        return tuple(int(self.costs[k]) for k in COST_KEYS)


def _bad(where: str, msg: str) -> BadInputError:
    return BadInputError(f"cycle profile {where}: {msg}")


def _pos_int(d: Mapping[str, Any], key: str, where: str, minimum: int = 1) -> int:
    v = d.get(key)
    if not isinstance(v, int) or isinstance(v, bool) or v < minimum:
        raise _bad(where, f"'{key}' must be an integer >= {minimum}, got {v!r}")
    return v


def profile_from_dict(data: Any, where: str = "<dict>", path: Path | None = None) -> Profile:
    """Validate a parsed profile document and build a :class:`Profile` (BadInputError if invalid)."""
    if not isinstance(data, dict):
        raise _bad(where, "top level must be a JSON object")
    missing = [k for k in _REQUIRED if k not in data]
    if missing:
        raise _bad(where, f"missing key(s) {', '.join(missing)}")
    name = data["name"]
    if not isinstance(name, str) or not name:
        raise _bad(where, "'name' must be a non-empty string")
    isa = data["isa"]
    m = _ISA_RE.match(isa.lower()) if isinstance(isa, str) else None
    if not m or "i" not in m.group(2):
        raise _bad(where, f"'isa' must look like rv64imac or rv64imac_zbb, got {isa!r}")
    letters = set(m.group(2)) - {"i"}
    if letters - set("mac"):
        raise _bad(where, f"'isa' {isa!r}: only the I, M, A, C (and _zbb) extensions are emulated")
    subs = {s for s in m.group(3).split("_") if s}
    if subs - {"zbb", "zicsr", "zicntr", "zifencei"}:
        raise _bad(where, f"'isa' {isa!r}: unsupported extension(s) {sorted(subs - {'zbb', 'zicsr', 'zicntr', 'zifencei'})}")
    costs = data["costs"]
    if not isinstance(costs, dict):
        raise _bad(where, "'costs' must be an object")
    unknown = set(costs) - set(COST_KEYS)
    if unknown:
        raise _bad(where, f"unknown cost class(es) {sorted(unknown)}; expected {list(COST_KEYS)}")
    missing_costs = [k for k in COST_KEYS if k not in costs and k not in OPTIONAL_COST_KEYS]
    if missing_costs:
        raise _bad(where, f"missing cost(s) {', '.join(missing_costs)} in 'costs'")
    _pos_int(costs, "div", where, minimum=0)
    costs = {k: costs.get(k, costs["div"] if k == "div_by_zero" else 0) for k in COST_KEYS}
    for k in COST_KEYS:
        _pos_int(costs, k, where, minimum=0)
        if costs[k] > 1_000_000:
            raise _bad(where, f"cost '{k}' = {costs[k]} is implausibly large")
    text = data["sources_assumptions"]
    if not isinstance(text, str) or not text.strip():
        raise _bad(where, "'sources_assumptions' must be a non-empty string")
    validation = data.get("validation", NOT_VALIDATED)
    if not isinstance(validation, str) or not validation.strip():
        raise _bad(where, "'validation' must be a non-empty string")
    return Profile(
        name=name,
        isa=isa.lower(),
        clock_hz=_pos_int(data, "clock_hz", where),
        hw_threads=_pos_int(data, "hw_threads", where),
        costs=dict(costs),
        sources_assumptions=text,
        timebase_hz=_pos_int(data, "timebase_hz", where) if "timebase_hz" in data else 1_000_000_000,
        description=str(data.get("description", "")),
        path=path,
        extensions=frozenset(letters | subs),
        validation=validation,
    )


def list_profiles() -> list[str]:
    """Names of the built-in profiles (files in emulator/profiles/)."""
    return sorted(p.stem for p in PROFILE_DIR.glob("*.json"))


def load_profile(name_or_path: str | Path | Profile = "generic5") -> Profile:
    """Load a built-in profile by name, or a JSON file by path."""
    if isinstance(name_or_path, Profile):
        return name_or_path
    p = Path(name_or_path)
    if p.suffix != ".json" and not p.exists():
        p = PROFILE_DIR / f"{name_or_path}.json"
        if not p.exists():
            raise BadInputError(f"unknown cycle profile {str(name_or_path)!r}; available: {', '.join(list_profiles())}")
    data = textio.load_json(p, "cycle profile")
    return profile_from_dict(data, where=str(p), path=p)
