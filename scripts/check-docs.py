#!/usr/bin/env python3
"""The docs lint: scripts/test.sh runs it before the build.

Docs and comments describe the code as it is. This fails (exit 1, one line
per finding: FILE:LINE: what) on
  - issue references ("issue 12", "issues 3 and 4", "#12" in prose),
  - "next session", TODO / FIXME / XXX / TBD, work-log phrases ("built since"), branch names,
  - dated work-log lines (a line that starts with a date, such as "- 2026-11-29: ..."),
in every Markdown file and in the comments of the code (Swift, C, shell and
Python under Sources, Core, plugins, Tests, scripts, .ci, contrib, Package.swift);
and on relative Markdown links, and mentions of docs/*.md files, that lead
nowhere (a missing file, or a #section no heading of that file makes).
String literals in code are not read: test data may say anything.

Usage: scripts/check-docs.py [REPO]   (default: the repository holding this script)
       scripts/check-docs.py --self-test (the patterns against lines they must find and must pass)
"""
import os
import re
import subprocess
import sys
import urllib.parse

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] != "--self-test" else os.path.join(os.path.dirname(__file__), ".."))
CODE_ROOTS = ("Sources/", "Core/", "plugins/", "Tests/", "scripts/", ".ci/", "contrib/")
CODE_FILES = ("Package.swift",)

# Each pattern names what it finds. They are written to pass legitimate text:
# "ATT error 0x80", `blesim #0` in a code span, "the next scan session".
PATTERNS = [
    (re.compile(r"\bissues?[ -]?(?:#|no\.?\s*)?\d+\b", re.I), "an issue reference"),
    (re.compile(r"\bnext session\b", re.I), '"next session"'),
    (re.compile(r"\b(?:TODO|FIXME|XXX|TBD)\b"), "a to-do marker"),
    (re.compile(r"\b(?:built since|left for (?:the |a )?(?:next|later|future)\b)", re.I),
     "a work-log phrase"),
    (re.compile(r"\bfeat/[a-z0-9][\w.-]*"), "a branch name"),
    (re.compile(r"^\s*(?:[-*+]\s+|#+\s+|\|\s*)?(?:\*\*|__)?\(?\d{4}-[01]\d-[0-3]\d\)?(?:\*\*|__)?"
                r"(?:\s*[:|\u2013\u2014]|\s+-\s|\s*$)"), "a dated work-log line"),
]
# `#12` meaning an issue: not part of a word, a URL fragment, a path or `&#12;`.
HASH_ISSUE = re.compile(r"(?<![\w&/$#.-])#\d+\b")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
MD_LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
MD_REF_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)")
DOCS_MENTION = re.compile(r"(?<![\w/.-])(docs/[\w./-]*\w\.(?:md|png))(?:#([\w-]+))?")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def tracked_files():
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             check=True, capture_output=True).stdout
        return sorted({p for p in out.decode().split("\0") if p and os.path.isfile(os.path.join(ROOT, p))})
    except (OSError, subprocess.CalledProcessError):
        found = []
        for base, dirs, names in os.walk(ROOT):
            dirs[:] = [d for d in dirs if d not in (".build", ".git", ".venv", "bluez-source")]
            found += [os.path.relpath(os.path.join(base, n), ROOT) for n in names]
        return sorted(found)


def comment_style(path, first_line):
    name = os.path.basename(path)
    if name.endswith((".swift", ".c", ".h", ".m")) or name == "module.modulemap":
        return "c"
    if name.endswith((".sh", ".bash", ".py")) or re.match(r"#!.*\b(?:ba)?sh\b|#!.*python", first_line):
        return "hash"
    return None


def code_comments(lines, style):
    """(line number, comment text) for each line with a comment. Text inside string
    literals is not a comment: "http://x" and '# not a comment' are skipped."""
    in_block = in_multiline = False
    for number, line in enumerate(lines, 1):
        if style == "c" and line.count('"""') % 2 == 1:
            in_multiline = not in_multiline
            continue
        if in_multiline:
            continue
        if in_block:
            end = line.find("*/")
            yield number, line if end < 0 else line[:end]
            in_block = end < 0
            continue
        start = comment_start(line, style)
        if start < 0:
            continue
        if line.startswith("/*", start):
            end = line.find("*/", start + 2)
            in_block = end < 0
            yield number, line[start + 2:] if end < 0 else line[start + 2:end]
        else:
            yield number, line[start:].lstrip("/#")


# What may stand before a comment: code and whole string literals.
C_PREFIX = re.compile(r'(?:[^"/]|/(?![/*])|"(?:\\.|[^"\\])*"?)*')
HASH_PREFIX = re.compile(r"""(?:[^"'#]|(?<=\S)#|"(?:\\.|[^"\\])*"?|'[^']*'?)*""")


def comment_start(line, style):
    """Where the comment on `line` starts (-1: none), skipping quoted strings."""
    if style == "c":
        if "/" not in line:
            return -1
        i = C_PREFIX.match(line).end()
        return i if line.startswith(("//", "/*"), i) else -1
    if "#" not in line:
        return -1
    i = HASH_PREFIX.match(line).end()
    return i if i < len(line) and line[i] == "#" and not line.startswith("#!", i) else -1


def markdown_prose(lines):
    """(line number, text) outside fenced code blocks, and the same with code spans removed."""
    fence = None
    for number, line in enumerate(lines, 1):
        marker = re.match(r"^\s{0,3}(`{3,}|~{3,})", line)
        if marker:
            if fence is None:
                fence = marker.group(1)[0] * 3
            elif marker.group(1).startswith(fence):
                fence = None
            continue
        if fence is None:
            yield number, line, CODE_SPAN.sub(" ", line)


def slug(heading):
    text = re.sub(r"[`*_]|<[^>]+>", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen, found = {}, set()
        try:
            with open(path, encoding="utf-8") as f:
                for _, line, _ in markdown_prose(f.read().splitlines()):
                    m = re.match(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
                    if m:
                        base = slug(m.group(1))
                        n = seen.get(base, 0)
                        seen[base] = n + 1
                        found.add(base if n == 0 else f"{base}-{n}")
                    for explicit in re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", line):
                        found.add(explicit)
        except OSError:
            pass
        _anchors[path] = found
    return _anchors[path]


def check_target(source, target, fragment, base_dir):
    """A problem with a link from `source` to `target` (relative to base_dir), or None."""
    full = os.path.normpath(os.path.join(base_dir, urllib.parse.unquote(target))) if target else source
    if not os.path.exists(full):
        return f"links to {target}, which does not exist"
    if fragment and full.endswith(".md") and fragment not in anchors(full):
        return f"links to {target or ''}#{fragment}, a section {os.path.relpath(full, ROOT)} does not have"
    return None


def findings(text, prose):
    """What the word patterns find in a line (`prose`: the line without its code spans)."""
    found = [what for pattern, what in PATTERNS if pattern.search(text)]
    if HASH_ISSUE.search(prose):
        found.append('an issue reference ("#N")')
    return found


# The patterns' own test (--self-test, run by scripts/test.sh): lines they must find, and
# legitimate lines they must pass.
MUST_FIND = [
    "Built (issue 4).", "see issues 3 and 4", "the issue-4 fault tests", "Issue 12's items", "fixed in #12",
    "(#7)", "left for the next session", "since feat/blesim3", "TODO: retry", "FIXME", "XXX remove", "- 2026-11-29: reconnects",
    "## 2026-12-01", "| 2026-11-29 | measured |", "2026-11-29 \u2014 added the scan", "**2026-11-29**: faults", "Built since: the backends", "Left for later: Pair",
]
MUST_PASS = [
    "ATT error 0x80", "`Failed \"0x80\"` -> ATT error 0x80", "the next scan session starts", "hci0 #a",
    "an issue a client may hit", "issues of the tree", "page#12", "&#12;", "`blesim #0`", "`ad58XXXX-3600`",
    "measured on 2026-11-29 with the default command", "0x0E Unlikely Error", "the next slice of the buffer",
    "sessions: 3", "recorded 2026-11-29 by the probe", "${#array[@]}", " 2023-05-14 19:41:17 UTC.",
]


# Comments the extraction must find (and only those), per comment style.
COMMENT_CASES = [
    ("c", ['let a = "http://x // TODO"', "// real", 'let b = "#1" // tail', "/* one", "  two */", 'let c = """',
           "// inside a string", '"""'], [" real", " tail", " one", "  two "]),
    ("hash", ['echo "# not" # real', "n=${#a} $#", "#!/bin/sh", "echo 'a # b' # tail"], [" real", " tail"]),
]


def self_test():
    failures = [f"comments of {lines!r}: {found!r}, expected {expected!r}" for style, lines, expected in COMMENT_CASES
                for found in [[text for _, text in code_comments(lines, style)]] if found != expected]
    failures += [f"not found: {line!r}" for line in MUST_FIND if not findings(line, CODE_SPAN.sub(" ", line))]
    failures += [f"false positive: {line!r} ({', '.join(found)})" for line in MUST_PASS
                 for found in [findings(line, CODE_SPAN.sub(" ", line))] if found]
    for failure in failures:
        print(f"check-docs self-test: {failure}")
    return 1 if failures else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    problems = []

    def report(path, number, what, text):
        problems.append(f"{path}:{number}: {what}: {text.strip()[:160]}")

    def check_text(path, number, text, prose):
        for what in findings(text, prose):
            report(path, number, what, text)
        for mention, fragment in DOCS_MENTION.findall(prose):
            problem = check_target(None, mention, fragment, ROOT)
            if problem:
                report(path, number, "a dangling mention", problem)

    for path in tracked_files():
        full = os.path.join(ROOT, path)
        if path.endswith(".md"):
            with open(full, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
            for number, line, prose in markdown_prose(lines):
                check_text(path, number, line, prose)
                targets = MD_LINK.findall(prose.replace("`", "")) + MD_LINK.findall(line)
                ref = MD_REF_DEF.match(line)
                if ref:
                    targets.append(ref.group(1))
                for link in dict.fromkeys(targets):
                    if SCHEME.match(link):
                        continue
                    target, _, fragment = link.partition("#")
                    problem = check_target(full, target, fragment, os.path.dirname(full))
                    if problem:
                        report(path, number, "a broken link", problem)
        elif path.startswith(CODE_ROOTS) or path in CODE_FILES or path.endswith("/Package.swift"):
            try:
                with open(full, encoding="utf-8") as f:
                    lines = f.read().splitlines()
            except (UnicodeDecodeError, OSError):
                continue
            style = comment_style(path, lines[0] if lines else "")
            if style is None:
                continue
            for number, comment in code_comments(lines, style):
                check_text(path, number, comment, CODE_SPAN.sub(" ", comment))

    for line in problems:
        print(line)
    if problems:
        print(f"check-docs: {len(problems)} problem(s); docs and comments describe the code as it is "
              "(no issue numbers, to-do lists or work logs), and links must lead somewhere", file=sys.stderr)
        return 1
    print("check-docs: ok", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
