"""Bad input to rlcc-verify (issue 32): size-like options bounded and checked before any work,
manifest vectors validated at load, directories where files belong, and the firmware build
confined (no system headers, no include that reads outside the firmware's directories). Each
is one line on stderr with a documented exit code, fast."""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from verify_models import small_model

from rlcc.kinds.pcc import generate_firmware
from rlcc.errors import BadInputError, BuildError, ExitCode
from rlcc.firmware_sdk_stub import include_dirs
from rlcc.fxp.vectors import Vectors
from rlcc.verify import include_guard
from rlcc.verify.check import MAX_RANDOM_VECTORS, verify_firmware
from rlcc.kinds.switch_agent.check import verify_switch_firmware
from rlcc.verify.toolchain import _first_error, compile_riscv, freestanding_include_dir

SECRET = "SECRETTOKEN_7f3a"  # the first token of a file outside the firmware's directories


def _cli(*args: object, timeout: float = 120, limit_bytes: int | None = None) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("rlcc-verify")  # this tree's script, not another install's
    cmd = str(exe) if exe.is_file() else shutil.which("rlcc-verify")

    def cap() -> None:  # a regression must not take the machine's memory with it
        if limit_bytes is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    return subprocess.run([cmd, *map(str, args)], capture_output=True, text=True, timeout=timeout, preexec_fn=cap)


def _one_line(proc: subprocess.CompletedProcess, code: ExitCode, *needles: str) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == int(code), (proc.returncode, proc.stdout, proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("rlcc-verify: error: "), proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


@pytest.fixture(scope="module")
def fw(tmp_path_factory) -> dict[str, Path]:
    """A small model's firmware with the pinned vectors a compile writes into its manifest."""
    return generate_firmware(small_model(4), tmp_path_factory.mktemp("fw"))


def _copy(fw: dict[str, Path], work: Path, c_text: str | None = None, manifest: dict | None = None) -> Path:
    work.mkdir(parents=True, exist_ok=True)
    for key in ("c", "h", "manifest"):
        shutil.copy(fw[key], work / fw[key].name)
    if c_text is not None:
        (work / fw["c"].name).write_text(c_text)
    if manifest is not None:
        (work / fw["manifest"].name).write_text(json.dumps(manifest))
    return work / fw["c"].name


# ---- --random and the other size-like options ---------------------------------------------------
def test_random_beyond_the_bound_fails_at_once(fw):
    # 10^9 random vectors would take ~89 GiB (int64 contexts alone); 3 GiB address space is plenty for the check
    t0 = time.perf_counter()
    proc = _cli(fw["c"], "--random", 1_000_000_000, limit_bytes=3 << 30)
    line = _one_line(proc, ExitCode.BAD_INPUT, "--random", f"{MAX_RANDOM_VECTORS:,}", "GB of memory")
    assert "1,000,000,000" in line and time.perf_counter() - t0 < 60


def test_random_bound_holds_in_the_api_before_any_work(tmp_path):
    for run in (verify_firmware, verify_switch_firmware):
        with pytest.raises(BadInputError, match="--random must be between 0 and"):
            run(tmp_path / "missing.c", random_count=MAX_RANDOM_VECTORS + 1)
        with pytest.raises(BadInputError, match="--seed must be >= 0"):
            run(tmp_path / "missing.c", random_count=0, seed=-1)


@pytest.mark.parametrize("option, value, needle", [
    ("--random", -1, "--random must be between 0 and"),
    ("--jobs", 0, "--jobs must be between 1 and 64"),
    ("--jobs", 65, "--jobs must be between 1 and 64"),
    ("--ports", 0, "--ports must be between 1 and"),
    ("--ports", 65, "--ports must be between 1 and"),
    ("--seed", -1, "--seed must be >= 0"),
    ("--budget-cycles", 0, "--budget-cycles must be >= 1"),
])
def test_size_options_out_of_range_one_line_exit_3(fw, option, value, needle):
    _one_line(_cli(fw["c"], option, value), ExitCode.BAD_INPUT, needle)


def test_size_option_not_an_integer_one_line_exit_2(fw):
    _one_line(_cli(fw["c"], "--random", "lots"), ExitCode.USAGE, "--random must be an integer")


# ---- directories where files belong ---------------------------------------------------------------
@pytest.mark.parametrize("option", ["--json", "--junit", "--manifest", None])
def test_directory_as_a_file_path_one_line_exit_3(fw, tmp_path, option):
    args = [fw["c"], option, tmp_path] if option else [tmp_path]
    _one_line(_cli(*args), ExitCode.BAD_INPUT, f"{option or 'FIRMWARE'} {tmp_path}: is a directory")


def test_directory_as_the_compiler_is_a_build_error(fw):
    _one_line(_cli(fw["c"], "--random", 0, "--cc", fw["c"].parent), ExitCode.BUILD, "cannot run the compiler")


# ---- manifest vectors ---------------------------------------------------------------------------------
def _vectors_dict(fw: dict[str, Path]) -> dict:
    return json.loads(fw["manifest"].read_text())["vectors"]


@pytest.mark.parametrize("edit, needle", [
    (lambda v: v["ctx_in"][3].pop(), "'ctx_in' row 3 must be a list of 12 integers, got a list of 11 values"),
    (lambda v: v["event"][0].append(1), "'event' row 0 must be a list of 8 integers, got a list of 9 values"),
    (lambda v: v["rate"].pop(), "'rate' has"),
    (lambda v: v["attr"].pop(), "'ctx_in' has"),
    (lambda v: v.__setitem__("count", 5), "'count' is 5 but the columns hold"),
    (lambda v: v.__setitem__("ctx_out", [x for row in v["ctx_out"] for x in row]), "'ctx_out' row 0 must be a list"),
    (lambda v: v.__setitem__("attr", [[a] for a in v["attr"]]), "'attr' row 0 must be an integer"),
    (lambda v: v["targets"].pop(), "'targets' has"),
    (lambda v: v["ctx_in"][1].__setitem__(0, "7"), "'ctx_in' row 1 must be a list of 12 integers, got a list holding str"),
    (lambda v: v.pop("rtt_req"), "no 'rtt_req' column"),
])
def test_vectors_from_dict_rejects_malformed_columns(fw, edit, needle):
    v = _vectors_dict(fw)
    assert len(Vectors.from_dict(v)) == v["count"]
    edit(v)
    with pytest.raises(BadInputError, match="manifest vectors: ") as exc:
        Vectors.from_dict(v)
    assert needle in str(exc.value)


@pytest.mark.parametrize("case", ["ragged", "short_column", "count", "targets", "wrong_type", "missing_column"])
def test_malformed_manifest_vectors_exit_3_at_load(fw, tmp_path, case):
    manifest = json.loads(fw["manifest"].read_text())
    v = manifest["vectors"]
    {"ragged": lambda: v["ctx_in"][2].pop(), "short_column": lambda: v["rate"].pop(),
     "count": lambda: v.__setitem__("count", v["count"] + 1), "targets": lambda: v["targets"].append("x"),
     "wrong_type": lambda: v["rate"].__setitem__(0, 1.5), "missing_column": lambda: v.pop("ctx_out")}[case]()
    c = _copy(fw, tmp_path, manifest=manifest)
    t0 = time.perf_counter()
    _one_line(_cli(c), ExitCode.BAD_INPUT, "manifest vectors: ")
    assert time.perf_counter() - t0 < 30  # before: ~40 s of default vectors, then exit 1 or a PASS


# ---- the build sandbox --------------------------------------------------------------------------------
@pytest.fixture()
def secret(tmp_path) -> Path:
    path = tmp_path / "outside" / "secret.txt"
    path.parent.mkdir()
    path.write_text(f"{SECRET} rest of the line\n")
    return path


def _with_include(fw: dict[str, Path], line: str) -> str:
    text = fw["c"].read_text()
    anchor = f'#include "{fw["h"].name}"'
    assert anchor in text
    return text.replace(anchor, f"{line}\n{anchor}", 1)


@pytest.mark.parametrize("line, why", [
    ('#include "{secret}"', "an absolute path"),
    ('#include "/dev/zero"', "an absolute path"),
    ('#include <{secret}>', "an absolute path"),
    ('#include "../outside/secret.txt"', "climbs out of the directory"),
    ('#include "sub/../../outside/secret.txt"', "climbs out of the directory"),
    ('#define SECRET_FILE "{secret}"\n#include SECRET_FILE', "not a literal"),
    ('# /* a comment */ include "{secret}"', "an absolute path"),
    ('#inc\\\nlude "{secret}"', "an absolute path"),
    ('%:include "{secret}"', "an absolute path"),
    ('#embed "{secret}"', "an absolute path"),
    ('#if __has_include("{secret}")\n#endif', "an absolute path"),
    ('#include_next "{secret}"', "an absolute path"),
])
def test_include_outside_the_firmware_is_refused_before_the_compiler(fw, tmp_path, secret, line, why):
    c = _copy(fw, tmp_path / "fw", _with_include(fw, line.format(secret=secret)))
    t0 = time.perf_counter()
    err = _one_line(_cli(c, "--random", 0, timeout=200), ExitCode.BUILD, "refused", why)
    assert SECRET not in err and time.perf_counter() - t0 < 60  # /dev/zero: before, the 300 s compiler timeout


@pytest.mark.parametrize("kind", ["symlink", "fifo", "symlink_dir"])
def test_include_of_a_special_file_in_the_firmware_dir_is_refused(fw, tmp_path, secret, kind):
    work = tmp_path / "fw"
    work.mkdir()
    name = "evil.h" if kind != "symlink_dir" else "sub/evil.h"
    if kind == "symlink":
        (work / name).symlink_to(secret)
    elif kind == "fifo":
        os.mkfifo(work / name)
    else:
        (work / "sub").symlink_to(secret.parent, target_is_directory=True)
        (secret.parent / "evil.h").write_text(f"{SECRET}\n")
    c = _copy(fw, work, _with_include(fw, f'#include "{name}"'))
    why = "not a regular file" if kind == "fifo" else "outside its directory"
    err = _one_line(_cli(c, "--random", 0, timeout=200), ExitCode.BUILD, why)
    assert SECRET not in err


def test_header_in_the_firmware_dir_is_scanned_too(fw, tmp_path, secret):
    work = tmp_path / "fw"
    work.mkdir()
    (work / "extra.h").write_text(f'#pragma once\n#include "{secret}"\n')
    c = _copy(fw, work, _with_include(fw, '#include "extra.h"'))
    err = _one_line(_cli(c, "--random", 0), ExitCode.BUILD, "extra.h: #include", "refused: an absolute path")
    assert SECRET not in err


def test_mutation_analysis_builds_are_confined(fw, tmp_path, secret):
    from rlcc.verify.mutants import run_mutation_analysis

    c = _copy(fw, tmp_path / "fw", _with_include(fw, f'#include "{secret}"'))
    with pytest.raises(BuildError, match="refused: an absolute path") as exc:
        run_mutation_analysis(c, None, "rv64imac", jobs=1)
    assert SECRET not in str(exc.value) and exc.value.exit_code == ExitCode.BUILD


def test_allowed_includes_still_build(fw, tmp_path):
    # a header beside the firmware, in a subdirectory, through a symlink that stays inside, and
    # the freestanding headers; an include in a comment or a string is no include
    work = tmp_path / "fw"
    (work / "inc").mkdir(parents=True)
    (work / "inc" / "extra.h").write_text("#pragma once\n#include <stdint.h>\n#define EXTRA_ONE 1u\n")
    (work / "alias.h").symlink_to(work / "inc" / "extra.h")
    lines = ('#include "inc/extra.h"\n#include "alias.h"\n#include <stddef.h>\n#include <stdbool.h>\n'
             '/* #include "/etc/passwd" */\n// #include "../x.h"\nstatic const char rlcc_note[] __attribute__((unused)) = '
             '"#include \\"/etc/passwd\\"";\n#if defined(__has_include)\n#endif')
    c = _copy(fw, work, _with_include(fw, lines))
    result = verify_firmware(c, random_count=0)
    assert result.bit_exact


def test_no_system_include_paths(fw, tmp_path):
    # stdio.h is in every host's /usr/include; the confined build must not find it
    c = _copy(fw, tmp_path / "fw", _with_include(fw, "#include <stdio.h>"))
    with pytest.raises(BuildError, match="stdio.h' file not found") as exc:
        compile_riscv([c], include_dirs=[c.parent, *include_dirs()], out_path=tmp_path / "x.o", extra_flags=["-c"])
    assert exc.value.exit_code == ExitCode.BUILD


def test_compiler_error_in_a_foreign_file_is_not_echoed(tmp_path):
    stderr = (f"In file included from fw/firmware.c:3:\n{tmp_path}/outside/secret.txt:1:1: error: unknown type name "
              f"'{SECRET}'\n    1 | {SECRET} rest\n")
    line = _first_error(stderr, [tmp_path / "fw"])  # compile_riscv raises BuildError (exit 6) with it
    assert SECRET not in line and "secret.txt:1: error in a file outside" in line
    inside = f"{tmp_path}/fw/firmware.c:7:3: error: use of undeclared identifier 'x'"
    assert _first_error(inside, [tmp_path / "fw"]) == inside


def test_include_scanner_units(tmp_path):
    text = ('#include "a.h"\n  #  include <b.h>\n#include MACRO\n%:include "c.h"\n#inc\\\nlude "d.h"\n'
            '/* #include "no.h" */ #define X "#include \\"no2.h\\""\n??=include "e.h"\n#if __has_include("f.h") '
            '&& __has_include(<g.h>)\n#endif\n#ifdef __has_include\n#endif\n#embed "h.bin" limit(4)\n'
            '// a trigraph splice ??/\n#include "i.h"\n')
    assert set(include_guard.includes(text)) == {
        ("#include", "a.h", True), ("#include", "b.h", False), ("#include", None, True), ("#include", "c.h", True),
        ("#include", "d.h", True), ("#include", "e.h", True), ("__has_include", "f.h", True),
        ("__has_include", "g.h", False), ("#embed", "h.bin", True), ("#include", "i.h", True)}
    assert (freestanding_include_dir(["gcc"], gcc_style=True) / "stddef.h").is_file() or shutil.which("gcc") is None
