"""Every relative link in README.md and docs/ leads somewhere, and README stays a front page.

A link ``[text](target)`` (or an image, a reference definition ``[id]: target``, an HTML ``href`` or
``src``) outside code must name a file or folder of the repository, relative to the page that holds
it; a ``#anchor`` on a Markdown page (or alone, for the page itself) must be the anchor of one of
that page's headings, made by GitHub's rules: the heading's text lower-cased, every character but
letters, digits, spaces, ``-`` and ``_`` dropped, spaces turned into ``-``, and ``-1``, ``-2``, ...
added to repeats.  External ``http(s)`` links are not fetched.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: README is a front page: what it is, the set-up, a tour with links, the headline results
README_MAX_LINES = 260

FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HTML_ATTR = re.compile(r"<[a-zA-Z][^>]*?\b(?:href|src)\s*=\s*[\"']([^\"']*)[\"']")
HTML_ID = re.compile(r"<[a-zA-Z][^>]*?\b(?:id|name)\s*=\s*[\"']([^\"']+)[\"']")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def documents() -> List[Path]:
    return [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))


def prose_lines(text: str) -> Iterator[Tuple[int, str]]:
    """``(line number, line)`` of every line outside fenced code blocks."""
    fence = None
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line)
        if m:
            if fence is None:
                fence = m.group(1)
            elif m.group(1) == fence:
                fence = None
            continue
        if fence is None:
            yield n, line


def slug(heading: str) -> str:
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)        # a link shows its text
    text = re.sub(r"<[^>]+>", "", text)                                # HTML tags show nothing
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(text: str) -> Set[str]:
    """Every anchor a page offers: its headings' (repeats numbered) and HTML ``id``/``name``."""
    out: Set[str] = set()
    seen: Dict[str, int] = {}
    for _, line in prose_lines(text):
        m = HEADING.match(line)
        if m:
            base = slug(m.group(2))
            k = seen.get(base, 0)
            seen[base] = k + 1
            out.add(base if k == 0 else f"{base}-{k}")
        out.update(HTML_ID.findall(line))
    return out


def links(text: str) -> Iterator[Tuple[int, str]]:
    """``(line number, target)`` of every link outside code."""
    for n, line in prose_lines(text):
        bare = INLINE_CODE.sub("", line)
        for m in LINK.finditer(bare):
            yield n, m.group(1)
        m = REFERENCE.match(bare)
        if m:
            yield n, m.group(1)
        for target in HTML_ATTR.findall(bare):
            yield n, target


_ANCHORS: Dict[Path, Set[str]] = {}


def broken_links(page: Path, root: Path = ROOT) -> List[str]:
    """One line per link of ``page`` that leads nowhere."""
    problems = []
    rel = page.relative_to(root).as_posix()
    for n, target in links(page.read_text()):
        if not target or SCHEME.match(target) or target.startswith("//"):
            continue                                   # external (http, https, mailto): not fetched
        path, _, anchor = target.partition("#")
        path = unquote(path.split("?", 1)[0])
        dest = (root / path.lstrip("/")) if path.startswith("/") else (page.parent / path if path else page)
        dest = dest.resolve()
        if root.resolve() not in (dest, *dest.parents):
            problems.append(f"{rel}:{n}: {target} leads outside the repository")
            continue
        if not dest.exists():
            problems.append(f"{rel}:{n}: {target}: no file {dest.relative_to(root.resolve()).as_posix()}")
            continue
        if anchor and dest.is_file() and dest.suffix == ".md":
            if dest not in _ANCHORS:
                _ANCHORS[dest] = anchors(dest.read_text())
            if unquote(anchor).lower() not in _ANCHORS[dest]:
                problems.append(f"{rel}:{n}: {target}: no heading with the anchor #{anchor} in "
                                f"{dest.relative_to(root.resolve()).as_posix()}")
    return problems


DOCUMENTS = documents()


def test_documents_are_found():
    names = {p.relative_to(ROOT).as_posix() for p in DOCUMENTS}
    assert {"README.md", "docs/interface.md", "docs/training.md"} <= names
    assert any(n.startswith("docs/results/") for n in names)


@pytest.mark.parametrize("page", DOCUMENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page):
    problems = broken_links(page)
    assert not problems, "\n".join(problems)


def test_readme_is_a_front_page():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines (at most {README_MAX_LINES})"


def test_slugs_follow_githubs_rules():
    assert slug("7. One training run on many machines: the batched learners' samplers as Ray actors") == \
        "7-one-training-run-on-many-machines-the-batched-learners-samplers-as-ray-actors"
    assert slug("Fast self-play on one machine: `backend: batched`") == "fast-self-play-on-one-machine-backend-batched"
    assert slug("Playing in the browser: `handfoot serve`") == "playing-in-the-browser-handfoot-serve"
    assert slug("What CI means, and __init__") == "what-ci-means-and-__init__"
    assert slug("See [the rules](rules.md) <sup>1</sup>") == "see-the-rules-1"
    assert anchors("# A\n## A\n```\n# not a heading\n```\n## A\n") == {"a", "a-1", "a-2"}


def test_the_check_catches_broken_links(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Other page\n\n## A section: `code`\n")
    page = tmp_path / "README.md"
    page.write_text(
        "# Title\n\n## Set-up\n\n"
        "[fine](docs/other.md) [fine](docs/other.md#a-section-code) [fine](#set-up) [fine](docs/)\n"
        "![fine](docs/other.md) [ext](https://example.org/nowhere) `[in code](nowhere.md)`\n"
        "```\n[in a block](nowhere.md)\n```\n"
        "[gone](docs/missing.md)\n"
        "[bad anchor](docs/other.md#no-such-section)\n"
        "[bad own anchor](#setup)\n"
        "[ref]: docs/also_missing.md\n"
        "[outside](../../etc/passwd)\n")
    problems = broken_links(page, tmp_path)
    assert len(problems) == 5, problems
    assert [p.split(":")[1] for p in problems] == ["10", "11", "12", "13", "14"]
    assert "no file docs/missing.md" in problems[0] and "#no-such-section" in problems[1]
    assert "#setup" in problems[2] and "also_missing" in problems[3] and "outside" in problems[4]
