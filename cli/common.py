"""Shared CLI plumbing: one-line errors with documented exit codes, atomic output directories,
early checks that outputs can be written, and a finite-float option type."""

from __future__ import annotations

import contextlib
import functools
import math
import os
import secrets
import select
import shutil
import signal
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

import click
from rlcc.errors import EXIT_CODE_MEANINGS, BadInputError, ExitCode, RlccError
from rlcc.firmware_sdk_stub.switch_layout import MAX_PORTS

F = TypeVar("F", bound=Callable)

# Standalone program name of each `rlcc` subcommand, for error lines and --version.
PROGS = {"compile": "rlcc-compile", "verify": "rlcc-verify", "sim": "rlcc-sim", "train": "rlcc-train"}
# The help epilog of every command and subcommand (click keeps \b paragraphs unwrapped).
EXIT_CODES_HELP = "\b\nExit codes:\n" + "\n".join(f"  {int(code)}  {text}" for code, text in EXIT_CODE_MEANINGS.items())
EXIT_SIGPIPE = 128 + signal.SIGPIPE  # what a shell reports for a process killed by SIGPIPE (141)
EXIT_SIGTERM = 128 + signal.SIGTERM  # 143
EXIT_SIGINT = 128 + signal.SIGINT  # 130


class Terminated(BaseException):
    """SIGTERM, raised like KeyboardInterrupt so the same cleanups (staging directories) run."""


def _raise_terminated(_signum: int, _frame: Any) -> None:
    raise Terminated()


@contextlib.contextmanager
def _sigterm_raises() -> Iterator[None]:
    """Turn SIGTERM into ``Terminated`` for the duration, unless the SIGTERM disposition is not
    the default one (a host's handler, or ignored); signal handlers are main-thread only."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _stdout_reader_gone() -> bool:
    """True if stdout is a pipe or socket whose reading end is closed (``rlcc-sim ... | head -1``)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))


def _exit_quietly_on_closed_stdout() -> None:
    # Later writes (the interpreter's final flush) go nowhere instead of failing again.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    sys.exit(EXIT_SIGPIPE)


def guarded(prog: str) -> Callable[[F], F]:
    """Turn rlcc errors into ``prog: error: message`` on stderr plus the error's exit code.

    Unexpected exceptions become one ``internal error`` line (exit 1) instead of a traceback;
    set RLCC_DEBUG=1 to see the traceback. SIGTERM unwinds like Ctrl-C (staging directories are
    removed; exit 143, Ctrl-C 130). A host with its own SIGTERM handler (the tests' conftest, an
    application embedding the CLI) keeps it: its exception unwinds through the command, so the
    host reports an interruption rather than the command's exit code. A closed stdout (the reader of a pipe went away) ends the
    command silently with exit 141, as a SIGPIPE would: the output was cut short, so not 0.
    """

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            try:
                with _sigterm_raises():
                    return fn(*args, **kwargs)
            except RlccError as exc:
                click.echo(f"{prog}: error: {exc}", err=True)
                sys.exit(int(exc.exit_code))
            except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
                raise
            except KeyboardInterrupt:
                click.echo(f"{prog}: interrupted", err=True)
                sys.exit(EXIT_SIGINT)
            except Terminated:
                click.echo(f"{prog}: terminated", err=True)
                sys.exit(EXIT_SIGTERM)
            except Exception as exc:  # last line of defence: never show a traceback
                if isinstance(exc, BrokenPipeError) and _stdout_reader_gone():
                    _exit_quietly_on_closed_stdout()
                if os.environ.get("RLCC_DEBUG"):
                    raise
                msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                click.echo(f"{prog}: internal error: {type(exc).__name__}: {msg}", err=True)
                sys.exit(int(ExitCode.INTERNAL))

        return inner  # type: ignore[return-value]

    return wrap


# ---- option values ------------------------------------------------------------------------------
def prog_name(ctx: click.Context | None) -> str:
    """``rlcc-compile`` etc. for the command being parsed, also under the ``rlcc`` group."""
    names = []
    while ctx is not None:
        names.append(ctx.command.name)
        ctx = ctx.parent
    return next((PROGS[n] for n in reversed(names) if n in PROGS), "rlcc")


class OptionValueError(click.ClickException):
    """A bad option value found while parsing, shown as the one line ``prog: error: message``
    (click's own usage errors take three lines)."""

    def __init__(self, message: str, prog: str, exit_code: ExitCode = ExitCode.BAD_INPUT) -> None:
        super().__init__(message)
        self.prog = prog
        self.exit_code = int(exit_code)

    def show(self, file: Any = None) -> None:
        click.echo(f"{self.prog}: error: {self.format_message()}", err=True)


class FiniteFloat(click.ParamType):
    """A float option that must be finite and positive (or >= 0 with ``allow_zero``).

    Not a number: exit 2 (bad command line, as click's FLOAT). NaN, inf, zero or negative:
    exit 3 (bad input), like every other out-of-range option value of rlcc. One line either way.
    """

    name = "float"

    def __init__(self, allow_zero: bool = False) -> None:
        self.allow_zero = allow_zero

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, float) and math.isfinite(value) and (value > 0 or (self.allow_zero and value == 0)):
            return value
        opt = param.opts[0] if param is not None and param.opts else "value"
        try:
            x = float(value)
        except (TypeError, ValueError):
            raise OptionValueError(f"{opt} must be a number, got {value!r}", prog_name(ctx), ExitCode.USAGE) from None
        if math.isfinite(x) and (x > 0 or (self.allow_zero and x == 0)):
            return x
        need = "a finite number >= 0" if self.allow_zero else "a finite number > 0"
        raise OptionValueError(f"{opt} must be {need}, got {value}", prog_name(ctx))


def bad_input_option(check: Callable[[Any], Any]) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """A click callback running ``check(value)`` while parsing: its BadInputError becomes the
    one line ``prog: error: ...`` with exit 3, before any work or output check."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is None:
            return value
        try:
            check(value)
        except BadInputError as exc:
            raise OptionValueError(str(exc), prog_name(ctx)) from None
        return value

    return callback


POSITIVE_FLOAT = FiniteFloat()
NON_NEGATIVE_FLOAT = FiniteFloat(allow_zero=True)


class BoundedInt(click.IntRange):
    """An integer option in ``[lo, hi]`` (``hi`` None: no upper bound), checked while parsing,
    before any work: not an integer exit 2, out of range exit 3, one line either way (plain
    click.IntRange prints three lines and exits 2; its range still shows in --help). ``why``:
    what the upper bound protects, added to its error (e.g. the memory it implies)."""

    def __init__(self, lo: int, hi: int | None = None, why: str = "") -> None:
        super().__init__(lo, hi)
        self.why = why

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        opt = param.opts[0] if param is not None and param.opts else "value"
        if isinstance(value, bool) or not isinstance(value, int):
            try:
                value = int(str(value).strip(), 10)
            except ValueError:
                raise OptionValueError(f"{opt} must be an integer, got {value!r}", prog_name(ctx), ExitCode.USAGE) from None
        if value < self.min or self.max is not None and value > self.max:
            span = f"between {self.min:,} and {self.max:,}" if self.max is not None else f">= {self.min:,}"
            tail = f" ({self.why})" if self.why and self.max is not None and value > self.max else ""
            raise OptionValueError(f"{opt} must be {span}, got {value:,}{tail}", prog_name(ctx))
        return value


# --ports of switch-agent firmware (rlcc-compile, rlcc-verify): the switch SDK's SW_MAX_PORTS bounds it.
PORTS = BoundedInt(1, MAX_PORTS, "the switch SDK's SW_MAX_PORTS")


def _param_label(param: click.Parameter | None) -> str:
    """``--json`` for an option, ``FIRMWARE`` for an argument."""
    if param is None:
        return "path"
    return param.opts[0] if param.param_type_name == "option" else param.human_readable_name


class FilePath(click.Path):
    """A file path argument or option (``dir_okay=False``) whose rejection (a directory) is the
    one line ``prog: error: OPTION PATH: is a directory`` with exit 3, not click's three-line
    usage error with exit 2: a directory where a file belongs is bad input, not a bad command line."""

    def __init__(self) -> None:
        super().__init__(dir_okay=False, path_type=Path)

    def fail(self, message: str, param: click.Parameter | None = None, ctx: click.Context | None = None) -> Any:
        raise OptionValueError(f"{_param_label(param)}: {message}", prog_name(ctx))

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if os.path.isdir(os.fspath(value)):
            raise OptionValueError(f"{_param_label(param)} {os.fspath(value)}: is a directory, not a file", prog_name(ctx))
        return super().convert(value, param, ctx)


# ---- output paths -------------------------------------------------------------------------------
def _existing_ancestor(path: Path) -> Path:
    path = Path(os.path.abspath(path))
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def _probe_dir(directory: Path, label: str) -> None:
    """Create and remove a file in ``directory``: the only reliable writability test (ACLs,
    read-only mounts, root)."""
    if not directory.is_dir():
        raise BadInputError(f"cannot write {label}: {directory} is not a directory")
    try:
        fd, probe = tempfile.mkstemp(prefix=".rlcc-probe.", dir=directory)
    except OSError as exc:
        raise BadInputError(f"cannot write {label}: {directory}: {exc.strerror}") from None
    os.close(fd)
    os.unlink(probe)


def check_writable_file(path: str | os.PathLike, option: str = "", create_parents: bool = False) -> None:
    """Fail with exit 3 now, before the work, if the file ``path`` could not be written later.

    ``create_parents``: the writer creates missing parent directories (else they must exist).
    An existing file is opened for appending, which leaves it unchanged.
    """
    path = Path(path)
    label = f"{option} {path}" if option else str(path)
    if path.is_dir():
        raise BadInputError(f"cannot write {label}: is a directory")
    if path.exists():
        try:
            with open(path, "ab"):
                pass
        except OSError as exc:
            raise BadInputError(f"cannot write {label}: {exc.strerror}") from None
        return
    parent = path.parent if path.parent != Path("") else Path(".")
    if not create_parents and not parent.exists():
        raise BadInputError(f"cannot write {label}: no such directory {parent}")
    _probe_dir(_existing_ancestor(parent), label)


def resolve_output_dir(out: str | os.PathLike, label: str = "") -> Path:
    """OUT as the directory it names, absolute (``-o .`` names the directory, not an empty basename).

    A symbolic link is followed: the directory it points to is the one checked, locked and
    replaced, and the link stays (a rename would otherwise meet the link, not a directory). A
    link to nothing is refused (exit 3): following it would create a directory elsewhere.
    """
    path = Path(os.path.abspath(out))
    if not path.is_symlink():
        return path
    target = Path(os.path.realpath(path))
    if not target.exists():
        raise BadInputError(f"cannot write {label or path}: it is a symbolic link to {target}, which does not exist")
    return target


def check_output_dir(out: str | os.PathLike, overwrite: bool, option: str = "", marker: str | None = None) -> None:
    """Fail now, before the work, if the output directory ``out`` could not be written later:
    exit 3 if it is a file, a dangling symbolic link, or its parent cannot be created or written;
    exit 2 if it exists and ``overwrite`` (--force) was not given. ``marker``: a file every output
    of this command holds; a non-empty ``out`` without it is not replaced even with --force (exit
    3), so a mistyped ``-o ~`` cannot delete a home directory."""
    label = f"{option} {out}" if option else str(out)
    out = resolve_output_dir(out, label)
    if out.exists() and not out.is_dir():
        raise BadInputError(f"cannot write {label}: exists and is not a directory")
    if out.exists() and not overwrite:
        raise RlccError(f"{out} already exists (use --force to replace it)", ExitCode.USAGE)
    if out.is_dir() and marker and any(out.iterdir()) and not (out / marker).is_file():
        raise BadInputError(f"refusing to replace {out}: not an rlcc output directory (it has no {marker})")
    _probe_dir(_existing_ancestor(out.parent), label)


# ---- one writer per output directory ----------------------------------------------------------------
LOCK_SUFFIX = ".lock"  # OUT's lock file is .NAME.lock beside it (staging directories are .NAME.<8 hex>)
_held_locks: dict[Path, int] = {}  # resolved OUT -> how many nested output_lock blocks of this process hold it


def _lock_holder(lock: Path) -> str:
    try:
        pid = lock.read_text(encoding="ascii").strip()
    except (OSError, ValueError):
        return ""
    return f" (pid {pid})" if pid.isdigit() else ""


@contextlib.contextmanager
def output_lock(out: str | os.PathLike, option: str = "") -> Iterator[Path]:
    """Hold the lock of output directory ``out`` for the block; yield ``out`` resolved.

    The lock is ``fcntl.flock`` on ``.NAME.lock`` beside OUT: a second rlcc process writing the
    same OUT (also through another path or a symbolic link) fails at once with exit 3 instead of
    replacing the first one's output after minutes. The kernel drops the lock when its process
    dies, so a killed run leaves at most an unlocked file that the next run takes over; a normal
    end removes it. Re-entrant within a process. Missing parents of OUT are created (the lock
    lives there) and removed again if still empty when the block ends.
    """
    import fcntl

    label = f"{option} {out}" if option else str(out)
    out = resolve_output_dir(out, label)
    if out in _held_locks:
        _held_locks[out] += 1
        try:
            yield out
        finally:
            _held_locks[out] -= 1
        return
    created = []
    for parent in reversed(out.parents):
        if not parent.exists():
            try:
                parent.mkdir()
            except OSError as exc:
                _remove_empty(created)
                raise BadInputError(f"cannot write {label}: {parent}: {exc.strerror}") from None
            created.append(parent)
    lock = out.parent / f".{out.name}{LOCK_SUFFIX}"
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            _remove_empty(created)
            raise BadInputError(f"cannot write {label}: {lock}: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise BadInputError(f"cannot write {label}: another rlcc run is writing it{_lock_holder(lock)}; "
                                "wait for it to finish or choose another output directory") from None
        try:  # the previous holder may have removed the file between our open and our lock: retry
            held, named = os.fstat(fd), os.stat(lock)
            if (held.st_dev, held.st_ino) == (named.st_dev, named.st_ino):
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode("ascii"))
    _held_locks[out] = 1
    try:
        yield out
    finally:
        del _held_locks[out]
        with contextlib.suppress(OSError):
            os.unlink(lock)  # while still locked: a racing opener sees another file at the name and retries
        os.close(fd)
        _remove_empty(created)


def _remove_empty(directories: list[Path]) -> None:
    for directory in reversed(directories):
        try:
            directory.rmdir()
        except OSError:
            return


@contextlib.contextmanager
def claimed_output_dir(out: str | os.PathLike, overwrite: bool, option: str = "",
                       marker: str | None = None) -> Iterator[Path]:
    """``check_output_dir`` and ``output_lock`` for a whole command, before its work: yields OUT
    resolved, locked until the block ends (``atomic_output_dir`` inside it re-uses the lock)."""
    check_output_dir(out, overwrite, option, marker)
    with output_lock(out, option) as resolved:
        check_output_dir(resolved, overwrite, option, marker)  # as it is now that no other run can change it
        yield resolved


def _hidden_dir(out: Path) -> Path:
    """A new empty ``.OUT.xxxxxxxx`` next to ``out``, with the mode a plain mkdir gives (umask;
    ``tempfile.mkdtemp`` would make it 0700)."""
    while True:
        path = out.parent / f".{out.name}.{secrets.token_hex(4)}"
        try:
            path.mkdir(mode=0o777)
            return path
        except FileExistsError:
            continue


@contextlib.contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold SIGINT/SIGTERM for a few renames, so ``out`` is either the old or the new directory."""
    held = {signal.SIGINT, signal.SIGTERM}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@contextlib.contextmanager
def atomic_output_dir(out: Path, overwrite: bool = True, marker: str | None = None) -> Iterator[Path]:
    """Yield a staging directory that becomes ``out`` only if the block succeeds.

    On any error, Ctrl-C or SIGTERM (under ``guarded``) the staging directory is removed, so a
    failed run never leaves a half-written ``out`` behind (an existing ``out`` is left untouched).
    ``out`` is locked meanwhile (``output_lock``); a symbolic link ``out`` is kept and the
    directory it points to is replaced.
    """
    with output_lock(out) as out:
        check_output_dir(out, overwrite, marker=marker)
        staging = _hidden_dir(out)
        try:
            yield staging
            with _signals_deferred():
                if out.exists():
                    old = _hidden_dir(out)
                    os.replace(out, old)
                    os.replace(staging, out)
                    shutil.rmtree(old)
                else:
                    os.replace(staging, out)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
