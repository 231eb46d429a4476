"""rlcc_runtime.h, the runtime of every generated firmware: its numbers are rlcc.formats', its
square-root seed table is the one rlcc.codegen.context plans, its out-of-line functions carry the
names the prover abstracts, and its version is what generated firmware checks. (Behaviour: the
square root exhaustively in tests/codegen/test_isqrt.py; the event steps through every generated
firmware's bit-exact tests and the SDK example's tests.)"""

from __future__ import annotations

import re

from rlcc import firmware_sdk_stub as sdk
from rlcc import formats as fmt
from rlcc.codegen import context

TEXT = sdk.runtime_header().read_text()


def _define(name: str) -> str:
    m = re.search(rf"^#define {name} (.+?)(?: /\*.*)?$", TEXT, re.M)
    assert m, name
    return m.group(1).strip()


def test_formats_match_rlcc_formats():
    for key, literal in context._formats().items():
        assert _define(f"RLCC_{key}") == literal, key
    assert _define("RLCC_NACK_SHIFT") == f"{fmt.NACK_SHIFT}u" and _define("RLCC_CNP_SHIFT") == f"{fmt.CNP_SHIFT}u"


def test_sqrt_table_is_the_planned_one():
    plan = context._sqrt_plan()
    body = re.search(r"static const uint32_t knots\[RLCC_SQRT_KNOTS\] = \{(.*?)\};", TEXT, re.S)
    assert body
    assert [int(v, 16) for v in re.findall(r"0x[0-9a-f]{8}", body.group(1))] == plan["knots"]
    assert _define("RLCC_SQRT_KNOTS") == f"{len(plan['knots'])}u"
    assert _define("RLCC_SQRT_INDEX_BITS") == f"{plan['index_bits']}u"
    assert _define("RLCC_SQRT_FRAC_BITS") == f"{plan['frac_bits']}u"
    assert _define("RLCC_SQRT_TABLE_BASE") == f"{plan['table_base']}u"


def test_out_of_line_functions_are_the_provers():
    """The functions the prover abstracts by name are out of line; the wide products are inline on
    every target (the prover reads the multiplies themselves as the golden model's opaque product)."""
    for name in (context.SQRT_FUNCTION, context.SLOG_FUNCTION):
        assert re.search(rf"^static __attribute__\(\(noinline, unused\)\) u?int\d+_t {name}\(", TEXT, re.M), name
    for name in ("rlcc_penalty_product", "rlcc_rate_product"):
        assert re.search(rf"^static inline uint64_t {name}\(", TEXT, re.M), name


def test_version_and_identifier_prefix():
    assert context.runtime_version() >= 1
    names = re.findall(r"^(?:static (?:__attribute__\(\([^)]*\)\) )?[^(=]*?(\w+)\(|#define (\w+)|typedef [^(]*\(\*(\w+)\))",
                       TEXT, re.M)
    names = ["".join(n) for n in names]
    assert names and all(n.lower().startswith("rlcc_") for n in names), [n for n in names if not n.lower().startswith("rlcc_")]
