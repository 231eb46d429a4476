"""The RL-CC paper's published numbers the suite report sets beside rlcc's (one place for them).

Source: B. Fuhrer, Y. Shpigelman, C. Tessler, S. Mannor, G. Chechik, E. Zahavi, G. Dalal,
"Implementing Reinforcement Learning Datacenter Congestion Control in NVIDIA NICs", Table IV:
average packets lost per flow throughout the test; many-to-one and all-to-all on a two-level
fat-tree of 64 hosts, long-short on a single switch with 7 hosts.
"""

from __future__ import annotations

TABLE_IV_SOURCE = ("Fuhrer et al., \"Implementing Reinforcement Learning Datacenter Congestion Control in NVIDIA "
                   "NICs\", Table IV")
PAPER_ROWS = ("DCQCN", "Swift", "RL-CC")

# (family, topology, the full suite's scale label) -> (the paper's column, {paper row: packets per flow}).
# The full suite's all-to-all scales are h x (h - 1) x k flows (56, 480, 992, 1984): the paper's 64,
# 512, 1024 and 2048 in order.
TABLE_IV: dict[tuple[str, str, str], tuple[str, dict[str, float]]] = {
    ("many-to-one", "fat-tree", "32 flows"): ("32", {"DCQCN": 0.0, "Swift": 0.0, "RL-CC": 0.0}),
    ("many-to-one", "fat-tree", "128 flows"): ("128", {"DCQCN": 886.4, "Swift": 0.0, "RL-CC": 0.0}),
    ("many-to-one", "fat-tree", "2048 flows"): ("2048", {"DCQCN": 28.5, "Swift": 10.1, "RL-CC": 0.8}),
    ("many-to-one", "fat-tree", "4096 flows"): ("4096", {"DCQCN": 25.7, "Swift": 9.1, "RL-CC": 2.8}),
    ("all-to-all", "fat-tree", "56 flows"): ("64", {"DCQCN": 225.1, "Swift": 0.0, "RL-CC": 0.0}),
    ("all-to-all", "fat-tree", "480 flows"): ("512", {"DCQCN": 50.71, "Swift": 0.0, "RL-CC": 0.0}),
    ("all-to-all", "fat-tree", "992 flows"): ("1024", {"DCQCN": 48.1, "Swift": 0.8, "RL-CC": 0.2}),
    ("all-to-all", "fat-tree", "1984 flows"): ("2048", {"DCQCN": 26.7, "Swift": 6.5, "RL-CC": 1.2}),
    ("long-short", "single-switch", "50 short"): ("50 short", {"DCQCN": 0.0, "Swift": 0.0, "RL-CC": 0.0}),
    ("long-short", "single-switch", "100 short"): ("100 short", {"DCQCN": 57.9, "Swift": 0.0, "RL-CC": 0.0}),
}

# Table V (section V): paper row -> family -> success.
TABLE_V: dict[str, dict[str, bool]] = {
    "DCQCN": {"many-to-one": True, "all-to-all": False, "osu": True, "long-short": False},
    "Swift": {"many-to-one": False, "all-to-all": True, "osu": False, "long-short": True},
    "RL-CC": {"many-to-one": True, "all-to-all": True, "osu": True, "long-short": True},
}


def paper_row(name: str, kind: str | None) -> str | None:
    """The paper's row a suite controller corresponds to, by its kind (``kind``: the suite settings'
    description, e.g. "dcqcn" or "policy (x.onnx)"; None: the name is the kind): DCQCN, Swift, and
    RL-CC for a policy or compiled firmware."""
    word = (name if kind is None else kind).split(" ", 1)[0]
    return {"dcqcn": "DCQCN", "swift": "Swift", "policy": "RL-CC", "firmware": "RL-CC"}.get(word)


def differs(ours: float, paper: float) -> bool:
    """Whether a loss count differs from the paper's enough to explain: by more than half a packet
    and by more than a quarter of the paper's value."""
    return abs(ours - paper) > max(0.5, 0.25 * paper)
