#!/usr/bin/env python3
"""Checks that every citation of the project's docs resolves.

Code comments and docs cite sections as `<name>.md §<n>` (`engine.md §9.2`), also in lists
and ranges (`engine.md §8, §9.3`, `read.md §3–§4`, `read.md §4.1 and §4.3`), with or without a
`docs/` prefix (`docs/README.md §4.4` is the docs index). Each cited file must be
`docs/<name>.md`, and each cited number must be the number of one of its headings
(`## 9.2 Stores`, `#### 9.2.1 Memory`). A citation with any other folder in front
(`../shared/spec/engine.md §2`, `spec/search.md §1`) is reported too: the project cites its
own docs.

Scans every file git tracks or would track (so `node_modules/`, `target/` and the like are
left out) whose name ends in .rs, .js, .mjs, .cjs, .ts, .py, .sh, .toml, .html, .css or .md.
Prints one line per broken citation (`<file>:<line>: <citation>: <why>`) and exits 1 when
there is any; prints a one-line summary and exits 0 otherwise. Standard library only.
"""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SELF = "scripts/doc-refs.py"  # its own examples are not citations
EXTENSIONS = {".rs", ".js", ".mjs", ".cjs", ".ts", ".py", ".sh", ".toml", ".html", ".css", ".md"}

NUMBER = r"\d+(?:\.\d+)*"
# `name.md §n` followed by any further `§m` joined by a comma, "and", "or", "/" or a dash.
CITATION = re.compile(
    r"(?<![\w.-])(?P<prefix>(?:[\w.~-]*/)*)(?P<name>[A-Za-z][\w-]*)\.md[`)\]]*\s*§\s*"
    r"(?P<first>" + NUMBER + r")"
    r"(?P<rest>(?:\s*(?:,|and|or|/|–|-|—)\s*§?\s*" + NUMBER + r")*)"
)
FURTHER = re.compile(NUMBER)
HEADING = re.compile(r"^#{1,6}\s+§?\s*(" + NUMBER + r")\.?(?:\s|$)")


def tracked_files():
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode("utf-8")
    for name in out.split("\0"):
        path = ROOT / name
        if name and name != SELF and path.suffix in EXTENSIONS and path.is_file():
            yield name, path


def headings(doc):
    """The section numbers of one doc's headings, outside fenced code blocks."""
    numbers = set()
    fenced = False
    for line in doc.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if match:
            numbers.add(match.group(1))
    return numbers


def target(name):
    return ROOT / "docs" / f"{name}.md"


def citations(line):
    """Each citation of one line as `(prefix, name, [numbers])`."""
    for match in CITATION.finditer(line):
        numbers = [match.group("first")] + FURTHER.findall(match.group("rest"))
        yield match.group("prefix"), match.group("name"), numbers


# The forms the code uses, and what they must parse to; checked on every run, so a change to
# the pattern cannot silently stop seeing citations.
EXAMPLES = [
    ("// engine.md §9.2 rule 1", [("", "engine", ["9.2"])]),
    ("//! engine.md §8, §9.3", [("", "engine", ["8", "9.3"])]),
    ("(read.md §3–§4)", [("", "read", ["3", "4"])]),
    ("read.md §4.1 and §4.3, agent.md §6", [("", "read", ["4.1", "4.3"]), ("", "agent", ["6"])]),
    ("`agent-session.md` §2, §4", [("", "agent-session", ["2", "4"])]),
    ("[engine.md](engine.md) §2.5", [("", "engine", ["2.5"])]),
    ("docs/README.md §4.4", [("docs/", "README", ["4.4"])]),
    ("../shared/spec/engine.md §2", [("../shared/spec/", "engine", ["2"])]),
    ("see engine.md for the rest; §3 of it", []),
]


def self_test():
    for line, want in EXAMPLES:
        got = list(citations(line))
        if got != want:
            print(f"doc-refs: the pattern reads {line!r} as {got}, not {want}", file=sys.stderr)
            return False
    return True


def main():
    if not self_test():
        return 1
    cache = {}
    problems = []
    count = 0
    for name, path in tracked_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for lineno, line in enumerate(text.splitlines(), 1):
            for prefix, cited, numbers in citations(line):
                if prefix and not prefix.endswith("docs/"):
                    count += 1
                    problems.append(
                        f"{name}:{lineno}: {prefix}{cited}.md: cite the project's own "
                        f"docs/{cited}.md, not a file outside docs/"
                    )
                    continue
                doc = target(cited)
                if cited not in cache:
                    cache[cited] = headings(doc) if doc.is_file() else None
                known = cache[cited]
                for number in numbers:
                    count += 1
                    where = f"{name}:{lineno}: {cited}.md §{number}"
                    if known is None:
                        problems.append(f"{where}: there is no {doc.relative_to(ROOT)}")
                    elif number not in known:
                        problems.append(
                            f"{where}: {doc.relative_to(ROOT)} has no heading numbered {number}"
                        )
    for problem in problems:
        print(problem)
    sys.stdout.flush()
    if problems:
        print(
            f"doc-refs: {len(problems)} of {count} citations do not resolve; add the heading "
            "to the doc (or fix the number in the citation)",
            file=sys.stderr,
        )
        return 1
    print(f"doc-refs: all {count} citations resolve to a heading in docs/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
