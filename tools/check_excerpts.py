#!/usr/bin/env python3
"""Checks that the code excerpts in the docs still match the sources they quote.

An excerpt is a fenced code block preceded by an HTML comment that names its source file, relative to
the repository root:

    <!-- excerpt: backends/cuda/reduce/sequential_addressing.cuh -->
    ```cuda
    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
    ...
    if (tid == 0) partials[blockIdx.x] = shared[0];
    ```

Every line of the block must occur in the named file, in order and contiguous, with leading and trailing
whitespace ignored on each line. A line that is just "..." stands for any number of skipped source lines
(none included). Fenced blocks without such a comment are not checked.

Usage: tools/check_excerpts.py [FILE.md ...]   (default: README.md and docs/*.md)
Exit status: 0 when every excerpt matches, 1 when one does not (each failure is printed with the block's
place, its source and its first missing line), 2 for a usage error. Python 3 standard library only.
"""

import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

EXCERPT_COMMENT = re.compile(r"^\s*<!--\s*excerpt:\s*(\S+)\s*-->\s*$")
FENCE_OPEN = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
GAP = "..."


class Block:
    def __init__(self, doc, comment_line, fence_line, source, lines):
        self.doc = doc  # the Markdown file
        self.comment_line = comment_line  # 1-based line of the comment
        self.fence_line = fence_line  # 1-based line of the opening fence (0: none found)
        self.source = source  # the source path as written
        self.lines = lines  # the block's lines, as written

    def where(self):
        return "%s:%d (excerpt of %s)" % (self.doc, self.fence_line or self.comment_line, self.source)


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().splitlines()


def excerpt_blocks(doc, text_lines):
    """The excerpt blocks of one Markdown file, and the problems of its comments as (line, message): a
    comment that is not followed by a fenced block, or a block that is never closed."""
    blocks, problems = [], []
    i, n = 0, len(text_lines)
    while i < n:
        match = EXCERPT_COMMENT.match(text_lines[i])
        if not match:
            i += 1
            continue
        comment_line, source = i + 1, match.group(1)
        j = i + 1
        while j < n and not text_lines[j].strip():
            j += 1
        fence = FENCE_OPEN.match(text_lines[j]) if j < n else None
        if not fence:
            problems.append((comment_line, "%s:%d: excerpt comment for %s is not followed by a fenced code block"
                             % (doc, comment_line, source)))
            i = j
            continue
        marker = fence.group(2)
        close = re.compile(r"^\s*" + re.escape(marker[0]) + "{%d,}\\s*$" % len(marker))
        k = j + 1
        while k < n and not close.match(text_lines[k]):
            k += 1
        if k >= n:
            problems.append((j + 1, "%s:%d: the fenced block of the excerpt of %s is never closed" % (doc, j + 1, source)))
            break
        blocks.append(Block(doc, comment_line, j + 1, source, text_lines[j + 1:k]))
        i = k + 1
    return blocks, problems


def segments_of(lines):
    """The block's lines split at "..." lines into runs that must each be contiguous in the source."""
    segments, current = [], []
    for line in lines:
        if line.strip() == GAP:
            if current:
                segments.append(current)
            current = []
        else:
            current.append(line.strip())
    if current:
        segments.append(current)
    return segments


def find_segment(source, segment, start):
    """The first index >= start where segment occurs contiguously in source, or -1."""
    first = segment[0]
    for i in range(start, len(source) - len(segment) + 1):
        if source[i] == first and source[i:i + len(segment)] == segment:
            return i
    return -1


def longest_prefix(source, segment, start):
    """How many leading lines of segment occur contiguously somewhere in source from start on."""
    best = 0
    for i in range(start, len(source)):
        length = 0
        while length < len(segment) and i + length < len(source) and source[i + length] == segment[length]:
            length += 1
        best = max(best, length)
        if best == len(segment):
            break
    return best


def check_block(block):
    """None when the block matches its source, else the reason."""
    path = os.path.join(ROOT, block.source)
    if os.path.isabs(block.source) or not os.path.isfile(path):
        return "source file %s not found (paths are relative to the repository root)" % block.source
    segments = segments_of(block.lines)
    if not segments:
        return "the excerpt is empty"
    source = [line.strip() for line in read_lines(path)]
    cursor = 0
    for segment in segments:
        at = find_segment(source, segment, cursor)
        if at < 0:
            missing = segment[longest_prefix(source, segment, cursor)]
            shown = missing if missing else "(a blank line)"
            return "first missing line: %s" % shown
        cursor = at + len(segment)
    return None


def default_docs():
    docs = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    return [d for d in docs if os.path.isfile(d)]


def main(argv):
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__.strip())
        return 0
    if any(a.startswith("-") for a in argv):
        sys.stderr.write("check_excerpts: unknown option (usage: tools/check_excerpts.py [FILE.md ...])\n")
        return 2
    docs = argv or default_docs()
    failures, checked = [], 0
    for doc in docs:
        if not os.path.isfile(doc):
            failures.append("%s: no such file" % doc)
            continue
        shown = os.path.relpath(os.path.abspath(doc), ROOT)
        if shown.startswith(os.pardir + os.sep):  # outside the repository: as given
            shown = doc
        blocks, problems = excerpt_blocks(shown, read_lines(doc))
        found = list(problems)
        for block in blocks:
            checked += 1
            reason = check_block(block)
            if reason:
                found.append((block.fence_line, "%s: %s" % (block.where(), reason)))
        failures.extend(message for _, message in sorted(found))
    for failure in failures:
        print("check_excerpts: " + failure)
    if failures:
        print("check_excerpts: %d problem(s) in %d excerpt(s) of %d file(s)" % (len(failures), checked, len(docs)))
        return 1
    print("check_excerpts: %d excerpt(s) in %d file(s) match their sources" % (checked, len(docs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
