"""Shipped flow-size CDFs, inverse-transform sampling, Poisson workloads and FCT slowdown buckets."""

from __future__ import annotations

import importlib.resources
import itertools
import math

import numpy as np
import pytest

from rlcc.errors import BadInputError
from rlcc.simulator.flowsize import (
    DEFAULT_EDGES,
    FlowSizeCdf,
    arrival_rate_per_ns,
    fct_slowdown_buckets,
    poisson_flows,
)


def shipped_points(name: str) -> list[tuple[float, float]]:
    """(size, cdf percent) straight from the shipped file, parsed without the module under test."""
    text = (importlib.resources.files("rlcc.simulator.workloads") / f"{name}.cdf").read_text()
    return [tuple(map(float, line.split())) for line in text.splitlines() if line and not line.startswith("#")]


def trapezoid_mean(points: list[tuple[float, float]]) -> float:
    total = 0.0
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        total += (x0 + x1) / 2 * (y1 - y0) / 100
    return total


def hpcc_value_from_percentile(points: list[tuple[float, float]], y: float) -> float:
    """HPCC traffic_gen/custom_rand.py getValueFromPercentile, transcribed (y in percent)."""
    for i in range(1, len(points)):
        if y <= points[i][1]:
            x0, y0 = points[i - 1]
            x1, y1 = points[i]
            return x0 + (x1 - x0) / (y1 - y0) * (y - y0)
    raise AssertionError("unreachable for y <= 100")


@pytest.mark.parametrize("name, n_points, last", [("websearch", 12, 30_000_000), ("hadoop", 20, 10_000_000)])
def test_shipped_cdfs_load_and_are_monotone(name, n_points, last):
    c = FlowSizeCdf.load(name)
    assert c.sizes.size == n_points and c.sizes[-1] == last
    assert c.sizes[0] == 0 and c.cdf[0] == 0 and c.cdf[-1] == 1
    assert np.all(np.diff(c.sizes) > 0) and np.all(np.diff(c.cdf) > 0)
    got = np.array([(float(x), float(y) * 100) for x, y in zip(c.sizes, c.cdf)])
    assert got.shape == (len(shipped_points(name)), 2)
    assert got.ravel() == pytest.approx(np.array(shipped_points(name), dtype=float).ravel())
    header = (importlib.resources.files("rlcc.simulator.workloads") / f"{name}.cdf").read_text().splitlines()[:4]
    assert "9f4be2a9ead8a90e8bf732c66bd758c00e58e5be" in " ".join(header)
    assert ("DCTCP" if name == "websearch" else "Roy et al.") in " ".join(header)


def test_websearch_mean_matches_hand_computation():
    # Trapezoids by hand (midpoint x percent): 5e3*15 + 15e3*5 + 25e3*10 + 40e3*10 + 65e3*13 + 140e3*7
    # + 600e3*10 + 1.5e6*10 + 3.5e6*10 + 7.5e6*7 + 20e6*3 = 171_125_000 -> / 100.
    assert trapezoid_mean(shipped_points("websearch")) == pytest.approx(1_711_250.0, rel=1e-15)
    assert FlowSizeCdf.load("websearch").mean() == pytest.approx(1_711_250.0, rel=1e-12)
    assert FlowSizeCdf.load("hadoop").mean() == pytest.approx(trapezoid_mean(shipped_points("hadoop")), rel=1e-12)


@pytest.mark.parametrize("name", ["websearch", "hadoop"])
def test_sample_mean_and_cdf(name):
    c = FlowSizeCdf.load(name)
    x = c.sample(np.random.default_rng(3), 1_000_000)
    # 1e6 samples: the sample mean's sigma is 0.23 % (websearch) / 0.56 % (hadoop) of the mean.
    assert x.mean() == pytest.approx(c.mean(), rel=0.025 if name == "hadoop" else 0.01)
    for size, pct in shipped_points(name):  # empirical CDF at every point, within 5 sigma
        p = pct / 100
        assert np.mean(x <= size) == pytest.approx(p, abs=5 * math.sqrt(p * (1 - p) / x.size) + 1e-12)


def test_quantile_follows_hpcc_interpolation():
    points = shipped_points("hadoop")
    c = FlowSizeCdf.load("hadoop")
    u = np.random.default_rng(0).random(2000)
    u[:4] = [0.0, 0.01, 0.6, 1.0]  # exactly on points: HPCC takes the segment ending there
    expected = [hpcc_value_from_percentile(points, v * 100) for v in u]
    np.testing.assert_allclose(c.quantile(u), expected, rtol=1e-12, atol=1e-9)


def test_point_masses_and_deterministic_sampling():
    # 50 % at 100 B (first point), +10 % more at 100 B (repeated size), 40 % uniform on (100, 200].
    c = FlowSizeCdf.parse("100 50\n100 60\n200 100\n")
    assert c.mean() == pytest.approx(0.6 * 100 + 0.4 * 150)
    x = c.sample(7, 200_000)
    assert np.mean(x == 100) == pytest.approx(0.6, abs=0.005)
    assert x.max() <= 200 and x.min() == 100
    np.testing.assert_array_equal(x, c.sample(7, 200_000))
    # A repeated cdf value: no flow between 1 KB and 2 KB.
    gap = FlowSizeCdf.parse("0 0\n1000 50\n2000 50\n3000 100\n").sample(1, 100_000)
    assert not np.any((gap > 1000) & (gap < 2000))


@pytest.mark.parametrize(
    "text, words",
    [
        ("# header\n0 0\n100 50\n200 40\n300 100\n", r"line 4: cdf 40 is below the previous cdf 50"),
        ("0 0\n200 50\n100 80\n300 100\n", r"line 3: size 100 is below the previous size 200"),
        ("0 0\n100 50\n200 99\n", r"line 3: the CDF must end at 100, got 99"),
        ("0 0\nhello world\n200 100\n", r"line 2: not a number"),
        ("0 0\n100\n200 100\n", r"line 2: expected 'size_bytes cdf_percent'"),
        ("0 0\n100 50 7\n200 100\n", r"line 2: expected 'size_bytes cdf_percent'"),
        ("-5 0\n100 100\n", r"line 1: negative flow size"),
        ("0 10\n100 100\n", r"line 1: size 0 may only anchor"),
        ("0 0\n100 120\n", r"line 2: cdf 120 is outside"),
        ("0 0\n100 nan\n", r"line 2: size and cdf must be finite"),
        ("# only\n100 100\n", r"at least 2 points, got 1"),
        ("", r"at least 2 points, got 0"),
    ],
)
def test_bad_cdf_files_name_the_line(tmp_path, text, words):
    path = tmp_path / "bad.cdf"
    path.write_text(text)
    with pytest.raises(BadInputError, match=words) as err:
        FlowSizeCdf.load(path)
    assert str(path) in str(err.value) and "\n" not in str(err.value)


def test_comments_and_blank_lines_are_ignored(tmp_path):
    path = tmp_path / "ok.cdf"
    path.write_text("# source: somewhere\n\n0 0   # anchor\n1000 100\n")
    c = FlowSizeCdf.load(str(path))
    assert c.mean() == pytest.approx(500.0)


def test_unreadable_file():
    with pytest.raises(BadInputError, match=r"cannot read flow-size CDF /no/such/file\.cdf \(No such file"):
        FlowSizeCdf.load("/no/such/file.cdf")
    with pytest.raises(BadInputError, match="cannot read flow-size CDF"):
        FlowSizeCdf.load("web_search")  # not a shipped name, not a file


def test_direct_construction_is_validated():
    with pytest.raises(BadInputError, match=r"point 1: cdf 0\.3 is below"):
        FlowSizeCdf(np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.3, 1.0]))
    with pytest.raises(BadInputError, match="flow-size CDF: a CDF needs at least 2 points, got 1"):
        FlowSizeCdf(np.array([1.0]), np.array([1.0]))


def test_poisson_arrivals_rate_count_and_endpoints():
    hosts, load, rate, duration = 64, 0.3, 100.0, 1e8
    c = FlowSizeCdf.load("hadoop")
    # lambda by hand: load x hosts x (rate bit/ns / 8 = byte/ns) / mean size.
    lam = load * hosts * rate / 8 / trapezoid_mean(shipped_points("hadoop"))
    assert arrival_rate_per_ns(hosts, load, rate, c) == pytest.approx(lam, rel=1e-12)
    w = poisson_flows(hosts, load, rate, duration, c, seed=5, max_flows=1_000_000)
    n = w.start_ns.size
    assert abs(n - lam * duration) <= 4 * math.sqrt(lam * duration)
    gaps = np.diff(np.concatenate([[0.0], w.start_ns]))
    assert gaps.mean() == pytest.approx(1 / lam, abs=4 / lam / math.sqrt(n))
    assert gaps.std() == pytest.approx(1 / lam, rel=0.02)  # exponential: std = mean
    assert np.all(gaps >= 0) and w.start_ns[-1] < duration
    assert np.all(w.dst != w.src)
    assert w.src.min() == 0 and w.src.max() == hosts - 1 and w.dst.min() == 0 and w.dst.max() == hosts - 1
    per_src = np.bincount(w.src, minlength=hosts)
    assert np.all(np.abs(per_src - n / hosts) <= 5 * math.sqrt(n / hosts))
    # Destinations uniform over the other hosts: host 0's flows reach each of 1..63 about equally.
    to = np.bincount(w.dst[w.src == 0], minlength=hosts)
    assert to[0] == 0 and np.all(np.abs(to[1:] - per_src[0] / 63) <= 5 * math.sqrt(per_src[0] / 63))
    assert w.size_bytes.dtype == np.int64 and w.size_bytes.min() >= 1
    # Offered load: bytes / (duration x hosts x byte rate) within 4 sigma of the sum's spread.
    offered = w.size_bytes.sum() / (duration * hosts * rate / 8)
    sigma = math.sqrt(n) * np.sqrt(np.mean(w.size_bytes.astype(float) ** 2)) / (duration * hosts * rate / 8)
    assert abs(offered - load) <= 4 * sigma


def test_poisson_is_deterministic_for_the_seed():
    c = FlowSizeCdf.load("websearch")
    a = poisson_flows(8, 0.5, 100.0, 2e7, c, seed=11, max_flows=10_000)
    b = poisson_flows(8, 0.5, 100.0, 2e7, c, seed=11, max_flows=10_000)
    d = poisson_flows(8, 0.5, 100.0, 2e7, c, seed=12, max_flows=10_000)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert a.start_ns.size != d.start_ns.size or not np.array_equal(a.start_ns, d.start_ns)


def test_poisson_refusals():
    c = FlowSizeCdf.load("websearch")
    # 64 hosts x 0.5 x 12.5 byte/ns / 1_711_250 B = 2.33747e-4 flows/ns -> 23374.7 flows in 1e8 ns.
    with pytest.raises(BadInputError, match=r"23375 flows expected .* exceeds max_flows=20000"):
        poisson_flows(64, 0.5, 100.0, 1e8, c, seed=0, max_flows=20_000)
    for load in (0.0, -0.1, 1.5):
        with pytest.raises(BadInputError, match="load must be in"):
            poisson_flows(4, load, 100.0, 1e6, c, seed=0, max_flows=1000)
    for hosts in (1, 0, 2.5):
        with pytest.raises(BadInputError, match="hosts must be an integer >= 2"):
            poisson_flows(hosts, 0.5, 100.0, 1e6, c, seed=0, max_flows=1000)


def test_fct_buckets_hand_checked():
    size = np.array([500, 1000, 5000, 6000, 7000, 9000, 20000])
    ideal = np.full(7, 10.0)
    fct = np.array([10.0, 30.0, 20.0, 40.0, 100.0, np.nan, np.nan])
    b = fct_slowdown_buckets(size, fct, ideal, edges=(1000, 10000))
    assert [x["label"] for x in b] == ["<=1KB", "1KB-10KB", ">10KB"]
    assert [(x["lo"], x["hi"]) for x in b] == [(0, 1000), (1000, 10000), (10000, math.inf)]
    assert [x["count"] for x in b] == [2, 3, 0]
    assert [x["unfinished"] for x in b] == [0, 1, 1]
    # Linear percentile: sorted s, rank q (n - 1). Bucket 0: s = [1, 3]; bucket 1: s = [2, 4, 10].
    assert b[0]["median"] == pytest.approx(2.0) and b[0]["p99"] == pytest.approx(1 + 0.99 * 2)
    assert b[1]["median"] == pytest.approx(4.0) and b[1]["p99"] == pytest.approx(4 + 0.98 * 6)
    assert math.isnan(b[2]["median"]) and math.isnan(b[2]["p99"])


def test_fct_buckets_default_edges_cover_every_flow():
    size = np.array([1, 999, 10**4, 10**5 + 1, 3 * 10**7])
    b = fct_slowdown_buckets(size, np.ones(5), np.ones(5))
    assert len(b) == len(DEFAULT_EDGES) + 1
    assert sum(x["count"] for x in b) == 5 and b[-1]["count"] == 1 and b[0]["count"] == 2


@pytest.mark.parametrize(
    "args, words",
    [
        (([1, 2], [1.0], [1.0, 1.0]), "one length"),
        (([1, 2], [1.0, 1.0], [1.0, 0.0]), "ideal FCTs"),
        (([1, 2], [1.0, -1.0], [1.0, 1.0]), "FCTs must be >= 0"),
        (([0, 2], [1.0, 1.0], [1.0, 1.0]), "sizes must be finite and > 0"),
    ],
)
def test_fct_buckets_bad_input(args, words):
    with pytest.raises(BadInputError, match=words):
        fct_slowdown_buckets(*map(np.array, args))
    with pytest.raises(BadInputError, match="edges must be increasing"):
        fct_slowdown_buckets(np.array([1]), np.array([1.0]), np.array([1.0]), edges=(10, 10))
