"""The bounded reader of user files (rlcc.textio): size limits, strict JSON, one-line errors."""

from __future__ import annotations

import os

import pytest

from rlcc import textio
from rlcc.errors import BadInputError, ExitCode


def test_a_file_larger_than_the_limit_is_refused_after_reading_limit_plus_one_bytes(tmp_path):
    big = tmp_path / "big.json"
    big.write_bytes(b" " * 1001)
    with pytest.raises(textio.InputFileError, match=r"cannot read spec file .*big\.json: larger than 1000 bytes"):
        textio.read_bytes(big, "spec file", limit=1000)
    assert textio.read_bytes(big, "spec file", limit=1001) == b" " * 1001


def test_an_endless_device_is_refused_not_swallowed():
    with pytest.raises(BadInputError, match="cannot read spec file /dev/zero: larger than 64 MiB") as info:
        textio.read_bytes("/dev/zero", "spec file")
    assert info.value.exit_code == ExitCode.BAD_INPUT


def test_a_pipe_is_read_like_a_file(tmp_path):
    """``--spec <(jq ...)`` hands rlcc a FIFO: it is read (within the limit), not refused."""
    r, w = os.pipe()
    os.write(w, b'{"a": 1}')
    os.close(w)
    try:
        assert textio.parse_json(textio.read_bytes(f"/dev/fd/{r}", "spec file"), "spec", "pipe") == {"a": 1}
    finally:
        os.close(r)


@pytest.mark.parametrize("path, reason", [("/no/such.json", "No such file or directory"), (".", "Is a directory")])
def test_unreadable_files_name_the_reason(path, reason):
    with pytest.raises(textio.InputFileError, match=f"cannot read topology file {path}: {reason}") as info:
        textio.load_json(path, "topology file")
    assert info.value.reason == reason


@pytest.mark.parametrize("text, reason", [
    ("[" * 100_000 + "]" * 100_000, "nested deeper than 64 levels"),  # Python's parser: RecursionError
    ("[" * 65 + "]" * 65, "nested deeper than 64 levels"),
    ('{"x": NaN}', "NaN is not a JSON number"),
    ('{"x": -Infinity}', "-Infinity is not a JSON number"),
    ('{"x": 1e999}', "number 1e999 is out of range"),
    ("1" * 5000, "Exceeds the limit"),
    ("{oops", "Expecting property name"),
    (b"\xff\xfe{", "not JSON"),
])
def test_json_that_is_too_deep_non_finite_or_invalid_is_bad_input(text, reason):
    with pytest.raises(BadInputError, match="invalid scenario in s.json: not JSON") as info:
        textio.parse_json(text, "scenario", "s.json")
    assert reason in str(info.value) and "\n" not in str(info.value)


def test_json_at_the_depth_limit_parses():
    value = textio.parse_json("[" * 64 + "]" * 64, "scenario", "s.json")
    for _ in range(63):
        value = value[0]
    assert value == []


def test_text_that_is_not_utf8_is_bad_input(tmp_path):
    cdf = tmp_path / "x.cdf"
    cdf.write_bytes(b"1 50\n\xff 100\n")
    with pytest.raises(textio.InputFileError, match=r"not UTF-8 text \(byte 5\)"):
        textio.read_text(cdf, "flow-size CDF")
