"""Shared CLI plumbing: one-line errors with documented exit codes, atomic output directories."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Callable, Iterator, TypeVar

import click

from rlcc.errors import ExitCode, RlccError

F = TypeVar("F", bound=Callable)


def guarded(prog: str) -> Callable[[F], F]:
    """Turn rlcc errors into ``prog: error: message`` on stderr plus the error's exit code.

    Unexpected exceptions become one ``internal error`` line (exit 1) instead of a traceback;
    set RLCC_DEBUG=1 to see the traceback.
    """

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def inner(*args, **kwargs):
            try:
                return fn(*args, **kwargs)
            except RlccError as exc:
                click.echo(f"{prog}: error: {exc}", err=True)
                sys.exit(int(exc.exit_code))
            except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
                raise
            except KeyboardInterrupt:
                click.echo(f"{prog}: interrupted", err=True)
                sys.exit(130)
            except Exception as exc:  # last line of defence: never show a traceback
                if os.environ.get("RLCC_DEBUG"):
                    raise
                msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
                click.echo(f"{prog}: internal error: {type(exc).__name__}: {msg}", err=True)
                sys.exit(int(ExitCode.INTERNAL))

        return inner  # type: ignore[return-value]

    return wrap


@contextlib.contextmanager
def atomic_output_dir(out: Path, overwrite: bool = True) -> Iterator[Path]:
    """Yield a staging directory that becomes ``out`` only if the block succeeds.

    On any error the staging directory is removed, so a failed run never leaves a
    half-written ``out`` behind (an existing ``out`` is left untouched).
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise RlccError(f"{out} exists and is not a directory", ExitCode.BAD_INPUT)
    if out.exists() and not overwrite:
        raise RlccError(f"{out} already exists (use --force to replace it)", ExitCode.BAD_INPUT)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        yield staging
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if out.exists():
        shutil.rmtree(out)
    os.replace(staging, out)
