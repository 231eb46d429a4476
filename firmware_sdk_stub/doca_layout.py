"""The DOCA PCC device layouts rlcc verifies against: the one table of their sizes and offsets.

The DOCA PCC device API has changed its event and results records across releases and devices
while keeping the accessor functions (``doca_pcc_dev_get_*``) and the documented field names.
rlcc's generated C reads the event through the accessors only, so one C file builds against each
layout; ``rlcc-verify --doca-layout`` builds and runs it against the one chosen here.

Each record says where its numbers come from. The contract headers
(``doca_pcc_dev_layout_*.h``, selected by ``RLCC_DOCA_LAYOUT``) are checked against this table by
a host-compiled offsetof/sizeof probe (tests/sdk/test_doca_layouts.py), and the harness adapter
(``harness_doca.c``) lays the event words out from this table, not from the headers, so a header
and the table that disagree fail verification.

All event words are big-endian on the device (the NIC writes them in network byte order and
every DOCA accessor byte-swaps the word it reads); the results record and the context are
written by the algorithm in the core's own (little-endian) order.
"""

from __future__ import annotations

import dataclasses

from rlcc.errors import BadInputError


@dataclasses.dataclass(frozen=True)
class DocaLayout:
    """Byte offsets and sizes of one DOCA PCC device layout (offsets within the record)."""

    name: str  # the --doca-layout value
    c_macro: str  # RLCC_DOCA_LAYOUT value selecting the contract header of this layout
    title: str
    source: str  # what the numbers were taken from (docs/doca.md has the references)
    event_bytes: int
    ev_attr: int  # doca_pcc_dev_event_general_attr_t word {ev_type:8, ev_subtype:8, port..., flags:8}
    flow_tag: int
    sn: int
    timestamp: int
    spec: int  # ev_spec_attr: four words, the same meaning per event type in every layout
    qpn: int  # the word whose low 24 bits are the flow's QP number (TX events; every event on CX8)
    port_bits: int  # width of ev_attr.port_num (bits 16..)
    results_bytes: int
    rate: int  # results: new rate
    rtt_req: int  # results: RTT (probe) request bit
    max_params: int  # DOCA_PCC_DEV_MAX_NUM_PARAMS_PER_ALGO
    max_counters: int  # DOCA_PCC_DEV_MAX_NUM_COUNTERS_PER_ALGO
    big_endian: bool = True  # event words in network byte order

    @property
    def spec_words(self) -> tuple[int, int, int, int]:
        """Offsets of the four ev_spec_attr words (TX: first_timestamp, cntrs, qpn/credits, -;
        ACK/NACK/CNP: first_timestamp, first_sn, extra, -; RTT: req_send, req_recv, resp_send, -)."""
        return (self.spec, self.spec + 4, self.spec + 8, self.spec + 12)

    def build_defines(self) -> list[str]:
        """Compiler definitions: the contract header to use and the event/results layout the
        harness adapter writes and reads."""
        d = {
            "RLCC_HARNESS_PREPARE_EVENT": "1",
            "RLCC_DOCA_LAYOUT": self.c_macro,
            "RLCC_DOCA_EVENT_BYTES": f"{self.event_bytes}u",
            "RLCC_DOCA_EVENT_BIG_ENDIAN": "1" if self.big_endian else "0",
            "RLCC_DOCA_OFF_EV_ATTR": f"{self.ev_attr}u",
            "RLCC_DOCA_OFF_FLOW_TAG": f"{self.flow_tag}u",
            "RLCC_DOCA_OFF_SN": f"{self.sn}u",
            "RLCC_DOCA_OFF_TIMESTAMP": f"{self.timestamp}u",
            "RLCC_DOCA_OFF_SPEC": f"{self.spec}u",
            "RLCC_DOCA_OFF_QPN": f"{self.qpn}u",
            "RLCC_DOCA_RESULTS_BYTES": f"{self.results_bytes}u",
            "RLCC_DOCA_OFF_RATE": f"{self.rate}u",
            "RLCC_DOCA_OFF_RTT_REQ": f"{self.rtt_req}u",
        }
        return [f"-D{k}={v}" for k, v in d.items()]


LAYOUTS: dict[str, DocaLayout] = {
    "2.5": DocaLayout(
        name="2.5", c_macro="RLCC_DOCA_LAYOUT_2_5", title="DOCA 2.5 LTS (one layout for every device)",
        source="DOCA 2.5 device headers doca_pcc_dev_data_structure_le.h, doca_pcc_dev.h, doca_pcc_dev_event.h",
        event_bytes=32, ev_attr=0, flow_tag=4, sn=8, timestamp=12, spec=16, qpn=24, port_bits=8,
        results_bytes=8, rate=0, rtt_req=4, max_params=0x1E, max_counters=0xF),
    "bf3": DocaLayout(
        name="bf3", c_macro="RLCC_DOCA_LAYOUT_BF3", title="DOCA 3.x, BlueField-3 (__NV_DPA_BF3)",
        source="DOCA 3.x doca_pcc_dev_data_structure_le_bf3.h, doca_pcc_dev.h, doca_pcc_dev_event.h",
        event_bytes=44, ev_attr=12, flow_tag=16, sn=20, timestamp=24, spec=28, qpn=36, port_bits=8,
        results_bytes=12, rate=0, rtt_req=4, max_params=0x2C, max_counters=0x3F),
    "cx8": DocaLayout(
        name="cx8", c_macro="RLCC_DOCA_LAYOUT_CX8", title="DOCA 3.x, ConnectX-8 (__NV_DPA_CX8)",
        source="DOCA 3.x doca_pcc_dev_data_structures.h / doca_pcc_dev_event.h (CX8 branch), the CX8+ event "
               "record as published for the later device; port_num:4/plane_num:4 per issue 32",
        event_bytes=44, ev_attr=12, flow_tag=16, sn=20, timestamp=24, spec=28, qpn=8, port_bits=4,
        results_bytes=12, rate=0, rtt_req=4, max_params=0x2C, max_counters=0x3F),
}
LAYOUT_NAMES: tuple[str, ...] = tuple(LAYOUTS)
DEFAULT_LAYOUT = "2.5"
# The same generated C runs on every layout, so its parameter count must fit the smallest limit.
MIN_MAX_PARAMS = min(layout.max_params for layout in LAYOUTS.values())


def get_layout(name: str) -> DocaLayout:
    """The layout named ``name`` (BadInputError, exit 3, naming the choices, if there is none)."""
    layout = LAYOUTS.get(name)
    if layout is None:
        raise BadInputError(f"unknown DOCA layout {name!r}; expected one of {', '.join(LAYOUT_NAMES)}")
    return layout
