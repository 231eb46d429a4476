"""Confine what firmware C may include, checked before the compiler runs.

Firmware is compiled from a user's (possibly untrusted) C: without a check, ``#include
"/etc/shadow"`` makes the compiler read any file and echo its first token in an error, and
``#include "/dev/zero"`` runs until the compiler's timeout. Every ``#include`` (also
``#include_next``, ``#import``, ``#embed`` and ``__has_include``/``__has_embed`` operands) of the
firmware sources and of the headers they pull from the firmware's own directories must name a
literal, relative path without ``..`` that resolves, as the compiler searches (the including
file's directory for ``"..."``, then ``-I`` directories, then the compiler's freestanding headers),
to a regular file inside the directory it was found in: a symlink out of the directory, a device
or a FIFO is refused. Directories in ``trusted`` (the SDK stub, the compiler's headers) are
rlcc's own: their headers are not scanned. The scan is conservative: it ignores ``#if``, so an
include in dead code is checked too. A refused include is a ``BuildError`` (exit 6): the
firmware does not build.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Iterable, Sequence

from rlcc.errors import BuildError

# A directive's name after "#" (or the digraph "%:"), at the start of a logical line.
_DIRECTIVE = re.compile(r"^[ \t\f\v]*(?:#|%:)[ \t\f\v]*([A-Za-z_]\w*)(.*)$", re.MULTILINE)
_FILE_DIRECTIVES = ("include", "include_next", "import", "embed")
_HAS_OPERATORS = re.compile(r"\b(__has_include_next|__has_include|__has_embed)\s*\((?=(.*))")  # without "(": not a use
_HEADER_NAME = re.compile(r'^\s*(?:"([^"\n]*)"|<([^>\n]*)>)')
_TRIGRAPHS = {"=": "#", "/": "\\", "'": "^", "(": "[", ")": "]", "!": "|", "<": "{", ">": "}", "-": "~"}


def logical_text(text: str, trigraphs: bool = False) -> str:
    """``text`` after translation phases 1-3 as far as directives care: trigraphs replaced if
    ``trigraphs``, backslash-newlines spliced, comments replaced by a space (string and character
    literals kept)."""
    if trigraphs:
        text = re.sub(r"\?\?([=/'()!<>\-])", lambda m: _TRIGRAPHS[m.group(1)], text)
    text = re.sub(r"\\[ \t]*\r?\n", "", text)
    return _LITERAL_OR_COMMENT.sub(_blank_comment, text)


# a string or character literal (to the end of its line if unterminated) or a comment
_LITERAL_OR_COMMENT = re.compile(r'"(?:\\.|[^"\\\n])*"?|\'(?:\\.|[^\'\\\n])*\'?|/\*.*?(?:\*/|\Z)|//[^\n]*', re.S)


def _blank_comment(m: re.Match) -> str:
    token = m.group(0)
    if token[0] in "\"'":
        return token
    return " " + "\n" * token.count("\n")


def includes(text: str) -> list[tuple[str, str | None, bool]]:
    """``(what, name, quoted)`` for every file a C text may read: ``what`` is the directive or
    operator; ``name`` None when it is not a literal ``"name"`` or ``<name>``. Read with and
    without trigraphs (a compiler may do either; ``??/`` can splice a line into a comment)."""
    found: list[tuple[str, str | None, bool]] = []
    readings = [logical_text(text)] + ([logical_text(text, trigraphs=True)] if "??" in text else [])
    for logical in readings:
        for item in _directives(logical):
            if item not in found:
                found.append(item)
    return found


def _directives(logical: str) -> list[tuple[str, str | None, bool]]:
    found = []
    for m in _DIRECTIVE.finditer(logical):
        directive, rest = m.group(1), m.group(2)
        if directive in _FILE_DIRECTIVES:
            found.append((f"#{directive}", *_header_name(rest)))
        if directive in ("if", "elif", "ifdef", "ifndef", "elifdef", "elifndef"):
            for op in _HAS_OPERATORS.finditer(rest):
                found.append((op.group(1), *_header_name(op.group(2))))
    return found


def _header_name(rest: str) -> tuple[str | None, bool]:
    m = _HEADER_NAME.match(rest)
    if m is None:
        return None, True
    return (m.group(1), True) if m.group(1) is not None else (m.group(2), False)


def _inside(path: str, root: str) -> bool:
    return os.path.commonpath([path, root]) == root


def _refuse(source: Path, what: str, name: str | None, why: str) -> BuildError:
    shown = f"{what} {name!r}" if name is not None else what
    return BuildError(f"{source}: {shown} refused: {why} (firmware may include only headers by a literal relative "
                      "name inside its own directory, the SDK's or the compiler's freestanding headers)")


def check_includes(sources: Iterable[str | Path], include_dirs: Sequence[str | Path],
                   system_dirs: Sequence[str | Path] = (), trusted: Sequence[str | Path] = ()) -> None:
    """Raise ``BuildError`` for the first include of ``sources`` (and, recursively, of the headers
    they include from untrusted directories) that this module refuses (see its docstring)."""
    trusted_real = [os.path.realpath(d) for d in trusted]
    search = [Path(d) for d in include_dirs] + [Path(d) for d in system_dirs]
    todo = [Path(s) for s in sources]
    seen: set[str] = set()
    while todo:
        source = todo.pop()
        real = os.path.realpath(source)
        if real in seen or any(_inside(real, t) for t in trusted_real):
            continue
        seen.add(real)
        try:
            text = source.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise BuildError(f"cannot read {source}: {exc.strerror}") from None
        for what, name, quoted in includes(text):
            if name is None:
                raise _refuse(source, what, None, "not a literal \"name\" or <name>")
            parts = name.replace("\\", "/").split("/")
            if not name or name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
                raise _refuse(source, what, name, "an absolute path" if name else "an empty name")
            if ".." in parts:
                raise _refuse(source, what, name, "it climbs out of the directory with '..'")
            found = _resolve(name, ([source.parent] if quoted else []) + search)
            if found is None:
                continue  # the compiler reports the missing file
            directory, path = found
            target = os.path.realpath(path)
            if not _inside(target, os.path.realpath(directory)):
                raise _refuse(source, what, name, "it resolves (through a symlink) outside its directory")
            if not stat.S_ISREG(os.stat(target).st_mode):
                raise _refuse(source, what, name, "not a regular file")
            todo.append(path)


def _resolve(name: str, dirs: Sequence[Path]) -> tuple[Path, Path] | None:
    """(directory, path) of the first ``dir / name`` that exists, as the compiler's search finds it."""
    for d in dirs:
        path = d / name
        if os.path.exists(path):
            return d, path
    return None
