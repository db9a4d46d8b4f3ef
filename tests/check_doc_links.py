#!/usr/bin/python3
"""Checks that every relative link in the README and the pages of docs/ resolves.

A link to a file must name one that exists (relative to the page it is on); a link with an
#anchor must name a heading of its target page, spelled as GitHub spells heading anchors
(lower case, punctuation dropped, blanks as hyphens, -1, -2... for repeats). Links to other
sites (http:, https:, mailto:) are not followed. Text in code spans and fenced blocks is not
read for links. Standard library only, so it runs with Debian's /usr/bin/python3.

    tests/check_doc_links.py [REPOSITORY_ROOT]     (default: the folder above this script)

Prints each broken link as FILE:LINE: TARGET: WHY and exits 1 when there is one, else 0.
"""
import os
import re
import sys

# [text](target "title") and ![alt](target); the text may hold one level of brackets.
INLINE_LINK = re.compile(
    r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]"
    r"\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
FENCE = re.compile(r"^ {0,3}(```|~~~)")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(path):
    """(line number, text) of the lines outside fenced code blocks."""
    inside = None
    with open(path, encoding="utf-8") as page:
        for number, line in enumerate(page, 1):
            fence = FENCE.match(line)
            if fence:
                if inside is None:
                    inside = fence.group(1)
                elif fence.group(1) == inside:
                    inside = None
                continue
            if inside is None:
                yield number, line.rstrip("\n")


def prose_text(path):
    """The page with fenced blocks blanked and code spans masked, line numbers kept, so that a
    link whose text wraps onto the next line is still one match."""
    lines = {}
    last = 0
    for number, line in prose_lines(path):
        lines[number] = line
        last = number
    text = "\n".join(lines.get(n, "") for n in range(1, last + 1))
    return CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", "x", m.group(0)), text)


def slug(heading):
    """The anchor GitHub gives a heading's text."""
    text = CODE_SPAN.sub(lambda m: m.group(2), heading)
    text = INLINE_LINK.sub(lambda m: m.group(1), text)
    text = re.sub(r"<[^>]+>", "", text)
    text = text.strip().lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


_ANCHORS = {}  # page path -> the anchors of its headings


def anchors(path):
    cache = _ANCHORS
    if path not in cache:
        seen = {}
        found = set()
        for _, line in prose_lines(path):
            match = HEADING.match(line)
            if not match:
                continue
            base = slug(match.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else "%s-%d" % (base, count))
        cache[path] = found
    return cache[path]


def links(path):
    """(line number, target) of each link and reference definition of the page."""
    text = prose_text(path)
    for number, line in enumerate(text.split("\n"), 1):
        definition = REFERENCE_DEFINITION.match(line)
        if definition:
            yield number, definition.group(1)
    for match in INLINE_LINK.finditer(text):
        yield text.count("\n", 0, match.start()) + 1, match.group(2)


def check(root):
    pages = [os.path.join(root, "README.md")]
    docs = os.path.join(root, "docs")
    if os.path.isdir(docs):
        pages += sorted(os.path.join(docs, name) for name in os.listdir(docs)
                        if name.endswith(".md"))
    broken = []
    checked = 0
    for page in pages:
        if not os.path.isfile(page):
            broken.append("%s: missing" % os.path.relpath(page, root))
            continue
        for number, target in links(page):
            if EXTERNAL.match(target):
                continue
            checked += 1
            where = "%s:%d: %s" % (os.path.relpath(page, root), number, target)
            file_part, _, anchor = target.partition("#")
            resolved = page if not file_part else os.path.normpath(
                os.path.join(os.path.dirname(page), file_part))
            if not os.path.exists(resolved):
                broken.append(where + ": no such file")
            elif anchor:
                if not resolved.endswith(".md") or not os.path.isfile(resolved):
                    broken.append(where + ": an anchor into a file that is not a Markdown page")
                elif anchor not in anchors(resolved):
                    broken.append(where + ": no heading with that anchor in " +
                                  os.path.relpath(resolved, root))
    return pages, checked, broken


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    pages, checked, broken = check(root)
    for line in broken:
        print(line)
    print("%d relative links in %d pages, %d broken" % (checked, len(pages), len(broken)))
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
