"""The commands the project's Markdown shows a user, as data: so tests run them and CI runs the
README's own test command (``python tests/readme_commands.py --test-command``).

A command is a line of a fenced ``sh`` block (``&&`` splits it, ``#`` starts a comment), a
``- run:`` line of a ``yaml`` block, or an inline code span that starts with a tool name. A usage
synopsis (a fenced block without a language whose first word is a tool) is kept apart: its
``--options`` must exist, but it is not run.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ("rlcc", "rlcc-compile", "rlcc-verify", "rlcc-sim", "rlcc-train")


def docs() -> list[str]:
    """Every Markdown file a user reads for how to run things (relative to the repository)."""
    found = [ROOT / "README.md", *sorted(ROOT.glob("docs/*.md")), *sorted(ROOT.glob("*/README.md")),
             *sorted(ROOT.glob("examples/*/README.md"))]
    return [str(p.relative_to(ROOT)) for p in found]


_FENCE = re.compile(r"^```(?P<lang>[\w-]*)\n(?P<body>.*?)^```", re.DOTALL | re.MULTILINE)
_INLINE = re.compile(r"(?<!`)`(?P<code>[^`\n]+(?:\n[^`\n]+)?)`(?!`)")  # a span may wrap once
_STARTS = re.compile(r"^(?:%s|python -m pytest|pip install)(?:\s|$)" % "|".join(re.escape(t) for t in TOOLS))


@dataclasses.dataclass(frozen=True)
class Command:
    doc: str  # file, relative to the repository
    line: int
    text: str
    kind: str  # "block" (a fenced sh/yaml line), "inline" (a code span) or "synopsis"

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"

    def argv(self) -> list[str]:
        return shlex.split(self.text)


def _block_lines(body: str, first_line: int, lang: str) -> Iterator[tuple[int, str]]:
    joined, start = "", first_line
    for i, raw in enumerate(body.splitlines()):
        if not joined:
            start = first_line + i
        line = raw.rstrip()
        if line.endswith("\\"):
            joined += line[:-1] + " "
            continue
        joined += line
        if lang == "yaml":
            m = re.match(r"\s*-\s*run:\s*(.*)", joined)
            joined = m.group(1) if m else ""
        text = re.sub(r"(^|\s)#.*$", "", joined).strip()
        joined = ""
        for part in text.split("&&"):
            if part.strip():
                yield start, " ".join(part.split())


def commands(doc: str) -> list[Command]:
    """Every command shown in ``doc`` (a path relative to the repository), in order."""
    text = (ROOT / doc).read_text()
    found: list[Command] = []
    fenced = []
    for m in _FENCE.finditer(text):
        fenced.append((m.start(), m.end()))
        first = text.count("\n", 0, m.start("body")) + 1
        lang, body = m["lang"], m["body"]
        if lang in ("sh", "bash", "console", "yaml"):
            found += [Command(doc, n, t, "block") for n, t in _block_lines(body, first, lang) if _STARTS.match(t)]
        elif not lang and body.split(maxsplit=1) and body.split(maxsplit=1)[0] in TOOLS:
            if "[-" in body:  # a usage synopsis: [--option VALUE] ...
                found.append(Command(doc, first, " ".join(body.split()), "synopsis"))
            else:
                found += [Command(doc, n, t, "block") for n, t in _block_lines(body, first, "sh") if _STARTS.match(t)]
    for m in _INLINE.finditer(text):
        if any(a <= m.start() < b for a, b in fenced):
            continue
        code = " ".join(m["code"].replace("\\|", "|").split())
        if _STARTS.match(code):
            found.append(Command(doc, text.count("\n", 0, m.start()) + 1, code, "inline"))
    return sorted(found, key=lambda c: c.line)


def all_commands() -> list[Command]:
    return [c for doc in docs() for c in commands(doc)]


def readme_test_command() -> str:
    """The README's test command: the one fenced command of the Quick start that runs pytest."""
    text = (ROOT / "README.md").read_text()
    quick = text[text.index("## Quick start"):]
    quick = quick[:quick.index("\n## ", 1)]
    runs = [c.text for c in commands("README.md") if c.kind == "block" and c.text.startswith("python -m pytest")
            and c.line <= text.count("\n", 0, text.index("## Quick start")) + quick.count("\n") + 1]
    if len(runs) != 1:
        raise SystemExit(f"readme_commands: the README's Quick start shows {len(runs)} pytest commands, not 1")
    return runs[0]


if __name__ == "__main__":
    if sys.argv[1:] == ["--test-command"]:
        print(readme_test_command())
    else:
        for c in all_commands():
            print(f"{c.where}\t{c.kind}\t{c.text}")
