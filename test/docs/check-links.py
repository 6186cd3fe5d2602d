#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every link of the project's Markdown pages leads somewhere: a relative link to a file or
directory of the tree, and its #anchor, if any, to a heading of that page (GitHub's rule for
heading anchors). Links to other sites are counted, not followed (no network in tests).
Reads files only. Usage: check-links.py SOURCE_ROOT"""
import glob
import os
import re
import sys

PAGES = ["README.md", "docs/*.md", "tests-vm/README.md", "kernel-patches/README.md", "test/fuzz/README.md"]
LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")
EXTERNAL = ("http://", "https://", "mailto:")


def anchor_of(heading):
    """The anchor GitHub gives a heading: lower case, punctuation but - and _ dropped, spaces
    as dashes."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path):
    with open(path) as f:
        text = re.sub(r"^```.*?^```", "", f.read(), flags=re.M | re.S)  # no headings in code blocks
    return {anchor_of(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}


def broken_links(root, page):
    """(link, why) for each link of page that leads nowhere; the number of external links."""
    bad, external = [], 0
    with open(os.path.join(root, page)) as f:
        text = re.sub(r"^    .*$", "", f.read(), flags=re.M)  # code blocks hold commands, not links
    for m in LINK.finditer(text):
        target = m.group(2)
        if target.startswith(EXTERNAL):
            external += 1
            continue
        path, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(root, os.path.dirname(page), path)) if path else os.path.join(root, page)
        if not full.startswith(os.path.realpath(root) + os.sep):
            bad.append((target, "outside the source tree"))
        elif not os.path.exists(full):
            bad.append((target, "no such file"))
        elif anchor and not full.endswith(".md"):
            bad.append((target, "an anchor into a page that is not Markdown"))
        elif anchor and anchor not in anchors(full):
            bad.append((target, f"no heading #{anchor} in {os.path.relpath(full, root)}"))
    return bad, external


def main():
    root = os.path.realpath(sys.argv[1])
    pages = sorted({os.path.relpath(p, root) for pat in PAGES for p in glob.glob(os.path.join(root, pat))})
    failed, links, external = 0, 0, 0
    for page in pages:
        bad, ext = broken_links(root, page)
        external += ext
        with open(os.path.join(root, page)) as f:
            links += len(LINK.findall(re.sub(r"^    .*$", "", f.read(), flags=re.M)))
        for target, why in bad:
            print(f"{page}: broken link ({target}): {why}")
            failed += 1
    print(f"{len(pages)} pages, {links} links, {external} to other sites (not followed), {failed} broken")
    return 1 if failed or not pages else 0


if __name__ == "__main__":
    sys.exit(main())
