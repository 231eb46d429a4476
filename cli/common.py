"""Shared CLI plumbing: one-line errors with documented exit codes and the option types
(finite floats, bounded integers, file paths). Output directories: ``rlcc.pipeline.outdir``."""

from __future__ import annotations

import contextlib
import functools
import math
import os
import select
import signal
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

import click
from rlcc import __version__
from rlcc.errors import EXIT_CODE_MEANINGS, BadInputError, ExitCode, RlccError
from rlcc.firmware_sdk_stub.switch_layout import MAX_PORTS

F = TypeVar("F", bound=Callable)

# Standalone program name of each `rlcc` subcommand, for error lines and --version.
PROGS = {"compile": "rlcc-compile", "verify": "rlcc-verify", "sim": "rlcc-sim", "train": "rlcc-train"}
# The help epilog of every command and subcommand (click keeps \b paragraphs unwrapped).
EXIT_CODES_HELP = "\b\nExit codes:\n" + "\n".join(f"  {int(code)}  {text}" for code, text in EXIT_CODE_MEANINGS.items())
HELP_OPTIONS = {"help_option_names": ["-h", "--help"]}
EXIT_SIGPIPE = 128 + signal.SIGPIPE  # what a shell reports for a process killed by SIGPIPE (141)
EXIT_SIGTERM = 128 + signal.SIGTERM  # 143
EXIT_SIGINT = 128 + signal.SIGINT  # 130


def standalone(cmd: click.Command) -> click.Command:
    """Finish ``cmd`` as its own program (``rlcc-verify`` ...) and as a subcommand of ``rlcc``: -h,
    --version under its program name, and the exit codes ending its help and each subcommand's.
    Each command's module applies it, so a console script imports only that module."""
    _with_exit_codes(cmd)
    cmd.context_settings = dict(HELP_OPTIONS)
    click.version_option(__version__, prog_name=PROGS[cmd.name])(cmd)
    return cmd


def _with_exit_codes(cmd: click.Command) -> None:
    cmd.epilog = EXIT_CODES_HELP
    for sub in getattr(cmd, "commands", {}).values():
        _with_exit_codes(sub)


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
