"""Output directories written the way every rlcc command writes them: checked before the work,
locked against a second writer, replaced atomically (a failed run leaves the old one untouched)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import shutil
import signal
import tempfile
from pathlib import Path
from typing import Iterator

from rlcc.errors import BadInputError, ExitCode, RlccError


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
